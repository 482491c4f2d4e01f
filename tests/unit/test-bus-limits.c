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
#include "macro.h"
#include "peers.h"
#include "polkit.h"
#include "time-util.h"

#define CONNECTIONS 40
#define LOCKS_PER_CONNECTION 50
#define KILLED_CLIENTS 1000

/*
 * dbus-daemon allows 256 connections per user by default; the kill test
 * needs a thousand. The flood test's calls carry an fd each: with room for
 * 4096 queued fds per connection dbus-daemon never refuses them itself, so
 * every one reaches the daemon, whose own bounds are what is tested. Root
 * may own polkit's name, for that test's polkit that never answers, and the
 * daemon may call it.
 */
#define BUS_LIMITS "<limit name=\"max_connections_per_user\">4096</limit>" \
		   "<limit name=\"max_completed_connections\">4096</limit>" \
		   "<limit name=\"max_incoming_unix_fds\">4096</limit>" \
		   "<limit name=\"max_outgoing_unix_fds\">4096</limit>" \
		   "<policy user=\"root\"><allow own=\"org.freedesktop.PolicyKit1\"/>" \
		   "<allow send_destination=\"org.freedesktop.PolicyKit1\"/></policy>"

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
	/* RLIMIT_NOFILE 2648 leaves 2648 - 2304 (manager.c's FD_RESERVE) for locks: the cap follows the fd limit. */
	const int cap = 2648 - 2304;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	static int fds[600];
	sd_bus *b;
	int extra;

	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nMaxPerUser=4096\nStartupHoldSec=0\n", .log = "cap.log", .nofile = 2648 }) > 0);
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

/* With the unit's LimitNOFILE=18688 the cap is WAKE_LOCKS_MAX itself, 16384 locks. */
static void test_cap_at_unit_limit(void **state)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max < 18688) {
		fprintf(stderr, "RLIMIT_NOFILE hard limit below the unit's 18688, skipping\n");
		skip();
	}
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=0\n", .log = "unitcap.log", .nofile = 18688 }) > 0);
	/* Logged once the name is taken, which is when the harness returns: wait for it. */
	for (int i = 0; i < 500 && harness_count_in_log(&h, "unitcap.log", "D-Bus wake locks") == 0; i++)
		usleep(10000);
	assert_int_equal(harness_count_in_log(&h, "unitcap.log", "Up to 16384 D-Bus wake locks"), 1);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

/*
 * The flood: connections of nobody whose AcquireWakeLock waits for polkit
 * for good, each with calls behind it that carry an fd. dbus-daemon answers
 * a connection's calls past 128 pending itself, so each sends fewer.
 */
#define FLOOD_CONNECTIONS 8
#define FLOOD_CALLS 120

struct flood_count {
	unsigned answered, held_back_refused, checks_refused, bus_refused, other;
};

static int on_flood_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct flood_count *c = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(m);

	(void)ret_error;
	c->answered++;
	if (e && sd_bus_error_has_name(e, SD_BUS_ERROR_LIMITS_EXCEEDED) && strstr(e->message, "wait behind"))
		c->held_back_refused++;
	else if (e && sd_bus_error_has_name(e, SD_BUS_ERROR_LIMITS_EXCEEDED) && strstr(e->message, "authorization"))
		c->checks_refused++;
	/* dbus-daemon's own guard, when our queue of incoming calls (and their fds) is full for a moment. */
	else if (e && sd_bus_error_has_name(e, SD_BUS_ERROR_LIMITS_EXCEEDED) && strstr(e->message, "full message queue"))
		c->bus_refused++;
	else {
		if (c->other++ == 0)
			fprintf(stderr, "# unexpected answer: %s\n", e ? e->message : "success");
	}
	return 0;
}

/*
 * As nobody, on n connections: an AcquireWakeLock each, then calls calls
 * each carrying an fd. Once want answers came (or 20 s passed) and then
 * one more second, writes the counts to report, and waits to be killed.
 */
static void _noreturn_ nobody_flood(int report, unsigned n, unsigned calls, unsigned want)
{
	struct flood_count c = {};
	sd_bus *b[32];
	usec_t end;
	int fd;

	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
		_exit(90);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || n > ELEMENTSOF(b))
		_exit(91);
	for (unsigned i = 0; i < n; i++) {
		if (harness_open_client(&h, &b[i]) < 0 ||
		    sd_bus_call_method_async(b[i], NULL, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "AcquireWakeLock",
					     on_flood_reply, &c, "sst", "flood", "flood", (uint64_t)0) < 0)
			_exit(92);
		for (unsigned j = 0; j < calls; j++) {
			sd_bus_message *m = NULL;

			/* ListWakeLocks takes no fd: a wrong signature too, which the daemon must survive. */
			if (sd_bus_message_new_method_call(b[i], &m, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE,
							   "ListWakeLocks") < 0 ||
			    sd_bus_message_append(m, "h", fd) < 0 ||
			    sd_bus_call_async(b[i], NULL, m, on_flood_reply, &c, 60 * USEC_PER_SEC) < 0)
				_exit(93);
			sd_bus_message_unref(m);
		}
	}
	/* What is over the bounds is answered at once; the rest waits for polkit's 25 s. */
	end = now(CLOCK_MONOTONIC) + 20 * USEC_PER_SEC;
	for (bool seen = false; now(CLOCK_MONOTONIC) < end;) {
		int r = 0;

		if (!seen && c.answered >= want) {
			seen = true;
			end = now(CLOCK_MONOTONIC) + USEC_PER_SEC;
		}
		for (unsigned i = 0; i < n; i++)
			r |= sd_bus_process(b[i], NULL) > 0;
		if (r == 0)
			usleep(1000);
	}
	if (write(report, &c, sizeof(c)) != sizeof(c))
		_exit(95);
	pause();
	_exit(0);
}

/* Runs the flood beside a polkit that owns its name and never answers; the daemon must serve root meanwhile. */
static struct flood_count flood(const char *log, unsigned n, unsigned calls, unsigned want)
{
	struct flood_count c = {};
	int report[2], fd;
	sd_bus *pk, *probe;
	pid_t child;

	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=0\n", .log = log, .nofile = 800 }) > 0);
	assert_int_equal(harness_open_client(&h, &pk), 0);
	assert_true(sd_bus_request_name(pk, "org.freedesktop.PolicyKit1", 0) >= 0);
	assert_int_equal(pipe2(report, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		nobody_flood(report[1], n, calls, want);
	close(report[1]);
	assert_int_equal(read(report[0], &c, sizeof(c)), sizeof(c));
	close(report[0]);
	fprintf(stderr, "# %u connections, %u calls each: %u answered at once: %u refused as held back, "
		"%u polkit checks refused, %u refused by dbus-daemon (queue full), %u other\n", n, calls, c.answered,
		c.held_back_refused, c.checks_refused, c.bus_refused, c.other);
	/* While the calls wait: the daemon is up, on the bus, and serves root. */
	assert_int_equal(kill(h.daemon_pid, 0), 0);
	assert_int_equal(harness_open_client(&h, &probe), 0);
	assert_true(harness_name_has_owner(probe));
	assert_int_equal(harness_acquire(probe, "root", "still served", 0, &fd, NULL), 1);
	assert_int_equal(harness_count_locks(probe, "root"), 1);
	close(fd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	sd_bus_flush_close_unref(probe);
	sd_bus_flush_close_unref(pk);
	return c;
}

/*
 * A stranger whose polkit checks never end (its own agent that never
 * answers; here a polkit that never replies) floods the daemon with calls
 * that carry fds. Before, every call was held back with its fd, until the
 * daemon ran out of fds and fell off the bus. Now it holds PEERS_HELD_MAX
 * of them in all (at most PEER_HELD_MAX of one connection), answers the
 * rest at once with LimitsExceeded, and serves everyone else meanwhile.
 * dbus-daemon refuses some on its own while our queue is full; which
 * refuses how many depends on timing, but every call past the bounds is
 * refused by one of the two, and none of the calls runs.
 */
static void test_flood_behind_polkit_checks(void **state)
{
	const unsigned refused = FLOOD_CONNECTIONS * FLOOD_CALLS - PEERS_HELD_MAX;
	struct flood_count c = flood("flood.log", FLOOD_CONNECTIONS, FLOOD_CALLS, refused);

	assert_true(FLOOD_CONNECTIONS * PEER_HELD_MAX >= PEERS_HELD_MAX);
	if (c.held_back_refused + c.bus_refused != c.answered || c.answered < refused || c.other != 0)
		harness_show_log(&h, "flood.log");
	/*
	 * Every answer is a refusal, and at most PEERS_HELD_MAX calls (besides
	 * each connection's AcquireWakeLock) are left waiting. Fewer when
	 * dbus-daemon refused a connection's AcquireWakeLock itself: then
	 * nothing of that connection is held.
	 */
	assert_true(c.held_back_refused > 0);
	assert_int_equal(c.held_back_refused + c.bus_refused, c.answered);
	assert_true(c.answered >= refused);
	assert_int_equal(c.checks_refused, 0);
	assert_int_equal(c.other, 0);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

/* One uid's polkit checks in flight: the one past POLKIT_QUERIES_PER_UID_MAX is refused at once, the rest wait. */
static void test_polkit_checks_per_uid(void **state)
{
	struct flood_count c = flood("checks.log", POLKIT_QUERIES_PER_UID_MAX + 1, 0, 1);

	if (c.checks_refused != 1 || c.answered != 1)
		harness_show_log(&h, "checks.log");
	assert_int_equal(c.checks_refused, 1);
	assert_int_equal(c.answered, 1);
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
		cmocka_unit_test_teardown(test_flood_behind_polkit_checks, stop_daemon),
		cmocka_unit_test_teardown(test_polkit_checks_per_uid, stop_daemon),
		cmocka_unit_test_teardown(test_1000_killed_clients, stop_daemon),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
