/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "battery-drain.h"
#include "config.h"
#include "kconfig.h"
#include "knob.h"
#include "leases.h"
#include "sessions.h"
#include "suspender.h"
#include "wake.h"

struct core;
struct manager;
/* The core as the policies see it (core.h): what the manager hands them instead of itself. */
struct core *manager_core(struct manager *m);

/* The last few completed attempts, for "autosleepctl status". */
#define MANAGER_RECENT_MAX 8

struct manager_cycle {
	struct suspend_report report;
	usec_t when; /* CLOCK_REALTIME when the main loop heard of it */
};

/*
 * "Who kept me awake": kernel wakeup sources other than ours, by name, as
 * attempts report them. Capped: past MANAGER_BLOCKERS_MAX names, the rest
 * add up under "(other)", so a source that renames itself cannot grow it.
 */
#define MANAGER_BLOCKERS_MAX 32

struct manager_blocker {
	char name[WAKEUP_SOURCE_NAME_MAX];
	uint64_t count;    /* attempts it held up or cancelled */
	uint64_t total_ms; /* time it was active while it did */
	uint64_t last_ms;  /* the last time's */
	usec_t last;       /* CLOCK_REALTIME of the last time */
};

struct manager_stats {
	uint64_t attempts; /* ours; results[SUSPEND_EXTERNAL] counts logind's, which are not attempts of ours */
	uint64_t results[_SUSPEND_RESULT_MAX];
	usec_t total_asleep;
	struct manager_cycle recent[MANAGER_RECENT_MAX]; /* ring, newest at recent_next - 1 */
	unsigned n_recent;
	unsigned recent_next;
	struct manager_blocker blockers[MANAGER_BLOCKERS_MAX];
	unsigned n_blockers;
};

struct bus;
struct logind;
struct activity;
struct kernel_lock;
struct timers;

/*
 * The daemon's state on the sd-event thread: leases, the one kernel wake
 * lock that mirrors them, and what the suspender thread reports.
 */
struct manager {
	sd_event *event;
	struct config config;
	bool dry_run;
	gid_t wake_lock_gid; /* [WakeLocks] Group=, (gid_t)-1 for none */
	int exit_code;  /* set by manager_fatal() */
	bool fatal;     /* keep the kernel lock and stored leases on the way out */

	struct kconfig kconfig;
	struct knob knob;
	bool kernel_wakelocks;
	struct kernel_lock *kernel_lock;

	struct leases leases;
	sd_event_source *deadline_source;
	usec_t deadline_armed; /* USEC_INFINITY when off */
	sd_event_source *settle_source; /* the lease count settled: tell systemd and the bus */
	unsigned status_n_leases;       /* the count STATUS= last showed */

	struct suspender *suspender;
	sd_event_source *suspender_source;
	enum suspender_state state;
	bool enabled;
	uint64_t knob_ticket; /* Disable() found a state write under way: the knob goes back once it returned */
	char *disabled_path; /* $RUNTIME_DIRECTORY/disabled: exists while disabled; NULL outside a unit */
	struct manager_stats stats;
	char last_wake_reason[96];
	struct battery_drain battery;

	/* soak-session.c: the client driving soak cycles, its call, the hang watchdog. */
	sd_bus_track *soak_track;
	sd_bus_message *soak_call;
	sd_event_source *soak_watchdog;
	usec_t soak_start;
	bool soak_hung;
	bool soak_forced;

	struct bus *bus;
	struct logind *logind;
	uint64_t logind_lease; /* held while logind has others' block inhibitors, or has not answered yet; 0 for none */
	struct activity *activity;
	struct sessions *sessions;
	uint64_t session_lease; /* held while a session that counts is active and not idle; 0 for none */
	enum lock_step lock_step;
	bool relock; /* user activity while locking */
	/* logind's own suspend under way (PrepareForSleep(true) seen): clocks and suspend_stats/success then */
	bool external_sleep;
	usec_t external_boottime, external_monotonic;
	uint64_t external_success0;
	/* The lid and the sleep key (HandleLid=) */
	char *lid_handler;   /* who handles the lid: NULL for us, else logind or another program */
	bool lid_present, lid_closed, docked;
	bool lid_away;       /* the lid closed, ours to handle, not docked: the user is gone */
	bool key_away;       /* the sleep key, until the next input */
	struct timers *timers;
	struct wake_observers wake; /* told after every resume: activity.c, timers.c */
};

int manager_new(struct config *config, bool dry_run, struct manager **ret);
struct manager *manager_free(struct manager *m);

/* Report what the kernel offers, take back what an earlier instance stored, start the thread. */
int manager_startup(struct manager *m);
int manager_run(struct manager *m);

/* A lease's absolute deadline (CLOCK_BOOTTIME) for a relative timeout; 0 and USEC_INFINITY mean none. */
usec_t manager_deadline(usec_t timeout);
/* Take a lease; the registry tells the observers. */
int manager_acquire(struct manager *m, const struct lease_spec *spec, struct lease **ret);
/*
 * Whether a lease taken now holds with the kernel: the kernel lock is one the
 * kernel enforces, and it is held (taken here if need be, so that a failing
 * wake_lock write is known before a caller is answered). A caller that then
 * takes no lease gives it back with manager_kernel_lock_settle().
 */
bool manager_kernel_lock_ready(struct manager *m);
void manager_kernel_lock_settle(struct manager *m);
/* gate-wait.h's unheld: the last call holding the gate closed went on. */
void manager_gate_unheld(void *userdata);
/* The daemon's own holds: name, why and a relative timeout (0 for none). Returns the id in ret_id. */
int manager_hold(struct manager *m, const char *name, const char *why, usec_t timeout, uint64_t *ret_id);
int manager_release(struct manager *m, uint64_t id, const char *reason);
/* Returns once no state write is under way when disabling. */
void manager_set_enabled(struct manager *m, bool enabled);

/* A D-Bus property changed (bus.c batches them). */
void manager_changed(struct manager *m, const char *property);

/* logind reports block inhibitors of sleep or idle held by others (who: a description). */
void manager_set_logind_block(struct manager *m, bool blocked, const char *who);

/* The sessions that count (why: a description) are awake or not any more. */
void manager_set_session_hold(struct manager *m, bool held, const char *why);
/* User activity (input, a session turning active): the next suspend locks the sessions first. */
void manager_user_active(struct manager *m);
/* The lock step ended with result. */
void manager_lock_done(struct manager *m, enum lock_step result);
/* logind's PrepareForSleep: a suspend that is not ours starts (true) or ended (false). */
void manager_external_sleep(struct manager *m, bool start);

/* Who handles the lid: NULL for us (our inhibitor is held), else a description. */
void manager_set_lid_handler(struct manager *m, const char *other);
/* From the input devices: SW_LID changed (or was read at start), or KEY_SLEEP/KEY_SUSPEND pressed. */
void manager_lid_switch(struct manager *m, bool closed);
void manager_sleep_key(struct manager *m);
/* logind's answer to "Docked?", asked when the lid closed. */
void manager_lid_docked(struct manager *m, bool docked);
/* The lid is closed or the sleep key was pressed: the user is gone. */
bool manager_away(const struct manager *m);
/* Input from a device (builtin: the laptop's own keyboard or touchpad): false if it is to be ignored. */
bool manager_input_counts(struct manager *m, bool builtin);

/* Something the daemon cannot run without broke: log, and exit non-zero so systemd restarts us. */
void manager_fatal(struct manager *m, int error, const char *what);

/* The unit's RuntimeDirectory= (first of several), or NULL outside a unit; caller frees. */
char *manager_runtime_dir(void);

/* Battery figures over the last hour, as of the last sample. */
void manager_battery_summary(const struct manager *m, struct battery_drain_summary *ret);

/* Newest first; i < stats.n_recent. */
const struct manager_cycle *manager_recent(const struct manager *m, unsigned i);
