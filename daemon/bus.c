/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activity.h"
#include "bus.h"
#include "bus-dict.h"
#include "fdstore.h"
#include "config.h"
#include "gate-wait.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "lease-store.h"
#include "peers.h"
#include "sessions.h"
#include "polkit.h"
#include "system-uid.h"
#include "soak-session.h"
#include "timers.h"

/*
 * Properties that change together are sent in one PropertiesChanged per
 * loop iteration. Which ones emit changes is said once, by the EMITS_CHANGE
 * flags in the vtable: bit i of b->changed stands for the i-th of them.
 */
#define CHANGED_MAX 64
static const char *changed_name(unsigned i);
static int changed_index(const char *property);

struct bus {
	struct manager *manager;
	sd_bus *bus;
	struct lease_store *store;
	struct polkit_registry *polkit;
	unsigned max_locks;   /* D-Bus leases of all clients together */
	unsigned n_locks;
	uint64_t changed;     /* bit per property that emits changes (changed_name()) */
	sd_event_source *changed_source;
	unsigned n_locks_announced; /* NWakeLocks as last sent */
	unsigned n_lid_announced;   /* NWakeLocksWaitingForLid as last sent */
	struct peers *peers;
	struct gate_waits *gate_waits;
	bool acquiring;       /* in AcquireWakeLock: its caller hears of the lock first */
};

/*
 * One D-Bus lease. The client holds the write end of a pipe; we hold the
 * read end and see EPOLLHUP when the last copy of the write end is closed,
 * by whichever process holds it, however it died. Nothing else ends it
 * early: not the client's bus connection, so the fd may be handed to a
 * child that outlives the caller.
 */
struct bus_lock {
	struct bus *bus;
	struct lease *lease;
	int fd;
	sd_event_source *io;
};

static struct bus_lock *bus_lock_free(struct bus_lock *l)
{
	if (!l)
		return NULL;
	sd_event_source_disable_unref(l->io);
	safe_close(l->fd);
	free(l);
	return NULL;
}

struct gate_waits *bus_gate_waits(struct bus *b)
{
	return b ? b->gate_waits : NULL;
}

sd_bus *bus_get_sd_bus(struct bus *b)
{
	return b ? b->bus : NULL;
}

bool bus_leases_persist(struct bus *b)
{
	return b && lease_store_enabled(b->store);
}

static int on_changed(sd_event_source *s, void *userdata)
{
	struct bus *b = userdata;
	const char *names[CHANGED_MAX + 1], *name;
	size_t n = 0;

	(void)s;
	for (unsigned i = 0; (name = changed_name(i)); i++)
		if (b->changed & (UINT64_C(1) << i))
			names[n++] = name;
	names[n] = NULL;
	b->changed = 0;
	if (n > 0)
		(void)sd_bus_emit_properties_changed_strv(b->bus, BUS_PATH, BUS_INTERFACE, (char **)names);
	return 0;
}

void bus_emit_changed(struct bus *b, const char *property)
{
	int i;

	if (!b)
		return;
	i = changed_index(property);
	if (i < 0) {
		/* A caller's typo, or a property that lost its flag: said, and the daemon goes on. */
		log_error("Property %s does not emit changes; no PropertiesChanged sent", property);
		return;
	}
	b->changed |= UINT64_C(1) << i;
	(void)sd_event_source_set_enabled(b->changed_source, SD_EVENT_ONESHOT);
}

void bus_emit_suspending(struct bus *b)
{
	if (!b)
		return;
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "Suspending", "");
}

void bus_emit_resumed(struct bus *b, const struct suspend_report *rep)
{
	char reason[256];

	if (!b)
		return;
	if (rep->result == SUSPEND_SUCCESS)
		snprintf(reason, sizeof(reason), "%s", rep->wake_reason);
	else if (rep->cancel_source[0])
		snprintf(reason, sizeof(reason), "%s: %s (%s)", suspend_result_to_string(rep->result), strerror(-rep->error),
			 rep->cancel_source);
	else
		snprintf(reason, sizeof(reason), "%s: %s", suspend_result_to_string(rep->result), strerror(-rep->error));
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "Resumed", "tsb", (uint64_t)rep->asleep, reason,
				 rep->result == SUSPEND_SUCCESS);
}

void bus_announce_n_locks(struct bus *b)
{
	unsigned waiting;

	if (!b)
		return;
	if (b->manager->leases.n != b->n_locks_announced) {
		b->n_locks_announced = b->manager->leases.n;
		bus_emit_changed(b, "NWakeLocks");
	}
	waiting = leases_waiting_for_lid(&b->manager->leases);
	if (waiting != b->n_lid_announced) {
		b->n_lid_announced = waiting;
		bus_emit_changed(b, "NWakeLocksWaitingForLid");
	}
}

static void bus_emit_acquired(struct bus *b, const struct lease *x)
{
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "WakeLockAcquired", "sssu", x->name, x->why, x->owner,
				 (uint32_t)x->uid);
}

/* The registry's events, for every lease whoever took it: signals and the D-Bus side of ours. */
static void on_lease_event(struct leases *ls, enum lease_event ev, struct lease *x, const char *reason, void *userdata)
{
	struct bus *b = userdata;
	struct bus_lock *l = x->data;

	(void)ls;
	switch (ev) {
	case LEASE_ACQUIRED:
		/* AcquireWakeLock announces its own lock after the reply. */
		if (!b->acquiring)
			bus_emit_acquired(b, x);
		break;
	case LEASE_RELEASED:
		/*
		 * The record goes before the signal: had we died in between, a
		 * restarted daemon would bring back a lock its holder was told
		 * had been released. Forgetting is one unlink.
		 */
		if (l && l->bus == b) {
			lease_store_forget(b->store, x->id);
			x->data = bus_lock_free(l);
			b->n_locks--;
		}
		(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "WakeLockReleased", "sss", x->name, x->owner,
					 reason);
		break;
	case LEASE_HELD:
	case LEASE_UNHELD:
	case LEASE_DEADLINE:
		break;
	case _LEASE_EVENT_MAX:
	case _LEASE_EVENT_INVALID:
		break;
	}
}

static int on_lock_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct bus_lock *l = userdata;
	char buf[4096];

	(void)s;
	if (revents & (EPOLLHUP | EPOLLERR)) {
		/* Frees l through on_lease_event(). */
		leases_release_lease(&l->bus->manager->leases, l->lease, "closed");
		return 0;
	}
	/* Whatever a client writes is noise; drain a bounded amount so it cannot spin us. */
	for (int i = 0; i < 16; i++)
		if (read(fd, buf, sizeof(buf)) <= 0)
			break;
	return 0;
}

/* Tie lease x to fd, our end of its pipe. Takes fd, also on failure. */
static int bus_lock_attach(struct bus *b, struct lease *x, int fd)
{
	struct bus_lock *l;
	int r;

	l = calloc(1, sizeof(*l));
	if (!l) {
		safe_close(fd);
		return -ENOMEM;
	}
	l->bus = b;
	l->lease = x;
	l->fd = fd;
	r = sd_event_add_io(b->manager->event, &l->io, l->fd, EPOLLIN, on_lock_fd, l);
	if (r < 0) {
		bus_lock_free(l);
		return r;
	}
	x->data = l;
	b->n_locks++;
	return 0;
}

static int validate_name(const char *name, sd_bus_error *error)
{
	char problem[160];

	if (wake_lock_name_check(name, problem, sizeof(problem)) < 0)
		return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, problem);
	return 0;
}

static int validate_why(const char *why, sd_bus_error *error)
{
	char problem[160];

	if (lease_why_check(why, problem, sizeof(problem)) < 0)
		return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, problem);
	return 0;
}

struct lock_options {
	bool lid;
	sd_bus_error *error;
};

/* One of AcquireWakeLockWithOptions' options: an unknown key or a bad value is named in the error. */
static int lock_option(void *userdata, const char *key, sd_bus_message *m, const char *type)
{
	struct lock_options *o = userdata;
	int b, r;

	if (strcmp(key, "LidClosed") != 0)
		return sd_bus_error_setf(o->error, SD_BUS_ERROR_INVALID_ARGS, "Unknown wake lock option '%s'", key);
	if (strcmp(type, "b") != 0)
		return sd_bus_error_setf(o->error, SD_BUS_ERROR_INVALID_ARGS, "LidClosed must be a boolean (b), not '%s'",
					 type);
	r = sd_bus_message_read(m, "b", &b);
	if (r < 0)
		return r;
	o->lid = b;
	return 1;
}

/*
 * Both ways to take a wake lock. lid: hold with the lid closed too, which
 * for a person (not a system user: leases.c) is its own polkit action,
 * checked instead of the plain one, as one check per call is all the
 * re-entering polkit_verify() can wait for.
 */
static int acquire_wake_lock(sd_bus_message *m, struct manager *mgr, bool with_options, sd_bus_error *error)
{
	struct bus *b = mgr->bus;
	const char *name, *why;
	_cleanup_close_ int client_fd = -EBADF;
	/* A hold of the gate's blocked flag, ended once the lease holds (or the call failed). */
	_cleanup_(gate_wait_unholdp) struct gate_waits *hold = NULL;
	int p[2], r;
	struct lease *x;
	uint64_t timeout;
	bool lid = false;
	uid_t uid;
	pid_t pid;

	/* Back after waiting for a state write: it was authorized then, and holds the gate since. */
	r = gate_wait_resume(b->gate_waits, m,
			     "the kernel does not enforce our kernel lock, so no wake lock was taken; try again", error);
	if (r < 0)
		return r;
	if (r == GATE_PARKED)
		return 1;
	if (r == GATE_PASSED)
		hold = b->gate_waits;

	r = sd_bus_message_read(m, "sst", &name, &why, &timeout);
	if (r < 0)
		return r;
	if (with_options) {
		struct lock_options o = { .error = error };

		r = bus_dict_walk(m, lock_option, &o);
		if (r < 0)
			return r;
		lid = o.lid;
	}
	r = validate_name(name, error);
	if (r < 0)
		return r;
	r = validate_why(why, error);
	if (r < 0)
		return r;
	/* Asked of the bus once per client, without waiting: the call comes round again if needed. */
	r = peers_get(b->peers, m, &uid, &pid);
	if (r <= 0)
		return r < 0 ? r : 1;
	if (uid != 0 && !hold) {
		/*
		 * Without polkit only the admin's choice keeps the machine
		 * awake: root, and the group [WakeLocks] Group= names.
		 */
		r = polkit_verify(&b->polkit, b->peers, m, uid,
				  lid && !uid_is_system(uid) ? "org.autosleep1.acquire-wake-lock-lid-closed"
							      : "org.autosleep1.acquire-wake-lock",
				  peers_in_group(b->peers, m, mgr->wake_lock_gid), error);
		if (r <= 0)
			return r < 0 ? r : 1;
	}
	if (leases_count_uid(&mgr->leases, uid) >= mgr->config.max_locks_per_user)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "User %u already holds %u wake locks (MaxPerUser=%u)", (unsigned)uid,
					 leases_count_uid(&mgr->leases, uid), mgr->config.max_locks_per_user);
	if (b->n_locks >= b->max_locks)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "Too many wake locks are held: %u, the most all clients together may hold",
					 b->max_locks);
	/*
	 * A kernel lock the kernel enforces aborts a state write under way;
	 * without one the answer waits until the write returned, so that the
	 * answer still means the machine is awake.
	 */
	if (!hold && !manager_kernel_lock_ready(mgr)) {
		r = gate_wait(b->gate_waits, m, true, error);
		if (r <= 0)
			return r < 0 ? r : 1;
		hold = b->gate_waits;
	}

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = negative_errno();
		manager_kernel_lock_settle(mgr);
		return r;
	}
	client_fd = p[1];
	b->acquiring = true;
	r = manager_acquire(mgr, &(struct lease_spec){ .name = name, .owner = sd_bus_message_get_sender(m), .why = why,
						     .uid = uid, .pid = pid, .lid = lid,
						     .deadline = manager_deadline(timeout) },
			    &x);
	b->acquiring = false;
	/*
	 * Taken early for a lease that may not hold (a person's lock with the
	 * lid closed): given back unless a lease holds now.
	 */
	manager_kernel_lock_settle(mgr);
	if (r < 0) {
		safe_close(p[0]);
		return r;
	}
	r = bus_lock_attach(b, x, p[0]);
	if (r >= 0) {
		/* Stored before the reply: a lock the client was given is never lost to a restart. */
		r = lease_store_save(b->store, x, ((struct bus_lock *)x->data)->fd);
		if (r < 0)
			log_warning_errno(r, "Failed to store wake lock '%s' for restarts: %m; it ends if the daemon does",
					  x->name);
		r = sd_bus_reply_method_return(m, "h", client_fd);
	}
	/* Announced only once the client has its fd: a failed reply releases it below. */
	if (r >= 0)
		bus_emit_acquired(b, x);
	if (r < 0) {
		/* The client will never see its fd: do not leak the lease. */
		leases_release_lease(&mgr->leases, x, "failed");
		return r;
	}
	return 1;
}

static int method_acquire_wake_lock(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return acquire_wake_lock(m, userdata, false, error);
}

static int method_acquire_wake_lock_with_options(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return acquire_wake_lock(m, userdata, true, error);
}

static int method_release_wake_lock(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct manager *mgr = userdata;
	const char *name, *sender = sd_bus_message_get_sender(m);
	struct lease *x, *next;
	unsigned n = 0;
	int r;

	r = sd_bus_message_read(m, "s", &name);
	if (r < 0)
		return r;
	r = validate_name(name, error);
	if (r < 0)
		return r;
	for (x = mgr->leases.head; x; x = next) {
		next = x->next;
		/* Only the caller's own D-Bus locks: never internal ones or another client's. */
		if (x->data && strcmp(x->name, name) == 0 && sender && strcmp(x->owner, sender) == 0) {
			leases_release_lease(&mgr->leases, x, "released");
			n++;
		}
	}
	if (n == 0)
		return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_WAKE_LOCK, "You hold no wake lock named '%s'", name);
	return sd_bus_reply_method_return(m, "");
}

/* Deadlines are kept on CLOCK_BOOTTIME; clients want wall-clock times. b and r: both clocks now. */
static uint64_t boottime_to_realtime(usec_t t, usec_t b, usec_t r)
{
	if (t == USEC_INFINITY)
		return 0;
	return t >= b ? r + (t - b) : r - MIN(r, b - t);
}

/*
 * One row of ListWakeLocks, and with state its a{sv} too: "State" is "held",
 * or "waiting-for-lid" for a person's lock while the lid is closed;
 * "LidClosed" says whether it would hold with the lid closed.
 */
static int append_lock_row(sd_bus_message *reply, bool state, const char *name, const char *why, const char *owner,
			   uid_t uid, pid_t pid, uint64_t since, uint64_t until, bool waits, bool lid)
{
	int r;

	r = sd_bus_message_open_container(reply, 'r', state ? "sssuutta{sv}" : "sssuutt");
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "sssuutt", name, why, owner, (uint32_t)uid, (uint32_t)pid, since, until);
	if (r >= 0 && state)
		r = sd_bus_message_append(reply, "a{sv}", 2, "State", "s", waits ? "waiting-for-lid" : "held",
					  "LidClosed", "b", lid);
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

static int list_wake_locks(sd_bus_message *m, struct manager *mgr, bool state)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	usec_t boot = now(CLOCK_BOOTTIME), real = now(CLOCK_REALTIME);
	const char *name;
	usec_t since, until;
	int r;

	r = sd_bus_message_new_method_return(m, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', state ? "(sssuutta{sv})" : "(sssuutt)");
	if (r < 0)
		return r;
	for (struct lease *x = mgr->leases.head; x; x = x->next) {
		r = append_lock_row(reply, state, x->name, x->why, x->owner, x->uid, x->pid, x->since_realtime,
				    boottime_to_realtime(x->deadline, boot, real), lease_waits_for_lid(&mgr->leases, x),
				    x->lid);
		if (r < 0)
			return r;
	}
	/* The activity hold timed by the kernel is a lock like any other to the user; it ends with the lid itself. */
	if (activity_kernel_hold(mgr->activity, &name, &since, &until)) {
		r = append_lock_row(reply, state, name, "user input", "autosleepd", 0, getpid(),
				    boottime_to_realtime(since, boot, real), boottime_to_realtime(until, boot, real),
				    false, true);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

static int method_list_wake_locks(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	(void)error;
	return list_wake_locks(m, userdata, false);
}

static int method_list_wake_locks_with_state(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	(void)error;
	return list_wake_locks(m, userdata, true);
}

static int append_suspend_stats(sd_bus_message *reply, struct manager *mgr)
{
	const struct manager_stats *s = &mgr->stats;
	const struct manager_cycle *last = manager_recent(mgr, 0);
	int r;

	r = sd_bus_message_open_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}", "Attempts", "t", s->attempts, "Successes", "t",
				  s->results[SUSPEND_SUCCESS], "EarlyCancels", "t", s->results[SUSPEND_EARLY_CANCEL],
				  "LateCancels", "t", s->results[SUSPEND_LATE_CANCEL], "Failures", "t",
				  s->results[SUSPEND_FAILURE], "TimeAsleepUSec", "t", (uint64_t)s->total_asleep);
	if (r >= 0)
		r = sd_bus_message_append(reply, "{sv}{sv}", "ExternalSuspends", "t", s->results[SUSPEND_EXTERNAL],
					  "AlarmImminent", "t", s->results[SUSPEND_ALARM_IMMINENT]);
	if (r >= 0)
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}", "InputEvents", "t", activity_events(mgr->activity),
					  "InputOverflows", "t", activity_overflows(mgr->activity), "ActivityHoldWrites", "t",
					  activity_writes(mgr->activity));
	if (r >= 0) {
		struct battery_drain_summary b;

		manager_battery_summary(mgr, &b);
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}", "BatteryWindowUSec", "t", (uint64_t)b.covered,
					  "AsleepShare", "d", b.asleep_share, "BatteryDrainAwake", "d",
					  b.percent_per_hour[BATTERY_PHASE_AWAKE], "BatteryDrainAsleep", "d",
					  b.percent_per_hour[BATTERY_PHASE_ASLEEP], "BatteryPowerAwake", "d",
					  b.milliwatts[BATTERY_PHASE_AWAKE], "BatteryPowerAsleep", "d",
					  b.milliwatts[BATTERY_PHASE_ASLEEP]);
	}
	if (r >= 0 && last)
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}", "LastResult", "s",
					  suspend_result_to_string(last->report.result), "LastAsleepUSec", "t",
					  (uint64_t)last->report.asleep, "LastWakeReason", "s", mgr->last_wake_reason,
					  "LastError", "s", last->report.error ? strerror(-last->report.error) : "",
					  "LastFailedDevice", "s", last->report.failed_dev, "LastFailedStep", "s",
					  last->report.failed_step, "LastFailedErrno", "i", last->report.failed_errno,
					  "NextDelayUSec", "t", (uint64_t)last->report.next_delay);
	if (r < 0)
		return r;
	/* "Who kept me awake", next to the wake locks: name, times, total and last time active, when. */
	r = sd_bus_message_open_container(reply, 'e', "sv");
	if (r >= 0)
		r = sd_bus_message_append(reply, "s", "KernelBlockers");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'v', "a(stttt)");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(stttt)");
	for (unsigned i = 0; r >= 0 && i < s->n_blockers; i++) {
		const struct manager_blocker *k = &s->blockers[i];

		r = sd_bus_message_append(reply, "(stttt)", k->name, k->count, k->total_ms * USEC_PER_MSEC,
					  k->last_ms * USEC_PER_MSEC, (uint64_t)k->last);
	}
	for (int i = 0; r >= 0 && i < 3; i++)
		r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'e', "sv");
	if (r >= 0)
		r = sd_bus_message_append(reply, "s", "Recent");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'v', "a(tsttss)");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(tsttss)");
	for (unsigned i = 0; r >= 0 && i < s->n_recent; i++) {
		const struct manager_cycle *c = manager_recent(mgr, i);

		r = sd_bus_message_append(reply, "(tsttss)", c->report.attempt, suspend_result_to_string(c->report.result),
					  (uint64_t)c->when, (uint64_t)c->report.asleep, c->report.wake_reason,
					  c->report.error ? strerror(-c->report.error) : "");
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

static int method_get_statistics(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct manager *mgr = userdata;
	int r;

	(void)error;
	r = sd_bus_message_new_method_return(m, &reply);
	if (r < 0)
		return r;
	activity_sync_stats(mgr->activity);
	r = sd_bus_message_open_container(reply, 'a', "(sttttu)");
	if (r < 0)
		return r;
	for (const struct lease_stats *s = mgr->leases.stats; s; s = s->next) {
		r = sd_bus_message_append(reply, "(sttttu)", s->name, s->count, (uint64_t)s->total, (uint64_t)s->max,
					  (uint64_t)s->last_change, s->active);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	r = append_suspend_stats(reply, mgr);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

/*
 * The privileged methods: root, or polkit's org.autosleep1.manage. 1: go on;
 * 0: the answer is coming, the handler returns 1 without replying and runs
 * again from the top; <0: refused, error set.
 */
static int verify_manage(struct manager *mgr, sd_bus_message *m, sd_bus_error *error)
{
	uid_t uid;
	pid_t pid;
	int r;

	r = peers_get(mgr->bus->peers, m, &uid, &pid);
	if (r <= 0 || uid == 0)
		return r;
	return polkit_verify(&mgr->bus->polkit, mgr->bus->peers, m, uid, "org.autosleep1.manage", false, error);
}

static int method_set_enabled(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct manager *mgr = userdata;
	int r;

	bool enable = strcmp(sd_bus_message_get_member(m), "Enable") == 0;

	/* Back after waiting for the state write under way: it was authorized and applied then. */
	r = gate_wait_resume(mgr->bus->gate_waits, m,
			     mgr->enabled ? "autosleep is enabled again" : "autosleep is disabled, and no new suspend starts",
			     error);
	if (r < 0)
		return r;
	if (r == GATE_PARKED)
		return 1;
	if (r == GATE_FRESH) {
		r = verify_manage(mgr, m, error);
		if (r <= 0)
			return r < 0 ? r : 1;
		manager_set_enabled(mgr, enable);
		/* Answered once no state write is under way: after Disable, nothing suspends. */
		if (!enable) {
			r = gate_wait(mgr->bus->gate_waits, m, false, error);
			if (r <= 0)
				return r < 0 ? r : 1;
		}
	}
	return sd_bus_reply_method_return(m, "");
}

#define streq(a, b) (strcmp((a), (b)) == 0)

static bool word_listed(const char *const *list, const char *w)
{
	for (; *list; list++)
		if (strcmp(*list, w) == 0)
			return true;
	return false;
}

struct soak_options {
	struct soak_request *req;
	usec_t watchdog;
	sd_bus_error *error;
};

/* One of SoakCycle's options (bus_dict_walk()): an unknown key or a bad value is named in the error. */
static int soak_option(void *userdata, const char *key, sd_bus_message *m, const char *type)
{
	static const char *const states[] = { "mem", "freeze", "standby", NULL };
	static const char *const levels[] = { "none", "core", "processors", "platform", "devices", "freezer", NULL };
	struct soak_options *o = userdata;
	struct soak_request *req = o->req;
	sd_bus_error *error = o->error;
	const char *sval;
	uint64_t t;
	int b;

	if (streq(key, "State") || streq(key, "PmTest")) {
		bool is_state = streq(key, "State");

		if (!streq(type, "s") || sd_bus_message_read(m, "s", &sval) < 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "%s must be a string", key);
		if (!word_listed(is_state ? states : levels, sval))
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid %s '%s'", key, sval);
		snprintf(is_state ? req->state : req->pm_test, sizeof(req->state), "%s", sval);
		return 1;
	}
	if (streq(key, "SleepUSec") || streq(key, "WakeAtUSec") || streq(key, "ReadTimeoutUSec") ||
	    streq(key, "WatchdogUSec")) {
		if (!streq(type, "t") || sd_bus_message_read(m, "t", &t) < 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "%s must be a uint64 (t)", key);
		if (streq(key, "SleepUSec"))
			req->sleep = t;
		else if (streq(key, "WakeAtUSec"))
			req->wake_at = t;
		else if (streq(key, "ReadTimeoutUSec") && t > 0 && t <= 3600 * USEC_PER_SEC)
			req->read_timeout = t;
		else if (streq(key, "WatchdogUSec") && t > 0 && t <= 24 * 3600 * USEC_PER_SEC)
			o->watchdog = t;
		else
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "%s %" PRIu64 " is out of range", key,
						 t);
		return 1;
	}
	if (streq(key, "Force")) {
		if (!streq(type, "b") || sd_bus_message_read(m, "b", &b) < 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Force must be a boolean");
		req->force = b;
		return 1;
	}
	return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Unknown soak option '%s'", key);
}

/* SoakCycle's options, checked one by one. */
static int parse_soak_options(sd_bus_message *m, struct soak_request *req, usec_t *ret_watchdog, sd_bus_error *error)
{
	struct soak_options o = { .req = req, .watchdog = SOAK_WATCHDOG_DEFAULT_USEC, .error = error };
	int r;

	*req = (struct soak_request){ .read_timeout = SOAK_READ_TIMEOUT_DEFAULT_USEC };
	snprintf(req->state, sizeof(req->state), "mem");
	r = bus_dict_walk(m, soak_option, &o);
	if (r < 0)
		return r;
	*ret_watchdog = o.watchdog;
	return 0;
}

static int method_soak_cycle(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct manager *mgr = userdata;
	struct soak_request req;
	usec_t watchdog = SOAK_WATCHDOG_DEFAULT_USEC;
	int r;

	/* Back after its pause waited for a state write: authorized then, not asked again. */
	if (!gate_wait_known(mgr->bus->gate_waits, m)) {
		r = verify_manage(mgr, m, error);
		if (r <= 0)
			return r < 0 ? r : 1;
	}
	/* After polkit: the check re-enters this handler, which reads the options from the top. */
	r = parse_soak_options(m, &req, &watchdog, error);
	if (r < 0)
		return r;
	return soak_session_cycle(mgr, m, &req, watchdog, error);
}

/* A read-only property whose value is one expression of the manager. */
#define DEFINE_PROPERTY_GET(name, type, expr)                                                                  \
	static int property_get_##name(sd_bus *bus, const char *path, const char *interface,                   \
				       const char *property, sd_bus_message *reply, void *userdata,            \
				       sd_bus_error *error)                                                    \
	{                                                                                                      \
		struct manager *mgr = userdata;                                                                \
                                                                                                               \
		return sd_bus_message_append(reply, type, expr);                                               \
	}

DEFINE_PROPERTY_GET(state, "s", suspender_state_to_string(mgr->state))
DEFINE_PROPERTY_GET(enabled, "b", mgr->enabled)
DEFINE_PROPERTY_GET(suspend_count, "t", mgr->stats.results[SUSPEND_SUCCESS])
DEFINE_PROPERTY_GET(last_wake_reason, "s", mgr->last_wake_reason)
DEFINE_PROPERTY_GET(n_wake_locks, "u", mgr->leases.n)
DEFINE_PROPERTY_GET(n_wake_locks_waiting_for_lid, "u", leases_waiting_for_lid(&mgr->leases))
DEFINE_PROPERTY_GET(kernel_userspace_autosleep, "s", kconfig_value_to_string(mgr->kconfig.userspace_autosleep))
DEFINE_PROPERTY_GET(kernel_wake_locks, "b", mgr->kernel_wakelocks)
DEFINE_PROPERTY_GET(userspace_autosleep, "s",
		    knob_mode_to_string(knob_mode(&mgr->knob, mgr->kconfig.userspace_autosleep)))
DEFINE_PROPERTY_GET(userspace_autosleep_knob, "i", (int32_t)mgr->knob.value)
DEFINE_PROPERTY_GET(idle_timeout, "t", (uint64_t)(mgr->activity ? mgr->config.idle_timeout : 0))
DEFINE_PROPERTY_GET(idle, "t", (uint64_t)activity_idle(mgr->activity))
DEFINE_PROPERTY_GET(n_input_devices, "u", activity_n_devices(mgr->activity))
DEFINE_PROPERTY_GET(lock_step, "s", lock_step_to_string(mgr->lock_step))
DEFINE_PROPERTY_GET(external_suspend_count, "t", mgr->stats.results[SUSPEND_EXTERNAL])
DEFINE_PROPERTY_GET(lid, "s", !mgr->lid_present ? "none" : mgr->lid_closed ? "closed" : "open")
DEFINE_PROPERTY_GET(lid_handler, "s", mgr->lid_handler ? mgr->lid_handler : "autosleepd")
DEFINE_PROPERTY_GET(away, "b", manager_away(mgr))

static int property_get_sessions(sd_bus *bus, const char *path, const char *interface, const char *property,
				 sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct manager *mgr = userdata;
	struct session_info si;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(susssbbbbb)");
	for (unsigned i = 0; r >= 0 && sessions_get(mgr->sessions, i, &si); i++)
		r = sd_bus_message_append(reply, "(susssbbbbb)", si.id, si.uid, si.user, si.class, si.type, si.active,
					  si.remote, si.idle, si.locked, si.counts);
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

/* The WakeSystem timer due next and when (CLOCK_REALTIME usec); ("", 0) for none. */
static int property_get_next_wake_up(sd_bus *bus, const char *path, const char *interface, const char *property,
				     sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct manager *mgr = userdata;
	const char *id = "";
	usec_t when = 0;

	if (!timers_next(mgr->timers, &id, &when)) {
		id = "";
		when = 0;
	}
	return sd_bus_message_append(reply, "(st)", id, (uint64_t)when);
}

static int property_get_timer_holds(sd_bus *bus, const char *path, const char *interface, const char *property,
				    sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct manager *mgr = userdata;
	struct timer_info ti;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(ssst)");
	for (unsigned i = 0; r >= 0 && timers_get(mgr->timers, i, &ti); i++)
		r = sd_bus_message_append(reply, "(ssst)", ti.id, ti.unit, timer_phase_to_string(ti.phase),
					  (uint64_t)ti.since);
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

/* The battery figures of the last hour; -1 where there is none (see battery-drain.h). */
static double battery_figure(const struct battery_drain_summary *s, const char *property)
{
	if (strcmp(property, "AsleepShare") == 0)
		return s->asleep_share;
	if (strcmp(property, "BatteryDrainAwake") == 0)
		return s->percent_per_hour[BATTERY_PHASE_AWAKE];
	if (strcmp(property, "BatteryDrainAsleep") == 0)
		return s->percent_per_hour[BATTERY_PHASE_ASLEEP];
	if (strcmp(property, "BatteryPowerAwake") == 0)
		return s->milliwatts[BATTERY_PHASE_AWAKE];
	assert(strcmp(property, "BatteryPowerAsleep") == 0);
	return s->milliwatts[BATTERY_PHASE_ASLEEP];
}

static int property_get_battery(sd_bus *bus, const char *path, const char *interface, const char *property,
				sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct battery_drain_summary s;

	manager_battery_summary(userdata, &s);
	return sd_bus_message_append(reply, "d", battery_figure(&s, property));
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("State", "s", property_get_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Enabled", "b", property_get_enabled, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("SuspendCount", "t", property_get_suspend_count, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("LastWakeReason", "s", property_get_last_wake_reason, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("NWakeLocks", "u", property_get_n_wake_locks, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* Of them, people's locks taken without LidClosed while the lid is closed (leases_set_lid_closed()). */
	SD_BUS_PROPERTY("NWakeLocksWaitingForLid", "u", property_get_n_wake_locks_waiting_for_lid, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("KernelUserspaceAutosleep", "s", property_get_kernel_userspace_autosleep, 0,
			SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("KernelWakeLocks", "b", property_get_kernel_wake_locks, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	/* What keeps frequent suspend cheap: "compile-time", "runtime-knob", "none" or "unknown". */
	SD_BUS_PROPERTY("UserspaceAutosleep", "s", property_get_userspace_autosleep, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* /sys/power/userspace_autosleep as last read or written; -1 when the kernel has none. */
	SD_BUS_PROPERTY("UserspaceAutosleepKnob", "i", property_get_userspace_autosleep_knob, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* 0 when input is not followed. */
	SD_BUS_PROPERTY("IdleTimeoutUSec", "t", property_get_idle_timeout, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	/* Changes all the time, so no change signal: read it when needed. */
	SD_BUS_PROPERTY("IdleUSec", "t", property_get_idle, 0, 0),
	SD_BUS_PROPERTY("NInputDevices", "u", property_get_n_input_devices, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/*
	 * Over the hour up to the last suspend or resume: the share of it spent
	 * asleep (0..1), and the battery's drain awake and asleep in %/h and in
	 * mW. -1 where there is no figure: no battery, on AC, under a minute
	 * measured, or (mW) a battery that gives neither energy nor voltage.
	 */
	SD_BUS_PROPERTY("AsleepShare", "d", property_get_battery, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("BatteryDrainAwake", "d", property_get_battery, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("BatteryDrainAsleep", "d", property_get_battery, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("BatteryPowerAwake", "d", property_get_battery, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("BatteryPowerAsleep", "d", property_get_battery, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/*
	 * logind's sessions: id, uid, user, class, type, active, remote, idle,
	 * locked, and whether it counts (an active one that counts and is not
	 * idle keeps us awake).
	 */
	SD_BUS_PROPERTY("Sessions", "a(susssbbbbb)", property_get_sessions, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* "off", "pending", "locking", "locked", "timed-out" or "failed". */
	SD_BUS_PROPERTY("LockStep", "s", property_get_lock_step, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* Suspends by logind (PrepareForSleep), not ours. */
	SD_BUS_PROPERTY("ExternalSuspendCount", "t", property_get_external_suspend_count, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* "none" (no lid switch seen), "open" or "closed". */
	SD_BUS_PROPERTY("Lid", "s", property_get_lid, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* Who handles the lid and the sleep key: "autosleepd", or logind, or another holder of handle-lid-switch. */
	SD_BUS_PROPERTY("LidHandler", "s", property_get_lid_handler, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* The lid closed (undocked) or the sleep key pressed: no idle timeout, built-in input ignored. */
	SD_BUS_PROPERTY("Away", "b", property_get_away, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("NextWakeUp", "(st)", property_get_next_wake_up, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("TimerHolds", "a(ssst)", property_get_timer_holds, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_METHOD_WITH_ARGS("AcquireWakeLock", SD_BUS_ARGS("s", name, "s", why, "t", timeout_usec),
				SD_BUS_RESULT("h", fd), method_acquire_wake_lock, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("AcquireWakeLockWithOptions",
				SD_BUS_ARGS("s", name, "s", why, "t", timeout_usec, "a{sv}", options), SD_BUS_RESULT("h", fd),
				method_acquire_wake_lock_with_options, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ReleaseWakeLock", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
				method_release_wake_lock, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListWakeLocks", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssuutt)", locks),
				method_list_wake_locks, SD_BUS_VTABLE_UNPRIVILEGED),
	/* The same rows, each with an a{sv} of its state: ListWakeLocks' signature stays as 0.1 had it. */
	SD_BUS_METHOD_WITH_ARGS("ListWakeLocksWithState", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssuutta{sv})", locks),
				method_list_wake_locks_with_state, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetStatistics", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sttttu)", locks, "a{sv}", suspend),
				method_get_statistics, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Enable", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_set_enabled,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Disable", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_set_enabled,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SoakCycle", SD_BUS_ARGS("a{sv}", options), SD_BUS_RESULT("a{sv}", record),
				method_soak_cycle, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("Suspending", SD_BUS_NO_ARGS, 0),
	SD_BUS_SIGNAL_WITH_ARGS("Resumed", SD_BUS_ARGS("t", slept_usec, "s", reason, "b", success), 0),
	SD_BUS_SIGNAL_WITH_ARGS("WakeLockAcquired", SD_BUS_ARGS("s", name, "s", why, "s", owner, "u", uid), 0),
	SD_BUS_SIGNAL_WITH_ARGS("WakeLockReleased", SD_BUS_ARGS("s", name, "s", owner, "s", reason), 0),
	SD_BUS_VTABLE_END
};

static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error)
{
	struct manager *m = userdata;

	(void)msg;
	(void)ret_error;
	/* Without the bus no client can reach us; restart with the kernel lock and stored leases kept. */
	manager_fatal(m, -ECONNRESET, "Lost the connection to the D-Bus system bus");
	return 0;
}

static int restore_one(const struct lease_spec *spec, int fd, void *userdata)
{
	struct bus *b = userdata;
	struct lease *x;
	int r;

	if (b->n_locks >= b->max_locks) {
		safe_close(fd);
		return log_warning_errno(-ENOSPC, "Not restoring wake lock '%s' of %s: %u are held already", spec->name,
					 spec->owner, b->max_locks);
	}
	r = manager_acquire(b->manager, spec, &x);
	if (r < 0) {
		safe_close(fd);
		return log_warning_errno(r, "Failed to restore wake lock '%s' of %s: %m", spec->name, spec->owner);
	}
	r = bus_lock_attach(b, x, fd);
	if (r < 0) {
		leases_release_lease(&b->manager->leases, x, "failed");
		return log_warning_errno(r, "Failed to watch restored wake lock '%s': %m", spec->name);
	}
	log_info("Restored wake lock '%s' of %s (uid %u, pid %d): %s", x->name, x->owner, (unsigned)x->uid, (int)x->pid,
		 x->why);
	return 0;
}

static int bus_connect(struct manager *m, struct bus **ret)
{
	struct bus *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->manager = m;
	r = sd_bus_open_system_with_description(&b->bus, "autosleepd");
	if (r < 0) {
		free(b);
		return r;
	}
	*ret = b;
	return 0;
}

int bus_open(struct manager *m, const struct fdstore *stored, struct bus **ret)
{
	struct bus *b = NULL;
	int r;

	r = bus_connect(m, &b);
	if (r < 0) {
		if (!fdstore_available() && stored->n == 0) {
			log_warning_errno(r, "No D-Bus system bus (%m): running without the D-Bus API and logind "
					  "integration");
			*ret = NULL;
			return 0;
		}
		return log_error_errno(r, "No D-Bus system bus (%m). Exiting with the stored wake locks and the "
				       "kernel lock kept, for a restart");
	}
	r = sd_bus_request_name(b->bus, BUS_NAME, 0);
	if (r < 0) {
		bus_free(b, true);
		if (r == -EEXIST)
			return log_error_errno(-EADDRINUSE, "Another autosleepd owns %s on the system bus; leaving its "
					       "knob, wake locks and kernel lock alone", BUS_NAME);
		if (r == -EACCES || r == -EPERM)
			return log_error_errno(r, "The system bus refuses us the name %s (%m): is org.autosleep1.conf "
					       "installed where dbus-daemon reads its policy (/usr/share/dbus-1/system.d "
					       "or /etc/dbus-1/system.d)? Exiting with the stored wake locks and the kernel "
					       "lock kept, for a restart", BUS_NAME);
		return log_error_errno(r, "Failed to take the name %s on the system bus: %m. Exiting with the stored "
				       "wake locks and the kernel lock kept, for a restart", BUS_NAME);
	}
	*ret = b;
	return 0;
}

static const char *changed_name(unsigned i)
{
	for (const sd_bus_vtable *v = manager_vtable; v->type != _SD_BUS_VTABLE_END; v++)
		if (v->type == _SD_BUS_VTABLE_PROPERTY && (v->flags & SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE) && i-- == 0)
			return v->x.property.member;
	return NULL;
}

static int changed_index(const char *property)
{
	int i = 0;

	for (const sd_bus_vtable *v = manager_vtable; v->type != _SD_BUS_VTABLE_END; v++) {
		if (v->type != _SD_BUS_VTABLE_PROPERTY || !(v->flags & SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE))
			continue;
		if (strcmp(v->x.property.member, property) == 0)
			return i;
		i++;
	}
	return -ENOENT;
}

/* One bit each in b->changed: checked at start, so a vtable that outgrows it stops every bus test at once. */
static int check_changed_count(void)
{
	unsigned n = 0;

	while (changed_name(n))
		n++;
	if (n > CHANGED_MAX)
		return log_error_errno(-E2BIG, "%u properties emit changes, more than the %u bits of struct bus' "
				       "changed (daemon/bus.c)", n, CHANGED_MAX);
	return 0;
}

int bus_start(struct bus *b, unsigned max_locks, const char *store_dir, struct fdstore *stored)
{
	struct manager *m = b->manager;
	int r;

	b->max_locks = max_locks;
	r = check_changed_count();
	if (r < 0)
		return r;
	r = sd_bus_add_object_vtable(b->bus, NULL, BUS_PATH, BUS_INTERFACE, manager_vtable, m);
	if (r >= 0)
		r = sd_bus_match_signal(b->bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
					"org.freedesktop.DBus.Local", "Disconnected", on_disconnected, m);
	if (r >= 0)
		r = sd_bus_attach_event(b->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r >= 0)
		r = sd_event_add_defer(m->event, &b->changed_source, on_changed, b);
	if (r >= 0)
		r = sd_event_source_set_priority(b->changed_source, SD_EVENT_PRIORITY_IDLE);
	if (r >= 0)
		r = sd_event_source_set_enabled(b->changed_source, SD_EVENT_OFF);
	if (r >= 0)
		r = peers_new(b->bus, &b->peers);
	if (r >= 0)
		r = gate_waits_new(m->event, m->suspender, b->peers, m->config.wait_for_resume, manager_gate_unheld, m,
				   &b->gate_waits);
	if (r >= 0) {
		char id_text[SD_ID128_STRING_MAX];
		sd_id128_t id;

		/* Without the bus's ID, records carry none, and restored owners are kept as they are. */
		r = lease_store_new(store_dir, sd_bus_get_bus_id(b->bus, &id) >= 0 ? sd_id128_to_string(id, id_text) : NULL,
				    &b->store);
	}
	if (r >= 0)
		r = leases_observe(&m->leases, on_lease_event, b);
	if (r < 0)
		return r;
	/*
	 * The name is ours, but nothing is dispatched before the main loop
	 * runs: a client that sees us on the bus and asks finds its restored
	 * lock.
	 */
	r = lease_store_restore(b->store, stored, restore_one, b);
	if (r > 0)
		log_notice("Restored %d wake lock%s held across the restart", r, r == 1 ? "" : "s");
	b->n_locks_announced = m->leases.n;
	return 0;
}

struct bus *bus_free(struct bus *b, bool keep_stored)
{
	struct manager *m;

	if (!b)
		return NULL;
	m = b->manager;
	/* The leases still standing were not released: only their D-Bus side goes. */
	for (struct lease *x = m->leases.head; x; x = x->next) {
		struct bus_lock *l = x->data;

		if (!l || l->bus != b)
			continue;
		if (!keep_stored)
			lease_store_forget(b->store, x->id);
		x->data = bus_lock_free(l);
	}
	sd_event_source_disable_unref(b->changed_source);
	/* Before the peers: each waiting call is answered, and its sender's entry let go. */
	gate_waits_free(b->gate_waits);
	peers_free(b->peers);
	polkit_registry_free(b->polkit);
	lease_store_free(b->store);
	sd_bus_flush_close_unref(b->bus);
	free(b);
	return NULL;
}
