/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-signal.h"
#include "bus-names.h"
#include "escape.h"
#include "event-util.h"
#include "log.h"
#include "logind.h"
#include "macro.h"
#include "manager.h"
#include "system-uid.h"


struct logind {
	struct manager *manager;
	sd_bus *bus;
	bool honor;
	bool hold;
	bool held;
	bool handle_lid;
	int lid_fd;         /* our handle-lid-switch:handle-suspend-key inhibitor */
	bool lid_pending;
	sd_bus_slot *docked_slot;
	sd_event_source *docked_timer; /* re-asks Docked while the lid is closed and we are docked */
	int inhibit_fd;
	bool inhibit_pending;
	sd_bus_slot *props_slot;
	sd_bus_slot *owner_slot;
	sd_bus_slot *list_slot;
	/*
	 * logind's last ListInhibitors answer, by what each inhibitor does to
	 * us: how many, and the first one's description. Kept, so that the lid
	 * closing or opening decides again at once, with no round trip.
	 */
	unsigned n_hold[_INHIBITOR_HOLD_MAX];
	char desc[_INHIBITOR_HOLD_MAX][256];
	unsigned lid_ignored; /* how many the closed lid overrides, as last logged */
};

/* Whether the colon-separated list what names word. */
static bool what_has(const char *what, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = what; *p;) {
		size_t n = strcspn(p, ":");

		if (n == len && strncmp(p, word, n) == 0)
			return true;
		p += n;
		if (*p == ':')
			p++;
	}
	return false;
}

enum inhibitor_hold logind_inhibitor_hold(const char *what, const char *mode, unsigned uid, unsigned pid,
					  unsigned self)
{
	/* Our own inhibitor must not keep us awake, or our locks would never end. */
	if (strcmp(mode, "block") != 0 || pid == self)
		return INHIBITOR_HOLDS_NOT;
	/*
	 * logind lets system services take a block sleep inhibitor; a user needs
	 * polkit's inhibit-block-sleep, which an inactive session has by
	 * default. Idle is anyone's for the asking, and means someone watches
	 * the screen: nobody does with the lid closed.
	 */
	if (what_has(what, "sleep") && uid_is_system(uid))
		return INHIBITOR_HOLDS;
	if (what_has(what, "sleep") || what_has(what, "idle"))
		return INHIBITOR_HOLDS_LID_OPEN;
	return INHIBITOR_HOLDS_NOT;
}

/* Hold for the inhibitors that hold now: all of them with the lid open, a system service's sleep with it closed. */
static void logind_apply_inhibitors(struct logind *l)
{
	bool lid_closed = l->manager->lid_away;
	unsigned always = l->n_hold[INHIBITOR_HOLDS], lid_open = l->n_hold[INHIBITOR_HOLDS_LID_OPEN];
	unsigned n = always + (lid_closed ? 0 : lid_open);
	char desc[300];

	if (!l->honor)
		return;
	if (lid_closed && lid_open != l->lid_ignored && lid_open > 0)
		log_info("Lid closed: not staying awake for %u logind inhibitor%s of idle, or of a user's sleep (%s)",
			 lid_open, lid_open == 1 ? "" : "s", l->desc[INHIBITOR_HOLDS_LID_OPEN]);
	l->lid_ignored = lid_closed ? lid_open : 0;
	if (n == 0) {
		manager_set_logind_block(l->manager, false, NULL);
		return;
	}
	snprintf(desc, sizeof(desc), "%s", l->desc[always > 0 ? INHIBITOR_HOLDS : INHIBITOR_HOLDS_LID_OPEN]);
	if (n > 1) {
		size_t len = strlen(desc);

		snprintf(desc + len, sizeof(desc) - len, " and %u more", n - 1);
	}
	manager_set_logind_block(l->manager, true, desc);
}

void logind_lid_changed(struct logind *l)
{
	if (l)
		logind_apply_inhibitors(l);
}

bool logind_inhibitor_takes_lid(const char *what, const char *mode, unsigned pid, unsigned self)
{
	return strcmp(mode, "block") == 0 && pid != self && what_has(what, "handle-lid-switch");
}

static int on_lid_inhibit(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct logind *l = userdata;
	int fd;

	(void)ret_error;
	l->lid_pending = false;
	if (sd_bus_message_is_method_error(reply, NULL)) {
		log_warning("Failed to take logind's lid and sleep key inhibitor: %s; logind handles them",
			    sd_bus_message_get_error(reply)->message);
		manager_set_lid_handler(l->manager, "logind (our inhibitor was refused)");
		return 0;
	}
	if (sd_bus_message_read(reply, "h", &fd) < 0)
		return 0;
	l->lid_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (l->lid_fd < 0) {
		log_warning_errno(negative_errno(), "Failed to keep the lid inhibitor fd: %m; logind handles the lid");
		manager_set_lid_handler(l->manager, "logind (our inhibitor was lost)");
		return 0;
	}
	log_info("Holding logind's handle-lid-switch and handle-suspend-key: autosleepd handles the lid and the sleep key");
	manager_set_lid_handler(l->manager, NULL);
	return 0;
}

/* Take the lid unless other is someone else who holds it; then leave it to them. */
static void logind_claim_lid(struct logind *l, const char *other)
{
	int r;

	if (!l->handle_lid)
		return;
	if (other) {
		if (l->lid_fd >= 0 || l->lid_pending)
			log_info("%s handles the lid now: leaving it alone", other);
		l->lid_fd = safe_close(l->lid_fd);
		manager_set_lid_handler(l->manager, other);
		return;
	}
	if (l->lid_fd >= 0 || l->lid_pending)
		return;
	r = sd_bus_call_method_async(l->bus, NULL, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER, "Inhibit", on_lid_inhibit,
				     l, "ssss", "handle-lid-switch:handle-suspend-key", "autosleepd",
				     "autosleepd handles the lid and the sleep key", "block");
	if (r < 0)
		log_warning_errno(r, "Failed to ask logind for the lid inhibitor: %m; logind handles the lid");
	else
		l->lid_pending = true;
}

static int on_docked(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct logind *l = userdata;
	int docked = 0;

	(void)ret_error;
	l->docked_slot = sd_bus_slot_unref(l->docked_slot);
	/* Unknown counts as undocked: a closed lid is the common case of absence. */
	if (!sd_bus_message_is_method_error(reply, NULL))
		(void)sd_bus_message_read(reply, "v", "b", &docked);
	manager_lid_docked(l->manager, docked);
	return 0;
}

void logind_query_docked(struct logind *l)
{
	int r;

	l->docked_slot = sd_bus_slot_unref(l->docked_slot);
	/* logind announces no change of Docked: ask when the lid closes. */
	r = sd_bus_call_method_async(l->bus, &l->docked_slot, LOGIND_NAME, LOGIND_PATH, "org.freedesktop.DBus.Properties",
				     "Get", on_docked, l, "ss", LOGIND_MANAGER, "Docked");
	if (r < 0) {
		log_warning_errno(r, "Failed to ask logind whether we are docked: %m, assuming not");
		manager_lid_docked(l->manager, false);
	}
}

static int on_docked_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
	(void)es;
	(void)usec;
	logind_query_docked(userdata);
	return 0;
}

void logind_watch_docked(struct logind *l, bool on)
{
	int r;

	if (!l)
		return;
	if (!on) {
		(void)sd_event_source_set_enabled(l->docked_timer, SD_EVENT_OFF);
		return;
	}
	/*
	 * Docked is announced by no signal: unplugging the dock with the lid
	 * shut would leave the machine awake in a bag. Ask again, as logind
	 * itself re-checks a closed lid.
	 */
	r = event_reset_time(sd_bus_get_event(l->bus), &l->docked_timer, CLOCK_MONOTONIC, LOGIND_DOCKED_RECHECK,
			     USEC_PER_SEC, on_docked_timer, l, true);
	if (r < 0)
		log_warning_errno(r, "Failed to arm the Docked re-check: %m; undocking with the lid shut goes unseen");
}

static int on_list(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct logind *l = userdata;
	const char *what, *who, *why, *mode;
	char lid_other[160] = "", ewho[80], ewhat[40], ewhy[160];
	unsigned n_hold[_INHIBITOR_HOLD_MAX] = {};
	char desc[_INHIBITOR_HOLD_MAX][256] = {};
	uint32_t uid, pid;
	int r;

	(void)ret_error;
	l->list_slot = sd_bus_slot_unref(l->list_slot);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		/* logind gone: nothing of its can hold us any more. */
		memset(l->n_hold, 0, sizeof(l->n_hold));
		logind_apply_inhibitors(l);
		return 0;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(ssssuu)");
	if (r < 0)
		goto fail;
	while ((r = sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid)) > 0) {
		enum inhibitor_hold h;

		if (!lid_other[0] && logind_inhibitor_takes_lid(what, mode, pid, (unsigned)getpid()))
			snprintf(lid_other, sizeof(lid_other), "%s (pid %u)",
				 escape_untrusted(ewho, sizeof(ewho), who), (unsigned)pid);
		h = logind_inhibitor_hold(what, mode, uid, pid, (unsigned)getpid());
		if (h == INHIBITOR_HOLDS_NOT || n_hold[h]++ > 0)
			continue;
		/*
		 * Any user may take an inhibitor and name it as they like; desc
		 * becomes a lease's why, shown on the bus and in the journal, so
		 * it holds no control character.
		 */
		snprintf(desc[h], sizeof(desc[h]), "logind inhibitor by %s (%s, uid %u): %s",
			 escape_untrusted(ewho, sizeof(ewho), who), escape_untrusted(ewhat, sizeof(ewhat), what),
			 (unsigned)uid, escape_untrusted(ewhy, sizeof(ewhy), why));
	}
	if (r < 0)
		goto fail;
	memcpy(l->n_hold, n_hold, sizeof(l->n_hold));
	memcpy(l->desc, desc, sizeof(l->desc));
	logind_apply_inhibitors(l);
	logind_claim_lid(l, lid_other[0] ? lid_other : NULL);
	return 0;
fail:
	log_warning_errno(r, "Failed to parse logind inhibitor list: %m, ignoring");
	return 0;
}

static void logind_refresh(struct logind *l)
{
	int r;

	if (!l->honor && !l->handle_lid)
		return;
	/* A newer answer supersedes an older question. */
	l->list_slot = sd_bus_slot_unref(l->list_slot);
	r = sd_bus_call_method_async(l->bus, &l->list_slot, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER,
				     "ListInhibitors", on_list, l, "");
	if (r < 0)
		log_warning_errno(r, "Failed to ask logind for inhibitors: %m, ignoring");
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	(void)ret_error;
	if (!bus_signal_trusted(m))
		return 0;
	/* logind announces BlockInhibited whenever a block inhibitor starts or stops. */
	logind_refresh(userdata);
	return 0;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct logind *l = userdata;

	(void)ret_error;
	if (!bus_signal_trusted(m))
		return 0;
	/* A restarted logind forgot our inhibitors; take them again. */
	l->inhibit_fd = safe_close(l->inhibit_fd);
	l->lid_fd = safe_close(l->lid_fd);
	logind_set_held(l, l->held);
	logind_refresh(l);
	return 0;
}

static int on_inhibit(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct logind *l = userdata;
	int fd, r;

	(void)ret_error;
	l->inhibit_pending = false;
	if (sd_bus_message_is_method_error(reply, NULL)) {
		log_warning("Failed to take logind sleep inhibitor: %s, ignoring",
			    sd_bus_message_get_error(reply)->message);
		return 0;
	}
	r = sd_bus_message_read(reply, "h", &fd);
	if (r < 0)
		return 0;
	/* Our locks ended while we waited: let the inhibitor go at once. */
	if (!l->held)
		return 0;
	l->inhibit_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (l->inhibit_fd < 0)
		log_warning_errno(negative_errno(), "Failed to keep logind inhibitor fd: %m, ignoring");
	return 0;
}

void logind_set_held(struct logind *l, bool held)
{
	int r;

	if (!l)
		return;
	l->held = held;
	if (!l->hold)
		return;
	if (!held) {
		l->inhibit_fd = safe_close(l->inhibit_fd);
		return;
	}
	if (l->inhibit_fd >= 0 || l->inhibit_pending)
		return;
	r = sd_bus_call_method_async(l->bus, NULL, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER, "Inhibit", on_inhibit, l,
				     "ssss", "sleep", "autosleepd", "Wake locks are held", "block");
	if (r < 0)
		log_warning_errno(r, "Failed to ask logind for a sleep inhibitor: %m, ignoring");
	else
		l->inhibit_pending = true;
}

int logind_new(struct manager *m, sd_bus *bus, bool honor, bool hold, bool handle_lid, struct logind **ret)
{
	struct logind *l;
	int r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->manager = m;
	l->bus = sd_bus_ref(bus);
	l->honor = honor;
	l->hold = hold;
	l->handle_lid = handle_lid;
	l->inhibit_fd = -EBADF;
	l->lid_fd = -EBADF;
	r = sd_bus_match_signal_async(bus, &l->props_slot, LOGIND_NAME, LOGIND_PATH, "org.freedesktop.DBus.Properties",
				      "PropertiesChanged", on_properties_changed, NULL, l);
	if (r >= 0)
		r = sd_bus_add_match_async(bus, &l->owner_slot,
					   "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
					   "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
					   "arg0='" LOGIND_NAME "'",
					   on_name_owner_changed, NULL, l);
	if (r < 0) {
		logind_free(l);
		return r;
	}
	logind_refresh(l);
	*ret = l;
	return 0;
}

struct logind *logind_free(struct logind *l)
{
	if (!l)
		return NULL;
	sd_bus_slot_unref(l->props_slot);
	sd_bus_slot_unref(l->owner_slot);
	sd_bus_slot_unref(l->list_slot);
	sd_bus_slot_unref(l->docked_slot);
	sd_event_source_disable_unref(l->docked_timer);
	safe_close(l->inhibit_fd);
	safe_close(l->lid_fd);
	sd_bus_unref(l->bus);
	free(l);
	return NULL;
}
