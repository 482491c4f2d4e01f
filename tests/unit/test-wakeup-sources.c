/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"
#include "sysfs.h"
#include "wakeup-sources.h"

static int setup(void **state)
{
	char *dir = fixture_new("sysfs-basic");

	assert_int_equal(sysfs_set_root(dir), 0);
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	fixture_free(*state);
	return 0;
}

static void set(const char *dir, const char *source, const char *attr, const char *value)
{
	char rel[128];

	snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, source, attr);
	fixture_write(dir, rel, value);
}

static void remove_attr(const char *source, const char *attr)
{
	char rel[128], *p;

	snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, source, attr);
	assert_int_equal(sysfs_path(rel, &p), 0);
	assert_int_equal(unlink(p), 0);
	free(p);
}

static void add_source(const char *dir, const char *source, const char *name, const char *events)
{
	char rel[128], *p;

	snprintf(rel, sizeof(rel), "%s/%s", SYSFS_CLASS_WAKEUP, source);
	assert_int_equal(sysfs_path(rel, &p), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
	set(dir, source, "name", name);
	set(dir, source, "event_count", events);
	set(dir, source, "wakeup_count", "0\n");
}

static void test_read(void **state)
{
	struct wakeup_sources w = {};

	(void)state;
	assert_int_equal(wakeup_sources_read(&w), 0);
	assert_int_equal(w.n, 4);
	/* Sorted by directory, so snapshots can be matched. */
	assert_string_equal(w.items[0].dir, "wakeup0");
	assert_string_equal(w.items[0].name, "autosleepd");
	assert_int_equal(w.items[1].event_count, 12);
	assert_int_equal(w.items[1].wakeup_count, 2);
	assert_string_equal(w.items[3].name, "event3");
	wakeup_sources_clear(&w);
	assert_null(w.items);
	assert_int_equal(w.n, 0);
}

static void test_missing_class(void **state)
{
	struct wakeup_sources w = { .n = 99 };
	char *dir = fixture_new("sysfs-nowakelock");

	(void)state;
	assert_int_equal(sysfs_set_root(dir), 0);
	assert_int_equal(wakeup_sources_read(&w), -ENOENT);
	/* Untouched on failure. */
	assert_int_equal(w.n, 99);
	fixture_free(dir);
}

static void test_unreadable(void **state)
{
	struct wakeup_sources w = {};
	char *dir = *state;

	set(dir, "wakeup2", "event_count", "garbage\n");
	remove_attr("wakeup2", "wakeup_count");
	/* No name: gone between readdir() and the read, or not a source. */
	remove_attr("wakeup3", "name");
	assert_int_equal(wakeup_sources_read(&w), 0);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.items[2].name, "alarmtimer");
	assert_true(w.items[2].event_count == WAKEUP_SOURCE_COUNT_UNKNOWN);
	assert_true(w.items[2].wakeup_count == WAKEUP_SOURCE_COUNT_UNKNOWN);
	wakeup_sources_clear(&w);
}

static void snapshot(struct wakeup_sources *ret)
{
	assert_int_equal(wakeup_sources_read(ret), 0);
}

static size_t diff(const struct wakeup_sources *before, char *const *exclude, char *buf, size_t size)
{
	struct wakeup_sources after = {};
	size_t n;

	assert_int_equal(wakeup_sources_read(&after), 0);
	n = wakeup_sources_moved(before, &after, exclude, buf, size);
	wakeup_sources_clear(&after);
	return n;
}

static void test_nothing_moved(void **state)
{
	struct wakeup_sources b = {};
	char buf[64] = "x";

	(void)state;
	snapshot(&b);
	assert_int_equal(diff(&b, NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	wakeup_sources_clear(&b);
}

static void test_wakeup_count_first(void **state)
{
	struct wakeup_sources b = {};
	char buf[64];
	char *dir = *state;

	snapshot(&b);
	/* rtc0 reported while the kernel was watching; alarmtimer only outside that window. */
	set(dir, "wakeup1", "event_count", "13\n");
	set(dir, "wakeup1", "wakeup_count", "3\n");
	set(dir, "wakeup2", "event_count", "5\n");
	assert_int_equal(diff(&b, NULL, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "rtc0");
	wakeup_sources_clear(&b);
}

static void test_event_count_fallback(void **state)
{
	struct wakeup_sources b = {};
	char buf[64];
	char *dir = *state;

	snapshot(&b);
	set(dir, "wakeup2", "event_count", "5\n");
	set(dir, "wakeup3", "event_count", "41\n");
	assert_int_equal(diff(&b, NULL, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "alarmtimer, event3");
	wakeup_sources_clear(&b);
}

static void test_exclude(void **state)
{
	char *own[] = { (char *)"autosleepd", (char *)"autosleepd.activity", NULL };
	struct wakeup_sources b = {};
	char buf[64];
	char *dir = *state;

	snapshot(&b);
	/* Our own lease, taken at resume, moved both counts; the RTC only its events. */
	set(dir, "wakeup0", "event_count", "4\n");
	set(dir, "wakeup0", "wakeup_count", "1\n");
	set(dir, "wakeup1", "event_count", "13\n");
	assert_int_equal(diff(&b, own, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "rtc0");
	/* Without the exclusion, our lock is what the kernel saw. */
	assert_int_equal(diff(&b, NULL, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "autosleepd");
	wakeup_sources_clear(&b);
}

static void test_new_and_reused(void **state)
{
	struct wakeup_sources b = {};
	char buf[64];
	char *dir = *state;

	snapshot(&b);
	/* Created during the suspend with events: counts. Created idle: does not. */
	add_source(dir, "wakeup7", "event9", "1\n");
	add_source(dir, "wakeup8", "idle", "0\n");
	/* Same id, other name: a new source on a reused id, not a moved one. */
	set(dir, "wakeup2", "name", "usb1\n");
	assert_int_equal(diff(&b, NULL, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "usb1, event9");
	wakeup_sources_clear(&b);
}

static void test_short_buffer(void **state)
{
	struct wakeup_sources b = {};
	char buf[8];
	char *dir = *state;

	snapshot(&b);
	set(dir, "wakeup2", "event_count", "5\n");
	set(dir, "wakeup3", "event_count", "41\n");
	assert_int_equal(diff(&b, NULL, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "alarmti");
	/* No before at all (first snapshot failed): what has a wakeup_count is named. */
	assert_int_equal(diff(NULL, NULL, buf, 0), 2);
	wakeup_sources_clear(&b);
}

/* rtc_cmos's source is named after its PNP device; the rtc0 below it gives the name people know. */
static void test_rtc_label(void **state)
{
	struct wakeup_sources b = {}, a = {};
	struct wakeup_blocker k[1];
	char buf[64], rel[128], *p;
	char *dir = *state;

	snapshot(&b);
	add_source(dir, "wakeup7", "00:06", "0\n");
	set(dir, "wakeup7", "active_count", "0\n");
	set(dir, "wakeup7", "total_time_ms", "0\n");
	wakeup_sources_clear(&b);
	snapshot(&b);
	snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, "wakeup7", "device/rtc/rtc0");
	assert_int_equal(sysfs_path(rel, &p), 0);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
		assert_int_equal(system(cmd), 0);
	}
	free(p);
	/* Seen by the next read only: the label is read with the source. */
	set(dir, "wakeup7", "event_count", "1\n");
	assert_int_equal(diff(&b, NULL, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "rtc0 (00:06)");
	/* And so it is named among who kept us awake. */
	set(dir, "wakeup7", "active_count", "1\n");
	set(dir, "wakeup7", "total_time_ms", "2\n");
	assert_int_equal(wakeup_sources_read(&a), 0);
	assert_int_equal(wakeup_sources_blockers(&b, &a, NULL, k, 1), 1);
	assert_string_equal(k[0].name, "rtc0 (00:06)");
	assert_int_equal(k[0].ms, 2);
	wakeup_sources_clear(&a);
	wakeup_sources_clear(&b);
}

static void test_blockers(void **state)
{
	struct wakeup_sources b = {}, a = {};
	struct wakeup_blocker k[2];
	char *dir = *state;
	char own0[] = "autosleepd";
	char *const own[] = { own0, NULL };

	set(dir, "wakeup0", "total_time_ms", "100\n");
	set(dir, "wakeup1", "total_time_ms", "7\n");
	set(dir, "wakeup2", "total_time_ms", "0\n");
	set(dir, "wakeup3", "total_time_ms", "0\n");
	snapshot(&b);
	/* Ours held 3 s: excluded. alarmtimer: 0 ms more, but activated. A shell's lock: new, 5 s. */
	set(dir, "wakeup0", "total_time_ms", "3100\n");
	set(dir, "wakeup2", "active_count", "9\n");
	add_source(dir, "wakeup9", "shell5", "1\n");
	set(dir, "wakeup9", "active_count", "1\n");
	set(dir, "wakeup9", "total_time_ms", "5012\n");
	assert_int_equal(wakeup_sources_read(&a), 0);
	assert_int_equal(wakeup_sources_blockers(&b, &a, own, k, 2), 2);
	assert_string_equal(k[0].name, "shell5");
	assert_int_equal(k[0].ms, 5012);
	assert_string_equal(k[1].name, "alarmtimer");
	assert_int_equal(k[1].ms, 0);
	/* Without the exclusion ours comes second; a short array gets the longest. */
	assert_int_equal(wakeup_sources_blockers(&b, &a, NULL, k, 1), 3);
	assert_string_equal(k[0].name, "shell5");
	/* Nothing moved: nobody held us up. */
	assert_int_equal(wakeup_sources_blockers(&a, &a, NULL, k, 2), 0);
	wakeup_sources_clear(&a);
	wakeup_sources_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_class, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_moved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_count_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_count_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exclude, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_and_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rtc_label, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blockers, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
