/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "battery-drain.h"

/*
 * The drain math on sample sequences as the daemon records them: a sample
 * before each state write and one after it. Times in seconds from an
 * arbitrary boot, levels in the battery's unit.
 */
#define S(x) ((usec_t)(x) * USEC_PER_SEC)

static struct battery_sample energy(double boot, double mono, uint64_t uwh)
{
	return (struct battery_sample){
		.valid = true, .unit = BATTERY_UNIT_ENERGY, .n_batteries = 1, .now = uwh, .full = 50000000,
		.energy_now = uwh, .energy_full = 50000000,
		.boottime = (usec_t)(boot * USEC_PER_SEC), .monotonic = (usec_t)(mono * USEC_PER_SEC),
	};
}

static void assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-6 * (fabs(want) + 1)) {
		print_error("got %.9g, want %.9g\n", got, want);
		fail();
	}
}

/* Ten minutes awake losing 3 % of 50 Wh, then twenty asleep losing 0.2 %. */
static void test_energy(void **state)
{
	struct battery_drain d = {};
	struct battery_drain_summary s;
	struct battery_sample a = energy(1000, 1000, 42000000), b = energy(1600, 1600, 40500000),
			      c = energy(2800, 1602, 40400000);

	(void)state;
	battery_drain_sample(&d, &a, BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, b.boottime, &s);
	/* One sample is no window yet. */
	assert_int_equal(s.covered, 0);
	assert_near(s.asleep_share, -1);
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], -1);

	battery_drain_sample(&d, &b, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &c, BATTERY_PHASE_ASLEEP);
	battery_drain_summarize(&d, c.boottime, &s);
	assert_int_equal(s.covered, S(1800));
	/* Asleep: the 1198 s that boottime ran ahead of monotonic. */
	assert_near(s.asleep_share, 1198.0 / 1800.0);
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], 3.0 * 6);
	assert_near(s.milliwatts[BATTERY_PHASE_AWAKE], 1.5 * 6 * 1000);
	assert_near(s.percent_per_hour[BATTERY_PHASE_ASLEEP], 0.2 * 3);
	assert_near(s.milliwatts[BATTERY_PHASE_ASLEEP], 0.1 * 3 * 1000);
}

/* Charge without a voltage: %/h, no mW. */
static void test_charge_only(void **state)
{
	struct battery_drain d = {};
	struct battery_drain_summary s;
	struct battery_sample a = { .valid = true, .unit = BATTERY_UNIT_CHARGE, .now = 3000000, .full = 4000000,
				    .boottime = S(10), .monotonic = S(10) };
	struct battery_sample b = a;

	(void)state;
	b.now = 2900000; /* 2.5 % */
	b.boottime = b.monotonic = S(10 + 1800);
	battery_drain_sample(&d, &a, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &b, BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, b.boottime, &s);
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], 5.0);
	assert_near(s.milliwatts[BATTERY_PHASE_AWAKE], -1);
	assert_near(s.percent_per_hour[BATTERY_PHASE_ASLEEP], -1);
	assert_near(s.asleep_share, 0);
}

/* Capacity alone: whole percent, summed over many short windows. */
static void test_capacity_only(void **state)
{
	struct battery_drain d = {};
	struct battery_drain_summary s;
	struct battery_sample x = { .valid = true, .unit = BATTERY_UNIT_CAPACITY, .now = 80, .full = 100,
				    .boottime = S(100), .monotonic = S(100) };
	usec_t mono = S(100);

	(void)state;
	battery_drain_sample(&d, &x, BATTERY_PHASE_AWAKE);
	/* 30 cycles of 20 s awake, 40 s asleep; one percent lost awake every 10 cycles. */
	for (int i = 1; i <= 30; i++) {
		x.boottime += S(20);
		mono += S(20);
		x.monotonic = mono;
		if (i % 10 == 0)
			x.now--;
		battery_drain_sample(&d, &x, BATTERY_PHASE_AWAKE);
		x.boottime += S(40);
		mono += S(1);
		x.monotonic = mono;
		battery_drain_sample(&d, &x, BATTERY_PHASE_ASLEEP);
	}
	battery_drain_summarize(&d, x.boottime, &s);
	/* 3 % over 600 s awake; nothing over 1200 s asleep. */
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], 18.0);
	assert_near(s.percent_per_hour[BATTERY_PHASE_ASLEEP], 0.0);
	assert_near(s.milliwatts[BATTERY_PHASE_ASLEEP], -1);
	assert_near(s.asleep_share, 30 * 39.0 / 1800.0);
}

/*
 * An adapter plugged in mid-window, and one plugged in and pulled out again
 * inside a window: none of those windows count, the ones around them do.
 */
static void test_ac_mid_window(void **state)
{
	struct battery_drain d = {};
	struct battery_drain_summary s;
	struct battery_sample seq[] = {
		energy(0, 0, 40000000),
		energy(600, 600, 39000000),  /* 10 min awake, 2 %: counts */
		energy(1200, 1200, 39500000), /* plugged in: ends on AC */
		energy(1800, 1800, 45000000), /* charging all along */
		energy(2400, 2400, 44500000), /* starts on AC (1 % less: a charger's drain would differ) */
		energy(3000, 3000, 45000000), /* plugged and pulled inside: it rose */
		energy(3600, 3600, 44000000), /* 10 min, 2 %: counts */
	};

	(void)state;
	seq[2].on_ac = true;
	seq[3].on_ac = true;
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		battery_drain_sample(&d, &seq[i], BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, seq[6].boottime, &s);
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], 4.0 / (20.0 / 60.0));
	assert_near(s.milliwatts[BATTERY_PHASE_AWAKE], 2.0 / (20.0 / 60.0) * 1000);
	assert_int_equal(s.covered, S(3600));

	/* On AC from start to end: no figure at all. */
	memset(&d, 0, sizeof(d));
	for (size_t i = 2; i < 4; i++)
		battery_drain_sample(&d, &seq[i], BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, seq[3].boottime, &s);
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], -1);
	assert_near(s.asleep_share, 0);
}

/* A suspend that is not ours inside an awake window: its time is asleep, its drain nowhere. */
static void test_external_suspend(void **state)
{
	struct battery_drain d = {};
	struct battery_drain_summary s;
	struct battery_sample a = energy(0, 0, 40000000), b = energy(600, 600, 39000000),
			      c = energy(2400, 660, 38900000);

	(void)state;
	battery_drain_sample(&d, &a, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &b, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &c, BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, c.boottime, &s);
	assert_near(s.asleep_share, 1740.0 / 2400.0);
	/* Only the first window: 2 % in 10 min. */
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], 12.0);
	assert_near(s.percent_per_hour[BATTERY_PHASE_ASLEEP], -1);
}

/* Only the last hour counts; a long sleep costs no more than the minutes it shows in. */
static void test_last_hour(void **state)
{
	struct battery_drain d = {};
	struct battery_drain_summary s;
	struct battery_sample a = energy(0, 0, 50000000), b = energy(600, 600, 40000000), /* 20 %: old */
			      c = energy(600 + 8 * 3600, 602, 39900000), /* a night asleep */
			      e = energy(600 + 8 * 3600 + 1200, 1802, 39400000);

	(void)state;
	battery_drain_sample(&d, &a, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &b, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &c, BATTERY_PHASE_ASLEEP);
	battery_drain_sample(&d, &e, BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, e.boottime, &s);
	/* The hour: 40 min of the night's sleep, then 20 min awake losing 1 %. */
	assert_int_equal(s.covered, S(3600));
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], 3.0);
	assert_near(s.asleep_share, 2400.0 * 28798.0 / 28800.0 / 3600.0);
	/* The night lost 0.2 % in 8 h; its last 40 min show 1/12 of that. */
	assert_near(s.percent_per_hour[BATTERY_PHASE_ASLEEP], 0.2 / 8.0);

	/* Two hours on, nothing is left. */
	battery_drain_summarize(&d, e.boottime + 2 * USEC_PER_HOUR, &s);
	assert_int_equal(s.covered, 0);
	assert_near(s.asleep_share, -1);
}

/* Under a minute measured gives no rate; clocks that run backwards restart. */
static void test_edges(void **state)
{
	struct battery_drain d = {};
	struct battery_drain_summary s;
	struct battery_sample a = energy(100, 100, 40000000), b = energy(130, 130, 39000000),
			      back = energy(50, 50, 30000000);
	usec_t top = UINT64_MAX - 3 * USEC_PER_HOUR;
	struct battery_sample h0 = energy(0, 0, 40000000), h1 = energy(0, 0, 39000000);

	(void)state;
	battery_drain_sample(&d, &a, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &b, BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, b.boottime, &s);
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], -1);
	assert_int_equal(s.covered, S(30));
	battery_drain_sample(&d, &back, BATTERY_PHASE_AWAKE);
	assert_int_equal(d.last.boottime, back.boottime);
	battery_drain_summarize(&d, b.boottime, &s);
	assert_int_equal(s.covered, S(30));

	/* Clocks near 2^64: no wrap in the bucket arithmetic. */
	memset(&d, 0, sizeof(d));
	h0.boottime = h0.monotonic = top;
	h1.boottime = h1.monotonic = top + USEC_PER_HOUR;
	battery_drain_sample(&d, &h0, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &h1, BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, h1.boottime, &s);
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], 2.0);

	/* Not valid (no battery): time only. */
	memset(&d, 0, sizeof(d));
	a.valid = b.valid = false;
	b.boottime = b.monotonic = S(400);
	battery_drain_sample(&d, &a, BATTERY_PHASE_AWAKE);
	battery_drain_sample(&d, &b, BATTERY_PHASE_AWAKE);
	battery_drain_summarize(&d, b.boottime, &s);
	assert_int_equal(s.covered, S(300));
	assert_near(s.percent_per_hour[BATTERY_PHASE_AWAKE], -1);
	assert_string_equal(battery_phase_to_string(BATTERY_PHASE_ASLEEP), "asleep");
	assert_null(battery_phase_to_string(_BATTERY_PHASE_INVALID));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_energy),
		cmocka_unit_test(test_charge_only),
		cmocka_unit_test(test_capacity_only),
		cmocka_unit_test(test_ac_mid_window),
		cmocka_unit_test(test_external_suspend),
		cmocka_unit_test(test_last_hour),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
