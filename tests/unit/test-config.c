/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "fixture.h"

struct ctx {
	char *dir;
	struct config c;
};

static int setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	x->dir = fixture_new("sysfs-basic");
	config_init(&x->c);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *x = *state;

	config_done(&x->c);
	fixture_free(x->dir);
	free(x);
	return 0;
}

static char *path_of(struct ctx *x, const char *rel)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", x->dir, rel) > 0);
	return p;
}

/* Parse text as file "rel"; returns r and, through log, what was printed. */
static int parse_text(struct ctx *x, const char *rel, const char *text, char **log)
{
	char *p = path_of(x, rel);
	int r;

	fixture_write(x->dir, rel, text);
	stderr_capture_begin();
	r = config_parse_file(&x->c, p);
	*log = stderr_capture_end();
	free(p);
	return r;
}

static void test_defaults(void **state)
{
	struct ctx *x = *state;

	assert_string_equal(x->c.state, "mem");
	assert_null(x->c.mem_sleep);
	assert_string_equal(x->c.wake_lock_name, "autosleepd");
	assert_int_equal(x->c.backoff_base, 100 * USEC_PER_MSEC);
	assert_true(x->c.backoff_multiplier == 2.0);
	assert_int_equal(x->c.backoff_flat_attempts, 0);
	assert_int_equal(x->c.backoff_max, 60 * USEC_PER_SEC);
	assert_int_equal(x->c.short_suspend, 0);
	assert_int_equal(config_verify(&x->c), 0);
}

static void test_all_keys(void **state)
{
	struct ctx *x = *state;
	char *log;

	assert_int_equal(parse_text(x, "a.conf",
				    "# comment\n"
				    "; another\n"
				    "[Suspend]\n"
				    "State = freeze\n"
				    "MemSleep=deep\n"
				    "WakeLockName=test.lock\n"
				    "\n"
				    "[Backoff]\n"
				    "DelaySec=250ms\n"
				    "Multiplier=1.5\n"
				    "FlatAttempts=4\n"
				    "MaxDelaySec=2min\n"
				    "ShortSuspendSec=1.5s\n",
				    &log),
			 0);
	assert_string_equal(log, "");
	free(log);
	assert_string_equal(x->c.state, "freeze");
	assert_string_equal(x->c.mem_sleep, "deep");
	assert_string_equal(x->c.wake_lock_name, "test.lock");
	assert_int_equal(x->c.backoff_base, 250 * USEC_PER_MSEC);
	assert_true(x->c.backoff_multiplier == 1.5);
	assert_int_equal(x->c.backoff_flat_attempts, 4);
	assert_int_equal(x->c.backoff_max, 120 * USEC_PER_SEC);
	assert_int_equal(x->c.short_suspend, 1500 * USEC_PER_MSEC);
}

static void expect_error(struct ctx *x, const char *text, const char *needle)
{
	char *log;

	assert_int_equal(parse_text(x, "bad.conf", text, &log), -EINVAL);
	if (!strstr(log, needle))
		fail_msg("expected '%s' in log, got '%s'", needle, log);
	free(log);
}

static void test_unknown_key_names_file_line_key(void **state)
{
	struct ctx *x = *state;

	expect_error(x, "[Suspend]\nState=mem\n\nFrobnicate=yes\n", "bad.conf:4: unknown key 'Frobnicate' in section [Suspend]");
}

static void test_bad_values(void **state)
{
	struct ctx *x = *state;

	expect_error(x, "[Suspend]\nState=disk\n", "bad.conf:2: invalid value 'disk' for key 'State'");
	expect_error(x, "[Suspend]\nMemSleep=hibernate\n", "bad.conf:2: invalid value 'hibernate' for key 'MemSleep'");
	expect_error(x, "[Suspend]\nWakeLockName=has space\n", "bad.conf:2: invalid value 'has space' for key 'WakeLockName'");
	expect_error(x, "[Suspend]\nWakeLockName=\n", "bad.conf:2: invalid value '' for key 'WakeLockName'");
	expect_error(x, "[Backoff]\nDelaySec=soon\n", "bad.conf:2: invalid value 'soon' for key 'DelaySec'");
	expect_error(x, "[Backoff]\nDelaySec=-5s\n", "bad.conf:2: invalid value '-5s' for key 'DelaySec'");
	expect_error(x, "[Backoff]\nMultiplier=0.5\n", "bad.conf:2: invalid value '0.5' for key 'Multiplier'");
	expect_error(x, "[Backoff]\nMultiplier=2x\n", "bad.conf:2: invalid value '2x' for key 'Multiplier'");
	expect_error(x, "[Backoff]\n\n\nFlatAttempts=-1\n", "bad.conf:4: invalid value '-1' for key 'FlatAttempts'");
}

static void test_syntax_errors(void **state)
{
	struct ctx *x = *state;

	expect_error(x, "State=mem\n", "bad.conf:1: key 'State' outside of any section");
	expect_error(x, "[Suspend\n", "bad.conf:1: malformed section header");
	expect_error(x, "[Nope]\n", "bad.conf:1: unknown section [Nope]");
	expect_error(x, "[Suspend]\njust words\n", "bad.conf:2: expected 'Key=value'");
}

static void test_dropins_override_in_order(void **state)
{
	struct ctx *x = *state;
	char *main_conf = path_of(x, "main.conf"), *dir = path_of(x, "main.conf.d"), *cmd;

	fixture_write(x->dir, "main.conf", "[Backoff]\nDelaySec=1s\nMaxDelaySec=10s\n");
	assert_true(asprintf(&cmd, "mkdir -p '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	fixture_write(x->dir, "main.conf.d/20-b.conf", "[Backoff]\nDelaySec=3s\n");
	fixture_write(x->dir, "main.conf.d/10-a.conf", "[Backoff]\nDelaySec=2s\nMultiplier=4\n");
	fixture_write(x->dir, "main.conf.d/30-ignored.txt", "garbage\n");
	assert_int_equal(config_load(&x->c, main_conf, true, dir), 0);
	assert_int_equal(x->c.backoff_base, 3 * USEC_PER_SEC);
	assert_true(x->c.backoff_multiplier == 4.0);
	assert_int_equal(x->c.backoff_max, 10 * USEC_PER_SEC);
	free(main_conf);
	free(dir);
}

static void test_dropin_error_names_dropin(void **state)
{
	struct ctx *x = *state;
	char *main_conf = path_of(x, "main.conf"), *dir = path_of(x, "main.conf.d"), *cmd, *log;

	fixture_write(x->dir, "main.conf", "[Suspend]\n");
	assert_true(asprintf(&cmd, "mkdir -p '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	fixture_write(x->dir, "main.conf.d/50-x.conf", "[Suspend]\nState=mem\nStat=mem\n");
	stderr_capture_begin();
	assert_int_equal(config_load(&x->c, main_conf, true, dir), -EINVAL);
	log = stderr_capture_end();
	assert_non_null(strstr(log, "main.conf.d/50-x.conf:3: unknown key 'Stat' in section [Suspend]"));
	free(log);
	free(main_conf);
	free(dir);
}

static void test_missing_file(void **state)
{
	struct ctx *x = *state;
	char *p = path_of(x, "nope.conf"), *log;

	/* The default path may be absent; an explicit --config must exist. */
	assert_int_equal(config_load(&x->c, p, false, NULL), 0);
	stderr_capture_begin();
	assert_int_equal(config_load(&x->c, p, true, NULL), -ENOENT);
	log = stderr_capture_end();
	assert_non_null(strstr(log, "nope.conf"));
	free(log);
	free(p);
}

static void test_cross_field(void **state)
{
	struct ctx *x = *state;
	char *p = path_of(x, "x.conf"), *log;

	fixture_write(x->dir, "x.conf", "[Backoff]\nDelaySec=2min\nMaxDelaySec=1min\n");
	stderr_capture_begin();
	assert_int_equal(config_load(&x->c, p, true, NULL), -EINVAL);
	log = stderr_capture_end();
	assert_non_null(strstr(log, "DelaySec=2min is greater than MaxDelaySec=1min"));
	free(log);
	free(p);
}

static void test_wake_lock_name_rules(void **state)
{
	char long_name[66];

	(void)state;
	assert_true(wake_lock_name_is_valid("autosleepd"));
	assert_true(wake_lock_name_is_valid("a"));
	assert_false(wake_lock_name_is_valid(""));
	assert_false(wake_lock_name_is_valid("tab\there"));
	assert_false(wake_lock_name_is_valid("caf\xc3\xa9"));
	memset(long_name, 'x', 65);
	long_name[65] = 0;
	assert_false(wake_lock_name_is_valid(long_name));
	long_name[64] = 0;
	assert_true(wake_lock_name_is_valid(long_name));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_key_names_file_line_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syntax_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropins_override_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_error_names_dropin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_field, setup, teardown),
		cmocka_unit_test(test_wake_lock_name_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
