/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "leases.h"
#include "suspender.h"

#define BUS_NAME "org.autosleep1"
#define BUS_PATH "/org/autosleep1"
#define BUS_INTERFACE "org.autosleep1.Manager"
#define BUS_ERROR_NO_SUCH_WAKE_LOCK "org.autosleep1.Error.NoSuchWakeLock"

/* Upper bound on leases from all D-Bus clients together, whatever the per-user quota. */
#define BUS_LOCKS_MAX 4096
#define BUS_WHY_MAX 256

struct manager;
struct bus;

/*
 * org.autosleep1.Manager on the system bus: translates D-Bus calls into
 * leases, ties each lease to a pipe fd held by the client and to the client's
 * bus name, and turns manager events into signals and property changes.
 */
int bus_new(struct manager *m, struct bus **ret);
struct bus *bus_free(struct bus *b);
sd_bus *bus_get_sd_bus(struct bus *b);

/* All of these accept b == NULL (running without a bus). */
void bus_emit_changed(struct bus *b, const char *property);
void bus_emit_suspending(struct bus *b);
void bus_emit_resumed(struct bus *b, const struct suspend_report *rep);
void bus_lease_acquired(struct bus *b, const struct lease *x);
void bus_lease_released(struct bus *b, struct lease *x, const char *reason);
