/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "polkit.h"

struct polkit_query {
	sd_bus_message *call;
	polkit_done_fn done;
	void *userdata;
};

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct polkit_query *q = userdata;
	const sd_bus_error *e;
	int authorized = 0, challenge = 0, r;

	(void)ret_error;
	e = sd_bus_message_get_error(reply);
	if (e) {
		if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
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
	q->done(q->call, r, q->userdata);
	sd_bus_message_unref(q->call);
	free(q);
	return 0;
}

int polkit_check(sd_bus *bus, sd_bus_message *call, const char *action, polkit_done_fn done, void *userdata)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	struct polkit_query *q;
	const char *sender = sd_bus_message_get_sender(call);
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
	q->call = sd_bus_message_ref(call);
	q->done = done;
	q->userdata = userdata;
	r = sd_bus_call_async(bus, NULL, m, on_reply, q, 25 * 1000 * 1000);
	if (r < 0) {
		sd_bus_message_unref(q->call);
		free(q);
	}
	return r;
}
