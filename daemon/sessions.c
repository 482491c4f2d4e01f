/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-dict.h"
#include "bus-names.h"
#include "bus-signal.h"
#include "core.h"
#include "event-util.h"
#include "log.h"
#include "macro.h"
#include "sessions.h"


struct session {
	struct sessions *s;
	char *path;
	char *id;
	char *user;
	char class[16];
	char type[16];
	uint32_t uid;
	bool known; /* GetAll answered */
	bool active, remote, idle, locked;
	sd_bus_slot *get_slot;
	struct session *prev, *next;
};

struct sessions {
	struct core *core;
	sd_bus *bus;
	bool honor_idle_hint;
	usec_t lock_timeout;
	struct session *list;
	unsigned n;
	bool awake; /* what the core was last told */
	sd_bus_slot *new_slot, *removed_slot, *props_slot, *owner_slot, *list_slot, *sleep_slot, *lock_slot;
	sd_event_source *lock_timer;
	bool locking;
	/* logind left the bus: keep the last decision until it is back, or until gone_timer fires. */
	bool logind_gone;
	sd_event_source *gone_timer;
};

/*
 * How long a hold stays after logind left the bus without coming back: a
 * restart by systemd takes a fraction of this, and a logind that stays away
 * must not keep the machine awake for ever.
 */
#define LOGIND_GONE_HOLD (10 * USEC_PER_SEC)

static bool type_graphical(const char *type)
{
	return strcmp(type, "x11") == 0 || strcmp(type, "wayland") == 0 || strcmp(type, "mir") == 0;
}

bool session_counts(const char *class, const char *type, bool remote)
{
	if (remote || !type_graphical(type))
		return false;
	return strcmp(class, "user") == 0 || strcmp(class, "greeter") == 0;
}

static bool session_keeps_awake(const struct session *x)
{
	return x->known && x->active && !x->idle && session_counts(x->class, x->type, x->remote);
}

/* The lock step waits for these: what LockSessions() locks and a user could see unlocked. */
static bool session_must_lock(const struct session *x)
{
	return x->known && !x->remote && type_graphical(x->type) && strcmp(x->class, "user") == 0;
}

/*
 * Whether a decision now could be wrong: logind has not listed its sessions
 * yet, one of them is not described yet, or logind is away. A session
 * nobody described may be the user at the screen, and one that does not
 * count may answer before one that does (after a logind restart, every
 * session is asked again): deciding then would drop the hold under a user
 * who is reading.
 */
static bool sessions_describing(const struct sessions *s)
{
	if (s->list_slot)
		return true;
	for (const struct session *x = s->list; x; x = x->next)
		if (!x->known)
			return true;
	return false;
}

static void sessions_update(struct sessions *s)
{
	char why[256] = "";
	unsigned n = 0;

	if (!s->honor_idle_hint)
		return;
	/* logind is away, most likely restarting: what we decided stands until it is back. */
	if (s->logind_gone)
		return;
	/* Until logind described every session, hold as if one counted; it is one round trip. */
	if (sessions_describing(s) && !core_away(s->core)) {
		if (!s->awake)
			core_set_session_hold(s->core, true, "logind: describing its sessions");
		s->awake = true;
		return;
	}
	for (struct session *x = s->list; x; x = x->next) {
		size_t len = strlen(why);

		/* A closed lid or the sleep key: whatever the desktop says, nobody looks at the screen. */
		if (!session_keeps_awake(x) || core_away(s->core))
			continue;
		snprintf(why + len, sizeof(why) - len, "%ssession %s of %s (%s) is active and not idle", n ? ", " : "",
			 x->id, x->user, x->type);
		n++;
	}
	s->awake = n > 0;
	core_set_session_hold(s->core, n > 0, why);
}

void sessions_refresh(struct sessions *s)
{
	if (s)
		sessions_update(s);
}

static void lock_finish(struct sessions *s, enum lock_step result)
{
	if (!s->locking)
		return;
	s->locking = false;
	s->lock_slot = sd_bus_slot_unref(s->lock_slot);
	(void)sd_event_source_set_enabled(s->lock_timer, SD_EVENT_OFF);
	core_lock_done(s->core, result);
}

/* While locking: done once every session that must lock did. */
static void lock_check(struct sessions *s)
{
	/* A session logind has not described yet may be one that must lock. */
	if (!s->locking || s->lock_slot || s->list_slot)
		return;
	for (struct session *x = s->list; x; x = x->next)
		if (x->get_slot || (session_must_lock(x) && !x->locked))
			return;
	log_info("Every graphical session is locked");
	lock_finish(s, LOCK_STEP_LOCKED);
}

static struct session *session_find(struct sessions *s, const char *path)
{
	for (struct session *x = s->list; x; x = x->next)
		if (strcmp(x->path, path) == 0)
			return x;
	return NULL;
}

static void session_free(struct session *x)
{
	if (!x)
		return;
	sd_bus_slot_unref(x->get_slot);
	free(x->path);
	free(x->id);
	free(x->user);
	free(x);
}

static void session_remove(struct sessions *s, struct session *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		s->list = x->next;
	if (x->next)
		x->next->prev = x->prev;
	s->n--;
	session_free(x);
}

struct session_read {
	struct session *x;
	bool *changed;
};

/*
 * One property of a{sv}, from GetAll or PropertiesChanged, with its variant
 * entered (bus_dict_walk()): 1 once read, 0 for one we do not use. A known
 * name with a value of another type fails the whole read.
 */
static int session_read_property(void *userdata, const char *name, sd_bus_message *m, const char *type)
{
	struct session_read *ctx = userdata;
	struct session *x = ctx->x;
	const char *str;
	int b, r;

	bool *flag = strcmp(name, "Active") == 0     ? &x->active
		     : strcmp(name, "IdleHint") == 0   ? &x->idle
		     : strcmp(name, "LockedHint") == 0 ? &x->locked
		     : strcmp(name, "Remote") == 0     ? &x->remote
						       : NULL;

	if (flag) {
		r = sd_bus_message_read(m, "b", &b);
		if (r < 0)
			return r;
		if (*flag != !!b)
			*ctx->changed = true;
		*flag = b;
		return 1;
	}
	if (strcmp(name, "Class") == 0 || strcmp(name, "Type") == 0) {
		char *field = name[0] == 'C' ? x->class : x->type;

		r = sd_bus_message_read(m, "s", &str);
		if (r < 0)
			return r;
		snprintf(field, sizeof(x->class), "%s", str);
		*ctx->changed = true;
		return 1;
	}
	if (strcmp(name, "Id") == 0 || strcmp(name, "Name") == 0) {
		char **field = name[0] == 'I' ? &x->id : &x->user;
		char *copy;

		r = sd_bus_message_read(m, "s", &str);
		if (r < 0)
			return r;
		copy = strdup(str);
		if (!copy)
			return -ENOMEM;
		free(*field);
		*field = copy;
		return 1;
	}
	if (strcmp(name, "User") == 0) {
		const char *path;

		r = sd_bus_message_read(m, "(uo)", &x->uid, &path);
		return r < 0 ? r : 1;
	}
	(void)type;
	return 0;
}

static int session_read_properties(struct session *x, sd_bus_message *m, bool *ret_changed)
{
	return bus_dict_walk(m, session_read_property, &(struct session_read){ x, ret_changed });
}

static void session_log(const struct session *x, const char *what)
{
	log_info("Session %s of %s (%s, %s%s): %s, %s, %s%s", x->id, strna(x->user), x->class, x->type,
		 x->remote ? ", remote" : "", what, x->active ? "active" : "inactive", x->idle ? "idle" : "not idle",
		 x->locked ? ", locked" : "");
}

static int on_get_all(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct session *x = userdata;
	struct sessions *s = x->s;
	bool changed = false;
	int r;

	(void)ret_error;
	x->get_slot = sd_bus_slot_unref(x->get_slot);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		/* Gone before we asked: SessionRemoved is on its way or came already. */
		log_debug("Session %s: %s", x->path, sd_bus_message_get_error(reply)->message);
		session_remove(s, x);
		sessions_update(s);
		lock_check(s);
		return 0;
	}
	r = session_read_properties(x, reply, &changed);
	if (r < 0) {
		log_warning_errno(r, "Failed to parse the properties of logind session %s: %m, ignoring it", x->path);
		session_remove(s, x);
		sessions_update(s);
		lock_check(s);
		return 0;
	}
	x->known = true;
	session_log(x, "seen");
	/* A login is the user at the machine: the next suspend locks first. */
	if (session_keeps_awake(x))
		core_user_active(s->core);
	core_changed(s->core, "Sessions");
	sessions_update(s);
	lock_check(s);
	return 0;
}

static void session_fetch(struct session *x)
{
	int r;

	x->get_slot = sd_bus_slot_unref(x->get_slot);
	r = sd_bus_call_method_async(x->s->bus, &x->get_slot, LOGIND_NAME, x->path, "org.freedesktop.DBus.Properties",
				     "GetAll", on_get_all, x, "s", LOGIND_SESSION);
	if (r < 0)
		log_warning_errno(r, "Failed to ask logind about session %s: %m, ignoring", x->path);
}

static void session_add(struct sessions *s, const char *path)
{
	struct session *x;

	if (session_find(s, path))
		return;
	x = calloc(1, sizeof(*x));
	if (!x || !(x->path = strdup(path)) || !(x->id = strdup(path + strlen(LOGIND_SESSION_PATH_PREFIX)))) {
		session_free(x);
		log_error_errno(-ENOMEM, "Out of memory tracking session %s", path);
		return;
	}
	x->s = s;
	x->next = s->list;
	if (s->list)
		s->list->prev = x;
	s->list = x;
	s->n++;
	session_fetch(x);
}

static int on_session_new(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	const char *id, *path;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	if (sd_bus_message_read(m, "so", &id, &path) < 0 ||
	    strncmp(path, LOGIND_SESSION_PATH_PREFIX, strlen(LOGIND_SESSION_PATH_PREFIX)) != 0)
		return 0;
	session_add(userdata, path);
	return 0;
}

static int on_session_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct sessions *s = userdata;
	struct session *x;
	const char *id, *path;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	if (sd_bus_message_read(m, "so", &id, &path) < 0)
		return 0;
	x = session_find(s, path);
	if (!x)
		return 0;
	if (x->known)
		session_log(x, "removed");
	session_remove(s, x);
	core_changed(s->core, "Sessions");
	sessions_update(s);
	lock_check(s);
	return 0;
}

static int on_session_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct sessions *s = userdata;
	struct session *x = session_find(s, sd_bus_message_get_path(m));
	const char *iface, *name;
	bool changed = false, was_awake;
	int r;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	if (!x || !x->known)
		return 0;
	if (sd_bus_message_read(m, "s", &iface) < 0 || strcmp(iface, LOGIND_SESSION) != 0)
		return 0;
	was_awake = session_keeps_awake(x);
	r = session_read_properties(x, m, &changed);
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'a', "s");
	if (r < 0) {
		log_warning_errno(r, "Failed to parse a change of logind session %s: %m, asking again", x->path);
		session_fetch(x);
		return 0;
	}
	/* Invalidated without a value: ask for all of it again. */
	while (sd_bus_message_read(m, "s", &name) > 0) {
		session_fetch(x);
		break;
	}
	if (!changed)
		return 0;
	session_log(x, "changed");
	core_changed(s->core, "Sessions");
	/* A session that turns active and not idle is the user coming back: the next suspend locks first. */
	if (!was_awake && session_keeps_awake(x))
		core_user_active(s->core);
	sessions_update(s);
	lock_check(s);
	return 0;
}

static int on_list(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct sessions *s = userdata;
	const char *id, *user, *seat, *path;
	uint32_t uid;
	int r;

	(void)ret_error;
	s->list_slot = sd_bus_slot_unref(s->list_slot);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		log_info("logind does not list sessions (%s): no session keeps us awake",
			 sd_bus_message_get_error(reply)->message);
		sessions_update(s);
		return 0;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(susso)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(susso)", &id, &uid, &user, &seat, &path)) > 0)
		session_add(s, path);
	if (r < 0)
		log_warning_errno(r, "Failed to parse logind's session list: %m, ignoring");
	/* Decide now if there is nothing left to describe (no session at all), else hold until there is. */
	sessions_update(s);
	lock_check(s);
	return 0;
}

static void sessions_relist(struct sessions *s)
{
	int r;

	while (s->list)
		session_remove(s, s->list);
	s->list_slot = sd_bus_slot_unref(s->list_slot);
	r = sd_bus_call_method_async(s->bus, &s->list_slot, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER, "ListSessions",
				     on_list, s, "");
	if (r < 0)
		log_warning_errno(r, "Failed to ask logind for its sessions: %m, ignoring");
	sessions_update(s);
}

static int on_logind_gone(sd_event_source *es, uint64_t usec, void *userdata)
{
	struct sessions *s = userdata;

	(void)es;
	(void)usec;
	if (!s->logind_gone)
		return 0;
	log_warning("logind left the bus and did not come back: no session keeps us awake");
	s->logind_gone = false;
	while (s->list)
		session_remove(s, s->list);
	core_changed(s->core, "Sessions");
	sessions_update(s);
	lock_check(s);
	return 0;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct sessions *s = userdata;
	const char *name, *old_owner, *new_owner;
	int r;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
		return 0;
	if (new_owner[0]) {
		/* A restarted logind may know other sessions: start over. */
		s->logind_gone = false;
		(void)sd_event_source_set_enabled(s->gone_timer, SD_EVENT_OFF);
		sessions_relist(s);
		core_changed(s->core, "Sessions");
		lock_check(s);
		return 0;
	}
	/* Gone, most likely restarting: keep what we decided until it is back, for a while. */
	log_info("logind left the bus: the session hold stays %s for up to %us", s->awake ? "taken" : "off",
		 (unsigned)(LOGIND_GONE_HOLD / USEC_PER_SEC));
	s->logind_gone = true;
	s->list_slot = sd_bus_slot_unref(s->list_slot);
	for (struct session *x = s->list; x; x = x->next)
		x->get_slot = sd_bus_slot_unref(x->get_slot);
	r = event_reset_time(sd_bus_get_event(s->bus), &s->gone_timer, CLOCK_MONOTONIC, LOGIND_GONE_HOLD, 0,
			     on_logind_gone, s, true);
	if (r < 0)
		on_logind_gone(NULL, 0, s);
	lock_check(s);
	return 0;
}

static int on_prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct sessions *s = userdata;
	int start;

	if (!bus_signal_trusted(m))
		return 0;
	(void)ret_error;
	if (sd_bus_message_read(m, "b", &start) < 0)
		return 0;
	/* logind sends this only for its own sleep; our state writes never go through it. */
	core_external_sleep(s->core, start);
	return 0;
}

static int on_lock_timeout(sd_event_source *es, uint64_t usec, void *userdata)
{
	struct sessions *s = userdata;
	char timeout[FORMAT_TIMESPAN_MAX];

	(void)es;
	(void)usec;
	format_timespan(timeout, sizeof(timeout), s->lock_timeout);
	for (struct session *x = s->list; x; x = x->next)
		if (session_must_lock(x) && !x->locked)
			log_warning("Session %s of %s (%s) did not lock within LockTimeoutSec=%s, suspending anyway", x->id,
				    strna(x->user), x->type, timeout);
	lock_finish(s, LOCK_STEP_TIMED_OUT);
	return 0;
}

static int on_lock_sessions(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct sessions *s = userdata;

	(void)ret_error;
	s->lock_slot = sd_bus_slot_unref(s->lock_slot);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		log_warning("logind's LockSessions() failed: %s, suspending without locking",
			    sd_bus_message_get_error(reply)->message);
		lock_finish(s, LOCK_STEP_FAILED);
		return 0;
	}
	lock_check(s);
	return 0;
}

void sessions_lock(struct sessions *s)
{
	int r;

	if (s->locking)
		return;
	s->locking = true;
	log_info("Locking sessions before the first suspend since user activity");
	r = sd_bus_call_method_async(s->bus, &s->lock_slot, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER, "LockSessions",
				     on_lock_sessions, s, "");
	if (r < 0) {
		log_warning_errno(r, "Failed to call logind's LockSessions(): %m, suspending without locking");
		lock_finish(s, LOCK_STEP_FAILED);
		return;
	}
	/* CLOCK_MONOTONIC: the step is about awake time, and we are not suspending during it. */
	r = event_reset_time(sd_bus_get_event(s->bus), &s->lock_timer, CLOCK_MONOTONIC, s->lock_timeout, 0,
			     on_lock_timeout, s, true);
	if (r < 0) {
		log_warning_errno(r, "Failed to arm the lock timeout: %m, suspending without waiting for locks");
		lock_finish(s, LOCK_STEP_FAILED);
	}
}

bool sessions_get(struct sessions *s, unsigned i, struct session_info *ret)
{
	if (!s)
		return false;
	for (struct session *x = s->list; x; x = x->next) {
		if (!x->known || i-- > 0)
			continue;
		*ret = (struct session_info){
			.id = x->id,
			.user = strna(x->user),
			.class = x->class,
			.type = x->type,
			.uid = x->uid,
			.active = x->active,
			.remote = x->remote,
			.idle = x->idle,
			.locked = x->locked,
			.counts = session_counts(x->class, x->type, x->remote),
		};
		return true;
	}
	return false;
}

int sessions_new(struct core *core, sd_bus *bus, bool honor_idle_hint, usec_t lock_timeout, struct sessions **ret)
{
	struct sessions *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->core = core;
	s->bus = sd_bus_ref(bus);
	s->honor_idle_hint = honor_idle_hint;
	s->lock_timeout = lock_timeout;
	r = sd_bus_match_signal_async(bus, &s->new_slot, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER, "SessionNew",
				      on_session_new, NULL, s);
	if (r >= 0)
		r = sd_bus_match_signal_async(bus, &s->removed_slot, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER,
					      "SessionRemoved", on_session_removed, NULL, s);
	if (r >= 0)
		r = sd_bus_match_signal_async(bus, &s->sleep_slot, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER,
					      "PrepareForSleep", on_prepare_for_sleep, NULL, s);
	if (r >= 0)
		/* One match for every session, present and future. */
		r = sd_bus_add_match_async(bus, &s->props_slot,
					   "type='signal',sender='" LOGIND_NAME "',interface='org.freedesktop.DBus.Properties',"
					   "member='PropertiesChanged',path_namespace='/org/freedesktop/login1/session'",
					   on_session_changed, NULL, s);
	if (r >= 0)
		r = sd_bus_add_match_async(bus, &s->owner_slot,
					   "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
					   "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
					   "arg0='" LOGIND_NAME "'",
					   on_name_owner_changed, NULL, s);
	if (r < 0) {
		sessions_free(s);
		return r;
	}
	sessions_relist(s);
	*ret = s;
	return 0;
}

struct sessions *sessions_free(struct sessions *s)
{
	if (!s)
		return NULL;
	while (s->list)
		session_remove(s, s->list);
	sd_bus_slot_unref(s->new_slot);
	sd_bus_slot_unref(s->removed_slot);
	sd_bus_slot_unref(s->props_slot);
	sd_bus_slot_unref(s->owner_slot);
	sd_bus_slot_unref(s->list_slot);
	sd_bus_slot_unref(s->sleep_slot);
	sd_bus_slot_unref(s->lock_slot);
	sd_event_source_disable_unref(s->lock_timer);
	sd_event_source_disable_unref(s->gone_timer);
	sd_bus_unref(s->bus);
	free(s);
	return NULL;
}
