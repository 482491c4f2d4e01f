/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "time-util.h"

/*
 * systemd's timers with WakeSystem=true, followed over D-Bus (Subscribe(),
 * ListUnitsByPatterns(), then PropertiesChanged, UnitRemoved, Reloading and
 * NameOwnerChanged), never polled.
 *
 * systemd arms an alarm clock for such a timer, so the RTC wakes the
 * machine when it is due, but nothing keeps the machine up while the work
 * it starts runs. This module does, with one lease per timer,
 * "timer:<name>":
 *   - guard:    from GuardSec before the timer is due until systemd started
 *               it, so no attempt runs into the kernel's alarmtimer refusal;
 *   - dispatch: after a resume, while a timer that is due waits for PID 1
 *               to process it (capped by ResumeGraceSec);
 *   - running:  while the timer is "running", which systemd keeps until the
 *               unit it triggered is inactive or failed (capped by
 *               MaxHoldSec; past the cap the timer is "capped", not held).
 *
 * Only PID 1's timers: a user manager lacks CAP_WAKE_ALARM, so systemd
 * (252 and later, systemd.timer(5)) arms no alarm clock for its
 * WakeSystem= timers and they never wake the machine.
 */
enum timer_phase {
	TIMER_IDLE,
	TIMER_GUARD,
	TIMER_DISPATCH,
	TIMER_RUNNING,
	TIMER_CAPPED,
	_TIMER_PHASE_MAX,
	_TIMER_PHASE_INVALID = -22,
};

struct timers_params {
	usec_t guard;       /* [Timers] GuardSec, 0: none */
	usec_t max_hold;    /* [Timers] MaxHoldSec */
	usec_t grace;       /* [Activity] ResumeGraceSec: the dispatch hold's cap */
};

/* Timer units followed, WakeSystem or not; past this, new ones are ignored with a warning. */
#define TIMERS_MAX 1024

struct timer_info {
	const char *id;       /* backup.timer */
	const char *unit;     /* backup.service */
	enum timer_phase phase;
	usec_t since;         /* CLOCK_REALTIME the phase began */
};

struct core;
struct timers;

int timers_new(struct core *core, sd_bus *bus, const struct timers_params *p, struct timers **ret);
struct timers *timers_free(struct timers *t);

/*
 * The WakeSystem timer due next: its name and when (CLOCK_REALTIME). false
 * for none. A timer due by the monotonic clock is given in real time too.
 */
bool timers_next(struct timers *t, const char **ret_id, usec_t *ret_realtime);

/* The timers in a phase other than idle, i-th; false past the end. */
bool timers_get(struct timers *t, unsigned i, struct timer_info *ret);

const char *timer_phase_to_string(enum timer_phase p);
