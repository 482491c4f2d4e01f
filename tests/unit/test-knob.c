/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"
#include "knob.h"
#include "sysfs.h"
#include "sysfs-inject.h"

#define KNOB SYSFS_POWER_USERSPACE_AUTOSLEEP

/* The kernel rejecting a knob write (a sandbox, or a value it refuses). */
static int fail_knob_write;

static int inject_write(void *userdata, const char *rel, const char *value)
{
	(void)userdata;
	(void)value;
	if (fail_knob_write && strcmp(rel, KNOB) == 0)
		return fail_knob_write;
	return SYSFS_INJECT_PASS;
}

static const struct sysfs_injector injector = { .write = inject_write };

struct fx {
	char *root;
	char state[PATH_MAX]; /* stands in for the unit's RuntimeDirectory= */
	char saved[PATH_MAX + 64];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->root = fixture_new("sysfs-basic");
	snprintf(f->state, sizeof(f->state), "%s/run", f->root);
	snprintf(f->saved, sizeof(f->saved), "%s/userspace_autosleep.saved", f->state);
	assert_int_equal(mkdir(f->state, 0700), 0);
	assert_int_equal(sysfs_set_root(f->root), 0);
	fail_knob_write = 0;
	sysfs_inject_set(&injector);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	sysfs_inject_set(NULL);
	fixture_free(f->root);
	free(f);
	return 0;
}

static void assert_knob(struct fx *f, const char *want)
{
	char *v = fixture_read(f->root, KNOB);

	assert_string_equal(v, want);
	free(v);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void assert_file(const char *path, const char *want)
{
	FILE *fp = fopen(path, "re");
	char buf[16] = "";

	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, want);
}

static void test_absent(void **state)
{
	struct fx *f = *state;
	struct knob k;

	assert_int_equal(knob_init(&k, true, f->state), 0);
	assert_false(k.present);
	assert_int_equal(k.value, -1);
	assert_int_equal(knob_activate(&k), 0);
	assert_false(exists(f->saved));
	/* Without a knob the option alone decides. */
	assert_int_equal(knob_mode(&k, KCONFIG_YES), KNOB_MODE_COMPILE_TIME);
	assert_int_equal(knob_mode(&k, KCONFIG_NO), KNOB_MODE_NONE);
	assert_int_equal(knob_mode(&k, KCONFIG_UNKNOWN), KNOB_MODE_UNKNOWN);
	knob_done(&k);
}

static void test_activate_deactivate(void **state)
{
	struct fx *f = *state;
	struct knob k;

	fixture_write(f->root, KNOB, "0\n");
	assert_int_equal(knob_init(&k, true, f->state), 0);
	assert_true(k.present);
	assert_int_equal(knob_mode(&k, KCONFIG_NO), KNOB_MODE_NONE);

	assert_int_equal(knob_activate(&k), 0);
	assert_knob(f, "1");
	/* The value from before us is on disk before the knob changes. */
	assert_file(f->saved, "0\n");
	assert_int_equal(knob_mode(&k, KCONFIG_NO), KNOB_MODE_RUNTIME);
	/* A kernel built with the option keeps its own name for the mode. */
	assert_int_equal(knob_mode(&k, KCONFIG_YES), KNOB_MODE_COMPILE_TIME);

	/* Activating twice must not save our own 1 as the old value. */
	assert_int_equal(knob_activate(&k), 0);
	assert_file(f->saved, "0\n");

	assert_int_equal(knob_deactivate(&k), 0);
	assert_knob(f, "0");
	assert_false(exists(f->saved));
	assert_int_equal(k.saved, -1);
	assert_int_equal(knob_mode(&k, KCONFIG_NO), KNOB_MODE_NONE);
	/* Nothing saved: a second deactivate writes nothing. */
	fixture_write(f->root, KNOB, "1\n");
	assert_int_equal(knob_deactivate(&k), 0);
	assert_knob(f, "1\n");
	knob_done(&k);
}

/*
 * Where the old value cannot be saved, the knob is not set: a 1 that no
 * ExecStopPost= could put back would outlive the daemon.
 */
static void test_save_fails(void **state)
{
	struct fx *f = *state;
	struct knob k;

	fixture_write(f->root, KNOB, "0\n");
	assert_int_equal(knob_init(&k, true, f->state), 0);
	assert_int_equal(rmdir(f->state), 0);
	assert_true(knob_activate(&k) < 0);
	assert_knob(f, "0\n");
	assert_true(k.value != 1);
	assert_int_equal(knob_mode(&k, KCONFIG_NO), KNOB_MODE_NONE);
	/* Nothing was changed, so nothing is put back. */
	assert_int_equal(knob_deactivate(&k), 0);
	assert_knob(f, "0\n");
	/* Once the directory is back, the next activation sets it. */
	assert_int_equal(mkdir(f->state, 0700), 0);
	assert_int_equal(knob_activate(&k), 0);
	assert_knob(f, "1");
	assert_file(f->saved, "0\n");
	knob_done(&k);
}

/* A kernel built with the option: the knob starts at 1 and goes back to 1. */
static void test_was_one(void **state)
{
	struct fx *f = *state;
	struct knob k;

	fixture_write(f->root, KNOB, "1\n");
	assert_int_equal(knob_init(&k, true, f->state), 0);
	assert_int_equal(knob_activate(&k), 0);
	assert_file(f->saved, "1\n");
	assert_int_equal(knob_deactivate(&k), 0);
	assert_knob(f, "1");
	knob_done(&k);
}

static void test_not_managed(void **state)
{
	struct fx *f = *state;
	struct knob k;

	fixture_write(f->root, KNOB, "0\n");
	assert_int_equal(knob_init(&k, false, f->state), 0);
	assert_true(k.present);
	assert_int_equal(knob_activate(&k), 0);
	assert_knob(f, "0\n");
	assert_false(exists(f->saved));
	assert_int_equal(knob_mode(&k, KCONFIG_NO), KNOB_MODE_NONE);
	knob_done(&k);
}

/* An instance was SIGKILLed with the knob at 1: the next one puts back the 0 from before. */
static void test_crash_recovery(void **state)
{
	struct fx *f = *state;
	struct knob k;

	fixture_write(f->root, KNOB, "0\n");
	assert_int_equal(knob_init(&k, true, f->state), 0);
	assert_int_equal(knob_activate(&k), 0);
	/* The crash: no deactivate, no knob_done cleanup of the file. */
	knob_done(&k);

	assert_int_equal(knob_init(&k, true, f->state), 0);
	assert_int_equal(k.saved, 0);
	assert_int_equal(k.value, 1);
	assert_int_equal(knob_activate(&k), 0);
	assert_file(f->saved, "0\n");
	assert_int_equal(knob_deactivate(&k), 0);
	assert_knob(f, "0");
	knob_done(&k);
}

/* ExecStopPost= after a crash with no restart. */
static void test_restore_saved(void **state)
{
	struct fx *f = *state;
	struct knob k;

	/* Nothing saved: nothing written. */
	fixture_write(f->root, KNOB, "1\n");
	assert_int_equal(knob_restore_saved(f->state), 0);
	assert_knob(f, "1\n");

	fixture_write(f->root, KNOB, "0\n");
	assert_int_equal(knob_init(&k, true, f->state), 0);
	assert_int_equal(knob_activate(&k), 0);
	knob_done(&k);
	assert_int_equal(knob_restore_saved(f->state), 0);
	assert_knob(f, "0");
	assert_false(exists(f->saved));

	/* No runtime directory at all (not under systemd). */
	assert_int_equal(knob_restore_saved(NULL), 0);
}

static void test_write_fails(void **state)
{
	struct fx *f = *state;
	struct knob k;

	fixture_write(f->root, KNOB, "0\n");
	assert_int_equal(knob_init(&k, true, f->state), 0);
	fail_knob_write = -EACCES;
	assert_int_equal(knob_activate(&k), -EACCES);
	assert_knob(f, "0\n");
	assert_int_equal(knob_mode(&k, KCONFIG_NO), KNOB_MODE_NONE);

	fail_knob_write = 0;
	assert_int_equal(knob_activate(&k), 0);
	fail_knob_write = -EIO;
	/* A failed put-back keeps the saved value, on disk too, for a retry. */
	assert_int_equal(knob_deactivate(&k), -EIO);
	assert_int_equal(k.saved, 0);
	assert_file(f->saved, "0\n");
	fail_knob_write = 0;
	assert_int_equal(knob_deactivate(&k), 0);
	assert_knob(f, "0");
	knob_done(&k);
}

/* Whatever is there that is not our knob is named in the log and never written. */
static void check_rejected(struct fx *f, const char *expect_in_log)
{
	struct knob k;
	char *log;

	stderr_capture_begin();
	assert_int_equal(knob_init(&k, true, f->state), 0);
	log = stderr_capture_end();
	assert_false(k.present);
	assert_int_equal(knob_activate(&k), 0);
	assert_false(exists(f->saved));
	assert_non_null(strstr(log, "sys/power/userspace_autosleep"));
	assert_non_null(strstr(log, expect_in_log));
	free(log);
	knob_done(&k);
}

static void test_bad_contents(void **state)
{
	static const char *const bad[] = { "2\n", "yes\n", "", "\n", "1x\n", "01\n", "-1\n", "18446744073709551617\n" };
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fixture_write(f->root, KNOB, bad[i]);
		check_rejected(f, "not 0 or 1");
		assert_knob(f, bad[i]);
	}
}

static void test_not_a_file(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->root, KNOB);
	/* A FIFO would block the open, /dev/zero would never end. */
	assert_int_equal(mkfifo(path, 0600), 0);
	check_rejected(f, "not a regular file");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/dev/zero", path), 0);
	check_rejected(f, "not a regular file");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	check_rejected(f, "not a regular file");
}

/* A saved file we cannot trust is dropped; the knob's current value becomes the one to put back. */
static void test_bad_saved(void **state)
{
	static const char *const bad[] = { "7\n", "", "0\n0\n", "yes" };
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct knob k;
		FILE *fp;
		char *log;

		fixture_write(f->root, KNOB, "0\n");
		fp = fopen(f->saved, "we");
		assert_non_null(fp);
		fputs(bad[i], fp);
		fclose(fp);
		stderr_capture_begin();
		assert_int_equal(knob_init(&k, true, f->state), 0);
		log = stderr_capture_end();
		assert_non_null(strstr(log, f->saved));
		free(log);
		assert_true(k.present);
		assert_int_equal(k.saved, -1);
		assert_false(exists(f->saved));
		assert_int_equal(knob_activate(&k), 0);
		assert_file(f->saved, "0\n");
		assert_int_equal(knob_deactivate(&k), 0);
		knob_done(&k);
	}
	/* A FIFO in its place must not block start-up. */
	fixture_write(f->root, KNOB, "0\n");
	assert_int_equal(mkfifo(f->saved, 0600), 0);
	{
		struct knob k;

		assert_int_equal(knob_init(&k, true, f->state), 0);
		assert_int_equal(k.saved, -1);
		assert_false(exists(f->saved));
		knob_done(&k);
	}
}

static void test_mode_strings(void **state)
{
	(void)state;
	assert_string_equal(knob_mode_to_string(KNOB_MODE_NONE), "none");
	assert_string_equal(knob_mode_to_string(KNOB_MODE_COMPILE_TIME), "compile-time");
	assert_string_equal(knob_mode_to_string(KNOB_MODE_RUNTIME), "runtime-knob");
	assert_string_equal(knob_mode_to_string(KNOB_MODE_UNKNOWN), "unknown");
	assert_null(knob_mode_to_string(_KNOB_MODE_MAX));
	assert_null(knob_mode_to_string(_KNOB_MODE_INVALID));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_activate_deactivate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_was_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_managed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_recovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_saved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_saved, setup, teardown),
		cmocka_unit_test(test_mode_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
