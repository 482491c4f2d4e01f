/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The records of stored leases, as a restarted daemon reads them: what the
 * last instance wrote, and what an older one (0.1, without lid=) wrote.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lease-store.h"

#define RECORD "id=7\nname=build\nowner=:1.14\nwhy=a user's build\nuid=1000\npid=42\nsince=5\n" \
	       "since_realtime=6\ndeadline=18446744073709551615\n"

static const char *bus;

static int parse(const char *text, struct lease_spec *spec)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "%s", text);
	return lease_record_parse(buf, spec, &bus);
}

static void test_record_fields(void **state)
{
	struct lease_spec spec;

	(void)state;
	assert_int_equal(parse(RECORD "lid=1\n", &spec), 0);
	assert_int_equal(spec.id, 7);
	assert_string_equal(spec.name, "build");
	assert_string_equal(spec.owner, ":1.14");
	assert_int_equal(spec.uid, 1000);
	assert_int_equal(spec.pid, 42);
	assert_true(spec.lid);
	assert_int_equal(parse(RECORD "lid=0\n", &spec), 0);
	assert_false(spec.lid);
}

/* A record of 0.1 has no lid line: taken without LidClosed, as every lock then was. */
static void test_record_without_lid(void **state)
{
	struct lease_spec spec;

	(void)state;
	assert_int_equal(parse(RECORD, &spec), 0);
	assert_false(spec.lid);
}

/* Anything else in lid= is not a record we wrote: the lease is dropped, never guessed. */
static void test_record_bad_lid(void **state)
{
	struct lease_spec spec;

	(void)state;
	assert_int_equal(parse(RECORD "lid=2\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "lid=\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "lid=yes\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "lid=-1\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "lid=18446744073709551616\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "lid=18446744073709551615\n", &spec), -EBADMSG);
}

/* The bus a lock was taken on: 32 lowercase hex digits, or no line at all (0.1). */
static void test_record_bus(void **state)
{
	struct lease_spec spec;

	(void)state;
	assert_int_equal(parse(RECORD "lid=0\nbus=0123456789abcdef0123456789abcdef\n", &spec), 0);
	assert_string_equal(bus, "0123456789abcdef0123456789abcdef");
	assert_int_equal(parse(RECORD, &spec), 0);
	assert_null(bus);
	assert_int_equal(parse(RECORD "bus=0123456789abcdef0123456789abcde\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "bus=0123456789abcdef0123456789abcdef0\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "bus=0123456789ABCDEF0123456789abcdef\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "bus=\n", &spec), -EBADMSG);
	assert_int_equal(parse(RECORD "bus=:1.14\n", &spec), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_fields),
		cmocka_unit_test(test_record_without_lid),
		cmocka_unit_test(test_record_bad_lid),
		cmocka_unit_test(test_record_bus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
