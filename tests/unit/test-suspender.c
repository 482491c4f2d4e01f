/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"
#include "macro.h"
#include "soak.h"
#include "suspender.h"
#include "sysfs.h"
#include "sysfs-inject.h"

#define MS USEC_PER_MSEC

/*
 * A fake kernel behind the sysfs injector: it answers wakeup_count and state
 * the way the kernel does, and can misbehave in the ways a plain fixture file
 * cannot (rejected writes, blocking, time asleep).
 */
struct fake_kernel {
	pthread_mutex_t lock;
	char trace[16384];
	uint64_t count;
	int count_write_error;    /* one shot */
	int state_error;          /* persistent until cleared */
	/*
	 * How a failed state write fails, as the kernel would show it in
	 * suspend_stats, pm_wakeup_irq and /sys/class/wakeup (6.1):
	 */
	const char *abort_source; /* this wakeup source (wakeupN) reports an event and aborts */
	unsigned abort_irq;       /* this wake IRQ aborts in the noirq phase: fail moves, no step */
	const char *fail_step;    /* this failed_* counter moves and ... */
	const char *fail_dev;     /* ... this device is recorded */
	bool fail_before_freeze;  /* fails before the freezer clears pm_wakeup_irq */
	bool block_read_after_fail; /* our lease's wakeup source is active after the write */
	unsigned wakeup_irq;      /* what pm_wakeup_irq shows; 0: ENODATA */
	unsigned resume_irq;      /* recorded by a successful suspend's wakeup */
	const char *resume_source; /* this wakeup source reports the wakeup on resume */
	bool no_stats;            /* a kernel without suspend_stats: keeps the races fast */
	char *dir;
	usec_t state_block;       /* the state write takes this long, signals or not */
	usec_t asleep_per_write;  /* CLOCK_BOOTTIME jumps by this much per successful state write */
	usec_t boottime_offset;
	bool block_read;          /* wakeup_count read waits, interruptibly, until cleared */
	unsigned state_writes;
	unsigned reads;
	unsigned reads_entered;   /* wakeup_count reads begun, blocked or not */
	usec_t last_cancel_at;
	usec_t read_after_cancel_at;
	struct suspender *s;
	bool lease_after_count_write; /* a lease arrives right after our wakeup_count write */
	usec_t write_begin, write_end; /* the last state write, CLOCK_MONOTONIC */
	/* When each state write ended and each wakeup_count read began (CLOCK_MONOTONIC), for delays. */
	usec_t write_ends[32], read_starts[64];
	unsigned n_write_ends, n_read_starts;
	bool closed;                   /* set by a test once a barrier call returned */
	unsigned violations;           /* state writes begun while closed */
	/* Wakeup source reads (their name files): in all, at the last count read's return, at the last state write. */
	unsigned source_reads, source_reads_at_count, source_reads_at_write;
};

static struct fake_kernel fk;

static void trace(const char *fmt, ...)
{
	size_t n = strlen(fk.trace);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fk.trace + n, sizeof(fk.trace) - n, fmt, ap);
	va_end(ap);
}

static usec_t fake_now(clockid_t clock)
{
	usec_t t = now(clock);

	if (clock == CLOCK_BOOTTIME) {
		pthread_mutex_lock(&fk.lock);
		t += fk.boottime_offset;
		pthread_mutex_unlock(&fk.lock);
	}
	return t;
}

static int fk_read(void *userdata, const char *rel, char *buf, size_t size)
{
	(void)userdata;
	if (strcmp(rel, SYSFS_POWER_WAKEUP_IRQ) == 0) {
		int r;

		pthread_mutex_lock(&fk.lock);
		r = fk.wakeup_irq ? snprintf(buf, size, "%u", fk.wakeup_irq) : -ENODATA;
		pthread_mutex_unlock(&fk.lock);
		return r;
	}
	if (fk.no_stats && strncmp(rel, "sys/power/suspend_stats/", strlen("sys/power/suspend_stats/")) == 0)
		return -ENOENT;
	if (strncmp(rel, "sys/class/wakeup/", strlen("sys/class/wakeup/")) == 0 && strlen(rel) > 5 &&
	    strcmp(rel + strlen(rel) - 5, "/name") == 0) {
		pthread_mutex_lock(&fk.lock);
		fk.source_reads++;
		pthread_mutex_unlock(&fk.lock);
		return SYSFS_INJECT_PASS;
	}
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) != 0)
		return SYSFS_INJECT_PASS;
	pthread_mutex_lock(&fk.lock);
	fk.reads_entered++;
	pthread_mutex_unlock(&fk.lock);
	for (;;) {
		bool block;

		pthread_mutex_lock(&fk.lock);
		block = fk.block_read;
		pthread_mutex_unlock(&fk.lock);
		if (!block)
			break;
		/* Like the kernel's interruptible wait: a signal ends it with EINTR. */
		if (nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL) < 0 && errno == EINTR)
			return -EINTR;
	}
	pthread_mutex_lock(&fk.lock);
	fk.reads++;
	if (fk.n_read_starts < ELEMENTSOF(fk.read_starts))
		fk.read_starts[fk.n_read_starts++] = now(CLOCK_MONOTONIC);
	if (fk.last_cancel_at && !fk.read_after_cancel_at)
		fk.read_after_cancel_at = now(CLOCK_MONOTONIC);
	trace("R%" PRIu64 ";", fk.count);
	fk.source_reads_at_count = fk.source_reads;
	snprintf(buf, size, "%" PRIu64, fk.count);
	pthread_mutex_unlock(&fk.lock);
	return (int)strlen(buf);
}

static void fk_bump(const char *rel)
{
	char *v = fixture_read(fk.dir, rel), n[32];

	snprintf(n, sizeof(n), "%llu\n", strtoull(v, NULL, 10) + 1);
	free(v);
	fixture_write(fk.dir, rel, n);
}

static void fk_bump_source(const char *source, bool wakeup)
{
	char rel[128];

	snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, source, "event_count");
	fk_bump(rel);
	if (!wakeup)
		return;
	snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, source, "wakeup_count");
	fk_bump(rel);
}

static void fk_stat(const char *name)
{
	char rel[128];

	snprintf(rel, sizeof(rel), SYSFS_SUSPEND_STATS_FMT, name);
	fk_bump(rel);
}

/* What kernel/power and drivers/base/power leave behind for a write ending in r. Under fk.lock. */
static void fk_account(int r)
{
	char e[16];

	/* freeze_processes() calls pm_wakeup_clear(0). */
	if (r == 0 || !fk.fail_before_freeze)
		fk.wakeup_irq = 0;
	if (fk.no_stats) {
		fk.count += r == 0;
		return;
	}
	if (r == 0) {
		fk.count++;
		fk.wakeup_irq = fk.resume_irq;
		if (fk.resume_source)
			fk_bump_source(fk.resume_source, true);
		fk_stat("success");
		return;
	}
	fk_stat("fail");
	snprintf(e, sizeof(e), "%d\n", r);
	fixture_write(fk.dir, SYSFS_SUSPEND_STATS_LAST_FAILED_ERRNO, e);
	if (fk.abort_source) {
		/* The event ends, so the registered-event count moves too. */
		fk_bump_source(fk.abort_source, true);
		fk.count++;
	}
	if (fk.abort_irq)
		fk.wakeup_irq = fk.abort_irq;
	if (fk.fail_step) {
		fk_stat(fk.fail_step);
		fixture_write(fk.dir, SYSFS_SUSPEND_STATS_LAST_FAILED_STEP, fk.fail_step + strlen("failed_"));
	}
	if (fk.fail_dev)
		fixture_write(fk.dir, SYSFS_SUSPEND_STATS_LAST_FAILED_DEV, fk.fail_dev);
	if (fk.block_read_after_fail)
		fk.block_read = true;
}

static int fk_write(void *userdata, const char *rel, const char *value)
{
	int r = 0;

	(void)userdata;
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) == 0) {
		pthread_mutex_lock(&fk.lock);
		trace("W%s;", value);
		if (fk.count_write_error) {
			r = fk.count_write_error;
			fk.count_write_error = 0;
			fk.last_cancel_at = now(CLOCK_MONOTONIC);
		} else if (strtoull(value, NULL, 10) != fk.count) {
			r = -EINVAL;
		}
		pthread_mutex_unlock(&fk.lock);
		if (r == 0 && fk.lease_after_count_write)
			suspender_set_blocked(fk.s, true);
		return r;
	}
	if (strcmp(rel, SYSFS_POWER_STATE) == 0) {
		usec_t end = now(CLOCK_MONOTONIC) + fk.state_block;

		pthread_mutex_lock(&fk.lock);
		fk.write_begin = now(CLOCK_MONOTONIC);
		fk.source_reads_at_write = fk.source_reads;
		if (fk.closed) {
			fk.violations++;
			trace("!");
		}
		pthread_mutex_unlock(&fk.lock);

		/* The kernel does not abort a suspend for a signal: sleep it out. */
		while (now(CLOCK_MONOTONIC) < end)
			nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
		pthread_mutex_lock(&fk.lock);
		trace("S%s;", value);
		fk.state_writes++;
		r = fk.state_error;
		fk_account(r);
		if (r == 0)
			fk.boottime_offset += fk.asleep_per_write;
		fk.write_end = now(CLOCK_MONOTONIC);
		if (fk.n_write_ends < ELEMENTSOF(fk.write_ends))
			fk.write_ends[fk.n_write_ends++] = fk.write_end;
		pthread_mutex_unlock(&fk.lock);
		return r;
	}
	return SYSFS_INJECT_PASS;
}

static const struct sysfs_injector injector = { .read = fk_read, .write = fk_write };

struct ctx {
	char *dir;
	struct suspender *s;
	/* Events barrier() read past while it waited for the gate, for wait_event() to see first. */
	struct suspender_event kept[16];
	unsigned n_kept;
};

static struct suspender_params default_params(void)
{
	return (struct suspender_params){
		.state = "mem",
		.backoff_base = 10 * MS,
		.backoff_multiplier = 2.0,
		.backoff_flat_attempts = 0,
		.backoff_max = 60 * USEC_PER_SEC,
		.now = fake_now,
	};
}

static int setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	memset(&fk, 0, sizeof(fk));
	pthread_mutex_init(&fk.lock, NULL);
	fk.count = 5;
	/* The last resume's IRQ, still shown until the next freeze. */
	fk.wakeup_irq = 8;
	fk.resume_irq = 8;
	x->dir = fixture_new("sysfs-basic");
	fk.dir = x->dir;
	assert_int_equal(sysfs_set_root(x->dir), 0);
	sysfs_inject_set(&injector);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *x = *state;

	if (x->s) {
		assert_int_equal(suspender_stop(x->s, 10 * USEC_PER_SEC), 0);
		suspender_free(x->s);
	}
	sysfs_inject_set(NULL);
	fixture_free(x->dir);
	free(x);
	return 0;
}

static void start(struct ctx *x, const struct suspender_params *p)
{
	assert_int_equal(suspender_new(p, &x->s), 0);
	fk.s = x->s;
	assert_int_equal(suspender_start(x->s), 0);
}

/* The next event of the given type, failing the test after timeout_ms. */
static void wait_event(struct ctx *x, enum suspender_event_type type, struct suspender_event *ret, int timeout_ms)
{
	usec_t end = now(CLOCK_MONOTONIC) + (usec_t)timeout_ms * MS;

	while (x->n_kept > 0) {
		*ret = x->kept[0];
		memmove(x->kept, x->kept + 1, --x->n_kept * sizeof(x->kept[0]));
		if (ret->type == type)
			return;
	}
	for (;;) {
		struct pollfd p = { .fd = suspender_get_fd(x->s), .events = POLLIN };
		int r;

		r = suspender_read_event(x->s, ret);
		assert_true(r >= 0);
		if (r > 0 && ret->type == type)
			return;
		if (r > 0)
			continue;
		if (now(CLOCK_MONOTONIC) >= end)
			fail_msg("no event of type %d within %d ms; trace: %s", type, timeout_ms, fk.trace);
		poll(&p, 1, 10);
	}
}

/*
 * The main loop's barrier, after closing a flag: wait for the event that
 * says the state write under way returned, keeping what comes before it.
 * Returns the ticket (0: nothing was under way).
 */
static uint64_t barrier(struct ctx *x, int timeout_ms)
{
	uint64_t ticket = suspender_barrier(x->s);
	usec_t end = now(CLOCK_MONOTONIC) + (usec_t)timeout_ms * MS;

	while (ticket > 0) {
		struct pollfd p = { .fd = suspender_get_fd(x->s), .events = POLLIN };
		struct suspender_event ev;
		int r = suspender_read_event(x->s, &ev);

		assert_true(r >= 0);
		if (r > 0 && ev.type == SUSPENDER_EVENT_GATE && ev.gate_exits >= ticket)
			break;
		if (r > 0 && ev.type != SUSPENDER_EVENT_GATE && x->n_kept < ELEMENTSOF(x->kept))
			x->kept[x->n_kept++] = ev;
		if (r > 0)
			continue;
		if (now(CLOCK_MONOTONIC) >= end)
			fail_msg("no gate event for ticket %" PRIu64 " within %d ms; trace: %s", ticket, timeout_ms,
				 fk.trace);
		poll(&p, 1, 10);
	}
	return ticket;
}

static void wait_result(struct ctx *x, struct suspend_report *ret, int timeout_ms)
{
	struct suspender_event ev;

	wait_event(x, SUSPENDER_EVENT_RESULT, &ev, timeout_ms);
	*ret = ev.report;
}

static unsigned locked_state_writes(void)
{
	unsigned n;

	pthread_mutex_lock(&fk.lock);
	n = fk.state_writes;
	pthread_mutex_unlock(&fk.lock);
	return n;
}

static void test_protocol_order(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_int_equal(rep.count, 5);
	assert_int_equal(rep.attempt, 1);
	assert_string_equal(rep.wake_reason, "irq 8 (rtc0)");
	assert_int_equal(rep.next_delay, 10 * MS);
	/* Read the count, write it back, then and only then the state. */
	assert_memory_equal(fk.trace, "R5;W5;Smem;", strlen("R5;W5;Smem;"));
}

static void test_no_state_write_while_lease_held(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	assert_int_equal(suspender_new(&p, &x->s), 0);
	fk.s = x->s;
	suspender_set_blocked(x->s, true);
	assert_int_equal(suspender_start(x->s), 0);
	usleep(300 * 1000);
	assert_int_equal(locked_state_writes(), 0);
	/* The count read before the lease went away is stale: read it again. */
	suspender_set_blocked(x->s, false);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_memory_equal(fk.trace, "R5;R5;W5;Smem;", strlen("R5;R5;W5;Smem;"));
}

static void test_lease_after_count_write(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();

	/* A lease that lands between our wakeup_count write and the state write. */
	fk.lease_after_count_write = true;
	start(x, &p);
	usleep(300 * 1000);
	assert_int_equal(locked_state_writes(), 0);
	pthread_mutex_lock(&fk.lock);
	/* It goes back to reading the count, which blocks on the real kernel's lock. */
	assert_memory_equal(fk.trace, "R5;W5;R5;", strlen("R5;W5;R5;"));
	assert_null(strchr(fk.trace, 'S'));
	pthread_mutex_unlock(&fk.lock);
}

static void test_early_cancel_retries_at_once(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	/* A long backoff, so any delay before the retry would show. */
	p.backoff_base = 2 * USEC_PER_SEC;
	fk.count_write_error = -EINVAL;
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_EARLY_CANCEL);
	assert_int_equal(rep.error, -EINVAL);
	assert_int_equal(rep.next_delay, 0);
	assert_int_equal(rep.bad_streak, 0);
	wait_result(x, &rep, 1000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_int_equal(rep.bad_streak, 0);
	assert_true(fk.read_after_cancel_at - fk.last_cancel_at < 200 * MS);
	assert_memory_equal(fk.trace, "R5;W5;R5;W5;Smem;", strlen("R5;W5;R5;W5;Smem;"));
}

static void test_backoff_sequence_and_reset(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;
	usec_t expect = 10 * MS, delays[5];

	fk.state_error = -EBUSY;
	start(x, &p);
	for (unsigned i = 1; i <= 5; i++) {
		wait_result(x, &rep, 3000);
		assert_int_equal(rep.result, SUSPEND_FAILURE);
		assert_int_equal(rep.bad_streak, i);
		expect *= 2;
		assert_int_equal(rep.next_delay, expect);
		delays[i - 1] = expect;
	}
	pthread_mutex_lock(&fk.lock);
	fk.state_error = 0;
	pthread_mutex_unlock(&fk.lock);
	wait_result(x, &rep, 3000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_int_equal(rep.bad_streak, 0);
	assert_int_equal(rep.next_delay, 10 * MS);

	/*
	 * Each delay was really waited: from the end of a failed state write to
	 * the next wakeup_count read, timed on the thread's side (when the test
	 * thread itself wakes up does not matter).
	 */
	pthread_mutex_lock(&fk.lock);
	assert_true(fk.n_write_ends >= 5);
	for (unsigned i = 0; i < 4; i++) {
		usec_t next = 0;

		for (unsigned j = 0; j < fk.n_read_starts && !next; j++)
			if (fk.read_starts[j] > fk.write_ends[i])
				next = fk.read_starts[j];
		assert_true(next > 0);
		if (next - fk.write_ends[i] < delays[i])
			fail_msg("attempt %u: next read %llu us after the failed write, backoff was %llu us", i + 1,
				 (unsigned long long)(next - fk.write_ends[i]), (unsigned long long)delays[i]);
	}
	pthread_mutex_unlock(&fk.lock);
}

static void test_late_cancel(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	fk.state_error = -EBUSY;
	fk.abort_source = "wakeup1";
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	assert_int_equal(rep.error, -EBUSY);
	assert_int_equal(rep.count, 5);
	assert_string_equal(rep.cancel_source, "wakeup source rtc0");
	assert_string_equal(rep.failed_dev, "");
	assert_int_equal(rep.bad_streak, 1);
}

/*
 * Our own lease aborts the suspend (kernel wake lock) and keeps its wakeup
 * source active: wakeup_count reads block until the lease ends. The result
 * must not wait for that.
 */
static void test_late_cancel_by_own_lease_not_blocked(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	fk.state_error = -EBUSY;
	fk.abort_source = "wakeup0";
	fk.block_read_after_fail = true;
	start(x, &p);
	wait_result(x, &rep, 1000);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	assert_string_equal(rep.cancel_source, "wakeup source autosleepd");
	pthread_mutex_lock(&fk.lock);
	/* Still blocked: the result came without a read of wakeup_count. */
	assert_true(fk.block_read);
	fk.block_read = false;
	pthread_mutex_unlock(&fk.lock);
}

/* A wake IRQ in the noirq phase: fail moves, no step, wakeup_count does not. */
static void test_late_cancel_by_noirq_irq(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	/* Left over from an earlier failure: must not be blamed. */
	fixture_write(x->dir, SYSFS_SUSPEND_STATS_LAST_FAILED_DEV, "serial8250\n");
	fixture_write(x->dir, SYSFS_SUSPEND_STATS_LAST_FAILED_STEP, "suspend\n");
	fk.state_error = -EBUSY;
	fk.abort_irq = 9;
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	assert_string_equal(rep.cancel_source, "irq 9 (acpi)");
	assert_string_equal(rep.failed_dev, "");
	assert_string_equal(rep.failed_step, "");
}

/* A wakeup during device suspend also counts a failed step, at an innocent device. */
static void test_late_cancel_blames_no_device(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	fk.state_error = -EBUSY;
	fk.abort_source = "wakeup3";
	fk.fail_step = "failed_suspend";
	fk.fail_dev = "0000:00:1f.3\n";
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_LATE_CANCEL);
	assert_string_equal(rep.cancel_source, "wakeup source event3");
	assert_string_equal(rep.failed_dev, "");
}

static void test_device_failure(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	fk.state_error = -EBUSY;
	fk.fail_step = "failed_suspend";
	fk.fail_dev = "serial8250\n";
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_string_equal(rep.cancel_source, "");
	assert_string_equal(rep.failed_dev, "serial8250");
	assert_string_equal(rep.failed_step, "suspend");
	assert_int_equal(rep.failed_errno, -16);
}

/*
 * fail moves but no step counter: a failure with its errno and no device,
 * although last_failed_dev names one from long ago; and pm_wakeup_irq still
 * shows the last resume's IRQ, as the freezer never ran.
 */
static void test_stale_device_not_blamed(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	fixture_write(x->dir, SYSFS_SUSPEND_STATS_LAST_FAILED_DEV, "serial8250\n");
	fixture_write(x->dir, SYSFS_SUSPEND_STATS_LAST_FAILED_STEP, "suspend\n");
	fixture_write(x->dir, SYSFS_SUSPEND_STATS_LAST_FAILED_ERRNO, "-16\n");
	fk.state_error = -ENOMEM;
	fk.fail_before_freeze = true;
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_int_equal(rep.error, -ENOMEM);
	assert_string_equal(rep.cancel_source, "");
	assert_string_equal(rep.failed_dev, "");
	assert_string_equal(rep.failed_step, "");
	assert_int_equal(rep.failed_errno, -ENOMEM);
}

/* Without pm_wakeup_irq (no CONFIG_PM_SLEEP_DEBUG, or S3 firmware wake), the sources tell. */
static void test_wake_reason_from_sources(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	char *own[] = { (char *)"autosleepd", NULL };
	struct suspend_report rep;

	p.own_sources = own;
	fk.resume_irq = 0;
	fk.resume_source = "wakeup1";
	start(x, &p);
	/* A lease taken at resume moves our own source too: not a wake reason. */
	pthread_mutex_lock(&fk.lock);
	fk_bump_source("wakeup0", true);
	pthread_mutex_unlock(&fk.lock);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_string_equal(rep.wake_reason, "rtc0");
	pthread_mutex_lock(&fk.lock);
	fk.resume_source = NULL;
	pthread_mutex_unlock(&fk.lock);
	wait_result(x, &rep, 2000);
	assert_string_equal(rep.wake_reason, "unknown");
}

static void test_short_suspend_backoff(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	p.short_suspend = 1 * USEC_PER_SEC;
	start(x, &p);
	/* Woke at once: counts as bad. */
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_true(rep.short_suspend);
	assert_int_equal(rep.bad_streak, 1);
	assert_int_equal(rep.next_delay, 20 * MS);
	wait_result(x, &rep, 2000);
	assert_true(rep.short_suspend);
	assert_int_equal(rep.bad_streak, 2);
	assert_int_equal(rep.next_delay, 40 * MS);

	/* A real sleep resets the backoff, and time asleep is measured. */
	pthread_mutex_lock(&fk.lock);
	fk.asleep_per_write = 5 * USEC_PER_SEC;
	pthread_mutex_unlock(&fk.lock);
	do
		wait_result(x, &rep, 2000);
	while (rep.short_suspend);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	if (!(rep.asleep >= 5 * USEC_PER_SEC && rep.asleep < 6 * USEC_PER_SEC))
		fail_msg("time asleep %llu us, want 5-6 s", (unsigned long long)rep.asleep);
	assert_int_equal(rep.bad_streak, 0);
	assert_int_equal(rep.next_delay, 10 * MS);
}

static void test_short_suspend_off_by_default(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	start(x, &p);
	wait_result(x, &rep, 2000);
	wait_result(x, &rep, 2000);
	assert_false(rep.short_suspend);
	assert_int_equal(rep.bad_streak, 0);
}

static void test_stop_during_blocking_read(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	usec_t t;

	fk.block_read = true;
	start(x, &p);
	usleep(200 * 1000);
	t = now(CLOCK_MONOTONIC);
	assert_int_equal(suspender_stop(x->s, 900 * MS), 0);
	t = now(CLOCK_MONOTONIC) - t;
	assert_true(t < 500 * MS);
	assert_int_equal(fk.reads, 0);
	assert_int_equal(locked_state_writes(), 0);
}

static void test_stop_during_blocking_state_write(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspender_event ev;
	usec_t t;

	fk.state_block = 3 * USEC_PER_SEC;
	start(x, &p);
	wait_event(x, SUSPENDER_EVENT_STATE, &ev, 2000);
	while (ev.state != SUSPENDER_SUSPENDING)
		wait_event(x, SUSPENDER_EVENT_STATE, &ev, 2000);
	/* Stuck in the kernel: stop gives up in time instead of hanging SIGTERM. */
	t = now(CLOCK_MONOTONIC);
	assert_int_equal(suspender_stop(x->s, 800 * MS), -ETIMEDOUT);
	t = now(CLOCK_MONOTONIC) - t;
	assert_true(t < 1 * USEC_PER_SEC);
	/* The teardown's stop then waits for the write to finish, so nothing leaks. */
}

static void fixture_remove(const char *dir, const char *rel)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", dir, rel);
	assert_int_equal(system(cmd), 0);
}

static void set_closed(bool closed)
{
	pthread_mutex_lock(&fk.lock);
	fk.closed = closed;
	pthread_mutex_unlock(&fk.lock);
}

static unsigned locked_reads(void)
{
	unsigned n;

	pthread_mutex_lock(&fk.lock);
	n = fk.reads;
	pthread_mutex_unlock(&fk.lock);
	return n;
}

static void wait_state(struct ctx *x, enum suspender_state want)
{
	struct suspender_event ev;

	do
		wait_event(x, SUSPENDER_EVENT_STATE, &ev, 3000);
	while (ev.state != want);
}

/*
 * Close the gate (block or disable) while a 400 ms state write is under way:
 * the call returns at once (the main loop never waits for the kernel), the
 * barrier's event comes only after the write returned, and no write may
 * start until the gate opens again.
 */
static void check_barrier_during_state_write(struct ctx *x, bool use_disable)
{
	struct suspender_params p = default_params();
	struct suspend_report rep;
	usec_t t0, t1, begin, end;
	unsigned writes, reads;

	fk.state_block = 400 * MS;
	start(x, &p);
	/* Sent under the gate just before the write. */
	wait_state(x, SUSPENDER_SUSPENDING);
	t0 = now(CLOCK_MONOTONIC);
	if (use_disable)
		suspender_set_enabled(x->s, false);
	else
		suspender_set_blocked(x->s, true);
	/* The flag call never waits: the main loop must go on serving the bus during a long write. */
	pthread_mutex_lock(&fk.lock);
	end = fk.write_end;
	pthread_mutex_unlock(&fk.lock);
	if (end != 0)
		fail_msg("closing the gate returned %lld ms after the 400 ms state write ended; trace %s",
			 ((long long)now(CLOCK_MONOTONIC) - (long long)end) / 1000, fk.trace);
	/* The barrier says a write is under way, and its event comes only once the write returned. */
	assert_true(barrier(x, 3000) > 0);
	t1 = now(CLOCK_MONOTONIC);
	set_closed(true);
	pthread_mutex_lock(&fk.lock);
	begin = fk.write_begin;
	end = fk.write_end;
	writes = fk.state_writes;
	pthread_mutex_unlock(&fk.lock);
	if (writes != 1 || end == 0 || end > t1)
		fail_msg("barrier event at %+lld ms, state write %+lld..%+lld ms (%u writes done); trace %s",
			 ((long long)t1 - (long long)t0) / 1000, begin ? ((long long)begin - (long long)t0) / 1000 : 0,
			 end ? ((long long)end - (long long)t0) / 1000 : 0, writes, fk.trace);
	/* Nothing under way any more, with the flag closed: the barrier passes at once. */
	assert_int_equal(suspender_barrier(x->s), 0);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);

	/* The thread goes round again and must stop short of the state write. */
	if (use_disable) {
		wait_state(x, SUSPENDER_DISABLED);
	} else {
		reads = locked_reads();
		for (usec_t end_wait = now(CLOCK_MONOTONIC) + 2 * USEC_PER_SEC; locked_reads() == reads;) {
			assert_true(now(CLOCK_MONOTONIC) < end_wait);
			usleep(1000);
		}
	}
	/* Absence can only be shown by waiting: give a buggy thread time to write. */
	usleep(200 * 1000);
	assert_int_equal(locked_state_writes(), 1);
	set_closed(false);
	if (use_disable)
		suspender_set_enabled(x->s, true);
	else
		suspender_set_blocked(x->s, false);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_int_equal(fk.violations, 0);
}

static void test_block_waits_for_state_write(void **state)
{
	check_barrier_during_state_write(*state, false);
}

static void test_disable_waits_for_state_write(void **state)
{
	check_barrier_during_state_write(*state, true);
}

/*
 * Blocked by an enforced kernel lock: the call returns while the write is
 * still under way (the kernel backs out of that suspend), and still no write
 * starts after it.
 */
static void test_block_by_kernel_does_not_wait(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;
	usec_t begin, end;
	unsigned reads;

	fk.state_block = 400 * MS;
	start(x, &p);
	wait_state(x, SUSPENDER_SUSPENDING);
	/* SUSPENDING comes just before the write: be sure it began, or this shows nothing. */
	for (usec_t end_wait = now(CLOCK_MONOTONIC) + 2 * USEC_PER_SEC;;) {
		pthread_mutex_lock(&fk.lock);
		begin = fk.write_begin;
		pthread_mutex_unlock(&fk.lock);
		if (begin != 0)
			break;
		assert_true(now(CLOCK_MONOTONIC) < end_wait);
		usleep(1000);
	}
	suspender_set_blocked_by_kernel(x->s);
	pthread_mutex_lock(&fk.lock);
	end = fk.write_end;
	pthread_mutex_unlock(&fk.lock);
	/* A 400 ms write: returning before its end is no accident of timing. */
	if (end != 0)
		fail_msg("returned %lld ms after the state write ended; trace %s",
			 ((long long)now(CLOCK_MONOTONIC) - (long long)end) / 1000, fk.trace);
	set_closed(true);
	wait_result(x, &rep, 2000);
	/* The thread goes round again and must stop short of the state write. */
	reads = locked_reads();
	for (usec_t end_wait = now(CLOCK_MONOTONIC) + 2 * USEC_PER_SEC; locked_reads() == reads;) {
		assert_true(now(CLOCK_MONOTONIC) < end_wait);
		usleep(1000);
	}
	usleep(200 * 1000);
	assert_int_equal(locked_state_writes(), 1);
	set_closed(false);
	suspender_set_blocked(x->s, false);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_int_equal(fk.violations, 0);
}

static void spin(unsigned max_us, unsigned *seed)
{
	usec_t end = now(CLOCK_MONOTONIC) + (usec_t)(rand_r(seed) % (max_us + 1));

	while (now(CLOCK_MONOTONIC) < end)
		;
}

static void drain(struct ctx *x)
{
	struct suspender_event ev;

	x->n_kept = 0;
	while (suspender_read_event(x->s, &ev) > 0)
		;
}

/*
 * Leases and Disable() racing a fast kernel: once a barrier call returned,
 * not one state write may begin until the gate is opened again.
 */
static void check_barrier_stress(struct ctx *x, bool use_disable)
{
	struct suspender_params p = default_params();
	unsigned seed = 8, rounds = 3000, writes, w0, i;

	p.backoff_base = 0;
	fk.no_stats = true;
	fixture_remove(x->dir, SYSFS_CLASS_WAKEUP);
	start(x, &p);
	for (i = 0; i < rounds; i++) {
		drain(x);
		if (use_disable)
			suspender_set_enabled(x->s, false);
		else
			suspender_set_blocked(x->s, true);
		(void)barrier(x, 10000);
		set_closed(true);
		spin(30, &seed);
		w0 = locked_state_writes();
		/* Open our record before the gate, so no legal write is counted. */
		set_closed(false);
		if (use_disable)
			suspender_set_enabled(x->s, true);
		else
			suspender_set_blocked(x->s, false);
		spin(100, &seed);
		/*
		 * How many writes fit in 100 us depends on how the threads are
		 * scheduled (valgrind runs one at a time). So every tenth round
		 * the gate stays open until the kernel saw one: the race always
		 * has writes in it, and an open gate that lets none through fails.
		 * We play the main loop meanwhile: the thread waits for room in
		 * the event pipe before it writes.
		 */
		if (i % 10 == 9)
			for (usec_t end = now(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC; locked_state_writes() == w0;) {
				if (now(CLOCK_MONOTONIC) >= end)
					fail_msg("round %u: no state write within 10 s of opening the gate", i);
				drain(x);
				usleep(50);
			}
	}
	drain(x);
	pthread_mutex_lock(&fk.lock);
	writes = fk.state_writes;
	if (fk.violations > 0)
		fail_msg("%u of %u state writes began after a barrier call returned", fk.violations, writes);
	pthread_mutex_unlock(&fk.lock);
	/* At least one write in each tenth round, by the waits above; most rounds have more. */
	printf("# %s: %u state writes in %u rounds\n", use_disable ? "Disable()" : "leases", writes, rounds);
}

static void test_block_barrier_stress(void **state)
{
	check_barrier_stress(*state, false);
}

static void test_disable_barrier_stress(void **state)
{
	check_barrier_stress(*state, true);
}

/*
 * A backoff beyond INT64_MAX microseconds (DelaySec=10000000000000s) or
 * infinite: the thread backs off, stays alive and still stops at once.
 */
static void check_huge_backoff(struct ctx *x, usec_t base)
{
	struct suspender_params p = default_params();
	struct suspend_report rep;
	unsigned reads;
	usec_t t;

	p.backoff_base = base;
	p.backoff_flat_attempts = 1;
	p.backoff_max = USEC_INFINITY;
	fk.state_error = -EBUSY;
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_true(rep.next_delay == base);
	reads = locked_reads();
	/* The old thread took the delay for "stop" and ended without a word. */
	wait_state(x, SUSPENDER_BACKING_OFF);
	usleep(100 * 1000);
	if (locked_reads() != reads)
		fail_msg("attempts went on during the backoff: %s", fk.trace);
	t = now(CLOCK_MONOTONIC);
	assert_int_equal(suspender_stop(x->s, USEC_PER_SEC), 0);
	assert_true(now(CLOCK_MONOTONIC) - t < 500 * MS);
}

static void test_backoff_beyond_int64(void **state)
{
	check_huge_backoff(*state, 10000000000000ULL * USEC_PER_SEC);
}

static void test_backoff_infinite(void **state)
{
	check_huge_backoff(*state, USEC_INFINITY);
}

static void test_disabled(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspender_event ev;
	struct suspend_report rep;

	assert_int_equal(suspender_new(&p, &x->s), 0);
	suspender_set_enabled(x->s, false);
	assert_int_equal(suspender_start(x->s), 0);
	wait_event(x, SUSPENDER_EVENT_STATE, &ev, 2000);
	assert_int_equal(ev.state, SUSPENDER_DISABLED);
	usleep(200 * 1000);
	assert_int_equal(fk.reads, 0);
	suspender_set_enabled(x->s, true);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
}

/* A loop that owes the main loop a step (the lock step) before its first suspend, and has asked for it. */
static void start_with_step_owed(struct ctx *x, struct suspender_event *ev)
{
	struct suspender_params p = default_params();

	assert_int_equal(suspender_new(&p, &x->s), 0);
	fk.s = x->s;
	suspender_set_prepare(x->s, true);
	assert_int_equal(suspender_start(x->s), 0);
	wait_event(x, SUSPENDER_EVENT_PREPARE, ev, 2000);
}

/* The step is done: the suspend it held back goes through. */
static void step_done(struct ctx *x)
{
	struct suspender_event ev;

	suspender_set_prepare(x->s, false);
	wait_event(x, SUSPENDER_EVENT_RESULT, &ev, 2000);
	assert_int_equal(ev.report.result, SUSPEND_SUCCESS);
}

/*
 * A soak cycle asked for while the thread waits for the main loop's step
 * before a suspend (locking the sessions) is taken at once. The main loop
 * itself waits in suspender_soak() until the thread took the cycle, so a
 * thread that kept waiting for the step would never take it: a deadlock,
 * which SIGALRM turns into a failure here.
 */
static void test_soak_while_waiting_for_prepare(void **state)
{
	struct ctx *x = *state;
	struct soak_request req = { .state = "mem", .read_timeout = SOAK_READ_TIMEOUT_DEFAULT_USEC };
	struct suspender_event ev;

	start_with_step_owed(x, &ev);
	alarm(10);
	suspender_set_paused(x->s, true);
	assert_int_equal(suspender_soak(x->s, &req), 0);
	alarm(0);
	wait_event(x, SUSPENDER_EVENT_SOAK, &ev, 5000);
	/* The step is still owed: after the soak, the next attempt asks for it again. */
	suspender_set_paused(x->s, false);
	wait_event(x, SUSPENDER_EVENT_PREPARE, &ev, 2000);
	step_done(x);
}

/*
 * The lock step ran and another is owed (the user moved the mouse while the
 * screen locked), or the step could not start (a lease or the user came
 * after the ask): suspender_prepare_again() ends the wait with prepare still
 * set, and the thread asks again before it writes anything. Each ask carries
 * the activity count it saw, so the main loop can tell a stale one.
 */
static void test_prepare_asked_again(void **state)
{
	struct ctx *x = *state;
	struct suspender_event ev;

	start_with_step_owed(x, &ev);
	assert_false(suspender_ask_stale(x->s, ev.activity));
	/* A lease taken after the ask makes it stale while it is held. */
	suspender_set_blocked(x->s, true);
	assert_true(suspender_ask_stale(x->s, ev.activity));
	suspender_set_blocked(x->s, false);
	assert_false(suspender_ask_stale(x->s, ev.activity));
	suspender_note_activity(x->s);
	assert_true(suspender_ask_stale(x->s, ev.activity));
	suspender_prepare_again(x->s);
	wait_event(x, SUSPENDER_EVENT_PREPARE, &ev, 2000);
	/* The new ask saw the activity, and nothing was written for the old one. */
	assert_false(suspender_ask_stale(x->s, ev.activity));
	assert_int_equal(locked_state_writes(), 0);
	step_done(x);
}

/*
 * Cleared and set again in two calls before the thread ran: it must ask
 * again, not wait for ever on a flag that only looks unchanged. Whether it
 * writes state between the two calls depends on when it runs, so only the
 * new ask and the suspend after it are checked.
 */
static void test_prepare_cleared_and_set(void **state)
{
	struct ctx *x = *state;
	struct suspender_event ev;

	start_with_step_owed(x, &ev);
	suspender_set_prepare(x->s, false);
	suspender_set_prepare(x->s, true);
	wait_event(x, SUSPENDER_EVENT_PREPARE, &ev, 2000);
	step_done(x);
}

static void set_block_read(bool block)
{
	pthread_mutex_lock(&fk.lock);
	fk.block_read = block;
	pthread_mutex_unlock(&fk.lock);
}

/* Start with the count read blocked (a kernel wakeup source active), and wait until it counts as held up. */
static void start_in_blocked_read(struct ctx *x, struct suspender_params *p)
{
	unsigned reads;

	set_block_read(true);
	start(x, p);
	do {
		usleep(10 * 1000);
		pthread_mutex_lock(&fk.lock);
		reads = fk.reads_entered;
		pthread_mutex_unlock(&fk.lock);
	} while (reads == 0);
	usleep(2 * SUSPEND_BLOCKED_READ_USEC);
}

/*
 * A soak cycle's wakeup_count read blocks (a wakeup source stays active)
 * for its whole read timeout: Disable() on the main loop must not wait for
 * it, only for a state write under way.
 */
static void test_disable_during_soak_read(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct soak_request req = { .state = "mem", .read_timeout = 5 * USEC_PER_SEC };
	struct suspender_event ev;
	unsigned reads;
	usec_t t0, took;

	/* The loop's own read blocks first; the soak's read is then the second. */
	start_in_blocked_read(x, &p);
	suspender_set_paused(x->s, true);
	alarm(10);
	assert_int_equal(suspender_soak(x->s, &req), 0);
	alarm(0);
	do {
		usleep(10 * 1000);
		pthread_mutex_lock(&fk.lock);
		reads = fk.reads_entered;
		pthread_mutex_unlock(&fk.lock);
	} while (reads < 2);
	t0 = now(CLOCK_MONOTONIC);
	suspender_set_enabled(x->s, false);
	took = now(CLOCK_MONOTONIC) - t0;
	fprintf(stderr, "# Disable() during a blocked soak read returned after %.1f ms\n", (double)took / MS);
	assert_true(took < 100 * MS);
	/* A read is no state write: the barrier does not wait for it. */
	assert_int_equal(suspender_barrier(x->s), 0);
	/* And a lease while the read blocks: no barrier to wait at either. */
	t0 = now(CLOCK_MONOTONIC);
	suspender_set_blocked(x->s, true);
	took = now(CLOCK_MONOTONIC) - t0;
	assert_true(took < 100 * MS);
	set_block_read(false);
	wait_event(x, SUSPENDER_EVENT_SOAK, &ev, 10000);
	/* The lease came before the state write: the cycle is blocked, and no state write happened. */
	assert_int_equal(ev.soak.result, SOAK_BLOCKED);
	assert_int_equal(locked_state_writes(), 0);
}

/*
 * After a read the kernel lock held up (a lease, released), the thread reads
 * the sources once, for who kept it awake, and those stand in for the
 * snapshot before the count write: one look at every source between the
 * release and the state write, not two. Each look costs a few files per
 * source, and a laptop has dozens.
 */
static void test_one_look_at_sources_after_blocked_read(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;
	unsigned at_count, at_write, sources = 0;
	DIR *d;
	struct dirent *de;
	char path[512];

	snprintf(path, sizeof(path), "%s/sys/class/wakeup", x->dir);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		sources += de->d_name[0] != '.';
	closedir(d);
	assert_true(sources > 0);
	start_in_blocked_read(x, &p);
	set_block_read(false);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	pthread_mutex_lock(&fk.lock);
	at_count = fk.source_reads_at_count;
	at_write = fk.source_reads_at_write;
	pthread_mutex_unlock(&fk.lock);
	assert_int_equal(at_write - at_count, sources);
}

/*
 * Who kept us awake is reported even when the attempt whose read it held up
 * started over: here a lease comes while the read is blocked by a kernel
 * wakeup source (a shell's wake_lock, say), so that attempt never reports;
 * the next one must name the source with the time it was active.
 */
static void test_blockers_survive_a_restart(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;

	fixture_write(x->dir, "sys/class/wakeup/wakeup1/total_time_ms", "100\n");
	/* The thread took its "before" look at the sources just before the read. */
	start_in_blocked_read(x, &p);
	suspender_set_blocked(x->s, true);
	fixture_write(x->dir, "sys/class/wakeup/wakeup1/total_time_ms", "5100\n");
	set_block_read(false);
	usleep(100 * 1000);
	suspender_set_blocked(x->s, false);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_int_equal(rep.n_blockers, 1);
	assert_string_equal(rep.blockers[0].name, "rtc0");
	assert_int_equal(rep.blockers[0].ms, 5000);
}

static void test_unreadable_wakeup_count(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;
	char *log;

	/* Not the fake kernel's count: a sysfs surprise in the fixture file itself. */
	sysfs_inject_set(NULL);
	fixture_write(x->dir, SYSFS_POWER_WAKEUP_COUNT, "garbage\n");
	start(x, &p);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.result, SUSPEND_FAILURE);
	assert_int_equal(rep.error, -EBADMSG);
	assert_int_equal(rep.bad_streak, 1);
	wait_result(x, &rep, 2000);
	assert_int_equal(rep.bad_streak, 2);
	log = fixture_read(x->dir, SYSFS_POWER_STATE);
	assert_string_equal(log, "freeze mem disk\n");
	free(log);
}

static void test_dry_run_writes_nothing(void **state)
{
	struct ctx *x = *state;
	struct suspender_params p = default_params();
	struct suspend_report rep;
	char *log;

	p.dry_run = true;
	stderr_capture_begin();
	start(x, &p);
	wait_result(x, &rep, 2000);
	wait_result(x, &rep, 2000);
	assert_int_equal(suspender_stop(x->s, USEC_PER_SEC), 0);
	log = stderr_capture_end();
	assert_int_equal(rep.result, SUSPEND_SUCCESS);
	assert_string_equal(rep.wake_reason, "dry-run");
	assert_int_equal(locked_state_writes(), 0);
	assert_null(strstr(fk.trace, "W"));
	assert_non_null(strstr(log, "Dry run: would write 5 to wakeup_count"));
	assert_non_null(strstr(log, "Dry run: would write mem to state"));
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_protocol_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_state_write_while_lease_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_after_count_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_early_cancel_retries_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_sequence_and_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_cancel_by_own_lease_not_blocked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_cancel_by_noirq_irq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_cancel_blames_no_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_device_not_blamed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wake_reason_from_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_suspend_backoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_suspend_off_by_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_during_blocking_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_during_blocking_state_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_waits_for_state_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disable_waits_for_state_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_by_kernel_does_not_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_barrier_stress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disable_barrier_stress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_beyond_int64, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_infinite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_soak_while_waiting_for_prepare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_asked_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_cleared_and_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disable_during_soak_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blockers_survive_a_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_look_at_sources_after_blocked_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_wakeup_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run_writes_nothing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
