/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/*
 * TEST SEAM: a stand-in for PID 1's org.freedesktop.systemd1 on the test's
 * private bus, with just what daemon/timers.c uses: Subscribe(),
 * ListUnitsByPatterns(), Properties.GetAll("") on timer units, and the
 * UnitNew, UnitRemoved, Reloading and PropertiesChanged signals, which (as
 * systemd's) go out only after someone subscribed since the fake last came
 * onto the bus. Calls can be held and answered later, out of order, with an
 * error, or never. It runs only while the test pumps it. Nothing here asserts.
 */
#define FAKE_SYSTEMD1_TIMERS_MAX 32
#define FAKE_SYSTEMD1_HELD_MAX 256

struct fake_timer {
	struct fake_systemd1 *f;
	char id[64];
	char path[160];
	char unit[64];
	char sub[16];       /* waiting, running, elapsed, dead */
	bool wake;          /* WakeSystem= */
	uint64_t next_realtime, next_monotonic, last_trigger;
	bool gone;
};

enum fake_systemd1_answer {
	FAKE_SYSTEMD1_NOW,
	FAKE_SYSTEMD1_ERROR,
	FAKE_SYSTEMD1_NEVER,
};

struct fake_systemd1 {
	sd_bus *bus;
	struct fake_timer timers[FAKE_SYSTEMD1_TIMERS_MAX];
	unsigned n;
	unsigned subscribes;   /* Subscribe() calls since start */
	bool subscribed;       /* since the fake last came onto the bus */
	bool defer;            /* hold every call instead of answering */
	sd_bus_slot *filter_slot;
	sd_bus_message *held[FAKE_SYSTEMD1_HELD_MAX];
	unsigned n_held;
	bool away;
	/* GetAll on an unloaded timer loads it (UnitNew), answers, and unloads it (UnitRemoved), as systemd's GC does. */
	bool load_on_access;
	unsigned loads;
};

int fake_systemd1_start(struct fake_systemd1 *f, const char *address);
void fake_systemd1_stop(struct fake_systemd1 *f);
void fake_systemd1_pump(struct fake_systemd1 *f, int ms);

/* A timer unit, "waiting", never triggered; UnitNew is sent if announce. */
struct fake_timer *fake_systemd1_add(struct fake_systemd1 *f, const char *id, const char *unit, bool wake,
				     bool announce);
/* UnitNew for a timer (systemd loaded it, for a dependency say), without changing it. */
void fake_systemd1_announce_new(struct fake_timer *t);
/* UnitRemoved: systemd unloaded it. */
void fake_systemd1_remove(struct fake_timer *t);
/* SubState changes (Unit interface), announced. */
void fake_timer_set_sub(struct fake_timer *t, const char *sub);
/* Next elapse (absolute CLOCK_MONOTONIC and CLOCK_REALTIME usec, 0 for none), announced. */
void fake_timer_set_next(struct fake_timer *t, uint64_t monotonic, uint64_t realtime);
/* As systemd does when a timer elapses: LastTriggerUSec now, then "running"; the next elapse cleared. */
void fake_timer_trigger(struct fake_timer *t);
/* The same, with between() run after the Timer interface's signal and before the Unit's. */
void fake_timer_trigger_split(struct fake_timer *t, void (*between)(struct fake_systemd1 *f));
/* Reloading(true), what changes (WakeSystem= without a signal, as a reload does), Reloading(false). */
void fake_systemd1_reloading(struct fake_systemd1 *f, bool start);

void fake_systemd1_defer(struct fake_systemd1 *f, bool on);
void fake_systemd1_answer(struct fake_systemd1 *f, unsigned i, enum fake_systemd1_answer how);
/* Leave the bus (NameOwnerChanged to "", subscriptions end) and come back as a new owner. */
void fake_systemd1_leave(struct fake_systemd1 *f);
void fake_systemd1_return(struct fake_systemd1 *f);
