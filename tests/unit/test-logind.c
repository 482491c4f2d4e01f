/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>

#include "logind.h"

/* logind.c reports to the manager; this test only covers the pure parts. */
struct manager;
void manager_set_logind_block(struct manager *m, bool blocked, const char *who);
void manager_set_logind_block(struct manager *m, bool blocked, const char *who)
{
	(void)m;
	(void)blocked;
	(void)who;
}

static void test_which_inhibitors_block(void **state)
{
	(void)state;
	assert_true(logind_inhibitor_blocks("sleep", "block", 100, 1));
	assert_true(logind_inhibitor_blocks("idle", "block", 100, 1));
	assert_true(logind_inhibitor_blocks("shutdown:sleep", "block", 100, 1));
	assert_true(logind_inhibitor_blocks("sleep:handle-lid-switch", "block", 100, 1));
	/* Delay inhibitors only postpone logind's own suspend by seconds. */
	assert_false(logind_inhibitor_blocks("sleep", "delay", 100, 1));
	assert_false(logind_inhibitor_blocks("shutdown", "block", 100, 1));
	assert_false(logind_inhibitor_blocks("handle-lid-switch", "block", 100, 1));
	/* Prefixes are not matches. */
	assert_false(logind_inhibitor_blocks("sleepy:idler", "block", 100, 1));
	/* Our own inhibitor (HoldSleepInhibitor=yes) must never hold us. */
	assert_false(logind_inhibitor_blocks("sleep", "block", 42, 42));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_inhibitors_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
