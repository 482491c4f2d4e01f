/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

struct fdstore;

/*
 * The kernel lock: the one wakeup source in the kernel that stands for all
 * leases while any is held. Holding it makes the kernel abort a suspend that
 * is already past our gate, and keeps /sys/power/wakeup_count reads blocked.
 *
 * With CONFIG_PM_WAKELOCKS it is the entry <name> in /sys/power/wake_lock,
 * which outlives a crashed daemon by itself. Without (stock Debian kernels) it
 * is an eventfd kept readable inside an epoll registered with EPOLLWAKEUP:
 * the kernel keeps the epoll item's wakeup source active until someone
 * collects the event, which we never do while held. Both fds go to systemd's
 * fd store, so that wakeup source too outlives a crash until the next
 * instance takes the fds back.
 */
struct kernel_lock;

/* store: fds of an earlier instance to adopt (may be NULL). */
int kernel_lock_new(const char *name, bool sysfs, struct fdstore *store, struct kernel_lock **ret);
struct kernel_lock *kernel_lock_free(struct kernel_lock *k);

int kernel_lock_hold(struct kernel_lock *k);
int kernel_lock_release(struct kernel_lock *k);
/*
 * Whether the kernel honours the lock once held, so that it aborts a suspend
 * under way. False when the kernel dropped EPOLLWAKEUP from our epoll item,
 * which it does silently without CAP_BLOCK_SUSPEND.
 */
bool kernel_lock_enforced(const struct kernel_lock *k);
/* "wake_lock" or "epoll wakeup source", for the log and status. */
const char *kernel_lock_kind(const struct kernel_lock *k);
