/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-names.h"
#include "time-util.h"

struct peers;
struct suspender;

/*
 * Calls that must not be answered while a state write is under way:
 * Disable() (after its answer nothing suspends), SoakCycle (its cycle is the
 * only suspend), and AcquireWakeLock when the kernel does not enforce our
 * kernel lock (the gate is then all that holds the machine). A state write
 * can take as long as sync() does, minutes on a dead NFS mount, so such a
 * call never waits on the main loop: it waits here, its sender's later
 * calls wait behind it (peers.h), everyone else is served, and it is
 * dispatched again once the write returned, or once [Suspend]
 * WaitForResumeSec= of awake time passed.
 *
 * A handler asks gate_wait_resume() first, to learn whether this dispatch
 * is the one after its wait; only on a first dispatch does it close its
 * flag and call gate_wait().
 */
struct gate_waits;

/* Calls waiting at once: more get LimitsExceeded. */
#define GATE_WAITS_MAX 1024

/*
 * unheld: the last hold (gate_wait(..., hold=true)) ended; the suspender's
 * blocked flag may open again if no lease holds.
 */
int gate_waits_new(sd_event *event, struct suspender *s, struct peers *peers, usec_t bound,
		   void (*unheld)(void *userdata), void *userdata, struct gate_waits **ret);
/* Every waiting call is answered with an error: the daemon is stopping. */
struct gate_waits *gate_waits_free(struct gate_waits *g);

enum gate_resume {
	GATE_FRESH,  /* m did not wait: run the checks, then gate_wait() */
	GATE_PASSED, /* the state write returned; m owns a hold if it asked for one (gate_wait_unhold()) */
	GATE_PARKED, /* m still waits (dispatched again by someone else): no answer yet, return 1 */
};

/*
 * Whether m comes round after a wait: an enum gate_resume, or -ETIME with
 * error set to SuspendInProgress when the bound passed first (any hold
 * ended); outcome says what that means for the caller ("no wake lock
 * taken").
 */
int gate_wait_resume(struct gate_waits *g, sd_bus_message *m, const char *outcome, sd_bus_error *error);
/* Whether m waits or waited here, without taking it off: for a handler that must skip its checks first. */
bool gate_wait_known(struct gate_waits *g, sd_bus_message *m);

/*
 * After the caller closed its flag: 1 when no state write is under way (with
 * hold, m owns a hold: gate_wait_unhold() once its lease holds); 0 when m
 * waits and will be dispatched again; -errno with error set. hold closes the
 * suspender's blocked flag for m first, and keeps it closed until unheld, so
 * no new write starts between the wait and the lease.
 */
int gate_wait(struct gate_waits *g, sd_bus_message *m, bool hold, sd_bus_error *error);
void gate_wait_unhold(struct gate_waits *g);
static inline void gate_wait_unholdp(struct gate_waits **g)
{
	if (*g)
		gate_wait_unhold(*g);
}

/* Holds in force: the suspender's blocked flag stays closed while any is. */
unsigned gate_wait_holds(const struct gate_waits *g);

/* SUSPENDER_EVENT_GATE: every call waiting for fewer exits goes on. */
void gate_waits_passed(struct gate_waits *g, uint64_t gate_exits);
