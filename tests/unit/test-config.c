/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
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
	/*
	 * A watchdog, not a wait: a parser that blocks on a FIFO or reads
	 * /dev/zero forever fails the test instead of hanging the suite.
	 */
	alarm(60);
	return 0;
}

static int teardown(void **state)
{
	struct ctx *x = *state;

	alarm(0);
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
	/* One user may be allowed every lock the daemon holds (WAKE_LOCKS_MAX), not one more. */
	expect_error(x, "[WakeLocks]\nMaxPerUser=16385\n",
		     "bad.conf:2: invalid value '16385' for key 'MaxPerUser' in section [WakeLocks]: expected a whole "
		     "number from 1 to 16384");
	expect_error(x, "[WakeLocks]\nMaxPerUser=0\n", "bad.conf:2: invalid value '0' for key 'MaxPerUser'");
}

/* Group= is a name or a gid, looked up at start; empty (the default) names none. */
static void test_group(void **state)
{
	struct ctx *x = *state;
	char *log;

	assert_string_equal(x->c.group, "");
	assert_int_equal(parse_text(x, "g.conf", "[WakeLocks]\nGroup=autosleep\n", &log), 0);
	free(log);
	assert_string_equal(x->c.group, "autosleep");
	assert_int_equal(parse_text(x, "g.conf", "[WakeLocks]\nGroup=4294967294\n", &log), 0);
	free(log);
	assert_string_equal(x->c.group, "4294967294");
	assert_int_equal(parse_text(x, "g.conf", "[WakeLocks]\nGroup=\n", &log), 0);
	free(log);
	assert_string_equal(x->c.group, "");
	expect_error(x, "[WakeLocks]\nGroup=-wheel\n", "bad.conf:2: invalid value '-wheel' for key 'Group'");
	expect_error(x, "[WakeLocks]\nGroup=a b\n", "bad.conf:2: invalid value 'a b' for key 'Group'");
	expect_error(x, "[WakeLocks]\nGroup=a;b\n", "bad.conf:2: invalid value 'a;b' for key 'Group'");
	expect_error(x, "[WakeLocks]\nGroup=abcdefghijklmnopqrstuvwxyz0123456\n",
		     "bad.conf:2: invalid value 'abcdefghijklmnopqrstuvwxyz0123456' for key 'Group' in section "
		     "[WakeLocks]: expected a group name or gid");
}

static void test_max_per_user_limit(void **state)
{
	struct ctx *x = *state;
	char *log;

	assert_int_equal(parse_text(x, "max.conf", "[WakeLocks]\nMaxPerUser=16384\n", &log), 0);
	free(log);
	assert_int_equal(x->c.max_locks_per_user, WAKE_LOCKS_MAX);
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

static void expect_in(const char *log, const char *needle)
{
	if (!strstr(log, needle))
		fail_msg("expected '%s' in log, got '%s'", needle, log);
}

static void test_cross_field(void **state)
{
	struct ctx *x = *state;
	char *p = path_of(x, "x.conf"), *log, *want;

	fixture_write(x->dir, "x.conf", "[Backoff]\nDelaySec=2min\nMaxDelaySec=1min\n");
	stderr_capture_begin();
	assert_int_equal(config_load(&x->c, p, true, NULL), -EINVAL);
	log = stderr_capture_end();
	/* MaxDelaySec came last, so its line is blamed; DelaySec's is named. */
	assert_true(asprintf(&want, "%s:3: [Backoff] DelaySec=2min is greater than MaxDelaySec=1min (DelaySec set at %s:2)",
			     p, p) > 0);
	expect_in(log, want);
	free(want);
	free(log);
	free(p);
}

/* main.conf and one drop-in; returns config_load's result and the log. */
static int load_with_dropin(struct ctx *x, const char *main_text, const char *dropin_text, char **log)
{
	char *main_conf = path_of(x, "main.conf"), *dir = path_of(x, "main.conf.d");
	int r;

	assert_int_equal(mkdir(dir, 0755), 0);
	fixture_write(x->dir, "main.conf", main_text);
	fixture_write(x->dir, "main.conf.d/50-x.conf", dropin_text);
	stderr_capture_begin();
	r = config_load(&x->c, main_conf, true, dir);
	*log = stderr_capture_end();
	free(main_conf);
	free(dir);
	return r;
}

static void test_cross_field_names_dropin_and_main(void **state)
{
	struct ctx *x = *state;
	char *log, *want;

	assert_int_equal(load_with_dropin(x, "# main\n[Backoff]\nMaxDelaySec=1min\n", "[Backoff]\n\nDelaySec=2min\n", &log),
			 -EINVAL);
	assert_true(asprintf(&want,
			     "%s/main.conf.d/50-x.conf:3: [Backoff] DelaySec=2min is greater than MaxDelaySec=1min "
			     "(MaxDelaySec set at %s/main.conf:3)",
			     x->dir, x->dir) > 0);
	expect_in(log, want);
	free(want);
	free(log);
}

static void test_cross_field_later_override_is_blamed(void **state)
{
	struct ctx *x = *state;
	char *log, *want;

	/* DelaySec in main.conf is fine; the drop-in lowers MaxDelaySec below it. */
	assert_int_equal(load_with_dropin(x, "[Backoff]\nDelaySec=2min\nMaxDelaySec=5min\n", "[Backoff]\nMaxDelaySec=1min\n",
					  &log),
			 -EINVAL);
	assert_true(asprintf(&want,
			     "%s/main.conf.d/50-x.conf:2: [Backoff] DelaySec=2min is greater than MaxDelaySec=1min "
			     "(DelaySec set at %s/main.conf:2)",
			     x->dir, x->dir) > 0);
	expect_in(log, want);
	free(want);
	free(log);
}

static void test_cross_field_against_default(void **state)
{
	struct ctx *x = *state;
	char *log, *want;

	assert_int_equal(load_with_dropin(x, "", "[Backoff]\nDelaySec=2min\n", &log), -EINVAL);
	assert_true(asprintf(&want,
			     "%s/main.conf.d/50-x.conf:2: [Backoff] DelaySec=2min is greater than MaxDelaySec=1min "
			     "(MaxDelaySec is the default)",
			     x->dir) > 0);
	expect_in(log, want);
	free(want);
	free(log);
}

static void test_wake_lock_name_too_long_for_activity(void **state)
{
	struct ctx *x = *state;
	char *log, *want, text[128];

	/* 56 characters: a valid name, but not with ".activity" appended. */
	snprintf(text, sizeof(text), "[Suspend]\nWakeLockName=%s\n", "0123456789012345678901234567890123456789012345678901234x");
	assert_int_equal(load_with_dropin(x, "[Suspend]\nState=mem\n", text, &log), -EINVAL);
	assert_true(asprintf(&want, "%s/main.conf.d/50-x.conf:2: [Suspend] WakeLockName=", x->dir) > 0);
	expect_in(log, want);
	expect_in(log, "is too long to add '.activity' (at most 55 characters)");
	free(want);
	free(log);
}

/* Write len bytes, NULs included, to rel below the fixture. */
static char *write_bytes(struct ctx *x, const char *rel, const char *data, size_t len)
{
	char *p = path_of(x, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return p;
}

static int parse_path(struct ctx *x, const char *p, char **log)
{
	int r;

	stderr_capture_begin();
	r = config_parse_file(&x->c, p);
	*log = stderr_capture_end();
	return r;
}

static void test_nul_bytes(void **state)
{
	struct ctx *x = *state;
	char *p, *log;

	/* Was skipped, so an unknown key behind a NUL was accepted. */
	p = write_bytes(x, "nul.conf", "\0Garbage=1\n", 11);
	assert_int_equal(parse_path(x, p, &log), -EINVAL);
	expect_in(log, "nul.conf:1: contains a NUL byte");
	free(log);
	free(p);
	p = write_bytes(x, "nul.conf", "[Suspend]\n\nState=mem\0Garbage\n", 30);
	assert_int_equal(parse_path(x, p, &log), -EINVAL);
	expect_in(log, "nul.conf:3: contains a NUL byte");
	free(log);
	free(p);
	/* On the last line, without a newline after it. */
	p = write_bytes(x, "nul.conf", "[Suspend]\nState=mem\0", 20);
	assert_int_equal(parse_path(x, p, &log), -EINVAL);
	expect_in(log, "nul.conf:2: contains a NUL byte");
	free(log);
	free(p);
	assert_string_equal(x->c.state, "mem");
}

static void test_buffer_entry(void **state)
{
	struct ctx *x = *state;
	static const char text[] = "[Backoff]\nDelaySec=3s\n[Suspend]\nState=freeze";

	/* Not NUL terminated, and the last line has no newline. */
	assert_int_equal(config_parse_buffer(&x->c, "buf", text, sizeof(text) - 1), 0);
	assert_int_equal(x->c.backoff_base, 3 * USEC_PER_SEC);
	assert_string_equal(x->c.state, "freeze");
	assert_int_equal(config_parse_buffer(&x->c, "buf", "", 0), 0);
}

static void test_fifo_does_not_block(void **state)
{
	struct ctx *x = *state;
	char *p = path_of(x, "fifo.conf"), *dir = path_of(x, "d"), *dp, *main_conf, *log;

	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(parse_path(x, p, &log), -EINVAL);
	expect_in(log, "fifo.conf is a FIFO, not a regular file");
	free(log);

	/* The same as a drop-in, through config_load(). */
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_true(asprintf(&dp, "%s/10-fifo.conf", dir) > 0);
	assert_int_equal(mkfifo(dp, 0644), 0);
	main_conf = path_of(x, "main.conf");
	fixture_write(x->dir, "main.conf", "[Suspend]\n");
	stderr_capture_begin();
	assert_int_equal(config_load(&x->c, main_conf, true, dir), -EINVAL);
	log = stderr_capture_end();
	expect_in(log, "d/10-fifo.conf is a FIFO, not a regular file");
	free(log);
	free(main_conf);
	free(dp);
	free(dir);
	free(p);
}

static void test_not_regular_files(void **state)
{
	struct ctx *x = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *p, *log;
	int fd;

	/* /dev/zero used to be read into memory without bound. */
	assert_int_equal(parse_path(x, "/dev/zero", &log), -EINVAL);
	expect_in(log, "/dev/zero is a character device, not a regular file");
	free(log);

	p = path_of(x, "dir.conf");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(parse_path(x, p, &log), -EISDIR);
	expect_in(log, "dir.conf is a directory, not a regular file");
	free(log);
	free(p);

	p = path_of(x, "sock.conf");
	if (strlen(p) < sizeof(sa.sun_path)) {
		strcpy(sa.sun_path, p);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(fd >= 0);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(parse_path(x, p, &log), -EINVAL);
		expect_in(log, "sock.conf is a socket, not a regular file");
		free(log);
		close(fd);
	}
	free(p);
}

static void test_size_limit(void **state)
{
	struct ctx *x = *state;
	size_t n = CONFIG_FILE_SIZE_MAX;
	char *big = malloc(n + 1), *p, *log;

	/* Exactly the limit is read; one byte more is refused before parsing. */
	assert_non_null(big);
	memset(big, '#', n + 1);
	big[n - 1] = '\n';
	p = write_bytes(x, "big.conf", big, n);
	assert_int_equal(parse_path(x, p, &log), 0);
	assert_string_equal(log, "");
	free(log);
	free(p);
	big[n] = '\n';
	p = write_bytes(x, "big.conf", big, n + 1);
	assert_int_equal(parse_path(x, p, &log), -EFBIG);
	expect_in(log, "big.conf is 1048577 bytes long, more than the limit of 1048576 bytes");
	free(log);
	free(p);
	free(big);
}

static void test_time_limits(void **state)
{
	struct ctx *x = *state;
	char *log;

	expect_error(x, "[Backoff]\nDelaySec=infinity\n",
		     "bad.conf:2: invalid value 'infinity' for key 'DelaySec' in section [Backoff]: infinity is not "
		     "allowed here; expected a time span from 1ms to 24h");
	expect_error(x, "[Backoff]\nDelaySec=10000000000000s\n",
		     "bad.conf:2: invalid value '10000000000000s' for key 'DelaySec' in section [Backoff]: more than "
		     "the maximum; expected a time span from 1ms to 24h");
	expect_error(x, "[Backoff]\nDelaySec=0\n",
		     "bad.conf:2: invalid value '0' for key 'DelaySec' in section [Backoff]: less than the minimum; "
		     "expected a time span from 1ms to 24h");
	expect_error(x, "[Backoff]\nDelaySec=999us\n", "bad.conf:2: invalid value '999us' for key 'DelaySec'");
	expect_error(x, "[Backoff]\nMaxDelaySec=infinity\n", "bad.conf:2: invalid value 'infinity' for key 'MaxDelaySec'");
	expect_error(x, "[Backoff]\nMaxDelaySec=24h 1us\n", "bad.conf:2: invalid value '24h 1us' for key 'MaxDelaySec'");
	expect_error(x, "[Backoff]\nMaxDelaySec=0\n", "bad.conf:2: invalid value '0' for key 'MaxDelaySec'");
	expect_error(x, "[Backoff]\nShortSuspendSec=infinity\n", "bad.conf:2: invalid value 'infinity' for key 'ShortSuspendSec'");
	expect_error(x, "[Backoff]\nShortSuspendSec=25h\n", "bad.conf:2: invalid value '25h' for key 'ShortSuspendSec'");
	expect_error(x, "[Activity]\nIdleTimeoutSec=infinity\n",
		     "bad.conf:2: invalid value 'infinity' for key 'IdleTimeoutSec' in section [Activity]: infinity is "
		     "not allowed here; expected a time span up to 24h, 0 to not watch input");
	/* 2^61 us: its nanoseconds wrap to exactly 0, a wake lock that never expires. */
	expect_error(x, "[Activity]\nIdleTimeoutSec=2305843009213693952us\n",
		     "bad.conf:2: invalid value '2305843009213693952us' for key 'IdleTimeoutSec'");
	expect_error(x, "[Activity]\nResumeGraceSec=infinity\n", "bad.conf:2: invalid value 'infinity' for key 'ResumeGraceSec'");
	expect_error(x, "[Activity]\nResumeGraceSec=18446744073709552us\n",
		     "bad.conf:2: invalid value '18446744073709552us' for key 'ResumeGraceSec'");
	expect_error(x, "[Activity]\nResumeGraceSec=99999999999999999999s\n",
		     "bad.conf:2: invalid value '99999999999999999999s' for key 'ResumeGraceSec' in section [Activity]: "
		     "not representable in whole microseconds below 2^64; expected a time span up to 24h");
	/* The limits themselves are fine. */
	assert_int_equal(parse_text(x, "ok.conf",
				    "[Backoff]\nDelaySec=1ms\nMaxDelaySec=24h\nShortSuspendSec=24h\n"
				    "[Activity]\nIdleTimeoutSec=24h\nResumeGraceSec=0\n",
				    &log),
			 0);
	assert_string_equal(log, "");
	free(log);
	assert_int_equal(x->c.backoff_base, USEC_PER_MSEC);
	assert_int_equal(x->c.backoff_max, USEC_PER_DAY);
	assert_int_equal(x->c.idle_timeout, USEC_PER_DAY);
	assert_int_equal(config_verify(&x->c), 0);
	assert_int_equal(parse_text(x, "ok.conf", "[Activity]\nIdleTimeoutSec=0\n", &log), 0);
	free(log);
	assert_int_equal(x->c.idle_timeout, 0);
}

static void test_strict_numbers(void **state)
{
	struct ctx *x = *state;

	/* strtod() took all of these; "1e-9" became 0 and turned input watching off. */
	expect_error(x, "[Activity]\nIdleTimeoutSec=1e-9\n", "bad.conf:2: invalid value '1e-9' for key 'IdleTimeoutSec'");
	expect_error(x, "[Activity]\nIdleTimeoutSec=0.0000001s\n",
		     "bad.conf:2: invalid value '0.0000001s' for key 'IdleTimeoutSec' in section [Activity]: not "
		     "representable in whole microseconds below 2^64");
	expect_error(x, "[Backoff]\nDelaySec=0x10\n", "bad.conf:2: invalid value '0x10' for key 'DelaySec'");
	expect_error(x, "[Backoff]\nDelaySec=1E3ms\n", "bad.conf:2: invalid value '1E3ms' for key 'DelaySec'");
	expect_error(x, "[Backoff]\nDelaySec=inf\n", "bad.conf:2: invalid value 'inf' for key 'DelaySec'");
	expect_error(x, "[Backoff]\nDelaySec=+1s\n", "bad.conf:2: invalid value '+1s' for key 'DelaySec'");
	expect_error(x, "[Backoff]\nMultiplier=0x10\n", "bad.conf:2: invalid value '0x10' for key 'Multiplier'");
	expect_error(x, "[Backoff]\nMultiplier=1e2\n", "bad.conf:2: invalid value '1e2' for key 'Multiplier'");
	expect_error(x, "[Backoff]\nMultiplier=nan\n", "bad.conf:2: invalid value 'nan' for key 'Multiplier'");
	expect_error(x, "[Backoff]\nMultiplier=1000.5\n", "bad.conf:2: invalid value '1000.5' for key 'Multiplier'");
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
		cmocka_unit_test_setup_teardown(test_max_per_user_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syntax_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropins_override_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_error_names_dropin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_field_names_dropin_and_main, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_field_later_override_is_blamed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_field_against_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wake_lock_name_too_long_for_activity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_buffer_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_does_not_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_regular_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strict_numbers, setup, teardown),
		cmocka_unit_test(test_wake_lock_name_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
