/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knob.h"
#include "log.h"
#include "macro.h"
#include "string-table.h"
#include "sysfs.h"

#define KNOB_SAVED_FILE "userspace_autosleep.saved"

static const char *const knob_mode_table[_KNOB_MODE_MAX] = {
	[KNOB_MODE_NONE] = "none",
	[KNOB_MODE_COMPILE_TIME] = "compile-time",
	[KNOB_MODE_RUNTIME] = "runtime-knob",
	[KNOB_MODE_UNKNOWN] = "unknown",
};

DEFINE_STRING_TABLE_TO_STRING(knob_mode, enum knob_mode, knob_mode_table, _KNOB_MODE_MAX)

/* "0" or "1" and nothing else, as the kernel prints and accepts it. */
static int parse_bit(const char *s, int len)
{
	if (len == 1 && (s[0] == '0' || s[0] == '1'))
		return s[0] - '0';
	return -EBADMSG;
}

/*
 * The knob's value. The kernel's is a regular file; anything else (a FIFO
 * would block the open, /dev/zero reads forever) is not the knob.
 */
static int knob_read(int *ret)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;
	char buf[16];
	int r, v;

	r = sysfs_path(SYSFS_POWER_USERSPACE_AUTOSLEEP, &p);
	if (r < 0)
		return r;
	if (lstat(p, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EBADF;
	r = sysfs_read(SYSFS_POWER_USERSPACE_AUTOSLEEP, buf, sizeof(buf));
	if (r < 0)
		return r;
	v = parse_bit(buf, r);
	if (v < 0)
		return v;
	*ret = v;
	return 0;
}

/* The saved value, as an earlier instance wrote it; -ENOENT when there is none. */
static int saved_read(const char *path, int *ret)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	char buf[4];
	ssize_t n;
	int v;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EBADF;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return negative_errno();
	if (n == 2 && buf[1] == '\n')
		n = 1;
	v = parse_bit(buf, (int)n);
	if (v < 0)
		return v;
	*ret = v;
	return 0;
}

/* Written to a temporary file and renamed: a crash leaves the old record or the new, never half. */
static int saved_write(const char *path, int v)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -EBADF;
	char buf[2] = { (char)('0' + v), '\n' };
	ssize_t n;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return negative_errno();
	n = write(fd, buf, sizeof(buf));
	if (n != (ssize_t)sizeof(buf)) {
		int r = n < 0 ? negative_errno() : -EIO;

		(void)unlink(tmp);
		return r;
	}
	if (rename(tmp, path) < 0) {
		int r = negative_errno();

		(void)unlink(tmp);
		return r;
	}
	return 0;
}

int knob_init(struct knob *k, bool manage, const char *state_dir)
{
	char bad[32];
	int r, v;

	*k = (struct knob){ .manage = manage, .value = -1, .saved = -1 };
	if (state_dir && asprintf(&k->saved_path, "%s/%s", state_dir, KNOB_SAVED_FILE) < 0) {
		k->saved_path = NULL;
		return -ENOMEM;
	}

	r = knob_read(&v);
	if (r == -ENOENT)
		return 0;
	if (r == -EBADMSG && sysfs_read(SYSFS_POWER_USERSPACE_AUTOSLEEP, bad, sizeof(bad)) >= 0) {
		log_warning("%s under %s reads '%s', not 0 or 1: leaving it alone", SYSFS_POWER_USERSPACE_AUTOSLEEP,
			    sysfs_get_root(), bad);
		return 0;
	}
	if (r < 0) {
		log_warning_errno(r, "Cannot read %s under %s: %m%s: leaving it alone", SYSFS_POWER_USERSPACE_AUTOSLEEP,
				  sysfs_get_root(), r == -EBADF ? " (not a regular file)" : "");
		return 0;
	}
	k->present = true;
	k->value = v;

	if (!k->saved_path)
		return 0;
	r = saved_read(k->saved_path, &v);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		log_warning_errno(r, "Cannot use %s: %m; removing it, the value from before autosleepd is lost",
				  k->saved_path);
		(void)unlink(k->saved_path);
		return 0;
	}
	/* An instance died with the knob set: what it saved is what was there before any of us. */
	k->saved = v;
	log_notice("Found %s from an earlier instance: the knob read %d before autosleepd set it", k->saved_path, v);
	return 0;
}

void knob_done(struct knob *k)
{
	free(k->saved_path);
	k->saved_path = NULL;
}

int knob_activate(struct knob *k)
{
	int r, v;

	if (!k->present || !k->manage)
		return 0;
	if (k->saved < 0) {
		/* Read again: someone may have written it since start. */
		r = knob_read(&v);
		if (r < 0)
			return r;
		/*
		 * Saved before the write, so a crash in between still knows.
		 * Unsaved, a 1 would outlive us (ExecStopPost= would find
		 * nothing to put back) and every later suspend, logind's too,
		 * would keep WireGuard's keys: so no 1 without the file.
		 */
		if (k->saved_path) {
			r = saved_write(k->saved_path, v);
			if (r < 0 && v != 1)
				return log_warning_errno(r, "Failed to save the knob's value %d in %s: %m; "
							 "leaving the knob at %d", v, k->saved_path, v);
			if (r < 0)
				log_warning_errno(r, "Failed to save the knob's value in %s: %m; it reads 1 already, "
						  "ignoring", k->saved_path);
		}
		k->saved = v;
	}
	r = sysfs_write(SYSFS_POWER_USERSPACE_AUTOSLEEP, "1");
	if (r < 0)
		return r;
	k->value = 1;
	return 0;
}

int knob_deactivate(struct knob *k)
{
	int r;

	if (!k->present || k->saved < 0)
		return 0;
	r = sysfs_write(SYSFS_POWER_USERSPACE_AUTOSLEEP, k->saved ? "1" : "0");
	if (r < 0)
		/* The saved file stays, for the next instance or ExecStopPost= to try again. */
		return r;
	k->value = k->saved;
	k->saved = -1;
	if (k->saved_path && unlink(k->saved_path) < 0 && errno != ENOENT)
		log_warning_errno(negative_errno(), "Failed to remove %s: %m, ignoring", k->saved_path);
	return 0;
}

enum knob_mode knob_mode(const struct knob *k, enum kconfig_value userspace_autosleep)
{
	/* The option only sets the knob's first value; where there is a knob, it decides. */
	if (k->present) {
		if (k->value != 1)
			return KNOB_MODE_NONE;
		return userspace_autosleep == KCONFIG_YES ? KNOB_MODE_COMPILE_TIME : KNOB_MODE_RUNTIME;
	}
	switch (userspace_autosleep) {
	case KCONFIG_YES:
		return KNOB_MODE_COMPILE_TIME;
	case KCONFIG_NO:
	case KCONFIG_MODULE:
		return KNOB_MODE_NONE;
	case KCONFIG_UNKNOWN:
	case _KCONFIG_VALUE_MAX:
	case _KCONFIG_VALUE_INVALID:
		break;
	}
	return KNOB_MODE_UNKNOWN;
}

int knob_restore_saved(const char *state_dir)
{
	struct knob k;
	int r;

	r = knob_init(&k, true, state_dir);
	if (r < 0)
		return r;
	if (k.saved >= 0) {
		r = knob_deactivate(&k);
		if (r < 0)
			log_error_errno(r, "Failed to put /%s back to %d: %m", SYSFS_POWER_USERSPACE_AUTOSLEEP, k.saved);
		else
			log_info("Put /%s back to %d", SYSFS_POWER_USERSPACE_AUTOSLEEP, k.value);
	}
	knob_done(&k);
	return r;
}
