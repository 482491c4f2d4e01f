/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "leases.h"
#include "lock-step.h"
#include "time-util.h"
#include "wake.h"

/*
 * What a policy (timers, sessions, logind, activity, the lid) sees of the
 * core: the lease registry and the suspend engine, behind this header only.
 * A policy keeps the machine awake with holds, hears of leases through the
 * registry's observers and of suspends and resumes through the wake watch,
 * and reports what it found out; it never names the manager or reads its
 * fields. The dependency runs one way: the manager wires the core to the
 * policies, and no policy calls back into the manager.
 *
 * Policies move onto it one at a time (issue 31); those that have are
 * listed in tests/unit/test-layers.sh, which fails the suite if one names
 * a manager_*() function or includes manager.h again.
 */
struct core;

/* The loop everything runs on. */
sd_event *core_event(struct core *c);
/* The registry, for observing leases and reading them; holds go through core_hold(). */
struct leases *core_leases(struct core *c);
/* The IDENTIFY and RESUMED rounds of every suspend. */
struct wake_observers *core_wake(struct core *c);

/*
 * Holds: one of the daemon's own leases, named for the journal and
 * autosleepctl list, ended by core_drop() or after cap (USEC_INFINITY:
 * none). 0 and its id, or -errno.
 */
int core_hold(struct core *c, const char *name, const char *why, usec_t cap, uint64_t *ret_id);
/* End a hold; -ENOENT if it ended already (its cap passed). */
int core_drop(struct core *c, uint64_t id, const char *reason);

/* A fact that the bus shows (a property of org.autosleep1.Manager) changed. */
void core_changed(struct core *c, const char *property);

/*
 * Facts the policies find out. The user is away: the lid closed (ours to
 * handle, not docked) or the sleep key, until input or the lid opens.
 */
bool core_away(struct core *c);
/* User activity (input, a session turning active): the next suspend locks the sessions first. */
void core_user_active(struct core *c);
/* The sessions that count (why: a description) keep the machine awake or not any more: a hold that follows them. */
void core_set_session_hold(struct core *c, bool held, const char *why);
/* The lock step the core asked for (sessions_lock()) ended with result. */
void core_lock_done(struct core *c, enum lock_step result);
/* logind's PrepareForSleep: a suspend that is not ours starts (true) or ended (false). */
void core_external_sleep(struct core *c, bool start);
