/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "activity.h"
#include "bus.h"
#include "core.h"
#include "event-util.h"
#include "log.h"
#include "logind.h"
#include "kernel-lock.h"
#include "fdstore.h"
#include "gate-wait.h"
#include "macro.h"
#include "manager.h"
#include "peers.h"
#include "polkit.h"
#include "soak-session.h"
#include "timers.h"
#include "notify.h"
#include "sessions.h"
#include "sysfs.h"
#include "wakelock.h"

/* journalctl MESSAGE_ID=... finds every suspend result. */
#define SUSPEND_RESULT_MESSAGE_ID "MESSAGE_ID=5c1e3b0a8f4d4e6b9a2f7d31c8e0b642"

/* How long SIGTERM waits for the thread before exiting regardless. */
#define STOP_TIMEOUT (800 * USEC_PER_MSEC)

/*
 * The lease count is shown (STATUS=, the NWakeLocks property) once it has
 * not changed for this long, and only if it differs from what was shown: a
 * client that takes a lock and drops it again within the window costs
 * neither a notification nor a PropertiesChanged, a burst of locks one of
 * each. WakeLockAcquired and WakeLockReleased still come at once, per lock.
 */
#define SETTLE_DELAY (50 * USEC_PER_MSEC)

static void manager_update_status(struct manager *m)
{
	m->status_n_leases = m->leases.n;
	(void)notify_sendf("STATUS=%s, %u lock%s held, %" PRIu64 " suspend%s",
			   m->enabled ? strna(suspender_state_to_string(m->state)) : "disabled", m->leases.n,
			   m->leases.n == 1 ? "" : "s", m->stats.results[SUSPEND_SUCCESS],
			   m->stats.results[SUSPEND_SUCCESS] == 1 ? "" : "s");
}

static int on_settled(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	(void)usec;
	if (m->leases.n != m->status_n_leases)
		manager_update_status(m);
	bus_announce_n_locks(m->bus);
	return 0;
}

/* Restart nothing while armed: the window runs from the first change of a burst. */
static void manager_count_changed(struct manager *m)
{
	int r;

	if (event_source_armed(m->settle_source))
		return;
	r = event_reset_time(m->event, &m->settle_source, CLOCK_MONOTONIC, SETTLE_DELAY, 10 * USEC_PER_MSEC,
			     on_settled, m, true);
	if (r < 0) {
		/* Show it now rather than never. */
		log_debug_errno(r, "Failed to arm the lease count timer: %m");
		on_settled(NULL, 0, m);
	}
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata);

/* Arm the timer for the earliest deadline, leaving out a lease about to go. */
static void manager_arm_deadline(struct manager *m, const struct lease *leaving)
{
	usec_t next = USEC_INFINITY;
	int r;

	for (struct lease *x = m->leases.head; x; x = x->next)
		if (x != leaving && x->deadline < next)
			next = x->deadline;
	m->deadline_armed = next;
	if (next == USEC_INFINITY) {
		if (m->deadline_source)
			(void)sd_event_source_set_enabled(m->deadline_source, SD_EVENT_OFF);
		return;
	}
	/* CLOCK_BOOTTIME: a deadline passes while suspended too. */
	r = event_reset_time(m->event, &m->deadline_source, CLOCK_BOOTTIME, next, 0, on_deadline, m, false);
	if (r < 0)
		log_error_errno(r, "Failed to arm lease deadline timer: %m");
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	(void)usec;
	leases_expire(&m->leases);
	manager_arm_deadline(m, NULL);
	return 0;
}

/*
 * The manager's view of the registry: one kernel lock and the suspender's
 * gate stand for all leases, and the deadline timer follows the earliest
 * deadline. Only timed leases cost a walk; the rest are O(1).
 */
static void on_lease_event(struct leases *l, enum lease_event ev, struct lease *x, const char *reason, void *userdata)
{
	struct manager *m = userdata;
	int r;

	switch (ev) {
	case LEASE_HELD:
		/* Kernel lock first, so a suspend already past our gate is aborted by the kernel. */
		r = kernel_lock_hold(m->kernel_lock);
		if (r < 0)
			log_error_errno(r, "Failed to take the kernel lock (%s '%s'): %m; holding in-process only",
					kernel_lock_kind(m->kernel_lock), m->config.wake_lock_name);
		/*
		 * With the kernel lock held the kernel backs out of a state write
		 * already under way: the lock is a wakeup event after our
		 * wakeup_count write. Without it the gate is all we have: no write
		 * starts after this, and a D-Bus caller's answer waits until one
		 * under way returned (gate-wait.h). This loop never waits for it.
		 */
		if (r >= 0 && kernel_lock_enforced(m->kernel_lock))
			suspender_set_blocked_by_kernel(m->suspender);
		else
			suspender_set_blocked(m->suspender, true);
		logind_set_held(m->logind, true);
		break;
	case LEASE_UNHELD:
		/*
		 * Gate first: the thread sits in a wakeup_count read that the kernel
		 * lock blocks, and the release below ends that read. Released the
		 * other way round, the read would return while the gate is still
		 * closed, and the attempt would start over with another read.
		 */
		suspender_set_blocked(m->suspender, gate_wait_holds(bus_gate_waits(m->bus)) > 0);
		r = kernel_lock_release(m->kernel_lock);
		if (r < 0)
			log_error_errno(r, "Failed to release the kernel lock (%s '%s'): %m",
					kernel_lock_kind(m->kernel_lock), m->config.wake_lock_name);
		logind_set_held(m->logind, false);
		break;
	case LEASE_ACQUIRED:
		log_debug("Lease %" PRIu64 " '%s' acquired by %s: %s", x->id, x->name, strna(x->owner), strna(x->why));
		if (l->lid_closed && !x->lid)
			log_info("Wake lock '%s' of uid %u waits for the lid to open: taken without LidClosed", x->name,
				 (unsigned)x->uid);
		manager_count_changed(m);
		if (x->deadline < m->deadline_armed)
			manager_arm_deadline(m, NULL);
		break;
	case LEASE_DEADLINE:
		manager_arm_deadline(m, NULL);
		break;
	case LEASE_RELEASED:
		log_debug("Lease %" PRIu64 " '%s' of %s ended: %s", x->id, x->name, x->owner, reason);
		if (x->id == m->logind_lease)
			m->logind_lease = 0;
		if (x->id == m->session_lease)
			m->session_lease = 0;
		if (x->deadline != USEC_INFINITY && x->deadline <= m->deadline_armed)
			manager_arm_deadline(m, x);
		manager_count_changed(m);
		break;
	case _LEASE_EVENT_MAX:
	case _LEASE_EVENT_INVALID:
		break;
	}
}

usec_t manager_deadline(usec_t timeout)
{
	if (timeout == 0 || timeout == USEC_INFINITY)
		return USEC_INFINITY;
	return usec_add(now(CLOCK_BOOTTIME), timeout);
}

bool manager_kernel_lock_ready(struct manager *m)
{
	return kernel_lock_enforced(m->kernel_lock) && kernel_lock_hold(m->kernel_lock) >= 0;
}

void manager_kernel_lock_settle(struct manager *m)
{
	int r;

	if (leases_holding(&m->leases))
		return;
	r = kernel_lock_release(m->kernel_lock);
	if (r < 0)
		log_error_errno(r, "Failed to release the kernel lock (%s '%s'): %m", kernel_lock_kind(m->kernel_lock),
				m->config.wake_lock_name);
}

void manager_gate_unheld(void *userdata)
{
	struct manager *m = userdata;

	/* A lease that holds now keeps the flag closed itself; with none, the gate opens. */
	if (!leases_holding(&m->leases))
		suspender_set_blocked(m->suspender, false);
}

int manager_acquire(struct manager *m, const struct lease_spec *spec, struct lease **ret)
{
	return leases_acquire_spec(&m->leases, spec, ret);
}

int manager_hold(struct manager *m, const char *name, const char *why, usec_t timeout, uint64_t *ret_id)
{
	struct lease *x;
	int r;

	r = manager_acquire(m, &(struct lease_spec){ .name = name, .owner = "autosleepd", .why = why, .own = true,
						   .pid = getpid(), .deadline = manager_deadline(timeout) },
			    &x);
	if (r < 0)
		return r;
	*ret_id = x->id;
	return 0;
}

int manager_release(struct manager *m, uint64_t id, const char *reason)
{
	return leases_release(&m->leases, id, reason);
}

void manager_changed(struct manager *m, const char *property)
{
	bus_emit_changed(m->bus, property);
}

void manager_fatal(struct manager *m, int error, const char *what)
{
	log_error_errno(error, "%s: %m. Exiting with the kernel lock and stored wake locks kept, for a restart", what);
	m->fatal = true;
	m->exit_code = error;
	(void)sd_event_exit(m->event, error);
}

/*
 * Which of the kernel's answers to frequent suspend is in force, in the
 * log: the option, our knob, or neither. Called at start and whenever we
 * write the knob.
 */
static void manager_report_mode(struct manager *m)
{
	enum knob_mode mode = knob_mode(&m->knob, m->kconfig.userspace_autosleep);

	switch (mode) {
	case KNOB_MODE_COMPILE_TIME:
		log_info("Userspace autosleep: compile-time (CONFIG_PM_USERSPACE_AUTOSLEEP=y%s)",
			 m->knob.present ? ", and /sys/power/userspace_autosleep reads 1" : "");
		break;
	case KNOB_MODE_RUNTIME:
		log_info("Userspace autosleep: runtime-knob (/sys/power/userspace_autosleep reads 1%s)",
			 m->knob.saved == 0 ? ", set by autosleepd, 0 again when autosleep stops" : "");
		break;
	case KNOB_MODE_NONE:
		if (m->knob.present && !m->enabled)
			log_info("Userspace autosleep: none while autosleep is disabled (/sys/power/userspace_autosleep reads 0)");
		else if (m->knob.present)
			log_warning("Userspace autosleep: none: /sys/power/userspace_autosleep reads 0 (%s): every "
				    "suspend cycle will reseed the crng and clear all WireGuard session keys",
				    m->knob.manage ? "writing it failed" : m->dry_run ? "a dry run leaves it" : "SetUserspaceAutosleep=no");
		else
			log_warning("Userspace autosleep: none: this kernel lacks CONFIG_PM_USERSPACE_AUTOSLEEP and "
				    "/sys/power/userspace_autosleep: every suspend cycle will reseed the crng and clear all "
				    "WireGuard session keys. Build it with kernel-patches/ for frequent suspend.");
		break;
	case KNOB_MODE_UNKNOWN:
	case _KNOB_MODE_MAX:
	case _KNOB_MODE_INVALID:
		log_warning("Userspace autosleep: unknown: no kernel config and no /sys/power/userspace_autosleep to "
			    "tell whether suspend reseeds the crng and clears WireGuard keys");
		break;
	}
	bus_emit_changed(m->bus, "UserspaceAutosleep");
	bus_emit_changed(m->bus, "UserspaceAutosleepKnob");
}

/* The knob follows autosleep: 1 before the first suspend, the old value once nothing suspends. */
static void manager_switch_knob(struct manager *m, bool on)
{
	int r;

	if (!m->knob.present || !m->knob.manage)
		return;
	r = on ? knob_activate(&m->knob) : knob_deactivate(&m->knob);
	if (r < 0)
		log_warning_errno(r, "Failed to %s /sys/power/userspace_autosleep: %m, ignoring",
				  on ? "set" : "put back");
	manager_report_mode(m);
}

/*
 * A Disable() outlives a crash or a restart by the watchdog, as wake locks
 * do: a mark in the runtime directory, which systemd keeps across restarts
 * and removes on stop.
 */
static void manager_save_disabled(struct manager *m)
{
	int fd;

	if (!m->disabled_path)
		return;
	if (m->enabled) {
		if (unlink(m->disabled_path) < 0 && errno != ENOENT)
			log_warning_errno(negative_errno(), "Failed to remove %s: %m; a restart will find autosleep "
					  "disabled", m->disabled_path);
		return;
	}
	fd = open(m->disabled_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		log_warning_errno(negative_errno(), "Failed to create %s: %m; a restart will find autosleep enabled",
				  m->disabled_path);
	safe_close(fd);
}

void manager_set_enabled(struct manager *m, bool enabled)
{
	if (m->enabled == enabled)
		return;
	m->enabled = enabled;
	log_notice("Autosleep %s", enabled ? "enabled" : "disabled");
	manager_save_disabled(m);
	m->knob_ticket = 0;
	if (enabled)
		manager_switch_knob(m, true);
	suspender_set_enabled(m->suspender, enabled);
	/* Only once no state write is under way: a suspend already under way saw the knob set. */
	if (!enabled) {
		m->knob_ticket = suspender_barrier(m->suspender);
		if (m->knob_ticket == 0)
			manager_switch_knob(m, false);
	}
	bus_emit_changed(m->bus, "Enabled");
	manager_update_status(m);
}

const struct manager_cycle *manager_recent(const struct manager *m, unsigned i)
{
	if (i >= m->stats.n_recent)
		return NULL;
	return &m->stats.recent[(m->stats.recent_next + MANAGER_RECENT_MAX - 1 - i) % MANAGER_RECENT_MAX];
}

static void manager_record(struct manager *m, const struct suspend_report *rep)
{
	struct manager_cycle *c = &m->stats.recent[m->stats.recent_next];

	c->report = *rep;
	c->when = now(CLOCK_REALTIME);
	m->stats.recent_next = (m->stats.recent_next + 1) % MANAGER_RECENT_MAX;
	if (m->stats.n_recent < MANAGER_RECENT_MAX)
		m->stats.n_recent++;
}

static struct manager_blocker *blocker_slot(struct manager *m, const char *name)
{
	struct manager_stats *st = &m->stats;

	for (unsigned i = 0; i < st->n_blockers; i++)
		if (strcmp(st->blockers[i].name, name) == 0)
			return &st->blockers[i];
	if (st->n_blockers < MANAGER_BLOCKERS_MAX - 1) {
		snprintf(st->blockers[st->n_blockers].name, sizeof(st->blockers[0].name), "%s", name);
		return &st->blockers[st->n_blockers++];
	}
	/* The last slot is "(other)". */
	if (st->n_blockers < MANAGER_BLOCKERS_MAX)
		snprintf(st->blockers[st->n_blockers++].name, sizeof(st->blockers[0].name), "(other)");
	return &st->blockers[MANAGER_BLOCKERS_MAX - 1];
}

static void manager_count_blockers(struct manager *m, const struct suspend_report *rep)
{
	char msg[512];
	size_t len = 0;

	for (unsigned i = 0; i < rep->n_blockers; i++) {
		struct manager_blocker *b = blocker_slot(m, rep->blockers[i].name);

		b->count++;
		b->total_ms += rep->blockers[i].ms;
		b->last_ms = rep->blockers[i].ms;
		b->last = now(CLOCK_REALTIME);
		if (len < sizeof(msg))
			len += snprintf(msg + len, sizeof(msg) - len, "%s%s %" PRIu64 ".%03" PRIu64 "s", i ? ", " : "",
					rep->blockers[i].name, rep->blockers[i].ms / 1000, rep->blockers[i].ms % 1000);
	}
	if (rep->n_blockers > 0)
		log_info("Suspend #%" PRIu64 ": kept awake by kernel wakeup sources: %s", rep->attempt, msg);
}

static const char *const battery_properties[] = {
	"AsleepShare", "BatteryDrainAwake", "BatteryDrainAsleep", "BatteryPowerAwake", "BatteryPowerAsleep",
};

/*
 * The stretch since the last sample was awake up to the sample taken before
 * the state write; from there to the one after it, asleep if the suspend
 * succeeded. Attempts that ended before a state write carry no sample (its
 * time stays 0) and merge into the next window; early cancels never get here.
 */
static void manager_battery_sample(struct manager *m, const struct suspend_report *rep)
{
	if (rep->battery_before.boottime == 0)
		return;
	battery_drain_sample(&m->battery, &rep->battery_before, BATTERY_PHASE_AWAKE);
	if (rep->battery_after.boottime > 0)
		battery_drain_sample(&m->battery, &rep->battery_after,
				     rep->result == SUSPEND_SUCCESS ? BATTERY_PHASE_ASLEEP : BATTERY_PHASE_AWAKE);
	for (size_t i = 0; i < ELEMENTSOF(battery_properties); i++)
		bus_emit_changed(m->bus, battery_properties[i]);
}

void manager_battery_summary(const struct manager *m, struct battery_drain_summary *ret)
{
	/* As of the last sample, so a value changes only when PropertiesChanged says so. */
	battery_drain_summarize(&m->battery, m->battery.last.boottime, ret);
}

static void log_result(struct manager *m, const struct suspend_report *rep)
{
	char asleep[FORMAT_TIMESPAN_MAX], delay[FORMAT_TIMESPAN_MAX], msg[512];
	char f_result[64], f_attempt[64], f_asleep[64], f_errno[64], f_reason[128], f_dev[96], f_step[64];
	char f_cancel[200];
	const char *res = suspend_result_to_string(rep->result);
	int level = LOG_INFO;

	format_timespan(asleep, sizeof(asleep), rep->asleep);
	format_timespan(delay, sizeof(delay), rep->next_delay);
	switch (rep->result) {
	case SUSPEND_SUCCESS:
		snprintf(msg, sizeof(msg), "Suspend #%" PRIu64 ": success, slept %s, woken by %s%s, next attempt in %s",
			 rep->attempt, asleep, rep->wake_reason, rep->short_suspend ? " (short, backing off)" : "",
			 delay);
		break;
	case SUSPEND_EARLY_CANCEL:
		level = LOG_DEBUG;
		snprintf(msg, sizeof(msg), "Suspend #%" PRIu64 ": early-cancel, wakeup event before the state write",
			 rep->attempt);
		break;
	case SUSPEND_LATE_CANCEL:
		snprintf(msg, sizeof(msg),
			 "Suspend #%" PRIu64 ": late-cancel, state write failed (%s) after a wakeup event from %s, next attempt in %s",
			 rep->attempt, strerror(-rep->error), rep->cancel_source[0] ? rep->cancel_source : "an unknown source",
			 delay);
		break;
	case SUSPEND_EXTERNAL:
		snprintf(msg, sizeof(msg), "External suspend by logind: slept %s, not counted as ours", asleep);
		break;
	case SUSPEND_ALARM_IMMINENT:
		snprintf(msg, sizeof(msg),
			 "Suspend #%" PRIu64 ": alarm-imminent, '%s' refused (%s): a wake alarm is due within 2 s, next attempt in %s",
			 rep->attempt, rep->failed_dev, strerror(-rep->error), delay);
		break;
	case SUSPEND_FAILURE:
		level = LOG_WARNING;
		/* Only a failure whose step counters moved has a device and step worth naming. */
		if (rep->failed_dev[0] || rep->failed_step[0])
			snprintf(msg, sizeof(msg),
				 "Suspend #%" PRIu64 ": failure (%s), failed device '%s', step '%s', errno %d, next attempt in %s",
				 rep->attempt, strerror(-rep->error), rep->failed_dev, rep->failed_step, rep->failed_errno,
				 delay);
		else
			snprintf(msg, sizeof(msg), "Suspend #%" PRIu64 ": failure (%s), no device failed, next attempt in %s",
				 rep->attempt, strerror(-rep->error), delay);
		break;
	case _SUSPEND_RESULT_MAX:
	case _SUSPEND_RESULT_INVALID:
		return;
	}
	snprintf(f_result, sizeof(f_result), "AUTOSLEEP_RESULT=%s", res);
	snprintf(f_attempt, sizeof(f_attempt), "AUTOSLEEP_ATTEMPT=%" PRIu64, rep->attempt);
	snprintf(f_asleep, sizeof(f_asleep), "AUTOSLEEP_ASLEEP_USEC=%" PRIu64, (uint64_t)rep->asleep);
	snprintf(f_errno, sizeof(f_errno), "AUTOSLEEP_ERRNO=%d", -rep->error);
	snprintf(f_reason, sizeof(f_reason), "AUTOSLEEP_WAKE_REASON=%s", rep->wake_reason);
	snprintf(f_dev, sizeof(f_dev), "AUTOSLEEP_FAILED_DEV=%s", rep->failed_dev);
	snprintf(f_step, sizeof(f_step), "AUTOSLEEP_FAILED_STEP=%s", rep->failed_step);
	snprintf(f_cancel, sizeof(f_cancel), "AUTOSLEEP_CANCEL_SOURCE=%s", rep->cancel_source);
	log_struct(level, msg, SUSPEND_RESULT_MESSAGE_ID, f_result, f_attempt, f_asleep, f_errno, f_reason, f_dev,
		   f_step, f_cancel);
}

/*
 * One of the daemon's own holds that follows an outside state (logind's
 * inhibitors, the sessions): taken while held, released when not, and only
 * its description changes in between.
 */
static void manager_follow(struct manager *m, uint64_t *id, const char *name, bool held, const char *who,
			   const char *released)
{
	int r;

	if (!held) {
		if (*id == 0)
			return;
		log_info("%s", released);
		(void)manager_release(m, *id, "released");
		return;
	}
	if (*id != 0) {
		struct lease *x = leases_find(&m->leases, *id);
		char *copy;

		if (x && strcmp(x->why, who) != 0 && (copy = strdup(who))) {
			free(x->why);
			x->why = copy;
			log_info("Staying awake for %s", who);
		}
		return;
	}
	log_info("Staying awake for %s", who);
	r = manager_hold(m, name, who, 0, id);
	if (r < 0)
		log_error_errno(r, "Failed to hold for %s: %m", name);
}

void manager_set_logind_block(struct manager *m, bool blocked, const char *who)
{
	manager_follow(m, &m->logind_lease, "logind-inhibitor", blocked, who, "No logind inhibitors keep us awake");
}

void manager_set_session_hold(struct manager *m, bool held, const char *why)
{
	manager_follow(m, &m->session_lease, "session-active", held, why, "No active session keeps us awake");
}

static void manager_set_lock_step(struct manager *m, enum lock_step step)
{
	if (m->lock_step == step)
		return;
	m->lock_step = step;
	bus_emit_changed(m->bus, "LockStep");
}

void manager_user_active(struct manager *m)
{
	suspender_note_activity(m->suspender);
	if (m->lock_step == LOCK_STEP_LOCKING)
		/* The user may have unlocked already: lock again before the suspend (see manager_lock_done()). */
		m->relock = true;
	if (m->lock_step == LOCK_STEP_OFF || m->lock_step == LOCK_STEP_PENDING || m->lock_step == LOCK_STEP_LOCKING)
		return;
	manager_set_lock_step(m, LOCK_STEP_PENDING);
	suspender_set_prepare(m->suspender, true);
}

void manager_lock_done(struct manager *m, enum lock_step result)
{
	manager_set_lock_step(m, result);
	if (m->relock) {
		/*
		 * Activity during the step: the user may have unlocked already.
		 * Owe another step before this suspend, in one call: cleared and
		 * set again in two, the thread could write state in between.
		 */
		m->relock = false;
		manager_set_lock_step(m, LOCK_STEP_PENDING);
		suspender_prepare_again(m->suspender);
		return;
	}
	/* Whatever came of it: the suspend goes ahead, and locks again only after new activity. */
	suspender_set_prepare(m->suspender, false);
}

/*
 * The lid closed (lid_away) or opened: which holds still hold. logind's
 * inhibitors decide for themselves (logind.c); of the wake locks, a
 * person's waits for the lid to open unless taken with LidClosed.
 */
static void manager_lid_holds(struct manager *m)
{
	const struct lease *first = NULL;
	unsigned n;

	logind_lid_changed(m->logind);
	leases_set_lid_closed(&m->leases, m->lid_away);
	/* The registry counts them; only the first is looked for, to name it. */
	n = leases_waiting_for_lid(&m->leases);
	for (const struct lease *x = m->leases.head; n > 0 && x && !first; x = x->next)
		if (lease_waits_for_lid(&m->leases, x))
			first = x;
	if (first)
		log_info("Lid closed: %u wake lock%s of users wait%s for the lid to open (first '%s' of uid %u: %s); "
			 "one taken with LidClosed would hold", n, n == 1 ? "" : "s", n == 1 ? "s" : "", first->name,
			 (unsigned)first->uid, first->why);
	bus_announce_n_locks(m->bus);
}

void manager_set_lid_handler(struct manager *m, const char *other)
{
	char *copy = NULL;

	if (other && !(copy = strdup(other)))
		return;
	free(m->lid_handler);
	m->lid_handler = copy;
	/* Someone else's lid now: whatever it does is theirs. */
	if (other && m->lid_away) {
		m->lid_away = false;
		sessions_refresh(m->sessions);
		manager_lid_holds(m);
		bus_emit_changed(m->bus, "Away");
	}
	bus_emit_changed(m->bus, "LidHandler");
	/* Ours now, and already closed (a laptop started with its lid shut): as if it closed now. */
	if (!other && m->lid_closed && !m->lid_away) {
		if (m->logind)
			logind_query_docked(m->logind);
		else
			manager_lid_docked(m, false);
	}
}

bool manager_away(const struct manager *m)
{
	return m->lid_away || m->key_away;
}

/* The user is gone: lock first, and suspend once no lease holds, without waiting out the idle timeout. */
static void manager_went_away(struct manager *m)
{
	manager_user_active(m);
	activity_away(m->activity);
	sessions_refresh(m->sessions);
	bus_emit_changed(m->bus, "Away");
}

void manager_lid_docked(struct manager *m, bool docked)
{
	bool was_docked = m->docked;

	m->docked = docked;
	logind_watch_docked(m->logind, docked && m->lid_closed && !m->lid_handler && !m->lid_away);
	if (!m->lid_closed || m->lid_handler || m->lid_away)
		return;
	if (docked) {
		/* As logind's HandleLidSwitchDocked=ignore: a dock or a second display means someone is working. */
		if (!was_docked)
			log_info("Lid closed while docked: not an absence, carrying on");
		return;
	}
	if (was_docked)
		log_info("Undocked with the lid closed: the user is gone; locking, and suspending as soon as no wake "
			 "lock holds");
	else
		log_info("Lid closed: the user is gone; locking, and suspending as soon as no wake lock holds");
	m->lid_away = true;
	/* Locking is owed first: what the lid lets go of may let the suspend start at once. */
	manager_went_away(m);
	manager_lid_holds(m);
}

void manager_lid_switch(struct manager *m, bool closed)
{
	bool was_present = m->lid_present;

	m->lid_present = true;
	if (was_present && m->lid_closed == closed)
		return;
	m->lid_closed = closed;
	bus_emit_changed(m->bus, "Lid");
	if (!closed) {
		if (!was_present)
			return;
		log_info("Lid opened: staying awake for a full idle period");
		logind_watch_docked(m->logind, false);
		m->lid_away = m->key_away = false;
		bus_emit_changed(m->bus, "Away");
		activity_present(m->activity);
		sessions_refresh(m->sessions);
		manager_lid_holds(m);
		return;
	}
	if (m->lid_handler) {
		log_info("Lid closed; %s handles the lid, leaving it alone", m->lid_handler);
		return;
	}
	if (m->logind)
		logind_query_docked(m->logind);
	else
		manager_lid_docked(m, false);
}

void manager_sleep_key(struct manager *m)
{
	if (m->lid_handler) {
		log_info("Sleep key; %s handles it, leaving it alone", m->lid_handler);
		return;
	}
	if (m->key_away)
		return;
	log_info("Sleep key: the user is gone until the next input; locking, and suspending as soon as no wake lock holds");
	m->key_away = true;
	manager_went_away(m);
}

bool manager_input_counts(struct manager *m, bool builtin)
{
	/* The lid presses on the keyboard, or a bag on the touchpad: not a person. */
	if (m->lid_away && builtin)
		return false;
	if (m->key_away) {
		m->key_away = false;
		log_info("Input after the sleep key: the user is back");
		sessions_refresh(m->sessions);
		bus_emit_changed(m->bus, "Away");
	}
	return true;
}

void manager_external_sleep(struct manager *m, bool start)
{
	struct suspend_report rep = { .result = SUSPEND_EXTERNAL };
	struct wake w;
	uint64_t success = 0;
	usec_t b, mono;

	(void)sysfs_read_u64("sys/power/suspend_stats/success", &success);
	if (start) {
		log_info("logind is suspending the machine (PrepareForSleep): an external suspend, not ours");
		m->external_sleep = true;
		m->external_boottime = now(CLOCK_BOOTTIME);
		m->external_monotonic = now(CLOCK_MONOTONIC);
		m->external_success0 = success;
		return;
	}
	if (!m->external_sleep)
		return;
	m->external_sleep = false;
	b = now(CLOCK_BOOTTIME) - m->external_boottime;
	mono = now(CLOCK_MONOTONIC) - m->external_monotonic;
	rep.asleep = b > mono ? b - mono : 0;
	rep.duration = b;
	if (success > m->external_success0)
		snprintf(rep.wake_reason, sizeof(rep.wake_reason), "external (logind)");
	else
		snprintf(rep.wake_reason, sizeof(rep.wake_reason), "external (logind), suspend_stats shows no suspend");
	m->stats.results[SUSPEND_EXTERNAL]++;
	m->stats.total_asleep += rep.asleep;
	wake_identify(&m->wake, &w, rep.wake_reason, sizeof(rep.wake_reason), now(CLOCK_BOOTTIME), rep.duration,
		      false);
	manager_record(m, &rep);
	log_result(m, &rep);
	bus_emit_changed(m->bus, "ExternalSuspendCount");
	/* After it, a resume like any other: leases may have expired, and input gets its grace. */
	leases_expire(&m->leases);
	manager_arm_deadline(m, NULL);
	wake_resumed(&m->wake, &w);
	manager_update_status(m);
}

static int on_suspender_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;
	struct suspender_event ev;
	struct wake w;
	int r;

	(void)s;
	(void)fd;
	(void)revents;
	while ((r = suspender_read_event(m->suspender, &ev)) > 0) {
		switch (ev.type) {
		case SUSPENDER_EVENT_STATE:
			if (ev.state == SUSPENDER_SUSPENDING)
				bus_emit_suspending(m->bus);
			if (m->state != ev.state) {
				m->state = ev.state;
				bus_emit_changed(m->bus, "State");
			}
			break;
		case SUSPENDER_EVENT_PREPARE:
			if (m->sessions && m->lock_step == LOCK_STEP_PENDING) {
				/*
				 * The thread asked while nothing held, but a lease or
				 * the user may have come since: a session coming back
				 * sets the step and takes its lease in one dispatch,
				 * and the thread can ask in between. Locking then would
				 * lock out a user who is at the machine. Let it start
				 * over: it asks again once the lease and the input's
				 * kernel hold (which blocks its count read) are gone.
				 */
				if (suspender_ask_stale(m->suspender, ev.activity)) {
					suspender_prepare_again(m->suspender);
					break;
				}
				manager_set_lock_step(m, LOCK_STEP_LOCKING);
				sessions_lock(m->sessions);
			} else if (m->lock_step != LOCK_STEP_LOCKING) {
				/* Nobody to lock (no bus): never leave the thread waiting. */
				suspender_set_prepare(m->suspender, false);
			}
			break;
		case SUSPENDER_EVENT_RESULT:
			m->stats.attempts++;
			if (ev.report.result >= 0 && ev.report.result < _SUSPEND_RESULT_MAX)
				m->stats.results[ev.report.result]++;
			m->stats.total_asleep += ev.report.asleep;
			if (ev.report.result == SUSPEND_SUCCESS)
				wake_identify(&m->wake, &w, ev.report.wake_reason, sizeof(ev.report.wake_reason),
					      now(CLOCK_BOOTTIME), ev.report.duration, false);
			log_result(m, &ev.report);
			manager_count_blockers(m, &ev.report);
			/* Early cancels are the protocol at work, not cycles worth a signal. */
			if (ev.report.result == SUSPEND_EARLY_CANCEL)
				break;
			manager_record(m, &ev.report);
			manager_battery_sample(m, &ev.report);
			bus_emit_resumed(m->bus, &ev.report);
			if (ev.report.result == SUSPEND_SUCCESS) {
				snprintf(m->last_wake_reason, sizeof(m->last_wake_reason), "%s", ev.report.wake_reason);
				bus_emit_changed(m->bus, "SuspendCount");
				bus_emit_changed(m->bus, "LastWakeReason");
				/* Leases with deadlines may have passed while we slept. */
				leases_expire(&m->leases);
				manager_arm_deadline(m, NULL);
				wake_resumed(&m->wake, &w);
			}
			break;
		case SUSPENDER_EVENT_SOAK:
			if (ev.soak.result == SOAK_SUCCESS || ev.soak.result == SOAK_ALARM_NOT_CLEARED) {
				wake_identify(&m->wake, &w, ev.soak.wake_reason, sizeof(ev.soak.wake_reason),
					      now(CLOCK_BOOTTIME), ev.soak.write_usec, true);
				/* A suspend all the same: leases with deadlines may have passed. */
				leases_expire(&m->leases);
				manager_arm_deadline(m, NULL);
				/* Holds for a timer's work first: the client's next cycle must see them. */
				wake_resumed(&m->wake, &w);
				soak_session_finished(m, &ev.soak);
				break;
			}
			soak_session_finished(m, &ev.soak);
			break;
		case SUSPENDER_EVENT_GATE:
			if (m->knob_ticket != 0 && ev.gate_exits >= m->knob_ticket) {
				m->knob_ticket = 0;
				if (!m->enabled)
					manager_switch_knob(m, false);
			}
			gate_waits_passed(bus_gate_waits(m->bus), ev.gate_exits);
			break;
		case _SUSPENDER_EVENT_TYPE_MAX:
		case _SUSPENDER_EVENT_TYPE_INVALID:
			break;
		}
		manager_update_status(m);
	}
	if (r < 0)
		log_error_errno(r, "Failed to read from suspender thread: %m");
	return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	log_info("Received %s, exiting", strsignal((int)si->ssi_signo));
	(void)notify_send("STOPPING=1", NULL, 0);
	return sd_event_exit(m->event, 0);
}

int manager_new(struct config *config, bool dry_run, struct manager **ret)
{
	_cleanup_(freep) struct manager *m = NULL;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	r = sd_event_default(&m->event);
	if (r < 0)
		return r;
	m->config = *config;
	*config = (struct config){};
	m->dry_run = dry_run;
	m->wake_lock_gid = (gid_t)-1;
	m->state = SUSPENDER_AWAKE;
	m->enabled = true;
	snprintf(m->last_wake_reason, sizeof(m->last_wake_reason), "none");
	m->deadline_armed = USEC_INFINITY;
	leases_init(&m->leases);
	/* First observer: the machine is held awake before anyone else hears of a lease. */
	r = leases_observe(&m->leases, on_lease_event, m);
	if (r < 0) {
		/* Nothing else was set up yet: only the loop and the configuration taken over. */
		m->event = sd_event_unref(m->event);
		config_done(&m->config);
		return r;
	}
	*ret = TAKE_PTR(m);
	return 0;
}

static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '[') && (p[n] == 0 || p[n] == ' ' || p[n] == ']'))
			return true;
	return false;
}

static int manager_report_kernel(struct manager *m)
{
	char states[256], mem_sleep[256];
	struct utsname u;
	int r;

	if (uname(&u) < 0)
		return log_error_errno(negative_errno(), "uname() failed: %m");
	r = kconfig_load(u.release, &m->kconfig);
	if (r < 0)
		log_warning("Kernel %s: no /proc/config.gz or /boot/config-%s under %s, cannot tell whether it has "
			    "CONFIG_PM_USERSPACE_AUTOSLEEP", u.release, u.release, sysfs_get_root());
	else
		log_info("Kernel %s: CONFIG_PM_USERSPACE_AUTOSLEEP=%s, CONFIG_PM_WAKELOCKS=%s, CONFIG_PM_AUTOSLEEP=%s "
			 "(from %s)", u.release, kconfig_value_to_string(m->kconfig.userspace_autosleep),
			 kconfig_value_to_string(m->kconfig.wakelocks), kconfig_value_to_string(m->kconfig.autosleep),
			 m->kconfig.source);
	if (m->kconfig.autosleep == KCONFIG_YES)
		log_warning("This kernel has CONFIG_PM_AUTOSLEEP; make sure /sys/power/autosleep is 'off', or the "
			    "kernel and autosleepd will both suspend the machine");

	r = sysfs_read(SYSFS_POWER_STATE, states, sizeof(states));
	if (r < 0)
		return log_error_errno(r, "Failed to read %s under %s: %m; this kernel cannot suspend",
				       SYSFS_POWER_STATE, sysfs_get_root());
	if (!word_in(states, m->config.state))
		return log_error_errno(-EOPNOTSUPP, "Configured State=%s is not offered by the kernel (available: %s)",
				       m->config.state, states);

	if (m->config.mem_sleep) {
		r = m->dry_run ? 0 : sysfs_write(SYSFS_POWER_MEM_SLEEP, m->config.mem_sleep);
		if (r < 0)
			return log_error_errno(r, "Failed to set mem_sleep to '%s': %m", m->config.mem_sleep);
	}
	r = sysfs_read(SYSFS_POWER_MEM_SLEEP, mem_sleep, sizeof(mem_sleep));
	if (r < 0)
		snprintf(mem_sleep, sizeof(mem_sleep), "n/a");
	log_info("Sleep states: %s; mem_sleep: %s; suspending with '%s'%s", states, mem_sleep, m->config.state,
		 m->dry_run ? " (dry run: state and wakeup_count are not written)" : "");
	if (strcmp(m->config.state, "freeze") == 0 || (strcmp(m->config.state, "mem") == 0 && strstr(mem_sleep, "[s2idle]")))
		log_notice("Suspending to s2idle: only devices that are wakeup-capable in s2idle can wake the machine");
	return 0;
}

/*
 * Every lease costs one fd (our end of the client's pipe): raise the soft
 * limit to the hard one (LimitNOFILE= in the unit) and keep the cap on D-Bus
 * leases below it, with room for the bus, input devices and the rest (256),
 * and for the fds that calls waiting for polkit, and the calls held back
 * behind them, may carry (16 each, dbus-daemon's default).
 */
#define FD_RESERVE (256 + 16 * (PEERS_HELD_MAX + POLKIT_QUERIES_MAX))

static unsigned manager_max_locks(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur <= FD_RESERVE + 64)
		return 64;
	return (unsigned)MIN((rlim_t)BUS_LOCKS_MAX, rl.rlim_cur - FD_RESERVE);
}

/* [WakeLocks] Group=, looked up once: a group added later takes a restart. */
static void manager_resolve_group(struct manager *m)
{
	const char *g = m->config.group;
	char buf[4096], *end;
	struct group gr, *res = NULL;
	unsigned long v;

	m->wake_lock_gid = (gid_t)-1;
	if (!g[0])
		return;
	errno = 0;
	v = strtoul(g, &end, 10);
	if (g[0] >= '0' && g[0] <= '9' && !*end && errno == 0 && v < UINT32_MAX) {
		m->wake_lock_gid = (gid_t)v;
	} else if (getgrnam_r(g, &gr, buf, sizeof(buf), &res) == 0 && res) {
		m->wake_lock_gid = res->gr_gid;
	} else {
		log_warning("[WakeLocks] Group=%s: no such group; without polkit only root may take wake locks", g);
		return;
	}
	log_info("Without polkit, root and the members of group %s (gid %u) may take wake locks", g,
		 (unsigned)m->wake_lock_gid);
}

char *manager_runtime_dir(void)
{
	const char *rt = getenv("RUNTIME_DIRECTORY");

	if (!rt || !*rt)
		return NULL;
	/* Several directories come colon-separated; ours is the first. */
	return strndup(rt, strcspn(rt, ":"));
}

/* The first window starts at start-up, so the first awake stretch counts. */
static void manager_report_battery(struct manager *m)
{
	struct battery_sample s = {};
	int r;

	r = battery_read(&s);
	if (r == -ENODEV)
		log_info("No battery: no drain figures");
	else if (r < 0)
		log_warning_errno(r, "Failed to read the battery: %m, ignoring");
	else
		log_info("Battery: %u pack%s, drain measured in %s", s.n_batteries, s.n_batteries == 1 ? "" : "s",
			 battery_unit_to_string(s.unit));
	s.boottime = now(CLOCK_BOOTTIME);
	s.monotonic = now(CLOCK_MONOTONIC);
	battery_drain_sample(&m->battery, &s, BATTERY_PHASE_AWAKE);
}

int manager_startup(struct manager *m)
{
	_cleanup_free_ char *runtime_dir = NULL, *store_dir = NULL;
	_cleanup_(fdstore_release) struct fdstore stored = {};
	char activity_lock[WAKE_LOCK_NAME_MAX + 16];
	/*
	 * Our own wakeup sources, never named as a wake reason nor as what kept
	 * us awake: the kernel lock, the input hold, and on kernels without
	 * wake_lock the epoll kernel lock's item ("[eventfd]") and the source
	 * every epoll with an EPOLLWAKEUP item has ("eventpoll"), which our own
	 * epoll_wait() activates. Another program's epoll is still named by its
	 * item ("[timerfd]", an input device).
	 */
	char *own_sources[] = { m->config.wake_lock_name, activity_lock, (char *)"[eventfd]", (char *)"eventpoll",
				NULL };
	struct suspender_params p;
	unsigned max_locks;
	bool handle_lid;
	sigset_t ss;
	int r;

	/*
	 * Until start-up is done, a failure leaves everything as it was found:
	 * the kernel lock and the stored wake locks are an earlier instance's,
	 * or another's.
	 */
	m->fatal = true;
	r = manager_report_kernel(m);
	if (r < 0)
		return r;
	manager_report_battery(m);
	max_locks = manager_max_locks();
	snprintf(activity_lock, sizeof(activity_lock), "%s.activity", m->config.wake_lock_name);
	/* Where lease records and the knob's old value live: the unit's RuntimeDirectory=, else nowhere. */
	runtime_dir = manager_runtime_dir();
	if (runtime_dir && asprintf(&store_dir, "%s/leases", runtime_dir) < 0)
		return log_error_errno(-ENOMEM, "Out of memory");
	r = fdstore_receive(&stored);
	if (r < 0)
		log_warning_errno(r, "Failed to take the fds stored by an earlier instance: %m, ignoring");

	/*
	 * The bus name before anything an earlier or another instance left:
	 * the knob, the lease records, the stored fds and the kernel lock. A
	 * second instance must not touch them, and one that cannot serve the
	 * wake locks it would restore must leave them for the next start.
	 */
	r = bus_open(m, &stored, &m->bus);
	if (r < 0)
		return r;
	if (runtime_dir && asprintf(&m->disabled_path, "%s/disabled", runtime_dir) < 0)
		return log_error_errno(-ENOMEM, "Out of memory");
	if (m->disabled_path && access(m->disabled_path, F_OK) >= 0) {
		log_notice("Autosleep was disabled before the restart (%s): staying disabled until Enable()",
			   m->disabled_path);
		m->enabled = false;
	}

	/* A dry run suspends nothing, so it has no business telling the kernel it does. */
	r = knob_init(&m->knob, m->config.set_userspace_autosleep && !m->dry_run, runtime_dir);
	if (r < 0)
		return log_error_errno(r, "Failed to look at /sys/power/userspace_autosleep: %m");
	/* Before the main loop answers anyone: whoever asks us sees the knob set. */
	if (m->enabled && m->knob.present && m->knob.manage)
		manager_switch_knob(m, true);
	else
		manager_report_mode(m);

	m->kernel_wakelocks = wakelock_supported();
	r = kernel_lock_new(m->config.wake_lock_name, m->kernel_wakelocks, &stored, &m->kernel_lock);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the kernel lock: %m");
	if (!m->kernel_wakelocks)
		log_notice("No /sys/power/wake_lock (CONFIG_PM_WAKELOCKS): the kernel lock is an epoll wakeup source "
			   "instead, and user input is held in-process");
	if (!kernel_lock_enforced(m->kernel_lock))
		log_warning("The kernel dropped EPOLLWAKEUP from the kernel lock (no CAP_BLOCK_SUSPEND, or a kernel "
			    "without CONFIG_PM_SLEEP): only our own gate holds the machine awake, and a lease taken "
			    "while the kernel is suspending waits for the suspend to end");

	p = (struct suspender_params){
		.state = m->config.state,
		.dry_run = m->dry_run,
		.backoff_base = m->config.backoff_base,
		.backoff_multiplier = m->config.backoff_multiplier,
		.backoff_flat_attempts = m->config.backoff_flat_attempts,
		.backoff_max = m->config.backoff_max,
		.short_suspend = m->config.short_suspend,
		/* Our own locks are never the reason the machine woke up. */
		.own_sources = own_sources,
	};
	r = suspender_new(&p, &m->suspender);
	if (r < 0)
		return log_error_errno(r, "Failed to set up suspender: %m");
	if (!m->enabled)
		suspender_set_enabled(m->suspender, false);
	r = sd_event_add_io(m->event, &m->suspender_source, suspender_get_fd(m->suspender), EPOLLIN,
			    on_suspender_event, m);
	if (r < 0)
		return log_error_errno(r, "Failed to watch suspender: %m");

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		r = negative_errno();
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
	if (r < 0)
		return log_error_errno(r, "Failed to add signal handlers: %m");
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to enable watchdog: %m, ignoring");

	manager_resolve_group(m);
	if (m->bus) {
		r = bus_start(m->bus, max_locks, store_dir, &stored);
		if (r < 0)
			return log_error_errno(r, "Failed to set up the D-Bus API: %m. Exiting with the stored wake "
					       "locks and the kernel lock kept, for a restart");
		log_info("Up to %u D-Bus wake locks (MaxPerUser=%u); they %s", max_locks, m->config.max_locks_per_user,
			 bus_leases_persist(m->bus) ? "survive a restart through the service manager's fd store"
						    : "end if the daemon does");
	}
	/* Close what nobody claimed now; the rest of start-up needs none of it. */
	fdstore_done(&stored);

	/* Whatever an earlier instance held and nobody holds any more goes now. */
	if (m->kernel_wakelocks) {
		r = wakelock_remove_stale(m->config.wake_lock_name, leases_holding(&m->leases));
		if (r < 0)
			log_warning_errno(r, "Failed to list kernel wake locks: %m, ignoring");
	} else if (!leases_holding(&m->leases)) {
		(void)kernel_lock_release(m->kernel_lock);
	}

	/* Without a store, clients need a moment to take their locks again after a restart. */
	if (!bus_leases_persist(m->bus) && m->config.startup_hold > 0) {
		uint64_t id;

		r = manager_hold(m, "autosleepd.startup", "start-up: time for clients to take their wake locks",
				 m->config.startup_hold, &id);
		if (r < 0)
			return log_error_errno(r, "Failed to hold for start-up: %m");
	}

	/* logind handles the lid until our inhibitor is held. */
	m->lid_handler = strdup(m->config.handle_lid ? (m->bus ? "logind (until our inhibitor is held)" : "logind (no bus)")
						     : "logind (HandleLid=no)");
	/* NULL would mean "autosleepd handles the lid". */
	if (!m->lid_handler)
		return log_error_errno(-ENOMEM, "Failed to start: out of memory");
	if (m->config.idle_timeout > 0) {
		r = activity_new(m, &m->activity);
		if (r < 0)
			log_notice_errno(r, "Not following user input: %m");
	}
	/*
	 * The lid and the sleep key are read by the input watch: without it,
	 * taking logind's inhibitor would leave them to nobody, and a closed
	 * laptop would stay awake in a bag.
	 */
	handle_lid = m->config.handle_lid && m->activity;
	if (m->config.handle_lid && !m->activity) {
		const char *why = m->config.idle_timeout > 0 ? "no input devices to follow"
							     : "IdleTimeoutSec=0 turns the input watch off";

		log_notice("Not taking logind's lid and sleep key inhibitor: %s, so nothing here would read the lid; "
			   "logind handles it", why);
		free(m->lid_handler);
		m->lid_handler = NULL;
		if (asprintf(&m->lid_handler, "logind (no input watch: %s)", why) < 0) {
			m->lid_handler = NULL;
			return log_error_errno(-ENOMEM, "Failed to start: out of memory");
		}
	}
	if (m->bus && (m->config.honor_inhibitors || m->config.hold_sleep_inhibitor || handle_lid)) {
		r = logind_new(m, bus_get_sd_bus(m->bus), m->config.honor_inhibitors, m->config.hold_sleep_inhibitor,
			       handle_lid, &m->logind);
		if (r < 0)
			log_warning_errno(r, "Failed to watch logind: %m, ignoring");
		else if (m->config.honor_inhibitors)
			/* Nothing suspends before logind's first answer; logind.c releases this then. */
			manager_set_logind_block(m, true, "logind: waiting for its list of inhibitors");
	}

	if (m->bus) {
		r = sessions_new(manager_core(m), bus_get_sd_bus(m->bus), m->config.honor_idle_hint, m->config.lock_timeout,
				 &m->sessions);
		if (r < 0)
			log_warning_errno(r, "Failed to follow logind's sessions: %m, ignoring");
	}
	if (m->bus && m->config.hold_wake_timers) {
		r = timers_new(manager_core(m), bus_get_sd_bus(m->bus),
			       &(struct timers_params){ .guard = m->config.timer_guard,
							.max_hold = m->config.timer_max_hold,
							.grace = m->config.resume_grace },
			       &m->timers);
		if (r < 0)
			log_warning_errno(r, "Failed to follow systemd's timers: %m, ignoring");
	} else if (!m->config.hold_wake_timers) {
		log_info("Not following systemd's WakeSystem= timers (HoldWakeTimers=no): their work gets ResumeGraceSec");
	}
	/* Start-up counts as activity: whoever is at the machine was not locked out by us yet. */
	if (m->sessions && m->config.lock_before_sleep) {
		m->lock_step = LOCK_STEP_PENDING;
		suspender_set_prepare(m->suspender, true);
	}

	r = suspender_start(m->suspender);
	if (r < 0)
		return log_error_errno(r, "Failed to start suspender thread: %m");
	m->fatal = false;
	return 0;
}

int manager_run(struct manager *m)
{
	int r;

	(void)notify_send("READY=1", NULL, 0);
	manager_update_status(m);
	r = sd_event_loop(m->event);
	if (r < 0)
		log_error_errno(r, "Event loop failed: %m");
	if (m->suspender && suspender_stop(m->suspender, STOP_TIMEOUT) == -ETIMEDOUT)
		log_warning("Suspender thread still inside the kernel after %llums, exiting anyway",
			    (unsigned long long)(STOP_TIMEOUT / USEC_PER_MSEC));
	return m->fatal ? m->exit_code : r;
}

struct manager *manager_free(struct manager *m)
{
	if (!m)
		return NULL;
	/*
	 * A clean stop hands the machine back: the wake_lock entry goes. The
	 * epoll wakeup source goes with our fds unless systemd keeps the copies
	 * in its store for a restart, which is what we want. After a fatal
	 * error everything stays for the next instance.
	 */
	if (!m->fatal && m->kernel_wakelocks && m->kernel_lock)
		(void)kernel_lock_release(m->kernel_lock);
	/*
	 * Even after a fatal error: nothing suspends until the next instance,
	 * which sets the knob again before it does.
	 */
	if (m->knob.present && m->knob.manage && knob_deactivate(&m->knob) < 0)
		log_warning("Failed to put /sys/power/userspace_autosleep back to %d, ignoring", m->knob.saved);
	knob_done(&m->knob);
	m->timers = timers_free(m->timers);
	m->activity = activity_free(m->activity);
	m->sessions = sessions_free(m->sessions);
	m->logind = logind_free(m->logind);
	soak_session_free(m);
	/* Stored leases stay stored: a restart takes them back, a stop makes systemd drop them. */
	m->bus = bus_free(m->bus, true);
	leases_done(&m->leases);
	sd_event_source_unref(m->deadline_source);
	sd_event_source_disable_unref(m->settle_source);
	sd_event_source_unref(m->suspender_source);
	m->suspender = suspender_free(m->suspender);
	m->kernel_lock = kernel_lock_free(m->kernel_lock);
	sd_event_unref(m->event);
	notify_close();
	kconfig_done(&m->kconfig);
	config_done(&m->config);
	free(m->lid_handler);
	free(m->disabled_path);
	free(m);
	return NULL;
}
