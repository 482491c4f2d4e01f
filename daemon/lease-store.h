/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "leases.h"

struct fdstore;

/*
 * What makes a D-Bus lease survive a daemon restart, as logind keeps its
 * inhibitors: the lease's fd goes to systemd's fd store as "lease-<id>", and
 * its record (name, owner, reason, uid, pid, times) to a file <dir>/<id>
 * under the runtime directory ($RUNTIME_DIRECTORY/leases), which systemd
 * keeps across restarts (RuntimeDirectoryPreserve=restart) and removes on
 * stop, as it flushes the fd store.
 */
struct lease_store;

/*
 * dir NULL, or no service manager to store fds: a store that keeps nothing.
 * bus_id: the bus's ID (sd_bus_get_bus_id()) as 32 hex digits, or NULL. A
 * dbus-daemon that restarted hands its unique names out again from :1.0, so
 * a record from another bus keeps its lease but not its owner: a stranger
 * given that name now must not be able to release it.
 */
int lease_store_new(const char *dir, const char *bus_id, struct lease_store **ret);
struct lease_store *lease_store_free(struct lease_store *s);
bool lease_store_enabled(const struct lease_store *s);

int lease_store_save(struct lease_store *s, const struct lease *x, int fd);
void lease_store_forget(struct lease_store *s, uint64_t id);

/*
 * One restored lease: the spec (strings point into the callback's buffers)
 * and its fd, which the callback owns. Returns <0 to drop it.
 */
typedef int (*lease_store_restore_fn)(const struct lease_spec *spec, int fd, void *userdata);

/* Pair every stored "lease-<id>" fd with its record; forget the halves without a match. Returns how many. */
int lease_store_restore(struct lease_store *s, struct fdstore *fds, lease_store_restore_fn fn, void *userdata);

/*
 * Parse one record; exposed for tests. Strings point into buf, which is
 * modified. ret_bus: the bus it was taken on, or NULL in a record of 0.1.
 */
int lease_record_parse(char *buf, struct lease_spec *ret, const char **ret_bus);
