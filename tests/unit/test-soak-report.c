/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "soak-report.h"

/*
 * autosleepctl soak's records and report on fixture data: one JSON line per
 * cycle for each result class, read back, summarized and rendered.
 */
static const char *const fixture[] = {
	"{\"cycle\":1,\"result\":\"success\",\"start_usec\":1000,\"requested_sleep_usec\":4000000,"
	"\"actual_sleep_usec\":4010000,\"premature\":false,\"late\":false,\"state_write_usec\":4100000,"
	"\"awake_in_write_usec\":90000,\"entry_latency_usec\":30000,\"exit_latency_usec\":50000,"
	"\"last_hw_sleep_usec\":null,\"suspend_stats_success\":1,\"suspend_stats_fail\":0,\"wake_alarm\":\"rtc\",\"alarm_armed\":true,"
	"\"alarm_cleared\":true,\"errno\":0,\"wake_reason\":\"rtc0 (00:06)\",\"detail\":\"\",\"failed_dev\":\"\","
	"\"failed_step\":\"\",\"failed_errno\":0,\"blockers\":\"\",\"crng_reseeds\":0,\"keypairs_destroyed\":0,"
	"\"battery_unit\":null,\"kernel_bugs\":[],\"kmsg_excerpt\":[]}",
	"{\"cycle\":2,\"result\":\"success\",\"requested_sleep_usec\":4000000,\"actual_sleep_usec\":4000000,"
	"\"awake_in_write_usec\":110000,\"entry_latency_usec\":40000,\"suspend_stats_success\":1,"
	"\"battery_unit\":\"charge\",\"battery_entry\":3100000,\"battery_exit\":3100500,\"battery_on_ac\":true}",
	"{\"cycle\":3,\"result\":\"blocked\",\"detail\":\"vmtest 10.000s\",\"blockers\":\"vmtest 10.000s\"}",
	"{\"cycle\":4,\"result\":\"early-cancel\",\"errno\":22}",
	"{\"cycle\":5,\"result\":\"late-cancel\",\"errno\":16,\"suspend_stats_fail\":1,"
	"\"detail\":\"wakeup source alarmtimer\",\"kmsg_excerpt\":[\"[   27.1] PM: Some devices failed to suspend\"]}",
	"{\"cycle\":6,\"result\":\"failure\",\"errno\":5,\"suspend_stats_fail\":1,\"failed_dev\":\"serial8250\","
	"\"failed_step\":\"suspend\",\"failed_errno\":5,\"kernel_bugs\":[\"WARNING: CPU: 0 PID: 1 at x.c:1\"]}",
	"{\"cycle\":7,\"result\":\"alarm-not-cleared\",\"requested_sleep_usec\":4000000,\"actual_sleep_usec\":1000000,"
	"\"suspend_stats_success\":1}",
	"{\"cycle\":8,\"result\":\"hang\",\"detail\":\"state write did not return\"}",
	"{\"cycle\":9,\"result\":\"success\",\"requested_sleep_usec\":4000000,\"actual_sleep_usec\":4020000,"
	"\"awake_in_write_usec\":100000,\"suspend_stats_success\":1,\"crng_reseeds\":1,\"keypairs_destroyed\":2,"
	"\"battery_unit\":\"charge\",\"battery_entry\":3000000,\"battery_exit\":2999000,\"battery_full\":4000000,"
	"\"battery_energy_entry_uwh\":45000000,\"battery_energy_exit_uwh\":44985000,\"battery_on_ac\":false}",
};
#define N_FIXTURE (sizeof(fixture) / sizeof(fixture[0]))

static struct soak_cycle cycles[N_FIXTURE];

static int setup(void **state)
{
	char err[160];

	(void)state;
	for (size_t i = 0; i < N_FIXTURE; i++)
		if (soak_cycle_parse_json(fixture[i], &cycles[i], err, sizeof(err)) < 0)
			fail_msg("fixture %zu: %s", i, err);
	return 0;
}

static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(cycles[0].result, SOAK_CLASS_SUCCESS);
	assert_int_equal(cycles[0].asleep_usec, 4010000);
	assert_int_equal(cycles[0].last_hw_sleep_usec, -1);
	assert_true(cycles[0].alarm_cleared);
	assert_string_equal(cycles[0].wake_alarm, "rtc");
	assert_string_equal(cycles[0].wake_reason, "rtc0 (00:06)");
	/* Keys left out take their defaults: unknown latencies are -1, not 0. */
	assert_int_equal(cycles[1].exit_usec, -1);
	assert_int_equal(cycles[2].result, SOAK_CLASS_BLOCKED);
	assert_string_equal(cycles[2].blockers, "vmtest 10.000s");
	assert_int_equal(cycles[5].failed_errno, 5);
	assert_string_equal(cycles[5].bugs, "WARNING: CPU: 0 PID: 1 at x.c:1");
	assert_int_equal(cycles[7].result, SOAK_CLASS_HANG);
	assert_string_equal(cycles[8].battery_unit, "charge");
	assert_int_equal(cycles[8].battery_entry, 3000000);
	assert_int_equal(cycles[8].battery_energy_exit_uwh, 44985000);
	assert_true(cycles[1].battery_on_ac);
	/* No battery: unknown, not zero. */
	assert_string_equal(cycles[0].battery_unit, "");
	assert_int_equal(cycles[0].battery_entry, -1);
}

static void test_parse_errors(void **state)
{
	struct soak_cycle c;
	char err[160];

	(void)state;
	assert_int_equal(soak_cycle_parse_json("{\"cycle\":1,\"result\":\"exploded\"}", &c, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "exploded"));
	assert_int_equal(soak_cycle_parse_json("{\"cycle\":1,\"result\":\"success\",\"colour\":\"red\"}", &c, err,
					       sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "colour"));
	assert_int_equal(soak_cycle_parse_json("{\"cycle\":\"one\",\"result\":\"success\"}", &c, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "cycle"));
	assert_int_equal(soak_cycle_parse_json("{\"result\":\"success\"}", &c, err, sizeof(err)), -EBADMSG);
	assert_int_equal(soak_cycle_parse_json("{\"cycle\":1,\"result\":\"success\"", &c, err, sizeof(err)), -EBADMSG);
	assert_int_equal(soak_cycle_parse_json("{\"cycle\":1,\"result\":\"success\"} x", &c, err, sizeof(err)), -EBADMSG);
	assert_int_equal(soak_cycle_parse_json("{\"cycle\":1.5,\"result\":\"success\"}", &c, err, sizeof(err)), -EBADMSG);
	assert_int_equal(soak_cycle_parse_json("", &c, err, sizeof(err)), -EBADMSG);
}

static void test_round_trip(void **state)
{
	char *buf = NULL, err[160];
	size_t len = 0;
	struct soak_cycle back;
	FILE *f;

	(void)state;
	for (size_t i = 0; i < N_FIXTURE; i++) {
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		soak_cycle_write_json(f, &cycles[i]);
		fclose(f);
		/* One record, one line. */
		assert_ptr_equal(strchr(buf, '\n'), buf + len - 1);
		if (soak_cycle_parse_json(buf, &back, err, sizeof(err)) < 0)
			fail_msg("cycle %zu: %s in %s", i, err, buf);
		assert_memory_equal(&back, &cycles[i], sizeof(back));
		if (!cycles[i].battery_unit[0])
			assert_non_null(strstr(buf, "\"battery_unit\":null"));
		free(buf);
		buf = NULL;
	}
}

static void test_summary(void **state)
{
	struct soak_summary s;

	(void)state;
	soak_summarize(cycles, N_FIXTURE, &s);
	assert_int_equal(s.cycles, 9);
	assert_int_equal(s.by_class[SOAK_CLASS_SUCCESS], 3);
	assert_int_equal(s.by_class[SOAK_CLASS_BLOCKED], 1);
	assert_int_equal(s.by_class[SOAK_CLASS_EARLY_CANCEL], 1);
	assert_int_equal(s.by_class[SOAK_CLASS_LATE_CANCEL], 1);
	assert_int_equal(s.by_class[SOAK_CLASS_FAILURE], 1);
	assert_int_equal(s.by_class[SOAK_CLASS_ALARM_NOT_CLEARED], 1);
	assert_int_equal(s.by_class[SOAK_CLASS_HANG], 1);
	/* The report's counts are suspend_stats' deltas summed. */
	assert_int_equal(s.stats_success, 4);
	assert_int_equal(s.stats_fail, 2);
	assert_int_equal(s.crng_reseeds, 1);
	assert_int_equal(s.keypairs_destroyed, 2);
	assert_int_equal(s.bugs, 1);
	/* Blocked is no failure: the first failure is the early cancel. */
	assert_non_null(s.first_failure);
	assert_int_equal(s.first_failure->cycle, 4);
	/* Latency over successes only: 90, 100, 110 ms; entry known for two. */
	assert_int_equal(s.awake_in_write.n, 3);
	assert_int_equal(s.awake_in_write.min, 90000);
	assert_int_equal(s.awake_in_write.median, 100000);
	assert_int_equal(s.awake_in_write.p95, 110000);
	assert_int_equal(s.awake_in_write.max, 110000);
	assert_int_equal(s.entry.n, 2);
	assert_int_equal(s.entry.median, 30000);
	assert_int_equal(s.exit.n, 1);
}

static void test_percentiles(void **state)
{
	struct soak_cycle c[100];
	struct soak_summary s;

	(void)state;
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 100; i++) {
		c[i].cycle = (unsigned)i + 1;
		c[i].result = SOAK_CLASS_SUCCESS;
		/* 100 down to 1 ms: order must not matter. */
		c[i].awake_in_write_usec = (uint64_t)(100 - i) * 1000;
		c[i].entry_usec = c[i].exit_usec = c[i].last_hw_sleep_usec = -1;
	}
	soak_summarize(c, 100, &s);
	assert_int_equal(s.awake_in_write.min, 1000);
	assert_int_equal(s.awake_in_write.median, 50000);
	assert_int_equal(s.awake_in_write.p95, 95000);
	assert_int_equal(s.awake_in_write.max, 100000);
	assert_null(s.first_failure);
	assert_int_equal(s.entry.n, 0);
}

static void test_flags(void **state)
{
	struct soak_cycle c = { .result = SOAK_CLASS_SUCCESS, .requested_usec = 10 * 1000000 };

	(void)state;
	/* Tolerance: 1 s + 10% = 2 s. */
	assert_int_equal(soak_wake_tolerance(c.requested_usec), 2000000);
	c.asleep_usec = 8 * 1000000;
	soak_cycle_flag_wake(&c);
	assert_false(c.premature);
	c.asleep_usec = 7999999;
	soak_cycle_flag_wake(&c);
	assert_true(c.premature);
	assert_false(c.late);
	c.asleep_usec = 12000001;
	soak_cycle_flag_wake(&c);
	assert_true(c.late);
	/* pm_test cycles ask for no sleep: no flags. */
	c.requested_usec = 0;
	soak_cycle_flag_wake(&c);
	assert_false(c.late);
	assert_false(c.premature);
}

static void test_kmsg(void **state)
{
	/* What 6.1 logs around one S3 cycle in QEMU, timestamps without the time asleep. */
	static const struct kmsg_line l[] = {
		{ 27000000, "PM: suspend entry (deep)" },
		{ 27010000, "Filesystems sync: 0.001 seconds" },
		{ 27637838, "ACPI: PM: Preparing to enter system sleep state S3" },
		{ 27640342, "ACPI: PM: Low-level resume complete" },
		{ 27650000, "random: crng reseeded on system resumption" },
		{ 27651000, "wireguard: wga: Keypair 7 destroyed for peer 1" },
		{ 27652000, "WARNING: CPU: 0 PID: 9 at drivers/x.c:12 x+0x1/0x2" },
		{ 27698470, "PM: suspend exit" },
	};
	struct soak_cycle c = { .result = SOAK_CLASS_SUCCESS };

	(void)state;
	soak_cycle_scan_kmsg(&c, l, sizeof(l) / sizeof(l[0]));
	assert_int_equal(c.entry_usec, 637838);
	assert_int_equal(c.exit_usec, 58128);
	assert_int_equal(c.crng_reseeds, 1);
	assert_int_equal(c.keypairs_destroyed, 1);
	assert_string_equal(c.bugs, "WARNING: CPU: 0 PID: 9 at drivers/x.c:12 x+0x1/0x2");
	/* A success keeps no excerpt; a failure keeps the log's end. */
	assert_string_equal(c.excerpt, "");
	c.result = SOAK_CLASS_FAILURE;
	soak_cycle_scan_kmsg(&c, l, 2);
	assert_int_equal(c.entry_usec, -1);
	assert_non_null(strstr(c.excerpt, "PM: suspend entry (deep)"));
	assert_non_null(strstr(c.excerpt, "Filesystems sync"));
}

static char *render(void (*fn)(FILE *, const struct soak_provenance *, const struct soak_cycle *, size_t),
		    const struct soak_provenance *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, p, cycles, N_FIXTURE);
	fclose(f);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_report(void **state)
{
	struct soak_provenance p = { .kernel_release = "6.1.0-autosleep", .config_hash = "0123456789abcdef",
				     .autosleep_options = "CONFIG_PM_USERSPACE_AUTOSLEEP=y", .machine = "x86_64, QEMU",
				     .command_line = "autosleepctl soak --cycles 9", .seed = 42 };
	char *md = render(soak_report_markdown, &p), *html = render(soak_report_html, &p);
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);

	(void)state;
	assert_non_null(strstr(md, "6.1.0-autosleep"));
	assert_non_null(strstr(md, "CONFIG_PM_USERSPACE_AUTOSLEEP=y"));
	assert_non_null(strstr(md, "soak --cycles 9"));
	assert_non_null(strstr(md, "| success | 3 |"));
	assert_non_null(strstr(md, "| hang | 1 |"));
	assert_non_null(strstr(md, "success +4, fail +2"));
	assert_non_null(strstr(md, "Cycle 4: early-cancel"));
	/* Cycle 9 lost 1000 uAh (15000 uWh); cycle 2 was on AC and does not count. */
	assert_non_null(strstr(md, "- Battery: 1 successful cycles on battery lost 1000 uAh in all (15000 uWh) from entry to exit; 1 cycles on AC not counted"));
	assert_non_null(strstr(md, "| entry + exit (CLOCK_MONOTONIC in the state write) | 90.000 | 100.000 | 110.000 | 110.000 | 3 |"));
	soak_report_svg(f, cycles, N_FIXTURE);
	fclose(f);
	/* One bar per cycle plus the legend, in one well-formed document (xmllint checks it in the VM suite). */
	assert_int_equal(count(svg, "<title>cycle "), N_FIXTURE);
	assert_int_equal(count(svg, "<svg"), 1);
	assert_int_equal(count(svg, "</svg>"), 1);
	assert_int_equal(count(svg, "<rect"), count(svg, "</rect>") + 1 + _SOAK_CLASS_MAX);
	assert_null(strstr(svg, "(00:06)\""));
	assert_non_null(strstr(html, "<svg"));
	assert_non_null(strstr(html, "| success | 3 |"));
	free(md);
	free(html);
	free(svg);
}

static void test_compare(void **state)
{
	struct soak_provenance a = { .kernel_release = "6.1.0-autosleep" }, b = { .kernel_release = "6.1.0-control" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	soak_report_compare(f, "A", &a, cycles, 2, "B", &b, cycles, N_FIXTURE);
	fclose(f);
	assert_non_null(strstr(buf, "6.1.0-autosleep"));
	assert_non_null(strstr(buf, "6.1.0-control"));
	assert_non_null(strstr(buf, "crng reseeds                       0                        1"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_kmsg),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_compare),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
