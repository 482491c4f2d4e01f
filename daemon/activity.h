/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "time-util.h"

struct manager;
struct activity;

/*
 * User activity from /dev/input/event*: keyboards, pointers, touchpads,
 * touchscreens and tablets keep the machine awake for IdleTimeoutSec after
 * their last event. Devices are opened read-only, never grabbed, and followed
 * across hotplug (inotify on /dev/input) and resume.
 *
 * With kernel wake locks the hold is "<WakeLockName>.activity" written with a
 * timeout, so the kernel counts the idle time down and we keep no timer; the
 * writes are rate-limited to one per second. Without them it is an in-process
 * lease with a deadline.
 */
int activity_new(struct manager *m, struct activity **ret);
struct activity *activity_free(struct activity *a);

/* The user is gone (lid closed, sleep key): drop the hold, so only leases keep the machine awake. */
void activity_away(struct activity *a);
/* The user is here (lid opened): a full idle period, as for input. */
void activity_present(struct activity *a);

/* For status and statistics. */
usec_t activity_idle(struct activity *a);
unsigned activity_n_devices(struct activity *a);
uint64_t activity_writes(struct activity *a);
uint64_t activity_events(struct activity *a);
uint64_t activity_overflows(struct activity *a);

/* The kernel-timed hold, if one is running: its name and span (CLOCK_BOOTTIME). */
bool activity_kernel_hold(struct activity *a, const char **ret_name, usec_t *ret_since, usec_t *ret_until);

/* Close a finished kernel-timed hold period into the lease statistics. */
void activity_sync_stats(struct activity *a);
