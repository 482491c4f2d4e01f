/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "time-util.h"

struct manager;
struct logind;

/*
 * systemd-logind's inhibitors. Block-mode "sleep" or "idle" inhibitors taken
 * by anyone else (systemd-inhibit, media players, desktops) keep us awake
 * through manager_set_logind_block(). Optionally we hold our own "sleep"
 * inhibitor while our wake locks are held, so "systemctl suspend" from
 * elsewhere respects them.
 *
 * A closed lid that is ours to handle overrides most of them, as logind's
 * own LidSwitchIgnoreInhibited=yes does: logind grants idle inhibitors to any
 * user, remote ones too, so one "systemd-inhibit --what=idle" over SSH would
 * otherwise keep a laptop in a bag awake. Only a system service's "sleep"
 * inhibitor (a firmware flash, a backup) still holds with the lid closed.
 */
int logind_new(struct manager *m, sd_bus *bus, bool honor, bool hold, bool handle_lid, struct logind **ret);
struct logind *logind_free(struct logind *l);

/* Our own wake locks went from none to some, or back. */
void logind_set_held(struct logind *l, bool held);

/*
 * With handle_lid we hold logind's handle-lid-switch and handle-suspend-key
 * block inhibitors, so logind leaves the lid and the sleep key to us, unless
 * another program (a desktop's power manager) holds handle-lid-switch: then
 * the lid is theirs and we let go (manager_set_lid_handler()).
 */

/* Ask logind's Docked; the answer goes to manager_lid_docked(). */
void logind_query_docked(struct logind *l);
/*
 * While on, ask Docked again every LOGIND_DOCKED_RECHECK: logind announces no
 * change of it, and an undock with the lid closed must end in a suspend.
 * Each answer goes to manager_lid_docked(), which says whether to go on.
 */
#define LOGIND_DOCKED_RECHECK (10 * USEC_PER_SEC)
void logind_watch_docked(struct logind *l, bool on);

/* The lid closed or opened, or changed hands: which inhibitors hold now. */
void logind_lid_changed(struct logind *l);

/* What one of logind's inhibitors does to us. */
enum inhibitor_hold {
	INHIBITOR_HOLDS_NOT,      /* delay mode, another what, or ours */
	INHIBITOR_HOLDS_LID_OPEN, /* idle, or a user's sleep: not with the lid closed */
	INHIBITOR_HOLDS,          /* a system service's sleep: with the lid closed too */
	_INHIBITOR_HOLD_MAX,
	_INHIBITOR_HOLD_INVALID = -22,
};

/* Parse one ListInhibitors() entry; exposed for tests. */
enum inhibitor_hold logind_inhibitor_hold(const char *what, const char *mode, unsigned uid, unsigned pid,
					  unsigned self);
bool logind_inhibitor_takes_lid(const char *what, const char *mode, unsigned pid, unsigned self);
