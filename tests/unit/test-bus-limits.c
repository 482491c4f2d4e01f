/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wake locks at scale, against the real daemon on a private dbus-daemon:
 * thousands of locks must not cost bus resources (a match rule per lock
 * once knocked the daemon off the bus at about 512), the cap on locks
 * refuses cleanly, and a thousand SIGKILLed clients leave no orphans.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "time-util.h"

#define CONNECTIONS 40
#define LOCKS_PER_CONNECTION 50
#define KILLED_CLIENTS 1000

/* dbus-daemon allows 256 connections per user by default; the kill test needs a thousand. */
#define BUS_LIMITS "<limit name=\"max_connections_per_user\">4096</limit>" \
		   "<limit name=\"max_completed_connections\">4096</limit>"

static struct harness h;

static int setup(void **state)
{
	struct rlimit rl;

	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "test-bus-limits needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
	/* We hold every lock's fd ourselves. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 8192 && rl.rlim_max >= 8192) {
		rl.rlim_cur = 8192;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	assert_int_equal(harness_bus_start(&h, "sysfs-basic", BUS_LIMITS), 0);
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	harness_stop(&h);
	return 0;
}

/* A failed test must not leave its daemon holding the name for the next one. */
static int stop_daemon(void **state)
{
	if (h.daemon_pid > 0)
		harness_daemon_stop(&h, SIGKILL);
	return 0;
}

static void test_2000_locks_40_connections(void **state)
{
	sd_bus *conns[CONNECTIONS];
	static int fds[CONNECTIONS * LOCKS_PER_CONNECTION];
	char name[32];
	sd_bus *probe;
	usec_t t0;
	int n = 0;

	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nMaxPerUser=4096\nStartupHoldSec=0\n", .log = "many.log" }) > 0);
	t0 = now(CLOCK_MONOTONIC);
	for (int c = 0; c < CONNECTIONS; c++) {
		assert_int_equal(harness_open_client(&h, &conns[c]), 0);
		for (int i = 0; i < LOCKS_PER_CONNECTION; i++) {
			sd_bus_error e = SD_BUS_ERROR_NULL;

			snprintf(name, sizeof(name), "c%d-l%d", c, i);
			if (harness_acquire(conns[c], name, "scale", 0, &fds[n], &e) != 1) {
				harness_show_log(&h, "many.log");
				fail_msg("lock %d (%s) refused: %s", n, name, e.message);
			}
			n++;
		}
	}
	fprintf(stderr, "# %d locks over %d connections taken in %.0f ms\n", n, CONNECTIONS,
		(double)(now(CLOCK_MONOTONIC) - t0) / USEC_PER_MSEC);
	/* Still on the bus, and every lock is there. */
	assert_int_equal(harness_open_client(&h, &probe), 0);
	assert_true(harness_name_has_owner(probe));
	assert_int_equal(harness_count_locks(probe, NULL), CONNECTIONS * LOCKS_PER_CONNECTION);
	for (int c = 0; c < CONNECTIONS; c++)
		sd_bus_flush_close_unref(conns[c]);
	/* Closed connections end nothing: the fds are the locks. */
	assert_int_equal(harness_count_locks(probe, NULL), CONNECTIONS * LOCKS_PER_CONNECTION);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	for (int i = 0; i < 300 && harness_count_locks(probe, NULL) > 0; i++)
		usleep(10000);
	assert_int_equal(harness_count_locks(probe, NULL), 0);
	assert_true(harness_name_has_owner(probe));
	sd_bus_flush_close_unref(probe);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

static void test_cap_refuses_cleanly(void **state)
{
	/* RLIMIT_NOFILE 600 leaves 600 - 256 for locks: the cap follows the fd limit. */
	const int cap = 600 - 256;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	static int fds[600];
	sd_bus *b;
	int extra;

	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nMaxPerUser=4096\nStartupHoldSec=0\n", .log = "cap.log", .nofile = 600 }) > 0);
	assert_int_equal(harness_open_client(&h, &b), 0);
	for (int i = 0; i < cap; i++)
		assert_int_equal(harness_acquire(b, "capped", "cap", 0, &fds[i], NULL), 1);
	assert_true(harness_acquire(b, "capped", "cap", 0, &extra, &e) < 0);
	assert_string_equal(e.name, SD_BUS_ERROR_LIMITS_EXCEEDED);
	if (!strstr(e.message, "344"))
		fail_msg("the refusal should name the cap: '%s'", e.message);
	sd_bus_error_free(&e);
	/* Refused, not broken: one lock less, and the next one is granted. */
	close(fds[0]);
	for (int i = 0; i < 300 && harness_count_locks(b, "capped") >= cap; i++)
		usleep(10000);
	assert_int_equal(harness_acquire(b, "capped", "cap", 0, &fds[0], NULL), 1);
	assert_int_equal(harness_count_locks(b, "capped"), cap);
	for (int i = 0; i < cap; i++)
		close(fds[i]);
	sd_bus_flush_close_unref(b);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

/* MaxPerUser counts D-Bus locks: the daemon's own holds (start-up, logind) are root's too, but not root's quota. */
static void test_own_holds_not_counted_against_root(void **state)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int fds[4], extra;
	sd_bus *b;

	(void)state;
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nMaxPerUser=4\nStartupHoldSec=1h\n", .log = "own.log" }) > 0);
	assert_int_equal(harness_open_client(&h, &b), 0);
	/* The start-up hold is there (no fd store here), held by the daemon as root. */
	assert_int_equal(harness_count_locks(b, "autosleepd.startup"), 1);
	for (int i = 0; i < 4; i++) {
		if (harness_acquire(b, "mine", "quota", 0, &fds[i], &e) != 1)
			fail_msg("lock %d of MaxPerUser=4 refused: %s", i + 1, e.message);
	}
	assert_true(harness_acquire(b, "mine", "quota", 0, &extra, &e) < 0);
	assert_string_equal(e.name, SD_BUS_ERROR_LIMITS_EXCEEDED);
	if (!strstr(e.message, "already holds 4 wake locks"))
		fail_msg("the refusal should count root's 4 D-Bus locks: '%s'", e.message);
	sd_bus_error_free(&e);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	sd_bus_flush_close_unref(b);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

/* With the unit's LimitNOFILE=16640 the cap is WAKE_LOCKS_MAX itself, 16384 locks. */
static void test_cap_at_unit_limit(void **state)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max < 16640) {
		fprintf(stderr, "RLIMIT_NOFILE hard limit below the unit's 16640, skipping\n");
		skip();
	}
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=0\n", .log = "unitcap.log", .nofile = 16640 }) > 0);
	/* Logged once the name is taken, which is when the harness returns: wait for it. */
	for (int i = 0; i < 500 && harness_count_in_log(&h, "unitcap.log", "D-Bus wake locks") == 0; i++)
		usleep(10000);
	assert_int_equal(harness_count_in_log(&h, "unitcap.log", "Up to 16384 D-Bus wake locks"), 1);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

static void test_1000_killed_clients(void **state)
{
	static pid_t pids[KILLED_CLIENTS];
	const char *holder = getenv("LOCK_HOLDER");
	int out[2], ok = 0, left = -1;
	usec_t t0, t1;
	char line[64], env[600];
	FILE *f;
	sd_bus *b;

	assert_non_null(holder);
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nMaxPerUser=4096\nStartupHoldSec=0\n", .log = "killed.log" }) > 0);
	assert_int_equal(pipe(out), 0);
	snprintf(env, sizeof(env), "DBUS_SYSTEM_BUS_ADDRESS=%s", h.address);
	for (int i = 0; i < KILLED_CLIENTS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			dup2(out[1], STDOUT_FILENO);
			putenv(env);
			execl(holder, holder, "victim", (char *)NULL);
			_exit(127);
		}
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	while (ok < KILLED_CLIENTS && fgets(line, sizeof(line), f))
		if (strncmp(line, "ok", 2) == 0)
			ok++;
		else
			fail_msg("a client failed: %s", line);
	assert_int_equal(ok, KILLED_CLIENTS);
	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_int_equal(harness_count_locks(b, "victim"), KILLED_CLIENTS);
	t0 = now(CLOCK_MONOTONIC);
	for (int i = 0; i < KILLED_CLIENTS; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < KILLED_CLIENTS; i++)
		waitpid(pids[i], NULL, 0);
	for (int i = 0; i < 1000 && (left = harness_count_locks(b, "victim")) != 0; i++)
		usleep(10000);
	t1 = now(CLOCK_MONOTONIC);
	fprintf(stderr, "# %d SIGKILLed clients: %d locks left, all gone %.0f ms after the kills\n", KILLED_CLIENTS, left,
		(double)(t1 - t0) / USEC_PER_MSEC);
	assert_int_equal(left, 0);
	assert_true(harness_name_has_owner(b));
	fclose(f);
	sd_bus_flush_close_unref(b);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_2000_locks_40_connections, stop_daemon),
		cmocka_unit_test_teardown(test_cap_refuses_cleanly, stop_daemon),
		cmocka_unit_test_teardown(test_own_holds_not_counted_against_root, stop_daemon),
		cmocka_unit_test_teardown(test_cap_at_unit_limit, stop_daemon),
		cmocka_unit_test_teardown(test_1000_killed_clients, stop_daemon),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
