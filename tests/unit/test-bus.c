/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus API end to end: a private dbus-daemon with our real policy file,
 * the real autosleepd binary in --dry-run on a fixture tree, and sd-bus
 * clients, some of them unprivileged.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>
#include <cmocka.h>
#include <systemd/sd-bus.h>

#include "bus-harness.h"
#include "fixture.h"
#include "time-util.h"

#define NAME "org.autosleep1"
#define PATH "/org/autosleep1"
#define IFACE "org.autosleep1.Manager"

static struct harness h;
static sd_bus *bus;

/* Signals seen, one "Member arg arg ..." line each. */
static char seen[64][256];
static unsigned n_seen;
/* PropertiesChanged naming NWakeLocks, all of them. */
static unsigned n_wake_locks_changes;

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	char *line = seen[n_seen % 64];
	const char *member = sd_bus_message_get_member(m), *a = "", *b = "", *c = "";
	uint64_t t = 0;
	uint32_t u = 0;
	int ok = 0;

	if (strcmp(member, "WakeLockReleased") == 0)
		sd_bus_message_read(m, "sss", &a, &b, &c);
	else if (strcmp(member, "WakeLockAcquired") == 0)
		sd_bus_message_read(m, "sssu", &a, &b, &c, &u);
	else if (strcmp(member, "Resumed") == 0)
		sd_bus_message_read(m, "tsb", &t, &a, &ok);
	else if (strcmp(member, "PropertiesChanged") == 0)
		sd_bus_message_read(m, "s", &a);
	snprintf(line, 256, "%s %s %s %s %u %d", member, a, b, c, u, ok);
	if (strcmp(member, "PropertiesChanged") == 0) {
		/* Record which properties changed. */
		const char *k;

		if (sd_bus_message_enter_container(m, 'a', "{sv}") >= 0) {
			while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
				sd_bus_message_read(m, "s", &k);
				strncat(line, " ", 255 - strlen(line));
				strncat(line, k, 255 - strlen(line));
				if (strcmp(k, "NWakeLocks") == 0)
					n_wake_locks_changes++;
				sd_bus_message_skip(m, "v");
				sd_bus_message_exit_container(m);
			}
		}
	}
	n_seen++;
	return 0;
}

/* Wait for a signal line containing needle, seen after index *from; returns when (monotonic) or 0. */
static usec_t wait_signal(const char *needle, unsigned *from, int timeout_ms)
{
	usec_t end = now(CLOCK_MONOTONIC) + (usec_t)timeout_ms * USEC_PER_MSEC;

	for (;;) {
		for (; *from < n_seen; (*from)++)
			if (strstr(seen[*from % 64], needle)) {
				(*from)++;
				return now(CLOCK_MONOTONIC);
			}
		if (now(CLOCK_MONOTONIC) >= end)
			return 0;
		if (sd_bus_process(bus, NULL) > 0)
			continue;
		sd_bus_wait(bus, 10 * USEC_PER_MSEC);
	}
}

static void drain(void)
{
	while (sd_bus_process(bus, NULL) > 0)
		;
}

static int open_client(sd_bus **ret)
{
	return harness_open_client(&h, ret);
}

static int acquire(sd_bus *b, const char *name, uint64_t timeout, int *ret_fd, sd_bus_error *e)
{
	return harness_acquire(b, name, "testing", timeout, ret_fd, e);
}

static int count_locks_on(sd_bus *b, const char *name)
{
	return harness_count_locks(b, name);
}

static int count_locks(const char *name)
{
	int n = count_locks_on(bus, name);

	assert_true(n >= 0);
	return n;
}

static int group_setup(void **state)
{
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("UNITS_DIR") || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "test-bus needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
	assert_int_equal(harness_bus_start(&h, "sysfs-basic", NULL), 0);
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[Backoff]\nDelaySec=300ms\n[WakeLocks]\nMaxPerUser=3\nStartupHoldSec=0\nGroup=65534\n" }) > 0);
	assert_int_equal(open_client(&bus), 0);
	assert_true(sd_bus_match_signal(bus, NULL, NAME, PATH, IFACE, NULL, on_signal, NULL) >= 0);
	assert_true(sd_bus_match_signal(bus, NULL, NAME, PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged",
					on_signal, NULL) >= 0);
	drain();
	*state = NULL;
	return 0;
}

static int group_teardown(void **state)
{
	int status;

	sd_bus_flush_close_unref(bus);
	status = harness_daemon_stop(&h, SIGTERM);
	/* A daemon that crashed on any of our bad input fails the whole group. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "autosleepd did not exit cleanly (status %d)\n", status);
		harness_show_log(&h, "daemon.log");
		status = -1;
	} else {
		status = 0;
	}
	harness_stop(&h);
	return status;
}

static void test_acquire_and_close(void **state)
{
	unsigned from = n_seen;
	int fd = -1;

	assert_int_equal(acquire(bus, "close-me", 0, &fd, NULL), 1);
	assert_true(wait_signal("WakeLockAcquired close-me", &from, 1000));
	assert_int_equal(count_locks("close-me"), 1);
	close(fd);
	assert_true(wait_signal("WakeLockReleased close-me", &from, 1000));
	assert_non_null(strstr(seen[(from - 1) % 64], " closed "));
	assert_int_equal(count_locks("close-me"), 0);
}

/*
 * NWakeLocks is announced once the count settled (50 ms), and only when it
 * differs from the last announcement: locks taken and dropped in a burst cost
 * at most one PropertiesChanged per window, where each used to cost two.
 */
static void test_n_wake_locks_settles(void **state)
{
	const unsigned cycles = 40;
	unsigned changes, from;
	uint32_t n = 0;
	usec_t t0, elapsed;
	int fd = -1;

	/* Whatever earlier tests changed is announced first. */
	for (usec_t end = now(CLOCK_MONOTONIC) + 300 * USEC_PER_MSEC; now(CLOCK_MONOTONIC) < end;)
		if (sd_bus_process(bus, NULL) <= 0)
			sd_bus_wait(bus, 10 * USEC_PER_MSEC);
	changes = n_wake_locks_changes;
	t0 = now(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < cycles; i++) {
		from = n_seen;
		assert_int_equal(acquire(bus, "burst", 0, &fd, NULL), 1);
		close(fd);
		assert_true(wait_signal("WakeLockReleased burst", &from, 2000));
	}
	elapsed = now(CLOCK_MONOTONIC) - t0;
	for (usec_t end = now(CLOCK_MONOTONIC) + 300 * USEC_PER_MSEC; now(CLOCK_MONOTONIC) < end;)
		if (sd_bus_process(bus, NULL) <= 0)
			sd_bus_wait(bus, 10 * USEC_PER_MSEC);
	/* At most one per window that started during the burst (slow runs have more windows). */
	if (n_wake_locks_changes - changes > 1 + elapsed / (50 * USEC_PER_MSEC))
		fail_msg("%u NWakeLocks changes for %u locks in %llu ms", n_wake_locks_changes - changes, cycles,
			 (unsigned long long)(elapsed / USEC_PER_MSEC));

	/* A count that stays changed is announced, and it is the count. */
	changes = n_wake_locks_changes;
	assert_int_equal(acquire(bus, "kept", 0, &fd, NULL), 1);
	for (usec_t end = now(CLOCK_MONOTONIC) + 2 * USEC_PER_SEC;
	     n_wake_locks_changes == changes && now(CLOCK_MONOTONIC) < end;)
		if (sd_bus_process(bus, NULL) <= 0)
			sd_bus_wait(bus, 10 * USEC_PER_MSEC);
	assert_int_equal(n_wake_locks_changes, changes + 1);
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "NWakeLocks", NULL, 'u', &n) >= 0);
	assert_int_equal(n, (uint32_t)count_locks(NULL));
	from = n_seen;
	close(fd);
	assert_true(wait_signal("WakeLockReleased kept", &from, 2000));
}

/*
 * The bus is asked for a client's credentials once, without the daemon
 * waiting for the answer, and they are forgotten when the client leaves.
 */
static void test_credentials_asked_once(void **state)
{
	char needle[128];
	const char *unique;
	sd_bus *b;
	int fd, found = 0;

	assert_int_equal(open_client(&b), 0);
	assert_true(sd_bus_get_unique_name(b, &unique) >= 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(acquire(b, "creds", 0, &fd, NULL), 1);
		close(fd);
	}
	snprintf(needle, sizeof(needle), "Credentials of %s: uid 0, pid %d", unique, (int)getpid());
	assert_int_equal(harness_count_in_log(&h, "daemon.log", needle), 1);
	snprintf(needle, sizeof(needle), "Forgetting the credentials of %s:", unique);
	sd_bus_flush_close_unref(b);
	for (int i = 0; i < 200 && !(found = harness_count_in_log(&h, "daemon.log", needle)); i++)
		usleep(10000);
	assert_int_equal(found, 1);
}

static void test_release_method(void **state)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	unsigned from = n_seen;
	int fd = -1;

	assert_int_equal(acquire(bus, "by-method", 0, &fd, NULL), 1);
	assert_int_equal(sd_bus_call_method(bus, NAME, PATH, IFACE, "ReleaseWakeLock", NULL, NULL, "s", "by-method"), 1);
	assert_true(wait_signal("WakeLockReleased by-method", &from, 1000));
	assert_non_null(strstr(seen[(from - 1) % 64], " released "));
	assert_int_equal(count_locks("by-method"), 0);
	close(fd);
	assert_true(sd_bus_call_method(bus, NAME, PATH, IFACE, "ReleaseWakeLock", &e, NULL, "s", "by-method") < 0);
	assert_string_equal(e.name, "org.autosleep1.Error.NoSuchWakeLock");
	sd_bus_error_free(&e);
}

static void test_killed_client(void **state)
{
	unsigned from = n_seen;
	int ready[2];
	usec_t t0, t1;
	pid_t pid;
	char c;

	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sd_bus *b;
		int fd;

		if (open_client(&b) < 0 || acquire(b, "victim", 0, &fd, NULL) < 0)
			_exit(1);
		write(ready[1], "x", 1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_true(wait_signal("WakeLockAcquired victim", &from, 1000));
	t0 = now(CLOCK_MONOTONIC);
	kill(pid, SIGKILL);
	t1 = wait_signal("WakeLockReleased victim", &from, 1000);
	waitpid(pid, NULL, 0);
	assert_true(t1 > 0);
	fprintf(stderr, "# SIGKILLed client's lock released after %.1f ms\n", (double)(t1 - t0) / USEC_PER_MSEC);
	assert_true(t1 - t0 <= 100 * USEC_PER_MSEC);
	assert_int_equal(count_locks("victim"), 0);
	close(ready[0]);
}

static void test_dup_keeps_lock(void **state)
{
	unsigned from = n_seen;
	int fd = -1, dup_fd;

	assert_int_equal(acquire(bus, "dupped", 0, &fd, NULL), 1);
	dup_fd = dup(fd);
	close(fd);
	usleep(200 * 1000);
	drain();
	assert_int_equal(count_locks("dupped"), 1);
	close(dup_fd);
	assert_true(wait_signal("WakeLockReleased dupped", &from, 1000));
	assert_int_equal(count_locks("dupped"), 0);
}

static void test_timeout_expires(void **state)
{
	unsigned from = n_seen;
	int fd = -1;

	assert_int_equal(acquire(bus, "short", 300 * USEC_PER_MSEC, &fd, NULL), 1);
	assert_true(wait_signal("WakeLockReleased short", &from, 2000));
	assert_non_null(strstr(seen[(from - 1) % 64], " expired "));
	close(fd);
}

static void test_timeout_near_2_64(void **state)
{
	uint64_t timeouts[] = { UINT64_MAX - 1, UINT64_MAX - USEC_PER_SEC, UINT64_MAX / 2 + 1 };
	int fds[3];

	/* now + timeout must saturate, not wrap to a deadline in the past. */
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(acquire(bus, "far-future", timeouts[i], &fds[i], NULL), 1);
	usleep(300 * 1000);
	drain();
	assert_int_equal(count_locks("far-future"), 3);
	for (size_t i = 0; i < 3; i++)
		close(fds[i]);
}

static void test_fd_outlives_connection(void **state)
{
	unsigned from = n_seen;
	sd_bus *b;
	int fd = -1;

	/* The lease is the fd: handed on (to a child, say), it outlives the caller's connection. */
	assert_int_equal(open_client(&b), 0);
	assert_int_equal(acquire(b, "handed-on", 0, &fd, NULL), 1);
	sd_bus_flush_close_unref(b);
	usleep(300 * 1000);
	drain();
	assert_int_equal(count_locks("handed-on"), 1);
	close(fd);
	assert_true(wait_signal("WakeLockReleased handed-on", &from, 1000));
	assert_non_null(strstr(seen[(from - 1) % 64], " closed "));
}

struct reply_slot {
	bool done;
	char error[256];
	int fd;
};

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct reply_slot *r = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	int fd;

	(void)ret_error;
	r->done = true;
	snprintf(r->error, sizeof(r->error), "%s", e ? e->name : "");
	/* The lock is the fd: keep it, or closing the reply would end the lock before the Release. */
	if (!e && sd_bus_message_read(m, "h", &fd) > 0)
		r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return 0;
}

/*
 * A client's calls run in the order it sent them. A new client's first
 * AcquireWakeLock waits for its credentials (and, for a user other than
 * root, for polkit); the ReleaseWakeLock it sends right behind, in the same
 * flush, must not overtake it: it would answer NoSuchWakeLock and leave held
 * a lock its holder believes released. No asserts: children run this too.
 * Returns 0 when both succeeded and the lock is gone while its fd is open.
 */
static int ordered_round(sd_bus *b)
{
	struct reply_slot a = { .fd = -1 }, r = { .fd = -1 };
	int ret = 0;

	if (sd_bus_call_method_async(b, NULL, NAME, PATH, IFACE, "AcquireWakeLock", on_reply, &a, "sst", "ordered",
				     "testing", (uint64_t)0) < 0 ||
	    sd_bus_call_method_async(b, NULL, NAME, PATH, IFACE, "ReleaseWakeLock", on_reply, &r, "s", "ordered") < 0 ||
	    sd_bus_flush(b) < 0)
		return 1;
	while (!a.done || !r.done) {
		int k = sd_bus_process(b, NULL);

		if (k < 0 || (k == 0 && sd_bus_wait(b, 5 * USEC_PER_SEC) <= 0))
			return 2;
	}
	if (a.error[0] || r.error[0]) {
		print_error("acquire '%s', release '%s'\n", a.error, r.error);
		ret = 3;
	} else if (a.fd < 0) {
		ret = 4;
	} else if (harness_count_locks(b, "ordered") != 0) {
		/* Released while its fd is still open: by the call, not by a close. */
		ret = 5;
	}
	if (a.fd >= 0)
		close(a.fd);
	return ret;
}

static void test_calls_keep_their_order(void **state)
{
	for (int round = 0; round < 30; round++) {
		sd_bus *b;
		int r;

		assert_int_equal(open_client(&b), 0);
		r = ordered_round(b);
		if (r != 0) {
			print_error("round %d failed (%d)\n", round, r);
			harness_show_log(&h, "daemon.log");
		}
		assert_int_equal(r, 0);
		sd_bus_flush_close_unref(b);
	}
}

static void expect_invalid(const char *name, const char *needle)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int fd;

	assert_true(acquire(bus, name, 0, &fd, &e) < 0);
	assert_string_equal(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
	if (!strstr(e.message, needle))
		fail_msg("expected '%s' in '%s'", needle, e.message);
	sd_bus_error_free(&e);
}

static void test_bad_names(void **state)
{
	char long_name[70];

	memset(long_name, 'x', 65);
	long_name[65] = 0;
	expect_invalid("", "empty");
	expect_invalid("has space", "byte 0x20 at offset 3");
	expect_invalid("tab\there", "byte 0x09 at offset 3");
	expect_invalid(long_name, "65 bytes long, at most 64");
	expect_invalid("caf\xc3\xa9", "byte 0xc3 at offset 3");
	assert_int_equal(count_locks(NULL), 0);
}

/* AcquireWakeLockWithOptions with n options, each key keys[i % n_keys] and a boolean, or a string if as_string. */
static int acquire_with(const char *name, const char *const *keys, unsigned n_keys, unsigned n, bool as_string,
			int *ret_fd, sd_bus_error *e)
{
	sd_bus_message *m = NULL, *reply = NULL;
	int r, fd;

	*ret_fd = -1;
	r = sd_bus_message_new_method_call(bus, &m, NAME, PATH, IFACE, "AcquireWakeLockWithOptions");
	if (r >= 0)
		r = sd_bus_message_append(m, "sst", name, "testing options", (uint64_t)0);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "{sv}");
	for (unsigned i = 0; r >= 0 && i < n; i++)
		r = as_string ? sd_bus_message_append(m, "{sv}", keys[i % n_keys], "s", "yes")
			      : sd_bus_message_append(m, "{sv}", keys[i % n_keys], "b", 1);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_call(bus, m, 0, e, &reply);
	if (r >= 0 && sd_bus_message_read(reply, "h", &fd) >= 0)
		*ret_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	sd_bus_message_unref(reply);
	sd_bus_message_unref(m);
	return r;
}

static void expect_option_refused(const char *const *keys, unsigned n_keys, unsigned n, bool as_string,
				  const char *needle)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int fd;

	assert_true(acquire_with("refused", keys, n_keys, n, as_string, &fd, &e) < 0);
	assert_string_equal(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
	if (!strstr(e.message, needle))
		fail_msg("expected '%s' in '%s'", needle, e.message);
	sd_bus_error_free(&e);
	assert_int_equal(count_locks("refused"), 0);
}

/*
 * The options of AcquireWakeLockWithOptions: LidClosed, none at all, or the
 * same key a thousand times take a lock; an unknown key or a wrong type is
 * refused by name, also behind a valid one, and takes none.
 */
static void test_acquire_with_options(void **state)
{
	static const char *const lid[] = { "LidClosed" };
	static const char *const bad[] = { "LidClosed", "lidclosed" };
	static const char *const hostile[] = { "x\n<0>forged" };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int fd;

	(void)state;
	assert_int_equal(acquire_with("lid-closed", lid, 1, 1, false, &fd, &e), 1);
	assert_true(fd >= 0);
	assert_int_equal(count_locks("lid-closed"), 1);
	close(fd);
	assert_int_equal(acquire_with("no-options", lid, 1, 0, false, &fd, &e), 1);
	assert_int_equal(count_locks("no-options"), 1);
	close(fd);
	assert_int_equal(acquire_with("repeated", lid, 1, 1000, false, &fd, &e), 1);
	assert_int_equal(count_locks("repeated"), 1);
	close(fd);
	expect_option_refused(bad, 2, 2, false, "Unknown wake lock option 'lidclosed'");
	expect_option_refused(lid, 1, 1, true, "LidClosed must be a boolean");
	expect_option_refused(hostile, 1, 1, false, "Unknown wake lock option");
	/* The fds closed: every lock ends, and the daemon is still there. */
	for (int i = 0; i < 200 && (count_locks("lid-closed") || count_locks("no-options") || count_locks("repeated"));
	     i++)
		usleep(10000);
	assert_int_equal(count_locks("lid-closed") + count_locks("no-options") + count_locks("repeated"), 0);
	assert_true(harness_name_has_owner(bus));
}

static void test_quota(void **state)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int fds[4];

	for (int i = 0; i < 3; i++)
		assert_int_equal(acquire(bus, "quota", 0, &fds[i], NULL), 1);
	assert_true(acquire(bus, "quota", 0, &fds[3], &e) < 0);
	assert_string_equal(e.name, "org.freedesktop.DBus.Error.LimitsExceeded");
	assert_non_null(strstr(e.message, "MaxPerUser=3"));
	sd_bus_error_free(&e);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	usleep(100 * 1000);
	drain();
	assert_int_equal(count_locks("quota"), 0);
}

/* Run fn in a child as another user; returns its exit status. */
/* fn as uid and gid id, with only that group, as a user the test runner is not. */
static int as_user(unsigned id, int (*fn)(sd_bus *b))
{
	pid_t pid = fork();
	int status, r;

	assert_true(pid >= 0);
	if (pid == 0) {
		gid_t g = (gid_t)id;
		sd_bus *b;

		if (setgroups(1, &g) < 0 || setresgid(g, g, g) < 0 || setresuid(id, id, id) < 0)
			_exit(90);
		if (open_client(&b) < 0)
			_exit(91);
		r = fn(b);
		/* Clean, so that valgrind, which follows the fork, finds nothing lost. */
		sd_bus_flush_close_unref(b);
		_exit(r);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

/* nobody, in group 65534: the daemon's Group= here. */
static int as_nobody(int (*fn)(sd_bus *b))
{
	return as_user(65534, fn);
}

static int nobody_set_property(sd_bus *b)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_set_property(b, NAME, PATH, IFACE, "Enabled", &e, "b", 0);

	r = r < 0 && sd_bus_error_has_name(&e, SD_BUS_ERROR_ACCESS_DENIED) ? 0 : 1;
	sd_bus_error_free(&e);
	return r;
}

static int nobody_disable(sd_bus *b)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_call_method(b, NAME, PATH, IFACE, "Disable", &e, NULL, "");

	r = r < 0 && sd_bus_error_has_name(&e, SD_BUS_ERROR_ACCESS_DENIED) ? 0 : 1;
	sd_bus_error_free(&e);
	return r;
}

static int nobody_acquire(sd_bus *b)
{
	int fd = -1, r;

	/* Without polkit on the bus, wake locks are open to root and Group= (65534 here); the quota still applies. */
	r = acquire(b, "nobodys", 0, &fd, NULL) == 1 && count_locks_on(b, "nobodys") == 1 ? 0 : 1;
	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * Without polkit on the bus, a user in no group the admin named takes no
 * wake lock: the refusal names the key that would allow it.
 */
static int stranger_acquire(sd_bus *b)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int fd = -1, r;

	r = acquire(b, "strangers", 0, &fd, &e);
	if (fd >= 0)
		close(fd);
	r = r < 0 && sd_bus_error_has_name(&e, SD_BUS_ERROR_ACCESS_DENIED) && e.message &&
			    strstr(e.message, "Group=") && count_locks_on(b, "strangers") == 0
		    ? 0
		    : 1;
	if (r)
		print_error("stranger's acquire: '%s'\n", e.message ? e.message : "granted");
	sd_bus_error_free(&e);
	return r;
}

static void test_unprivileged_without_polkit(void **state)
{
	/* uid and gid 1, "daemon" on Debian: dbus-daemon takes only users the system knows. */
	assert_int_equal(as_user(1, stranger_acquire), 0);
	/* The same call from Group=: granted. */
	assert_int_equal(as_nobody(nobody_acquire), 0);
}

static void test_unprivileged(void **state)
{
	int enabled = 0;
	unsigned from = n_seen;

	assert_int_equal(as_nobody(nobody_set_property), 0);
	assert_int_equal(as_nobody(nobody_disable), 0);
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "Enabled", NULL, 'b', &enabled) >= 0);
	assert_true(enabled);
	assert_int_equal(as_nobody(nobody_acquire), 0);
	/* The child exited: its lock went with it, and it was recorded as uid 65534. */
	assert_true(wait_signal("WakeLockAcquired nobodys testing", &from, 1000));
	assert_non_null(strstr(seen[(from - 1) % 64], " 65534 "));
	assert_true(wait_signal("WakeLockReleased nobodys", &from, 1000));
}

/* The same order for a user that waits for polkit (here: none on the bus, so the answer is "no polkit"). */
static void test_unprivileged_calls_keep_their_order(void **state)
{
	for (int round = 0; round < 10; round++)
		assert_int_equal(as_nobody(ordered_round), 0);
}

static void test_cycles_signal_and_properties(void **state)
{
	unsigned from = n_seen, from2 = n_seen;
	uint64_t before = 0, after = 0;
	usec_t end;

	/*
	 * A Resumed and its PropertiesChanged may already sit in our queue for a
	 * cycle that "before" counts: wait for the count to pass "before", each
	 * step woken by a SuspendCount change, rather than for one signal.
	 */
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "SuspendCount", NULL, 't', &before) >= 0);
	assert_true(wait_signal("Resumed dry-run", &from, 3000));
	end = now(CLOCK_MONOTONIC) + 3 * USEC_PER_SEC;
	do {
		assert_true(wait_signal("SuspendCount", &from2, 3000));
		assert_true(strstr(seen[(from2 - 1) % 64], "PropertiesChanged") == seen[(from2 - 1) % 64]);
		assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "SuspendCount", NULL, 't', &after) >= 0);
	} while (after <= before && now(CLOCK_MONOTONIC) < end);
	assert_true(after > before);
}

/*
 * The battery figures are wired from the suspender to the bus: after dry-run
 * cycles, which never sleep, the share asleep is a real 0, while the drain
 * has no figure (-1): the fixture has no battery, and no minute has passed.
 */
static void test_battery_figures(void **state)
{
	unsigned from = n_seen;
	double share = -2, drain = -2, power = -2;

	assert_true(wait_signal("Resumed dry-run", &from, 3000));
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "AsleepShare", NULL, 'd', &share) >= 0);
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "BatteryDrainAwake", NULL, 'd', &drain) >= 0);
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "BatteryPowerAsleep", NULL, 'd', &power) >= 0);
	assert_true(share >= 0 && share < 0.01);
	assert_true(drain == -1);
	assert_true(power == -1);
}

static void test_lock_blocks_cycles(void **state)
{
	unsigned from;
	uint64_t a = 0, b = 0;
	int fd = -1;

	assert_int_equal(acquire(bus, "blocker", 0, &fd, NULL), 1);
	/* A cycle already past the gate may finish; after that, none may start. */
	usleep(500 * 1000);
	drain();
	from = n_seen;
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "SuspendCount", NULL, 't', &a) >= 0);
	assert_int_equal(wait_signal("Resumed", &from, 1500), 0);
	assert_true(sd_bus_get_property_trivial(bus, NAME, PATH, IFACE, "SuspendCount", NULL, 't', &b) >= 0);
	assert_int_equal(a, b);
	close(fd);
	assert_true(wait_signal("Resumed", &from, 3000));
}

static void test_disable_enable(void **state)
{
	unsigned from;
	char *st = NULL;

	assert_int_equal(sd_bus_call_method(bus, NAME, PATH, IFACE, "Disable", NULL, NULL, ""), 1);
	usleep(500 * 1000);
	drain();
	from = n_seen;
	assert_true(sd_bus_get_property_string(bus, NAME, PATH, IFACE, "State", NULL, &st) >= 0);
	assert_string_equal(st, "disabled");
	free(st);
	assert_int_equal(wait_signal("Resumed", &from, 1000), 0);
	assert_int_equal(sd_bus_call_method(bus, NAME, PATH, IFACE, "Enable", NULL, NULL, ""), 1);
	assert_true(wait_signal("Resumed", &from, 3000));
}

static void expect_soak_error(const char *key, const char *type, const void *value, const char *error_name,
			      const char *needle)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *call = NULL;

	assert_int_equal(sd_bus_message_new_method_call(bus, &call, NAME, PATH, IFACE, "SoakCycle"), 0);
	assert_true(sd_bus_message_open_container(call, 'a', "{sv}") >= 0);
	if (key && type[0] == 's')
		assert_true(sd_bus_message_append(call, "{sv}", key, "s", (const char *)value) >= 0);
	else if (key)
		assert_true(sd_bus_message_append(call, "{sv}", key, "t", *(const uint64_t *)value) >= 0);
	assert_true(sd_bus_message_close_container(call) >= 0);
	assert_true(sd_bus_call(bus, call, 5 * USEC_PER_SEC, &e, NULL) < 0);
	if (!sd_bus_error_has_name(&e, error_name) || !strstr(e.message, needle))
		fail_msg("expected %s with '%s', got %s: %s", error_name, needle, e.name, e.message);
	sd_bus_error_free(&e);
	sd_bus_message_unref(call);
}

/* Bad options are named; a dry run refuses to suspend, and the daemon lives on. */
static void test_soak_cycle_input(void **state)
{
	uint64_t zero = 0, t = 5;
	char *st = NULL;

	expect_soak_error("Colour", "s", "red", SD_BUS_ERROR_INVALID_ARGS, "Unknown soak option 'Colour'");
	expect_soak_error("State", "s", "hibernate", SD_BUS_ERROR_INVALID_ARGS, "Invalid State 'hibernate'");
	expect_soak_error("PmTest", "s", "", SD_BUS_ERROR_INVALID_ARGS, "Invalid PmTest ''");
	expect_soak_error("ReadTimeoutUSec", "t", &zero, SD_BUS_ERROR_INVALID_ARGS, "ReadTimeoutUSec 0 is out of range");
	expect_soak_error("State", "t", &t, SD_BUS_ERROR_INVALID_ARGS, "State must be a string");
	expect_soak_error(NULL, NULL, NULL, SD_BUS_ERROR_NOT_SUPPORTED, "--dry-run");
	/* Nothing was paused by the refused calls. */
	assert_true(sd_bus_get_property_string(bus, NAME, PATH, IFACE, "State", NULL, &st) >= 0);
	assert_string_not_equal(st, "soaking");
	free(st);
}

static char *normalize(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	bool space = false;

	/* Whitespace between tags carries no meaning. */
	for (; *s; s++) {
		if (*s == ' ' || *s == '\n' || *s == '\t') {
			space = true;
			continue;
		}
		if (space && o > out && o[-1] != '>' && *s != '<' && *s != '/' && *s != '>')
			*o++ = ' ';
		space = false;
		*o++ = *s;
	}
	*o = 0;
	return out;
}

static void test_introspection_matches_xml(void **state)
{
	sd_bus_message *reply = NULL;
	const char *xml, *start, *end;
	char *path, *want, *got, *a, *b;
	FILE *f;
	size_t n = 0;

	assert_int_equal(sd_bus_call_method(bus, NAME, PATH, "org.freedesktop.DBus.Introspectable", "Introspect", NULL,
					    &reply, ""), 1);
	assert_true(sd_bus_message_read(reply, "s", &xml) >= 0);
	start = strstr(xml, "<interface name=\"org.autosleep1.Manager\">");
	assert_non_null(start);
	end = strstr(start, "</interface>");
	assert_non_null(end);
	got = strndup(start, (size_t)(end - start) + strlen("</interface>"));

	assert_true(asprintf(&path, "%s/org.autosleep1.Manager.xml", getenv("UNITS_DIR")) > 0);
	f = fopen(path, "re");
	assert_non_null(f);
	want = NULL;
	assert_true(getdelim(&want, &n, 0, f) > 0);
	fclose(f);
	start = strstr(want, "<interface name=\"org.autosleep1.Manager\">");
	assert_non_null(start);
	end = strstr(start, "</interface>");
	assert_non_null(end);
	a = normalize(got);
	*(char *)(end + strlen("</interface>")) = 0;
	b = normalize(start);
	if (strcmp(a, b) != 0)
		fail_msg("introspection differs from %s:\n--- daemon:\n%s\n--- file:\n%s", path, a, b);
	free(a);
	free(b);
	free(got);
	free(want);
	free(path);
	sd_bus_message_unref(reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acquire_and_close),
		cmocka_unit_test(test_n_wake_locks_settles),
		cmocka_unit_test(test_credentials_asked_once),
		cmocka_unit_test(test_release_method),
		cmocka_unit_test(test_killed_client),
		cmocka_unit_test(test_dup_keeps_lock),
		cmocka_unit_test(test_timeout_expires),
		cmocka_unit_test(test_timeout_near_2_64),
		cmocka_unit_test(test_fd_outlives_connection),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_unprivileged),
		cmocka_unit_test(test_unprivileged_without_polkit),
		cmocka_unit_test(test_acquire_with_options),
		cmocka_unit_test(test_unprivileged_calls_keep_their_order),
		cmocka_unit_test(test_cycles_signal_and_properties),
		cmocka_unit_test(test_battery_figures),
		cmocka_unit_test(test_calls_keep_their_order),
		cmocka_unit_test(test_lock_blocks_cycles),
		cmocka_unit_test(test_disable_enable),
		cmocka_unit_test(test_introspection_matches_xml),
		cmocka_unit_test(test_soak_cycle_input),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
