/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "observers.h"
#include "time-util.h"

/*
 * After every resume (ours, logind's, a soak cycle's), the modules that care
 * hear of it in two rounds, so none depends on the order the others
 * registered in: IDENTIFY lets one name what woke the machine (timers.c: a
 * WakeSystem timer that was due), RESUMED acts on the answer (activity.c's
 * grace, timers.c's holds). The manager only runs the rounds.
 */
enum wake_event {
	WAKE_IDENTIFY,
	WAKE_RESUMED,
	_WAKE_EVENT_MAX,
	_WAKE_EVENT_INVALID = -22,
};

struct wake {
	const char *reason;  /* the kernel's wake reason: "irq 8 (rtc0)", "rtc0 alarm", "unknown", ... */
	usec_t since;        /* CLOCK_BOOTTIME the suspend began */
	char timer[128];     /* IDENTIFY fills it: the timer that was due; "" for none */
	bool soak;           /* a soak cycle: its client asks for the next one */
};

typedef void (*wake_observer_fn)(enum wake_event ev, struct wake *w, void *userdata);

/* activity.c and timers.c */
#define WAKE_OBSERVERS_MAX 4

struct wake_observers {
	struct observers list;
};

/* Called in the order added; -ENOSPC past WAKE_OBSERVERS_MAX. */
int wake_observe(struct wake_observers *o, wake_observer_fn fn, void *userdata);
/* Remove what wake_observe() added (a module going away first). */
void wake_unobserve(struct wake_observers *o, wake_observer_fn fn, void *userdata);

/*
 * The IDENTIFY round for a suspend of duration (CLOCK_BOOTTIME) that just
 * ended, with now the CLOCK_BOOTTIME of its end. A timer named is written
 * into reason (size bytes) as "backup.timer (<reason>)", so the journal,
 * the records and LastWakeReason say it.
 */
void wake_identify(struct wake_observers *o, struct wake *w, char *reason, size_t size, usec_t now,
		   usec_t duration, bool soak);
/* The RESUMED round, with what IDENTIFY found in w. */
void wake_resumed(struct wake_observers *o, struct wake *w);
