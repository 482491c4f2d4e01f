/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

struct manager;
struct logind;

/*
 * systemd-logind's inhibitors. Block-mode "sleep" or "idle" inhibitors taken
 * by anyone else (systemd-inhibit, media players, desktops) keep us awake
 * through manager_set_logind_block(). Optionally we hold our own "sleep"
 * inhibitor while our wake locks are held, so "systemctl suspend" from
 * elsewhere respects them.
 */
int logind_new(struct manager *m, sd_bus *bus, bool honor, bool hold, struct logind **ret);
struct logind *logind_free(struct logind *l);

/* Our own wake locks went from none to some, or back. */
void logind_set_held(struct logind *l, bool held);

/* Parse one ListInhibitors() entry; exposed for tests. */
bool logind_inhibitor_blocks(const char *what, const char *mode, unsigned pid, unsigned self);
