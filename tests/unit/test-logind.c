/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "logind.h"
#include "system-uid.h"

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
	assert_int_equal(logind_inhibitor_hold("sleep", "block", 0, 100, 1), INHIBITOR_HOLDS);
	assert_int_equal(logind_inhibitor_hold("idle", "block", 0, 100, 1), INHIBITOR_HOLDS_LID_OPEN);
	assert_int_equal(logind_inhibitor_hold("shutdown:sleep", "block", 0, 100, 1), INHIBITOR_HOLDS);
	assert_int_equal(logind_inhibitor_hold("sleep:handle-lid-switch", "block", 0, 100, 1), INHIBITOR_HOLDS);
	/* Delay inhibitors only postpone logind's own suspend by seconds. */
	assert_int_equal(logind_inhibitor_hold("sleep", "delay", 0, 100, 1), INHIBITOR_HOLDS_NOT);
	assert_int_equal(logind_inhibitor_hold("shutdown", "block", 0, 100, 1), INHIBITOR_HOLDS_NOT);
	assert_int_equal(logind_inhibitor_hold("handle-lid-switch", "block", 0, 100, 1), INHIBITOR_HOLDS_NOT);
	/* Prefixes are not matches. */
	assert_int_equal(logind_inhibitor_hold("sleepy:idler", "block", 0, 100, 1), INHIBITOR_HOLDS_NOT);
	/* Our own inhibitor (HoldSleepInhibitor=yes) must never hold us. */
	assert_int_equal(logind_inhibitor_hold("sleep", "block", 0, 42, 42), INHIBITOR_HOLDS_NOT);
}

/*
 * What a closed lid overrides, at the edges of the system range: a system
 * service's sleep holds, a user's sleep and anybody's idle do not.
 */
static void test_what_the_lid_overrides(void **state)
{
	(void)state;
	assert_int_equal(logind_inhibitor_hold("sleep", "block", SYSTEM_UID_MAX, 100, 1), INHIBITOR_HOLDS);
	assert_int_equal(logind_inhibitor_hold("sleep", "block", SYSTEM_UID_MAX + 1, 100, 1),
			 INHIBITOR_HOLDS_LID_OPEN);
	assert_int_equal(logind_inhibitor_hold("sleep", "block", 65534, 100, 1), INHIBITOR_HOLDS_LID_OPEN);
	assert_int_equal(logind_inhibitor_hold("sleep", "block", UINT32_MAX, 100, 1), INHIBITOR_HOLDS_LID_OPEN);
	/* Root's idle too: idle says someone watches the screen. */
	assert_int_equal(logind_inhibitor_hold("idle", "block", 0, 100, 1), INHIBITOR_HOLDS_LID_OPEN);
	assert_int_equal(logind_inhibitor_hold("idle:sleep", "block", 1000, 100, 1), INHIBITOR_HOLDS_LID_OPEN);
	assert_int_equal(logind_inhibitor_hold("idle:sleep", "block", 0, 100, 1), INHIBITOR_HOLDS);
	assert_int_equal(logind_inhibitor_hold("idle", "delay", 65534, 100, 1), INHIBITOR_HOLDS_NOT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_inhibitors_block),
		cmocka_unit_test(test_what_the_lid_overrides),
		cmocka_unit_test(test_who_takes_the_lid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
