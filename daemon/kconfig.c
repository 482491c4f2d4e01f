/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kconfig.h"
#include "log.h"
#include "macro.h"
#include "sysfs.h"

const char *kconfig_value_to_string(enum kconfig_value v)
{
	switch (v) {
	case KCONFIG_NO:
		return "n";
	case KCONFIG_YES:
		return "y";
	case KCONFIG_MODULE:
		return "m";
	case KCONFIG_UNKNOWN:
		return "unknown";
	case _KCONFIG_VALUE_MAX:
	case _KCONFIG_VALUE_INVALID:
		break;
	}
	return NULL;
}

static void parse_option(const char *line, const char *opt, enum kconfig_value *v)
{
	size_t n = strlen(opt);

	/* A config file found at all is authoritative: absent means n. */
	if (strncmp(line, opt, n) == 0 && line[n] == '=') {
		if (strcmp(line + n + 1, "y") == 0)
			*v = KCONFIG_YES;
		else if (strcmp(line + n + 1, "m") == 0)
			*v = KCONFIG_MODULE;
	}
}

void kconfig_parse_line(struct kconfig *k, const char *line)
{
	parse_option(line, "CONFIG_PM_USERSPACE_AUTOSLEEP", &k->userspace_autosleep);
	parse_option(line, "CONFIG_PM_WAKELOCKS", &k->wakelocks);
	parse_option(line, "CONFIG_PM_AUTOSLEEP", &k->autosleep);
}

static void kconfig_reset(struct kconfig *k, enum kconfig_value v)
{
	k->userspace_autosleep = v;
	k->wakelocks = v;
	k->autosleep = v;
}

static void strip_newline(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
}

static int load_gz(const char *path, struct kconfig *k)
{
	char line[512];
	gzFile f;

	f = gzopen(path, "rbe");
	if (!f)
		return errno > 0 ? -errno : -EIO;
	kconfig_reset(k, KCONFIG_NO);
	while (gzgets(f, line, sizeof(line))) {
		strip_newline(line);
		kconfig_parse_line(k, line);
	}
	gzclose(f);
	return 0;
}

static int load_plain(const char *path, struct kconfig *k)
{
	char line[512];
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	kconfig_reset(k, KCONFIG_NO);
	while (fgets(line, sizeof(line), f)) {
		strip_newline(line);
		kconfig_parse_line(k, line);
	}
	fclose(f);
	return 0;
}

int kconfig_load(const char *release, struct kconfig *ret)
{
	struct kconfig k = {};
	_cleanup_free_ char *gz = NULL, *boot_rel = NULL, *boot = NULL;
	int r;

	kconfig_reset(&k, KCONFIG_UNKNOWN);
	r = sysfs_path(SYSFS_PROC_CONFIG_GZ, &gz);
	if (r < 0)
		return r;
	r = load_gz(gz, &k);
	if (r >= 0) {
		k.source = strdup(SYSFS_PROC_CONFIG_GZ);
		goto done;
	}
	if (r != -ENOENT)
		log_debug_errno(r, "Failed to read %s: %m, trying boot config", gz);

	if (asprintf(&boot_rel, SYSFS_BOOT_CONFIG_FMT, release) < 0)
		return -ENOMEM;
	r = sysfs_path(boot_rel, &boot);
	if (r < 0)
		return r;
	r = load_plain(boot, &k);
	if (r >= 0) {
		k.source = TAKE_PTR(boot_rel);
		goto done;
	}
	kconfig_reset(&k, KCONFIG_UNKNOWN);
	*ret = k;
	return -ENOENT;
done:
	if (!k.source)
		return -ENOMEM;
	*ret = k;
	return 0;
}

void kconfig_done(struct kconfig *k)
{
	free(k->source);
	k->source = NULL;
}
