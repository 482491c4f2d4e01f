/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the running kernel was built with, as far as we can tell. */
enum kconfig_value {
	KCONFIG_NO,
	KCONFIG_YES,
	KCONFIG_MODULE,
	KCONFIG_UNKNOWN,
	_KCONFIG_VALUE_MAX,
	_KCONFIG_VALUE_INVALID = -22,
};

struct kconfig {
	/* Which file answered, relative to the root; NULL when none did. */
	char *source;
	enum kconfig_value userspace_autosleep;
	enum kconfig_value wakelocks;
	enum kconfig_value autosleep;
};

/*
 * Look in proc/config.gz, then boot/config-<release>. Returns 0 when a
 * config was found, -ENOENT when neither exists (values are UNKNOWN then).
 */
int kconfig_load(const char *release, struct kconfig *ret);
void kconfig_done(struct kconfig *k);

const char *kconfig_value_to_string(enum kconfig_value v);

/* Parse one config text; exposed for tests. */
void kconfig_parse_line(struct kconfig *k, const char *line);
