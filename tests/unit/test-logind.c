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

void manager_set_lid_handler(struct manager *m, const char *other);
void manager_set_lid_handler(struct manager *m, const char *other)
{
	(void)m;
	(void)other;
}
void manager_lid_docked(struct manager *m, bool docked);
void manager_lid_docked(struct manager *m, bool docked)
{
	(void)m;
	(void)docked;
}

static void test_who_takes_the_lid(void **state)
{
	(void)state;
	/* gsd-power and PowerDevil take handle-lid-switch in block mode: the lid is theirs. */
	assert_true(logind_inhibitor_takes_lid("handle-lid-switch", "block", 100, 1));
	assert_true(logind_inhibitor_takes_lid("handle-power-key:handle-suspend-key:handle-lid-switch", "block", 100, 1));
	assert_false(logind_inhibitor_takes_lid("handle-lid-switch", "delay", 100, 1));
	assert_false(logind_inhibitor_takes_lid("handle-suspend-key", "block", 100, 1));
	assert_false(logind_inhibitor_takes_lid("handle-lid-switchy", "block", 100, 1));
	/* Our own does not make the lid someone else's. */
	assert_false(logind_inhibitor_takes_lid("handle-lid-switch:handle-suspend-key", "block", 42, 42));
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
		cmocka_unit_test(test_who_takes_the_lid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
