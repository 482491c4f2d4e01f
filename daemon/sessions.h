/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "lock-step.h"
#include "time-util.h"

struct core;
struct sessions;

/*
 * logind's sessions, followed through SessionNew, SessionRemoved and
 * PropertiesChanged on each session, never polled.
 *
 * The session is the screen: while a session that counts has Active=true
 * and IdleHint=false, the core holds the "session-active" lease. A
 * session counts when it is local (Remote=false), of class user or greeter,
 * and graphical (x11, wayland, mir). Text and remote sessions do not count:
 * logind derives their IdleHint from the tty's access time without
 * announcing a change, so following it would mean polling, and the user of
 * an ssh session is not at this machine. Typing on a text console is seen
 * by the input watch.
 *
 * The lock step: LockSessions(), then wait until every local graphical
 * session reports LockedHint=true, or LockTimeoutSec passed (lock-step.h).
 */
struct session_info {
	const char *id;
	const char *user;
	const char *class;
	const char *type;
	uint32_t uid;
	bool active, remote, idle, locked;
	bool counts;  /* local, user or greeter, graphical */
};

int sessions_new(struct core *core, sd_bus *bus, bool honor_idle_hint, usec_t lock_timeout, struct sessions **ret);
struct sessions *sessions_free(struct sessions *s);

/* Tell the manager again whether a session holds us awake (none while the user is away). */
void sessions_refresh(struct sessions *s);

/* Start the lock step; the core hears core_lock_done() when it ended (maybe before this returns). */
void sessions_lock(struct sessions *s);

/* Sessions known, for status: i-th, false past the end. */
bool sessions_get(struct sessions *s, unsigned i, struct session_info *ret);

/* Whether a session counts for the session hold; exposed for tests. */
bool session_counts(const char *class, const char *type, bool remote);

