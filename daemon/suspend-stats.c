/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "string-table.h"
#include "suspend-stats.h"
#include "sysfs.h"

static const char *const stat_names[_SUSPEND_STAT_MAX] = {
	[SUSPEND_STAT_SUCCESS] = "success",
	[SUSPEND_STAT_FAIL] = "fail",
	[SUSPEND_STAT_FAILED_FREEZE] = "failed_freeze",
	[SUSPEND_STAT_FAILED_PREPARE] = "failed_prepare",
	[SUSPEND_STAT_FAILED_SUSPEND] = "failed_suspend",
	[SUSPEND_STAT_FAILED_SUSPEND_LATE] = "failed_suspend_late",
	[SUSPEND_STAT_FAILED_SUSPEND_NOIRQ] = "failed_suspend_noirq",
	[SUSPEND_STAT_FAILED_RESUME] = "failed_resume",
	[SUSPEND_STAT_FAILED_RESUME_EARLY] = "failed_resume_early",
	[SUSPEND_STAT_FAILED_RESUME_NOIRQ] = "failed_resume_noirq",
};

DEFINE_STRING_TABLE_TO_STRING(suspend_stat, enum suspend_stat, stat_names, _SUSPEND_STAT_MAX)

void suspend_snapshot_read_counters(struct suspend_snapshot *ret)
{
	struct suspend_snapshot s = {};
	char rel[128];
	int irq;

	for (int i = 0; i < _SUSPEND_STAT_MAX; i++) {
		snprintf(rel, sizeof(rel), SYSFS_SUSPEND_STATS_FMT, stat_names[i]);
		if (sysfs_read_u64(rel, &s.stats[i]) < 0)
			s.stats[i] = SUSPEND_STAT_UNKNOWN;
	}
	if (sysfs_read(SYSFS_SUSPEND_STATS_LAST_FAILED_DEV, s.last_failed_dev, sizeof(s.last_failed_dev)) < 0)
		s.last_failed_dev[0] = 0;
	if (sysfs_read(SYSFS_SUSPEND_STATS_LAST_FAILED_STEP, s.last_failed_step, sizeof(s.last_failed_step)) < 0)
		s.last_failed_step[0] = 0;
	if (sysfs_read_int(SYSFS_SUSPEND_STATS_LAST_FAILED_ERRNO, &s.last_failed_errno) < 0)
		s.last_failed_errno = 0;
	/* Needs CONFIG_PM_SLEEP_DEBUG; reads ENODATA while no IRQ is recorded. */
	if (sysfs_read_int(SYSFS_POWER_WAKEUP_IRQ, &irq) >= 0 && irq > 0) {
		s.wakeup_irq = (unsigned)irq;
		snprintf(rel, sizeof(rel), SYSFS_IRQ_ACTIONS_FMT, irq);
		if (sysfs_read(rel, s.wakeup_irq_actions, sizeof(s.wakeup_irq_actions)) < 0)
			s.wakeup_irq_actions[0] = 0;
	}
	/* Empty when not armed: sysfs_read_u64() fails and 0 stays. */
	if (sysfs_read_u64(SYSFS_RTC_WAKEALARM, &s.wakealarm) < 0)
		s.wakealarm = 0;
	if (sysfs_read_u64(SYSFS_RTC_SINCE_EPOCH, &s.rtc_time) < 0)
		s.rtc_time = 0;
	*ret = s;
}

void suspend_snapshot_read(struct suspend_snapshot *ret)
{
	suspend_snapshot_read_counters(ret);
	ret->have_sources = wakeup_sources_read(&ret->sources) >= 0;
}

void suspend_snapshot_clear(struct suspend_snapshot *s)
{
	if (!s)
		return;
	wakeup_sources_clear(&s->sources);
	s->have_sources = false;
}

static bool stat_moved(const struct suspend_snapshot *b, const struct suspend_snapshot *a, enum suspend_stat i)
{
	return b->stats[i] != SUSPEND_STAT_UNKNOWN && a->stats[i] != SUSPEND_STAT_UNKNOWN && a->stats[i] != b->stats[i];
}

/* The step whose failed_* counter moved, or _SUSPEND_STAT_INVALID. */
static enum suspend_stat step_moved(const struct suspend_snapshot *b, const struct suspend_snapshot *a)
{
	for (enum suspend_stat i = SUSPEND_STAT_FAILED_FREEZE; i < _SUSPEND_STAT_MAX; i++)
		if (stat_moved(b, a, i))
			return i;
	return _SUSPEND_STAT_INVALID;
}

static void format_irq(const struct suspend_snapshot *a, char *buf, size_t size)
{
	if (a->wakeup_irq_actions[0])
		snprintf(buf, size, "irq %u (%s)", a->wakeup_irq, a->wakeup_irq_actions);
	else
		snprintf(buf, size, "irq %u", a->wakeup_irq);
}

/*
 * pm_wakeup_irq keeps its value until the freezer clears it at the start of
 * the next attempt (kernel/power/process.c: freeze_processes() calls
 * pm_wakeup_clear(0)), so after a failure it may be the last resume's IRQ.
 * It is this attempt's when it changed, when a step counter moved (the
 * freezer ran), or when the write failed with EBUSY and no step moved: the
 * abort at the last pm_wakeup_pending() check in suspend_enter(), where a
 * wake IRQ in the noirq phase is caught. Same number, no step and another
 * errno (a PM notifier refused) means stale.
 */
static bool irq_fresh(const struct suspend_snapshot *b, const struct suspend_snapshot *a, int error,
		      enum suspend_stat step)
{
	if (a->wakeup_irq == 0)
		return false;
	return a->wakeup_irq != b->wakeup_irq || step != _SUSPEND_STAT_INVALID || error == -EBUSY;
}

/*
 * kernel/time/alarmtimer.c refuses a suspend while an alarm is due within
 * 2 s: its device's suspend callback fails with EBUSY, and it reports a
 * wakeup event on that device so a wakeup_count handshake sees one. Either
 * trace alone names it: the failed device, when the step counters moved
 * (the kernel's own record), or the alarmtimer wakeup source as the only
 * one that moved.
 */
#define ALARMTIMER_DEV "alarmtimer"

static bool alarm_refused(const struct suspend_snapshot *b, const struct suspend_snapshot *a, int error,
			  enum suspend_stat step, const char *sources, size_t n_sources)
{
	if (error != -EBUSY)
		return false;
	if (step != _SUSPEND_STAT_INVALID && stat_moved(b, a, SUSPEND_STAT_FAIL))
		return strncmp(a->last_failed_dev, ALARMTIMER_DEV, strlen(ALARMTIMER_DEV)) == 0;
	return n_sources == 1 && strncmp(sources, ALARMTIMER_DEV, strlen(ALARMTIMER_DEV)) == 0;
}

static void classify_failure(const struct suspend_snapshot *b, const struct suspend_snapshot *a, int error,
			     struct suspend_report *rep)
{
	enum suspend_stat step = step_moved(b, a);
	char irq[96] = "", sources[96] = "";
	size_t n = 0;

	if (b->have_sources && a->have_sources)
		n = wakeup_sources_moved(&b->sources, &a->sources, NULL, sources, sizeof(sources));
	/* Before the wakeup check: the wakeup event it reports is its refusal, not a wakeup. */
	if (alarm_refused(b, a, error, step, sources, n)) {
		rep->result = SUSPEND_ALARM_IMMINENT;
		rep->failed_errno = error;
		snprintf(rep->failed_dev, sizeof(rep->failed_dev), "%s",
			 step != _SUSPEND_STAT_INVALID ? a->last_failed_dev : sources);
		snprintf(rep->failed_step, sizeof(rep->failed_step), "%s",
			 step != _SUSPEND_STAT_INVALID && a->last_failed_step[0] ? a->last_failed_step : "suspend");
		return;
	}

	/*
	 * A wakeup first: its abort makes the kernel count a failed step too
	 * (dpm_suspend() and dpm_suspend_late() fail with EBUSY on
	 * pm_wakeup_pending() and record the device they were at), and that
	 * device is innocent.
	 */
	if (irq_fresh(b, a, error, step))
		format_irq(a, irq, sizeof(irq));
	if (irq[0] || n > 0) {
		rep->result = SUSPEND_LATE_CANCEL;
		snprintf(rep->cancel_source, sizeof(rep->cancel_source), "%s%s%s%s%s%s", irq,
			 irq[0] && n ? ", " : "", n ? "wakeup source" : "", n > 1 ? "s" : "", n ? " " : "",
			 n ? sources : "");
		return;
	}
	rep->result = SUSPEND_FAILURE;
	if (!stat_moved(b, a, SUSPEND_STAT_FAIL))
		return;
	/* pm_suspend() records the errno of every failure: this one's. */
	rep->failed_errno = a->last_failed_errno;
	if (step == _SUSPEND_STAT_INVALID)
		return;
	if (a->last_failed_step[0])
		snprintf(rep->failed_step, sizeof(rep->failed_step), "%s", a->last_failed_step);
	else
		snprintf(rep->failed_step, sizeof(rep->failed_step), "%s", stat_names[step] + strlen("failed_"));
	/* The freezer fails without a device (suspend_prepare() records only the step). */
	if (step != SUSPEND_STAT_FAILED_FREEZE)
		snprintf(rep->failed_dev, sizeof(rep->failed_dev), "%s", a->last_failed_dev);
}

void suspend_classify(const struct suspend_snapshot *before, const struct suspend_snapshot *after, int error,
		      char *const *exclude, struct suspend_report *rep)
{
	char sources[96];

	rep->cancel_source[0] = 0;
	rep->failed_dev[0] = 0;
	rep->failed_step[0] = 0;
	rep->failed_errno = 0;
	if (error < 0) {
		rep->wake_reason[0] = 0;
		classify_failure(before, after, error, rep);
		return;
	}
	rep->result = SUSPEND_SUCCESS;
	/* After a success the IRQ is this resume's: the freezer cleared the old one. */
	if (after->wakeup_irq > 0) {
		format_irq(after, rep->wake_reason, sizeof(rep->wake_reason));
		return;
	}
	if (before->have_sources && after->have_sources &&
	    wakeup_sources_moved(&before->sources, &after->sources, exclude, sources, sizeof(sources)) > 0) {
		snprintf(rep->wake_reason, sizeof(rep->wake_reason), "%s", sources);
		return;
	}
	/*
	 * An inference, not a kernel record: Linux 6.1 in QEMU (rtc_cmos, no
	 * CONFIG_PM_SLEEP_DEBUG IRQ) may leave no trace of an RTC wake but this.
	 * The alarm was armed before, the kernel cleared it (rtc_timer_do_work()
	 * disarms a fired alarm), and the RTC is at or past its time: the alarm
	 * fired while we slept. Named "rtc0 alarm" so it reads as the inference
	 * it is, apart from "rtc0 (00:06)" for a wakeup source that moved.
	 */
	if (before->wakealarm > 0 && after->wakealarm == 0 && after->rtc_time >= before->wakealarm) {
		snprintf(rep->wake_reason, sizeof(rep->wake_reason), "rtc0 alarm");
		return;
	}
	snprintf(rep->wake_reason, sizeof(rep->wake_reason), "unknown");
}
