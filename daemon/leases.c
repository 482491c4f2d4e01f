/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "leases.h"
#include "macro.h"

void leases_init(struct leases *l, leases_change_fn on_change, void *userdata)
{
	*l = (struct leases){ .next_id = 1, .on_change = on_change, .userdata = userdata, .now = now };
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

static struct lease_stats *stats_get(struct leases *l, const char *name)
{
	struct lease_stats *s, *victim = NULL;

	for (s = l->stats; s; s = s->next)
		if (strcmp(s->name, name) == 0) {
			/* Keep the list ordered by last change so eviction finds the oldest. */
			stats_unlink(l, s);
			stats_push_front(l, s);
			return s;
		}

	if (l->n_stats >= LEASES_STATS_MAX) {
		for (s = l->stats; s; s = s->next)
			if (s->active == 0)
				victim = s;
		/* Every entry active means more leases than names allowed: refuse. */
		if (!victim)
			return NULL;
		stats_unlink(l, victim);
		free(victim->name);
		free(victim);
		l->n_stats--;
	}
	s = calloc(1, sizeof(*s));
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

const struct lease_stats *leases_stats_find(const struct leases *l, const char *name)
{
	for (const struct lease_stats *s = l->stats; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

int leases_acquire(struct leases *l, const char *name, const char *owner, const char *why, uid_t uid,
		   pid_t pid, usec_t deadline, uint64_t *ret_id)
{
	struct lease *x;
	struct lease_stats *s;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->name = strdup(name);
	x->owner = strdup(owner ? owner : "");
	x->why = strdup(why ? why : "");
	if (!x->name || !x->owner || !x->why) {
		lease_free(x);
		return -ENOMEM;
	}
	s = stats_get(l, name);
	if (!s) {
		lease_free(x);
		return -ENOMEM;
	}
	x->id = l->next_id++;
	x->uid = uid;
	x->pid = pid;
	x->since = l->now(CLOCK_BOOTTIME);
	x->since_realtime = l->now(CLOCK_REALTIME);
	x->deadline = deadline;

	x->prev = l->tail;
	if (l->tail)
		l->tail->next = x;
	else
		l->head = x;
	l->tail = x;
	l->n++;

	s->count++;
	s->active++;
	s->last_change = x->since_realtime;

	if (l->n == 1 && l->on_change)
		l->on_change(l, true, l->userdata);
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

int leases_release(struct leases *l, uint64_t id, const char *reason)
{
	struct lease *x = leases_find(l, id);
	struct lease_stats *s;
	usec_t held;

	if (!x)
		return -ENOENT;
	if (l->on_release)
		l->on_release(l, x, reason, l->userdata);
	if (x->prev)
		x->prev->next = x->next;
	else
		l->head = x->next;
	if (x->next)
		x->next->prev = x->prev;
	else
		l->tail = x->prev;
	l->n--;

	held = l->now(CLOCK_BOOTTIME) - x->since;
	s = stats_get(l, x->name);
	/* stats_get only fails to create; the entry exists while a lease of that name is active. */
	if (s) {
		s->active--;
		s->total += held;
		if (held > s->max)
			s->max = held;
		s->last_change = l->now(CLOCK_REALTIME);
	}
	lease_free(x);

	if (l->n == 0 && l->on_change)
		l->on_change(l, false, l->userdata);
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
	x->deadline = deadline;
	return 0;
}

int leases_stats_add(struct leases *l, const char *name, usec_t held)
{
	struct lease_stats *s = stats_get(l, name);

	if (!s)
		return -ENOMEM;
	s->count++;
	s->total += held;
	if (held > s->max)
		s->max = held;
	s->last_change = l->now(CLOCK_REALTIME);
	return 0;
}
