/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "observers.h"

/*
 * Each observer is a struct probe: it appends its letter to the round's
 * trace, and may then act on the list (leave, make another leave, add one,
 * start a nested round), as a module that goes away while told of an event
 * would.
 */
struct probe;
struct world {
	struct observers o;
	char trace[128];
};

struct probe {
	struct world *w;
	char letter;
	void (*action)(struct probe *self); /* once, the first time it is called */
	struct probe *other;
	bool done;
};

typedef void (*probe_fn)(struct probe *p, void *ctx);

static void on_event(struct probe *p, void *ctx)
{
	size_t n = strlen(p->w->trace);

	(void)ctx;
	assert_true(n + 1 < sizeof(p->w->trace));
	p->w->trace[n] = p->letter;
	p->w->trace[n + 1] = '\0';
	if (p->action && !p->done) {
		p->done = true;
		p->action(p);
	}
}

static void call(observer_fn fn, void *userdata, void *ctx)
{
	((probe_fn)fn)(userdata, ctx);
}

static void add(struct world *w, struct probe *p)
{
	p->w = w;
	assert_int_equal(observers_add(&w->o, (observer_fn)on_event, p), 0);
}

static const char *round_trace(struct world *w, bool reverse)
{
	w->trace[0] = '\0';
	observers_notify(&w->o, reverse, call, NULL);
	return w->trace;
}

static void leave_self(struct probe *p)
{
	observers_remove(&p->w->o, (observer_fn)on_event, p);
}

static void remove_other(struct probe *p)
{
	observers_remove(&p->w->o, (observer_fn)on_event, p->other);
}

static void add_other(struct probe *p)
{
	add(p->w, p->other);
}

static void nested_round(struct probe *p)
{
	observers_notify(&p->w->o, false, call, NULL);
}

static void test_order_and_reverse(void **state)
{
	struct world w = { 0 };
	struct probe a = { .letter = 'a' }, b = { .letter = 'b' }, c = { .letter = 'c' };

	(void)state;
	add(&w, &a);
	add(&w, &b);
	add(&w, &c);
	assert_string_equal(round_trace(&w, false), "abc");
	assert_string_equal(round_trace(&w, true), "cba");
	assert_int_equal(observers_count(&w.o), 3);
}

/* The old list moved entries down at once: the one after the leaver was skipped. */
static void test_leave_during_round_skips_none(void **state)
{
	struct world w = { 0 };
	struct probe a = { .letter = 'a', .action = leave_self }, b = { .letter = 'b' }, c = { .letter = 'c' };

	(void)state;
	add(&w, &a);
	add(&w, &b);
	add(&w, &c);
	assert_string_equal(round_trace(&w, false), "abc");
	assert_int_equal(observers_count(&w.o), 2);
	assert_int_equal(w.o.n, 2); /* compacted once the round ended */
	assert_string_equal(round_trace(&w, false), "bc");
}

/* Reverse rounds too: leaving moves nothing under the walk. */
static void test_leave_during_reverse_round(void **state)
{
	struct world w = { 0 };
	struct probe a = { .letter = 'a' }, b = { .letter = 'b' }, c = { .letter = 'c', .action = leave_self };

	(void)state;
	add(&w, &a);
	add(&w, &b);
	add(&w, &c);
	assert_string_equal(round_trace(&w, true), "cba");
	assert_string_equal(round_trace(&w, true), "ba");
}

/* One made to leave by another is not called later in the same round. */
static void test_removed_later_not_called(void **state)
{
	struct world w = { 0 };
	struct probe a = { .letter = 'a' }, b = { .letter = 'b' }, c = { .letter = 'c' };

	(void)state;
	a.action = remove_other;
	a.other = &c;
	add(&w, &a);
	add(&w, &b);
	add(&w, &c);
	assert_string_equal(round_trace(&w, false), "ab");
	assert_string_equal(round_trace(&w, false), "ab");
	assert_int_equal(observers_count(&w.o), 2);
}

/* One that joins during a round is first told in the next. */
static void test_join_during_round(void **state)
{
	struct world w = { 0 };
	struct probe a = { .letter = 'a' }, b = { .letter = 'b' }, d = { .letter = 'd' };

	(void)state;
	a.action = add_other;
	a.other = &d;
	add(&w, &a);
	add(&w, &b);
	assert_string_equal(round_trace(&w, false), "ab");
	assert_string_equal(round_trace(&w, false), "abd");
}

/*
 * A nested round (an observer that causes another event) sees the leaver
 * gone, and the outer round goes on without skipping; the list is compacted
 * once, when the outer round ends.
 */
static void test_nested_round(void **state)
{
	struct world w = { 0 };
	struct probe a = { .letter = 'a', .action = leave_self }, b = { .letter = 'b', .action = nested_round },
		     c = { .letter = 'c' };

	(void)state;
	add(&w, &a);
	add(&w, &b);
	add(&w, &c);
	/* a leaves; b starts a round of b and c; then the outer round reaches c. */
	assert_string_equal(round_trace(&w, false), "abbcc");
	assert_int_equal(w.o.n, 2);
	assert_int_equal(w.o.depth, 0);
}

static void test_limit_and_unknown(void **state)
{
	struct world w = { 0 };
	struct probe p[OBSERVERS_MAX + 1] = { 0 }, stranger = { .letter = 'z' };

	(void)state;
	for (unsigned i = 0; i < OBSERVERS_MAX; i++) {
		p[i].letter = (char)('a' + i);
		add(&w, &p[i]);
	}
	p[OBSERVERS_MAX].w = &w;
	p[OBSERVERS_MAX].letter = (char)('a' + OBSERVERS_MAX);
	assert_int_equal(observers_add(&w.o, (observer_fn)on_event, &p[OBSERVERS_MAX]), -ENOSPC);
	/* Removing what is not there changes nothing. */
	observers_remove(&w.o, (observer_fn)on_event, &stranger);
	assert_int_equal(observers_count(&w.o), OBSERVERS_MAX);
	observers_remove(&w.o, (observer_fn)on_event, &p[0]);
	assert_int_equal(observers_add(&w.o, (observer_fn)on_event, &p[OBSERVERS_MAX]), 0);
	assert_string_equal(round_trace(&w, false), "bcdefghi");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_reverse),
		cmocka_unit_test(test_leave_during_round_skips_none),
		cmocka_unit_test(test_leave_during_reverse_round),
		cmocka_unit_test(test_removed_later_not_called),
		cmocka_unit_test(test_join_during_round),
		cmocka_unit_test(test_nested_round),
		cmocka_unit_test(test_limit_and_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
