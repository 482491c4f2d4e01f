/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "config.h"
#include "leases.h"
#include "suspender.h"


/* Upper bound on leases from all D-Bus clients together, whatever the per-user quota; lowered to fit RLIMIT_NOFILE. */
#define BUS_LOCKS_MAX WAKE_LOCKS_MAX

struct manager;
struct bus;
struct fdstore;

/*
 * org.autosleep1.Manager on the system bus: translates D-Bus calls into
 * leases, ties each D-Bus lease to a pipe whose write end the client holds,
 * and turns lease and manager events into signals and property changes.
 *
 * In two steps, so that nothing an earlier or another instance left (the
 * knob, lease records, stored fds, the kernel lock) is touched before the
 * name is ours. bus_open() connects and takes the name. Without a bus at all
 * it returns 0 and NULL (the daemon runs without its D-Bus API: a fixture
 * tree, an initrd, by hand), unless the daemon runs under a service manager
 * or was handed stored fds: wake locks may be waiting for it then. A bus that
 * refuses the name or does not answer, and another autosleepd owning it
 * (-EADDRINUSE), are errors; each is logged, and the caller exits, keeping
 * everything for the next start. bus_start() then sets up the object and the
 * observers and restores the leases stored by an earlier instance (store_dir,
 * stored), before the main loop answers anyone.
 */
int bus_open(struct manager *m, const struct fdstore *stored, struct bus **ret);
int bus_start(struct bus *b, unsigned max_locks, const char *store_dir, struct fdstore *stored);
/* keep_stored: leave the leases in the fd store and on disk for the next instance. */
struct bus *bus_free(struct bus *b, bool keep_stored);
sd_bus *bus_get_sd_bus(struct bus *b);
/* The calls waiting for a state write under way; NULL without a bus. */
struct gate_waits *bus_gate_waits(struct bus *b);
/* Whether D-Bus leases outlive this process (fd store and runtime directory both usable). */
bool bus_leases_persist(struct bus *b);

/* All of these accept b == NULL (running without a bus). */
void bus_emit_changed(struct bus *b, const char *property);
/* NWakeLocks, if it differs from what was announced last (the manager calls this once the count settled). */
void bus_announce_n_locks(struct bus *b);
void bus_emit_suspending(struct bus *b);
void bus_emit_resumed(struct bus *b, const struct suspend_report *rep);
