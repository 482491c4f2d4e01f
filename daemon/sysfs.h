/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every kernel file autosleepd touches, relative to a root prefix. The
 * daemon uses "/", tests and --root point it at a fixture tree.
 */
#define SYSFS_POWER_STATE "sys/power/state"
#define SYSFS_POWER_MEM_SLEEP "sys/power/mem_sleep"
#define SYSFS_POWER_WAKEUP_COUNT "sys/power/wakeup_count"
#define SYSFS_POWER_WAKE_LOCK "sys/power/wake_lock"
#define SYSFS_POWER_WAKE_UNLOCK "sys/power/wake_unlock"
/* Our kernel patch (kernel-patches/knob/): CONFIG_PM_USERSPACE_AUTOSLEEP at run time. */
#define SYSFS_POWER_USERSPACE_AUTOSLEEP "sys/power/userspace_autosleep"
#define SYSFS_POWER_WAKEUP_IRQ "sys/power/pm_wakeup_irq"
#define SYSFS_SUSPEND_STATS_LAST_FAILED_DEV "sys/power/suspend_stats/last_failed_dev"
#define SYSFS_SUSPEND_STATS_LAST_FAILED_ERRNO "sys/power/suspend_stats/last_failed_errno"
#define SYSFS_SUSPEND_STATS_LAST_FAILED_STEP "sys/power/suspend_stats/last_failed_step"
#define SYSFS_IRQ_ACTIONS_FMT "sys/kernel/irq/%d/actions"
/* One counter of suspend_stats by name: success, fail, failed_suspend_noirq, ... */
#define SYSFS_SUSPEND_STATS_FMT "sys/power/suspend_stats/%s"
/* One entry per kernel wakeup source (Linux 5.4+); attributes per source: */
#define SYSFS_CLASS_WAKEUP "sys/class/wakeup"
#define SYSFS_CLASS_WAKEUP_ATTR_FMT "sys/class/wakeup/%s/%s"
/* The first RTC: its alarm (epoch seconds, "" when not armed; the kernel clears it once it fired) and clock. */
#define SYSFS_RTC_WAKEALARM "sys/class/rtc/rtc0/wakealarm"
#define SYSFS_RTC_SINCE_EPOCH "sys/class/rtc/rtc0/since_epoch"
/* Linux 6.4+ on x86 s2idle: time the hardware spent in its deepest state (0: never got there). */
#define SYSFS_SUSPEND_STATS_LAST_HW_SLEEP "sys/power/suspend_stats/last_hw_sleep"
/* pm_test levels (CONFIG_PM_DEBUG): "none", "core", "processors", "platform", "devices", "freezer". */
#define SYSFS_POWER_PM_TEST "sys/power/pm_test"
/* Batteries and AC adapters; attributes per supply: */
#define SYSFS_CLASS_POWER_SUPPLY "sys/class/power_supply"
#define SYSFS_POWER_SUPPLY_ATTR_FMT "sys/class/power_supply/%s/%s"
#define SYSFS_PROC_CONFIG_GZ "proc/config.gz"
#define SYSFS_BOOT_CONFIG_FMT "boot/config-%s"
#define SYSFS_DEV_INPUT "dev/input"

/* Set once at start, before any thread runs. NULL or "" means "/". */
int sysfs_set_root(const char *root);
const char *sysfs_get_root(void);

/* Absolute path for rel under the root; caller frees. */
int sysfs_path(const char *rel, char **ret);

bool sysfs_exists(const char *rel);

/*
 * Read a file into buf (NUL terminated), trailing newlines stripped. Returns
 * the length or -errno. Blocks where the kernel blocks (wakeup_count).
 */
int sysfs_read(const char *rel, char *buf, size_t size);

/*
 * A number as sysfs prints it: decimal and nothing else (sysfs_read()
 * already dropped the newline), len bytes of it: a NUL inside is no end of
 * the number. Anything else is -EBADMSG, never a guess.
 * The parsers take text sysfs_read() gave; the readers do both steps.
 */
int sysfs_parse_u64(const char *s, size_t len, uint64_t *ret);
int sysfs_parse_int(const char *s, size_t len, int *ret);
int sysfs_read_u64(const char *rel, uint64_t *ret);
int sysfs_read_int(const char *rel, int *ret);

/*
 * sysfs_read() for attributes that must never block: opened O_NONBLOCK, and
 * -EBADFD unless it is a regular file, as every sysfs attribute is. A FIFO
 * or a device where a fixture (or a confused tree) has an attribute fails
 * cleanly instead of hanging or streaming.
 */
int sysfs_read_regular(const char *rel, char *buf, size_t size);

/*
 * Write value in one write(2), as sysfs attributes require. Returns 0 or
 * the -errno the kernel gave, which carries meaning here (EINVAL from
 * wakeup_count, EBUSY from state, ENOSPC from wake_lock).
 */
int sysfs_write(const char *rel, const char *value);
/*
 * 0 if rel is a regular file, as every sysfs attribute is; -EBADFD if it is
 * something else (a FIFO where a fixture has the attribute, on which a write
 * would wait for a reader forever), or -errno.
 */
int sysfs_check_regular(const char *rel);
