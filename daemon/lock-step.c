/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "lock-step.h"
#include "string-table.h"

static const char *const lock_step_names[_LOCK_STEP_MAX] = {
	[LOCK_STEP_OFF] = "off",
	[LOCK_STEP_PENDING] = "pending",
	[LOCK_STEP_LOCKING] = "locking",
	[LOCK_STEP_LOCKED] = "locked",
	[LOCK_STEP_TIMED_OUT] = "timed-out",
	[LOCK_STEP_FAILED] = "failed",
};

DEFINE_STRING_TABLE_TO_STRING(lock_step, enum lock_step, lock_step_names, _LOCK_STEP_MAX)
