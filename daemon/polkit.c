/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "peers.h"
#include "polkit.h"

/* One check per method call; answered ones wait for the call to come round again. */
struct polkit_query {
	struct polkit_registry *reg;
	struct peers *peers; /* holds the sender's later calls back while this one waits */
	sd_bus_message *call;
	uid_t uid;
	char *action;
	sd_bus_slot *slot;
	bool answered;
	int result; /* 1 allowed, 0 denied, -ENOENT no polkit, other -errno */
	struct polkit_query *next;
};

struct polkit_registry {
	struct polkit_query *queries;
};

static void query_free(struct polkit_query *q)
{
	sd_bus_slot_unref(q->slot);
	sd_bus_message_unref(q->call);
	free(q->action);
	free(q);
}

struct polkit_registry *polkit_registry_free(struct polkit_registry *reg)
{
	struct polkit_query *q;

	if (!reg)
		return NULL;
	while ((q = reg->queries)) {
		reg->queries = q->next;
		query_free(q);
	}
	free(reg);
	return NULL;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct polkit_query *q = userdata;
	const sd_bus_error *e;
	int authorized = 0, challenge = 0, r;

	(void)ret_error;
	q->slot = sd_bus_slot_unref(q->slot);
	e = sd_bus_message_get_error(reply);
	if (e) {
		/*
		 * Not there, or its activation failed (a masked or missing
		 * polkit.service: systemd's error, or dbus-daemon's Spawn.*):
		 * no polkit, so the stricter rules without it apply.
		 */
		if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
		    has_prefix(e->name, "org.freedesktop.DBus.Error.Spawn.") ||
		    has_prefix(e->name, "org.freedesktop.systemd1."))
			r = -ENOENT;
		else {
			log_warning("polkit check failed: %s", e->message ? e->message : e->name);
			r = -sd_bus_error_get_errno(e);
		}
	} else {
		r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
		if (r >= 0)
			r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
		r = r < 0 ? r : authorized ? 1 : 0;
	}
	q->answered = true;
	q->result = r;
	/* Run the method handler again from the start; this time polkit_verify() has the answer. */
	if (peers_redispatch(q->call) < 0) {
		/* Answered with the error: it never comes round, so nothing waits for it any more. */
		peers_give_up(q->peers, q->call);
		for (struct polkit_query **p = &q->reg->queries; *p; p = &(*p)->next)
			if (*p == q) {
				*p = q->next;
				break;
			}
		query_free(q);
	}
	return 0;
}

static int query_start(struct polkit_registry *reg, struct peers *peers, sd_bus_message *call, uid_t uid,
		       const char *action)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	const char *sender = sd_bus_message_get_sender(call);
	sd_bus *bus = sd_bus_message_get_bus(call);
	struct polkit_query *q;
	int r;

	if (!sender)
		return -EBADMSG;
	r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
					   "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
	if (r < 0)
		return r;
	/* Only prompt when the caller said it can wait for a password dialog. */
	r = sd_bus_message_append(m, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s", sender, action, 0,
				  sd_bus_message_get_allow_interactive_authorization(call) ? 1u : 0u, "");
	if (r < 0)
		return r;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->action = strdup(action);
	if (!q->action) {
		free(q);
		return -ENOMEM;
	}
	q->reg = reg;
	q->peers = peers;
	q->call = sd_bus_message_ref(call);
	q->uid = uid;
	r = sd_bus_call_async(bus, &q->slot, m, on_reply, q, 25 * 1000 * 1000);
	if (r < 0) {
		query_free(q);
		return r;
	}
	q->next = reg->queries;
	reg->queries = q;
	return 0;
}

int polkit_verify(struct polkit_registry **reg, struct peers *peers, sd_bus_message *call, uid_t uid,
		  const char *action, bool allow_without_polkit, sd_bus_error *error)
{
	struct polkit_query **p, *q;
	unsigned n = 0, n_uid = 0;
	int r;

	if (!*reg) {
		*reg = calloc(1, sizeof(**reg));
		if (!*reg)
			return -ENOMEM;
	}
	for (p = &(*reg)->queries; (q = *p); p = &q->next) {
		if (q->call == call && strcmp(q->action, action) == 0)
			break;
		if (!q->answered) {
			n++;
			n_uid += q->uid == uid;
		}
	}
	if (!q) {
		if (n_uid >= POLKIT_QUERIES_PER_UID_MAX || n >= POLKIT_QUERIES_MAX)
			return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
						 "Too many authorization checks wait for polkit: %u of uid %u, %u in all "
						 "(at most %u and %u)",
						 n_uid, (unsigned)uid, n, POLKIT_QUERIES_PER_UID_MAX, POLKIT_QUERIES_MAX);
		r = query_start(*reg, peers, call, uid, action);
		if (r < 0)
			return r;
	}
	if (!q || !q->answered) {
		/* Waiting (a duplicate dispatch too, which the filter let through): hold its sender's later calls. */
		peers_wait(peers, call);
		return 0;
	}
	*p = q->next;
	r = q->result;
	query_free(q);
	if (r == 1 || (r == -ENOENT && allow_without_polkit))
		return 1;
	if (r == -ENOENT)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "polkit is not running; without it only root may do this, and take wake locks "
					 "also the members of the group [WakeLocks] Group= in autosleep.conf names (%s)",
					 action);
	if (r == 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Not authorized (%s)", action);
	return r;
}
