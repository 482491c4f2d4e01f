/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "time-util.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/autosleep/autosleep.conf"
#define CONFIG_DEFAULT_DROPIN_DIR SYSCONFDIR "/autosleep/autosleep.conf.d"

/*
 * Limits, documented in autosleep.conf(5). A config file above
 * CONFIG_FILE_SIZE_MAX is refused rather than read without bound. Every time
 * key is finite and at most CONFIG_TIME_MAX, which fits the kernel wake lock
 * timeout (WAKELOCK_TIMEOUT_MAX) and any sum with a clock reading.
 * DelaySec is at least CONFIG_DELAY_MIN so failures cannot retry in a busy
 * loop.
 */
#define CONFIG_FILE_SIZE_MAX ((size_t)1024 * 1024)
#define CONFIG_TIME_MAX USEC_PER_DAY
#define CONFIG_DELAY_MIN USEC_PER_MSEC

enum config_key_id {
	CONFIG_KEY_STATE,
	CONFIG_KEY_MEM_SLEEP,
	CONFIG_KEY_WAKE_LOCK_NAME,
	CONFIG_KEY_SET_USERSPACE_AUTOSLEEP,
	CONFIG_KEY_WAIT_FOR_RESUME,
	CONFIG_KEY_DELAY,
	CONFIG_KEY_MULTIPLIER,
	CONFIG_KEY_FLAT_ATTEMPTS,
	CONFIG_KEY_MAX_DELAY,
	CONFIG_KEY_SHORT_SUSPEND,
	CONFIG_KEY_MAX_PER_USER,
	CONFIG_KEY_STARTUP_HOLD,
	CONFIG_KEY_GROUP,
	CONFIG_KEY_IDLE_TIMEOUT,
	CONFIG_KEY_RESUME_GRACE,
	CONFIG_KEY_CLASSES,
	CONFIG_KEY_IGNORE_DEVICES,
	CONFIG_KEY_INPUT_WAKE_SOURCES,
	CONFIG_KEY_HONOR_INHIBITORS,
	CONFIG_KEY_HOLD_SLEEP_INHIBITOR,
	CONFIG_KEY_HONOR_IDLE_HINT,
	CONFIG_KEY_LOCK_BEFORE_SLEEP,
	CONFIG_KEY_LOCK_TIMEOUT,
	CONFIG_KEY_HANDLE_LID,
	CONFIG_KEY_HOLD_WAKE_TIMERS,
	CONFIG_KEY_TIMER_MAX_HOLD,
	CONFIG_KEY_TIMER_GUARD,
	_CONFIG_KEY_MAX,
	_CONFIG_KEY_INVALID = -EINVAL,
};

/* Where a key got its value, so checks across keys can name file and line. */
struct config_origin {
	char *file;    /* NULL: the built-in default */
	unsigned line;
	unsigned seq;  /* assignment order across all files; 0 for the default */
};

struct config {
	/* [Suspend] */
	char *state;
	char *mem_sleep;
	char *wake_lock_name;
	bool set_userspace_autosleep; /* write the knob (/sys/power/userspace_autosleep) while active */
	usec_t wait_for_resume;    /* the longest a call waits for a state write under way (gate-wait.h) */
	/* [Backoff]: delay is base for the first flat_attempts bad attempts, then base*multiplier^(n-flat) capped at max. */
	usec_t backoff_base;
	double backoff_multiplier;
	unsigned backoff_flat_attempts;
	usec_t backoff_max;
	usec_t short_suspend;
	/* [WakeLocks] */
	unsigned max_locks_per_user;
	usec_t startup_hold;       /* without systemd's fd store: stay awake this long after start */
	char *group;               /* without polkit, this group's members may take wake locks; "" none */
	/* [Activity] */
	usec_t idle_timeout;       /* 0: do not watch input */
	usec_t resume_grace;
	unsigned input_classes;    /* bit per enum input_class */
	char *ignore_devices;      /* space-separated fnmatch() patterns on device names */
	char *input_wake_sources;  /* space-separated substrings of the wake IRQ's actions */
	/* [Logind] */
	bool honor_inhibitors;
	bool hold_sleep_inhibitor;
	bool honor_idle_hint;      /* an active local session with IdleHint=false holds us awake */
	bool lock_before_sleep;    /* LockSessions() before the first suspend after user activity */
	usec_t lock_timeout;       /* how long to wait for LockedHint=true */
	bool handle_lid;           /* take logind's lid and sleep key inhibitors and handle them */
	/* [Timers] */
	bool hold_wake_timers;     /* follow systemd's WakeSystem= timers and hold while their work runs */
	usec_t timer_max_hold;     /* the longest a running timer holds the machine */
	usec_t timer_guard;        /* hold from this long before a WakeSystem timer is due until it fired */

	struct config_origin origin[_CONFIG_KEY_MAX];
	unsigned n_assignments;
};

void config_init(struct config *c);
void config_done(struct config *c);

/*
 * Parse the text of one file (size bytes, not NUL terminated) on top of what
 * c holds; path is only used in messages. Every error is logged as
 * "path:line: ..." and returned: -EINVAL for bad content, -ENOMEM.
 */
int config_parse_buffer(struct config *c, const char *path, const char *buf, size_t size);

/*
 * Read path and parse it with config_parse_buffer(). -ENOENT, not logged,
 * when it does not exist; anything but a regular file of at most
 * CONFIG_FILE_SIZE_MAX bytes is refused without blocking. All other errors
 * are logged naming the path.
 */
int config_parse_file(struct config *c, const char *path);

/*
 * The main file (missing is fine unless must_exist), then every *.conf in
 * dropin_dir in lexical order, then cross-field checks.
 */
int config_load(struct config *c, const char *path, bool must_exist, const char *dropin_dir);

/* Checks that need more than one key; logs what is wrong, naming where the keys were set. */
int config_verify(const struct config *c);

/*
 * The most wake locks the daemon holds for D-Bus clients, all of them
 * together, and so the most MaxPerUser= allows. Each costs the daemon an fd
 * and about 700 bytes, the kernel a pipe, and the fd store a copy: the unit's
 * LimitNOFILE= and FileDescriptorStoreMax= are sized for it.
 */
#define WAKE_LOCKS_MAX 16384

/* The one rule for wake lock names, from the config file and from D-Bus alike. */
#define WAKE_LOCK_NAME_MAX 64
/* 0 if valid; else -EINVAL and a sentence saying what is wrong in ret_problem. */
int wake_lock_name_check(const char *name, char *ret_problem, size_t size);
bool wake_lock_name_is_valid(const char *name);
