/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bus-names.h"
#include "fake-login1.h"


static int method_list_sessions(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct fake_login1 *f = userdata;
	sd_bus_message *reply = NULL;
	int r;

	(void)error;
	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(susso)");
	for (unsigned i = 0; r >= 0 && i < f->n; i++)
		if (!f->sessions[i].gone)
			r = sd_bus_message_append(reply, "(susso)", f->sessions[i].id, f->sessions[i].uid, f->sessions[i].name,
					  "", f->sessions[i].path);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static int method_list_inhibitors(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct fake_login1 *f = userdata;
	sd_bus_message *reply = NULL;
	int r;

	(void)error;
	(void)fake_login1_count_inhibitors(f, "");
	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssssuu)");
	for (unsigned i = 0; r >= 0 && i < f->n_inhibitors; i++)
		r = sd_bus_message_append(reply, "(ssssuu)", f->inhibitors[i].what, f->inhibitors[i].who,
					  f->inhibitors[i].why,
					  f->inhibitors[i].mode, f->inhibitors[i].uid, f->inhibitors[i].pid);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static void inhibitors_changed(struct fake_login1 *f)
{
	(void)sd_bus_emit_properties_changed(f->bus, LOGIND_PATH, LOGIND_MANAGER, "BlockInhibited", NULL);
}

static int method_inhibit(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct fake_login1 *f = userdata;
	sd_bus_creds *creds = NULL;
	const char *what, *who, *why, *mode;
	struct fake_inhibitor *x;
	pid_t pid = 0;
	int p[2], r;

	r = sd_bus_message_read(m, "ssss", &what, &who, &why, &mode);
	if (r < 0)
		return r;
	if (f->n_inhibitors >= FAKE_LOGIN1_INHIBITORS_MAX)
		return sd_bus_error_set(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "too many inhibitors");
	/* Its pid, as logind reports it: the daemon tells its own inhibitors from others' by it. */
	if (sd_bus_query_sender_creds(m, SD_BUS_CREDS_PID, &creds) >= 0)
		(void)sd_bus_creds_get_pid(creds, &pid);
	sd_bus_creds_unref(creds);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	x = &f->inhibitors[f->n_inhibitors++];
	snprintf(x->what, sizeof(x->what), "%s", what);
	snprintf(x->who, sizeof(x->who), "%s", who);
	snprintf(x->why, sizeof(x->why), "%s", why);
	snprintf(x->mode, sizeof(x->mode), "%s", mode);
	x->uid = 0;
	x->pid = (uint32_t)pid;
	x->fd = p[0];
	r = sd_bus_reply_method_return(m, "h", p[1]);
	close(p[1]);
	inhibitors_changed(f);
	return r;
}

static int property_get_block_inhibited(sd_bus *bus, const char *path, const char *interface, const char *property,
					sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct fake_login1 *f = userdata;
	char what[256] = "";

	(void)bus;
	(void)path;
	(void)interface;
	(void)property;
	(void)error;
	for (unsigned i = 0; i < f->n_inhibitors; i++)
		if (strcmp(f->inhibitors[i].mode, "block") == 0)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s", what[0] ? ":" : "",
				 f->inhibitors[i].what);
	return sd_bus_message_append(reply, "s", what);
}

void fake_login1_add_inhibitor(struct fake_login1 *f, const char *what, const char *who, uint32_t pid)
{
	fake_login1_add_inhibitor_why(f, what, who, "test", pid);
}

void fake_login1_add_inhibitor_why(struct fake_login1 *f, const char *what, const char *who, const char *why,
				   uint32_t pid)
{
	fake_login1_add_inhibitor_uid(f, what, who, why, 0, pid);
}

void fake_login1_remove_inhibitor(struct fake_login1 *f, const char *who)
{
	for (unsigned i = 0; i < f->n_inhibitors;) {
		if (f->inhibitors[i].fd < 0 && strcmp(f->inhibitors[i].who, who) == 0) {
			f->inhibitors[i] = f->inhibitors[--f->n_inhibitors];
			continue;
		}
		i++;
	}
	inhibitors_changed(f);
}

void fake_login1_add_inhibitor_uid(struct fake_login1 *f, const char *what, const char *who, const char *why,
				   uint32_t uid, uint32_t pid)
{
	struct fake_inhibitor *x;

	if (f->n_inhibitors >= FAKE_LOGIN1_INHIBITORS_MAX)
		return;
	x = &f->inhibitors[f->n_inhibitors++];
	snprintf(x->what, sizeof(x->what), "%s", what);
	snprintf(x->who, sizeof(x->who), "%s", who);
	snprintf(x->why, sizeof(x->why), "%s", why);
	snprintf(x->mode, sizeof(x->mode), "block");
	x->uid = uid;
	x->pid = pid;
	x->fd = -1;
	inhibitors_changed(f);
}

unsigned fake_login1_count_inhibitors(struct fake_login1 *f, const char *what)
{
	unsigned n = 0;

	for (unsigned i = 0; i < f->n_inhibitors;) {
		struct pollfd p = { .fd = f->inhibitors[i].fd };

		if (p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLHUP)) {
			close(p.fd);
			f->inhibitors[i] = f->inhibitors[--f->n_inhibitors];
			continue;
		}
		if (strcmp(f->inhibitors[i].what, what) == 0)
			n++;
		i++;
	}
	return n;
}

static int method_lock_sessions(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct fake_login1 *f = userdata;

	(void)error;
	f->lock_calls++;
	if (f->on_lock)
		f->on_lock(f, f->userdata);
	/* logind signals Lock on every session; a locker there answers with SetLockedHint(true). */
	for (unsigned i = 0; i < f->n; i++) {
		struct fake_session *s = &f->sessions[i];

		if (s->gone)
			continue;
		s->lock_signals++;
		(void)sd_bus_emit_signal(f->bus, s->path, LOGIND_SESSION, "Lock", "");
		if (s->locker)
			fake_session_set(s, "LockedHint", true);
	}
	return sd_bus_reply_method_return(m, "");
}

static int property_get_user(sd_bus *bus, const char *path, const char *interface, const char *property,
			     sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct fake_session *s = userdata;
	char upath[64];

	(void)bus;
	(void)path;
	(void)interface;
	(void)property;
	(void)error;
	snprintf(upath, sizeof(upath), "/org/freedesktop/login1/user/_%u", s->uid);
	return sd_bus_message_append(reply, "(uo)", s->uid, upath);
}

/* The strings live in arrays, which sd-bus's offset getters cannot read (they expect a char *). */
static int property_get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
			       sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct fake_session *s = userdata;
	const char *v = strcmp(property, "Id") == 0     ? s->id
			: strcmp(property, "Name") == 0  ? s->name
			: strcmp(property, "Class") == 0 ? s->class
							 : s->type;

	(void)bus;
	(void)path;
	(void)interface;
	(void)error;
	return sd_bus_message_append(reply, "s", v);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("ListSessions", "", "a(susso)", method_list_sessions, 0),
	SD_BUS_METHOD("ListInhibitors", "", "a(ssssuu)", method_list_inhibitors, 0),
	SD_BUS_METHOD("LockSessions", "", "", method_lock_sessions, 0),
	SD_BUS_METHOD("Inhibit", "ssss", "h", method_inhibit, 0),
	SD_BUS_PROPERTY("BlockInhibited", "s", property_get_block_inhibited, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Docked", "b", NULL, offsetof(struct fake_login1, docked), 0),
	SD_BUS_SIGNAL("SessionNew", "so", 0),
	SD_BUS_SIGNAL("SessionRemoved", "so", 0),
	SD_BUS_SIGNAL("PrepareForSleep", "b", 0),
	SD_BUS_VTABLE_END,
};

static const sd_bus_vtable session_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Id", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Name", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("User", "(uo)", property_get_user, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	/* Constant in logind 252, but the interleaving test changes them too: the daemon must cope. */
	SD_BUS_PROPERTY("Class", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Type", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Remote", "b", NULL, offsetof(struct fake_session, remote), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Active", "b", NULL, offsetof(struct fake_session, active), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("IdleHint", "b", NULL, offsetof(struct fake_session, idle), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("LockedHint", "b", NULL, offsetof(struct fake_session, locked),
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_SIGNAL("Lock", "", 0),
	SD_BUS_VTABLE_END,
};

int fake_login1_start(struct fake_login1 *f, const char *address)
{
	int r;

	*f = (struct fake_login1){};
	r = sd_bus_new(&f->bus);
	if (r < 0)
		return r;
	(void)sd_bus_set_address(f->bus, address);
	(void)sd_bus_set_bus_client(f->bus, true);
	r = sd_bus_start(f->bus);
	if (r >= 0)
		r = sd_bus_add_object_vtable(f->bus, NULL, LOGIND_PATH, LOGIND_MANAGER, manager_vtable, f);
	if (r >= 0)
		r = sd_bus_request_name(f->bus, LOGIND_NAME, 0);
	return r < 0 ? r : 0;
}

void fake_login1_stop(struct fake_login1 *f)
{
	while (f->n_held > 0)
		fake_login1_answer(f, 0, FAKE_ANSWER_NEVER);
	f->filter_slot = sd_bus_slot_unref(f->filter_slot);
	for (unsigned i = 0; i < f->n_inhibitors; i++)
		if (f->inhibitors[i].fd >= 0)
			close(f->inhibitors[i].fd);
	f->n_inhibitors = 0;
	for (unsigned i = 0; i < f->n; i++)
		sd_bus_slot_unref(f->sessions[i].slot);
	f->n = 0;
	f->bus = sd_bus_flush_close_unref(f->bus);
}

void fake_login1_pump(struct fake_login1 *f, int ms)
{
	struct timespec t0, t;
	long elapsed;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		while (sd_bus_process(f->bus, NULL) > 0)
			;
		clock_gettime(CLOCK_MONOTONIC, &t);
		elapsed = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (elapsed >= ms)
			break;
		(void)sd_bus_wait(f->bus, (uint64_t)(ms - elapsed) * 1000);
	}
	(void)sd_bus_flush(f->bus);
}

struct fake_session *fake_login1_add(struct fake_login1 *f, const char *id, const char *class, const char *type,
				     bool remote, bool active, bool idle, bool announce)
{
	struct fake_session *s;

	if (f->n >= FAKE_LOGIN1_SESSIONS_MAX)
		return NULL;
	s = &f->sessions[f->n];
	*s = (struct fake_session){ .f = f, .uid = 1000, .remote = remote, .active = active, .idle = idle };
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->path, sizeof(s->path), "/org/freedesktop/login1/session/%s", id);
	snprintf(s->name, sizeof(s->name), "user%s", id);
	snprintf(s->class, sizeof(s->class), "%s", class);
	snprintf(s->type, sizeof(s->type), "%s", type);
	if (sd_bus_add_object_vtable(f->bus, &s->slot, s->path, LOGIND_SESSION, session_vtable, s) < 0)
		return NULL;
	f->n++;
	if (announce)
		(void)sd_bus_emit_signal(f->bus, LOGIND_PATH, LOGIND_MANAGER, "SessionNew", "so", s->id, s->path);
	return s;
}

void fake_login1_remove(struct fake_login1 *f, struct fake_session *s)
{
	char id[16], path[64];
	unsigned i = (unsigned)(s - f->sessions);

	snprintf(id, sizeof(id), "%s", s->id);
	snprintf(path, sizeof(path), "%s", s->path);
	s->slot = sd_bus_slot_unref(s->slot);
	/* Keep the others where they are: their vtables point at them. */
	if (i + 1 == f->n)
		f->n--;
	else
		s->gone = true;
	(void)sd_bus_emit_signal(f->bus, LOGIND_PATH, LOGIND_MANAGER, "SessionRemoved", "so", id, path);
}

void fake_session_set(struct fake_session *s, const char *property, bool value)
{
	int *field = strcmp(property, "Active") == 0	 ? &s->active
		     : strcmp(property, "IdleHint") == 0 ? &s->idle
		     : strcmp(property, "Remote") == 0	 ? &s->remote
							 : &s->locked;

	*field = value;
	(void)sd_bus_emit_properties_changed(s->f->bus, s->path, LOGIND_SESSION, property, NULL);
}

void fake_login1_prepare_for_sleep(struct fake_login1 *f, bool start)
{
	(void)sd_bus_emit_signal(f->bus, LOGIND_PATH, LOGIND_MANAGER, "PrepareForSleep", "b", (int)start);
}

void fake_session_set_string(struct fake_session *s, const char *property, const char *value)
{
	char *field = strcmp(property, "Class") == 0 ? s->class : s->type;

	snprintf(field, sizeof(s->type), "%s", value);
	(void)sd_bus_emit_properties_changed(s->f->bus, s->path, LOGIND_SESSION, property, NULL);
}

static struct fake_session *session_by_path(struct fake_login1 *f, const char *path)
{
	for (unsigned i = 0; path && i < f->n; i++)
		if (!f->sessions[i].gone && strcmp(f->sessions[i].path, path) == 0)
			return &f->sessions[i];
	return NULL;
}

/* What sd-bus's own GetAll would send for a session, built by hand for a call answered late. */
static int reply_session_properties(sd_bus_message *m, const struct fake_session *s)
{
	sd_bus_message *reply = NULL;
	char upath[64];
	int r;

	snprintf(upath, sizeof(upath), "/org/freedesktop/login1/user/_%u", s->uid);
	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_append(reply, "a{sv}", 9, "Id", "s", s->id, "Name", "s", s->name, "User", "(uo)",
					  s->uid, upath, "Class", "s", s->class, "Type", "s", s->type, "Remote", "b",
					  s->remote, "Active", "b", s->active, "IdleHint", "b", s->idle, "LockedHint",
					  "b", s->locked);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static int answer_now(struct fake_login1 *f, sd_bus_message *m)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *member = sd_bus_message_get_member(m), *iface, *prop;
	int r;

	if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "GetAll")) {
		struct fake_session *s = session_by_path(f, sd_bus_message_get_path(m));

		if (!s)
			return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_OBJECT, "No such session");
		return reply_session_properties(m, s);
	}
	if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get")) {
		if (sd_bus_message_read(m, "ss", &iface, &prop) < 0 || strcmp(prop, "Docked") != 0)
			return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Not in the fake");
		return sd_bus_reply_method_return(m, "v", "b", f->docked);
	}
	r = strcmp(member, "ListSessions") == 0	    ? method_list_sessions(m, f, &e)
	    : strcmp(member, "ListInhibitors") == 0 ? method_list_inhibitors(m, f, &e)
	    : strcmp(member, "LockSessions") == 0   ? method_lock_sessions(m, f, &e)
	    : strcmp(member, "Inhibit") == 0	    ? method_inhibit(m, f, &e)
						    : -EOPNOTSUPP;
	if (r < 0 || sd_bus_error_is_set(&e))
		r = sd_bus_error_is_set(&e) ? sd_bus_reply_method_error(m, &e)
					    : sd_bus_reply_method_errorf(m, SD_BUS_ERROR_FAILED, "fake: %s", strerror(-r));
	sd_bus_error_free(&e);
	return r;
}

static int on_filter(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct fake_login1 *f = userdata;
	const char *path = sd_bus_message_get_path(m);

	(void)error;
	if (!f->defer || !sd_bus_message_is_method_call(m, NULL, NULL) || !path ||
	    strncmp(path, LOGIND_PATH, strlen(LOGIND_PATH)) != 0 || f->n_held >= FAKE_LOGIN1_HELD_MAX)
		return 0;
	if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Introspectable", NULL) ||
	    sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Peer", NULL))
		return 0;
	f->held[f->n_held++] = sd_bus_message_ref(m);
	return 1;
}

int fake_login1_defer(struct fake_login1 *f, bool on)
{
	f->defer = on;
	if (f->filter_slot)
		return 0;
	return sd_bus_add_filter(f->bus, &f->filter_slot, on_filter, f);
}

const char *fake_login1_held_member(struct fake_login1 *f, unsigned i)
{
	return i < f->n_held ? sd_bus_message_get_member(f->held[i]) : NULL;
}

void fake_login1_answer(struct fake_login1 *f, unsigned i, enum fake_answer how)
{
	sd_bus_message *m;

	if (i >= f->n_held)
		return;
	m = f->held[i];
	memmove(&f->held[i], &f->held[i + 1], (f->n_held - i - 1) * sizeof(f->held[0]));
	f->n_held--;
	switch (how) {
	case FAKE_ANSWER_NOW:
		(void)answer_now(f, m);
		break;
	case FAKE_ANSWER_ERROR:
		(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_FAILED, "fake logind: failed on purpose");
		break;
	case FAKE_ANSWER_NEVER:
		break;
	}
	sd_bus_message_unref(m);
}

void fake_login1_leave(struct fake_login1 *f)
{
	if (f->away)
		return;
	f->away = true;
	(void)sd_bus_release_name(f->bus, LOGIND_NAME);
}

void fake_login1_return(struct fake_login1 *f)
{
	if (!f->away)
		return;
	f->away = false;
	(void)sd_bus_request_name(f->bus, LOGIND_NAME, 0);
}
