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
struct manager_stats {
	uint64_t attempts;
	uint64_t results[_SUSPEND_RESULT_MAX];
	usec_t total_asleep;
	struct suspend_report last;
	bool have_last;
};

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
	struct manager_stats stats;
};

int manager_new(struct config *config, bool dry_run, struct manager **ret);
struct manager *manager_free(struct manager *m);

/* Report what the kernel offers, clean up after a crash, start the thread. */
int manager_startup(struct manager *m);
int manager_run(struct manager *m);

int manager_acquire(struct manager *m, const char *name, const char *owner, const char *why, uid_t uid,
		    pid_t pid, usec_t timeout, uint64_t *ret_id);
int manager_release(struct manager *m, uint64_t id);
