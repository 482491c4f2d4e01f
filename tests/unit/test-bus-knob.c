/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The knob (/sys/power/userspace_autosleep) through the real daemon on a
 * private dbus-daemon and a fixture tree: set while autosleep is active, put
 * back on Disable and on stop, kept consistent across a SIGKILL (by the next
 * instance, or by "autosleepd --restore-knob" as the unit's ExecStopPost=),
 * and reported as UserspaceAutosleep on the bus and in "autosleepctl status".
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "fixture.h"

#define KNOB "sys/power/userspace_autosleep"
#define LOG "knob.log"
#define CONFIG "[Backoff]\nDelaySec=200ms\nMultiplier=1\n[WakeLocks]\nStartupHoldSec=0\n[Logind]\nHonorInhibitors=no\n"

static struct harness h;
static char runtime_env[600];
static char saved[600];

static int setup(void **state)
{
	char dir[512], count[600];

	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD") ||
	    !getenv("AUTOSLEEPCTL")) {
		fprintf(stderr, "test-bus-knob needs root, /usr/bin/dbus-daemon and the binaries, skipping\n");
		exit(77);
	}
	assert_int_equal(harness_bus_start(&h, "sysfs-basic", NULL), 0);
	snprintf(dir, sizeof(dir), "%s/run", h.dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(runtime_env, sizeof(runtime_env), "RUNTIME_DIRECTORY=%s", dir);
	snprintf(saved, sizeof(saved), "%s/userspace_autosleep.saved", dir);
	fixture_write(h.dir, KNOB, "0\n");
	/*
	 * Suspend cycles are not what this test is about, and they would break
	 * it: a real daemon's state write truncates the fixture's state file
	 * before it writes, and a SIGKILL in between, or a second instance
	 * starting then, finds no states offered. A wakeup_count FIFO that
	 * nobody writes keeps the thread in its count read, as a kernel lock
	 * held for the whole test would; stopping interrupts that read.
	 */
	snprintf(count, sizeof(count), "%s/sys/power/wakeup_count", h.dir);
	assert_int_equal(unlink(count), 0);
	assert_int_equal(mkfifo(count, 0600), 0);
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_stop(&h);
	return 0;
}

static pid_t start(const char *config, bool real)
{
	char *const env[] = { runtime_env, NULL };

	return harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = config, .log = LOG, .env = env, .real = real });
}

/* The knob's content without the newline the kernel adds. */
static int knob(void)
{
	char *v = fixture_read(h.dir, KNOB);
	int r = v[0] == '0' ? 0 : v[0] == '1' ? 1 : -1;

	free(v);
	return r;
}

static char *mode(void)
{
	sd_bus *b = NULL;
	char *s = NULL;

	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_true(sd_bus_get_property_string(b, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "UserspaceAutosleep", NULL,
					       &s) >= 0);
	sd_bus_flush_close_unref(b);
	return s;
}

static int32_t knob_property(void)
{
	sd_bus *b = NULL;
	int32_t v = -2;

	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_true(sd_bus_get_property_trivial(b, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "UserspaceAutosleepKnob",
						NULL, 'i', &v) >= 0);
	sd_bus_flush_close_unref(b);
	return v;
}

static void assert_mode(const char *want)
{
	char *m = mode();

	assert_string_equal(m, want);
	free(m);
}

static void call(const char *method)
{
	sd_bus *b = NULL;

	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_int_equal(sd_bus_call_method(b, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, method, NULL, NULL, ""), 1);
	sd_bus_flush_close_unref(b);
}

/* "autosleepctl status" against the private bus; returns its output. */
static char *status(void)
{
	char cmd[1024], *out = calloc(1, 8192);
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "DBUS_SYSTEM_BUS_ADDRESS='%s' '%s' status 2>&1", h.address, getenv("AUTOSLEEPCTL"));
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n < 8191) {
		size_t k = fread(out + n, 1, 8191 - n, p);

		if (k == 0)
			break;
		n += k;
	}
	assert_int_equal(pclose(p), 0);
	return out;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void test_follows_autosleep(void **state)
{
	char *s;

	(void)state;
	assert_true(start(CONFIG, true) > 0);
	assert_int_equal(knob(), 1);
	assert_true(exists(saved));
	assert_mode("runtime-knob");
	assert_int_equal(knob_property(), 1);
	assert_int_equal(harness_count_in_log(&h, LOG, "Userspace autosleep: runtime-knob"), 1);
	s = status();
	assert_non_null(strstr(s, "Frequent suspend: runtime-knob (/sys/power/userspace_autosleep=1)"));
	assert_null(strstr(s, "Warning"));
	free(s);

	/* Disable returns once no state write is under way; the knob is back by then. */
	call("Disable");
	assert_int_equal(knob(), 0);
	assert_false(exists(saved));
	assert_mode("none");
	assert_int_equal(knob_property(), 0);
	s = status();
	assert_non_null(strstr(s, "Frequent suspend: none (/sys/power/userspace_autosleep=0)"));
	/* Disabled, a 0 is what we want: no warning. */
	assert_null(strstr(s, "Warning"));
	free(s);

	call("Enable");
	assert_int_equal(knob(), 1);
	assert_mode("runtime-knob");

	/* A clean stop hands the machine back. */
	assert_true(WIFEXITED(harness_daemon_stop(&h, SIGTERM)));
	assert_int_equal(knob(), 0);
	assert_false(exists(saved));
}

static void test_sigkill_then_restart(void **state)
{
	char *st;

	(void)state;
	assert_true(start(CONFIG, true) > 0);
	assert_int_equal(knob(), 1);
	assert_true(WIFSIGNALED(harness_daemon_stop(&h, SIGKILL)));
	/* Nobody put it back: the next instance must know the 1 is not the old value. */
	assert_int_equal(knob(), 1);
	assert_true(exists(saved));

	assert_true(start(CONFIG, true) > 0);
	assert_int_equal(harness_count_in_log(&h, LOG, "from an earlier instance: the knob read 0"), 1);
	assert_int_equal(knob(), 1);
	assert_mode("runtime-knob");
	assert_true(WIFEXITED(harness_daemon_stop(&h, SIGTERM)));
	assert_int_equal(knob(), 0);
	assert_false(exists(saved));
	/* Neither instance wrote state (setup()), and the second stopped from inside its count read. */
	st = fixture_read(h.dir, "sys/power/state");
	assert_string_equal(st, "freeze mem disk\n");
	free(st);
	assert_int_equal(harness_count_in_log(&h, LOG, "Writing mem to state"), 0);
	assert_true(harness_count_in_log(&h, LOG, "Reading wakeup_count") > 0);
}

/* A second instance (by hand, same runtime directory) touches nothing of the first's before it has the name. */
static void test_second_instance_leaves_first_alone(void **state)
{
	char *const env[] = { runtime_env, NULL };
	char *before, *after;
	pid_t first, second;
	int status = -1;

	(void)state;
	first = start(CONFIG, true);
	assert_true(first > 0);
	assert_int_equal(knob(), 1);
	before = fixture_read("/", saved);
	second = harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = CONFIG, .log = "second.log", .env = env, .real = true, .no_wait = true });
	assert_true(second > 0);
	for (int i = 0; i < 500 && waitpid(second, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (status == -1) {
		kill(second, SIGKILL);
		waitpid(second, NULL, 0);
	}
	h.daemon_pid = first;
	assert_true(WIFEXITED(status));
	assert_int_not_equal(WEXITSTATUS(status), 0);
	assert_int_equal(harness_count_in_log(&h, "second.log", "Another autosleepd owns org.autosleep1"), 1);
	/* The first's knob, its saved old value, and the first itself are as they were. */
	assert_int_equal(knob(), 1);
	after = fixture_read("/", saved);
	assert_string_equal(after, before);
	free(before);
	free(after);
	assert_int_equal(kill(first, 0), 0);
	assert_mode("runtime-knob");
	assert_true(WIFEXITED(harness_daemon_stop(&h, SIGTERM)));
	assert_int_equal(knob(), 0);
}

/* ExecStopPost=: after a SIGKILL with no restart, the knob goes back at once. */
static void test_restore_knob_option(void **state)
{
	char cmd[1024];

	(void)state;
	assert_true(start(CONFIG, true) > 0);
	assert_true(WIFSIGNALED(harness_daemon_stop(&h, SIGKILL)));
	assert_int_equal(knob(), 1);
	snprintf(cmd, sizeof(cmd), "%s '%s' --root '%s' --restore-knob > '%s/restore.log' 2>&1", runtime_env,
		 getenv("AUTOSLEEPD"), h.dir, h.dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(knob(), 0);
	assert_false(exists(saved));
	assert_int_equal(harness_count_in_log(&h, "restore.log", "back to 0"), 1);
	/* Again, with nothing saved: nothing to do, and no error. */
	fixture_write(h.dir, KNOB, "1\n");
	assert_int_equal(system(cmd), 0);
	assert_int_equal(knob(), 1);
	fixture_write(h.dir, KNOB, "0\n");
}

static void test_not_managed(void **state)
{
	char *s;

	(void)state;
	assert_true(start(CONFIG "[Suspend]\nSetUserspaceAutosleep=no\n", true) > 0);
	assert_int_equal(knob(), 0);
	assert_false(exists(saved));
	assert_mode("none");
	assert_int_equal(harness_count_in_log(&h, LOG, "SetUserspaceAutosleep=no"), 1);
	s = status();
	assert_non_null(strstr(s, "Warning: neither CONFIG_PM_USERSPACE_AUTOSLEEP nor"));
	free(s);
	assert_true(WIFEXITED(harness_daemon_stop(&h, SIGTERM)));
	assert_int_equal(knob(), 0);
}

/* A dry run suspends nothing and so tells the kernel nothing. */
static void test_dry_run(void **state)
{
	(void)state;
	assert_true(start(CONFIG, false) > 0);
	assert_int_equal(knob(), 0);
	assert_false(exists(saved));
	assert_true(WIFEXITED(harness_daemon_stop(&h, SIGTERM)));
}

/* Without the knob only the option could decide, and the fixture has no config for this kernel. */
static void test_no_knob(void **state)
{
	char path[1024], *s;

	(void)state;
	snprintf(path, sizeof(path), "%s/%s", h.dir, KNOB);
	assert_int_equal(unlink(path), 0);
	assert_true(start(CONFIG, true) > 0);
	assert_mode("unknown");
	assert_int_equal(knob_property(), -1);
	s = status();
	assert_non_null(strstr(s, "Frequent suspend: unknown (no /sys/power/userspace_autosleep)"));
	assert_non_null(strstr(s, "Warning: this kernel may lack CONFIG_PM_USERSPACE_AUTOSLEEP"));
	free(s);
	assert_false(exists(path));
	assert_true(WIFEXITED(harness_daemon_stop(&h, SIGTERM)));
	fixture_write(h.dir, KNOB, "0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_follows_autosleep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_instance_leaves_first_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_then_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_knob_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_managed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_knob, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
