/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "time-util.h"

/*
 * Idle time on CLOCK_BOOTTIME with time asleep taken out: a machine that was
 * suspended for an hour was not idle for an hour.
 */
struct idle_clock {
	usec_t last_input;       /* CLOCK_BOOTTIME */
	usec_t asleep_at_input;  /* total time asleep when that input came */
};

void idle_clock_input(struct idle_clock *c, usec_t now_boottime, usec_t asleep_total);
usec_t idle_clock_idle(const struct idle_clock *c, usec_t now_boottime, usec_t asleep_total);

/*
 * At most one hold refresh (one sysfs write) per interval, however fast
 * events come. An event inside the interval is not lost: it leaves a refresh
 * pending, due at the end of the interval.
 */
struct refresh_limiter {
	usec_t interval;
	usec_t last_write;
	usec_t last_event;
	bool pending;
	bool written;
};

/* An event at now: true if the caller should refresh now (and it is recorded as written). */
bool refresh_limiter_event(struct refresh_limiter *r, usec_t now);
/* When a pending refresh is due, or USEC_INFINITY. */
usec_t refresh_limiter_due(const struct refresh_limiter *r);
/* The pending refresh is being written now. */
void refresh_limiter_flush(struct refresh_limiter *r, usec_t now);
