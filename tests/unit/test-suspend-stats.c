/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"
#include "suspend-stats.h"
#include "sysfs.h"

/*
 * classify() over hand-made snapshots: what Linux 6.1 leaves in
 * suspend_stats, pm_wakeup_irq and /sys/class/wakeup for each way an
 * attempt ends (kernel/power/suspend.c, drivers/base/power/main.c, wakeup.c).
 */
static struct wakeup_source_stat src_before[] = {
	{ "wakeup0", "autosleepd", 3, 0, 0, 0, "" },
	{ "wakeup1", "rtc0", 12, 2, 0, 0, "" },
	{ "wakeup2", "alarmtimer", 4, 0, 0, 0, "" },
};
static struct wakeup_source_stat src_after[3];

static struct suspend_snapshot before, after;

static int setup(void **state)
{
	(void)state;
	memset(&before, 0, sizeof(before));
	for (int i = 0; i < _SUSPEND_STAT_MAX; i++)
		before.stats[i] = 10;
	snprintf(before.last_failed_dev, sizeof(before.last_failed_dev), "serial8250");
	snprintf(before.last_failed_step, sizeof(before.last_failed_step), "suspend");
	before.last_failed_errno = -16;
	/* The last resume's IRQ, left until the next freeze. */
	before.wakeup_irq = 8;
	snprintf(before.wakeup_irq_actions, sizeof(before.wakeup_irq_actions), "rtc0");
	before.sources = (struct wakeup_sources){ .items = src_before, .n = 3 };
	before.have_sources = true;
	memcpy(src_after, src_before, sizeof(src_after));
	after = before;
	after.sources.items = src_after;
	/* The freezer ran (pm_wakeup_clear(0)) unless a test says otherwise. */
	after.wakeup_irq = 0;
	after.wakeup_irq_actions[0] = 0;
	return 0;
}

static void fail_moves(int error)
{
	after.stats[SUSPEND_STAT_FAIL]++;
	after.last_failed_errno = error;
}

static void classify(int error, char *const *exclude, struct suspend_report *rep)
{
	memset(rep, 0x55, sizeof(*rep));
	rep->wake_reason[0] = rep->cancel_source[0] = rep->failed_dev[0] = rep->failed_step[0] = 'x';
	suspend_classify(&before, &after, error, exclude, rep);
}

static void test_success_irq(void **state)
{
	struct suspend_report rep;

	(void)state;
	after.stats[SUSPEND_STAT_SUCCESS]++;
	after.wakeup_irq = 8;
	snprintf(after.wakeup_irq_actions, sizeof(after.wakeup_irq_actions), "rtc0");
	classify(0, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_string_equal(rep.wake_reason, "irq 8 (rtc0)");
	assert_string_equal(rep.cancel_source, "");
	assert_string_equal(rep.failed_dev, "");
	assert_int_equal(rep.failed_errno, 0);
}

static void test_success_sources(void **state)
{
	char *own[] = { (char *)"autosleepd", NULL };
	struct suspend_report rep;

	(void)state;
	after.stats[SUSPEND_STAT_SUCCESS]++;
	src_after[0].event_count++; /* our lease at resume */
	src_after[0].wakeup_count++;
	src_after[1].event_count++;
	src_after[1].wakeup_count++;
	classify(0, own, &rep);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_string_equal(rep.wake_reason, "rtc0");
	classify(0, NULL, &rep);
	assert_string_equal(rep.wake_reason, "autosleepd, rtc0");
}

static void test_success_unknown(void **state)
{
	struct suspend_report rep;

	(void)state;
	after.stats[SUSPEND_STAT_SUCCESS]++;
	classify(0, NULL, &rep);
	assert_string_equal(rep.wake_reason, "unknown");
	/* Without /sys/class/wakeup at all. */
	before.have_sources = after.have_sources = false;
	src_after[1].event_count++;
	classify(0, NULL, &rep);
	assert_string_equal(rep.wake_reason, "unknown");
}

/* A wakeup source during device suspend: dpm_suspend() fails with EBUSY at an innocent device. */
static void test_late_cancel_by_source(void **state)
{
	struct suspend_report rep;

	(void)state;
	fail_moves(-EBUSY);
	after.stats[SUSPEND_STAT_FAILED_SUSPEND]++;
	snprintf(after.last_failed_dev, sizeof(after.last_failed_dev), "0000:00:1f.3");
	src_after[0].event_count++;
	src_after[0].wakeup_count++;
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	assert_string_equal(rep.cancel_source, "wakeup source autosleepd");
	assert_string_equal(rep.failed_dev, "");
	assert_string_equal(rep.failed_step, "");
	assert_string_equal(rep.wake_reason, "");
}

/* A wake IRQ after suspend_device_irqs(): caught by suspend_enter()'s last check; fail alone moves. */
static void test_late_cancel_by_noirq_irq(void **state)
{
	struct suspend_report rep;

	(void)state;
	fail_moves(-EBUSY);
	after.wakeup_irq = 9;
	snprintf(after.wakeup_irq_actions, sizeof(after.wakeup_irq_actions), "acpi");
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	assert_string_equal(rep.cancel_source, "irq 9 (acpi)");
	assert_string_equal(rep.failed_dev, "");
	/* The same IRQ as the last resume's is still this attempt's: the freezer cleared it. */
	after.wakeup_irq = 8;
	snprintf(after.wakeup_irq_actions, sizeof(after.wakeup_irq_actions), "rtc0");
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	assert_string_equal(rep.cancel_source, "irq 8 (rtc0)");
	/* IRQ and source together are both named. */
	src_after[1].event_count++;
	src_after[1].wakeup_count++;
	src_after[2].event_count++;
	src_after[2].wakeup_count++;
	classify(-EBUSY, NULL, &rep);
	assert_string_equal(rep.cancel_source, "irq 8 (rtc0), wakeup sources rtc0, alarmtimer");
}

/*
 * kernel/time/alarmtimer.c refuses while an alarm is due within 2 s: its
 * device fails with EBUSY and it reports a wakeup event on its own source.
 * That is alarm-imminent, not a late cancel nor a device failure.
 */
static void test_alarm_imminent(void **state)
{
	struct suspend_report rep;

	(void)state;
	fail_moves(-EBUSY);
	after.stats[SUSPEND_STAT_FAILED_SUSPEND]++;
	snprintf(after.last_failed_dev, sizeof(after.last_failed_dev), "alarmtimer.0.auto");
	snprintf(after.last_failed_step, sizeof(after.last_failed_step), "suspend");
	src_after[2].event_count++;
	src_after[2].wakeup_count++;
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_ALARM_IMMINENT);
	assert_string_equal(rep.failed_dev, "alarmtimer.0.auto");
	assert_string_equal(rep.failed_step, "suspend");
	assert_string_equal(rep.cancel_source, "");
	/* Without a step counter that moved, the alarmtimer source alone says it. */
	after.stats[SUSPEND_STAT_FAILED_SUSPEND]--;
	after.last_failed_dev[0] = 0;
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_ALARM_IMMINENT);
	assert_string_equal(rep.failed_dev, "alarmtimer");
	/* With another source moving too, something else woke: a late cancel. */
	src_after[1].event_count++;
	src_after[1].wakeup_count++;
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	/* Another device failing with EBUSY stays a device failure. */
	src_after[1] = src_before[1];
	src_after[2] = src_before[2];
	after.stats[SUSPEND_STAT_FAILED_SUSPEND]++;
	snprintf(after.last_failed_dev, sizeof(after.last_failed_dev), "serial8250");
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_string_equal(rep.failed_dev, "serial8250");
}

/* A PM notifier refused before the freezer: pm_wakeup_irq is the last resume's. */
static void test_stale_irq(void **state)
{
	struct suspend_report rep;

	(void)state;
	fail_moves(-ENOMEM);
	after.wakeup_irq = 8;
	snprintf(after.wakeup_irq_actions, sizeof(after.wakeup_irq_actions), "rtc0");
	classify(-ENOMEM, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_string_equal(rep.cancel_source, "");
	assert_int_equal(rep.failed_errno, -ENOMEM);
}

static void test_device_failure(void **state)
{
	struct suspend_report rep;

	(void)state;
	fail_moves(-EIO);
	after.stats[SUSPEND_STAT_FAILED_SUSPEND_LATE]++;
	snprintf(after.last_failed_dev, sizeof(after.last_failed_dev), "i2c_designware.0");
	snprintf(after.last_failed_step, sizeof(after.last_failed_step), "suspend_late");
	classify(-EIO, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_string_equal(rep.failed_dev, "i2c_designware.0");
	assert_string_equal(rep.failed_step, "suspend_late");
	assert_int_equal(rep.failed_errno, -EIO);
	assert_string_equal(rep.cancel_source, "");
	/* Step name from the counter when last_failed_step is unreadable. */
	after.last_failed_step[0] = 0;
	classify(-EIO, NULL, &rep);
	assert_string_equal(rep.failed_step, "suspend_late");
}

/* Tasks that refuse to freeze: suspend_prepare() records the step, no device. */
static void test_freeze_failure(void **state)
{
	struct suspend_report rep;

	(void)state;
	fail_moves(-EBUSY);
	after.stats[SUSPEND_STAT_FAILED_FREEZE]++;
	snprintf(after.last_failed_step, sizeof(after.last_failed_step), "freeze");
	classify(-EBUSY, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_string_equal(rep.failed_step, "freeze");
	/* last_failed_dev is left from an older failure. */
	assert_string_equal(rep.failed_dev, "");
	assert_int_equal(rep.failed_errno, -EBUSY);
}

/* fail moved, no step, no wakeup: the errno and nothing stale. */
static void test_stale_device(void **state)
{
	struct suspend_report rep;

	(void)state;
	fail_moves(-EINVAL);
	classify(-EINVAL, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_string_equal(rep.failed_dev, "");
	assert_string_equal(rep.failed_step, "");
	assert_int_equal(rep.failed_errno, -EINVAL);
}

/* No suspend_stats readable at all: a failure with the write's errno only. */
static void test_no_stats(void **state)
{
	struct suspend_report rep;

	(void)state;
	for (int i = 0; i < _SUSPEND_STAT_MAX; i++)
		after.stats[i] = SUSPEND_STAT_UNKNOWN;
	classify(-EIO, NULL, &rep);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_string_equal(rep.failed_dev, "");
	assert_int_equal(rep.failed_errno, 0);
}

static void test_read_fixtures(void **state)
{
	struct suspend_snapshot s;
	char *dir;

	(void)state;
	dir = fixture_new("sysfs-basic");
	assert_int_equal(sysfs_set_root(dir), 0);
	fixture_write(dir, SYSFS_SUSPEND_STATS_LAST_FAILED_DEV, "serial8250\n");
	fixture_write(dir, "sys/power/suspend_stats/failed_suspend_noirq", "3\n");
	suspend_snapshot_read(&s);
	assert_int_equal(s.stats[SUSPEND_STAT_SUCCESS], 0);
	assert_int_equal(s.stats[SUSPEND_STAT_FAILED_SUSPEND_NOIRQ], 3);
	assert_string_equal(s.last_failed_dev, "serial8250");
	assert_int_equal(s.wakeup_irq, 8);
	assert_string_equal(s.wakeup_irq_actions, "rtc0");
	assert_true(s.have_sources);
	assert_int_equal(s.sources.n, 4);
	suspend_snapshot_clear(&s);
	fixture_free(dir);

	/* An older kernel: no failed_* counters, no /sys/class/wakeup, no pm_wakeup_irq. */
	dir = fixture_new("sysfs-nowakelock");
	assert_int_equal(sysfs_set_root(dir), 0);
	fixture_write(dir, SYSFS_POWER_WAKEUP_IRQ, "");
	suspend_snapshot_read(&s);
	assert_int_equal(s.stats[SUSPEND_STAT_FAIL], 0);
	assert_true(s.stats[SUSPEND_STAT_FAILED_SUSPEND] == SUSPEND_STAT_UNKNOWN);
	assert_int_equal(s.wakeup_irq, 0);
	assert_false(s.have_sources);
	suspend_snapshot_clear(&s);
	fixture_free(dir);
}

/*
 * QEMU's rtc_cmos on 6.1 leaves no IRQ and no source count: the armed
 * alarm, cleared by the kernel once it fired with the RTC past it, names it.
 */
static void test_success_rtc_alarm_inferred(void **state)
{
	struct suspend_report rep;

	(void)state;
	after.stats[SUSPEND_STAT_SUCCESS]++;
	before.wakealarm = 1000;
	before.rtc_time = 996;
	after.wakealarm = 0;
	after.rtc_time = 1000;
	classify(0, NULL, &rep);
	assert_string_equal(rep.wake_reason, "rtc0 alarm");
	/* Still armed: something else woke us before the alarm. */
	after.wakealarm = 1000;
	after.rtc_time = 998;
	classify(0, NULL, &rep);
	assert_string_equal(rep.wake_reason, "unknown");
	/* Cleared by someone, but the RTC is short of the alarm: no inference. */
	after.wakealarm = 0;
	classify(0, NULL, &rep);
	assert_string_equal(rep.wake_reason, "unknown");
	/* Never armed. */
	before.wakealarm = 0;
	after.rtc_time = 2000;
	classify(0, NULL, &rep);
	assert_string_equal(rep.wake_reason, "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_success_irq, setup),
		cmocka_unit_test_setup(test_alarm_imminent, setup),
		cmocka_unit_test_setup(test_success_sources, setup),
		cmocka_unit_test_setup(test_success_unknown, setup),
		cmocka_unit_test_setup(test_success_rtc_alarm_inferred, setup),
		cmocka_unit_test_setup(test_late_cancel_by_source, setup),
		cmocka_unit_test_setup(test_late_cancel_by_noirq_irq, setup),
		cmocka_unit_test_setup(test_stale_irq, setup),
		cmocka_unit_test_setup(test_device_failure, setup),
		cmocka_unit_test_setup(test_freeze_failure, setup),
		cmocka_unit_test_setup(test_stale_device, setup),
		cmocka_unit_test_setup(test_no_stats, setup),
		cmocka_unit_test(test_read_fixtures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
