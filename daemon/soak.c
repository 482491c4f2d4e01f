/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "soak.h"
#include "string-table.h"
#include "suspend-stats.h"
#include "suspender.h"
#include "sysfs.h"

static const char *const result_names[_SOAK_RESULT_MAX] = {
	[SOAK_SUCCESS] = "success",
	[SOAK_BLOCKED] = "blocked",
	[SOAK_EARLY_CANCEL] = "early-cancel",
	[SOAK_LATE_CANCEL] = "late-cancel",
	[SOAK_FAILURE] = "failure",
	[SOAK_ALARM_NOT_CLEARED] = "alarm-not-cleared",
	[SOAK_HANG] = "hang",
	[SOAK_ALARM_IMMINENT] = "alarm-imminent",
};

DEFINE_STRING_TABLE_TO_STRING(soak_result, enum soak_result, result_names, _SOAK_RESULT_MAX)

DEFINE_STRING_TABLE_FROM_STRING(soak_result, enum soak_result, result_names, _SOAK_RESULT_MAX, _SOAK_RESULT_INVALID)

/*
 * Read wakeup_count, but give up after timeout: the read blocks while any
 * wakeup source is active, and a soak must record who kept it awake rather
 * than wait for it. A timer sends signo to this thread; the kernel waits
 * interruptibly and the read returns EINTR.
 */
static int read_count_bounded(const struct soak_env *env, usec_t timeout, uint64_t *ret)
{
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = env->signo,
	};
	struct itimerspec its = { .it_value = timespec_from_usec(timeout) };
	timer_t t;
	int r;

	/* glibc before 2.41 names the field only in its union. */
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0)
		return negative_errno();
	if (timer_settime(t, 0, &its, NULL) < 0) {
		r = negative_errno();
		timer_delete(t);
		return r;
	}
	r = sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, ret);
	timer_delete(t);
	return r;
}

static uint64_t stat_delta(const struct suspend_snapshot *b, const struct suspend_snapshot *a, enum suspend_stat i)
{
	if (b->stats[i] == SUSPEND_STAT_UNKNOWN || a->stats[i] == SUSPEND_STAT_UNKNOWN || a->stats[i] < b->stats[i])
		return 0;
	return a->stats[i] - b->stats[i];
}

static void set_blockers(const struct wakeup_sources *b, const struct wakeup_sources *a, const struct soak_env *env,
			 struct soak_record *rec)
{
	size_t n = wakeup_sources_blockers(b, a, env->own_sources, rec->blockers, WAKEUP_BLOCKERS_MAX);

	rec->n_blockers = MIN(n, (size_t)WAKEUP_BLOCKERS_MAX);
}

/* "vmtest 10.000s, shell5 5.012s" */
static void format_blockers(const struct soak_record *rec, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < rec->n_blockers && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s %" PRIu64 ".%03" PRIu64 "s", i ? ", " : "",
				rec->blockers[i].name, rec->blockers[i].ms / 1000, rec->blockers[i].ms % 1000);
}

static void write_pm_test(const char *level)
{
	int r = sysfs_write(SYSFS_POWER_PM_TEST, level);

	if (r < 0)
		log_warning_errno(r, "Failed to write '%s' to pm_test, ignoring: %m", level);
}

void soak_cycle_run(const struct soak_request *req, const struct soak_env *env, struct soak_record *rec)
{
	_cleanup_(suspend_snapshot_clear) struct suspend_snapshot before = {}, after = {};
	_cleanup_(wakeup_sources_clear) struct wakeup_sources pre = {}, post = {};
	struct suspend_report rep = {};
	usec_t b0, m0, b1, m1;
	uint64_t hw;
	char buf[32];
	int r;

	*rec = (struct soak_record){ .start = env->now(CLOCK_REALTIME), .last_hw_sleep = -1 };
	if (env->leases_held && !req->force) {
		rec->result = SOAK_BLOCKED;
		snprintf(rec->detail, sizeof(rec->detail), "wake locks held");
		return;
	}
	(void)wakeup_sources_read(&pre);
	r = read_count_bounded(env, req->read_timeout, &rec->count);
	if (r < 0) {
		rec->result = SOAK_BLOCKED;
		rec->error = r;
		if (wakeup_sources_read(&post) >= 0)
			set_blockers(&pre, &post, env, rec);
		if (r == -EINTR && rec->n_blockers > 0)
			format_blockers(rec, rec->detail, sizeof(rec->detail));
		else if (r == -EINTR)
			snprintf(rec->detail, sizeof(rec->detail), "wakeup_count read blocked");
		else
			snprintf(rec->detail, sizeof(rec->detail), "wakeup_count read failed: %s", strerror(-r));
		return;
	}
	suspend_snapshot_read(&before);
	(void)battery_read(&rec->battery_entry);
	snprintf(buf, sizeof(buf), "%" PRIu64, rec->count);
	r = sysfs_write(SYSFS_POWER_WAKEUP_COUNT, buf);
	if (r < 0) {
		/* No retry: a mismatch means an event came, and the alarm keeps running. */
		rec->result = r == -EINVAL ? SOAK_EARLY_CANCEL : SOAK_FAILURE;
		rec->error = r;
		if (wakeup_sources_read(&post) >= 0)
			set_blockers(&pre, &post, env, rec);
		format_blockers(rec, rec->detail, sizeof(rec->detail));
		return;
	}
	if (req->wake_at > 0 && env->now(CLOCK_BOOTTIME) + SOAK_ALARM_MARGIN_USEC > req->wake_at) {
		rec->result = SOAK_BLOCKED;
		snprintf(rec->detail, sizeof(rec->detail), "wake alarm due before the state write");
		return;
	}
	rec->alarm_armed = before.wakealarm > 0;
	if (env->gate_enter && env->gate_enter(env->userdata, req->force) != 0) {
		rec->result = SOAK_BLOCKED;
		snprintf(rec->detail, sizeof(rec->detail), "wake lock taken before the state write");
		return;
	}
	if (req->pm_test[0])
		write_pm_test(req->pm_test);
	b0 = env->now(CLOCK_BOOTTIME);
	m0 = env->now(CLOCK_MONOTONIC);
	r = sysfs_write(SYSFS_POWER_STATE, req->state);
	/* Nested reads, as in the suspender: the boottime span covers the monotonic one. */
	m1 = env->now(CLOCK_MONOTONIC);
	b1 = env->now(CLOCK_BOOTTIME);
	if (env->gate_leave)
		env->gate_leave(env->userdata);
	if (req->pm_test[0])
		write_pm_test("none");
	(void)battery_read(&rec->battery_exit);
	rec->write_usec = b1 - b0;
	rec->awake_in_write = m1 - m0;
	rec->asleep = (b1 - b0) > (m1 - m0) ? (b1 - b0) - (m1 - m0) : 0;
	rec->error = r < 0 ? r : 0;
	suspend_snapshot_read(&after);
	suspend_classify(&before, &after, r, env->own_sources, &rep);
	rec->d_success = stat_delta(&before, &after, SUSPEND_STAT_SUCCESS);
	rec->d_fail = stat_delta(&before, &after, SUSPEND_STAT_FAIL);
	rec->alarm_cleared = rec->alarm_armed && after.wakealarm == 0;
	if (sysfs_read_u64(SYSFS_SUSPEND_STATS_LAST_HW_SLEEP, &hw) >= 0)
		rec->last_hw_sleep = (int64_t)MIN(hw, (uint64_t)INT64_MAX);
	snprintf(rec->wake_reason, sizeof(rec->wake_reason), "%s", rep.wake_reason);
	snprintf(rec->failed_dev, sizeof(rec->failed_dev), "%s", rep.failed_dev);
	snprintf(rec->failed_step, sizeof(rec->failed_step), "%s", rep.failed_step);
	rec->failed_errno = rep.failed_errno;
	switch (rep.result) {
	case SUSPEND_SUCCESS:
		/* pm_test cycles never arm nor clear anything: only a real sleep is held to its alarm. */
		rec->result = rec->alarm_armed && !rec->alarm_cleared && !req->pm_test[0] ? SOAK_ALARM_NOT_CLEARED
											  : SOAK_SUCCESS;
		break;
	case SUSPEND_LATE_CANCEL:
		rec->result = SOAK_LATE_CANCEL;
		snprintf(rec->detail, sizeof(rec->detail), "%s", rep.cancel_source);
		set_blockers(&before.sources, &after.sources, env, rec);
		break;
	case SUSPEND_ALARM_IMMINENT:
		rec->result = SOAK_ALARM_IMMINENT;
		break;
	case SUSPEND_EARLY_CANCEL:
	case SUSPEND_FAILURE:
	/* Never from suspend_classify(): logind's suspends are seen on the bus, not here. */
	case SUSPEND_EXTERNAL:
	case _SUSPEND_RESULT_MAX:
	case _SUSPEND_RESULT_INVALID:
		rec->result = SOAK_FAILURE;
		break;
	}
}
