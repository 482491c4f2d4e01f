/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <systemd/sd-daemon.h>

#include "activity.h"
#include "bus.h"
#include "log.h"
#include "logind.h"
#include "macro.h"
#include "manager.h"
#include "sysfs.h"
#include "wakelock.h"

/* journalctl MESSAGE_ID=... finds every suspend result. */
#define SUSPEND_RESULT_MESSAGE_ID "MESSAGE_ID=5c1e3b0a8f4d4e6b9a2f7d31c8e0b642"

/* How long SIGTERM waits for the thread before exiting regardless. */
#define STOP_TIMEOUT (800 * USEC_PER_MSEC)

static void manager_update_status(struct manager *m)
{
	sd_notifyf(false, "STATUS=%s, %u lock%s held, %" PRIu64 " suspend%s",
		   m->enabled ? strna(suspender_state_to_string(m->state)) : "disabled", m->leases.n, m->leases.n == 1 ? "" : "s",
		   m->stats.results[SUSPEND_SUCCESS], m->stats.results[SUSPEND_SUCCESS] == 1 ? "" : "s");
}

/* 0 -> 1 and 1 -> 0 leases: one kernel lock stands for all of them. */
static void on_leases_change(struct leases *l, bool held, void *userdata)
{
	struct manager *m = userdata;
	int r;

	(void)l;
	if (held) {
		/* Kernel lock first, so a suspend already past our gate is aborted by the kernel. */
		if (m->kernel_wakelocks && !m->kernel_lock_held) {
			r = wakelock_lock(m->config.wake_lock_name, 0);
			if (r < 0)
				log_error_errno(r, "Failed to take kernel wake lock '%s': %m; holding in-process only",
						m->config.wake_lock_name);
			else
				m->kernel_lock_held = true;
		}
		suspender_set_blocked(m->suspender, true);
		logind_set_held(m->logind, true);
	} else {
		suspender_set_blocked(m->suspender, false);
		if (m->kernel_lock_held) {
			r = wakelock_unlock(m->config.wake_lock_name);
			if (r < 0)
				log_error_errno(r, "Failed to release kernel wake lock '%s': %m",
						m->config.wake_lock_name);
			m->kernel_lock_held = false;
		}
		logind_set_held(m->logind, false);
	}
	manager_update_status(m);
}

static void on_lease_release(struct leases *l, struct lease *x, const char *reason, void *userdata)
{
	struct manager *m = userdata;

	(void)l;
	log_debug("Lease %" PRIu64 " '%s' of %s ended: %s", x->id, x->name, x->owner, reason);
	if (x->id == m->logind_lease)
		m->logind_lease = 0;
	bus_lease_released(m->bus, x, reason);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata);

static int manager_arm_deadline(struct manager *m)
{
	usec_t next = leases_next_deadline(&m->leases);
	int r;

	if (next == USEC_INFINITY)
		return m->deadline_source ? sd_event_source_set_enabled(m->deadline_source, SD_EVENT_OFF) : 0;
	if (!m->deadline_source) {
		/* CLOCK_BOOTTIME: a deadline passes while suspended too. */
		r = sd_event_add_time(m->event, &m->deadline_source, CLOCK_BOOTTIME, next, 0, on_deadline, m);
		if (r < 0)
			return log_error_errno(r, "Failed to add lease deadline timer: %m");
		return 0;
	}
	r = sd_event_source_set_time(m->deadline_source, next);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(m->deadline_source, SD_EVENT_ONESHOT);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	(void)usec;
	leases_expire(&m->leases);
	return manager_arm_deadline(m);
}

int manager_acquire(struct manager *m, const char *name, const char *owner, const char *why, uid_t uid,
		    pid_t pid, usec_t timeout, uint64_t *ret_id)
{
	usec_t deadline = USEC_INFINITY;
	uint64_t id;
	int r;

	if (timeout != 0 && timeout != USEC_INFINITY)
		deadline = now(CLOCK_BOOTTIME) + timeout;
	r = leases_acquire(&m->leases, name, owner, why, uid, pid, deadline, &id);
	if (r < 0)
		return r;
	log_debug("Lease %" PRIu64 " '%s' acquired by %s: %s", id, name, strna(owner), strna(why));
	(void)manager_arm_deadline(m);
	*ret_id = id;
	return 0;
}

int manager_release(struct manager *m, uint64_t id, const char *reason)
{
	int r;

	r = leases_release(&m->leases, id, reason);
	if (r < 0)
		return r;
	(void)manager_arm_deadline(m);
	return 0;
}

void manager_rearm(struct manager *m)
{
	(void)manager_arm_deadline(m);
}

void manager_set_enabled(struct manager *m, bool enabled)
{
	if (m->enabled == enabled)
		return;
	m->enabled = enabled;
	log_notice("Autosleep %s", enabled ? "enabled" : "disabled");
	suspender_set_enabled(m->suspender, enabled);
	bus_emit_changed(m->bus, "Enabled");
	manager_update_status(m);
}

void manager_set_logind_block(struct manager *m, bool blocked, const char *who)
{
	uint64_t id;
	int r;

	if (blocked == (m->logind_lease != 0))
		return;
	if (!blocked) {
		log_info("No more logind inhibitors");
		(void)manager_release(m, m->logind_lease, "released");
		return;
	}
	log_info("Staying awake for %s", who);
	r = manager_acquire(m, "logind-inhibitor", "org.freedesktop.login1", who, 0, 0, 0, &id);
	if (r < 0) {
		log_error_errno(r, "Failed to hold for logind inhibitor: %m");
		return;
	}
	m->logind_lease = id;
	bus_lease_acquired(m->bus, leases_find(&m->leases, id));
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

static void log_result(struct manager *m, const struct suspend_report *rep)
{
	char asleep[FORMAT_TIMESPAN_MAX], delay[FORMAT_TIMESPAN_MAX], msg[512];
	char f_result[64], f_attempt[64], f_asleep[64], f_errno[64], f_reason[128], f_dev[96], f_step[64];
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
			 "Suspend #%" PRIu64 ": late-cancel, state write failed (%s) after a wakeup event, next attempt in %s",
			 rep->attempt, strerror(-rep->error), delay);
		break;
	case SUSPEND_FAILURE:
		level = LOG_WARNING;
		snprintf(msg, sizeof(msg),
			 "Suspend #%" PRIu64 ": failure (%s), failed device '%s', step '%s', errno %d, next attempt in %s",
			 rep->attempt, strerror(-rep->error), rep->failed_dev, rep->failed_step, rep->failed_errno,
			 delay);
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
	log_struct(level, msg, SUSPEND_RESULT_MESSAGE_ID, f_result, f_attempt, f_asleep, f_errno, f_reason, f_dev,
		   f_step);
}

static int on_suspender_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;
	struct suspender_event ev;
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
		case SUSPENDER_EVENT_RESULT:
			m->stats.attempts++;
			if (ev.report.result >= 0 && ev.report.result < _SUSPEND_RESULT_MAX)
				m->stats.results[ev.report.result]++;
			m->stats.total_asleep += ev.report.asleep;
			log_result(m, &ev.report);
			/* Early cancels are the protocol at work, not cycles worth a signal. */
			if (ev.report.result == SUSPEND_EARLY_CANCEL)
				break;
			manager_record(m, &ev.report);
			bus_emit_resumed(m->bus, &ev.report);
			if (ev.report.result == SUSPEND_SUCCESS) {
				snprintf(m->last_wake_reason, sizeof(m->last_wake_reason), "%s", ev.report.wake_reason);
				bus_emit_changed(m->bus, "SuspendCount");
				bus_emit_changed(m->bus, "LastWakeReason");
				/* Leases with deadlines may have passed while we slept. */
				on_deadline(NULL, 0, m);
				activity_resumed(m->activity, ev.report.wake_reason);
			}
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
	sd_notify(false, "STOPPING=1");
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
	m->state = SUSPENDER_AWAKE;
	m->enabled = true;
	snprintf(m->last_wake_reason, sizeof(m->last_wake_reason), "none");
	leases_init(&m->leases, on_leases_change, m);
	m->leases.on_release = on_lease_release;
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
	if (m->kconfig.userspace_autosleep == KCONFIG_NO)
		log_warning("This kernel lacks CONFIG_PM_USERSPACE_AUTOSLEEP: every suspend cycle will reseed the crng "
			    "and clear all WireGuard session keys. Build it with kernel-patches/ for frequent suspend.");
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

int manager_startup(struct manager *m)
{
	struct suspender_params p;
	sigset_t ss;
	int r;

	r = manager_report_kernel(m);
	if (r < 0)
		return r;

	m->kernel_wakelocks = wakelock_supported();
	if (!m->kernel_wakelocks) {
		log_notice("No /sys/power/wake_lock (CONFIG_PM_WAKELOCKS): wake locks are held in-process only and end "
			   "with the daemon");
	} else {
		r = wakelock_remove_stale(m->config.wake_lock_name);
		if (r < 0)
			log_warning_errno(r, "Failed to list kernel wake locks: %m, ignoring");
	}

	p = (struct suspender_params){
		.state = m->config.state,
		.dry_run = m->dry_run,
		.backoff_base = m->config.backoff_base,
		.backoff_multiplier = m->config.backoff_multiplier,
		.backoff_flat_attempts = m->config.backoff_flat_attempts,
		.backoff_max = m->config.backoff_max,
		.short_suspend = m->config.short_suspend,
	};
	r = suspender_new(&p, &m->suspender);
	if (r < 0)
		return log_error_errno(r, "Failed to set up suspender: %m");
	r = sd_event_add_io(m->event, &m->suspender_source, suspender_get_fd(m->suspender), EPOLLIN,
			    on_suspender_event, m);
	if (r < 0)
		return log_error_errno(r, "Failed to watch suspender: %m");

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		return log_error_errno(negative_errno(), "Failed to block signals: %m");
	r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
	if (r < 0)
		return log_error_errno(r, "Failed to add signal handlers: %m");
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to enable watchdog: %m, ignoring");

	r = bus_new(m, &m->bus);
	if (r == -EADDRINUSE)
		return log_error_errno(r, "Another autosleepd owns %s on the system bus", BUS_NAME);
	if (r < 0) {
		/* Useful on a fixture tree or in an initrd; a unit always has the bus. */
		log_warning_errno(r, "No D-Bus system bus (%m): running without the D-Bus API and logind integration");
	} else if (m->config.honor_inhibitors || m->config.hold_sleep_inhibitor) {
		r = logind_new(m, bus_get_sd_bus(m->bus), m->config.honor_inhibitors, m->config.hold_sleep_inhibitor,
			       &m->logind);
		if (r < 0)
			log_warning_errno(r, "Failed to watch logind: %m, ignoring");
	}

	if (m->config.idle_timeout > 0) {
		r = activity_new(m, &m->activity);
		if (r < 0)
			log_notice_errno(r, "Not following user input: %m");
	}

	r = suspender_start(m->suspender);
	if (r < 0)
		return log_error_errno(r, "Failed to start suspender thread: %m");
	return 0;
}

int manager_run(struct manager *m)
{
	int r;

	sd_notify(false, "READY=1");
	manager_update_status(m);
	r = sd_event_loop(m->event);
	if (r < 0)
		log_error_errno(r, "Event loop failed: %m");
	if (m->suspender && suspender_stop(m->suspender, STOP_TIMEOUT) == -ETIMEDOUT)
		log_warning("Suspender thread still inside the kernel after %llums, exiting anyway",
			    (unsigned long long)(STOP_TIMEOUT / USEC_PER_MSEC));
	return r;
}

struct manager *manager_free(struct manager *m)
{
	if (!m)
		return NULL;
	/* A clean stop hands the machine back: no kernel lock may outlive us. */
	if (m->kernel_lock_held && wakelock_unlock(m->config.wake_lock_name) >= 0)
		m->kernel_lock_held = false;
	m->leases.on_change = NULL;
	/* Frees the bus side of every lease while the bus still exists. */
	while (m->leases.head)
		leases_release(&m->leases, m->leases.head->id, "shutdown");
	leases_done(&m->leases);
	m->logind = logind_free(m->logind);
	m->activity = activity_free(m->activity);
	m->bus = bus_free(m->bus);
	sd_event_source_unref(m->deadline_source);
	sd_event_source_unref(m->suspender_source);
	m->suspender = suspender_free(m->suspender);
	sd_event_unref(m->event);
	kconfig_done(&m->kconfig);
	config_done(&m->config);
	free(m);
	return NULL;
}
