/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "time-util.h"

struct manager;
struct sessions;

/*
 * logind's sessions, followed through SessionNew, SessionRemoved and
 * PropertiesChanged on each session, never polled.
 *
 * The session is the screen: while a session that counts has Active=true
 * and IdleHint=false, the manager holds the "session-active" lease. A
 * session counts when it is local (Remote=false), of class user or greeter,
 * and graphical (x11, wayland, mir). Text and remote sessions do not count:
 * logind derives their IdleHint from the tty's access time without
 * announcing a change, so following it would mean polling, and the user of
 * an ssh session is not at this machine. Typing on a text console is seen
 * by the input watch.
 *
 * The lock step: LockSessions(), then wait until every local graphical
 * session reports LockedHint=true, or LockTimeoutSec passed.
 */
enum lock_step {
	LOCK_STEP_OFF,     /* LockBeforeSleep=no */
	LOCK_STEP_PENDING, /* user activity since the last lock: the next suspend locks first */
	LOCK_STEP_LOCKING,
	LOCK_STEP_LOCKED,  /* every graphical session locked (or there was none) */
	LOCK_STEP_TIMED_OUT,
	LOCK_STEP_FAILED,  /* LockSessions() failed */
	_LOCK_STEP_MAX,
	_LOCK_STEP_INVALID = -22,
};

struct session_info {
	const char *id;
	const char *user;
	const char *class;
	const char *type;
	uint32_t uid;
	bool active, remote, idle, locked;
	bool counts;  /* local, user or greeter, graphical */
};

int sessions_new(struct manager *m, sd_bus *bus, bool honor_idle_hint, usec_t lock_timeout, struct sessions **ret);
struct sessions *sessions_free(struct sessions *s);

/* Tell the manager again whether a session holds us awake (none while the user is away). */
void sessions_refresh(struct sessions *s);

/* Start the lock step; the manager hears manager_lock_done() when it ended (maybe before this returns). */
void sessions_lock(struct sessions *s);

/* Sessions known, for status: i-th, false past the end. */
bool sessions_get(struct sessions *s, unsigned i, struct session_info *ret);

/* Whether a session counts for the session hold; exposed for tests. */
bool session_counts(const char *class, const char *type, bool remote);

const char *lock_step_to_string(enum lock_step s);
