/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What autosleepd leaves once it is gone: its kernel wake locks removed and
 * the wakeup_count check disarmed. The fake kernel below does what
 * pm_save_wakeup_count() does with a write: the check is armed only by the
 * current count with no event in progress, and any other value disarms it
 * and fails with EINVAL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"
#include "hand-back.h"
#include "sysfs.h"
#include "sysfs-inject.h"

static struct {
	unsigned count; /* registered events: 16 bits in the kernel */
	bool in_progress;
	bool armed;     /* events_check_enabled */
	int fail;       /* a write error of the file itself */
	char unlocked[512];
	char written[64];
} fk;

static int fk_write(void *userdata, const char *rel, const char *value)
{
	(void)userdata;
	if (strcmp(rel, SYSFS_POWER_WAKE_UNLOCK) == 0) {
		size_t n = strlen(fk.unlocked);

		snprintf(fk.unlocked + n, sizeof(fk.unlocked) - n, "%s;", value);
		return SYSFS_INJECT_PASS;
	}
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) != 0)
		return SYSFS_INJECT_PASS;
	snprintf(fk.written, sizeof(fk.written), "%s", value);
	if (fk.fail)
		return fk.fail;
	fk.armed = strtoul(value, NULL, 10) == fk.count && !fk.in_progress;
	return fk.armed ? 0 : -EINVAL;
}

static const struct sysfs_injector injector = { .write = fk_write };

static int setup(void **state)
{
	char *dir = fixture_new("sysfs-basic");

	memset(&fk, 0, sizeof(fk));
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

static void test_disarm(void **state)
{
	(void)state;
	/* Our last count write armed it; a wakeup event since would fail logind's suspend. */
	fk.count = 65535;
	assert_int_equal(sysfs_write(SYSFS_POWER_WAKEUP_COUNT, "65535"), 0);
	assert_true(fk.armed);
	fk.count = 0;
	assert_int_equal(hand_back_disarm(), 0);
	assert_false(fk.armed);
	assert_string_equal(fk.written, "4294967295");
	/* Even at the highest count and the lowest: the value is no count at all. */
	for (unsigned c = 0; c <= 65535; c += 65535) {
		fk.count = c;
		fk.armed = true;
		assert_int_equal(hand_back_disarm(), 0);
		assert_false(fk.armed);
	}
}

static void test_disarm_refused(void **state)
{
	char *log;

	(void)state;
	fk.fail = -EACCES;
	stderr_capture_begin();
	assert_int_equal(hand_back_disarm(), -EACCES);
	log = stderr_capture_end();
	assert_non_null(strstr(log, "Failed to disarm the wakeup_count check"));
	free(log);
	/* A kernel without the file has nothing to disarm. */
	fk.fail = -ENOENT;
	assert_int_equal(hand_back_disarm(), 0);
}

/* A FIFO where the attribute should be: a write would wait for a reader forever, so none is made. */
static void test_disarm_fifo(void **state)
{
	char path[512], *log;

	snprintf(path, sizeof(path), "%s/%s", (char *)*state, SYSFS_POWER_WAKEUP_COUNT);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	stderr_capture_begin();
	assert_int_equal(hand_back_disarm(), -EBADFD);
	log = stderr_capture_end();
	assert_non_null(strstr(log, "Failed to disarm the wakeup_count check"));
	free(log);
	assert_string_equal(fk.written, "");
}

static void test_hand_back_removes_ours(void **state)
{
	char *dir = *state;

	fixture_write(dir, "sys/power/wake_lock", "other autosleepd autosleepdx autosleepd.activity backup.autosleepd\n");
	fk.armed = true;
	fk.count = 7;
	assert_int_equal(hand_back("autosleepd"), 2);
	/* Ours only: the name and its ".something" locks, never a lock that merely starts like it. */
	assert_string_equal(fk.unlocked, "autosleepd;autosleepd.activity;");
	assert_false(fk.armed);
}

static void test_hand_back_without_wake_locks(void **state)
{
	char *dir = fixture_new("sysfs-nowakelock");

	(void)state;
	assert_int_equal(sysfs_set_root(dir), 0);
	fk.armed = true;
	fk.count = 3;
	/* The stock kernel's epoll lock went with the fd store; only the check is left. */
	assert_int_equal(hand_back("autosleepd"), 0);
	assert_string_equal(fk.unlocked, "");
	assert_false(fk.armed);
	fixture_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_disarm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disarm_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disarm_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hand_back_removes_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hand_back_without_wake_locks, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
