/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Bus names, object paths, interfaces and error names, spelled once: ours,
 * which the daemon, autosleepctl and the test peers share, and those of the
 * peers the daemon talks to. tests/unit/test-bus spells ours again on its
 * own, so that a typo here fails it instead of passing through both ends.
 */
#define BUS_NAME "org.autosleep1"
#define BUS_PATH "/org/autosleep1"
#define BUS_INTERFACE "org.autosleep1.Manager"
#define BUS_ERROR_NO_SUCH_WAKE_LOCK "org.autosleep1.Error.NoSuchWakeLock"
/* A call waited WaitForResumeSec= for a state write, and it did not return. */
#define BUS_ERROR_SUSPEND_IN_PROGRESS "org.autosleep1.Error.SuspendInProgress"

#define LOGIND_NAME "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_MANAGER "org.freedesktop.login1.Manager"
#define LOGIND_SESSION "org.freedesktop.login1.Session"
#define LOGIND_SESSION_PATH_PREFIX "/org/freedesktop/login1/session/"

#define SYSTEMD_NAME "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"
#define SYSTEMD_TIMER "org.freedesktop.systemd1.Timer"
#define SYSTEMD_UNIT "org.freedesktop.systemd1.Unit"
#define SYSTEMD_UNIT_PATH_PREFIX "/org/freedesktop/systemd1/unit/"
