/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "log.h"
#include "macro.h"
#include "peers.h"

struct peer {
	struct peers *peers;
	char *name;
	struct hash_node by_name;
	uid_t uid;
	pid_t pid;
	bool known;
	bool gone;              /* the name left while we asked */
	sd_bus_slot *query;     /* GetConnectionCredentials in flight */
	sd_bus_message **waiting; /* calls to dispatch again once known */
	unsigned n_waiting;
};

struct peers {
	sd_bus *bus;
	sd_bus_slot *match;
	struct hash by_name;
};

static void peer_free(struct peer *x)
{
	if (!x)
		return;
	if (x->by_name.key)
		hash_remove(&x->peers->by_name, &x->by_name);
	sd_bus_slot_unref(x->query);
	for (unsigned i = 0; i < x->n_waiting; i++)
		sd_bus_message_unref(x->waiting[i]);
	free(x->waiting);
	free(x->name);
	free(x);
}

static struct peer *peer_find(const struct peers *p, const char *name)
{
	struct hash_node *n = hash_lookup(&p->by_name, name);

	return n ? hash_entry(n, struct peer, by_name) : NULL;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct peers *p = userdata;
	const char *name, *old_owner, *new_owner;
	struct peer *x;

	(void)ret_error;
	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || name[0] != ':' || new_owner[0])
		return 0;
	x = peer_find(p, name);
	if (!x)
		return 0;
	log_debug("Forgetting the credentials of %s: it left the bus", name);
	/* The answer in flight still comes; its calls are dispatched and the entry goes then. */
	if (x->query)
		x->gone = true;
	else
		peer_free(x);
	return 0;
}

static int parse_credentials(sd_bus_message *reply, uid_t *ret_uid, pid_t *ret_pid)
{
	uint32_t uid = UINT32_MAX, pid = 0;
	const char *key;
	int r;

	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			return r;
		if (strcmp(key, "UnixUserID") == 0)
			r = sd_bus_message_read(reply, "v", "u", &uid);
		else if (strcmp(key, "ProcessID") == 0)
			r = sd_bus_message_read(reply, "v", "u", &pid);
		else
			r = sd_bus_message_skip(reply, "v");
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(reply);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	/* Every dbus-daemon knows the uid of a unix socket peer; without it we cannot apply quotas. */
	if (uid == UINT32_MAX)
		return -ENODATA;
	*ret_uid = (uid_t)uid;
	*ret_pid = (pid_t)pid;
	return 0;
}

static int on_credentials(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct peer *x = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	int r = e ? -sd_bus_error_get_errno(e) : parse_credentials(reply, &x->uid, &x->pid);

	(void)ret_error;
	x->query = sd_bus_slot_unref(x->query);
	x->known = r >= 0;
	if (x->known)
		log_debug("Credentials of %s: uid %u, pid %d", x->name, (unsigned)x->uid, (int)x->pid);
	for (unsigned i = 0; i < x->n_waiting; i++) {
		sd_bus_message *m = x->waiting[i];

		if (r < 0)
			/* The caller left or the bus would not say: nobody to give a lock to. */
			(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_FAILED, "Cannot determine the credentials of %s: %s",
							 strna(sd_bus_message_get_sender(m)), strerror(-r));
		else if ((r = sd_bus_message_rewind(m, true)) < 0 ||
			 (r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(m), m)) < 0) {
			log_error_errno(r, "Failed to dispatch %s again: %m", strna(sd_bus_message_get_member(m)));
			(void)sd_bus_reply_method_errno(m, r, NULL);
		}
		sd_bus_message_unref(m);
	}
	x->n_waiting = 0;
	/* A failed lookup is not cached: the next call asks again. */
	if (!x->known || x->gone)
		peer_free(x);
	return 0;
}

static int peer_wait(struct peer *x, sd_bus_message *m)
{
	sd_bus_message **w = reallocarray(x->waiting, x->n_waiting + 1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	x->waiting = w;
	x->waiting[x->n_waiting++] = sd_bus_message_ref(m);
	return 0;
}

int peers_get(struct peers *p, sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid)
{
	const char *sender = sd_bus_message_get_sender(m);
	struct peer *x;
	int r;

	/* Only a bus connection has senders; the daemon never talks peer-to-peer. */
	if (!sender)
		return -EBADMSG;
	x = peer_find(p, sender);
	if (x && x->known) {
		*ret_uid = x->uid;
		*ret_pid = x->pid;
		return 1;
	}
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x)
			return -ENOMEM;
		x->peers = p;
		x->name = strdup(sender);
		if (!x->name) {
			free(x);
			return -ENOMEM;
		}
		x->by_name.key = x->name;
		r = hash_insert(&p->by_name, &x->by_name);
		if (r < 0) {
			x->by_name.key = NULL;
			peer_free(x);
			return r;
		}
		r = sd_bus_call_method_async(p->bus, &x->query, "org.freedesktop.DBus", "/org/freedesktop/DBus",
					     "org.freedesktop.DBus", "GetConnectionCredentials", on_credentials, x, "s",
					     sender);
		if (r < 0) {
			peer_free(x);
			return r;
		}
	}
	r = peer_wait(x, m);
	return r < 0 ? r : 0;
}

unsigned peers_count(const struct peers *p)
{
	return p ? (unsigned)p->by_name.n : 0;
}

int peers_new(sd_bus *bus, struct peers **ret)
{
	struct peers *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->bus = sd_bus_ref(bus);
	/* Only names that went away (new owner empty), and only unique ones matter; the rest we skip. */
	r = sd_bus_add_match_async(bus, &p->match,
				   "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
				   "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''",
				   on_name_owner_changed, NULL, p);
	if (r < 0) {
		peers_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

struct peers *peers_free(struct peers *p)
{
	if (!p)
		return NULL;
	sd_bus_slot_unref(p->match);
	for (size_t i = 0; i < p->by_name.n_buckets; i++)
		while (p->by_name.buckets && p->by_name.buckets[i])
			peer_free(hash_entry(p->by_name.buckets[i], struct peer, by_name));
	hash_done(&p->by_name);
	sd_bus_unref(p->bus);
	free(p);
	return NULL;
}
