/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "time-util.h"

/*
 * The in-process wake-lock registry. Front ends (D-Bus, activity) translate
 * into these calls; the manager turns "held / not held" into the kernel lock
 * and the suspender's gate.
 */
struct lease {
	uint64_t id;
	char *name;
	char *owner;
	char *why;
	uid_t uid;
	pid_t pid;
	usec_t since;          /* CLOCK_BOOTTIME */
	usec_t since_realtime; /* for display */
	usec_t deadline;       /* CLOCK_BOOTTIME, USEC_INFINITY for none */
	void *data;            /* owned by the front end that took the lease */
	struct lease *prev, *next;
};

struct lease_stats {
	char *name;
	uint64_t count;
	unsigned active;
	usec_t total;       /* summed hold time of released leases */
	usec_t max;
	usec_t last_change; /* CLOCK_REALTIME */
	struct lease_stats *prev, *next;
};

/* Bound on distinct names kept in statistics; the least recently changed inactive one goes first. */
#define LEASES_STATS_MAX 1024

struct leases;
typedef void (*leases_change_fn)(struct leases *l, bool held, void *userdata);
/* Called for every lease just before it is freed; reason is "released", "expired", ... */
typedef void (*leases_release_fn)(struct leases *l, struct lease *x, const char *reason, void *userdata);

struct leases {
	struct lease *head, *tail;
	unsigned n;
	uint64_t next_id;
	struct lease_stats *stats; /* most recently changed first */
	unsigned n_stats;
	leases_change_fn on_change;
	leases_release_fn on_release;
	void *userdata;
	usec_t (*now)(clockid_t clock);
};

void leases_init(struct leases *l, leases_change_fn on_change, void *userdata);
void leases_done(struct leases *l);

/* deadline is CLOCK_BOOTTIME, USEC_INFINITY for none. Returns 0 and the id, or -errno. */
int leases_acquire(struct leases *l, const char *name, const char *owner, const char *why, uid_t uid,
		   pid_t pid, usec_t deadline, uint64_t *ret_id);
int leases_release(struct leases *l, uint64_t id, const char *reason);
struct lease *leases_find(struct leases *l, uint64_t id);
unsigned leases_count_uid(struct leases *l, uid_t uid);

/* Release every lease whose deadline passed; returns the next deadline or USEC_INFINITY. */
usec_t leases_expire(struct leases *l);
usec_t leases_next_deadline(struct leases *l);

const struct lease_stats *leases_stats_find(const struct leases *l, const char *name);

/* Move a lease's deadline (CLOCK_BOOTTIME, USEC_INFINITY for none). */
int leases_set_deadline(struct leases *l, uint64_t id, usec_t deadline);

/* Account a hold timed elsewhere (a kernel wake lock with a timeout) under name. */
int leases_stats_add(struct leases *l, const char *name, usec_t held);
