/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fenv.h>
#include <limits.h>
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

/* Delay with n bad attempts, and proof that no inf or NaN was made on the way. */
static usec_t delay_at(struct backoff *b, unsigned n)
{
	usec_t d;

	b->bad = n;
	feclearexcept(FE_ALL_EXCEPT);
	d = backoff_delay(b);
	if (fetestexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO))
		fail_msg("backoff_delay(base=%llu, multiplier=%g, flat=%u, max=%llu, bad=%u) raised %s%s%s",
			 (unsigned long long)b->base, b->multiplier, b->flat, (unsigned long long)b->max, n,
			 fetestexcept(FE_OVERFLOW) ? "FE_OVERFLOW " : "", fetestexcept(FE_INVALID) ? "FE_INVALID " : "",
			 fetestexcept(FE_DIVBYZERO) ? "FE_DIVBYZERO" : "");
	return d;
}

static void test_extreme_multiplier(void **state)
{
	struct backoff b;

	(void)state;
	/* The largest multiplier, the smallest base, the largest MaxDelaySec. */
	backoff_init(&b, 1, 1000.0, 0, USEC_PER_DAY);
	assert_int_equal(delay_at(&b, 0), 1);
	assert_int_equal(delay_at(&b, 1), 1000);
	assert_int_equal(delay_at(&b, 2), 1000000);
	assert_int_equal(delay_at(&b, 3), 1000000000);
	assert_int_equal(delay_at(&b, 4), USEC_PER_DAY);
	assert_int_equal(delay_at(&b, 103), USEC_PER_DAY);
	assert_int_equal(delay_at(&b, 1u << 20), USEC_PER_DAY);
	assert_int_equal(delay_at(&b, BACKOFF_BAD_MAX), USEC_PER_DAY);
	/* A multiplier just above 1 reaches the cap without iterating or overflowing. */
	backoff_init(&b, 1, 1.000001, 0, USEC_PER_DAY);
	assert_int_equal(delay_at(&b, BACKOFF_BAD_MAX), USEC_PER_DAY);
	backoff_init(&b, 1, 2.0, 0, USEC_INFINITY);
	assert_int_equal(delay_at(&b, 63), 1ULL << 63);
	assert_int_equal(delay_at(&b, 64), USEC_INFINITY);
	assert_int_equal(delay_at(&b, BACKOFF_BAD_MAX), USEC_INFINITY);
}

static void test_base_equals_max(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 5 * USEC_PER_SEC, 1000.0, 0, 5 * USEC_PER_SEC);
	assert_int_equal(delay_at(&b, 0), 5 * USEC_PER_SEC);
	assert_int_equal(delay_at(&b, 1), 5 * USEC_PER_SEC);
	assert_int_equal(delay_at(&b, BACKOFF_BAD_MAX), 5 * USEC_PER_SEC);
}

static void test_zero_base(void **state)
{
	struct backoff b;

	(void)state;
	/* 0 * 2^1100 is 0, not NaN, and not the cap either. */
	backoff_init(&b, 0, 2.0, 0, 60 * USEC_PER_SEC);
	assert_int_equal(delay_at(&b, 1), 0);
	assert_int_equal(delay_at(&b, 1100), 0);
	assert_int_equal(delay_at(&b, BACKOFF_BAD_MAX), 0);
}

static void test_huge_flat_and_saturation(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 100 * MS, 1000.0, UINT_MAX, 60 * USEC_PER_SEC);
	assert_int_equal(delay_at(&b, BACKOFF_BAD_MAX), 100 * MS);
	b.bad = BACKOFF_BAD_MAX - 1;
	backoff_bad(&b);
	assert_int_equal(b.bad, BACKOFF_BAD_MAX);
	backoff_bad(&b);
	assert_int_equal(b.bad, BACKOFF_BAD_MAX);
	assert_int_equal(backoff_delay(&b), 100 * MS);
	/* flat just below the count: one step of the multiplier. */
	backoff_init(&b, 100 * MS, 2.0, BACKOFF_BAD_MAX - 1, 60 * USEC_PER_SEC);
	assert_int_equal(delay_at(&b, BACKOFF_BAD_MAX), 200 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_sequence),
		cmocka_unit_test(test_flat_attempts),
		cmocka_unit_test(test_reset_on_good),
		cmocka_unit_test(test_cap_without_overflow),
		cmocka_unit_test(test_multiplier_one_is_constant),
		cmocka_unit_test(test_extreme_multiplier),
		cmocka_unit_test(test_base_equals_max),
		cmocka_unit_test(test_zero_base),
		cmocka_unit_test(test_huge_flat_and_saturation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
