/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

/*
 * The signals we follow (logind's, systemd's, the bus's NameOwnerChanged)
 * are all broadcast. dbus-daemon routes a broadcast only along match rules
 * it checked, sender included. A signal addressed to us goes past every
 * match rule, and sd-bus does not compare a match's well-known sender with
 * the unique name the message carries, so any client could send us
 * PrepareForSleep, SessionRemoved or a NameOwnerChanged saying logind left.
 * Every handler of such a signal first asks this, and ignores the signal if
 * it was addressed to us.
 */
static inline bool bus_signal_trusted(sd_bus_message *m)
{
	return !sd_bus_message_get_destination(m);
}
