/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/*
 * Ask polkit, asynchronously, whether the sender of call may do action. The
 * subject is the sender's unique bus name ("system-bus-name"), never its PID,
 * which could be recycled. done gets 1 (allowed), 0 (denied), -ENOENT (polkit
 * is not running) or another -errno.
 */
typedef void (*polkit_done_fn)(sd_bus_message *call, int result, void *userdata);

int polkit_check(sd_bus *bus, sd_bus_message *call, const char *action, polkit_done_fn done, void *userdata);
