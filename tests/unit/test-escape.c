/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "escape.h"
#include "log.h"

static void check(const char *in, const char *want)
{
	char buf[256];

	assert_string_equal(escape_untrusted(buf, sizeof(buf), in), want);
	assert_int_equal(escape_untrusted_len(in), strlen(want));
	assert_int_equal(escape_needed(in), strcmp(in, want) != 0);
	/* Escaped text is printable text: a second pass changes nothing. */
	assert_int_equal(escape_needed(buf), 0);
}

static void test_text_stays(void **state)
{
	(void)state;
	check("", "");
	check("backup: rsync to nas", "backup: rsync to nas");
	check("a \\ b \\x0a", "a \\ b \\x0a");
	check("grüße ✓ 日本 😀", "grüße ✓ 日本 😀");
	/* The last code points that are text, at each length. */
	check("\xc2\xa0\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf", "\xc2\xa0\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf");
}

static void test_controls(void **state)
{
	(void)state;
	check("x\n<0>FORGED Disk failing", "x\\x0a<0>FORGED Disk failing");
	check("\r\t\x01\x1f", "\\x0d\\x09\\x01\\x1f");
	check("\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07");
	check("del\x7f", "del\\x7f");
	/* C1 controls: U+0085 (NEL) and U+009B (CSI) as UTF-8. */
	check("\xc2\x85\xc2\x9b", "\\xc2\\x85\\xc2\\x9b");
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	check("\xff", "\\xff");
	check("\x80", "\\x80");
	check("\x9b[31m", "\\x9b[31m");
	/* Cut short, at the end and before text. */
	check("\xe2\x9c", "\\xe2\\x9c");
	check("\xe2\x9c" "a", "\\xe2\\x9ca");
	check("\xf0\x9f\x98", "\\xf0\\x9f\\x98");
	/* Overlong forms of '/' and of NUL. */
	check("\xc0\xaf", "\\xc0\\xaf");
	check("\xc0\x80", "\\xc0\\x80");
	check("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	check("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf");
	/* A surrogate, and past U+10FFFF. */
	check("\xed\xa0\x80", "\\xed\\xa0\\x80");
	check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	check("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80");
}

static void test_truncation(void **state)
{
	char buf[16];

	(void)state;
	/* Room for "ab" and the terminator, not for a whole "\x0a". */
	assert_string_equal(escape_untrusted(buf, 6, "ab\ncd"), "ab");
	assert_string_equal(escape_untrusted(buf, 7, "ab\ncd"), "ab\\x0a");
	/* A character is never cut: "✓" is three bytes. */
	assert_string_equal(escape_untrusted(buf, 4, "a✓"), "a");
	assert_string_equal(escape_untrusted(buf, 5, "a✓"), "a✓");
	assert_string_equal(escape_untrusted(buf, 1, "abc"), "");
	assert_string_equal(escape_untrusted(buf, sizeof(buf), NULL), "");
	assert_int_equal(escape_untrusted_len(NULL), 0);
	/* size 0 writes nothing at all. */
	buf[0] = 'z';
	escape_untrusted(buf, 0, "abc");
	assert_int_equal(buf[0], 'z');
}

static void test_long_input(void **state)
{
	size_t n = 100000;
	char *in = malloc(n + 1), *out = malloc(4 * n + 1);

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	memset(in, '\n', n);
	in[n] = '\0';
	assert_int_equal(escape_untrusted_len(in), 4 * n);
	escape_untrusted(out, 4 * n + 1, in);
	assert_int_equal(strlen(out), 4 * n);
	assert_null(strchr(out, '\n'));
	free(in);
	free(out);
}

/*
 * The log's one writer escapes each message: a string from outside with a
 * newline and "<0>" stays on its line, at the line's own priority.
 */
static void test_log_line(void **state)
{
	char path[] = "/tmp/test-escape-XXXXXX", got[512];
	int fd, saved;
	FILE *f;
	size_t n;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	log_set_ident(NULL);
	log_info("Staying awake for %s", "x\n<0>FORGED\x1b[2J");
	log_struct(LOG_INFO, "struct: a\nb", "TEST_FIELD=1");
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	f = fdopen(fd, "r");
	assert_non_null(f);
	rewind(f);
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	fclose(f);
	unlink(path);
	assert_string_equal(got, "<6>Staying awake for x\\x0a<0>FORGED\\x1b[2J\n<6>struct: a\\x0ab\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_stays),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_long_input),
		cmocka_unit_test(test_log_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
