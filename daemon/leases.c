/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leases.h"
#include "macro.h"
#include "system-uid.h"

void leases_init(struct leases *l)
{
	*l = (struct leases){ .next_id = 1, .now = now };
}

int leases_observe(struct leases *l, leases_observer_fn fn, void *userdata)
{
	return observers_add(&l->observers, (observer_fn)fn, userdata);
}

void leases_unobserve(struct leases *l, leases_observer_fn fn, void *userdata)
{
	observers_remove(&l->observers, (observer_fn)fn, userdata);
}

struct lease_round {
	struct leases *l;
	enum lease_event ev;
	struct lease *x;
	const char *reason;
};

static void call_observer(observer_fn fn, void *userdata, void *ctx)
{
	const struct lease_round *r = ctx;

	((leases_observer_fn)fn)(r->l, r->ev, r->x, r->reason, userdata);
}

static void notify(struct leases *l, enum lease_event ev, struct lease *x, const char *reason)
{
	observers_notify(&l->observers, false, call_observer, &(struct lease_round){ l, ev, x, reason });
}

/*
 * The last lease ending unwinds what the first one set up, in reverse: the
 * first observer (the manager, which holds the machine awake) lets go last,
 * so no later observer still acts on "held" once the machine may suspend.
 */
static void notify_reverse(struct leases *l, enum lease_event ev, struct lease *x, const char *reason)
{
	observers_notify(&l->observers, true, call_observer, &(struct lease_round){ l, ev, x, reason });
}

static void lease_free(struct lease *x)
{
	if (!x)
		return;
	free(x->name);
	free(x->owner);
	free(x->why);
	free(x);
}

/* Every entry is on the list of all (l->stats), the idle ones also on the idle list: both most recent first. */
static void all_unlink(struct leases *l, struct lease_stats *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		l->stats = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void all_push_front(struct leases *l, struct lease_stats *s)
{
	s->next = l->stats;
	if (l->stats)
		l->stats->prev = s;
	l->stats = s;
}

static void idle_unlink(struct leases *l, struct lease_stats *s)
{
	if (s->idle_prev)
		s->idle_prev->idle_next = s->idle_next;
	else
		l->idle_head = s->idle_next;
	if (s->idle_next)
		s->idle_next->idle_prev = s->idle_prev;
	else
		l->idle_tail = s->idle_prev;
	s->idle_prev = s->idle_next = NULL;
}

static void idle_push_front(struct leases *l, struct lease_stats *s)
{
	s->idle_next = l->idle_head;
	if (l->idle_head)
		l->idle_head->idle_prev = s;
	else
		l->idle_tail = s;
	l->idle_head = s;
}

/* s just changed: first in the list of all, and first among the idle ones if it is idle. */
static void stats_touch(struct leases *l, struct lease_stats *s, bool was_idle)
{
	all_unlink(l, s);
	all_push_front(l, s);
	if (was_idle)
		idle_unlink(l, s);
	if (s->active == 0)
		idle_push_front(l, s);
}

static void stats_free(struct leases *l, struct lease_stats *s)
{
	all_unlink(l, s);
	if (s->active == 0)
		idle_unlink(l, s);
	hash_remove(&l->stats_by_name, &s->by_name);
	l->n_stats--;
	free(s->name);
	free(s);
}

void leases_done(struct leases *l)
{
	struct lease *x;

	while ((x = l->head)) {
		l->head = x->next;
		lease_free(x);
	}
	while (l->stats)
		stats_free(l, l->stats);
	hash_done(&l->stats_by_name);
	free(l->uids);
	*l = (struct leases){};
}

/* A new entry, idle until the caller counts a lease in it. */
static struct lease_stats *stats_new(struct leases *l, const char *name)
{
	struct lease_stats *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->name = strdup(name);
	if (!s->name) {
		free(s);
		return NULL;
	}
	s->by_name.key = s->name;
	if (hash_insert(&l->stats_by_name, &s->by_name) < 0) {
		free(s->name);
		free(s);
		return NULL;
	}
	all_push_front(l, s);
	idle_push_front(l, s);
	l->n_stats++;
	return s;
}

static struct lease_stats *stats_lookup(const struct leases *l, const char *name)
{
	struct hash_node *n = hash_lookup(&l->stats_by_name, name);

	return n ? hash_entry(n, struct lease_stats, by_name) : NULL;
}

static struct lease_stats *stats_get(struct leases *l, const char *name)
{
	struct lease_stats *s = stats_lookup(l, name);

	if (s) {
		/* Keep the lists ordered by last change so eviction finds the oldest. */
		stats_touch(l, s, s->active == 0);
		return s;
	}
	if (l->n_stats >= LEASES_STATS_MAX) {
		/* Every name in use: count this one with the other overflowing names. */
		if (!l->idle_tail) {
			s = stats_lookup(l, LEASES_STATS_OTHER);
			if (s) {
				stats_touch(l, s, s->active == 0);
				return s;
			}
			/* The bound is exceeded by one entry, once. */
			return stats_new(l, LEASES_STATS_OTHER);
		}
		stats_free(l, l->idle_tail);
	}
	return stats_new(l, name);
}

const struct lease_stats *leases_stats_find(const struct leases *l, const char *name)
{
	return stats_lookup(l, name);
}

static struct leases_uid *uid_find(struct leases *l, uid_t uid)
{
	for (unsigned i = 0; i < l->n_uids; i++)
		if (l->uids[i].uid == uid)
			return &l->uids[i];
	return NULL;
}

static int uid_count(struct leases *l, uid_t uid)
{
	struct leases_uid *u = uid_find(l, uid);

	if (!u) {
		if (l->n_uids == l->size_uids) {
			unsigned size = l->size_uids ? l->size_uids * 2 : 8;
			struct leases_uid *n = realloc(l->uids, size * sizeof(*n));

			if (!n)
				return -ENOMEM;
			l->uids = n;
			l->size_uids = size;
		}
		u = &l->uids[l->n_uids++];
		*u = (struct leases_uid){ .uid = uid };
	}
	u->n++;
	return 0;
}

static void uid_uncount(struct leases *l, uid_t uid)
{
	struct leases_uid *u = uid_find(l, uid);

	assert(u && u->n > 0);
	/* Drop uids that hold nothing, so the array stays as short as the list of holders. */
	if (--u->n == 0)
		*u = l->uids[--l->n_uids];
}

int leases_acquire_spec(struct leases *l, const struct lease_spec *spec, struct lease **ret)
{
	struct lease *x;
	struct lease_stats *s;
	bool was;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->name = strdup(spec->name);
	x->owner = strdup(spec->owner ? spec->owner : "");
	x->why = strdup(spec->why ? spec->why : "");
	if (!x->name || !x->owner || !x->why) {
		lease_free(x);
		return -ENOMEM;
	}
	if (!spec->own && uid_count(l, spec->uid) < 0) {
		lease_free(x);
		return -ENOMEM;
	}
	s = stats_get(l, spec->name);
	if (!s) {
		if (!spec->own)
			uid_uncount(l, spec->uid);
		lease_free(x);
		return -ENOMEM;
	}
	if (spec->id != 0) {
		/* A lease restored after a restart keeps its id; new ones come after it. */
		x->id = spec->id;
		if (l->next_id <= spec->id)
			l->next_id = spec->id + 1;
	} else {
		x->id = l->next_id++;
	}
	x->uid = spec->uid;
	x->own = spec->own;
	x->lid = spec->own || spec->lid || uid_is_system(spec->uid);
	x->pid = spec->pid;
	x->since = spec->since ? spec->since : l->now(CLOCK_BOOTTIME);
	x->since_realtime = spec->since_realtime ? spec->since_realtime : l->now(CLOCK_REALTIME);
	x->deadline = spec->deadline;

	x->prev = l->tail;
	if (l->tail)
		l->tail->next = x;
	else
		l->head = x;
	l->tail = x;
	was = leases_holding(l);
	l->n++;
	l->n_lid += x->lid;

	x->stats = s;
	if (s->active++ == 0)
		idle_unlink(l, s);
	s->count++;
	s->last_change = l->now(CLOCK_REALTIME);

	/* Held first: the machine is kept awake before anyone hears of the lease. */
	if (!was && leases_holding(l))
		notify(l, LEASE_HELD, x, NULL);
	notify(l, LEASE_ACQUIRED, x, NULL);
	if (ret)
		*ret = x;
	return 0;
}

int leases_acquire(struct leases *l, const char *name, const char *owner, const char *why, uid_t uid,
		   pid_t pid, usec_t deadline, uint64_t *ret_id)
{
	struct lease_spec spec = {
		.name = name, .owner = owner, .why = why, .uid = uid, .pid = pid, .deadline = deadline,
	};
	struct lease *x;
	int r;

	r = leases_acquire_spec(l, &spec, &x);
	if (r < 0)
		return r;
	*ret_id = x->id;
	return 0;
}

struct lease *leases_find(struct leases *l, uint64_t id)
{
	for (struct lease *x = l->head; x; x = x->next)
		if (x->id == id)
			return x;
	return NULL;
}

unsigned leases_count_uid(struct leases *l, uid_t uid)
{
	struct leases_uid *u = uid_find(l, uid);

	return u ? u->n : 0;
}

void leases_release_lease(struct leases *l, struct lease *x, const char *reason)
{
	struct lease_stats *s;
	bool was = leases_holding(l);
	usec_t held;

	notify(l, LEASE_RELEASED, x, reason);
	if (x->prev)
		x->prev->next = x->next;
	else
		l->head = x->next;
	if (x->next)
		x->next->prev = x->prev;
	else
		l->tail = x->prev;
	l->n--;
	l->n_lid -= x->lid;

	if (!x->own)
		uid_uncount(l, x->uid);
	held = usec_sub_unsigned(l->now(CLOCK_BOOTTIME), x->since);
	s = x->stats;
	s->active--;
	stats_touch(l, s, false);
	s->total = usec_add(s->total, held);
	if (held > s->max)
		s->max = held;
	s->last_change = l->now(CLOCK_REALTIME);
	if (was && !leases_holding(l))
		notify_reverse(l, LEASE_UNHELD, x, reason);
	lease_free(x);
}

bool leases_holding(const struct leases *l)
{
	return (l->lid_closed ? l->n_lid : l->n) > 0;
}

void leases_set_lid_closed(struct leases *l, bool closed)
{
	bool was = leases_holding(l);

	l->lid_closed = closed;
	/* Announced with the first lease: a HELD or UNHELD needs one, and there is one whenever this changes. */
	if (was && !leases_holding(l))
		notify_reverse(l, LEASE_UNHELD, l->head, "lid closed");
	else if (!was && leases_holding(l))
		notify(l, LEASE_HELD, l->head, NULL);
}

unsigned leases_waiting_for_lid(const struct leases *l)
{
	return l->lid_closed ? l->n - l->n_lid : 0;
}

bool lease_waits_for_lid(const struct leases *l, const struct lease *x)
{
	return l->lid_closed && !x->lid;
}

int leases_release(struct leases *l, uint64_t id, const char *reason)
{
	struct lease *x = leases_find(l, id);

	if (!x)
		return -ENOENT;
	leases_release_lease(l, x, reason);
	return 0;
}

usec_t leases_next_deadline(struct leases *l)
{
	usec_t next = USEC_INFINITY;

	for (struct lease *x = l->head; x; x = x->next)
		if (x->deadline < next)
			next = x->deadline;
	return next;
}

usec_t leases_expire(struct leases *l)
{
	usec_t t = l->now(CLOCK_BOOTTIME);
	struct lease *x, *n;

	for (x = l->head; x; x = n) {
		n = x->next;
		if (x->deadline <= t)
			leases_release(l, x->id, "expired");
	}
	return leases_next_deadline(l);
}

int leases_set_deadline(struct leases *l, uint64_t id, usec_t deadline)
{
	struct lease *x = leases_find(l, id);

	if (!x)
		return -ENOENT;
	if (x->deadline != deadline) {
		x->deadline = deadline;
		notify(l, LEASE_DEADLINE, x, NULL);
	}
	return 0;
}

int leases_stats_add(struct leases *l, const char *name, usec_t held)
{
	struct lease_stats *s = stats_get(l, name);

	if (!s)
		return -ENOMEM;
	s->count++;
	s->total = usec_add(s->total, held);
	if (held > s->max)
		s->max = held;
	s->last_change = l->now(CLOCK_REALTIME);
	return 0;
}

int lease_why_check(const char *why, char *ret_problem, size_t size)
{
	size_t n = strlen(why);

	if (n > LEASE_WHY_MAX) {
		snprintf(ret_problem, size, "Reason is %zu bytes long, at most %d are allowed", n, LEASE_WHY_MAX);
		return -EINVAL;
	}
	for (const char *p = why; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f) {
			snprintf(ret_problem, size, "Reason contains control character 0x%02x at offset %zu",
				 (unsigned char)*p, (size_t)(p - why));
			return -EINVAL;
		}
	return 0;
}
