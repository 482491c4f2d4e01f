/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/*
 * Uids up to this are system users (services, root), above it people: as
 * Debian's SYS_UID_MAX and systemd's build default have it. A closed lid
 * means the person is gone; a service's work goes on.
 */
#define SYSTEM_UID_MAX 999u

static inline bool uid_is_system(uid_t uid)
{
	return uid <= SYSTEM_UID_MAX;
}
