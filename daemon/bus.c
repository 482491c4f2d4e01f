/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activity.h"
#include "bus.h"
#include "config.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "polkit.h"

struct bus {
	struct manager *manager;
	sd_bus *bus;
};

/*
 * One D-Bus wake lock. The client holds the write end of a pipe; we hold
 * the read end and see EPOLLHUP when the last copy of the write end closes,
 * however the client died. The sender's bus name is tracked as well.
 */
struct bus_lock {
	struct bus *bus;
	uint64_t id;
	int fd;
	sd_event_source *io;
	sd_bus_track *track;
};

static struct bus_lock *bus_lock_free(struct bus_lock *l)
{
	if (!l)
		return NULL;
	sd_event_source_disable_unref(l->io);
	sd_bus_track_unref(l->track);
	safe_close(l->fd);
	free(l);
	return NULL;
}

sd_bus *bus_get_sd_bus(struct bus *b)
{
	return b ? b->bus : NULL;
}

void bus_emit_changed(struct bus *b, const char *property)
{
	if (!b)
		return;
	(void)sd_bus_emit_properties_changed(b->bus, BUS_PATH, BUS_INTERFACE, property, NULL);
}

void bus_emit_suspending(struct bus *b)
{
	if (!b)
		return;
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "Suspending", "");
}

void bus_emit_resumed(struct bus *b, const struct suspend_report *rep)
{
	char reason[160];

	if (!b)
		return;
	if (rep->result == SUSPEND_SUCCESS)
		snprintf(reason, sizeof(reason), "%s", rep->wake_reason);
	else
		snprintf(reason, sizeof(reason), "%s: %s", suspend_result_to_string(rep->result), strerror(-rep->error));
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "Resumed", "tsb", (uint64_t)rep->asleep, reason,
				 rep->result == SUSPEND_SUCCESS);
}

void bus_lease_acquired(struct bus *b, const struct lease *x)
{
	if (!b)
		return;
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "WakeLockAcquired", "sssu", x->name, x->why,
				 x->owner, (uint32_t)x->uid);
	bus_emit_changed(b, "NWakeLocks");
}

void bus_lease_released(struct bus *b, struct lease *x, const char *reason)
{
	x->data = bus_lock_free(x->data);
	if (!b)
		return;
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "WakeLockReleased", "sss", x->name, x->owner,
				 reason);
	bus_emit_changed(b, "NWakeLocks");
}

static int on_lock_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct bus_lock *l = userdata;
	char buf[4096];

	(void)s;
	if (revents & (EPOLLHUP | EPOLLERR)) {
		/* Frees l through bus_lease_released(). */
		manager_release(l->bus->manager, l->id, "closed");
		return 0;
	}
	/* Whatever a client writes is noise; drain a bounded amount so it cannot spin us. */
	for (int i = 0; i < 16; i++)
		if (read(fd, buf, sizeof(buf)) <= 0)
			break;
	return 0;
}

static int on_track(sd_bus_track *t, void *userdata)
{
	struct bus_lock *l = userdata;

	(void)t;
	manager_release(l->bus->manager, l->id, "disconnected");
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
	size_t n = strlen(why);

	if (n > BUS_WHY_MAX)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Reason is %zu bytes long, at most %d are allowed",
					 n, BUS_WHY_MAX);
	for (const char *p = why; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "Reason contains control characters");
	return 0;
}

static int sender_creds(sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid)
{
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *c = NULL;
	uid_t uid;
	pid_t pid = 0;
	int r;

	r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT, &c);
	if (r < 0)
		return r;
	r = sd_bus_creds_get_euid(c, &uid);
	if (r < 0)
		return r;
	(void)sd_bus_creds_get_pid(c, &pid);
	*ret_uid = uid;
	*ret_pid = pid;
	return 0;
}

/* Everything after authorization; replies itself on success. */
static int acquire_now(struct bus *b, sd_bus_message *m, sd_bus_error *error)
{
	struct manager *mgr = b->manager;
	const char *name, *why;
	struct bus_lock *l;
	int p[2] = { -EBADF, -EBADF }, r;
	uint64_t timeout, id;
	uid_t uid;
	pid_t pid;

	r = sd_bus_message_rewind(m, true);
	if (r < 0)
		return r;
	r = sd_bus_message_read(m, "sst", &name, &why, &timeout);
	if (r < 0)
		return r;
	r = sender_creds(m, &uid, &pid);
	if (r < 0)
		return r;
	if (leases_count_uid(&mgr->leases, uid) >= mgr->config.max_locks_per_user)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "User %u already holds %u wake locks (MaxPerUser=%u)", (unsigned)uid,
					 leases_count_uid(&mgr->leases, uid), mgr->config.max_locks_per_user);
	if (mgr->leases.n >= BUS_LOCKS_MAX)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "Too many wake locks (%d) are held",
					 BUS_LOCKS_MAX);

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->bus = b;
	l->fd = -EBADF;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = negative_errno();
		goto fail;
	}
	l->fd = TAKE_FD(p[0]);
	r = sd_event_add_io(mgr->event, &l->io, l->fd, EPOLLIN, on_lock_fd, l);
	if (r < 0)
		goto fail;
	r = sd_bus_track_new(b->bus, &l->track, on_track, l);
	if (r >= 0)
		r = sd_bus_track_add_sender(l->track, m);
	if (r < 0)
		goto fail;
	r = manager_acquire(mgr, name, sd_bus_message_get_sender(m), why, uid, pid, timeout, &id);
	if (r < 0)
		goto fail;
	l->id = id;
	leases_find(&mgr->leases, id)->data = l;
	bus_lease_acquired(b, leases_find(&mgr->leases, id));

	r = sd_bus_reply_method_return(m, "h", p[1]);
	safe_close(p[1]);
	if (r < 0) {
		/* The client will never see its fd: do not leak the lease. */
		manager_release(mgr, id, "failed");
		return r;
	}
	return 1;
fail:
	safe_close(p[1]);
	bus_lock_free(l);
	return r;
}

static void acquire_after_polkit(sd_bus_message *m, int result, void *userdata)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	/* Without polkit, wake locks stay open to all: the quota still bounds each user. */
	if (result == 0) {
		(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_ACCESS_DENIED,
						 "Not authorized to take wake locks (org.autosleep1.acquire-wake-lock)");
		return;
	}
	if (result < 0 && result != -ENOENT) {
		(void)sd_bus_reply_method_errno(m, result, NULL);
		return;
	}
	r = acquire_now(userdata, m, &error);
	if (r < 0)
		(void)sd_bus_reply_method_errno(m, r, &error);
}

static int method_acquire_wake_lock(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct bus *b = ((struct manager *)userdata)->bus;
	const char *name, *why;
	uint64_t timeout;
	uid_t uid;
	pid_t pid;
	int r;

	r = sd_bus_message_read(m, "sst", &name, &why, &timeout);
	if (r < 0)
		return r;
	r = validate_name(name, error);
	if (r < 0)
		return r;
	r = validate_why(why, error);
	if (r < 0)
		return r;
	r = sender_creds(m, &uid, &pid);
	if (r < 0)
		return r;
	if (uid == 0)
		return acquire_now(b, m, error);
	r = polkit_check(b->bus, m, "org.autosleep1.acquire-wake-lock", acquire_after_polkit, b);
	if (r < 0)
		return r;
	return 1;
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
			manager_release(mgr, x->id, "released");
			n++;
		}
	}
	if (n == 0)
		return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_WAKE_LOCK, "You hold no wake lock named '%s'", name);
	return sd_bus_reply_method_return(m, "");
}

/* Deadlines are kept on CLOCK_BOOTTIME; clients want wall-clock times. */
static uint64_t boottime_to_realtime(usec_t t)
{
	usec_t b = now(CLOCK_BOOTTIME), r = now(CLOCK_REALTIME);

	if (t == USEC_INFINITY)
		return 0;
	return t >= b ? r + (t - b) : r - MIN(r, b - t);
}

static int method_list_wake_locks(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct manager *mgr = userdata;
	int r;

	(void)error;
	r = sd_bus_message_new_method_return(m, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(sssuutt)");
	if (r < 0)
		return r;
	for (struct lease *x = mgr->leases.head; x; x = x->next) {
		r = sd_bus_message_append(reply, "(sssuutt)", x->name, x->why, x->owner, (uint32_t)x->uid,
					  (uint32_t)x->pid, (uint64_t)x->since_realtime, boottime_to_realtime(x->deadline));
		if (r < 0)
			return r;
	}
	{
		const char *name;
		usec_t since, until;

		/* The activity hold timed by the kernel is a lock like any other to the user. */
		if (activity_kernel_hold(mgr->activity, &name, &since, &until)) {
			r = sd_bus_message_append(reply, "(sssuutt)", name, "user input", "autosleepd", 0u, (uint32_t)getpid(),
						  boottime_to_realtime(since), boottime_to_realtime(until));
			if (r < 0)
				return r;
		}
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
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
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}", "InputEvents", "t", activity_events(mgr->activity),
					  "InputOverflows", "t", activity_overflows(mgr->activity), "ActivityHoldWrites", "t",
					  activity_writes(mgr->activity));
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

static void set_enabled_reply(struct manager *mgr, sd_bus_message *m)
{
	manager_set_enabled(mgr, strcmp(sd_bus_message_get_member(m), "Enable") == 0);
	(void)sd_bus_reply_method_return(m, "");
}

static void enable_after_polkit(sd_bus_message *m, int result, void *userdata)
{
	if (result == 1) {
		set_enabled_reply(userdata, m);
		return;
	}
	if (result == -ENOENT)
		(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_ACCESS_DENIED,
						 "polkit is not running; only root may enable or disable autosleep");
	else if (result == 0)
		(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_ACCESS_DENIED,
						 "Not authorized to enable or disable autosleep (org.autosleep1.manage)");
	else
		(void)sd_bus_reply_method_errno(m, result, NULL);
}

static int method_set_enabled(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct manager *mgr = userdata;
	uid_t uid;
	pid_t pid;
	int r;

	(void)error;
	r = sender_creds(m, &uid, &pid);
	if (r < 0)
		return r;
	if (uid == 0) {
		set_enabled_reply(mgr, m);
		return 1;
	}
	r = polkit_check(mgr->bus->bus, m, "org.autosleep1.manage", enable_after_polkit, mgr);
	return r < 0 ? r : 1;
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
DEFINE_PROPERTY_GET(kernel_userspace_autosleep, "s", kconfig_value_to_string(mgr->kconfig.userspace_autosleep))
DEFINE_PROPERTY_GET(kernel_wake_locks, "b", mgr->kernel_wakelocks)
DEFINE_PROPERTY_GET(idle_timeout, "t", (uint64_t)(mgr->activity ? mgr->config.idle_timeout : 0))
DEFINE_PROPERTY_GET(idle, "t", (uint64_t)activity_idle(mgr->activity))
DEFINE_PROPERTY_GET(n_input_devices, "u", activity_n_devices(mgr->activity))

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("State", "s", property_get_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Enabled", "b", property_get_enabled, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("SuspendCount", "t", property_get_suspend_count, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("LastWakeReason", "s", property_get_last_wake_reason, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("NWakeLocks", "u", property_get_n_wake_locks, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("KernelUserspaceAutosleep", "s", property_get_kernel_userspace_autosleep, 0,
			SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("KernelWakeLocks", "b", property_get_kernel_wake_locks, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	/* 0 when input is not followed. */
	SD_BUS_PROPERTY("IdleTimeoutUSec", "t", property_get_idle_timeout, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	/* Changes all the time, so no change signal: read it when needed. */
	SD_BUS_PROPERTY("IdleUSec", "t", property_get_idle, 0, 0),
	SD_BUS_PROPERTY("NInputDevices", "u", property_get_n_input_devices, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_METHOD_WITH_ARGS("AcquireWakeLock", SD_BUS_ARGS("s", name, "s", why, "t", timeout_usec),
				SD_BUS_RESULT("h", fd), method_acquire_wake_lock, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ReleaseWakeLock", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
				method_release_wake_lock, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListWakeLocks", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssuutt)", locks),
				method_list_wake_locks, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetStatistics", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sttttu)", locks, "a{sv}", suspend),
				method_get_statistics, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Enable", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_set_enabled,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Disable", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_set_enabled,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("Suspending", SD_BUS_NO_ARGS, 0),
	SD_BUS_SIGNAL_WITH_ARGS("Resumed", SD_BUS_ARGS("t", slept_usec, "s", reason, "b", success), 0),
	SD_BUS_SIGNAL_WITH_ARGS("WakeLockAcquired", SD_BUS_ARGS("s", name, "s", why, "s", owner, "u", uid), 0),
	SD_BUS_SIGNAL_WITH_ARGS("WakeLockReleased", SD_BUS_ARGS("s", name, "s", owner, "s", reason), 0),
	SD_BUS_VTABLE_END
};

int bus_new(struct manager *m, struct bus **ret)
{
	_cleanup_(freep) struct bus *b = NULL;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->manager = m;
	r = sd_bus_open_system_with_description(&b->bus, "autosleepd");
	if (r < 0)
		return r;
	r = sd_bus_add_object_vtable(b->bus, NULL, BUS_PATH, BUS_INTERFACE, manager_vtable, m);
	if (r >= 0)
		r = sd_bus_attach_event(b->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0) {
		sd_bus_flush_close_unref(b->bus);
		return r;
	}
	r = sd_bus_request_name(b->bus, BUS_NAME, 0);
	if (r < 0) {
		sd_bus_flush_close_unref(b->bus);
		return r == -EEXIST ? -EADDRINUSE : r;
	}
	*ret = TAKE_PTR(b);
	return 0;
}

struct bus *bus_free(struct bus *b)
{
	if (!b)
		return NULL;
	sd_bus_flush_close_unref(b->bus);
	free(b);
	return NULL;
}
