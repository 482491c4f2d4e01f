/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "config.h"
#include "leases.h"
#include "suspender.h"

#define BUS_NAME "org.autosleep1"
#define BUS_PATH "/org/autosleep1"
#define BUS_INTERFACE "org.autosleep1.Manager"
#define BUS_ERROR_NO_SUCH_WAKE_LOCK "org.autosleep1.Error.NoSuchWakeLock"

/* Upper bound on leases from all D-Bus clients together, whatever the per-user quota; lowered to fit RLIMIT_NOFILE. */
#define BUS_LOCKS_MAX WAKE_LOCKS_MAX

struct manager;
struct bus;
struct fdstore;

/*
 * org.autosleep1.Manager on the system bus: translates D-Bus calls into
 * leases, ties each D-Bus lease to a pipe whose write end the client holds,
 * and turns lease and manager events into signals and property changes.
 * Leases stored by an earlier instance (store_dir, stored) are restored
 * before the bus name is taken.
 */
int bus_new(struct manager *m, unsigned max_locks, const char *store_dir, struct fdstore *stored, struct bus **ret);
/* keep_stored: leave the leases in the fd store and on disk for the next instance. */
struct bus *bus_free(struct bus *b, bool keep_stored);
sd_bus *bus_get_sd_bus(struct bus *b);
/* Whether D-Bus leases outlive this process (fd store and runtime directory both usable). */
bool bus_leases_persist(struct bus *b);

/* All of these accept b == NULL (running without a bus). */
void bus_emit_changed(struct bus *b, const char *property);
/* NWakeLocks, if it differs from what was announced last (the manager calls this once the count settled). */
void bus_announce_n_locks(struct bus *b);
void bus_emit_suspending(struct bus *b);
void bus_emit_resumed(struct bus *b, const struct suspend_report *rep);
