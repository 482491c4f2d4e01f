/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "suspender.h"
#include "wakeup-sources.h"

/*
 * What the kernel tells about a suspend attempt, read before and after the
 * state write without ever blocking: the counters of
 * /sys/power/suspend_stats, pm_wakeup_irq and the wakeup sources. A failed
 * attempt is classified from the difference, never from a re-read of
 * wakeup_count, which would wait for our own lease's wakeup source.
 */
enum suspend_stat {
	SUSPEND_STAT_SUCCESS,
	SUSPEND_STAT_FAIL,
	/* The failed_* steps, in the kernel's order. */
	SUSPEND_STAT_FAILED_FREEZE,
	SUSPEND_STAT_FAILED_PREPARE,
	SUSPEND_STAT_FAILED_SUSPEND,
	SUSPEND_STAT_FAILED_SUSPEND_LATE,
	SUSPEND_STAT_FAILED_SUSPEND_NOIRQ,
	SUSPEND_STAT_FAILED_RESUME,
	SUSPEND_STAT_FAILED_RESUME_EARLY,
	SUSPEND_STAT_FAILED_RESUME_NOIRQ,
	_SUSPEND_STAT_MAX,
	_SUSPEND_STAT_INVALID = -22,
};

#define SUSPEND_STAT_UNKNOWN UINT64_MAX

struct suspend_snapshot {
	uint64_t stats[_SUSPEND_STAT_MAX]; /* SUSPEND_STAT_UNKNOWN where missing */
	char last_failed_dev[64];
	char last_failed_step[32];
	int last_failed_errno;
	unsigned wakeup_irq;               /* 0: none, or no CONFIG_PM_SLEEP_DEBUG */
	char wakeup_irq_actions[64];       /* /sys/kernel/irq/N/actions, "" if unknown */
	struct wakeup_sources sources;
	bool have_sources;
	uint64_t wakealarm;                /* rtc0's armed alarm (epoch s), 0: none or no RTC */
	uint64_t rtc_time;                 /* rtc0's since_epoch, 0 if unknown */
};

const char *suspend_stat_to_string(enum suspend_stat s);

/* Best effort: whatever is missing is marked unknown. */
void suspend_snapshot_read(struct suspend_snapshot *ret);
/* All but the wakeup sources (have_sources false), for a caller that has them already. */
void suspend_snapshot_read_counters(struct suspend_snapshot *ret);
void suspend_snapshot_clear(struct suspend_snapshot *s);

/*
 * Classify an attempt from the snapshots taken before and after its state
 * write and the write's result (0 or -errno). Fills rep->result and, by class,
 * rep->wake_reason (success), rep->cancel_source (late cancel) or
 * rep->failed_dev/failed_step/failed_errno (failure: only what moved in this
 * attempt, never a stale device). exclude lists our own wakeup source names,
 * left out of the wake reason (a lease taken at resume is no wake reason).
 */
void suspend_classify(const struct suspend_snapshot *before, const struct suspend_snapshot *after, int error,
		      char *const *exclude, struct suspend_report *rep);
