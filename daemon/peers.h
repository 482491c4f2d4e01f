/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/*
 * The credentials of the bus clients that call us, by unique name. The bus
 * never reuses a unique name and a connection's uid and pid are fixed when
 * it connects, so one GetConnectionCredentials per client is enough; it is
 * asked asynchronously, and an entry goes when the bus says the name is
 * gone (one NameOwnerChanged match for the whole bus, none per client).
 */
struct peers;

/*
 * Calls held back behind a client's waiting call, per client and of all
 * clients together. Each may carry up to 16 fds (dbus-daemon's default
 * max_message_unix_fds), which stay open while it is held; a call over
 * either bound is answered at once with LimitsExceeded. The daemon's fd
 * reserve (manager.c) has room for all of them.
 */
#define PEER_HELD_MAX 16
#define PEERS_HELD_MAX 64

int peers_new(sd_bus *bus, struct peers **ret);
struct peers *peers_free(struct peers *p);

/*
 * The sender of method call m. Returns 1 with its credentials; 0 if they are
 * being asked for, and m will be dispatched again once they are known (the
 * handler returns 1 and sends no reply now); or -errno. A call whose sender
 * the bus cannot tell about (it left) gets an error reply from here.
 *
 * While a call waits like this, its sender's later calls wait too (a filter
 * parks them), so every client's calls run in the order it sent them.
 */
int peers_get(struct peers *p, sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid);

/*
 * m, after peers_get() returned 1, waits for another answer (polkit) and will
 * be dispatched again: hold its sender's later calls back until then.
 */
void peers_wait(struct peers *p, sd_bus_message *m);

/*
 * m, which waited, back into sd-bus's read queue, behind what is there, to
 * be dispatched from the start. On failure m was answered with the error.
 */
int peers_redispatch(sd_bus_message *m);

/*
 * m, which waited (peers_wait()), was answered without coming round (its
 * redispatch failed): its sender's held-back calls go on, else they would
 * wait for it for ever.
 */
void peers_give_up(struct peers *p, sd_bus_message *m);

/*
 * Whether m's sender, whose credentials peers_get() returned, is in group
 * gid (any of its groups, as the bus tells them: UnixGroupIDs). False for
 * (gid_t)-1, and when the bus does not tell.
 */
bool peers_in_group(const struct peers *p, sd_bus_message *m, gid_t gid);

/* Clients known and asked for: for tests and the benchmarks. */
unsigned peers_count(const struct peers *p);
