/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hash.h"
#include "observers.h"
#include "time-util.h"

/*
 * The registry of leases: every wake lock a client holds over D-Bus, and the
 * daemon's own holds (user input, logind's inhibitors, start-up), is one
 * lease here. The registry knows nothing of D-Bus or the kernel: it publishes
 * what changes to its observers (the manager turns "held" into the kernel
 * lock, the suspender's gate and our logind sleep inhibitor; bus.c turns
 * leases into signals and lock fds; timers.c notices a timer's lease ending).
 */
struct lease {
	uint64_t id;
	char *name;
	char *owner;
	char *why;
	uid_t uid;
	bool own;              /* the daemon's own hold: counts against nobody's MaxPerUser */
	bool lid;              /* holds with the lid closed too (see leases_set_lid_closed()) */
	pid_t pid;
	usec_t since;          /* CLOCK_BOOTTIME */
	usec_t since_realtime; /* for display */
	usec_t deadline;       /* CLOCK_BOOTTIME, USEC_INFINITY for none */
	void *data;            /* owned by the front end that took the lease */
	struct lease_stats *stats; /* its name's entry; never evicted while the lease is active */
	struct lease *prev, *next;
};

/* Everything a lease is made of; restoring one after a restart sets id and since. */
struct lease_spec {
	const char *name;
	const char *owner;
	const char *why;
	uid_t uid;
	bool own;              /* the daemon's own hold (input, logind, sessions, start-up): no quota */
	bool lid;              /* asked to hold with the lid closed too (LidClosed) */
	pid_t pid;
	usec_t deadline;       /* CLOCK_BOOTTIME, USEC_INFINITY for none */
	uint64_t id;           /* 0: the next free id */
	usec_t since;          /* 0: now */
	usec_t since_realtime; /* 0: now */
};

struct lease_stats {
	char *name;
	uint64_t count;
	unsigned active;
	usec_t total;       /* summed hold time of released leases */
	usec_t max;
	usec_t last_change; /* CLOCK_REALTIME */
	struct lease_stats *prev, *next; /* every entry, most recently changed first */
	/* Inactive entries only, most recently changed first: the last is evicted first. */
	struct lease_stats *idle_prev, *idle_next;
	struct hash_node by_name;
};

/*
 * Bound on distinct names kept in statistics; the least recently changed
 * inactive one goes first. When every entry is in use, further names are
 * counted together under LEASES_STATS_OTHER: statistics never refuse a lease.
 */
#define LEASES_STATS_MAX 1024
#define LEASES_STATS_OTHER "(other names)"

enum lease_event {
	LEASE_HELD,     /* the first lease was taken (x: that lease) */
	LEASE_ACQUIRED,
	LEASE_DEADLINE, /* x's deadline moved */
	LEASE_RELEASED, /* x is freed when the observers return; reason says why */
	LEASE_UNHELD,   /* the last lease ended (x: that lease, still valid) */
	_LEASE_EVENT_MAX,
	_LEASE_EVENT_INVALID = -22,
};

struct leases;
typedef void (*leases_observer_fn)(struct leases *l, enum lease_event ev, struct lease *x, const char *reason,
				   void *userdata);

/* The daemon has three observers (manager, bus, timers); tests add one. */
#define LEASES_OBSERVERS_MAX OBSERVERS_MAX

/* How many leases one uid holds; there are few uids, so a short array. */
struct leases_uid {
	uid_t uid;
	unsigned n;
};

/*
 * Acquiring and releasing cost the same however many leases are held: the
 * per-uid counts and the statistics are looked up, never walked.
 */
struct leases {
	struct lease *head, *tail;
	unsigned n;
	unsigned n_lid;  /* of them, those that hold with the lid closed */
	bool lid_closed; /* only those hold now */
	uint64_t next_id;
	struct lease_stats *stats; /* most recently changed first */
	struct lease_stats *idle_head, *idle_tail;
	struct hash stats_by_name;
	unsigned n_stats;
	struct leases_uid *uids;
	unsigned n_uids, size_uids;
	struct observers observers;
	usec_t (*now)(clockid_t clock);
};

void leases_init(struct leases *l);
/* Frees every lease without telling the observers (the daemon is going away). */
void leases_done(struct leases *l);

/*
 * Observers are called in the order they were added, except for LEASE_UNHELD,
 * which unwinds LEASE_HELD in reverse order. -ENOSPC past LEASES_OBSERVERS_MAX.
 */
int leases_observe(struct leases *l, leases_observer_fn fn, void *userdata);
/* Remove an observer (a module going away before the registry). */
void leases_unobserve(struct leases *l, leases_observer_fn fn, void *userdata);

int leases_acquire_spec(struct leases *l, const struct lease_spec *spec, struct lease **ret);
/* deadline is CLOCK_BOOTTIME, USEC_INFINITY for none. Returns 0 and the id, or -errno. */
int leases_acquire(struct leases *l, const char *name, const char *owner, const char *why, uid_t uid,
		   pid_t pid, usec_t deadline, uint64_t *ret_id);
int leases_release(struct leases *l, uint64_t id, const char *reason);
void leases_release_lease(struct leases *l, struct lease *x, const char *reason);
struct lease *leases_find(struct leases *l, uint64_t id);
/* D-Bus wake locks of uid, for MaxPerUser: the daemon's own holds are not counted. */
unsigned leases_count_uid(struct leases *l, uid_t uid);

/*
 * Whether the leases hold the machine awake: any lease, or while the lid is
 * closed only those with lid set. LEASE_HELD and LEASE_UNHELD follow this.
 */
bool leases_holding(const struct leases *l);

/*
 * The lid closed (a person left) or opened. A closed lid leaves holding
 * only the daemon's own leases (which follow the lid themselves), a system
 * user's (a service's work goes on) and those taken with LidClosed; every
 * other person's lock waits for the lid to open. Announces LEASE_UNHELD or
 * LEASE_HELD when that changes whether the leases hold.
 */
void leases_set_lid_closed(struct leases *l, bool closed);
/* How many leases wait for the lid to open: none while it is open. */
unsigned leases_waiting_for_lid(const struct leases *l);
/* Whether x (one of l's) waits for the lid to open, rather than holding now. */
bool lease_waits_for_lid(const struct leases *l, const struct lease *x);

/* Release every lease whose deadline passed; returns the next deadline or USEC_INFINITY. */
usec_t leases_expire(struct leases *l);
usec_t leases_next_deadline(struct leases *l);

const struct lease_stats *leases_stats_find(const struct leases *l, const char *name);

/* Move a lease's deadline (CLOCK_BOOTTIME, USEC_INFINITY for none). */
int leases_set_deadline(struct leases *l, uint64_t id, usec_t deadline);

/* Account a hold timed elsewhere (a kernel wake lock with a timeout) under name. */
int leases_stats_add(struct leases *l, const char *name, usec_t held);

/* The one rule for a lease's reason, from D-Bus and from a restored record alike. */
#define LEASE_WHY_MAX 256
/* 0 if valid; else -EINVAL and a sentence saying what is wrong in ret_problem. */
int lease_why_check(const char *why, char *ret_problem, size_t size);
