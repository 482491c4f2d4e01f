/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "idle.h"

#define S USEC_PER_SEC
#define MS USEC_PER_MSEC

static void test_idle_excludes_time_asleep(void **state)
{
	struct idle_clock c;

	(void)state;
	idle_clock_input(&c, 1000 * S, 50 * S);
	assert_int_equal(idle_clock_idle(&c, 1010 * S, 50 * S), 10 * S);
	/* Suspended for an hour, 5 s awake before and after: 10 s idle, not an hour. */
	assert_int_equal(idle_clock_idle(&c, 1000 * S + 5 * S + 3600 * S + 5 * S, 50 * S + 3600 * S), 10 * S);
	/* New input resets it. */
	idle_clock_input(&c, 5000 * S, 3650 * S);
	assert_int_equal(idle_clock_idle(&c, 5000 * S, 3650 * S), 0);
	assert_int_equal(idle_clock_idle(&c, 5002 * S, 3650 * S), 2 * S);
	/* A clock that went backwards never yields a huge idle time. */
	assert_int_equal(idle_clock_idle(&c, 4000 * S, 3650 * S), 0);
}

static void test_one_write_per_interval(void **state)
{
	struct refresh_limiter r = { .interval = S };
	unsigned writes = 0;

	(void)state;
	/* A 1000 events/s flood for 10 s: one immediate write, then one per second. */
	for (usec_t t = 0; t < 10 * S; t += MS) {
		if (r.pending && t >= refresh_limiter_due(&r)) {
			refresh_limiter_flush(&r, t);
			writes++;
		}
		if (refresh_limiter_event(&r, 100 * S + t))
			writes++;
	}
	assert_true(writes <= 11);
	assert_true(writes >= 10);
}

static void test_pending_event_not_lost(void **state)
{
	struct refresh_limiter r = { .interval = S };

	(void)state;
	assert_true(refresh_limiter_event(&r, 10 * S));
	assert_int_equal(refresh_limiter_due(&r), USEC_INFINITY);
	/* 300 ms later: too soon to write, but due at the end of the interval. */
	assert_false(refresh_limiter_event(&r, 10 * S + 300 * MS));
	assert_int_equal(refresh_limiter_due(&r), 11 * S);
	assert_int_equal(r.last_event, 10 * S + 300 * MS);
	refresh_limiter_flush(&r, 11 * S);
	assert_int_equal(refresh_limiter_due(&r), USEC_INFINITY);
	/* After a quiet spell the next event writes at once. */
	assert_true(refresh_limiter_event(&r, 20 * S));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_excludes_time_asleep),
		cmocka_unit_test(test_one_write_per_interval),
		cmocka_unit_test(test_pending_event_not_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
