/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * autosleepctl soak's records and report, apart from the bus and the
 * kernel so that tests can feed them fixture data: one cycle as one JSON
 * line (cycles.jsonl), read back for reports and --compare, a summary by
 * result class with latency percentiles, and the report files (report.md,
 * report.svg, report.html).
 */
#define SOAK_TEXT_MAX 2048

enum soak_class {
	SOAK_CLASS_SUCCESS,
	SOAK_CLASS_BLOCKED,
	SOAK_CLASS_EARLY_CANCEL,
	SOAK_CLASS_LATE_CANCEL,
	SOAK_CLASS_FAILURE,
	SOAK_CLASS_ALARM_NOT_CLEARED,
	SOAK_CLASS_HANG,
	SOAK_CLASS_ALARM_IMMINENT, /* a wake alarm was due: work about to run, not a fault */
	_SOAK_CLASS_MAX,
	_SOAK_CLASS_INVALID = -22,
};

struct soak_cycle {
	unsigned cycle;                /* 1-based */
	enum soak_class result;
	uint64_t start_usec;           /* CLOCK_REALTIME */
	uint64_t requested_usec;       /* asked-for sleep; 0 for pm_test cycles */
	uint64_t asleep_usec;          /* CLOCK_BOOTTIME minus CLOCK_MONOTONIC across the state write */
	uint64_t write_usec;
	uint64_t awake_in_write_usec;  /* suspend entry plus exit */
	int64_t entry_usec;            /* from kernel log timestamps, -1 unknown */
	int64_t exit_usec;
	int64_t last_hw_sleep_usec;    /* -1: the kernel has none */
	bool premature, late;
	uint64_t stats_success, stats_fail; /* suspend_stats deltas */
	char wake_alarm[8];            /* "rtc" (rtc0's wakealarm), "timerfd" (CLOCK_BOOTTIME_ALARM), "none" (pm_test) */
	bool alarm_armed, alarm_cleared;
	int error;                     /* errno of the failed write, positive */
	int failed_errno;
	char wake_reason[96];
	char detail[160];
	char failed_dev[64];
	char failed_step[32];
	char blockers[256];            /* "name 5.012s, ..." */
	unsigned crng_reseeds;         /* "crng reseeded on system resumption" lines */
	unsigned keypairs_destroyed;   /* WireGuard "Keypair N destroyed" lines (dynamic debug) */
	/* At entry (before the wakeup_count write) and exit (after the state write); "" and -1 without a battery. */
	char battery_unit[12];         /* "energy" (uWh), "charge" (uAh) or "capacity" (%) */
	int64_t battery_entry, battery_exit, battery_full;
	int64_t battery_energy_entry_uwh, battery_energy_exit_uwh; /* -1 where no energy figure */
	bool battery_on_ac;
	char bugs[SOAK_TEXT_MAX];      /* kernel BUG/WARNING lines, '\n'-separated */
	char excerpt[SOAK_TEXT_MAX];   /* kernel log of a cycle that did not succeed */
};

struct soak_provenance {
	char kernel_release[128];
	char machine[256];
	char config_hash[32];
	char autosleep_options[512];
	char command_line[1024];
	uint64_t seed;
	uint64_t started_usec;
};

struct soak_stats {
	size_t n;
	uint64_t min, median, p95, max;
};

struct soak_summary {
	size_t cycles;
	size_t by_class[_SOAK_CLASS_MAX];
	size_t premature, late, bugs, crng_reseeds, keypairs_destroyed;
	uint64_t stats_success, stats_fail;
	struct soak_stats entry, exit, awake_in_write, asleep;
	const struct soak_cycle *first_failure; /* the first that is neither success nor blocked */
};

/* Everything unknown (-1, "") and no result yet. */
void soak_cycle_init(struct soak_cycle *c, unsigned cycle);

const char *soak_class_to_string(enum soak_class c);
enum soak_class soak_class_from_string(const char *s);
/* Counts against the run: everything but success and blocked. */
bool soak_class_is_failure(enum soak_class c);

/*
 * Premature: woke more than the tolerance before the requested time; late:
 * more than the tolerance after it. The tolerance is 1 s (the RTC counts
 * whole seconds) plus 10% of the request.
 */
void soak_cycle_flag_wake(struct soak_cycle *c);
uint64_t soak_wake_tolerance(uint64_t requested_usec);

/* What one cycle's kernel log says: latencies, reseeds, destroyed keypairs, BUG/WARNING lines, excerpt. */
struct kmsg_line {
	uint64_t ts_usec;
	const char *text;
};
void soak_cycle_scan_kmsg(struct soak_cycle *c, const struct kmsg_line *lines, size_t n);

void soak_cycle_write_json(FILE *f, const struct soak_cycle *c);
/* One JSON line into c; -EBADMSG with a message in err on anything it does not understand. */
int soak_cycle_parse_json(const char *line, struct soak_cycle *c, char *err, size_t errsize);

void soak_provenance_write_json(FILE *f, const struct soak_provenance *p);
int soak_provenance_parse_json(const char *line, struct soak_provenance *p, char *err, size_t errsize);

void soak_summarize(const struct soak_cycle *cycles, size_t n, struct soak_summary *ret);

void soak_report_markdown(FILE *f, const struct soak_provenance *p, const struct soak_cycle *cycles, size_t n);
void soak_report_svg(FILE *f, const struct soak_cycle *cycles, size_t n);
void soak_report_html(FILE *f, const struct soak_provenance *p, const struct soak_cycle *cycles, size_t n);

/* Two runs side by side. */
void soak_report_compare(FILE *f, const char *label_a, const struct soak_provenance *a, const struct soak_cycle *ca,
			 size_t na, const char *label_b, const struct soak_provenance *b, const struct soak_cycle *cb,
			 size_t nb);

/* Read DIR/provenance.json and DIR/cycles.jsonl; caller frees *ret_cycles. Errors name the file and line. */
int soak_run_load(const char *dir, struct soak_provenance *ret_p, struct soak_cycle **ret_cycles, size_t *ret_n);
