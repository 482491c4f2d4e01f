/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"
#include "sysfs.h"
#include "sysfs-inject.h"

static int setup(void **state)
{
	char *dir = fixture_new("sysfs-basic");

	assert_int_equal(sysfs_set_root(dir), 0);
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	sysfs_inject_set(NULL);
	sysfs_set_root(NULL);
	fixture_free(*state);
	return 0;
}

static void test_paths_use_root(void **state)
{
	char *p, *expect;

	assert_true(asprintf(&expect, "%s/sys/power/state", (char *)*state) > 0);
	assert_int_equal(sysfs_path(SYSFS_POWER_STATE, &p), 0);
	assert_string_equal(p, expect);
	free(p);
	/* A leading slash in rel or a trailing one in root changes nothing. */
	assert_int_equal(sysfs_path("/sys/power/state", &p), 0);
	assert_string_equal(p, expect);
	free(p);
	free(expect);

	assert_int_equal(sysfs_set_root("/"), 0);
	assert_int_equal(sysfs_path(SYSFS_POWER_STATE, &p), 0);
	assert_string_equal(p, "/sys/power/state");
	assert_string_equal(sysfs_get_root(), "/");
	free(p);
}

static void test_read_strips_newline(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(sysfs_read(SYSFS_POWER_STATE, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "freeze mem disk");
	assert_true(sysfs_exists(SYSFS_POWER_WAKE_LOCK));
	assert_false(sysfs_exists("sys/power/nonexistent"));
	assert_int_equal(sysfs_read("sys/power/nonexistent", buf, sizeof(buf)), -ENOENT);
}

static void test_read_numbers(void **state)
{
	uint64_t u;
	int i;

	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), 0);
	assert_int_equal(u, 5);
	assert_int_equal(sysfs_read_int(SYSFS_POWER_WAKEUP_IRQ, &i), 0);
	assert_int_equal(i, 8);
	/* Surprises in sysfs are errors, never garbage numbers. */
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, "12abc\n");
	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), -EBADMSG);
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, "");
	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), -EBADMSG);
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, "-3\n");
	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), -EBADMSG);
	/* Found by tests/fuzz/fuzz-sysfs: strtoull() took these. */
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, " -3\n");
	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), -EBADMSG);
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, "+5\n");
	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), -EBADMSG);
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, " 5\n");
	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), -EBADMSG);
	assert_int_equal(sysfs_read_int(SYSFS_POWER_WAKEUP_COUNT, &i), -EBADMSG);
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, "-\n");
	assert_int_equal(sysfs_read_int(SYSFS_POWER_WAKEUP_COUNT, &i), -EBADMSG);
	fixture_write(*state, SYSFS_POWER_WAKEUP_COUNT, "-2147483648\n");
	assert_int_equal(sysfs_read_int(SYSFS_POWER_WAKEUP_COUNT, &i), 0);
	assert_int_equal(i, INT_MIN);
}

static void test_write(void **state)
{
	char *s;

	assert_int_equal(sysfs_write(SYSFS_POWER_WAKE_LOCK, "x 1000"), 0);
	s = fixture_read(*state, SYSFS_POWER_WAKE_LOCK);
	assert_string_equal(s, "x 1000");
	free(s);
	assert_int_equal(sysfs_write("sys/power/missing/file", "1"), -ENOENT);
}

static int inj_read(void *userdata, const char *rel, char *buf, size_t size)
{
	(void)userdata;
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) != 0)
		return SYSFS_INJECT_PASS;
	snprintf(buf, size, "99");
	return 2;
}

static int inj_write(void *userdata, const char *rel, const char *value)
{
	int *calls = userdata;

	(*calls)++;
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) == 0 && strcmp(value, "1") == 0)
		return -EINVAL;
	return SYSFS_INJECT_PASS;
}

static void test_injector(void **state)
{
	int calls = 0;
	struct sysfs_injector inj = { .read = inj_read, .write = inj_write, .userdata = &calls };
	uint64_t u;
	char buf[64];

	sysfs_inject_set(&inj);
	assert_int_equal(sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &u), 0);
	assert_int_equal(u, 99);
	assert_int_equal(sysfs_read(SYSFS_POWER_STATE, buf, sizeof(buf)), 15);
	assert_int_equal(sysfs_write(SYSFS_POWER_WAKEUP_COUNT, "1"), -EINVAL);
	assert_int_equal(sysfs_write(SYSFS_POWER_WAKEUP_COUNT, "2"), 0);
	assert_int_equal(calls, 2);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_paths_use_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_strips_newline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_injector, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
