/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "backoff.h"

#define MS USEC_PER_MSEC

static void test_default_sequence(void **state)
{
	/* Defaults: B=100ms, S=2, N=0, M=60s. */
	static const usec_t expect[] = { 100 * MS, 200 * MS, 400 * MS, 800 * MS, 1600 * MS, 3200 * MS,
					 6400 * MS, 12800 * MS, 25600 * MS, 51200 * MS, 60000 * MS, 60000 * MS };
	struct backoff b;

	(void)state;
	backoff_init(&b, 100 * MS, 2.0, 0, 60 * USEC_PER_SEC);
	assert_int_equal(backoff_delay(&b), 100 * MS);
	for (unsigned i = 1; i < sizeof(expect) / sizeof(expect[0]); i++) {
		backoff_bad(&b);
		assert_int_equal(b.bad, i);
		assert_int_equal(backoff_delay(&b), expect[i]);
	}
}

static void test_flat_attempts(void **state)
{
	struct backoff b;

	(void)state;
	/* N=3: three bad attempts at B, then B*S^(n-N). */
	backoff_init(&b, 50 * MS, 3.0, 3, 10 * USEC_PER_SEC);
	backoff_bad(&b);
	assert_int_equal(backoff_delay(&b), 50 * MS);
	backoff_bad(&b);
	assert_int_equal(backoff_delay(&b), 50 * MS);
	backoff_bad(&b);
	assert_int_equal(backoff_delay(&b), 50 * MS);
	backoff_bad(&b);
	assert_int_equal(backoff_delay(&b), 150 * MS);
	backoff_bad(&b);
	assert_int_equal(backoff_delay(&b), 450 * MS);
}

static void test_reset_on_good(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 100 * MS, 2.0, 0, 60 * USEC_PER_SEC);
	for (int i = 0; i < 5; i++)
		backoff_bad(&b);
	assert_int_equal(backoff_delay(&b), 3200 * MS);
	backoff_good(&b);
	assert_int_equal(b.bad, 0);
	assert_int_equal(backoff_delay(&b), 100 * MS);
}

static void test_cap_without_overflow(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 100 * MS, 10.0, 0, 60 * USEC_PER_SEC);
	/* 10^400 overflows a double; the cap must still hold. */
	for (int i = 0; i < 400; i++)
		backoff_bad(&b);
	assert_int_equal(backoff_delay(&b), 60 * USEC_PER_SEC);
}

static void test_multiplier_one_is_constant(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 250 * MS, 1.0, 0, 60 * USEC_PER_SEC);
	for (int i = 0; i < 10; i++) {
		backoff_bad(&b);
		assert_int_equal(backoff_delay(&b), 250 * MS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_sequence),
		cmocka_unit_test(test_flat_attempts),
		cmocka_unit_test(test_reset_on_good),
		cmocka_unit_test(test_cap_without_overflow),
		cmocka_unit_test(test_multiplier_one_is_constant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
