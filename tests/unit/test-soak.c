/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "fixture.h"
#include "soak.h"
#include "sysfs-inject.h"
#include "sysfs.h"

/*
 * One soak cycle on the fake sysfs: the injector plays the kernel's side of
 * the state write (what suspend_stats, the wakeup sources and the RTC alarm
 * look like afterwards) for each way a cycle ends.
 */
#define TEST_SIGNAL (SIGRTMIN + 3)

enum kernel_play {
	PLAY_SUCCESS,        /* success++, the alarm fired and was cleared */
	PLAY_SUCCESS_EARLY,  /* success++, the alarm still armed: woken by something else */
	PLAY_LATE_CANCEL,    /* EBUSY, fail++, a wakeup source moved */
	PLAY_DEVICE_FAILURE, /* EIO, fail++, failed_suspend++, a device named */
	PLAY_ALARM,          /* alarmtimer's refusal: EBUSY, failed_suspend++ at alarmtimer.0.auto, its source moved */
};

struct play {
	char *dir;
	enum kernel_play how;
	bool reject_count;   /* wakeup_count write: EINVAL */
	bool block_read;     /* wakeup_count read waits until a signal */
	bool battery;
	unsigned state_writes;
	char pm_test_writes[64];
};

static struct play play;

static void bump(const char *rel)
{
	char *v = fixture_read(play.dir, rel), buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", strtoull(v, NULL, 10) + 1);
	fixture_write(play.dir, rel, buf);
	free(v);
}

static int hook_read(void *userdata, const char *rel, char *buf, size_t size)
{
	(void)userdata;
	(void)buf;
	(void)size;
	if (play.block_read && strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) == 0) {
		/* As the kernel's wait does: interruptible, EINTR on a signal. */
		if (poll(NULL, 0, 10000) < 0)
			return -errno;
		return -ETIMEDOUT;
	}
	return SYSFS_INJECT_PASS;
}

static int hook_write(void *userdata, const char *rel, const char *value)
{
	(void)userdata;
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) == 0 && play.reject_count)
		return -EINVAL;
	if (strcmp(rel, SYSFS_POWER_PM_TEST) == 0) {
		size_t l = strlen(play.pm_test_writes);

		snprintf(play.pm_test_writes + l, sizeof(play.pm_test_writes) - l, "%s%s", l ? "," : "", value);
		return 0;
	}
	if (strcmp(rel, SYSFS_POWER_STATE) != 0)
		return SYSFS_INJECT_PASS;
	play.state_writes++;
	switch (play.how) {
	case PLAY_SUCCESS:
		bump("sys/power/suspend_stats/success");
		/* The battery drained a little while "asleep". */
		if (play.battery)
			fixture_write(play.dir, "sys/class/power_supply/BAT0/energy_now", "49990000\n");
		fixture_write(play.dir, SYSFS_RTC_WAKEALARM, "\n");
		fixture_write(play.dir, SYSFS_RTC_SINCE_EPOCH, "1004\n");
		return 0;
	case PLAY_SUCCESS_EARLY:
		bump("sys/power/suspend_stats/success");
		fixture_write(play.dir, SYSFS_RTC_SINCE_EPOCH, "1002\n");
		return 0;
	case PLAY_LATE_CANCEL:
		bump("sys/power/suspend_stats/fail");
		fixture_write(play.dir, "sys/power/suspend_stats/last_failed_errno", "-16\n");
		bump("sys/class/wakeup/wakeup3/event_count");
		bump("sys/class/wakeup/wakeup3/active_count");
		return -EBUSY;
	case PLAY_ALARM:
		bump("sys/power/suspend_stats/fail");
		bump("sys/power/suspend_stats/failed_suspend");
		fixture_write(play.dir, "sys/power/suspend_stats/last_failed_dev", "alarmtimer.0.auto\n");
		fixture_write(play.dir, "sys/power/suspend_stats/last_failed_step", "suspend\n");
		fixture_write(play.dir, "sys/power/suspend_stats/last_failed_errno", "-16\n");
		bump("sys/class/wakeup/wakeup2/event_count");
		bump("sys/class/wakeup/wakeup2/active_count");
		return -EBUSY;
	case PLAY_DEVICE_FAILURE:
		bump("sys/power/suspend_stats/fail");
		bump("sys/power/suspend_stats/failed_suspend");
		fixture_write(play.dir, "sys/power/suspend_stats/last_failed_dev", "serial8250\n");
		fixture_write(play.dir, "sys/power/suspend_stats/last_failed_step", "suspend\n");
		fixture_write(play.dir, "sys/power/suspend_stats/last_failed_errno", "-5\n");
		return -EIO;
	}
	return -ENOTSUP;
}

static const struct sysfs_injector injector = { hook_read, hook_write, NULL };

static void noop(int sig)
{
	(void)sig;
}

static int setup(void **state)
{
	char *p, cmd[512];

	(void)state;
	play = (struct play){ .dir = fixture_new("sysfs-basic") };
	assert_int_equal(sysfs_set_root(play.dir), 0);
	assert_int_equal(sysfs_path("sys/class/rtc/rtc0", &p), 0);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
	free(p);
	/* No IRQ recorded (reads ENODATA in the VM), so the alarm is what names the wake. */
	fixture_write(play.dir, SYSFS_POWER_WAKEUP_IRQ, "");
	for (int i = 0; i < 4; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "sys/class/wakeup/wakeup%d/total_time_ms", i);
		fixture_write(play.dir, rel, "0\n");
	}
	/* Armed for 1004 at 1000, as autosleepctl soak leaves it. */
	fixture_write(play.dir, SYSFS_RTC_WAKEALARM, "1004\n");
	fixture_write(play.dir, SYSFS_RTC_SINCE_EPOCH, "1000\n");
	sysfs_inject_set(&injector);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sysfs_inject_set(NULL);
	fixture_free(play.dir);
	return 0;
}

static void run(const struct soak_request *req, bool leases_held, struct soak_record *rec)
{
	char own0[] = "autosleepd";
	char *const own[] = { own0, NULL };
	struct soak_env env = { .leases_held = leases_held, .own_sources = own, .signo = TEST_SIGNAL, .now = now };

	soak_cycle_run(req, &env, rec);
}

static struct soak_request request(void)
{
	struct soak_request r = { .state = "mem", .sleep = 4 * USEC_PER_SEC, .read_timeout = 5 * USEC_PER_SEC };

	r.wake_at = now(CLOCK_BOOTTIME) + 4 * USEC_PER_SEC;
	return r;
}

static void test_success(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;
	char *count;

	(void)state;
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_SUCCESS);
	assert_int_equal(play.state_writes, 1);
	assert_int_equal(rec.d_success, 1);
	assert_int_equal(rec.d_fail, 0);
	assert_true(rec.alarm_armed);
	assert_true(rec.alarm_cleared);
	assert_string_equal(rec.wake_reason, "rtc0 alarm");
	assert_int_equal(rec.last_hw_sleep, -1);
	/* The count read is the one written back. */
	count = fixture_read(play.dir, SYSFS_POWER_WAKEUP_COUNT);
	assert_int_equal(rec.count, strtoull(count, NULL, 10));
	free(count);
	assert_string_equal(play.pm_test_writes, "");
}

static void test_battery(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;
	char *p, cmd[600];

	(void)state;
	/* Without one: nothing read, nothing made up. */
	run(&req, false, &rec);
	assert_false(rec.battery_entry.valid);
	assert_false(rec.battery_exit.valid);

	assert_int_equal(sysfs_path("sys/class/power_supply/BAT0", &p), 0);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
	free(p);
	fixture_write(play.dir, "sys/class/power_supply/BAT0/type", "Battery\n");
	fixture_write(play.dir, "sys/class/power_supply/BAT0/status", "Discharging\n");
	fixture_write(play.dir, "sys/class/power_supply/BAT0/energy_now", "50000000\n");
	fixture_write(play.dir, "sys/class/power_supply/BAT0/energy_full", "60000000\n");
	play.battery = true;
	fixture_write(play.dir, SYSFS_RTC_WAKEALARM, "1004\n");
	req = request();
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_SUCCESS);
	assert_true(rec.battery_entry.valid);
	assert_true(rec.battery_exit.valid);
	assert_int_equal(rec.battery_entry.unit, BATTERY_UNIT_ENERGY);
	assert_int_equal(rec.battery_entry.now, 50000000);
	assert_int_equal(rec.battery_exit.now, 49990000);
	assert_false(rec.battery_entry.on_ac);
}

static void test_alarm_not_cleared(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	play.how = PLAY_SUCCESS_EARLY;
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_ALARM_NOT_CLEARED);
	assert_int_equal(rec.d_success, 1);
	assert_false(rec.alarm_cleared);
	assert_string_equal(rec.wake_reason, "unknown");
}

static void test_blocked_by_lease(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	run(&req, true, &rec);
	assert_int_equal(rec.result, SOAK_BLOCKED);
	assert_string_equal(rec.detail, "wake locks held");
	assert_int_equal(play.state_writes, 0);
	/* --force goes ahead. */
	req.force = true;
	run(&req, true, &rec);
	assert_int_equal(rec.result, SOAK_SUCCESS);
	assert_int_equal(play.state_writes, 1);
}

static void test_blocked_read(void **state)
{
	struct sigaction sa = { .sa_handler = noop };
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(TEST_SIGNAL, &sa, NULL), 0);
	play.block_read = true;
	req.read_timeout = 50 * USEC_PER_MSEC;
	/* A source became active before the read: it is who kept us awake. */
	bump("sys/class/wakeup/wakeup2/active_count");
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_BLOCKED);
	assert_int_equal(rec.error, -EINTR);
	assert_int_equal(play.state_writes, 0);
}

static void test_early_cancel(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	play.reject_count = true;
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_EARLY_CANCEL);
	assert_int_equal(rec.error, -EINVAL);
	/* Given up, not retried. */
	assert_int_equal(play.state_writes, 0);
}

static void test_alarm_passed(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	req.wake_at = now(CLOCK_BOOTTIME) + SOAK_ALARM_MARGIN_USEC / 2;
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_BLOCKED);
	assert_string_equal(rec.detail, "wake alarm due before the state write");
	assert_int_equal(play.state_writes, 0);
}

static void test_late_cancel(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	play.how = PLAY_LATE_CANCEL;
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_LATE_CANCEL);
	assert_int_equal(rec.error, -EBUSY);
	assert_int_equal(rec.d_fail, 1);
	assert_non_null(strstr(rec.detail, "wakeup source"));
	assert_int_equal(rec.n_blockers, 1);
}

static void test_alarm_imminent(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	play.how = PLAY_ALARM;
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_ALARM_IMMINENT);
	assert_string_equal(soak_result_to_string(rec.result), "alarm-imminent");
	assert_string_equal(rec.failed_dev, "alarmtimer.0.auto");
}

static void test_device_failure(void **state)
{
	struct soak_request req = request();
	struct soak_record rec;

	(void)state;
	play.how = PLAY_DEVICE_FAILURE;
	snprintf(req.pm_test, sizeof(req.pm_test), "devices");
	run(&req, false, &rec);
	assert_int_equal(rec.result, SOAK_FAILURE);
	assert_int_equal(rec.error, -EIO);
	assert_string_equal(rec.failed_dev, "serial8250");
	assert_string_equal(rec.failed_step, "suspend");
	assert_int_equal(rec.failed_errno, -5);
	/* pm_test set for the write and put back after it. */
	assert_string_equal(play.pm_test_writes, "devices,none");
}

static void test_names(void **state)
{
	(void)state;
	for (int i = 0; i < _SOAK_RESULT_MAX; i++)
		assert_int_equal(soak_result_from_string(soak_result_to_string(i)), i);
	assert_int_equal(soak_result_from_string("nope"), _SOAK_RESULT_INVALID);
	assert_null(soak_result_to_string(_SOAK_RESULT_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_success, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alarm_not_cleared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_battery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_by_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_early_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alarm_passed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alarm_imminent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_failure, setup, teardown),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
