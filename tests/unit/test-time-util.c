/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "time-util.h"

#define MS USEC_PER_MSEC
#define SEC USEC_PER_SEC

static void test_add(void **state)
{
	(void)state;
	assert_int_equal(usec_add(0, 0), 0);
	assert_int_equal(usec_add(1, 2), 3);
	/* The largest finite sum, then one more: never a wrap to "soon". */
	assert_int_equal(usec_add(USEC_INFINITY - 2, 1), USEC_INFINITY - 1);
	assert_int_equal(usec_add(USEC_INFINITY - 1, 1), USEC_INFINITY);
	assert_int_equal(usec_add(USEC_INFINITY - 1, USEC_INFINITY - 1), USEC_INFINITY);
	assert_int_equal(usec_add(UINT64_MAX / 2 + 1, UINT64_MAX / 2 + 1), USEC_INFINITY);
	assert_int_equal(usec_add(USEC_INFINITY, 0), USEC_INFINITY);
	assert_int_equal(usec_add(0, USEC_INFINITY), USEC_INFINITY);
	assert_int_equal(usec_add(USEC_INFINITY, USEC_INFINITY), USEC_INFINITY);
}

static void test_sub(void **state)
{
	(void)state;
	assert_int_equal(usec_sub_unsigned(5, 3), 2);
	assert_int_equal(usec_sub_unsigned(3, 5), 0);
	assert_int_equal(usec_sub_unsigned(0, USEC_INFINITY - 1), 0);
	assert_int_equal(usec_sub_unsigned(USEC_INFINITY, 5), USEC_INFINITY);
	assert_int_equal(usec_sub_unsigned(USEC_INFINITY - 1, USEC_INFINITY - 1), 0);
}

static void test_mul(void **state)
{
	(void)state;
	assert_int_equal(usec_mul(0, UINT64_MAX), 0);
	assert_int_equal(usec_mul(7, 6), 42);
	assert_int_equal(usec_mul(UINT64_MAX / 1000, 1000), UINT64_MAX / 1000 * 1000);
	assert_int_equal(usec_mul(UINT64_MAX / 1000 + 1, 1000), USEC_INFINITY);
	assert_int_equal(usec_mul(1ULL << 32, 1ULL << 32), USEC_INFINITY);
	assert_int_equal(usec_mul(USEC_INFINITY, 1), USEC_INFINITY);
	assert_int_equal(usec_mul(USEC_INFINITY, 0), USEC_INFINITY);
}

static void test_to_nsec(void **state)
{
	nsec_t n = 42;

	(void)state;
	assert_int_equal(usec_to_nsec(0, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(usec_to_nsec(30 * SEC, &n), 0);
	assert_int_equal(n, 30000000000ULL);
	/* 18446744073709551 us is the last one whose nanoseconds fit 64 bits. */
	assert_int_equal(usec_to_nsec(UINT64_MAX / 1000, &n), 0);
	assert_int_equal(n, 18446744073709551000ULL);
	n = 42;
	assert_int_equal(usec_to_nsec(UINT64_MAX / 1000 + 1, &n), -ERANGE);
	assert_int_equal(usec_to_nsec(USEC_INFINITY - 1, &n), -ERANGE);
	assert_int_equal(usec_to_nsec(USEC_INFINITY, &n), -ERANGE);
	assert_int_equal(n, 42);
}

static void test_timespec(void **state)
{
	struct timespec ts = { .tv_sec = 3, .tv_nsec = 500999 };

	(void)state;
	assert_int_equal(timespec_load(&ts), 3 * SEC + 500);
	ts = timespec_from_usec(3 * SEC + 500);
	assert_int_equal(ts.tv_sec, 3);
	assert_int_equal(ts.tv_nsec, 500000);
	/* A seconds count whose microseconds do not fit saturates. */
	ts = (struct timespec){ .tv_sec = (time_t)(UINT64_MAX / SEC) + 1 };
	assert_int_equal(timespec_load(&ts), USEC_INFINITY);
}

static void expect_sec(const char *s, usec_t want)
{
	usec_t u = 12345;
	int r = parse_sec(s, &u);

	if (r != 0 || u != want)
		fail_msg("parse_sec(\"%s\") = %d, %llu; expected 0, %llu", s, r, (unsigned long long)u,
			 (unsigned long long)want);
}

static void expect_sec_error(const char *s, int want)
{
	usec_t u = 12345;
	int r = parse_sec(s, &u);

	if (r != want || u != 12345)
		fail_msg("parse_sec(\"%s\") = %d, %llu; expected %d and no value", s, r, (unsigned long long)u, want);
}

static void test_parse_sec_valid(void **state)
{
	(void)state;
	expect_sec("0", 0);
	expect_sec("0s", 0);
	expect_sec("0.000s", 0);
	expect_sec("5", 5 * SEC);
	expect_sec("100ms", 100 * MS);
	expect_sec("100 ms", 100 * MS);
	expect_sec(" 1.5s ", 1500 * MS);
	expect_sec("1min 30s", 90 * SEC);
	expect_sec("1min30s", 90 * SEC);
	expect_sec("2m", 120 * SEC);
	expect_sec("1h", 3600 * SEC);
	expect_sec("1.25hour", 4500 * SEC);
	expect_sec("7us", 7);
	expect_sec("7usec", 7);
	expect_sec("3msec", 3 * MS);
	expect_sec("0.5us", 1);
	expect_sec("0.000001s", 1);
	expect_sec("0.0000015s", 2);
	expect_sec("1.000000000000000000000000001s", SEC);
	expect_sec("0.1h", 360 * SEC);
	expect_sec("0.001min", 60 * MS);
	expect_sec("infinity", USEC_INFINITY);
	expect_sec("  infinity  ", USEC_INFINITY);
	/* The largest finite value, in us and in seconds with a fraction. */
	expect_sec("18446744073709551614us", USEC_INFINITY - 1);
	expect_sec("18446744073709.551614s", USEC_INFINITY - 1);
}

static void test_parse_sec_strict(void **state)
{
	(void)state;
	expect_sec_error("", -EINVAL);
	expect_sec_error("   ", -EINVAL);
	expect_sec_error("soon", -EINVAL);
	expect_sec_error("0x10", -EINVAL);
	expect_sec_error("0x10s", -EINVAL);
	expect_sec_error("1e-9", -EINVAL);
	expect_sec_error("1e3", -EINVAL);
	expect_sec_error("1E3s", -EINVAL);
	expect_sec_error("inf", -EINVAL);
	expect_sec_error("INF", -EINVAL);
	expect_sec_error("Infinity", -EINVAL);
	expect_sec_error("nan", -EINVAL);
	expect_sec_error("infinity 5s", -EINVAL);
	expect_sec_error("5s infinity", -EINVAL);
	expect_sec_error("-5s", -EINVAL);
	expect_sec_error("+5s", -EINVAL);
	expect_sec_error("5s -1s", -EINVAL);
	expect_sec_error(".5s", -EINVAL);
	expect_sec_error("5.s", -EINVAL);
	expect_sec_error("1.2.3s", -EINVAL);
	expect_sec_error("5 fortnights", -EINVAL);
}

static void test_parse_sec_range(void **state)
{
	(void)state;
	/* A non-zero value below 1 us is an error, never a silent 0. */
	expect_sec_error("0.0000001s", -ERANGE);
	expect_sec_error("0.4us", -ERANGE);
	expect_sec_error("0.0000000000000000001s", -ERANGE);
	expect_sec_error("1s 0.1us", -ERANGE);
	/* Anything that does not fit, and the finite value that would read as infinity. */
	expect_sec_error("18446744073709551615us", -ERANGE);
	expect_sec_error("18446744073709551616us", -ERANGE);
	expect_sec_error("99999999999999999999999999s", -ERANGE);
	expect_sec_error("10000000000000000s", -ERANGE);
	expect_sec_error("18446744073709551614us 1us", -ERANGE);
	expect_sec_error("5124095576030431h", -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_sub),
		cmocka_unit_test(test_mul),
		cmocka_unit_test(test_to_nsec),
		cmocka_unit_test(test_timespec),
		cmocka_unit_test(test_parse_sec_valid),
		cmocka_unit_test(test_parse_sec_strict),
		cmocka_unit_test(test_parse_sec_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
