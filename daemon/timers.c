/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "event-util.h"
#include "leases.h"
#include "bus-signal.h"
#include "bus-dict.h"
#include "bus-names.h"
#include "log.h"
#include "macro.h"
#include "string-table.h"
#include "timers.h"

#define TIMER_LEASE_PREFIX "timer:"
#define TIMER_CAPPED_MESSAGE_ID "MESSAGE_ID=7d0f6a2e95b84c1f8e3a6b5d2c9f1e47"
/* The guard wakes us this close to its time: the kernel refuses from 2 s before the alarm. */
#define TIMER_GUARD_ACCURACY (10 * USEC_PER_MSEC)

/*
 * How late a resume may find a timer's due time and still blame it for the
 * wake: the RTC fires on the second, and systemd coalesces within the
 * timer's AccuracySec= (1 min by default), so a due time up to a second
 * ahead still means "this alarm woke us".
 */
#define TIMER_DUE_SLACK USEC_PER_SEC

struct timer {
	struct timers *t;
	char *path;
	char *id;           /* backup.timer */
	char *unit;         /* backup.service */
	bool known;         /* GetAll answered */
	bool listed;        /* in the last ListUnitsByPatterns answer (a relist drops the rest) */
	bool wake_system;
	usec_t next_realtime; /* CLOCK_REALTIME; 0: none */
	usec_t next_boottime; /* CLOCK_BOOTTIME, from NextElapseUSecMonotonic when it came; 0: none */
	usec_t last_trigger;  /* CLOCK_REALTIME of the last trigger, only compared */
	usec_t fired_at;      /* CLOCK_BOOTTIME we saw LastTriggerUSec move */
	char sub_state[16];
	/*
	 * SubState was heard of since LastTriggerUSec last moved. systemd
	 * announces the Timer and the Unit interface in two signals: the
	 * trigger alone does not say whether the timer is running or done.
	 */
	bool sub_fresh;
	enum timer_phase phase;
	usec_t phase_since;   /* CLOCK_REALTIME */
	usec_t trigger_seen;  /* last_trigger when the guard or dispatch hold began */
	usec_t done_due;      /* a due time already guarded or dispatched: not held again */
	uint64_t lease;
	sd_bus_slot *get_slot;
	sd_event_source *guard_source;
	struct timer *prev, *next;
};

struct timers {
	struct core *core;
	sd_bus *bus;
	struct timers_params p;
	struct timer *list;
	unsigned n;
	bool warned_full;
	bool releasing;       /* our own release: not the cap biting */
	sd_bus_slot *removed_slot, *reloading_slot, *props_slot, *owner_slot, *list_slot, *subscribe_slot;
};

static const char *const phase_names[_TIMER_PHASE_MAX] = {
	[TIMER_IDLE] = "idle",
	[TIMER_GUARD] = "due",
	[TIMER_DISPATCH] = "dispatching",
	[TIMER_RUNNING] = "running",
	[TIMER_CAPPED] = "capped",
};

DEFINE_STRING_TABLE_TO_STRING(timer_phase, enum timer_phase, phase_names, _TIMER_PHASE_MAX)

/* When the timer is due next, CLOCK_BOOTTIME; 0 for never. Real time is converted now: it may have jumped. */
static usec_t timer_due(const struct timer *x)
{
	usec_t due = x->next_boottime;

	if (x->next_realtime > 0 && x->next_realtime != USEC_INFINITY) {
		usec_t nb = now(CLOCK_BOOTTIME), nr = now(CLOCK_REALTIME);
		usec_t r = x->next_realtime >= nr ? usec_add(nb, x->next_realtime - nr)
						  : usec_sub_unsigned(nb, nr - x->next_realtime);

		if (due == 0 || r < due)
			due = r;
	}
	return due == USEC_INFINITY ? 0 : due;
}

static void timer_drop_lease(struct timer *x, const char *reason)
{
	if (!x->lease)
		return;
	x->t->releasing = true;
	(void)core_drop(x->t->core, x->lease, reason);
	x->t->releasing = false;
	x->lease = 0;
}

/* Take the phase's lease before dropping the last one: the machine must never be free in between. */
static void timer_enter(struct timer *x, enum timer_phase phase, const char *why, usec_t cap)
{
	char name[256];
	uint64_t old = x->lease, id = 0;
	int r;

	if (x->phase != phase)
		log_info("Timer %s: %s%s%s", x->id, phase_names[phase], why ? ", " : "", why ? why : "");
	x->phase = phase;
	x->phase_since = now(CLOCK_REALTIME);
	if (why) {
		snprintf(name, sizeof(name), TIMER_LEASE_PREFIX "%s", x->id);
		/* Every hold here has a cap: 0 would mean none to core_hold(). */
		r = core_hold(x->t->core, name, why, MAX(cap, (usec_t)1), &id);
		if (r < 0) {
			/* The last phase's hold is better than none: the timer's work may be under way. */
			log_warning_errno(r, "Failed to hold for timer %s: %m; keeping its last hold", x->id);
			id = old;
			old = 0;
		}
	}
	x->lease = id;
	if (old) {
		x->t->releasing = true;
		(void)core_drop(x->t->core, old, phase == TIMER_IDLE ? "the timer's work is done" : "next phase");
		x->t->releasing = false;
	}
	core_changed(x->t->core, "TimerHolds");
}

static int on_guard(sd_event_source *s, uint64_t usec, void *userdata);

/*
 * Decide the phase from what systemd last said. Running holds while
 * systemd says so. A guard or dispatch hold ends once the timer fired and
 * its SubState was told after the trigger (systemd tells the Timer and the
 * Unit interface in two signals), or when systemd moved the timer past the
 * guard. A timer due within GuardSec is guarded; one due later gets a
 * wake-up for its guard. Whatever comes next is entered before the last
 * hold is dropped, so a timer never leaves the machine free in between.
 */
static void timer_update(struct timer *x)
{
	struct timers *t = x->t;
	usec_t due, nb = now(CLOCK_BOOTTIME);
	char why[256];
	int r;

	if (!x->known || !x->wake_system) {
		if (x->phase != TIMER_IDLE)
			timer_enter(x, TIMER_IDLE, NULL, 0);
		return;
	}
	if (strcmp(x->sub_state, "running") == 0) {
		if (x->phase == TIMER_RUNNING || x->phase == TIMER_CAPPED)
			return;
		snprintf(why, sizeof(why), "running %s", strna(x->unit));
		timer_enter(x, TIMER_RUNNING, why, t->p.max_hold);
		return;
	}
	due = timer_due(x);
	if ((x->phase == TIMER_GUARD || x->phase == TIMER_DISPATCH) &&
	    (x->last_trigger == x->trigger_seen
		     ? strcmp(x->sub_state, "waiting") == 0 &&
			       !(x->phase == TIMER_GUARD && due != x->done_due && (due == 0 || nb + t->p.guard < due))
		     : !x->sub_fresh))
		return;

	(void)sd_event_source_set_enabled(x->guard_source, SD_EVENT_OFF);
	if (due > 0 && t->p.guard > 0 && due != x->done_due && strcmp(x->sub_state, "waiting") == 0 &&
	    nb + t->p.guard >= due) {
		x->done_due = due;
		x->trigger_seen = x->last_trigger;
		snprintf(why, sizeof(why), "due in %" PRIu64 " ms: waiting for systemd to start %s",
			 (uint64_t)(usec_sub_unsigned(due, nb) / USEC_PER_MSEC), strna(x->unit));
		timer_enter(x, TIMER_GUARD, why, usec_sub_unsigned(due, nb) + t->p.grace);
		return;
	}
	if (x->phase != TIMER_IDLE)
		timer_enter(x, TIMER_IDLE, NULL, 0);
	if (due == 0 || t->p.guard == 0 || due == x->done_due || strcmp(x->sub_state, "waiting") != 0)
		return;
	r = event_reset_time(core_event(t->core), &x->guard_source, CLOCK_BOOTTIME, due - t->p.guard, TIMER_GUARD_ACCURACY,
			     on_guard, x, false);
	if (r < 0)
		log_warning_errno(r, "Failed to arm the guard for timer %s: %m, ignoring", x->id);
}

static int on_guard(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	timer_update(userdata);
	return 0;
}

static void timers_changed(struct timers *t)
{
	core_changed(t->core, "NextWakeUp");
}

static struct timer *timer_find(struct timers *t, const char *path)
{
	for (struct timer *x = t->list; x; x = x->next)
		if (strcmp(x->path, path) == 0)
			return x;
	return NULL;
}

static void timer_remove(struct timers *t, struct timer *x, const char *reason)
{
	timer_drop_lease(x, reason);
	if (x->prev)
		x->prev->next = x->next;
	else
		t->list = x->next;
	if (x->next)
		x->next->prev = x->prev;
	t->n--;
	sd_bus_slot_unref(x->get_slot);
	sd_event_source_disable_unref(x->guard_source);
	if (x->phase != TIMER_IDLE)
		core_changed(t->core, "TimerHolds");
	free(x->path);
	free(x->id);
	free(x->unit);
	free(x);
}

static int dup_string(sd_bus_message *m, char **field)
{
	const char *s;
	char *copy;
	int r;

	r = sd_bus_message_read(m, "s", &s);
	if (r < 0)
		return r;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 1;
}

/*
 * One property of a{sv}, from GetAll or PropertiesChanged, with its variant
 * entered (bus_dict_walk()): 1 once read, 0 for one we do not use. A known
 * name with a value of another type fails the whole read.
 */
static int timer_read_property(void *userdata, const char *name, sd_bus_message *m, const char *type)
{
	struct timer *x = userdata;
	const char *s;
	uint64_t u;
	int b, r;

	if (strcmp(name, "Id") == 0)
		return dup_string(m, &x->id);
	if (strcmp(name, "Unit") == 0)
		return dup_string(m, &x->unit);
	if (strcmp(name, "SubState") == 0) {
		r = sd_bus_message_read(m, "s", &s);
		if (r >= 0) {
			snprintf(x->sub_state, sizeof(x->sub_state), "%s", s);
			x->sub_fresh = true;
		}
		return r < 0 ? r : 1;
	}
	if (strcmp(name, "WakeSystem") == 0) {
		r = sd_bus_message_read(m, "b", &b);
		if (r >= 0)
			x->wake_system = b;
		return r < 0 ? r : 1;
	}
	if (strcmp(name, "NextElapseUSecRealtime") == 0 || strcmp(name, "NextElapseUSecMonotonic") == 0 ||
	    strcmp(name, "LastTriggerUSec") == 0) {
		r = sd_bus_message_read(m, "t", &u);
		if (r < 0)
			return r;
		if (name[0] == 'L') {
			if (u != x->last_trigger) {
				x->fired_at = now(CLOCK_BOOTTIME);
				x->sub_fresh = false;
			}
			x->last_trigger = u;
		} else if (strstr(name, "Realtime")) {
			x->next_realtime = u;
		} else {
			/*
			 * systemd gives a WakeSystem timer's CLOCK_BOOTTIME due time
			 * in CLOCK_MONOTONIC terms as of the moment it answered
			 * (they differ by the time slept so far): converted back
			 * now, it survives the suspends to come.
			 */
			usec_t mono = now(CLOCK_MONOTONIC), boot = now(CLOCK_BOOTTIME);

			/*
			 * Monotonic read first: on a machine that never slept the
			 * two clocks are equal, and the other order would make
			 * the offset negative.
			 */
			x->next_boottime = u == 0 || u == USEC_INFINITY ? 0 : usec_add(u, usec_sub_unsigned(boot, mono));
		}
		return 1;
	}
	(void)type;
	return 0;
}

static int timer_read_properties(struct timer *x, sd_bus_message *m)
{
	return bus_dict_walk(m, timer_read_property, x);
}

static int on_get_all(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct timer *x = userdata;
	struct timers *t = x->t;
	bool was_known = x->known;
	int r;

	(void)ret_error;
	x->get_slot = sd_bus_slot_unref(x->get_slot);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		/* Unloaded before we asked: UnitRemoved is on its way or came already. */
		log_debug("Timer %s: %s", x->path, sd_bus_message_get_error(reply)->message);
		timer_remove(t, x, "systemd unloaded the timer");
		timers_changed(t);
		return 0;
	}
	r = timer_read_properties(x, reply);
	if (r < 0 || !x->id) {
		log_warning_errno(r < 0 ? r : -EBADMSG, "Failed to parse the properties of systemd timer %s: %m, ignoring it",
				  x->path);
		timer_remove(t, x, "systemd's answer could not be read");
		timers_changed(t);
		return 0;
	}
	x->known = true;
	log_debug("Timer %s: %s, next realtime %" PRIu64 ", next boottime %" PRIu64 " (now %" PRIu64 ")", x->id,
		  x->sub_state, (uint64_t)x->next_realtime, (uint64_t)x->next_boottime, (uint64_t)now(CLOCK_BOOTTIME));
	if (!was_known && x->wake_system)
		log_info("Following %s (WakeSystem=yes, triggers %s, %s)", x->id, strna(x->unit), x->sub_state);
	timer_update(x);
	timers_changed(t);
	return 0;
}

static void timer_fetch(struct timer *x)
{
	int r;

	x->get_slot = sd_bus_slot_unref(x->get_slot);
	/* "": every interface, Unit's SubState and Timer's own properties in one answer. */
	r = sd_bus_call_method_async(x->t->bus, &x->get_slot, SYSTEMD_NAME, x->path, "org.freedesktop.DBus.Properties",
				     "GetAll", on_get_all, x, "s", "");
	if (r < 0)
		log_warning_errno(r, "Failed to ask systemd about timer %s: %m, ignoring", x->path);
}

static struct timer *timer_add(struct timers *t, const char *path)
{
	struct timer *x = timer_find(t, path);

	if (x)
		return x;
	if (t->n >= TIMERS_MAX) {
		if (!t->warned_full)
			log_warning("More than %u systemd timers: not following %s or any further one", TIMERS_MAX, path);
		t->warned_full = true;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x || !(x->path = strdup(path))) {
		free(x);
		log_error_errno(-ENOMEM, "Out of memory following timer %s", path);
		return NULL;
	}
	x->t = t;
	x->next = t->list;
	if (t->list)
		t->list->prev = x;
	t->list = x;
	t->n++;
	return x;
}

static bool is_timer(const char *id)
{
	size_t n = strlen(id);

	return n > 6 && strcmp(id + n - 6, ".timer") == 0;
}

/* A unit's object path ends in its escaped name: ".timer" is "_2etimer". */
static bool is_timer_path(const char *path)
{
	size_t n = strlen(path);

	return strncmp(path, SYSTEMD_UNIT_PATH_PREFIX, strlen(SYSTEMD_UNIT_PATH_PREFIX)) == 0 && n > 8 &&
	       strcmp(path + n - 8, "_2etimer") == 0;
}

static int on_unit_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct timers *t = userdata;
	const char *id, *path;
	struct timer *x;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	if (sd_bus_message_read(m, "so", &id, &path) < 0 || !(x = timer_find(t, path)))
		return 0;
	if (x->wake_system)
		log_info("Timer %s: removed", x->id);
	timer_remove(t, x, "systemd removed the timer");
	timers_changed(t);
	return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct timers *t = userdata;
	const char *path = sd_bus_message_get_path(m), *iface, *name;
	struct timer *x = timer_find(t, path);
	int r;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	/* A timer we do not know changed: it was started (or loaded and changed): read it, it is loaded now. */
	if (!x && path && is_timer_path(path)) {
		x = timer_add(t, path);
		if (x)
			timer_fetch(x);
		return 0;
	}
	if (!x || !x->known)
		return 0;
	if (sd_bus_message_read(m, "s", &iface) < 0 ||
	    (strcmp(iface, SYSTEMD_TIMER) != 0 && strcmp(iface, SYSTEMD_UNIT) != 0))
		return 0;
	r = timer_read_properties(x, m);
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'a', "s");
	if (r < 0) {
		log_warning_errno(r, "Failed to parse a change of systemd timer %s: %m, asking again", x->id);
		timer_fetch(x);
		return 0;
	}
	/* Invalidated without a value: ask for all of it again. */
	if (sd_bus_message_read(m, "s", &name) > 0)
		timer_fetch(x);
	timer_update(x);
	timers_changed(t);
	return 0;
}

static int on_list(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct timers *t = userdata;
	const char *id, *desc, *load, *active, *sub, *following, *path, *job_type, *job_path;
	uint32_t job_id;
	struct timer *x, *next;
	int r;

	(void)ret_error;
	t->list_slot = sd_bus_slot_unref(t->list_slot);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		log_notice("systemd does not list its timers (%s): WakeSystem= timers are not held for",
			   sd_bus_message_get_error(reply)->message);
		return 0;
	}
	for (x = t->list; x; x = x->next)
		x->listed = false;
	r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(ssssssouso)", &id, &desc, &load, &active, &sub,
						  &following, &path, &job_id, &job_type, &job_path)) > 0) {
		/* An inactive timer cannot fire; and touching it might load it once more (see timers_new()). */
		if (!is_timer(id) || strcmp(active, "inactive") == 0)
			continue;
		x = timer_add(t, path);
		if (!x)
			continue;
		x->listed = true;
		timer_fetch(x);
	}
	if (r < 0)
		log_warning_errno(r, "Failed to parse systemd's unit list: %m, ignoring");
	/* What the list no longer has was unloaded while we were not looking (a reload, a restart). */
	for (x = t->list; x; x = next) {
		next = x->next;
		if (!x->listed && !x->get_slot)
			timer_remove(t, x, "systemd no longer has the timer");
	}
	timers_changed(t);
	return 0;
}

static void timers_list(struct timers *t)
{
	int r;

	t->list_slot = sd_bus_slot_unref(t->list_slot);
	r = sd_bus_call_method_async(t->bus, &t->list_slot, SYSTEMD_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER,
				     "ListUnitsByPatterns", on_list, t, "asas", 0, 1, "*.timer");
	if (r < 0)
		log_warning_errno(r, "Failed to ask systemd for its timers: %m, ignoring");
}

static int on_subscribed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct timers *t = userdata;

	(void)ret_error;
	t->subscribe_slot = sd_bus_slot_unref(t->subscribe_slot);
	if (sd_bus_message_is_method_error(reply, NULL))
		log_debug("systemd's Subscribe(): %s", sd_bus_message_get_error(reply)->message);
	return 0;
}

/* Subscribe() first, so no change between the list and the signals is missed; then list. */
static void timers_start(struct timers *t)
{
	int r;

	t->subscribe_slot = sd_bus_slot_unref(t->subscribe_slot);
	r = sd_bus_call_method_async(t->bus, &t->subscribe_slot, SYSTEMD_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER,
				     "Subscribe", on_subscribed, t, "");
	if (r < 0)
		log_warning_errno(r, "Failed to subscribe to systemd's signals: %m, ignoring");
	timers_list(t);
}

static int on_reloading(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct timers *t = userdata;
	int b;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	/* A reload may have changed any timer, WakeSystem= included: read them all once it is over. */
	if (sd_bus_message_read(m, "b", &b) >= 0 && !b)
		timers_list(t);
	return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct timers *t = userdata;
	const char *name, *old, *new;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	if (sd_bus_message_read(m, "sss", &name, &old, &new) < 0 || strcmp(name, SYSTEMD_NAME) != 0)
		return 0;
	/*
	 * Gone: a daemon-reexec. What we hold stands, each hold under its
	 * cap, until systemd is back and tells us again; then subscribe anew
	 * (a subscription ends with the connection it was made on).
	 */
	if (new && new[0]) {
		log_info("systemd is back on the bus: following its timers again");
		timers_start(t);
	}
	return 0;
}

/* The cap: a lease of ours that the registry ended on its deadline. */
static void on_lease_event(struct leases *l, enum lease_event ev, struct lease *lease, const char *reason,
			   void *userdata)
{
	struct timers *t = userdata;

	(void)l;
	(void)reason;
	if (ev != LEASE_RELEASED || t->releasing)
		return;
	for (struct timer *x = t->list; x; x = x->next) {
		if (x->lease != lease->id)
			continue;
		x->lease = 0;
		if (x->phase == TIMER_RUNNING) {
			char f_timer[300], f_unit[300];

			snprintf(f_timer, sizeof(f_timer), "AUTOSLEEP_TIMER=%s", x->id);
			snprintf(f_unit, sizeof(f_unit), "AUTOSLEEP_TIMER_UNIT=%s", strna(x->unit));
			log_struct(LOG_WARNING,
				   "Timer hold capped: the machine may sleep although the timer's unit is still running",
				   TIMER_CAPPED_MESSAGE_ID, f_timer, f_unit);
			log_warning("Timer %s: %s still running after MaxHoldSec, no longer holding the machine for it",
				    x->id, strna(x->unit));
			x->phase = TIMER_CAPPED;
		} else {
			log_notice("Timer %s: systemd did not start %s in time, no longer holding for it", x->id,
				   strna(x->unit));
			x->phase = TIMER_IDLE;
		}
		x->phase_since = now(CLOCK_REALTIME);
		core_changed(t->core, "TimerHolds");
		return;
	}
}

/*
 * IDENTIFY: a WakeSystem timer that is due, or that fired since the suspend
 * began, woke us. RESUMED: hold for every timer that is due and still
 * waiting for systemd, until systemd started it, at most ResumeGraceSec.
 */
static void on_wake(enum wake_event ev, struct wake *w, void *userdata)
{
	struct timers *t = userdata;
	usec_t nb = now(CLOCK_BOOTTIME), best = USEC_INFINITY;

	for (struct timer *x = t->list; x; x = x->next) {
		usec_t due = timer_due(x);
		bool is_due = due > 0 && due <= nb + TIMER_DUE_SLACK;

		if (!x->known || !x->wake_system)
			continue;
		/* Named even when its guard already holds for it: the guard's timer may fire first on resume. */
		if (ev == WAKE_IDENTIFY) {
			usec_t when = is_due ? due : x->fired_at >= w->since && x->fired_at > 0 ? x->fired_at : 0;

			if (when > 0 && when < best) {
				best = when;
				snprintf(w->timer, sizeof(w->timer), "%s", x->id);
			}
			continue;
		}
		/* ResumeGraceSec=0: no hold for systemd's dispatch either. */
		if (!is_due || due == x->done_due || x->phase != TIMER_IDLE || strcmp(x->sub_state, "waiting") != 0 ||
		    t->p.grace == 0)
			continue;
		x->done_due = due;
		x->trigger_seen = x->last_trigger;
		timer_enter(x, TIMER_DISPATCH, "due after the resume: waiting for systemd to start it", t->p.grace);
	}
}

int timers_new(struct core *core, sd_bus *bus, const struct timers_params *p, struct timers **ret)
{
	struct timers *t;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->core = core;
	t->bus = sd_bus_ref(bus);
	t->p = *p;
	/*
	 * No UnitNew: systemd loads a unit when anyone touches its object, so
	 * our GetAll would load a dead timer it just unloaded, tell us UnitNew,
	 * unload it again, and round we would go. A timer matters once it is
	 * started, and starting it changes its properties: that is when an
	 * unknown one is read (on_properties_changed).
	 */
	r = sd_bus_match_signal_async(bus, &t->removed_slot, SYSTEMD_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER, "UnitRemoved",
				      on_unit_removed, NULL, t);
	if (r >= 0)
		r = sd_bus_match_signal_async(bus, &t->reloading_slot, SYSTEMD_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER,
					      "Reloading", on_reloading, NULL, t);
	if (r >= 0)
		r = sd_bus_add_match_async(bus, &t->props_slot,
					   "type='signal',sender='" SYSTEMD_NAME "',"
					   "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
					   "path_namespace='/org/freedesktop/systemd1/unit'",
					   on_properties_changed, NULL, t);
	if (r >= 0)
		r = sd_bus_add_match_async(bus, &t->owner_slot,
					   "type='signal',sender='org.freedesktop.DBus',"
					   "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
					   "arg0='" SYSTEMD_NAME "'",
					   on_owner_changed, NULL, t);
	if (r >= 0)
		r = leases_observe(core_leases(core), on_lease_event, t);
	if (r >= 0)
		r = wake_observe(core_wake(core), on_wake, t);
	if (r < 0) {
		timers_free(t);
		return r;
	}
	timers_start(t);
	log_info("Following systemd's WakeSystem= timers: guard %llu ms before each, holds capped at %llu s",
		 (unsigned long long)(p->guard / USEC_PER_MSEC), (unsigned long long)(p->max_hold / USEC_PER_SEC));
	*ret = t;
	return 0;
}

struct timers *timers_free(struct timers *t)
{
	if (!t)
		return NULL;
	/* The leases stay: the registry frees them without telling anyone, as the daemon goes. */
	for (struct timer *x = t->list; x; x = x->next)
		x->lease = 0;
	while (t->list)
		timer_remove(t, t->list, NULL);
	wake_unobserve(core_wake(t->core), on_wake, t);
	leases_unobserve(core_leases(t->core), on_lease_event, t);
	sd_bus_slot_unref(t->removed_slot);
	sd_bus_slot_unref(t->reloading_slot);
	sd_bus_slot_unref(t->props_slot);
	sd_bus_slot_unref(t->owner_slot);
	sd_bus_slot_unref(t->list_slot);
	sd_bus_slot_unref(t->subscribe_slot);
	sd_bus_unref(t->bus);
	free(t);
	return NULL;
}

bool timers_next(struct timers *t, const char **ret_id, usec_t *ret_realtime)
{
	const struct timer *best = NULL;
	usec_t best_due = 0;

	if (!t)
		return false;
	for (const struct timer *x = t->list; x; x = x->next) {
		usec_t due = x->known && x->wake_system ? timer_due(x) : 0;

		if (due > 0 && (!best || due < best_due)) {
			best = x;
			best_due = due;
		}
	}
	if (!best)
		return false;
	*ret_id = best->id;
	*ret_realtime = usec_add(now(CLOCK_REALTIME), usec_sub_unsigned(best_due, now(CLOCK_BOOTTIME)));
	return true;
}

bool timers_get(struct timers *t, unsigned i, struct timer_info *ret)
{
	if (!t)
		return false;
	for (const struct timer *x = t->list; x; x = x->next) {
		if (x->phase == TIMER_IDLE || i-- > 0)
			continue;
		*ret = (struct timer_info){ .id = x->id, .unit = x->unit ? x->unit : "", .phase = x->phase,
					    .since = x->phase_since };
		return true;
	}
	return false;
}
