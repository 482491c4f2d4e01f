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
#include "wakelock.h"

/* Records every write, and can fail wake_lock the way a full PM_WAKELOCKS_LIMIT does. */
struct recorder {
	char log[4096];
	int fail_lock;
};

static int rec_write(void *userdata, const char *rel, const char *value)
{
	struct recorder *r = userdata;
	size_t n = strlen(r->log);

	snprintf(r->log + n, sizeof(r->log) - n, "%s<-%s;", strrchr(rel, '/') + 1, value);
	if (r->fail_lock && strcmp(rel, SYSFS_POWER_WAKE_LOCK) == 0)
		return r->fail_lock;
	return SYSFS_INJECT_PASS;
}

static struct recorder rec;
static const struct sysfs_injector injector = { .write = rec_write, .userdata = &rec };

static int setup(void **state)
{
	char *dir = fixture_new("sysfs-basic");

	memset(&rec, 0, sizeof(rec));
	assert_int_equal(sysfs_set_root(dir), 0);
	sysfs_inject_set(&injector);
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	sysfs_inject_set(NULL);
	fixture_free(*state);
	return 0;
}

static void test_supported(void **state)
{
	char *dir;

	assert_true(wakelock_supported());
	dir = fixture_new("sysfs-nowakelock");
	assert_int_equal(sysfs_set_root(dir), 0);
	assert_false(wakelock_supported());
	/* Writes fail cleanly rather than creating files. */
	assert_int_equal(wakelock_lock("autosleepd", 0), -ENOENT);
	fixture_free(dir);
	(void)state;
}

static void test_lock_formats(void **state)
{
	(void)state;
	assert_int_equal(wakelock_lock("autosleepd", 0), 0);
	assert_int_equal(wakelock_lock("autosleepd.activity", 30 * USEC_PER_SEC), 0);
	assert_int_equal(wakelock_unlock("autosleepd"), 0);
	/* The kernel takes the timeout in nanoseconds. */
	assert_string_equal(rec.log,
			    "wake_lock<-autosleepd;wake_lock<-autosleepd.activity 30000000000;wake_unlock<-autosleepd;");
}

static void test_timeout_edges(void **state)
{
	char want[256];

	(void)state;
	/* 1 us is 1000 ns; the kernel rounds that up to a millisecond. */
	assert_int_equal(wakelock_lock("a", 1), 0);
	/* The longest timeout the kernel keeps, to the nanosecond. */
	assert_int_equal(wakelock_lock("b", WAKELOCK_TIMEOUT_MAX), 0);
	snprintf(want, sizeof(want), "wake_lock<-a 1000;wake_lock<-b %llu;",
		 (unsigned long long)UINT32_MAX * 1000000ULL);
	assert_string_equal(rec.log, want);
	assert_string_equal(rec.log, "wake_lock<-a 1000;wake_lock<-b 4294967295000000;");
	/*
	 * One microsecond more, and values whose nanoseconds do not fit: 2^61 us
	 * wraps to exactly 0 ns ("name 0", a lock that never expires), and
	 * 18446744073709552 us to 384 ns.
	 */
	assert_int_equal(wakelock_lock("c", WAKELOCK_TIMEOUT_MAX + 1), -ERANGE);
	assert_int_equal(wakelock_lock("z", 1ULL << 61), -ERANGE);
	assert_int_equal(wakelock_lock("d", UINT64_MAX / NSEC_PER_USEC), -ERANGE);
	assert_int_equal(wakelock_lock("e", UINT64_MAX / NSEC_PER_USEC + 1), -ERANGE);
	assert_int_equal(wakelock_lock("f", 18446744073709552ULL), -ERANGE);
	assert_int_equal(wakelock_lock("g", USEC_INFINITY - 1), -ERANGE);
	/* Nothing was written for any of them. */
	assert_string_equal(rec.log, "wake_lock<-a 1000;wake_lock<-b 4294967295000000;");
	/* USEC_INFINITY still means no timeout at all. */
	assert_int_equal(wakelock_lock("h", USEC_INFINITY), 0);
	assert_string_equal(rec.log, "wake_lock<-a 1000;wake_lock<-b 4294967295000000;wake_lock<-h;");
}

static void test_enospc(void **state)
{
	(void)state;
	rec.fail_lock = -ENOSPC;
	assert_int_equal(wakelock_lock("autosleepd", 0), -ENOSPC);
}

static void test_remove_stale(void **state)
{
	char *log;

	/* Ours, a sub-lock of ours, a lookalike prefix and someone else's. */
	fixture_write(*state, SYSFS_POWER_WAKE_LOCK, "other autosleepd autosleepd.activity autosleepdx foo.autosleepd\n");
	stderr_capture_begin();
	assert_int_equal(wakelock_remove_stale("autosleepd", false), 2);
	log = stderr_capture_end();
	assert_string_equal(rec.log, "wake_unlock<-autosleepd;wake_unlock<-autosleepd.activity;");
	assert_non_null(strstr(log, "Removed stale kernel wake lock 'autosleepd'"));
	free(log);
}

static void test_remove_stale_none(void **state)
{
	fixture_write(*state, SYSFS_POWER_WAKE_LOCK, "\n");
	assert_int_equal(wakelock_remove_stale("autosleepd", false), 0);
	assert_string_equal(rec.log, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_supported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_edges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_stale_none, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
