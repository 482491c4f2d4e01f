/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SoakCycle end to end: the real daemon (not a dry run) on a fixture tree
 * and a private dbus-daemon. The first call pauses autosleep until its
 * client leaves; one client at a time; a wake lock blocks a cycle unless
 * Force; and a state write that never returns (the fixture's state is a
 * FIFO nobody reads) is reported as a hang by the watchdog, after which no
 * cycle starts until the write came back.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "fixture.h"
#include "time-util.h"

#define NAME HARNESS_NAME
#define PATH HARNESS_PATH
#define IFACE HARNESS_IFACE
#define LOG "soak.log"

static struct harness h;

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "test-bus-soak needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
	assert_int_equal(harness_bus_start(&h, "sysfs-basic", NULL), 0);
	/* One cycle of its own at start, then an hour of backoff: the loop stays out of the way. */
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=0\n[Logind]\nHonorInhibitors=no\n[Backoff]\nDelaySec=1h\nMaxDelaySec=1h\n",
		.log = LOG, .real = true }) > 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_stop(&h);
	return 0;
}

/* SoakCycle with a few options; fills result and detail, or returns <0 with e set. */
static int soak(sd_bus *b, bool force, uint64_t watchdog, char *result, char *detail, sd_bus_error *e)
{
	sd_bus_message *call = NULL, *reply = NULL;
	const char *key, *s;
	int r;

	result[0] = detail[0] = 0;
	r = sd_bus_message_new_method_call(b, &call, NAME, PATH, IFACE, "SoakCycle");
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0)
		r = sd_bus_message_append(call, "{sv}{sv}", "Force", "b", force, "ReadTimeoutUSec", "t",
					  (uint64_t)USEC_PER_SEC);
	if (r >= 0 && watchdog)
		r = sd_bus_message_append(call, "{sv}", "WatchdogUSec", "t", watchdog);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r >= 0)
		r = sd_bus_call(b, call, 30 * USEC_PER_SEC, e, &reply);
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *type;

		assert_true(sd_bus_message_read(reply, "s", &key) >= 0);
		assert_true(sd_bus_message_peek_type(reply, NULL, &type) >= 0);
		if ((strcmp(key, "Result") == 0 || strcmp(key, "Detail") == 0) && strcmp(type, "s") == 0) {
			assert_true(sd_bus_message_read(reply, "v", "s", &s) >= 0);
			snprintf(key[0] == 'R' ? result : detail, 64, "%s", s);
		} else
			assert_true(sd_bus_message_skip(reply, "v") >= 0);
		assert_true(sd_bus_message_exit_container(reply) >= 0);
	}
	sd_bus_message_unref(call);
	sd_bus_message_unref(reply);
	return r;
}

static bool state_is(sd_bus *b, const char *want)
{
	char *st = NULL;
	bool r;

	if (sd_bus_get_property_string(b, NAME, PATH, IFACE, "State", NULL, &st) < 0)
		return false;
	r = strcmp(st, want) == 0;
	free(st);
	return r;
}

static bool wait_state(sd_bus *b, const char *want, bool equal)
{
	for (int i = 0; i < 300; i++) {
		if (state_is(b, want) == equal)
			return true;
		usleep(10000);
	}
	return false;
}

static void test_session(void **state)
{
	sd_bus *a = NULL, *b = NULL, *c = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char result[64], detail[64];
	int fd = -1;

	(void)state;
	assert_int_equal(harness_open_client(&h, &a), 0);
	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_int_equal(harness_open_client(&h, &c), 0);

	assert_true(soak(a, false, 0, result, detail, &e) >= 0);
	assert_string_equal(result, "success");
	/* Paused for a while the client stays. */
	assert_true(wait_state(a, "soaking", true));
	assert_int_equal(harness_count_in_log(&h, LOG, "autosleep pauses until it leaves"), 1);

	assert_true(soak(b, false, 0, result, detail, &e) < 0);
	assert_non_null(strstr(e.message, "Another client is soaking"));
	sd_bus_error_free(&e);

	/* Leaving is enough, however it happens. */
	a = sd_bus_flush_close_unref(a);
	assert_true(wait_state(b, "soaking", false));
	assert_int_equal(harness_count_in_log(&h, LOG, "Soak client left: autosleep resumes"), 1);

	/* A wake lock: blocked, unless forced; the lock outlives the forced cycle. */
	assert_int_equal(harness_acquire(c, "holder", "soak test", 0, &fd, NULL), 1);
	assert_true(soak(b, false, 0, result, detail, &e) >= 0);
	assert_string_equal(result, "blocked");
	assert_string_equal(detail, "wake locks held");
	assert_true(soak(b, true, 0, result, detail, &e) >= 0);
	assert_string_equal(result, "success");
	assert_int_equal(harness_count_locks(c, "holder"), 1);
	close(fd);
	b = sd_bus_flush_close_unref(b);
	c = sd_bus_flush_close_unref(c);
}

static void test_hang(void **state)
{
	sd_bus *a = NULL, *b = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char result[64], detail[64], path[512], buf[16];
	usec_t t0;
	int fifo;

	(void)state;
	assert_int_equal(harness_open_client(&h, &a), 0);
	/* Soak cycles run while autosleep is disabled; the loop's own cycles do not. */
	assert_int_equal(sd_bus_call_method(a, NAME, PATH, IFACE, "Disable", NULL, NULL, ""), 1);
	snprintf(path, sizeof(path), "%s/sys/power/state", h.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);

	t0 = now(CLOCK_MONOTONIC);
	assert_true(soak(a, false, 200 * USEC_PER_MSEC, result, detail, &e) >= 0);
	assert_string_equal(result, "hang");
	/* The read timeout plus the watchdog, not sooner. */
	assert_true(now(CLOCK_MONOTONIC) - t0 >= 1200 * USEC_PER_MSEC);
	assert_true(soak(a, false, 0, result, detail, &e) < 0);
	assert_non_null(strstr(e.message, "never returned"));
	sd_bus_error_free(&e);

	/* The write comes back at last: cycles may run again. */
	fifo = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fifo >= 0);
	assert_int_equal(read(fifo, buf, sizeof(buf)), 3);
	close(fifo);
	for (int i = 0; i < 300 && harness_count_in_log(&h, LOG, "Soak cycle: success") < 3; i++)
		usleep(10000);
	assert_int_equal(harness_count_in_log(&h, LOG, "Soak cycle: success"), 3);
	assert_int_equal(unlink(path), 0);
	fixture_write(h.dir, "sys/power/state", "freeze mem\n");
	assert_true(soak(a, false, 0, result, detail, &e) >= 0);
	assert_string_equal(result, "success");
	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_true(wait_state(b, "soaking", true));
	/* The client leaves while autosleep is disabled: that is what State says then. */
	a = sd_bus_flush_close_unref(a);
	assert_true(wait_state(b, "disabled", true));
	assert_int_equal(sd_bus_call_method(b, NAME, PATH, IFACE, "Enable", NULL, NULL, ""), 1);
	b = sd_bus_flush_close_unref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_hang),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
