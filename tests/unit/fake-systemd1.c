/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bus-names.h"
#include "fake-systemd1.h"


static uint64_t clock_usec(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

/* systemd's bus_label_escape(): anything but [A-Za-z0-9] becomes _xx. */
static void unit_path(const char *id, char *buf, size_t size)
{
	size_t n = snprintf(buf, size, "%s", SYSTEMD_UNIT_PATH_PREFIX);

	for (const char *p = id; *p && n + 4 < size; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
			buf[n++] = *p;
		else
			n += snprintf(buf + n, size - n, "_%02x", (unsigned char)*p);
	}
	buf[n] = 0;
}

static struct fake_timer *timer_by_path(struct fake_systemd1 *f, const char *path)
{
	for (unsigned i = 0; path && i < f->n; i++)
		if (!f->timers[i].gone && strcmp(f->timers[i].path, path) == 0)
			return &f->timers[i];
	return NULL;
}

static struct fake_timer *gone_by_path(struct fake_systemd1 *f, const char *path)
{
	for (unsigned i = 0; path && i < f->n; i++)
		if (f->timers[i].gone && strcmp(f->timers[i].path, path) == 0)
			return &f->timers[i];
	return NULL;
}

/* Unit and Timer properties together, as GetAll("") gives them. */
static int append_properties(sd_bus_message *m, const struct fake_timer *t, bool unit, bool timer)
{
	int r = sd_bus_message_open_container(m, 'a', "{sv}");

	if (r >= 0 && unit)
		r = sd_bus_message_append(m, "{sv}{sv}{sv}", "Id", "s", t->id, "ActiveState", "s",
					  strcmp(t->sub, "dead") == 0 ? "inactive" : "active", "SubState", "s", t->sub);
	if (r >= 0 && timer)
		r = sd_bus_message_append(m, "{sv}{sv}{sv}{sv}{sv}", "Unit", "s", t->unit, "WakeSystem", "b", (int)t->wake,
					  "NextElapseUSecRealtime", "t", t->next_realtime, "NextElapseUSecMonotonic",
					  "t", t->next_monotonic, "LastTriggerUSec", "t", t->last_trigger);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

static void emit_changed(struct fake_timer *t, bool unit)
{
	sd_bus_message *m = NULL;
	int r;

	if (!t->f->subscribed || t->f->away)
		return;
	r = sd_bus_message_new_signal(t->f->bus, &m, t->path, "org.freedesktop.DBus.Properties", "PropertiesChanged");
	if (r >= 0)
		r = sd_bus_message_append(m, "s", unit ? SYSTEMD_UNIT : SYSTEMD_TIMER);
	if (r >= 0)
		r = append_properties(m, t, unit, !unit);
	if (r >= 0)
		r = sd_bus_message_append(m, "as", 0);
	if (r >= 0)
		(void)sd_bus_send(t->f->bus, m, NULL);
	sd_bus_message_unref(m);
}

static void emit_manager(struct fake_systemd1 *f, const char *member, const char *sig, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;
	int r;

	if (!f->subscribed || f->away)
		return;
	r = sd_bus_message_new_signal(f->bus, &m, SYSTEMD_PATH, SYSTEMD_MANAGER, member);
	va_start(ap, sig);
	if (r >= 0)
		r = sd_bus_message_appendv(m, sig, ap);
	va_end(ap);
	if (r >= 0)
		(void)sd_bus_send(f->bus, m, NULL);
	sd_bus_message_unref(m);
}

static int reply_list(struct fake_systemd1 *f, sd_bus_message *call)
{
	sd_bus_message *reply = NULL;
	int r = sd_bus_message_new_method_return(call, &reply);

	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssssssouso)");
	for (unsigned i = 0; r >= 0 && i < f->n; i++) {
		const struct fake_timer *t = &f->timers[i];

		if (t->gone)
			continue;
		r = sd_bus_message_append(reply, "(ssssssouso)", t->id, "a fake timer", "loaded",
					  strcmp(t->sub, "dead") == 0 ? "inactive" : "active", t->sub, "", t->path, 0, "", "/");
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static int answer_now(struct fake_systemd1 *f, sd_bus_message *m)
{
	sd_bus_message *reply = NULL;
	struct fake_timer *t;
	int r;

	if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "GetAll")) {
		t = timer_by_path(f, sd_bus_message_get_path(m));
		if (!t && f->load_on_access && (t = gone_by_path(f, sd_bus_message_get_path(m)))) {
			/* As systemd: the object's access loads the unit, which nothing needs: unloaded again. */
			f->loads++;
			emit_manager(f, "UnitNew", "so", t->id, t->path);
			r = sd_bus_message_new_method_return(m, &reply);
			if (r >= 0)
				r = append_properties(reply, t, true, true);
			if (r >= 0)
				r = sd_bus_send(NULL, reply, NULL);
			sd_bus_message_unref(reply);
			emit_manager(f, "UnitRemoved", "so", t->id, t->path);
			return r;
		}
		if (!t)
			return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_OBJECT, "Unknown unit");
		r = sd_bus_message_new_method_return(m, &reply);
		if (r >= 0)
			r = append_properties(reply, t, true, true);
		if (r >= 0)
			r = sd_bus_send(NULL, reply, NULL);
		sd_bus_message_unref(reply);
		return r;
	}
	if (sd_bus_message_is_method_call(m, SYSTEMD_MANAGER, "Subscribe")) {
		f->subscribes++;
		f->subscribed = true;
		return sd_bus_reply_method_return(m, "");
	}
	if (sd_bus_message_is_method_call(m, SYSTEMD_MANAGER, "ListUnitsByPatterns"))
		return reply_list(f, m);
	return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_METHOD, "Not in the fake");
}

static int on_filter(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct fake_systemd1 *f = userdata;
	const char *path = sd_bus_message_get_path(m), *dest = sd_bus_message_get_destination(m);

	(void)error;
	if (!sd_bus_message_is_method_call(m, NULL, NULL) || !path || strncmp(path, SYSTEMD_PATH, strlen(SYSTEMD_PATH)) != 0)
		return 0;
	if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Peer", NULL) ||
	    sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Introspectable", NULL))
		return 0;
	/* Away: what still reaches this connection by its unique name is not systemd's to answer. */
	if (f->away && dest && strcmp(dest, SYSTEMD_NAME) == 0)
		return 1;
	if (f->defer && f->n_held < FAKE_SYSTEMD1_HELD_MAX) {
		f->held[f->n_held++] = sd_bus_message_ref(m);
		return 1;
	}
	(void)answer_now(f, m);
	return 1;
}

int fake_systemd1_start(struct fake_systemd1 *f, const char *address)
{
	int r;

	*f = (struct fake_systemd1){};
	r = sd_bus_new(&f->bus);
	if (r < 0)
		return r;
	(void)sd_bus_set_address(f->bus, address);
	(void)sd_bus_set_bus_client(f->bus, true);
	r = sd_bus_start(f->bus);
	if (r >= 0)
		r = sd_bus_add_filter(f->bus, &f->filter_slot, on_filter, f);
	if (r >= 0)
		r = sd_bus_request_name(f->bus, SYSTEMD_NAME, 0);
	return r < 0 ? r : 0;
}

void fake_systemd1_stop(struct fake_systemd1 *f)
{
	while (f->n_held > 0)
		fake_systemd1_answer(f, 0, FAKE_SYSTEMD1_NEVER);
	f->filter_slot = sd_bus_slot_unref(f->filter_slot);
	f->bus = sd_bus_flush_close_unref(f->bus);
}

void fake_systemd1_pump(struct fake_systemd1 *f, int ms)
{
	uint64_t t0 = clock_usec(CLOCK_MONOTONIC), t;

	for (;;) {
		while (sd_bus_process(f->bus, NULL) > 0)
			;
		t = clock_usec(CLOCK_MONOTONIC);
		if (t - t0 >= (uint64_t)ms * 1000)
			break;
		(void)sd_bus_wait(f->bus, (uint64_t)ms * 1000 - (t - t0));
	}
	(void)sd_bus_flush(f->bus);
}

struct fake_timer *fake_systemd1_add(struct fake_systemd1 *f, const char *id, const char *unit, bool wake,
				     bool announce)
{
	struct fake_timer *t;

	if (f->n >= FAKE_SYSTEMD1_TIMERS_MAX)
		return NULL;
	t = &f->timers[f->n++];
	*t = (struct fake_timer){ .f = f, .wake = wake };
	snprintf(t->id, sizeof(t->id), "%s", id);
	snprintf(t->unit, sizeof(t->unit), "%s", unit);
	snprintf(t->sub, sizeof(t->sub), "waiting");
	unit_path(id, t->path, sizeof(t->path));
	if (announce)
		emit_manager(f, "UnitNew", "so", t->id, t->path);
	return t;
}

void fake_systemd1_announce_new(struct fake_timer *t)
{
	emit_manager(t->f, "UnitNew", "so", t->id, t->path);
}

void fake_systemd1_remove(struct fake_timer *t)
{
	t->gone = true;
	emit_manager(t->f, "UnitRemoved", "so", t->id, t->path);
}

void fake_timer_set_sub(struct fake_timer *t, const char *sub)
{
	snprintf(t->sub, sizeof(t->sub), "%s", sub);
	emit_changed(t, true);
}

void fake_timer_set_next(struct fake_timer *t, uint64_t monotonic, uint64_t realtime)
{
	t->next_monotonic = monotonic;
	t->next_realtime = realtime;
	emit_changed(t, false);
}

void fake_timer_trigger_split(struct fake_timer *t, void (*between)(struct fake_systemd1 *f))
{
	t->last_trigger = clock_usec(CLOCK_REALTIME);
	t->next_monotonic = 0;
	t->next_realtime = 0;
	emit_changed(t, false);
	if (between)
		between(t->f);
	fake_timer_set_sub(t, "running");
}

void fake_timer_trigger(struct fake_timer *t)
{
	fake_timer_trigger_split(t, NULL);
}

void fake_systemd1_reloading(struct fake_systemd1 *f, bool start)
{
	emit_manager(f, "Reloading", "b", (int)start);
}

void fake_systemd1_defer(struct fake_systemd1 *f, bool on)
{
	f->defer = on;
}

void fake_systemd1_answer(struct fake_systemd1 *f, unsigned i, enum fake_systemd1_answer how)
{
	sd_bus_message *m;

	if (i >= f->n_held)
		return;
	m = f->held[i];
	memmove(&f->held[i], &f->held[i + 1], (f->n_held - i - 1) * sizeof(f->held[0]));
	f->n_held--;
	switch (how) {
	case FAKE_SYSTEMD1_NOW:
		(void)answer_now(f, m);
		break;
	case FAKE_SYSTEMD1_ERROR:
		(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_FAILED, "fake systemd: failed on purpose");
		break;
	case FAKE_SYSTEMD1_NEVER:
		break;
	}
	sd_bus_message_unref(m);
}

void fake_systemd1_leave(struct fake_systemd1 *f)
{
	if (f->away)
		return;
	f->away = true;
	f->subscribed = false;
	(void)sd_bus_release_name(f->bus, SYSTEMD_NAME);
}

void fake_systemd1_return(struct fake_systemd1 *f)
{
	if (!f->away)
		return;
	f->away = false;
	(void)sd_bus_request_name(f->bus, SYSTEMD_NAME, 0);
}
