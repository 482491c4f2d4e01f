/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <cmocka.h>

#include "fixture.h"
#include "kconfig.h"
#include "sysfs.h"

static char *setup_root(const char *fixture)
{
	char *dir = fixture_new(fixture);

	assert_int_equal(sysfs_set_root(dir), 0);
	return dir;
}

static void write_gz(const char *dir, const char *text)
{
	char *p;
	gzFile f;

	assert_true(asprintf(&p, "%s/proc", dir) > 0);
	mkdir(p, 0755);
	free(p);
	assert_true(asprintf(&p, "%s/proc/config.gz", dir) > 0);
	f = gzopen(p, "wb");
	assert_non_null(f);
	gzputs(f, text);
	gzclose(f);
	free(p);
}

static void test_boot_config(void **state)
{
	char *dir = setup_root("sysfs-basic");
	struct kconfig k;

	(void)state;
	assert_int_equal(kconfig_load("test", &k), 0);
	assert_string_equal(k.source, "boot/config-test");
	assert_int_equal(k.userspace_autosleep, KCONFIG_YES);
	assert_int_equal(k.wakelocks, KCONFIG_YES);
	assert_int_equal(k.autosleep, KCONFIG_NO);
	kconfig_done(&k);
	fixture_free(dir);
}

static void test_stock_debian(void **state)
{
	char *dir = setup_root("sysfs-nowakelock");
	struct kconfig k;

	(void)state;
	assert_int_equal(kconfig_load("test", &k), 0);
	assert_int_equal(k.userspace_autosleep, KCONFIG_NO);
	assert_int_equal(k.wakelocks, KCONFIG_NO);
	kconfig_done(&k);
	fixture_free(dir);
}

static void test_proc_config_gz_wins(void **state)
{
	char *dir = setup_root("sysfs-basic");
	struct kconfig k;

	(void)state;
	/* The running kernel's own config beats a file in /boot that may be stale. */
	write_gz(dir, "CONFIG_PM_SLEEP=y\n# CONFIG_PM_USERSPACE_AUTOSLEEP is not set\nCONFIG_PM_WAKELOCKS=y\nCONFIG_PM_AUTOSLEEP=y\n");
	assert_int_equal(kconfig_load("test", &k), 0);
	assert_string_equal(k.source, "proc/config.gz");
	assert_int_equal(k.userspace_autosleep, KCONFIG_NO);
	assert_int_equal(k.wakelocks, KCONFIG_YES);
	assert_int_equal(k.autosleep, KCONFIG_YES);
	kconfig_done(&k);
	fixture_free(dir);
}

static void test_no_config(void **state)
{
	char *dir = setup_root("sysfs-noconfig");
	struct kconfig k;

	(void)state;
	assert_int_equal(kconfig_load("test", &k), -ENOENT);
	assert_int_equal(k.userspace_autosleep, KCONFIG_UNKNOWN);
	assert_int_equal(k.wakelocks, KCONFIG_UNKNOWN);
	assert_null(k.source);
	/* The release selects the file: another release finds nothing either. */
	fixture_free(dir);
	dir = setup_root("sysfs-basic");
	assert_int_equal(kconfig_load("6.1.0-other", &k), -ENOENT);
	fixture_free(dir);
}

static void test_prefix_is_not_a_match(void **state)
{
	struct kconfig k = { KCONFIG_NO, KCONFIG_NO, KCONFIG_NO, KCONFIG_NO };

	(void)state;
	/* PM_WAKELOCKS_LIMIT and PM_AUTOSLEEP_FOO must not be read as the options themselves. */
	kconfig_parse_line(&k, "CONFIG_PM_WAKELOCKS_LIMIT=100");
	kconfig_parse_line(&k, "CONFIG_PM_AUTOSLEEP_FOO=y");
	assert_int_equal(k.wakelocks, KCONFIG_NO);
	assert_int_equal(k.autosleep, KCONFIG_NO);
	kconfig_parse_line(&k, "CONFIG_PM_WAKELOCKS=m");
	assert_int_equal(k.wakelocks, KCONFIG_MODULE);
	assert_string_equal(kconfig_value_to_string(KCONFIG_UNKNOWN), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_config),
		cmocka_unit_test(test_stock_debian),
		cmocka_unit_test(test_proc_config_gz_wins),
		cmocka_unit_test(test_no_config),
		cmocka_unit_test(test_prefix_is_not_a_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
