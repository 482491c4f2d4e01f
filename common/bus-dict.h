/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/*
 * a{sv} dictionaries: the daemon's answers (GetStatistics, SoakCycle) and
 * its callers' options (SoakCycle, AcquireWakeLockWithOptions). For
 * each entry at m's read position, entry() gets the key, with the variant
 * entered and the type of what it holds: it reads the value and returns 1,
 * returns 0 to have it skipped, or <0 to stop the walk. Returns 0 once the
 * whole dictionary is read, or the first <0.
 */
typedef int (*bus_dict_entry_t)(void *userdata, const char *key, sd_bus_message *m, const char *type);

int bus_dict_walk(sd_bus_message *m, bus_dict_entry_t entry, void *userdata);
