/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/wake.c: the two rounds after a resume. Every observer hears
 * IDENTIFY before any hears RESUMED, whatever the order they registered in;
 * a timer named in IDENTIFY is written into the wake reason; the list is
 * capped and observers leave cleanly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "wake.h"

struct probe {
	const char *names;   /* what it names in IDENTIFY, NULL for nothing */
	char seen[64];       /* "I" and "R" per round heard, "I:<timer>" as RESUMED saw it */
};

static char order[64];

static void on_wake(enum wake_event ev, struct wake *w, void *userdata)
{
	struct probe *p = userdata;
	size_t n = strlen(p->seen), o = strlen(order);

	if (ev == WAKE_IDENTIFY) {
		snprintf(p->seen + n, sizeof(p->seen) - n, "I");
		if (p->names)
			snprintf(w->timer, sizeof(w->timer), "%s", p->names);
	} else {
		snprintf(p->seen + n, sizeof(p->seen) - n, "R:%s", w->timer);
	}
	snprintf(order + o, sizeof(order) - o, "%c", ev == WAKE_IDENTIFY ? 'I' : 'R');
}

static void test_rounds(void **state)
{
	struct wake_observers o = {};
	struct probe activity = {}, timers = { .names = "backup.timer" };
	char reason[96] = "rtc0 alarm";
	struct wake w;

	(void)state;
	order[0] = 0;
	/* activity first, as the daemon registers them: it still sees the timer timers.c names. */
	assert_int_equal(wake_observe(&o, on_wake, &activity), 0);
	assert_int_equal(wake_observe(&o, on_wake, &timers), 0);
	wake_identify(&o, &w, reason, sizeof(reason), 10 * USEC_PER_SEC, 4 * USEC_PER_SEC, false);
	assert_string_equal(order, "II");
	assert_string_equal(reason, "backup.timer (rtc0 alarm)");
	assert_int_equal(w.since, 6 * USEC_PER_SEC);
	assert_false(w.soak);
	wake_resumed(&o, &w);
	assert_string_equal(order, "IIRR");
	assert_string_equal(activity.seen, "IR:backup.timer");
	assert_string_equal(timers.seen, "IR:backup.timer");
}

static void test_nobody_names(void **state)
{
	struct wake_observers o = {};
	struct probe p = {};
	char reason[96] = "irq 1 (i8042)";
	struct wake w;

	(void)state;
	assert_int_equal(wake_observe(&o, on_wake, &p), 0);
	/* A suspend longer than the clock reads since boot: since stays 0, never wraps. */
	wake_identify(&o, &w, reason, sizeof(reason), USEC_PER_SEC, 2 * USEC_PER_SEC, true);
	assert_string_equal(reason, "irq 1 (i8042)");
	assert_string_equal(w.timer, "");
	assert_int_equal(w.since, 0);
	assert_true(w.soak);
}

/* A timer name as long as the field: the reason is cut, still a string, and the timer comes first. */
static void test_long_name(void **state)
{
	struct wake_observers o = {};
	char name[128], reason[96] = "rtc0 alarm";
	struct probe p = { .names = name };
	struct wake w;

	(void)state;
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	assert_int_equal(wake_observe(&o, on_wake, &p), 0);
	wake_identify(&o, &w, reason, sizeof(reason), 0, 0, false);
	assert_int_equal(strlen(reason), sizeof(reason) - 1);
	assert_int_equal(reason[0], 'x');
}

static void test_cap_and_leave(void **state)
{
	struct wake_observers o = {};
	struct probe p[WAKE_OBSERVERS_MAX + 1] = {};
	char reason[96] = "unknown";
	struct wake w;

	(void)state;
	for (unsigned i = 0; i < WAKE_OBSERVERS_MAX; i++)
		assert_int_equal(wake_observe(&o, on_wake, &p[i]), 0);
	assert_int_equal(wake_observe(&o, on_wake, &p[WAKE_OBSERVERS_MAX]), -ENOSPC);
	/* One leaves from the middle: the others are still told, in order; leaving twice is harmless. */
	wake_unobserve(&o, on_wake, &p[1]);
	wake_unobserve(&o, on_wake, &p[1]);
	assert_int_equal(observers_count(&o.list), WAKE_OBSERVERS_MAX - 1);
	wake_identify(&o, &w, reason, sizeof(reason), 0, 0, false);
	wake_resumed(&o, &w);
	assert_string_equal(p[0].seen, "IR:");
	assert_string_equal(p[1].seen, "");
	assert_string_equal(p[2].seen, "IR:");
	assert_string_equal(p[WAKE_OBSERVERS_MAX].seen, "");
	assert_int_equal(wake_observe(&o, on_wake, &p[WAKE_OBSERVERS_MAX]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_nobody_names),
		cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_cap_and_leave),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
