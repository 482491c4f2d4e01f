/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sysfs.h"
#include "wakelock.h"

bool wakelock_supported(void)
{
	return sysfs_exists(SYSFS_POWER_WAKE_LOCK) && sysfs_exists(SYSFS_POWER_WAKE_UNLOCK);
}

int wakelock_lock(const char *name, usec_t timeout)
{
	char buf[128];
	nsec_t ns;
	int r;

	if (timeout == 0 || timeout == USEC_INFINITY) {
		snprintf(buf, sizeof(buf), "%s", name);
		return sysfs_write(SYSFS_POWER_WAKE_LOCK, buf);
	}
	/*
	 * A wrapped product would be a short lock, or "name 0", which is a lock
	 * without a timeout. The kernel also rounds up to milliseconds in 64 bits
	 * and hands them on as an unsigned int, so refuse what it would cut.
	 */
	if (timeout > WAKELOCK_TIMEOUT_MAX)
		return -ERANGE;
	r = usec_to_nsec(timeout, &ns);
	if (r < 0)
		return r;
	snprintf(buf, sizeof(buf), "%s %" PRIu64, name, ns);
	return sysfs_write(SYSFS_POWER_WAKE_LOCK, buf);
}

int wakelock_unlock(const char *name)
{
	return sysfs_write(SYSFS_POWER_WAKE_UNLOCK, name);
}

static bool is_ours(const char *lock, const char *name)
{
	size_t n = strlen(name);

	return strncmp(lock, name, n) == 0 && (lock[n] == 0 || lock[n] == '.');
}

int wakelock_remove_stale(const char *name, bool keep_main)
{
	/* Up to CONFIG_PM_WAKELOCKS_LIMIT names, each short; 16K is plenty. */
	char buf[16384], *saveptr = NULL, *tok;
	int r, removed = 0;

	r = sysfs_read(SYSFS_POWER_WAKE_LOCK, buf, sizeof(buf));
	if (r < 0)
		return r;
	for (tok = strtok_r(buf, " \t\n", &saveptr); tok; tok = strtok_r(NULL, " \t\n", &saveptr)) {
		if (!is_ours(tok, name) || (keep_main && strcmp(tok, name) == 0))
			continue;
		r = wakelock_unlock(tok);
		if (r < 0) {
			log_warning_errno(r, "Failed to remove stale kernel wake lock '%s': %m, ignoring", tok);
			continue;
		}
		log_notice("Removed stale kernel wake lock '%s' left by an earlier instance", tok);
		removed++;
	}
	return removed;
}
