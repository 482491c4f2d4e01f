/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * systemd's file descriptor store (FileDescriptorStoreMax= in the unit). What
 * we push there is handed back to the next instance after a crash or restart,
 * so a client's wake lock outlives the daemon. systemd drops an entry by
 * itself when its fd reports EPOLLHUP (the client closed its end).
 */
struct fdstore_entry {
	char *name;
	int fd;
};

struct fdstore {
	struct fdstore_entry *entries; /* what the previous instance stored */
	size_t n;
};

/* Whether a service manager listens: $NOTIFY_SOCKET is set. */
bool fdstore_available(void);

/* Take the fds passed in $LISTEN_FDS/$LISTEN_FDNAMES (none is fine). */
int fdstore_receive(struct fdstore *s);
/* The fd stored under name, now owned by the caller, or -ENOENT. */
int fdstore_take(struct fdstore *s, const char *name);
/* Close whatever nobody took, and tell systemd to forget it. */
void fdstore_done(struct fdstore *s);
/* Close our copies only: systemd keeps its own, for the next instance (a start that failed). */
void fdstore_release(struct fdstore *s);

int fdstore_push(const char *name, int fd);
int fdstore_remove(const char *name);
