/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "battery.h"
#include "time-util.h"
#include "wakeup-sources.h"

/*
 * One soak cycle, as autosleepctl soak asks for it over D-Bus
 * (SoakCycle): the wakeup_count handshake with the count it read, given up
 * instead of retried on a mismatch (as ChromeOS's suspend_stress_test does,
 * so a cycle never waits for an alarm that already passed), the state write,
 * and one record of what happened. It runs on the suspender thread, so it
 * never races the normal loop; the caller arms the wake alarm (the daemon's
 * sandbox may not write the RTC) and says when it is due.
 */
enum soak_result {
	SOAK_SUCCESS,
	SOAK_BLOCKED,            /* a wake lock, a wakeup source or a passed alarm kept it from suspending */
	SOAK_EARLY_CANCEL,       /* wakeup_count write rejected: an event after the read */
	SOAK_LATE_CANCEL,        /* state write failed after a wakeup event */
	SOAK_FAILURE,            /* state write failed with no wakeup: a device, a step, an errno */
	SOAK_ALARM_NOT_CLEARED,  /* suspended and resumed, but the alarm was still armed: woken before it */
	SOAK_HANG,               /* the state write did not return in time (the daemon's watchdog) */
	SOAK_ALARM_IMMINENT,     /* the kernel's alarmtimer refused: a wake alarm was due within 2 s */
	_SOAK_RESULT_MAX,
	_SOAK_RESULT_INVALID = -22,
};

struct soak_request {
	char state[16];
	char pm_test[16];  /* "" to leave /sys/power/pm_test alone */
	usec_t sleep;      /* what the caller asked for, for the record */
	usec_t wake_at;    /* CLOCK_BOOTTIME when the caller's alarm is due; 0: none armed */
	usec_t read_timeout;
	bool force;        /* suspend although wake locks are held */
};

/* Less than this before the alarm and the cycle is given up: it would sleep past it. */
#define SOAK_ALARM_MARGIN_USEC (1 * USEC_PER_SEC)
#define SOAK_READ_TIMEOUT_DEFAULT_USEC (10 * USEC_PER_SEC)

struct soak_record {
	enum soak_result result;
	usec_t start;          /* CLOCK_REALTIME */
	uint64_t count;        /* the wakeup_count read and written back */
	int error;             /* -errno of the write that failed */
	usec_t asleep;         /* CLOCK_BOOTTIME minus CLOCK_MONOTONIC across the state write */
	usec_t write_usec;     /* CLOCK_BOOTTIME across the state write */
	usec_t awake_in_write; /* CLOCK_MONOTONIC across it: suspend entry plus exit */
	int64_t last_hw_sleep; /* usec, -1 where the kernel has no last_hw_sleep */
	uint64_t d_success;    /* suspend_stats deltas across the cycle */
	uint64_t d_fail;
	bool alarm_armed;      /* rtc0's wakealarm before the state write */
	bool alarm_cleared;    /* ... and empty after */
	char wake_reason[96];
	char detail[160];      /* blocked: by what; late cancel: the source */
	char failed_dev[64];
	char failed_step[32];
	int failed_errno;
	struct wakeup_blocker blockers[WAKEUP_BLOCKERS_MAX];
	unsigned n_blockers;
	/* Read before the wakeup_count write and after the state write; !valid without a battery. */
	struct battery_sample battery_entry;
	struct battery_sample battery_exit;
};

struct soak_env {
	bool leases_held;       /* D-Bus, logind or activity holds */
	/*
	 * Around the state write only (NULL: nothing to take): the caller's
	 * gate. enter returns 0 with it taken, or >0 when a wake lock came
	 * after the look at leases_held and force is not set (the cycle is
	 * then blocked and leave is not called). The wakeup_count read before
	 * it may block for the whole read timeout, and must not keep the gate
	 * meanwhile.
	 */
	int (*gate_enter)(void *userdata, bool force);
	void (*gate_leave)(void *userdata);
	void *userdata;
	char *const *own_sources;
	int signo;              /* sent to this thread to end a wakeup_count read that blocks too long */
	usec_t (*now)(clockid_t clock);
};

const char *soak_result_to_string(enum soak_result r);
enum soak_result soak_result_from_string(const char *s);

/* Run one cycle on the calling thread; fills rec. */
void soak_cycle_run(const struct soak_request *req, const struct soak_env *env, struct soak_record *rec);
