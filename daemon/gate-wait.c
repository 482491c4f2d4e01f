/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "gate-wait.h"
#include "log.h"
#include "macro.h"
#include "peers.h"
#include "suspender.h"

enum wait_state {
	WAIT_WAITING,
	WAIT_PASSED,
	WAIT_TIMED_OUT,
};

struct gate_wait {
	struct gate_waits *g;
	struct gate_wait *next;
	sd_bus_message *m;
	uint64_t ticket;
	sd_event_source *timer;
	enum wait_state state;
	bool hold;
};

struct gate_waits {
	sd_event *event;
	struct suspender *suspender;
	struct peers *peers;
	usec_t bound;
	void (*unheld)(void *userdata);
	void *userdata;
	struct gate_wait *head;
	unsigned n;
	unsigned holds;
};

int gate_waits_new(sd_event *event, struct suspender *s, struct peers *peers, usec_t bound,
		   void (*unheld)(void *userdata), void *userdata, struct gate_waits **ret)
{
	struct gate_waits *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->event = sd_event_ref(event);
	g->suspender = s;
	g->peers = peers;
	g->bound = bound;
	g->unheld = unheld;
	g->userdata = userdata;
	*ret = g;
	return 0;
}

static void hold_end(struct gate_waits *g)
{
	if (g->holds > 0 && --g->holds == 0 && g->unheld)
		g->unheld(g->userdata);
}

static void wait_unlink(struct gate_wait *w)
{
	struct gate_waits *g = w->g;

	for (struct gate_wait **p = &g->head; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			g->n--;
			break;
		}
	w->timer = sd_event_source_disable_unref(w->timer);
	sd_bus_message_unref(w->m);
	free(w);
}

/* Back round to its handler; if that cannot be, the call was answered with the error and its hold ends. */
static void wait_redispatch(struct gate_wait *w)
{
	struct gate_waits *g = w->g;

	w->timer = sd_event_source_disable_unref(w->timer);
	if (peers_redispatch(w->m) >= 0)
		return;
	peers_give_up(g->peers, w->m);
	if (w->hold && w->state == WAIT_PASSED)
		hold_end(g);
	wait_unlink(w);
}

static int on_bound(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct gate_wait *w = userdata;

	(void)s;
	(void)usec;
	log_warning("%s of %s waited %" PRIu64 " ms for the suspend under way to return; giving up",
		    strna(sd_bus_message_get_member(w->m)), strna(sd_bus_message_get_sender(w->m)),
		    (uint64_t)(w->g->bound / USEC_PER_MSEC));
	w->state = WAIT_TIMED_OUT;
	/* Its hold ends now: the call fails, and nothing should keep the gate closed for it. */
	if (w->hold)
		hold_end(w->g);
	wait_redispatch(w);
	return 0;
}

void gate_waits_passed(struct gate_waits *g, uint64_t gate_exits)
{
	struct gate_wait *w, *next;

	for (w = g->head; w; w = next) {
		next = w->next;
		if (w->state != WAIT_WAITING || w->ticket > gate_exits)
			continue;
		w->state = WAIT_PASSED;
		wait_redispatch(w);
	}
}

static struct gate_wait *wait_find(struct gate_waits *g, sd_bus_message *m)
{
	for (struct gate_wait *w = g->head; w; w = w->next)
		if (w->m == m)
			return w;
	return NULL;
}

bool gate_wait_known(struct gate_waits *g, sd_bus_message *m)
{
	return wait_find(g, m) != NULL;
}

int gate_wait_resume(struct gate_waits *g, sd_bus_message *m, const char *outcome, sd_bus_error *error)
{
	struct gate_wait *w = wait_find(g, m);

	if (!w)
		return GATE_FRESH;
	if (w->state == WAIT_WAITING) {
		/* Dispatched again by someone else while it waits: it keeps waiting, and its sender behind it. */
		peers_wait(g->peers, m);
		return GATE_PARKED;
	}
	if (w->state == WAIT_PASSED) {
		/* The hold, if any, goes to the caller. */
		wait_unlink(w);
		return GATE_PASSED;
	}
	wait_unlink(w);
	(void)sd_bus_error_setf(error, BUS_ERROR_SUSPEND_IN_PROGRESS,
				"A suspend under way did not return within %" PRIu64 " ms (WaitForResumeSec=): %s",
				(uint64_t)(g->bound / USEC_PER_MSEC), outcome);
	return -ETIME;
}

int gate_wait(struct gate_waits *g, sd_bus_message *m, bool hold, sd_bus_error *error)
{
	struct gate_wait *w;
	uint64_t ticket;
	int r;

	if (hold && g->holds++ == 0)
		suspender_set_blocked(g->suspender, true);
	ticket = suspender_barrier(g->suspender);
	if (ticket == 0)
		return 1;
	if (g->n >= GATE_WAITS_MAX) {
		r = sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
				      "Too many calls wait for the suspend under way to return: at most %u",
				      GATE_WAITS_MAX);
		goto fail;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		r = -ENOMEM;
		goto fail;
	}
	*w = (struct gate_wait){ .g = g, .m = sd_bus_message_ref(m), .ticket = ticket, .hold = hold };
	/* Monotonic: time asleep does not count, only the awake time the write takes. */
	r = sd_event_add_time_relative(g->event, &w->timer, CLOCK_MONOTONIC, g->bound, 0, on_bound, w);
	if (r < 0) {
		sd_bus_message_unref(w->m);
		free(w);
		goto fail;
	}
	w->next = g->head;
	g->head = w;
	g->n++;
	peers_wait(g->peers, m);
	log_debug("%s of %s waits for the state write under way (gate exit %" PRIu64 ")",
		  strna(sd_bus_message_get_member(m)), strna(sd_bus_message_get_sender(m)), ticket);
	return 0;
fail:
	if (hold)
		hold_end(g);
	return r;
}

void gate_wait_unhold(struct gate_waits *g)
{
	hold_end(g);
}

unsigned gate_wait_holds(const struct gate_waits *g)
{
	return g ? g->holds : 0;
}

struct gate_waits *gate_waits_free(struct gate_waits *g)
{
	if (!g)
		return NULL;
	while (g->head) {
		struct gate_wait *w = g->head;

		(void)sd_bus_reply_method_errorf(w->m, SD_BUS_ERROR_FAILED,
						 "autosleepd is stopping while a suspend is under way");
		wait_unlink(w);
	}
	/* No callback now: the manager is going away. */
	g->holds = 0;
	sd_event_unref(g->event);
	free(g);
	return NULL;
}
