/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/*
 * Asynchronous polkit checks that re-enter the method handler, as systemd's
 * daemons do: the first call starts the check and returns 0, and the handler
 * returns without replying; when polkit answers, the original message is put
 * back on the bus's read queue, so the handler runs again from the top and
 * this time gets the answer. The subject is the sender's unique bus name
 * ("system-bus-name"), never its PID, which could be recycled.
 */
struct polkit_registry;
struct peers;

struct polkit_registry *polkit_registry_free(struct polkit_registry *reg);

/*
 * 1: allowed; 0: the check is under way, return 1 from the handler without
 * replying; -EACCES with error set: denied. Without polkit on the bus the
 * answer is allow_without_polkit. While the check runs, peers holds the
 * sender's later calls back (peers_wait()), so they keep their order; a call
 * that cannot come round again is answered with the error, and lets them go.
 */
int polkit_verify(struct polkit_registry **reg, struct peers *peers, sd_bus_message *call, uid_t uid,
		  const char *action, bool allow_without_polkit, sd_bus_error *error);

/*
 * Checks in flight, per uid and in all. A check whose caller's own agent
 * never answers lasts polkit's 25 s, and its call stays open with the fds
 * it carries: over either bound a call gets LimitsExceeded at once, and one
 * user cannot take every slot from the others.
 */
#define POLKIT_QUERIES_PER_UID_MAX 16
#define POLKIT_QUERIES_MAX 64
