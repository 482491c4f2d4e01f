/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "time-util.h"

/*
 * The system's batteries, from /sys/class/power_supply/: what a laptop user
 * wants to know of Android-style sleep is how much less the battery drains
 * asleep than awake. Supplies of type "Battery" count unless their scope is
 * "Device" (a mouse or a headset reports its own battery there). Several
 * batteries are summed, in the best unit all of them offer:
 *
 *   energy   energy_now/energy_full, uWh: gives both %/h and mW;
 *   charge   charge_now/charge_full, uAh: %/h, and mW when every battery
 *            also gives a voltage (voltage_min_design, else voltage_now);
 *   capacity capacity alone, in whole percent: %/h only, and coarse.
 *
 * A sample read while any Mains/USB supply is online, or a battery says
 * "Charging", is marked on_ac: its drain means nothing.
 */
enum battery_unit {
	BATTERY_UNIT_ENERGY,
	BATTERY_UNIT_CHARGE,
	BATTERY_UNIT_CAPACITY,
	_BATTERY_UNIT_MAX,
	_BATTERY_UNIT_INVALID = -22,
};

struct battery_sample {
	bool valid;             /* a battery was read; nothing below counts otherwise */
	bool on_ac;
	enum battery_unit unit;
	unsigned n_batteries;
	uint64_t now;           /* sum over batteries, in unit (capacity: percent, and full = 100) */
	uint64_t full;
	uint64_t energy_now;    /* uWh, 0 when no battery gives energy or charge with voltage */
	uint64_t energy_full;
	usec_t boottime;        /* when read; the caller stamps them, so tests can fake time */
	usec_t monotonic;
};

const char *battery_unit_to_string(enum battery_unit u);

/*
 * Read the batteries below the sysfs root. Returns 0, -ENODEV when there is
 * no usable battery (a desktop), or -ENOMEM; ret is untouched then.
 * Attributes that are missing, unreadable, not regular files or not plain
 * numbers make that battery fall back to a coarser unit or be skipped; sums
 * that would not fit 64 bits skip the battery too. Never blocks.
 */
int battery_read(struct battery_sample *ret);
