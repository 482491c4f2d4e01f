/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "idle.h"

void idle_clock_input(struct idle_clock *c, usec_t now_boottime, usec_t asleep_total)
{
	c->last_input = now_boottime;
	c->asleep_at_input = asleep_total;
}

usec_t idle_clock_idle(const struct idle_clock *c, usec_t now_boottime, usec_t asleep_total)
{
	usec_t elapsed, asleep;

	if (now_boottime <= c->last_input)
		return 0;
	elapsed = now_boottime - c->last_input;
	asleep = asleep_total > c->asleep_at_input ? asleep_total - c->asleep_at_input : 0;
	return elapsed > asleep ? elapsed - asleep : 0;
}

bool refresh_limiter_event(struct refresh_limiter *r, usec_t now)
{
	r->last_event = now;
	if (!r->written || now >= r->last_write + r->interval) {
		r->last_write = now;
		r->written = true;
		r->pending = false;
		return true;
	}
	r->pending = true;
	return false;
}

usec_t refresh_limiter_due(const struct refresh_limiter *r)
{
	return r->pending ? r->last_write + r->interval : USEC_INFINITY;
}

void refresh_limiter_flush(struct refresh_limiter *r, usec_t now)
{
	r->last_write = now;
	r->written = true;
	r->pending = false;
}
