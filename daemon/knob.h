/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>

#include "kconfig.h"

/*
 * The knob: /sys/power/userspace_autosleep, added by kernel-patches/knob/.
 * It is CONFIG_PM_USERSPACE_AUTOSLEEP at run time (the option only sets its
 * initial value), so one distribution kernel can serve machines that suspend
 * every few seconds and machines that do not.
 *
 * We write 1 while autosleep is active and put back what was there before
 * when it stops or is disabled. That earlier value is kept in a file under
 * the runtime directory as well as in memory: an instance that starts after
 * a crash, or "autosleepd --restore-knob" run as ExecStopPost=, must put
 * back the value from before us, not the 1 a killed instance left behind.
 */

/* What keeps random.c and WireGuard from treating every resume as rare. */
enum knob_mode {
	KNOB_MODE_NONE,         /* nothing: every suspend reseeds the crng and clears WireGuard keys */
	KNOB_MODE_COMPILE_TIME, /* CONFIG_PM_USERSPACE_AUTOSLEEP=y */
	KNOB_MODE_RUNTIME,      /* the knob reads 1 on a kernel built without the option */
	KNOB_MODE_UNKNOWN,      /* no knob, and no kernel config to tell */
	_KNOB_MODE_MAX,
	_KNOB_MODE_INVALID = -EINVAL,
};

struct knob {
	bool present;   /* the kernel has the knob, and it reads 0 or 1 */
	bool manage;    /* [Suspend] SetUserspaceAutosleep= */
	int value;      /* as last read or written; -1 when not present */
	int saved;      /* what to put back; -1 when we have nothing to put back */
	char *saved_path; /* where saved is kept across restarts; NULL without a runtime directory */
};

/*
 * Look at the knob, and take back a value an earlier instance saved in
 * state_dir (may be NULL). A knob that is not a regular file or does not
 * read 0 or 1 is logged and left alone: present is false then.
 */
int knob_init(struct knob *k, bool manage, const char *state_dir);
void knob_done(struct knob *k);

/* Autosleep became active: save what is there, write 1. No-op without the knob or when not managing it. */
int knob_activate(struct knob *k);
/* Autosleep stopped: put the saved value back and forget it. No-op when nothing is saved. */
int knob_deactivate(struct knob *k);

enum knob_mode knob_mode(const struct knob *k, enum kconfig_value userspace_autosleep);
const char *knob_mode_to_string(enum knob_mode m);

/* For ExecStopPost=: put back a value a dead instance saved in state_dir, if any. */
int knob_restore_saved(const char *state_dir);
