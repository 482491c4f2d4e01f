/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "macro.h"

/*
 * Messages to the service manager on $NOTIFY_SOCKET (sd_notify(3)) through
 * one socket kept open: sd_notify() opens, configures and closes a socket
 * per message, about ten syscalls, and every wake lock sends two (its fd into
 * the store and out again). Addresses other than a path or an abstract
 * socket go through sd_notify() itself. Main thread only.
 */
bool notify_available(void);
/* Returns 0 when nobody listens, as sd_notify() does, 1 when sent, or -errno. */
int notify_send(const char *msg, const int *fds, unsigned n_fds);
int notify_sendf(const char *fmt, ...) _printf_(1, 2);
void notify_close(void);
