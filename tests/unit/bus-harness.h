/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/*
 * A private dbus-daemon with the shipped policy (units/org.autosleep1.conf)
 * and the real autosleepd binary in --dry-run on a fixture tree: what the
 * D-Bus tests share. Nothing here asserts, so forked children may use it.
 */
#define HARNESS_NAME "org.autosleep1"
#define HARNESS_PATH "/org/autosleep1"
#define HARNESS_IFACE "org.autosleep1.Manager"

struct harness {
	char *dir;          /* the fixture root, also home of the bus socket and logs */
	char address[512];
	pid_t bus_pid;
	pid_t daemon_pid;
};

/* Start dbus-daemon; extra is more busconfig XML (limits, policies). */
int harness_bus_start(struct harness *h, const char *fixture, const char *extra);
/* Kill dbus-daemon (if running) and start a new one on the same address: new bus ID, unique names from :1.0 again. */
int harness_bus_restart(struct harness *h);

struct harness_daemon_opts {
	const char *config;     /* file contents */
	const char *log;        /* file name below dir */
	char *const *env;       /* extra NAME=value entries, NULL-terminated */
	const int *fds;         /* passed as 3, 4, ... with LISTEN_FDS/LISTEN_PID set, if n_fds > 0 */
	int n_fds;
	const char *fd_names;   /* LISTEN_FDNAMES */
	unsigned long nofile;   /* RLIMIT_NOFILE for the daemon, 0 to inherit */
	bool real;              /* without --dry-run: it writes wakeup_count and state below dir */
	bool no_wait;           /* return once spawned, without waiting for the bus name */
	const char *log_level;  /* --log-level, NULL for debug */
	bool no_block_suspend;  /* without CAP_BLOCK_SUSPEND, as a sandbox that forgot it would start it */
};

/* Spawn autosleepd and wait until it owns its name; returns its pid or -errno. */
pid_t harness_daemon_start(struct harness *h, const struct harness_daemon_opts *o);
/* SIGTERM (or sig) the daemon and reap it; returns its wait status. */
int harness_daemon_stop(struct harness *h, int sig);
void harness_stop(struct harness *h);

int harness_open_client(const struct harness *h, sd_bus **ret);
bool harness_name_has_owner(sd_bus *b);
/* Returns 1 and a fd of our own, or -errno with e set. */
int harness_acquire(sd_bus *b, const char *name, const char *why, uint64_t timeout, int *ret_fd, sd_bus_error *e);
/* Locks named name (all if NULL), -1 on error. */
int harness_count_locks(sd_bus *b, const char *name);
/* How often needle occurs in a log file below dir. */
int harness_count_in_log(const struct harness *h, const char *name, const char *needle);
/* Dump a log file below dir to stderr. */
void harness_show_log(const struct harness *h, const char *name);
