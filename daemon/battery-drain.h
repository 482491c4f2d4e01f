/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "battery.h"
#include "time-util.h"

/*
 * Drain asleep against drain awake, over the last hour. Samples are taken
 * just before each state write and just after it returns; the span between
 * two samples is a window, asleep if it held one of our successful suspends,
 * awake otherwise. A window whose CLOCK_BOOTTIME grew more than its
 * CLOCK_MONOTONIC while we called it awake held a suspend that was not ours
 * (systemctl suspend, a lid): its time counts as asleep, its drain nowhere.
 *
 * A window's drain counts only when both ends were on battery, in the same
 * unit and pack size, and the level did not rise: an adapter plugged in
 * and pulled out again inside a window shows as a rise, one still plugged
 * in at either end as on_ac. Windows are spread over one-minute buckets by
 * overlap, so memory stays fixed however often the machine sleeps.
 */
#define BATTERY_DRAIN_BUCKETS 60
#define BATTERY_DRAIN_BUCKET_USEC USEC_PER_MINUTE
/* Less measured time than this gives no rate: capacity moves in whole percent. */
#define BATTERY_DRAIN_MIN_MEASURED_USEC USEC_PER_MINUTE
/* A boottime lead over monotonic beyond this in an awake window is a suspend. */
#define BATTERY_DRAIN_EXTERNAL_SLEEP_USEC USEC_PER_SEC

enum battery_phase {
	BATTERY_PHASE_AWAKE,
	BATTERY_PHASE_ASLEEP,
	_BATTERY_PHASE_MAX,
	_BATTERY_PHASE_INVALID = -22,
};

struct battery_drain_totals {
	double time;          /* usec in this phase, measured or not */
	double measured;      /* usec of windows whose drain counts */
	double drop_percent;  /* drained over those, in percent of the pack */
	double energy_measured; /* usec of those that also had energy */
	double drop_uwh;
};

struct battery_drain_bucket {
	uint64_t index;       /* boottime / BATTERY_DRAIN_BUCKET_USEC, + 1 (0: unused) */
	struct battery_drain_totals phase[_BATTERY_PHASE_MAX];
};

struct battery_drain {
	struct battery_drain_bucket buckets[BATTERY_DRAIN_BUCKETS];
	struct battery_sample last; /* the end of the last window; !last.valid && !have_last: none yet */
	bool have_last;
};

/* -1 where there is no figure. */
struct battery_drain_summary {
	usec_t covered;                            /* time the windows of the last hour span */
	double asleep_share;                       /* 0..1 of covered */
	double percent_per_hour[_BATTERY_PHASE_MAX];
	double milliwatts[_BATTERY_PHASE_MAX];
};

/*
 * The window from the last sample to this one; phase is what the caller
 * knows it was. The first sample only starts a window. Samples that are
 * not valid (no battery) still end a window: its time counts for the
 * asleep share, its drain nowhere.
 */
void battery_drain_sample(struct battery_drain *d, const struct battery_sample *s, enum battery_phase phase);

/* Figures over the hour before now (CLOCK_BOOTTIME). */
void battery_drain_summarize(const struct battery_drain *d, usec_t now, struct battery_drain_summary *ret);

const char *battery_phase_to_string(enum battery_phase p);
