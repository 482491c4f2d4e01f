/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bus-dict.h"
#include "bus-signal.h"
#include "hash.h"
#include "log.h"
#include "macro.h"
#include "peers.h"

/* A call held back so that one client's calls run in the order it sent them. */
struct held {
	sd_bus_message *m;
	uint64_t seq;
};

struct peer {
	struct peers *peers;
	char *name;
	struct hash_node by_name;
	uid_t uid;
	pid_t pid;
	gid_t *gids;            /* UnixGroupIDs: every group of the connection's process */
	unsigned n_gids;
	bool known;
	bool gone;              /* the name left while a call of it waited */
	sd_bus_slot *query;     /* GetConnectionCredentials in flight */
	/*
	 * The call that waits for an answer (its credentials, or polkit) and
	 * will be dispatched again; while there is one, the client's later
	 * calls are parked. Parked calls go back to sd-bus's read queue once
	 * the busy one runs again, as "released"; one that comes round runs
	 * only when no call the client sent before it is still held.
	 */
	sd_bus_message *busy;
	uint64_t busy_seq;
	struct held *parked;    /* by seq */
	unsigned n_parked;
	struct held *released;
	unsigned n_released;
	uint64_t next_seq;
	uint64_t running_seq;   /* of the call the filter let pass last */
};

struct peers {
	sd_bus *bus;
	unsigned n_held;        /* parked and released calls of all peers */
	sd_bus_slot *match;
	sd_bus_slot *filter;
	struct peer **gone;     /* left the bus, with calls still to come round */
	unsigned n_gone;
	struct hash by_name;
};

static void held_free(struct held *h, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sd_bus_message_unref(h[i].m);
	free(h);
}

static void peer_free(struct peer *x)
{
	if (!x)
		return;
	x->peers->n_held -= x->n_parked + x->n_released;
	if (x->by_name.key)
		hash_remove(&x->peers->by_name, &x->by_name);
	sd_bus_slot_unref(x->query);
	sd_bus_message_unref(x->busy);
	held_free(x->parked, x->n_parked);
	held_free(x->released, x->n_released);
	free(x->gids);
	free(x->name);
	free(x);
}

/* Nothing waits: the entry is only the credentials cache, or, once gone, nothing. */
static bool peer_idle(const struct peer *x)
{
	return !x->query && !x->busy && x->n_parked == 0 && x->n_released == 0;
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
	if (!bus_signal_trusted(m))
		return 0;
	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || name[0] != ':' || new_owner[0])
		return 0;
	x = peer_find(p, name);
	if (!x)
		return 0;
	log_debug("Forgetting the credentials of %s: it left the bus", name);
	/* Nobody reads replies to parked calls any more. */
	p->n_held -= x->n_parked;
	held_free(x->parked, x->n_parked);
	x->parked = NULL;
	x->n_parked = 0;
	/*
	 * A call that waits (credentials, polkit) and calls already back in the
	 * read queue still come round: the entry stays until they did, so the
	 * answer polkit gave is taken, not left behind.
	 */
	if (peer_idle(x)) {
		peer_free(x);
	} else if (!x->gone) {
		struct peer **g = reallocarray(p->gone, p->n_gone + 1, sizeof(*g));

		/* Without room on the list the entry stays: a leak of one entry, never a crash. */
		if (g) {
			p->gone = g;
			p->gone[p->n_gone++] = x;
		}
		x->gone = true;
	}
	return 0;
}

_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "UnixGroupIDs is an array of uint32");

/* The connection's groups, as the bus took them when it connected (SO_PEERGROUPS); the variant is entered. */
static int parse_gids(sd_bus_message *reply, struct peer *x)
{
	const void *p;
	size_t n;
	int r;

	r = sd_bus_message_read_array(reply, 'u', &p, &n);
	if (r < 0)
		return r;
	free(x->gids);
	x->gids = NULL;
	x->n_gids = 0;
	if (n > 0) {
		x->gids = malloc(n);
		if (!x->gids)
			return -ENOMEM;
		memcpy(x->gids, p, n);
		x->n_gids = (unsigned)(n / sizeof(uint32_t));
	}
	return 1;
}

struct credentials {
	struct peer *x;
	uint32_t uid, pid;
};

/* One entry of GetConnectionCredentials' a{sv} (bus_dict_walk()): 1 once read, 0 to skip it. */
static int credentials_entry(void *userdata, const char *key, sd_bus_message *m, const char *type)
{
	struct credentials *c = userdata;
	int r;

	if (strcmp(key, "UnixUserID") == 0 || strcmp(key, "ProcessID") == 0) {
		r = sd_bus_message_read(m, "u", key[0] == 'U' ? &c->uid : &c->pid);
		return r < 0 ? r : 1;
	}
	if (strcmp(key, "UnixGroupIDs") == 0)
		return parse_gids(m, c->x);
	(void)type;
	return 0;
}

static int parse_credentials(sd_bus_message *reply, struct peer *x, uid_t *ret_uid, pid_t *ret_pid)
{
	struct credentials c = { .x = x, .uid = UINT32_MAX };
	int r;

	r = bus_dict_walk(reply, credentials_entry, &c);
	if (r < 0)
		return r;
	/* Every dbus-daemon knows the uid of a unix socket peer; without it we cannot apply quotas. */
	if (c.uid == UINT32_MAX)
		return -ENODATA;
	*ret_uid = (uid_t)c.uid;
	*ret_pid = (pid_t)c.pid;
	return 0;
}

int peers_redispatch(sd_bus_message *m)
{
	int r = sd_bus_message_rewind(m, true);

	if (r >= 0)
		r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(m), m);
	if (r < 0) {
		log_error_errno(r, "Failed to dispatch %s again: %m", strna(sd_bus_message_get_member(m)));
		(void)sd_bus_reply_method_errno(m, r, NULL);
	}
	return r;
}

/*
 * Every parked call goes back to the read queue. They come round after
 * whatever the queue holds, so each is checked again then, by its seq.
 */
static void release_parked(struct peer *x)
{
	struct held *h;

	if (x->n_parked == 0)
		return;
	h = reallocarray(x->released, x->n_released + x->n_parked, sizeof(*h));
	for (unsigned i = 0; i < x->n_parked; i++) {
		sd_bus_message *m = x->parked[i].m;

		if (!h) {
			(void)sd_bus_reply_method_errno(m, -ENOMEM, NULL);
			sd_bus_message_unref(m);
			x->peers->n_held--;
		} else if (peers_redispatch(m) < 0) {
			sd_bus_message_unref(m);
			x->peers->n_held--;
		} else {
			h[x->n_released++] = x->parked[i];
		}
	}
	if (h)
		x->released = h;
	x->n_parked = 0;
}

static int park(struct peer *x, sd_bus_message *m, uint64_t seq)
{
	struct held *h = reallocarray(x->parked, x->n_parked + 1, sizeof(*h));
	unsigned i;

	if (!h)
		return -ENOMEM;
	x->parked = h;
	/* Sorted by seq: a call that was released and parked again may be older than the rest. */
	for (i = x->n_parked; i > 0 && h[i - 1].seq > seq; i--)
		h[i] = h[i - 1];
	h[i] = (struct held){ sd_bus_message_ref(m), seq };
	x->n_parked++;
	x->peers->n_held++;
	return 0;
}

/* If m is a released call coming round, take it off the list (and our reference) and say its seq. */
static bool take_released(struct peer *x, sd_bus_message *m, uint64_t *ret_seq)
{
	for (unsigned i = 0; i < x->n_released; i++)
		if (x->released[i].m == m) {
			*ret_seq = x->released[i].seq;
			sd_bus_message_unref(m);
			x->released[i] = x->released[--x->n_released];
			x->peers->n_held--;
			return true;
		}
	return false;
}

static bool held_before(const struct peer *x, uint64_t seq)
{
	for (unsigned i = 0; i < x->n_parked; i++)
		if (x->parked[i].seq < seq)
			return true;
	for (unsigned i = 0; i < x->n_released; i++)
		if (x->released[i].seq < seq)
			return true;
	return false;
}

/* Room to hold one more call of x back. */
static bool peers_room(const struct peers *p, const struct peer *x)
{
	return x->n_parked + x->n_released < PEER_HELD_MAX && p->n_held < PEERS_HELD_MAX;
}

/* Entries of clients that left go once nothing of theirs can come round; by then their handlers ran. */
static void sweep_gone(struct peers *p)
{
	for (unsigned i = 0; i < p->n_gone;) {
		struct peer *x = p->gone[i];

		if (peer_idle(x)) {
			p->gone[i] = p->gone[--p->n_gone];
			peer_free(x);
		} else {
			i++;
		}
	}
}

/*
 * Every incoming message, before sd-bus dispatches it. A client's calls
 * must run in the order it sent them, though one of them may wait for an
 * answer (its credentials, polkit) and be dispatched again later: without
 * this, a new client's AcquireWakeLock waiting for its credentials would
 * be overtaken by the ReleaseWakeLock it sent right after, leaving a lock
 * held that its holder believes released. Clients without waiting calls
 * (nearly all, nearly always) pass after one lookup.
 */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct peers *p = userdata;
	const char *sender;
	struct peer *x;
	uint64_t seq;
	int r;

	(void)ret_error;
	if (p->n_gone > 0)
		sweep_gone(p);
	if (!sd_bus_message_is_method_call(m, NULL, NULL))
		return 0;
	sender = sd_bus_message_get_sender(m);
	x = sender ? peer_find(p, sender) : NULL;
	if (!x)
		return 0;
	if (m == x->busy) {
		/* Its answer came: it runs again, and what it held back may follow it. */
		seq = x->busy_seq;
		x->busy = sd_bus_message_unref(x->busy);
	} else {
		bool again = take_released(x, m, &seq);

		if (!again && (x->busy || x->n_parked + x->n_released > 0) && !peers_room(p, x)) {
			/*
			 * A call to hold back, and no room: it is answered
			 * now, so that a client whose earlier call waits for
			 * an answer that never comes (its own polkit agent)
			 * cannot pile up calls, each with the fds it carries,
			 * until the daemon runs out of them. A call already
			 * held keeps its place.
			 */
			log_debug("Refusing %s of %s: too many of its calls wait", strna(sd_bus_message_get_member(m)),
				  sender);
			(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_LIMITS_EXCEEDED,
							 "Too many calls of %s wait behind an earlier one: at most %u "
							 "per client and %u of all clients together",
							 sender, PEER_HELD_MAX, PEERS_HELD_MAX);
			return 1;
		}
		if (!again)
			seq = x->next_seq++;
		if (x->busy || held_before(x, seq)) {
			r = park(x, m, seq);
			if (r < 0)
				return r;
			log_debug("Holding %s of %s back behind an earlier call", strna(sd_bus_message_get_member(m)), sender);
			return 1;
		}
	}
	x->running_seq = seq;
	release_parked(x);
	return 0;
}

static int on_credentials(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct peer *x = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	int r = e ? -sd_bus_error_get_errno(e) : parse_credentials(reply, x, &x->uid, &x->pid);
	sd_bus_message *m;

	(void)ret_error;
	x->query = sd_bus_slot_unref(x->query);
	x->known = r >= 0;
	if (x->known) {
		log_debug("Credentials of %s: uid %u, pid %d", x->name, (unsigned)x->uid, (int)x->pid);
		if (x->busy && peers_redispatch(x->busy) < 0) {
			x->busy = sd_bus_message_unref(x->busy);
			release_parked(x);
		}
		return 0;
	}
	m = TAKE_PTR(x->busy);
	if (m) {
		/* The caller left or the bus would not say: nobody to give a lock to. */
		(void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_FAILED, "Cannot determine the credentials of %s: %s",
						 strna(sd_bus_message_get_sender(m)), strerror(-r));
		sd_bus_message_unref(m);
	}
	/* The calls it held back go on; one that needs credentials asks again: failures are not cached. */
	release_parked(x);
	if (peer_idle(x) && !x->gone)
		peer_free(x);
	return 0;
}

static void peer_hold(struct peer *x, sd_bus_message *m, uint64_t seq)
{
	sd_bus_message_unref(x->busy);
	x->busy = sd_bus_message_ref(m);
	x->busy_seq = seq;
}

int peers_get(struct peers *p, sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid)
{
	const char *sender = sd_bus_message_get_sender(m);
	struct peer *x;
	uint64_t seq;
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
	if (x) {
		/* m passed the filter just now, with this seq. */
		seq = x->running_seq;
	} else {
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
		/* The filter let m pass before there was an entry: it is the first call we hold for it. */
		seq = x->next_seq++;
	}
	if (!x->query) {
		r = sd_bus_call_method_async(p->bus, &x->query, "org.freedesktop.DBus", "/org/freedesktop/DBus",
					     "org.freedesktop.DBus", "GetConnectionCredentials", on_credentials, x, "s",
					     sender);
		if (r < 0) {
			if (peer_idle(x) && !x->gone)
				peer_free(x);
			return r;
		}
	}
	peer_hold(x, m, seq);
	return 0;
}

void peers_wait(struct peers *p, sd_bus_message *m)
{
	const char *sender = sd_bus_message_get_sender(m);
	struct peer *x = sender ? peer_find(p, sender) : NULL;

	/* Callers asked peers_get() first, so the entry is there. */
	if (x)
		peer_hold(x, m, x->running_seq);
}

void peers_give_up(struct peers *p, sd_bus_message *m)
{
	const char *sender = sd_bus_message_get_sender(m);
	struct peer *x = sender ? peer_find(p, sender) : NULL;

	if (!x || x->busy != m)
		return;
	x->busy = sd_bus_message_unref(x->busy);
	release_parked(x);
}

bool peers_in_group(const struct peers *p, sd_bus_message *m, gid_t gid)
{
	const char *sender = sd_bus_message_get_sender(m);
	const struct peer *x = sender ? peer_find(p, sender) : NULL;

	if (!x || !x->known || gid == (gid_t)-1)
		return false;
	for (unsigned i = 0; i < x->n_gids; i++)
		if (x->gids[i] == gid)
			return true;
	return false;
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
	if (r >= 0)
		r = sd_bus_add_filter(bus, &p->filter, on_message, p);
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
	sd_bus_slot_unref(p->filter);
	free(p->gone);
	for (size_t i = 0; i < p->by_name.n_buckets; i++)
		while (p->by_name.buckets && p->by_name.buckets[i])
			peer_free(hash_entry(p->by_name.buckets[i], struct peer, by_name));
	hash_done(&p->by_name);
	sd_bus_unref(p->bus);
	free(p);
	return NULL;
}
