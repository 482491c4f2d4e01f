/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "leases.h"
#include "system-uid.h"

static usec_t fake_boottime = 1000 * USEC_PER_SEC;

static usec_t fake_now(clockid_t clock)
{
	/* Realtime is only for display; keep it a fixed offset from boottime. */
	return clock == CLOCK_REALTIME ? fake_boottime + 1700000000 * USEC_PER_SEC : fake_boottime;
}

struct ctx {
	struct leases l;
	int changes;
	bool held;
	char released[256];
	char events[512]; /* one letter per event, in order */
};

static void on_event(struct leases *l, enum lease_event ev, struct lease *x, const char *reason, void *userdata)
{
	struct ctx *c = userdata;
	size_t n;

	(void)l;
	n = strlen(c->events);
	if (n + 1 < sizeof(c->events)) {
		c->events[n] = "HADRU"[ev];
		c->events[n + 1] = 0;
	}
	switch (ev) {
	case LEASE_HELD:
	case LEASE_UNHELD:
		c->changes++;
		c->held = ev == LEASE_HELD;
		/* The count already includes the new lease, or no longer the last one that holds. */
		assert_int_equal(leases_holding(l), ev == LEASE_HELD);
		/* With every lease one that holds with the lid closed too, that is the first or the last. */
		if (l->n_lid == l->n)
			assert_int_equal(l->n, ev == LEASE_HELD ? 1 : 0);
		break;
	case LEASE_RELEASED:
		n = strlen(c->released);
		/* The lease is still whole, and still counted, when the front end hears of it. */
		snprintf(c->released + n, sizeof(c->released) - n, "%s:%s:%s;", x->name, reason, (char *)x->data);
		assert_non_null(leases_find(l, x->id));
		break;
	default:
		break;
	}
}

static int setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	leases_init(&x->l);
	assert_int_equal(leases_observe(&x->l, on_event, x), 0);
	x->l.now = fake_now;
	fake_boottime = 1000 * USEC_PER_SEC;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *x = *state;

	leases_done(&x->l);
	free(x);
	return 0;
}

static void test_acquire_release_transitions(void **state)
{
	struct ctx *x = *state;
	uint64_t a, b;

	assert_int_equal(leases_acquire(&x->l, "music", ":1.5", "playing", 1000, 42, USEC_INFINITY, &a), 0);
	assert_int_equal(x->changes, 1);
	assert_true(x->held);
	/* A second lease does not toggle the kernel lock again. */
	assert_int_equal(leases_acquire(&x->l, "backup", ":1.6", "", 0, 43, USEC_INFINITY, &b), 0);
	assert_int_equal(x->changes, 1);
	assert_int_not_equal(a, b);
	assert_int_equal(x->l.n, 2);

	assert_int_equal(leases_release(&x->l, a, "released"), 0);
	assert_int_equal(x->changes, 1);
	assert_true(x->held);
	assert_int_equal(leases_release(&x->l, a, "released"), -ENOENT);
	assert_int_equal(leases_release(&x->l, b, "released"), 0);
	assert_int_equal(x->changes, 2);
	assert_false(x->held);
	assert_int_equal(x->l.n, 0);
}

static void test_find_and_fields(void **state)
{
	struct ctx *x = *state;
	struct lease *l;
	uint64_t id;

	assert_int_equal(leases_acquire(&x->l, "dl", ":1.9", "download", 1000, 77, 2000 * USEC_PER_SEC, &id), 0);
	l = leases_find(&x->l, id);
	assert_non_null(l);
	assert_string_equal(l->name, "dl");
	assert_string_equal(l->owner, ":1.9");
	assert_string_equal(l->why, "download");
	assert_int_equal(l->uid, 1000);
	assert_int_equal(l->pid, 77);
	assert_int_equal(l->since, 1000 * USEC_PER_SEC);
	assert_int_equal(l->deadline, 2000 * USEC_PER_SEC);
	assert_null(leases_find(&x->l, id + 1));
}

static void test_deadline_expiry(void **state)
{
	struct ctx *x = *state;
	uint64_t a, b, c;

	assert_int_equal(leases_acquire(&x->l, "a", "", "", 0, 0, 1010 * USEC_PER_SEC, &a), 0);
	assert_int_equal(leases_acquire(&x->l, "b", "", "", 0, 0, 1005 * USEC_PER_SEC, &b), 0);
	assert_int_equal(leases_acquire(&x->l, "c", "", "", 0, 0, USEC_INFINITY, &c), 0);
	assert_int_equal(leases_next_deadline(&x->l), 1005 * USEC_PER_SEC);

	fake_boottime = 1004 * USEC_PER_SEC;
	assert_int_equal(leases_expire(&x->l), 1005 * USEC_PER_SEC);
	assert_int_equal(x->l.n, 3);

	fake_boottime = 1005 * USEC_PER_SEC;
	assert_int_equal(leases_expire(&x->l), 1010 * USEC_PER_SEC);
	assert_null(leases_find(&x->l, b));
	assert_int_equal(x->l.n, 2);

	fake_boottime = 2000 * USEC_PER_SEC;
	assert_int_equal(leases_expire(&x->l), USEC_INFINITY);
	assert_null(leases_find(&x->l, a));
	assert_non_null(leases_find(&x->l, c));
	assert_true(x->held);
	assert_int_equal(leases_release(&x->l, c, "released"), 0);
	assert_false(x->held);
}

static void test_stats(void **state)
{
	struct ctx *x = *state;
	const struct lease_stats *s;
	uint64_t a, b;

	assert_int_equal(leases_acquire(&x->l, "sync", "", "", 0, 0, USEC_INFINITY, &a), 0);
	fake_boottime += 3 * USEC_PER_SEC;
	assert_int_equal(leases_acquire(&x->l, "sync", "", "", 0, 0, USEC_INFINITY, &b), 0);
	s = leases_stats_find(&x->l, "sync");
	assert_non_null(s);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->active, 2);
	fake_boottime += 1 * USEC_PER_SEC;
	assert_int_equal(leases_release(&x->l, b, "released"), 0); /* held 1 s */
	fake_boottime += 6 * USEC_PER_SEC;
	assert_int_equal(leases_release(&x->l, a, "released"), 0); /* held 10 s */
	s = leases_stats_find(&x->l, "sync");
	assert_int_equal(s->count, 2);
	assert_int_equal(s->active, 0);
	assert_int_equal(s->total, 11 * USEC_PER_SEC);
	assert_int_equal(s->max, 10 * USEC_PER_SEC);
	assert_int_equal(s->last_change, fake_now(CLOCK_REALTIME));
	assert_null(leases_stats_find(&x->l, "other"));
}

static void test_stats_bounded(void **state)
{
	struct ctx *x = *state;
	char name[32];
	uint64_t id, keep;

	/* One active name survives eviction while thousands of others pass through. */
	assert_int_equal(leases_acquire(&x->l, "keeper", "", "", 0, 0, USEC_INFINITY, &keep), 0);
	for (int i = 0; i < 3 * LEASES_STATS_MAX; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(leases_acquire(&x->l, name, "", "", 0, 0, USEC_INFINITY, &id), 0);
		assert_int_equal(leases_release(&x->l, id, "released"), 0);
	}
	assert_true(x->l.n_stats <= LEASES_STATS_MAX);
	assert_non_null(leases_stats_find(&x->l, "keeper"));
	assert_non_null(leases_stats_find(&x->l, "n3071"));
	assert_null(leases_stats_find(&x->l, "n0"));
}

static void test_count_uid(void **state)
{
	struct ctx *x = *state;
	uint64_t id;

	assert_int_equal(leases_acquire(&x->l, "a", "", "", 1000, 0, USEC_INFINITY, &id), 0);
	assert_int_equal(leases_acquire(&x->l, "b", "", "", 1000, 0, USEC_INFINITY, &id), 0);
	assert_int_equal(leases_acquire(&x->l, "c", "", "", 1001, 0, USEC_INFINITY, &id), 0);
	assert_int_equal(leases_count_uid(&x->l, 1000), 2);
	assert_int_equal(leases_count_uid(&x->l, 1001), 1);
	assert_int_equal(leases_count_uid(&x->l, 0), 0);
}

/* The counts are kept, not recounted: they must follow every release, in any order. */
static void test_count_uid_follows_releases(void **state)
{
	struct ctx *x = *state;
	uint64_t ids[6];

	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(leases_acquire(&x->l, "n", "", "", 1000 + i % 3, 0, USEC_INFINITY, &ids[i]), 0);
	assert_int_equal(leases_release(&x->l, ids[0], "test"), 0);
	assert_int_equal(leases_release(&x->l, ids[3], "test"), 0);
	assert_int_equal(leases_count_uid(&x->l, 1000), 0);
	assert_int_equal(leases_count_uid(&x->l, 1001), 2);
	assert_int_equal(leases_count_uid(&x->l, 1002), 2);
	assert_int_equal(leases_release(&x->l, ids[2], "test"), 0);
	assert_int_equal(leases_count_uid(&x->l, 1002), 1);
	assert_int_equal(leases_count_uid(&x->l, 1001), 2);
	assert_int_equal(leases_acquire(&x->l, "n", "", "", 1000, 0, USEC_INFINITY, &ids[0]), 0);
	assert_int_equal(leases_count_uid(&x->l, 1000), 1);
}

static void test_release_reasons(void **state)
{
	struct ctx *x = *state;
	static char fa[] = "fa", fb[] = "fb";
	uint64_t a, b;

	assert_int_equal(leases_acquire(&x->l, "a", "", "", 0, 0, 1001 * USEC_PER_SEC, &a), 0);
	assert_int_equal(leases_acquire(&x->l, "b", "", "", 0, 0, USEC_INFINITY, &b), 0);
	leases_find(&x->l, a)->data = fa;
	leases_find(&x->l, b)->data = fb;
	assert_int_equal(leases_release(&x->l, b, "closed"), 0);
	fake_boottime = 1002 * USEC_PER_SEC;
	leases_expire(&x->l);
	assert_string_equal(x->released, "b:closed:fb;a:expired:fa;");
}

static void test_event_order(void **state)
{
	struct ctx *x = *state;
	uint64_t a, b;

	assert_int_equal(leases_acquire(&x->l, "a", "", "", 0, 0, USEC_INFINITY, &a), 0);
	assert_int_equal(leases_acquire(&x->l, "b", "", "", 0, 0, USEC_INFINITY, &b), 0);
	assert_int_equal(leases_set_deadline(&x->l, b, 2000 * USEC_PER_SEC), 0);
	/* The same deadline again is no event. */
	assert_int_equal(leases_set_deadline(&x->l, b, 2000 * USEC_PER_SEC), 0);
	assert_int_equal(leases_release(&x->l, a, "released"), 0);
	assert_int_equal(leases_release(&x->l, b, "released"), 0);
	/* Held before acquired (the machine is awake before anyone hears), unheld after the last release. */
	assert_string_equal(x->events, "HAADRRU");
}

static char observer_trace[16];

static void trace_first(struct leases *l, enum lease_event ev, struct lease *x, const char *reason, void *userdata)
{
	(void)l, (void)x, (void)reason, (void)userdata;
	if (ev == LEASE_HELD || ev == LEASE_UNHELD)
		strcat(observer_trace, ev == LEASE_HELD ? "H1" : "U1");
}

static void trace_second(struct leases *l, enum lease_event ev, struct lease *x, const char *reason, void *userdata)
{
	(void)l, (void)x, (void)reason, (void)userdata;
	if (ev == LEASE_HELD || ev == LEASE_UNHELD)
		strcat(observer_trace, ev == LEASE_HELD ? "H2" : "U2");
}

/* The first observer holds the machine awake: it hears of "held" first and of "unheld" last. */
static void test_unheld_unwinds_in_reverse(void **state)
{
	struct leases l;
	uint64_t a;

	(void)state;
	observer_trace[0] = 0;
	leases_init(&l);
	assert_int_equal(leases_observe(&l, trace_first, NULL), 0);
	assert_int_equal(leases_observe(&l, trace_second, NULL), 0);
	assert_int_equal(leases_acquire(&l, "a", "", "", 0, 0, USEC_INFINITY, &a), 0);
	assert_int_equal(leases_release(&l, a, "released"), 0);
	assert_string_equal(observer_trace, "H1H2U2U1");
	leases_done(&l);
}

static void test_observer_limit(void **state)
{
	struct ctx *x = *state;

	for (unsigned i = observers_count(&x->l.observers); i < LEASES_OBSERVERS_MAX; i++)
		assert_int_equal(leases_observe(&x->l, on_event, x), 0);
	assert_int_equal(leases_observe(&x->l, on_event, x), -ENOSPC);
}

static void test_restore_keeps_id(void **state)
{
	struct ctx *x = *state;
	struct lease *r;
	uint64_t id;

	/* A lease restored after a restart keeps id and times; new ids come after it. */
	assert_int_equal(leases_acquire_spec(&x->l, &(struct lease_spec){ .name = "kept", .owner = ":1.7", .why = "w",
									  .uid = 1000, .pid = 5, .deadline = USEC_INFINITY,
									  .id = 41, .since = 7 * USEC_PER_SEC,
									  .since_realtime = 8 * USEC_PER_SEC },
					      &r),
			 0);
	assert_int_equal(r->id, 41);
	assert_int_equal(r->since, 7 * USEC_PER_SEC);
	assert_int_equal(r->since_realtime, 8 * USEC_PER_SEC);
	assert_int_equal(leases_acquire(&x->l, "new", "", "", 0, 0, USEC_INFINITY, &id), 0);
	assert_int_equal(id, 42);
}

static void test_stats_saturate(void **state)
{
	struct ctx *x = *state;
	const struct lease_stats *s;

	/* Hold times near 2^64 add up to the maximum instead of wrapping to small numbers. */
	assert_int_equal(leases_stats_add(&x->l, "big", USEC_INFINITY - 10), 0);
	assert_int_equal(leases_stats_add(&x->l, "big", 100), 0);
	s = leases_stats_find(&x->l, "big");
	assert_non_null(s);
	assert_true(s->total == USEC_INFINITY);
	assert_int_equal(s->count, 2);
}

static void test_why_check(void **state)
{
	char problem[160], long_why[LEASE_WHY_MAX + 2];

	(void)state;
	assert_int_equal(lease_why_check("", problem, sizeof(problem)), 0);
	assert_int_equal(lease_why_check("backup to /mnt (nightly)", problem, sizeof(problem)), 0);
	assert_int_equal(lease_why_check("bad\nline", problem, sizeof(problem)), -EINVAL);
	assert_non_null(strstr(problem, "0x0a at offset 3"));
	memset(long_why, 'w', LEASE_WHY_MAX + 1);
	long_why[LEASE_WHY_MAX + 1] = 0;
	assert_int_equal(lease_why_check(long_why, problem, sizeof(problem)), -EINVAL);
	assert_non_null(strstr(problem, "257 bytes long, at most 256"));
	long_why[LEASE_WHY_MAX] = 0;
	assert_int_equal(lease_why_check(long_why, problem, sizeof(problem)), 0);
}

static void test_stats_full_of_active_names(void **state)
{
	struct ctx *x = *state;
	const struct lease_stats *o;
	char name[32];
	uint64_t id, first = 0;

	/* More active names than statistics keep: no lease is refused, the rest are counted together. */
	for (int i = 0; i < LEASES_STATS_MAX + 10; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(leases_acquire(&x->l, name, "", "", 0, 0, USEC_INFINITY, &id), 0);
		if (i == 0)
			first = id;
	}
	assert_int_equal(x->l.n, LEASES_STATS_MAX + 10);
	o = leases_stats_find(&x->l, LEASES_STATS_OTHER);
	assert_non_null(o);
	assert_int_equal(o->active, 10);
	assert_null(leases_stats_find(&x->l, "n1030"));
	assert_non_null(leases_stats_find(&x->l, "n0"));
	for (uint64_t i = first; i < first + LEASES_STATS_MAX + 10; i++)
		assert_int_equal(leases_release(&x->l, i, "released"), 0);
	assert_int_equal(o->active, 0);
	assert_int_equal(o->count, 10);
	assert_int_equal(leases_stats_find(&x->l, "n5")->active, 0);
}

static struct lease *take(struct ctx *c, const char *name, uid_t uid, bool own, bool lid)
{
	struct lease *x;

	assert_int_equal(leases_acquire_spec(&c->l, &(struct lease_spec){ .name = name, .owner = ":1.1", .why = name,
									   .uid = uid, .own = own, .lid = lid,
									   .deadline = USEC_INFINITY },
					     &x),
			 0);
	return x;
}

/*
 * A closed lid: a person's lock (uid past SYSTEM_UID_MAX) waits for the lid
 * to open unless taken with lid; a system user's, the daemon's own and a
 * lid lock hold. HELD and UNHELD follow what holds, not what exists.
 */
static void test_lid_closed(void **state)
{
	struct ctx *c = *state;
	struct lease *a, *b, *s, *x;

	a = take(c, "alice", 1000, false, false);
	assert_string_equal(c->events, "HA");
	assert_false(a->lid);
	leases_set_lid_closed(&c->l, true);
	assert_string_equal(c->events, "HAU");
	assert_false(c->held);
	/* Closing again changes nothing. */
	leases_set_lid_closed(&c->l, true);
	assert_string_equal(c->events, "HAU");
	b = take(c, "bob", UINT32_MAX - 1, false, false);
	assert_string_equal(c->events, "HAUA");
	assert_false(leases_holding(&c->l));
	assert_int_equal(c->l.n, 2);
	assert_int_equal(leases_waiting_for_lid(&c->l), 2);

	/* The last system uid holds; the first person does not (above). */
	s = take(c, "service", SYSTEM_UID_MAX, false, false);
	assert_true(s->lid);
	assert_string_equal(c->events, "HAUAHA");
	leases_release_lease(&c->l, s, "released");
	assert_string_equal(c->events, "HAUAHARU");
	assert_false(c->held);

	/* LidClosed, and the daemon's own hold on a person's behalf. */
	x = take(c, "download", 1000, false, true);
	assert_string_equal(c->events, "HAUAHARUHA");
	assert_int_equal(leases_waiting_for_lid(&c->l), 2);
	leases_release_lease(&c->l, x, "released");
	x = take(c, "timer", 1000, true, false);
	assert_true(x->lid);
	assert_true(c->held);
	leases_release_lease(&c->l, x, "released");
	assert_false(c->held);
	assert_int_equal(c->changes, 8);

	/* Open: the two people's locks hold again, and end it together. */
	leases_set_lid_closed(&c->l, false);
	assert_true(c->held);
	assert_int_equal(c->changes, 9);
	assert_int_equal(leases_waiting_for_lid(&c->l), 0);
	leases_set_lid_closed(&c->l, false);
	assert_int_equal(c->changes, 9);
	leases_release_lease(&c->l, a, "released");
	assert_true(c->held);
	leases_release_lease(&c->l, b, "released");
	assert_false(c->held);
	assert_int_equal(c->changes, 10);
	/* Nothing held: the lid closing or opening announces nothing. */
	leases_set_lid_closed(&c->l, true);
	leases_set_lid_closed(&c->l, false);
	assert_int_equal(c->changes, 10);
	assert_int_equal(c->l.n_lid, 0);
}

/* A lid lock that ends while a person's lock waits: unheld once, held again when the lid opens. */
static void test_lid_lock_ends_while_closed(void **state)
{
	struct ctx *c = *state;
	struct lease *a, *l;

	a = take(c, "alice", 1000, false, false);
	l = take(c, "download", 1000, false, true);
	leases_set_lid_closed(&c->l, true);
	assert_true(c->held);
	assert_int_equal(c->changes, 1);
	leases_release_lease(&c->l, l, "closed");
	assert_false(c->held);
	assert_int_equal(c->changes, 2);
	leases_set_lid_closed(&c->l, false);
	assert_true(c->held);
	leases_release_lease(&c->l, a, "closed");
	assert_false(c->held);
	assert_int_equal(c->changes, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_event_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lid_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lid_lock_ends_while_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_observer_limit, setup, teardown),
		cmocka_unit_test(test_unheld_unwinds_in_reverse),
		cmocka_unit_test_setup_teardown(test_restore_keeps_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_saturate, setup, teardown),
		cmocka_unit_test(test_why_check),
		cmocka_unit_test_setup_teardown(test_stats_full_of_active_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_acquire_release_transitions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_and_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_count_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_count_uid_follows_releases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_reasons, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
