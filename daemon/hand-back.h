/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The machine as autosleepd leaves it once it is gone: logind (or anyone
 * writing "mem" to /sys/power/state) must be able to suspend, as if no
 * autosleepd had ever run.
 *
 * Two things of ours outlive the process on purpose, so that a restart
 * after a crash finds them: the kernel wake lock that stands for the
 * leases, and the wakeup_count check our last count write armed
 * (events_check_enabled). Armed, the check makes the kernel refuse the next
 * suspend with EBUSY whenever a wakeup event came since that write or a
 * wakeup source is active, ours included: logind's suspend fails once. Only
 * the wakeup_count write arms or disarms it.
 */

/*
 * Disarm the check: a count the kernel can never match (the registered
 * count has 16 bits, so UINT_MAX never matches), which makes
 * pm_save_wakeup_count() clear events_check_enabled and the write fail with
 * EINVAL, as intended. Safe between instances: each arms it afresh before
 * its own state write. 0, or -errno (no wakeup_count: nothing to disarm is
 * 0 too).
 */
int hand_back_disarm(void);

/*
 * After the unit's last failed start (its OnFailure= unit): the kernel wake
 * locks called wake_lock_name or "wake_lock_name.*" go, and the check is
 * disarmed. The knob went back in ExecStopPost= already. Returns the number
 * of wake locks removed, or -errno.
 */
int hand_back(const char *wake_lock_name);
