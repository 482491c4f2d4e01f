/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>

/*
 * systemd's part for a daemon under test, where the daemon needs it: a
 * $NOTIFY_SOCKET read as messages come (a full socket would block the
 * daemon), an fd store that keeps FDSTORE=1 fds and drops them on
 * FDSTOREREMOVE=1, and a $RUNTIME_DIRECTORY. Nothing here asserts.
 */
struct fake_systemd_fd {
	char name[64];
	int fd;
};

struct fake_systemd {
	int notify_fd;
	char notify_env[600];  /* NOTIFY_SOCKET=..., for harness_daemon_opts.env */
	char runtime_env[600]; /* RUNTIME_DIRECTORY=... */
	pthread_t pump;
	bool pump_started, stop;
	pthread_mutex_t lock;  /* guards store, n_store */
	struct fake_systemd_fd *store;
	unsigned n_store, size;
	bool discard_fds;      /* close stored fds at once (only the daemon's side matters) */
};

/* The socket is dir/notify and the runtime directory dir/run; starts the reader thread. */
int fake_systemd_start(struct fake_systemd *s, const char *dir);
void fake_systemd_stop(struct fake_systemd *s);
/* Read what is pending, waiting up to timeout_ms for the first message. */
void fake_systemd_pump(struct fake_systemd *s, int timeout_ms);
/* systemd drops stored fds that hang up (the client closed its end). */
void fake_systemd_drop_hung_up(struct fake_systemd *s);
bool fake_systemd_stored(struct fake_systemd *s, const char *prefix);
/*
 * Copies of up to max stored fds and their names joined by ':' (LISTEN_FDNAMES),
 * as systemd hands them to the next instance; returns how many.
 */
unsigned fake_systemd_copy_store(struct fake_systemd *s, int *fds, unsigned max, char *names, size_t size);
