/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "battery.h"
#include "time-util.h"
#include "soak.h"
#include "wakeup-sources.h"

/*
 * The wakeup_count/state loop. It runs on its own thread because reading
 * /sys/power/wakeup_count blocks while any wakeup source is active, ours
 * included, and the state write blocks for the whole suspend. It reports to
 * the main loop through a pipe.
 */
enum suspender_state {
	SUSPENDER_AWAKE,       /* waiting for wakeup_count or for the last lease */
	SUSPENDER_SUSPENDING,  /* inside the state write */
	SUSPENDER_BACKING_OFF, /* waiting out the backoff delay */
	SUSPENDER_DISABLED,
	SUSPENDER_SOAKING,     /* the loop is paused while a soak client drives the cycles */
	_SUSPENDER_STATE_MAX,
	_SUSPENDER_STATE_INVALID = -22,
};

enum suspend_result {
	SUSPEND_SUCCESS,
	SUSPEND_EARLY_CANCEL, /* wakeup_count write rejected: an event came after our read */
	SUSPEND_LATE_CANCEL,  /* state write failed and a wakeup source or wake IRQ moved: a wakeup aborted it */
	SUSPEND_FAILURE,      /* state write failed with no wakeup event: a device or the kernel */
	/*
	 * The kernel's alarmtimer refused: a wake alarm (a systemd timer with
	 * WakeSystem=, any CLOCK_*_ALARM timer) is due within 2 s. The machine
	 * is fine; the alarm is work about to run. No backoff.
	 */
	SUSPEND_ALARM_IMMINENT,
	SUSPEND_EXTERNAL,     /* not ours: logind suspended (systemctl suspend, a desktop); never counted as ours */
	_SUSPEND_RESULT_MAX,
	_SUSPEND_RESULT_INVALID = -22,
};

#define SUSPEND_BLOCKERS_MAX WAKEUP_BLOCKERS_MAX
/* A wakeup_count read that took longer than this was held up by a wakeup source. */
#define SUSPEND_BLOCKED_READ_USEC (100 * USEC_PER_MSEC)

struct suspend_report {
	enum suspend_result result;
	uint64_t attempt;
	int error;              /* -errno of the write that failed, 0 on success */
	uint64_t count;         /* the wakeup_count we wrote back */
	usec_t asleep;          /* time the machine was suspended */
	usec_t duration;        /* wall time of the state write */
	bool short_suspend;     /* asleep < ShortSuspendSec, counted as bad */
	unsigned bad_streak;    /* consecutive bad attempts after this one */
	usec_t next_delay;      /* backoff before the next attempt */
	char wake_reason[96];   /* success: "irq 8 (rtc0)", or the wakeup sources that moved, or "unknown" */
	char cancel_source[160]; /* late cancel: "irq 9 (acpi)", "wakeup source autosleepd", ... */
	/* Failure: set only from suspend_stats counters that moved in this attempt. */
	char failed_dev[64];
	char failed_step[32];
	int failed_errno;
	/*
	 * "Who kept me awake": kernel wakeup sources, not ours, that were active
	 * while the wakeup_count read before this attempt blocked, or that
	 * cancelled it (early or late), with how long each was active.
	 */
	struct wakeup_blocker blockers[SUSPEND_BLOCKERS_MAX];
	unsigned n_blockers;
	/*
	 * Read before the wakeup_count write and after the state write, stamped
	 * with the clocks around the state write (0: none was made); !valid
	 * without a battery.
	 */
	struct battery_sample battery_before;
	struct battery_sample battery_after;
};

enum suspender_event_type {
	SUSPENDER_EVENT_STATE,
	SUSPENDER_EVENT_RESULT,
	SUSPENDER_EVENT_PREPARE, /* free to suspend, waiting for suspender_set_prepare(false) */
	SUSPENDER_EVENT_SOAK,  /* a soak cycle ended: soak holds its record */
	SUSPENDER_EVENT_GATE,  /* the gate was left (gate_exits times): see suspender_barrier() */
	_SUSPENDER_EVENT_TYPE_MAX,
	_SUSPENDER_EVENT_TYPE_INVALID = -22,
};

struct suspender_event {
	enum suspender_event_type type;
	enum suspender_state state;
	struct suspend_report report;
	struct soak_record soak;
	uint64_t activity; /* PREPARE: the count of suspender_note_activity() calls when the thread asked */
	uint64_t gate_exits; /* GATE */
};

struct suspender_params {
	const char *state;
	bool dry_run;
	usec_t backoff_base;
	double backoff_multiplier;
	unsigned backoff_flat_attempts;
	usec_t backoff_max;
	usec_t short_suspend; /* 0: off */
	/* Our own wakeup source names (NULL-terminated, copied), never named as a wake reason. */
	char *const *own_sources;
	/* Clock source; NULL for the real one. Tests move CLOCK_BOOTTIME to fake time asleep. */
	usec_t (*now)(clockid_t clock);
};

struct suspender;

int suspender_new(const struct suspender_params *p, struct suspender **ret);
int suspender_start(struct suspender *s);

/*
 * Stop the thread, interrupting a blocking wakeup_count read. Returns
 * -ETIMEDOUT when it is still stuck in the kernel after timeout; the caller
 * then exits without freeing.
 */
int suspender_stop(struct suspender *s, usec_t timeout);
struct suspender *suspender_free(struct suspender *s);

/*
 * Gate: blocked is true while any lease is held, enabled false after
 * Disable(), paused true during a soak. Each only sets its flag and returns
 * at once: no state write starts after the call, but one under way goes on.
 * Unblocking and enabling wake the thread.
 */
void suspender_set_blocked(struct suspender *s, bool blocked);
/*
 * Blocked, without the barrier: no state write starts after the call, but
 * one under way is left to the kernel, which aborts it because the caller
 * holds an enforced kernel lock taken after our wakeup_count write.
 */
void suspender_set_blocked_by_kernel(struct suspender *s);
void suspender_set_enabled(struct suspender *s, bool enabled);

/*
 * The barrier, after closing a flag above: whether a state write is under
 * way. 0: none is, and none will start while the flag stays closed. A ticket
 * (> 0): one may be; a SUSPENDER_EVENT_GATE with gate_exits >= ticket follows
 * once it returned. Never waits: a state write can take as long as sync()
 * does, and the main loop serves the bus meanwhile (gate-wait.h).
 */
uint64_t suspender_barrier(struct suspender *s);

/*
 * Which entry into the gate holds it now (its number, from 1), or 0. Read
 * only: a check that a lease taken during a state write did not come before
 * that write's look at the flags (tests/unit/test-interleave.c).
 */
uint64_t suspender_gate_holder(struct suspender *s);

/*
 * A step the main loop must finish before the next state write (locking the
 * sessions). While prepare is set, a thread that finds itself free to suspend
 * sends SUSPENDER_EVENT_PREPARE and waits, without writing wakeup_count or
 * state, until the main loop clears it; it then reads wakeup_count afresh.
 */
void suspender_set_prepare(struct suspender *s, bool prepare);
/*
 * The step was asked for but must not start now (a lease or the user came
 * after the ask), or it ran and another is owed: end the thread's wait with
 * prepare still set, so the attempt starts over and asks again once nothing
 * holds the machine, before it writes anything.
 */
void suspender_prepare_again(struct suspender *s);
/*
 * User activity, counted so that an ask the main loop reads after it shows
 * as stale: the thread asks on what it saw, and the user may come back
 * between its look and the main loop reading the ask.
 */
void suspender_note_activity(struct suspender *s);
/*
 * Whether an ask (its event's activity count) is stale: a lease blocks us
 * now, or there was user activity since the thread asked.
 */
bool suspender_ask_stale(struct suspender *s, uint64_t seen);

/*
 * Soak: while paused, the loop makes no attempt of its own; soak cycles run
 * one at a time on the thread. Pausing closes the gate like disabling. A soak
 * cycle runs whether or not the loop is enabled: it is asked for by name.
 * suspender_soak() returns -EBUSY while one is queued or running, and once
 * the thread picked it up its SUSPENDER_EVENT_SOAK follows.
 */
void suspender_set_paused(struct suspender *s, bool paused);
int suspender_soak(struct suspender *s, const struct soak_request *req);

/* Read end of the event pipe (non-blocking) and one event from it: 1 read, 0 none, <0 error. */
int suspender_get_fd(struct suspender *s);
int suspender_read_event(struct suspender *s, struct suspender_event *ret);

const char *suspender_state_to_string(enum suspender_state s);
const char *suspend_result_to_string(enum suspend_result r);
