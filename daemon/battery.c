/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "battery.h"
#include "log.h"
#include "macro.h"
#include "string-table.h"
#include "sysfs.h"

/* What one battery offers; a field is 0 when it does not. */
struct one_battery {
	uint64_t energy_now, energy_full;  /* uWh */
	uint64_t charge_now, charge_full;  /* uAh */
	uint64_t voltage;                  /* uV */
	uint64_t capacity;                 /* percent, only if has_capacity */
	bool has_energy, has_charge, has_capacity;
	bool charging;
};

static const char *const unit_names[_BATTERY_UNIT_MAX] = {
	[BATTERY_UNIT_ENERGY] = "energy",
	[BATTERY_UNIT_CHARGE] = "charge",
	[BATTERY_UNIT_CAPACITY] = "capacity",
};

DEFINE_STRING_TABLE_TO_STRING(battery_unit, enum battery_unit, unit_names, _BATTERY_UNIT_MAX)

static int read_attr(const char *supply, const char *attr, char *buf, size_t size)
{
	char rel[256];

	if ((size_t)snprintf(rel, sizeof(rel), SYSFS_POWER_SUPPLY_ATTR_FMT, supply, attr) >= sizeof(rel))
		return -ENAMETOOLONG;
	return sysfs_read_regular(rel, buf, size);
}

static bool read_u64(const char *supply, const char *attr, uint64_t *ret)
{
	char buf[32];
	int r;

	r = read_attr(supply, attr, buf, sizeof(buf));
	if (r < 0)
		return false;
	/* Some drivers print a negative current or a sign; none of ours may have one. */
	return sysfs_parse_u64(buf, (size_t)r, ret) >= 0;
}

static bool attr_is(const char *supply, const char *attr, const char *value)
{
	char buf[32];

	return read_attr(supply, attr, buf, sizeof(buf)) >= 0 && strcmp(buf, value) == 0;
}

/*
 * A pair is usable when both halves read and full is not 0 (a dead or absent
 * pack says 0). Packs report a little over full while charging ends, never
 * twice full: beyond that the driver is confused, and a sum with it is noise.
 */
static bool read_pair(const char *supply, const char *now, const char *full, uint64_t *ret_now, uint64_t *ret_full)
{
	uint64_t n, f;

	if (!read_u64(supply, now, &n) || !read_u64(supply, full, &f) || f == 0)
		return false;
	if (n / 2 > f) {
		log_debug("Battery %s: %s %" PRIu64 " is over twice %s %" PRIu64 ", ignoring", supply, now, n, full, f);
		return false;
	}
	*ret_now = n;
	*ret_full = f;
	return true;
}

static void read_battery(const char *supply, struct one_battery *b)
{
	b->has_energy = read_pair(supply, "energy_now", "energy_full", &b->energy_now, &b->energy_full);
	b->has_charge = read_pair(supply, "charge_now", "charge_full", &b->charge_now, &b->charge_full);
	if (!read_u64(supply, "voltage_min_design", &b->voltage) || b->voltage == 0)
		if (!read_u64(supply, "voltage_now", &b->voltage))
			b->voltage = 0;
	b->has_capacity = read_u64(supply, "capacity", &b->capacity) && b->capacity <= 100;
	b->charging = attr_is(supply, "status", "Charging");
}

/* uAh * uV / 1e6 = uWh, or false if it does not fit. */
static bool charge_to_energy(uint64_t uah, uint64_t uv, uint64_t *ret)
{
	unsigned __int128 p = (unsigned __int128)uah * uv / 1000000;

	if (p > UINT64_MAX)
		return false;
	*ret = (uint64_t)p;
	return true;
}

/*
 * Add one battery to the sums of every unit it offers. The sums of a unit
 * stay usable only while every battery so far offered it and nothing
 * overflowed; the caller then takes the best unit left.
 */
struct sums {
	uint64_t now[_BATTERY_UNIT_MAX], full[_BATTERY_UNIT_MAX];
	bool ok[_BATTERY_UNIT_MAX];
	uint64_t energy_now, energy_full;
	bool energy_ok;
};

static void add(uint64_t *sum, uint64_t v, bool *ok)
{
	if (*ok && __builtin_add_overflow(*sum, v, sum))
		*ok = false;
}

static void sums_add(struct sums *s, const struct one_battery *b)
{
	uint64_t en = 0, ef = 0, cap = 0;
	bool have_energy;

	s->ok[BATTERY_UNIT_ENERGY] &= b->has_energy;
	add(&s->now[BATTERY_UNIT_ENERGY], b->energy_now, &s->ok[BATTERY_UNIT_ENERGY]);
	add(&s->full[BATTERY_UNIT_ENERGY], b->energy_full, &s->ok[BATTERY_UNIT_ENERGY]);
	s->ok[BATTERY_UNIT_CHARGE] &= b->has_charge;
	add(&s->now[BATTERY_UNIT_CHARGE], b->charge_now, &s->ok[BATTERY_UNIT_CHARGE]);
	add(&s->full[BATTERY_UNIT_CHARGE], b->charge_full, &s->ok[BATTERY_UNIT_CHARGE]);

	/* Capacity of several packs: their mean, weighted equally (all we know). */
	if (b->has_capacity)
		cap = b->capacity;
	else if (b->has_energy)
		cap = (uint64_t)((unsigned __int128)b->energy_now * 100 / b->energy_full);
	else if (b->has_charge)
		cap = (uint64_t)((unsigned __int128)b->charge_now * 100 / b->charge_full);
	else
		s->ok[BATTERY_UNIT_CAPACITY] = false;
	if (s->ok[BATTERY_UNIT_CAPACITY]) {
		add(&s->now[BATTERY_UNIT_CAPACITY], cap, &s->ok[BATTERY_UNIT_CAPACITY]);
		add(&s->full[BATTERY_UNIT_CAPACITY], 100, &s->ok[BATTERY_UNIT_CAPACITY]);
	}

	if (b->has_energy) {
		en = b->energy_now;
		ef = b->energy_full;
		have_energy = true;
	} else {
		have_energy = b->has_charge && b->voltage > 0 && charge_to_energy(b->charge_now, b->voltage, &en) &&
			      charge_to_energy(b->charge_full, b->voltage, &ef);
	}
	s->energy_ok &= have_energy;
	add(&s->energy_now, en, &s->energy_ok);
	add(&s->energy_full, ef, &s->energy_ok);
}

int battery_read(struct battery_sample *ret)
{
	_cleanup_free_ char *path = NULL;
	struct battery_sample out = {};
	struct sums s = { .ok = { true, true, true }, .energy_ok = true };
	struct dirent *de;
	DIR *dir;
	int r;

	r = sysfs_path(SYSFS_CLASS_POWER_SUPPLY, &path);
	if (r < 0)
		return r;
	dir = opendir(path);
	if (!dir)
		return errno == ENOMEM ? -ENOMEM : -ENODEV;
	while ((de = readdir(dir))) {
		struct one_battery b = {};
		char type[32];
		uint64_t online;

		if (de->d_name[0] == '.')
			continue;
		if (read_attr(de->d_name, "type", type, sizeof(type)) < 0)
			continue;
		if (strcmp(type, "Battery") != 0) {
			/* Mains, USB, USB_C, ...: any supply but a battery that is online feeds us. */
			if (read_u64(de->d_name, "online", &online) && online > 0)
				out.on_ac = true;
			continue;
		}
		if (attr_is(de->d_name, "scope", "Device"))
			continue;
		if (read_u64(de->d_name, "present", &online) && online == 0)
			continue;
		read_battery(de->d_name, &b);
		if (!b.has_energy && !b.has_charge && !b.has_capacity) {
			log_debug("Battery %s gives neither energy, charge nor capacity, ignoring", de->d_name);
			continue;
		}
		sums_add(&s, &b);
		out.on_ac |= b.charging;
		out.n_batteries++;
	}
	closedir(dir);
	if (out.n_batteries == 0)
		return -ENODEV;
	for (enum battery_unit u = 0; u < _BATTERY_UNIT_MAX; u++)
		if (s.ok[u]) {
			out.valid = true;
			out.unit = u;
			out.now = s.now[u];
			out.full = s.full[u];
			break;
		}
	/* Two packs with nothing in common that fits: nothing to compare over time. */
	if (!out.valid)
		return -ENODEV;
	if (s.energy_ok) {
		out.energy_now = s.energy_now;
		out.energy_full = s.energy_full;
	}
	*ret = out;
	return 0;
}
