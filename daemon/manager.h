/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "kconfig.h"
#include "leases.h"
#include "suspender.h"

/*
 * The daemon's state on the sd-event thread: leases, the one kernel wake
 * lock that mirrors them, and what the suspender thread reports.
 */
/* The last few completed attempts, for "autosleepctl status". */
#define MANAGER_RECENT_MAX 8

struct manager_cycle {
	struct suspend_report report;
	usec_t when; /* CLOCK_REALTIME when the main loop heard of it */
};

struct manager_stats {
	uint64_t attempts;
	uint64_t results[_SUSPEND_RESULT_MAX];
	usec_t total_asleep;
	struct manager_cycle recent[MANAGER_RECENT_MAX]; /* ring, newest at recent_next - 1 */
	unsigned n_recent;
	unsigned recent_next;
};

struct bus;
struct logind;
struct activity;

struct manager {
	sd_event *event;
	struct config config;
	bool dry_run;

	struct kconfig kconfig;
	bool kernel_wakelocks;
	bool kernel_lock_held;

	struct leases leases;
	sd_event_source *deadline_source;

	struct suspender *suspender;
	sd_event_source *suspender_source;
	enum suspender_state state;
	bool enabled;
	struct manager_stats stats;
	char last_wake_reason[96];

	struct bus *bus;
	struct logind *logind;
	uint64_t logind_lease;
	struct activity *activity; /* held while logind has others' block inhibitors; 0 for none */
};

int manager_new(struct config *config, bool dry_run, struct manager **ret);
struct manager *manager_free(struct manager *m);

/* Report what the kernel offers, clean up after a crash, start the thread. */
int manager_startup(struct manager *m);
int manager_run(struct manager *m);

int manager_acquire(struct manager *m, const char *name, const char *owner, const char *why, uid_t uid,
		    pid_t pid, usec_t timeout, uint64_t *ret_id);
int manager_release(struct manager *m, uint64_t id, const char *reason);
void manager_set_enabled(struct manager *m, bool enabled);

/* A lease deadline moved: re-arm the deadline timer. */
void manager_rearm(struct manager *m);

/* logind reports block inhibitors of sleep or idle held by others (who: a description). */
void manager_set_logind_block(struct manager *m, bool blocked, const char *who);

/* Newest first; i < stats.n_recent. */
const struct manager_cycle *manager_recent(const struct manager *m, unsigned i);
