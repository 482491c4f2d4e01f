/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bus.h"
#include "event-util.h"
#include "gate-wait.h"
#include "kernel-lock.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "soak-session.h"

static void soak_end(struct manager *m)
{
	m->soak_track = sd_bus_track_unref(m->soak_track);
	suspender_set_paused(m->suspender, false);
	log_info("Soak client left: autosleep resumes");
}

static int on_track_empty(sd_bus_track *t, void *userdata)
{
	struct manager *m = userdata;

	(void)t;
	soak_end(m);
	return 0;
}

/* The record as a{sv}: what autosleepctl soak turns into one JSON line. */
static int append_record(sd_bus_message *reply, const struct soak_record *rec)
{
	int r;

	r = sd_bus_message_open_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}", "Result", "s", soak_result_to_string(rec->result),
				  "StartUSec", "t", (uint64_t)rec->start, "WakeupCount", "t", rec->count, "Errno", "i",
				  (int32_t)-rec->error, "AsleepUSec", "t", (uint64_t)rec->asleep, "WriteUSec", "t",
				  (uint64_t)rec->write_usec, "AwakeInWriteUSec", "t", (uint64_t)rec->awake_in_write);
	if (r >= 0)
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}", "LastHwSleepUSec", "x",
					  rec->last_hw_sleep, "SuccessDelta", "t", rec->d_success, "FailDelta", "t",
					  rec->d_fail, "AlarmArmed", "b", rec->alarm_armed, "AlarmCleared", "b",
					  rec->alarm_cleared, "WakeReason", "s", rec->wake_reason, "Detail", "s", rec->detail,
					  "FailedDevice", "s", rec->failed_dev, "FailedStep", "s", rec->failed_step,
					  "FailedErrno", "i", (int32_t)rec->failed_errno);
	/* Battery figures only where both ends were read: a cycle without them has none. */
	if (r >= 0 && rec->battery_entry.valid && rec->battery_exit.valid &&
	    rec->battery_entry.unit == rec->battery_exit.unit)
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}", "BatteryUnit", "s",
					  battery_unit_to_string(rec->battery_entry.unit), "BatteryEntry", "t",
					  rec->battery_entry.now, "BatteryExit", "t", rec->battery_exit.now, "BatteryFull", "t",
					  rec->battery_exit.full, "BatteryEnergyEntryUWh", "t", rec->battery_entry.energy_now,
					  "BatteryEnergyExitUWh", "t", rec->battery_exit.energy_now, "BatteryOnAC", "b",
					  rec->battery_entry.on_ac || rec->battery_exit.on_ac);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'e', "sv");
	if (r >= 0)
		r = sd_bus_message_append(reply, "s", "Blockers");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'v', "a(st)");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(st)");
	for (unsigned i = 0; r >= 0 && i < rec->n_blockers; i++)
		r = sd_bus_message_append(reply, "(st)", rec->blockers[i].name, rec->blockers[i].ms * USEC_PER_MSEC);
	for (int i = 0; r >= 0 && i < 4; i++)
		r = sd_bus_message_close_container(reply);
	return r;
}

static void reply_record(struct manager *m, const struct soak_record *rec)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_message_new_method_return(m->soak_call, &reply);
	if (r >= 0)
		r = append_record(reply, rec);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	if (r < 0)
		log_warning_errno(r, "Failed to send the soak record, ignoring: %m");
	m->soak_call = sd_bus_message_unref(m->soak_call);
	m->soak_watchdog = sd_event_source_disable_unref(m->soak_watchdog);
}

static int on_watchdog(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	struct soak_record rec = { .result = SOAK_HANG, .start = m->soak_start, .last_hw_sleep = -1 };

	(void)s;
	(void)usec;
	log_error("Soak cycle: the state write has not returned after the watchdog's time; reporting a hang");
	snprintf(rec.detail, sizeof(rec.detail), "state write did not return within the watchdog time");
	m->soak_hung = true;
	reply_record(m, &rec);
	return 0;
}

/* Let a forced cycle past our own kernel lock, which would block its wakeup_count read. */
static void force_release(struct manager *m, bool release)
{
	int r;

	if (!leases_holding(&m->leases))
		return;
	r = release ? kernel_lock_release(m->kernel_lock) : kernel_lock_hold(m->kernel_lock);
	if (r < 0)
		log_warning_errno(r, "Failed to %s the kernel lock around a forced soak cycle, ignoring: %m",
				  release ? "release" : "take back");
}

int soak_session_cycle(struct manager *m, sd_bus_message *call, const struct soak_request *req, usec_t watchdog,
		       sd_bus_error *error)
{
	const char *sender = sd_bus_message_get_sender(call);
	struct gate_waits *g = bus_gate_waits(m->bus);
	int resumed, r;

	/* Back after the pause waited for the loop's own state write to return. */
	resumed = gate_wait_resume(g, call, "autosleep stays paused for this client; try again", error);
	if (resumed < 0)
		return resumed;
	if (resumed == GATE_PARKED)
		return 1;
	/* It left while it waited, and autosleep resumed then: nobody to soak for. */
	if (resumed == GATE_PASSED && (!m->soak_track || !sender || !sd_bus_track_contains(m->soak_track, sender)))
		return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, "The soak client left while its cycle waited");
	/* A soak cycle is a real suspend: nothing a dry run may do. */
	if (m->dry_run)
		return sd_bus_error_set(error, SD_BUS_ERROR_NOT_SUPPORTED, "autosleepd runs with --dry-run: no soak cycles");
	if (m->soak_hung)
		return sd_bus_error_set(error, SD_BUS_ERROR_FAILED,
					"The last soak cycle's state write never returned; no more cycles until it does");
	if (m->soak_call)
		return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, "A soak cycle is already running");
	if (m->soak_track && sender && !sd_bus_track_contains(m->soak_track, sender))
		return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, "Another client is soaking; one at a time");
	if (!m->soak_track) {
		r = sd_bus_track_new(sd_bus_message_get_bus(call), &m->soak_track, on_track_empty, m);
		if (r < 0)
			return r;
		r = sd_bus_track_add_sender(m->soak_track, call);
		if (r < 0) {
			m->soak_track = sd_bus_track_unref(m->soak_track);
			return r;
		}
		log_info("Soak client %s: autosleep pauses until it leaves", strna(sender));
		suspender_set_paused(m->suspender, true);
	}
	/* The cycle starts once no attempt of the loop's own is under way. */
	if (resumed == GATE_FRESH) {
		r = gate_wait(g, call, false, error);
		if (r <= 0)
			return r < 0 ? r : 1;
	}
	if (req->force)
		force_release(m, true);
	m->soak_forced = req->force;
	m->soak_start = now(CLOCK_REALTIME);
	r = suspender_soak(m->suspender, req);
	if (r < 0) {
		if (req->force)
			force_release(m, false);
		return sd_bus_error_set_errnof(error, -r, "Cannot start a soak cycle: %s", strerror(-r));
	}
	m->soak_call = sd_bus_message_ref(call);
	/* Monotonic: time asleep does not count against the watchdog. */
	r = event_reset_time(m->event, &m->soak_watchdog, CLOCK_MONOTONIC, usec_add(req->read_timeout, watchdog), 0,
			     on_watchdog, m, true);
	if (r < 0)
		log_warning_errno(r, "Failed to arm the soak watchdog, ignoring: %m");
	return 1;
}

void soak_session_finished(struct manager *m, const struct soak_record *rec)
{
	if (m->soak_forced && leases_holding(&m->leases))
		force_release(m, false);
	m->soak_forced = false;
	log_info("Soak cycle: %s, slept %" PRIu64 " ms, woken by %s%s%s", soak_result_to_string(rec->result),
		 (uint64_t)(rec->asleep / USEC_PER_MSEC), rec->wake_reason[0] ? rec->wake_reason : "-",
		 rec->detail[0] ? "; " : "", rec->detail);
	if (m->soak_hung) {
		/* The watchdog answered already; the write came back at last. */
		m->soak_hung = false;
		return;
	}
	if (m->soak_call)
		reply_record(m, rec);
}

void soak_session_free(struct manager *m)
{
	m->soak_watchdog = sd_event_source_disable_unref(m->soak_watchdog);
	m->soak_call = sd_bus_message_unref(m->soak_call);
	m->soak_track = sd_bus_track_unref(m->soak_track);
}
