/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "time-util.h"

/*
 * Kernel wake locks through /sys/power/wake_lock (CONFIG_PM_WAKELOCKS). They
 * make our holds visible to the kernel: writing one increments the wakeup
 * event count, so a suspend that is already past our check is aborted, and a
 * lock left by a crashed daemon keeps the machine awake.
 */
bool wakelock_supported(void);

/*
 * The longest timeout the kernel keeps exactly: pm_wake_lock() passes the
 * milliseconds to __pm_wakeup_event() as an unsigned int (about 49.7 days).
 */
#define WAKELOCK_TIMEOUT_MAX ((usec_t)UINT32_MAX * USEC_PER_MSEC)

/*
 * timeout is relative; 0 or USEC_INFINITY means none. -ERANGE, and nothing
 * written, when it is above WAKELOCK_TIMEOUT_MAX.
 */
int wakelock_lock(const char *name, usec_t timeout);
int wakelock_unlock(const char *name);

/*
 * Unlock active kernel locks called name or "name.<anything>", left behind by
 * a crash, but name itself when keep_main (restored leases hold it again).
 * Returns the number removed or -errno.
 */
int wakelock_remove_stale(const char *name, bool keep_main);
