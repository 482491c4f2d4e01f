/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "event-util.h"
#include "macro.h"
#include "time-util.h"

struct fired {
	unsigned n;
	uint64_t at;
};

static int on_time(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct fired *f = userdata;

	(void)s;
	f->n++;
	f->at = usec;
	return 0;
}

/* Run e until f fired n times or 2 s passed. */
static void run_until(sd_event *e, const struct fired *f, unsigned n)
{
	usec_t end = now(CLOCK_MONOTONIC) + 2 * USEC_PER_SEC;

	while (f->n < n && now(CLOCK_MONOTONIC) < end)
		assert_true(sd_event_run(e, 100 * USEC_PER_MSEC) >= 0);
}

static void test_made_once_then_moved(void **state)
{
	sd_event *e = NULL;
	sd_event_source *s = NULL, *first;
	struct fired f = { 0 };
	uint64_t due;

	(void)state;
	assert_int_equal(sd_event_new(&e), 0);
	assert_false(event_source_armed(NULL));
	assert_int_equal(event_reset_time(e, &s, CLOCK_MONOTONIC, 10 * USEC_PER_SEC, 0, on_time, &f, true), 0);
	first = s;
	assert_true(event_source_armed(s));
	/* Moved, not made again: the same source, now due soon. */
	assert_int_equal(event_reset_time(e, &s, CLOCK_MONOTONIC, 20 * USEC_PER_MSEC, 0, on_time, &f, true), 0);
	assert_ptr_equal(s, first);
	assert_true(sd_event_source_get_time(s, &due) >= 0);
	assert_true(due < now(CLOCK_MONOTONIC) + USEC_PER_SEC);
	run_until(e, &f, 1);
	assert_int_equal(f.n, 1);
	/* One shot: off once fired, and armed again by the next call. */
	assert_false(event_source_armed(s));
	assert_int_equal(event_reset_time(e, &s, CLOCK_MONOTONIC, 10 * USEC_PER_MSEC, 0, on_time, &f, true), 0);
	assert_true(event_source_armed(s));
	run_until(e, &f, 2);
	assert_int_equal(f.n, 2);
	sd_event_source_disable_unref(s);
	sd_event_unref(e);
}

/* Absolute times, on CLOCK_BOOTTIME as the lease deadlines use; the accuracy follows the last call. */
static void test_absolute_and_accuracy(void **state)
{
	sd_event *e = NULL;
	sd_event_source *s = NULL;
	struct fired f = { 0 };
	uint64_t due, acc;
	usec_t t0 = now(CLOCK_BOOTTIME);

	(void)state;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(event_reset_time(e, &s, CLOCK_BOOTTIME, t0 + 60 * USEC_PER_SEC, USEC_PER_SEC, on_time, &f,
					  false),
			 0);
	assert_int_equal(event_reset_time(e, &s, CLOCK_BOOTTIME, t0 + 30 * USEC_PER_MSEC, 1, on_time, &f, false), 0);
	assert_true(sd_event_source_get_time(s, &due) >= 0);
	assert_int_equal(due, t0 + 30 * USEC_PER_MSEC);
	assert_true(sd_event_source_get_time_accuracy(s, &acc) >= 0);
	assert_int_equal(acc, 1);
	run_until(e, &f, 1);
	assert_int_equal(f.n, 1);
	assert_true(f.at >= t0 + 30 * USEC_PER_MSEC);
	sd_event_source_disable_unref(s);
	sd_event_unref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_once_then_moved),
		cmocka_unit_test(test_absolute_and_accuracy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
