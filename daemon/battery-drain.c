/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "battery-drain.h"
#include "string-table.h"

static const char *const phase_names[_BATTERY_PHASE_MAX] = {
	[BATTERY_PHASE_AWAKE] = "awake",
	[BATTERY_PHASE_ASLEEP] = "asleep",
};

DEFINE_STRING_TABLE_TO_STRING(battery_phase, enum battery_phase, phase_names, _BATTERY_PHASE_MAX)

static struct battery_drain_bucket *bucket(struct battery_drain *d, uint64_t index)
{
	struct battery_drain_bucket *b = &d->buckets[index % BATTERY_DRAIN_BUCKETS];

	if (b->index != index + 1) {
		memset(b, 0, sizeof(*b));
		b->index = index + 1;
	}
	return b;
}

/* What one window adds to a phase, before it is spread over buckets. */
struct window {
	double time[_BATTERY_PHASE_MAX];
	enum battery_phase phase; /* where drain goes */
	bool measured, energy;
	double drop_percent, drop_uwh;
};

/*
 * Spread the window [start, end) over the buckets it overlaps, in
 * proportion. Only the last BATTERY_DRAIN_BUCKETS minutes can ever be
 * summarized, so a night asleep costs no more than a minute.
 */
static void spread(struct battery_drain *d, usec_t start, usec_t end, const struct window *w)
{
	uint64_t first = start / BATTERY_DRAIN_BUCKET_USEC, last = (end - 1) / BATTERY_DRAIN_BUCKET_USEC;
	double span = (double)(end - start);

	if (last - first >= BATTERY_DRAIN_BUCKETS)
		first = last - (BATTERY_DRAIN_BUCKETS - 1);
	for (uint64_t i = first; i <= last; i++) {
		usec_t b0 = i * BATTERY_DRAIN_BUCKET_USEC, b1 = usec_add(b0, BATTERY_DRAIN_BUCKET_USEC);
		usec_t o0 = start > b0 ? start : b0, o1 = end < b1 ? end : b1;
		double f = (double)(o1 - o0) / span;
		struct battery_drain_bucket *b = bucket(d, i);
		struct battery_drain_totals *t = &b->phase[w->phase];

		for (enum battery_phase p = 0; p < _BATTERY_PHASE_MAX; p++)
			b->phase[p].time += f * w->time[p];
		if (w->measured) {
			t->measured += f * span;
			t->drop_percent += f * w->drop_percent;
		}
		if (w->energy) {
			t->energy_measured += f * span;
			t->drop_uwh += f * w->drop_uwh;
		}
	}
}

void battery_drain_sample(struct battery_drain *d, const struct battery_sample *s, enum battery_phase phase)
{
	const struct battery_sample *a = &d->last;
	struct window w = { .phase = phase };
	usec_t span, run, slept;

	if (!d->have_last || s->boottime <= a->boottime || s->monotonic < a->monotonic) {
		/* The first sample, or clocks that went backwards (a test, a bug): restart. */
		d->last = *s;
		d->have_last = true;
		return;
	}
	span = s->boottime - a->boottime;
	run = s->monotonic - a->monotonic;
	/* CLOCK_BOOTTIME runs in suspend, CLOCK_MONOTONIC does not. */
	slept = span > run ? span - run : 0;
	w.time[BATTERY_PHASE_ASLEEP] = (double)slept;
	w.time[BATTERY_PHASE_AWAKE] = (double)(span - slept);
	if (phase == BATTERY_PHASE_AWAKE && slept > BATTERY_DRAIN_EXTERNAL_SLEEP_USEC) {
		/* Somebody else's suspend: time yes, drain no (half of it was asleep). */
	} else if (a->valid && s->valid && !a->on_ac && !s->on_ac && a->unit == s->unit && a->full == s->full &&
		   s->now <= a->now) {
		w.measured = true;
		w.drop_percent = (double)(a->now - s->now) * 100.0 / (double)a->full;
		if (a->energy_full > 0 && a->energy_full == s->energy_full && s->energy_now <= a->energy_now) {
			w.energy = true;
			w.drop_uwh = (double)(a->energy_now - s->energy_now);
		}
	}
	spread(d, a->boottime, s->boottime, &w);
	d->last = *s;
}

void battery_drain_summarize(const struct battery_drain *d, usec_t now, struct battery_drain_summary *ret)
{
	struct battery_drain_totals sum[_BATTERY_PHASE_MAX] = {};
	struct battery_drain_summary out = {
		.asleep_share = -1,
		.percent_per_hour = { -1, -1 },
		.milliwatts = { -1, -1 },
	};
	/* The minute holding the last microsecond before now, and the 59 before it. */
	uint64_t current = (now > 0 ? now - 1 : 0) / BATTERY_DRAIN_BUCKET_USEC + 1;
	double covered;

	for (unsigned i = 0; i < BATTERY_DRAIN_BUCKETS; i++) {
		const struct battery_drain_bucket *b = &d->buckets[i];

		if (b->index == 0 || b->index > current || current - b->index >= BATTERY_DRAIN_BUCKETS)
			continue;
		for (enum battery_phase p = 0; p < _BATTERY_PHASE_MAX; p++) {
			sum[p].time += b->phase[p].time;
			sum[p].measured += b->phase[p].measured;
			sum[p].drop_percent += b->phase[p].drop_percent;
			sum[p].energy_measured += b->phase[p].energy_measured;
			sum[p].drop_uwh += b->phase[p].drop_uwh;
		}
	}
	covered = sum[BATTERY_PHASE_AWAKE].time + sum[BATTERY_PHASE_ASLEEP].time;
	out.covered = (usec_t)(covered + 0.5);
	if (covered > 0)
		out.asleep_share = sum[BATTERY_PHASE_ASLEEP].time / covered;
	for (enum battery_phase p = 0; p < _BATTERY_PHASE_MAX; p++) {
		if (sum[p].measured >= (double)BATTERY_DRAIN_MIN_MEASURED_USEC)
			out.percent_per_hour[p] = sum[p].drop_percent * (double)USEC_PER_HOUR / sum[p].measured;
		/* uWh per usec is W; per hour of it, uWh/h = uW; /1000 = mW. */
		if (sum[p].energy_measured >= (double)BATTERY_DRAIN_MIN_MEASURED_USEC)
			out.milliwatts[p] = sum[p].drop_uwh * (double)USEC_PER_HOUR / sum[p].energy_measured / 1000.0;
	}
	*ret = out;
}
