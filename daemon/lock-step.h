/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The lock step before a suspend (LockBeforeSleep=): the core decides when
 * one is owed, sessions.c runs it (LockSessions(), then every local
 * graphical session's LockedHint=true, or LockTimeoutSec), and the bus
 * shows where it stands (LockStep).
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

const char *lock_step_to_string(enum lock_step s);
