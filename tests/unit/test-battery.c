/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "battery.h"
#include "fixture.h"
#include "sysfs.h"

/*
 * power_supply trees laid out as laptops have them (values modelled on a
 * ThinkPad's BAT0, an energy-reporting pack; a charge-reporting pack with
 * a USB-C source; a pack that gives capacity alone; and two packs that have
 * only capacity in common), each with an AC adapter that is offline.
 */
static char *root;

static void use(const char *fixture)
{
	root = fixture_new(fixture);
	assert_int_equal(sysfs_set_root(root), 0);
}

static int teardown(void **state)
{
	(void)state;
	fixture_free(root);
	root = NULL;
	return 0;
}

static void set(const char *supply, const char *attr, const char *value)
{
	char rel[256];

	snprintf(rel, sizeof(rel), SYSFS_POWER_SUPPLY_ATTR_FMT, supply, attr);
	fixture_write(root, rel, value);
}

static char *attr_path(const char *supply, const char *attr)
{
	char rel[256], *p;

	snprintf(rel, sizeof(rel), SYSFS_POWER_SUPPLY_ATTR_FMT, supply, attr);
	assert_int_equal(sysfs_path(rel, &p), 0);
	return p;
}

static void test_energy(void **state)
{
	struct battery_sample s;

	(void)state;
	use("sysfs-battery-energy");
	assert_int_equal(battery_read(&s), 0);
	assert_true(s.valid);
	assert_false(s.on_ac);
	assert_int_equal(s.unit, BATTERY_UNIT_ENERGY);
	/* The mouse's battery (scope Device) is not the system's. */
	assert_int_equal(s.n_batteries, 1);
	assert_int_equal(s.now, 42000000);
	assert_int_equal(s.full, 50000000);
	assert_int_equal(s.energy_now, 42000000);
	assert_int_equal(s.energy_full, 50000000);
}

static void test_charge(void **state)
{
	struct battery_sample s;
	char *p;

	(void)state;
	use("sysfs-battery-charge");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CHARGE);
	assert_int_equal(s.now, 3000000);
	assert_int_equal(s.full, 4000000);
	/* uAh times voltage_min_design (11.4 V), not voltage_now: the pack's nominal energy. */
	assert_int_equal(s.energy_now, 34200000);
	assert_int_equal(s.energy_full, 45600000);
	assert_false(s.on_ac);

	/* Without any voltage there is no energy, but the charge still counts. */
	p = attr_path("BAT1", "voltage_min_design");
	assert_int_equal(unlink(p), 0);
	free(p);
	set("BAT1", "voltage_now", "0\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CHARGE);
	assert_int_equal(s.energy_now, 0);
	assert_int_equal(s.energy_full, 0);
}

static void test_capacity(void **state)
{
	struct battery_sample s;

	(void)state;
	use("sysfs-battery-capacity");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CAPACITY);
	assert_int_equal(s.now, 64);
	assert_int_equal(s.full, 100);
	assert_int_equal(s.energy_full, 0);

	/* A capacity over 100 is no percentage. */
	set("BAT0", "capacity", "101\n");
	assert_int_equal(battery_read(&s), -ENODEV);
}

static void test_two_packs(void **state)
{
	struct battery_sample s;

	(void)state;
	/* BAT0 gives energy, BAT1 charge without voltage: only capacity is common. */
	use("sysfs-battery-two");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.n_batteries, 2);
	assert_int_equal(s.unit, BATTERY_UNIT_CAPACITY);
	assert_int_equal(s.now, 87 + 50);
	assert_int_equal(s.full, 200);
	assert_int_equal(s.energy_full, 0);

	/* Give BAT1 energy too, and the sum is in energy. */
	set("BAT1", "energy_now", "5000000\n");
	set("BAT1", "energy_full", "10000000\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_ENERGY);
	assert_int_equal(s.now, 25000000);
	assert_int_equal(s.full, 33000000);

	/* A pack not present is skipped. */
	set("BAT1", "present", "0\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.n_batteries, 1);
	assert_int_equal(s.now, 20000000);
}

static void test_ac(void **state)
{
	struct battery_sample s;

	(void)state;
	use("sysfs-battery-charge");
	set("ucsi-source-psy-USBC000:001", "online", "1\n");
	assert_int_equal(battery_read(&s), 0);
	assert_true(s.on_ac);
	set("ucsi-source-psy-USBC000:001", "online", "0\n");
	assert_int_equal(battery_read(&s), 0);
	assert_false(s.on_ac);
	/* Some firmware shows no adapter at all, only a charging pack. */
	set("BAT1", "status", "Charging\n");
	assert_int_equal(battery_read(&s), 0);
	assert_true(s.on_ac);
}

static void test_no_battery(void **state)
{
	struct battery_sample s = { .now = 4242 };

	(void)state;
	/* A desktop: no power_supply at all, or only an adapter. */
	use("sysfs-basic");
	assert_int_equal(battery_read(&s), -ENODEV);
	assert_int_equal(s.now, 4242);
	teardown(NULL);
	use("sysfs-battery-capacity");
	set("BAT0", "type", "UPS\n");
	assert_int_equal(battery_read(&s), -ENODEV);
	assert_int_equal(s.now, 4242);
}

static void test_bad_values(void **state)
{
	struct battery_sample s;
	char *p;

	(void)state;
	use("sysfs-battery-two");
	set("BAT1", "energy_full", "10000000\n");
	/* 2^64 - 1 in one pack: far over full (and a sum would wrap), so energy is out. */
	set("BAT1", "energy_now", "18446744073709551615\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CAPACITY);
	/* BAT1 with nothing readable left is skipped; BAT0 alone gives energy. */
	set("BAT1", "capacity", "garbage\n");
	set("BAT1", "charge_now", "\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.n_batteries, 1);
	assert_int_equal(s.unit, BATTERY_UNIT_ENERGY);
	assert_int_equal(s.now, 20000000);

	/* Signs, spaces, hex: not sysfs numbers, so BAT0 falls back to its capacity. */
	set("BAT0", "energy_now", "-5\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CAPACITY);
	assert_int_equal(s.now, 87);
	set("BAT0", "energy_now", " 5\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CAPACITY);
	set("BAT0", "energy_now", "0x10\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CAPACITY);

	/* A FIFO where an attribute should be: no hang (nobody ever writes it). */
	p = attr_path("BAT0", "energy_now");
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkfifo(p, 0600), 0);
	free(p);
	p = attr_path("BAT0", "capacity");
	assert_int_equal(unlink(p), 0);
	/* /dev/zero where one should be: no endless read, no number of NULs. */
	assert_int_equal(symlink("/dev/zero", p), 0);
	free(p);
	assert_int_equal(battery_read(&s), -ENODEV);
}

static void test_huge_voltage(void **state)
{
	struct battery_sample s;

	(void)state;
	use("sysfs-battery-charge");
	/* uAh * uV that does not fit: no energy, the charge is still good. */
	set("BAT1", "voltage_min_design", "18446744073709551615\n");
	assert_int_equal(battery_read(&s), 0);
	assert_int_equal(s.unit, BATTERY_UNIT_CHARGE);
	assert_int_equal(s.now, 3000000);
	assert_int_equal(s.energy_full, 0);
}

static void test_unit_names(void **state)
{
	(void)state;
	assert_string_equal(battery_unit_to_string(BATTERY_UNIT_ENERGY), "energy");
	assert_string_equal(battery_unit_to_string(BATTERY_UNIT_CAPACITY), "capacity");
	assert_null(battery_unit_to_string(_BATTERY_UNIT_MAX));
	assert_null(battery_unit_to_string(_BATTERY_UNIT_INVALID));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_energy, teardown),
		cmocka_unit_test_teardown(test_charge, teardown),
		cmocka_unit_test_teardown(test_capacity, teardown),
		cmocka_unit_test_teardown(test_two_packs, teardown),
		cmocka_unit_test_teardown(test_ac, teardown),
		cmocka_unit_test_teardown(test_no_battery, teardown),
		cmocka_unit_test_teardown(test_bad_values, teardown),
		cmocka_unit_test_teardown(test_huge_voltage, teardown),
		cmocka_unit_test(test_unit_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
