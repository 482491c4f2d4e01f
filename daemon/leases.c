/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leases.h"
#include "macro.h"

void leases_init(struct leases *l)
{
	*l = (struct leases){ .next_id = 1, .now = now };
}

int leases_observe(struct leases *l, leases_observer_fn fn, void *userdata)
{
	if (l->n_observers >= LEASES_OBSERVERS_MAX)
		return -ENOSPC;
	l->observers[l->n_observers].fn = fn;
	l->observers[l->n_observers].userdata = userdata;
	l->n_observers++;
	return 0;
}

static void notify(struct leases *l, enum lease_event ev, struct lease *x, const char *reason)
{
	for (unsigned i = 0; i < l->n_observers; i++)
		l->observers[i].fn(l, ev, x, reason, l->observers[i].userdata);
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

static void stats_unlink(struct leases *l, struct lease_stats *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		l->stats = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void stats_push_front(struct leases *l, struct lease_stats *s)
{
	s->prev = NULL;
	s->next = l->stats;
	if (l->stats)
		l->stats->prev = s;
	l->stats = s;
}

void leases_done(struct leases *l)
{
	struct lease *x;
	struct lease_stats *s;

	while ((x = l->head)) {
		l->head = x->next;
		lease_free(x);
	}
	while ((s = l->stats)) {
		stats_unlink(l, s);
		free(s->name);
		free(s);
	}
	*l = (struct leases){};
}

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
	stats_push_front(l, s);
	l->n_stats++;
	return s;
}

static struct lease_stats *stats_get(struct leases *l, const char *name)
{
	struct lease_stats *s, *victim = NULL, *other = NULL;

	for (s = l->stats; s; s = s->next)
		if (strcmp(s->name, name) == 0) {
			/* Keep the list ordered by last change so eviction finds the oldest. */
			stats_unlink(l, s);
			stats_push_front(l, s);
			return s;
		}

	if (l->n_stats >= LEASES_STATS_MAX) {
		for (s = l->stats; s; s = s->next) {
			if (s->active == 0)
				victim = s;
			if (strcmp(s->name, LEASES_STATS_OTHER) == 0)
				other = s;
		}
		/* Every name in use: count this one with the other overflowing names. */
		if (!victim) {
			if (other) {
				stats_unlink(l, other);
				stats_push_front(l, other);
				return other;
			}
			/* The bound is exceeded by one entry, once. */
			return stats_new(l, LEASES_STATS_OTHER);
		}
		stats_unlink(l, victim);
		free(victim->name);
		free(victim);
		l->n_stats--;
	}
	return stats_new(l, name);
}

const struct lease_stats *leases_stats_find(const struct leases *l, const char *name)
{
	for (const struct lease_stats *s = l->stats; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

int leases_acquire_spec(struct leases *l, const struct lease_spec *spec, struct lease **ret)
{
	struct lease *x;
	struct lease_stats *s;

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
	s = stats_get(l, spec->name);
	if (!s) {
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
	l->n++;

	x->stats = s;
	s->count++;
	s->active++;
	s->last_change = l->now(CLOCK_REALTIME);

	/* Held first: the machine is kept awake before anyone hears of the lease. */
	if (l->n == 1)
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
	unsigned n = 0;

	for (struct lease *x = l->head; x; x = x->next)
		if (x->uid == uid)
			n++;
	return n;
}

void leases_release_lease(struct leases *l, struct lease *x, const char *reason)
{
	struct lease_stats *s;
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

	held = usec_sub_unsigned(l->now(CLOCK_BOOTTIME), x->since);
	s = x->stats;
	stats_unlink(l, s);
	stats_push_front(l, s);
	s->active--;
	s->total = usec_add(s->total, held);
	if (held > s->max)
		s->max = held;
	s->last_change = l->now(CLOCK_REALTIME);
	if (l->n == 0)
		notify(l, LEASE_UNHELD, x, reason);
	lease_free(x);
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
