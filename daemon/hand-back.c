/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "hand-back.h"
#include "log.h"
#include "sysfs.h"
#include "wakelock.h"

/* Never a registered-event count: the kernel keeps those in 16 bits. */
#define NEVER_A_COUNT "4294967295"

int hand_back_disarm(void)
{
	int r;

	/* Never blocks: this runs where nothing may hang (ExecStopPost=). */
	r = sysfs_check_regular(SYSFS_POWER_WAKEUP_COUNT);
	if (r >= 0)
		r = sysfs_write(SYSFS_POWER_WAKEUP_COUNT, NEVER_A_COUNT);

	/* EINVAL is the kernel saying "no match": the check is off now. */
	if (r == -EINVAL || r >= 0 || r == -ENOENT)
		return 0;
	return log_warning_errno(r, "Failed to disarm the wakeup_count check (/%s): %m; the next suspend may "
				 "fail with EBUSY", SYSFS_POWER_WAKEUP_COUNT);
}

int hand_back(const char *wake_lock_name)
{
	int r, removed = 0;

	if (wakelock_supported()) {
		r = wakelock_remove_stale(wake_lock_name, false);
		if (r < 0)
			log_warning_errno(r, "Failed to list kernel wake locks: %m");
		else
			removed = r;
	}
	r = hand_back_disarm();
	log_info("Handed the machine back: %d kernel wake lock%s of '%s' removed, wakeup_count check %s", removed,
		 removed == 1 ? "" : "s", wake_lock_name, r < 0 ? "still armed" : "disarmed");
	return r < 0 ? r : removed;
}
