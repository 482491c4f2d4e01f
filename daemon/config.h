/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "time-util.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/autosleep/autosleep.conf"
#define CONFIG_DEFAULT_DROPIN_DIR SYSCONFDIR "/autosleep/autosleep.conf.d"

struct config {
	/* [Suspend] */
	char *state;
	char *mem_sleep;
	char *wake_lock_name;
	/* [Backoff]: delay is base for the first flat_attempts bad attempts, then base*multiplier^(n-flat) capped at max. */
	usec_t backoff_base;
	double backoff_multiplier;
	unsigned backoff_flat_attempts;
	usec_t backoff_max;
	usec_t short_suspend;
	/* [WakeLocks] */
	unsigned max_locks_per_user;
	usec_t startup_hold;       /* without systemd's fd store: stay awake this long after start */
	/* [Activity] */
	usec_t idle_timeout;       /* 0: do not watch input */
	usec_t resume_grace;
	unsigned input_classes;    /* bit per enum input_class */
	char *ignore_devices;      /* space-separated fnmatch() patterns on device names */
	char *input_wake_sources;  /* space-separated substrings of the wake IRQ's actions */
	/* [Logind] */
	bool honor_inhibitors;
	bool hold_sleep_inhibitor;
};

void config_init(struct config *c);
void config_done(struct config *c);

/*
 * Parse one file on top of what c holds. Errors are logged as
 * "file:line: ..." and returned as -EINVAL; -ENOENT when the file is missing.
 */
int config_parse_file(struct config *c, const char *path);

/*
 * The main file (missing is fine unless must_exist), then every *.conf in
 * dropin_dir in lexical order, then cross-field checks.
 */
int config_load(struct config *c, const char *path, bool must_exist, const char *dropin_dir);

/* Checks that need more than one key; logs what is wrong. */
int config_verify(const struct config *c);

/* The one rule for wake lock names, from the config file and from D-Bus alike. */
#define WAKE_LOCK_NAME_MAX 64
/* 0 if valid; else -EINVAL and a sentence saying what is wrong in ret_problem. */
int wake_lock_name_check(const char *name, char *ret_problem, size_t size);
bool wake_lock_name_is_valid(const char *name);
