/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-names.h"
#include "bus-dict.h"
#include "escape.h"
#include "json.h"
#include "soak.h"
#include "macro.h"
#include "time-util.h"


static bool arg_json;
static const char *arg_name;
static const char *arg_why = "";
static usec_t arg_timeout;
static bool arg_lid_closed;

static void help(void)
{
	printf("Usage: autosleepctl [OPTIONS...] COMMAND ...\n\n"
	       "Control autosleepd, the opportunistic suspend daemon.\n\n"
	       "Commands:\n"
	       "  status                 Show state, wake locks, recent cycles, the kernel's mode for\n"
	       "                         frequent suspend (compile-time, runtime-knob or none), logind's\n"
	       "                         sessions, the lid, the lock step, the next wake-up by a systemd\n"
	       "                         timer, the timers held for and the battery's drain\n"
	       "  list                   List wake locks\n"
	       "  hold [OPTIONS] -- CMD  Hold a wake lock while CMD runs; exit with its status\n"
	       "  stats                  Show per-lock and suspend statistics\n"
	       "  enable                 Let autosleepd suspend the machine again\n"
	       "  disable                Stop autosleepd from suspending the machine\n"
	       "  monitor                Print suspend, resume and wake lock events as they happen\n"
	       "  soak [OPTIONS]         Suspend and resume many times and report (soak --help)\n\n"
	       "Options:\n"
	       "  -h --help              Show this help\n"
	       "     --version           Show the version\n"
	       "     --json              Print JSON (status, list, stats, monitor)\n"
	       "     --name=NAME         Wake lock name for hold (default: the command's name)\n"
	       "     --why=TEXT          Reason shown with the lock, for hold\n"
	       "     --timeout=SPAN      Release the lock after SPAN even if CMD still runs (hold)\n"
	       "     --lid-closed        Hold with the lid closed too (hold; a user's lock otherwise\n"
	       "                         waits for the lid to open)\n");
}

/*
 * Every string the daemon sends is printed through esc(). The daemon passes
 * on names and reasons from other users, logind and devices, and a control
 * character in one would reach this terminal as an escape sequence, or
 * stand as a line of its own that looks like ours. A ring of buffers lets
 * one printf() take several.
 */
static const char *esc(const char *s)
{
	static char ring[16][2048];
	static unsigned next;

	return escape_untrusted(ring[next++ % ELEMENTSOF(ring)], sizeof(ring[0]), s);
}

static int bus_fail(const char *what, const sd_bus_error *e, int r)
{
	fprintf(stderr, "Failed to %s: %s\n", what, e && e->message ? esc(e->message) : strerror(-r));
	return r;
}

static void format_time(char *buf, size_t size, uint64_t usec)
{
	time_t t = (time_t)(usec / USEC_PER_SEC);
	struct tm tm;

	if (usec == 0 || !localtime_r(&t, &tm))
		snprintf(buf, size, "-");
	else
		strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

static int get_string_property(sd_bus *bus, const char *prop, char **ret)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, prop, &e, ret);

	return r < 0 ? bus_fail("read properties", &e, r) : 0;
}

static int get_trivial_property(sd_bus *bus, const char *prop, char type, void *ret)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_get_property_trivial(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, prop, &e, type, ret);

	return r < 0 ? bus_fail("read properties", &e, r) : 0;
}

struct lock_state {
	const char *state; /* NULL: a daemon before ListWakeLocksWithState */
	int lid_closed;    /* -1: not said */
};

static int lock_state_entry(void *userdata, const char *key, sd_bus_message *m, const char *type)
{
	struct lock_state *st = userdata;
	int b, r;

	if (strcmp(key, "State") == 0 && strcmp(type, "s") == 0) {
		r = sd_bus_message_read(m, "s", &st->state);
		return r < 0 ? r : 1;
	}
	if (strcmp(key, "LidClosed") == 0 && strcmp(type, "b") == 0) {
		r = sd_bus_message_read(m, "b", &b);
		if (r < 0)
			return r;
		st->lid_closed = b;
		return 1;
	}
	return 0;
}

/*
 * Print ListWakeLocksWithState(), as a table or a JSON array; from a daemon
 * that does not have it yet (an upgrade not restarted), ListWakeLocks()
 * without the state.
 */
static int print_locks(sd_bus *bus, bool json)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *name, *why, *owner;
	uint32_t uid, pid;
	uint64_t since, deadline;
	bool first_lock = true, with_state = true;
	unsigned n = 0, waiting = 0;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "ListWakeLocksWithState", &e, &reply, "");
	if (r < 0 && sd_bus_error_has_name(&e, SD_BUS_ERROR_UNKNOWN_METHOD)) {
		sd_bus_error_free(&e);
		with_state = false;
		r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "ListWakeLocks", &e, &reply, "");
	}
	if (r < 0)
		return bus_fail("list wake locks", &e, r);
	r = sd_bus_message_enter_container(reply, 'a', with_state ? "(sssuutta{sv})" : "(sssuutt)");
	if (r < 0)
		return r;
	if (json)
		fputc('[', stdout);
	while ((r = sd_bus_message_enter_container(reply, 'r', with_state ? "sssuutta{sv}" : "sssuutt")) > 0) {
		struct lock_state st = { .lid_closed = -1 };
		char s[32], d[32];

		r = sd_bus_message_read(reply, "sssuutt", &name, &why, &owner, &uid, &pid, &since, &deadline);
		if (r >= 0 && with_state)
			r = bus_dict_walk(reply, lock_state_entry, &st);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		if (r < 0)
			return r;
		waiting += st.state && strcmp(st.state, "waiting-for-lid") == 0;
		if (json) {
			bool first = true;

			json_object_in_array(stdout, &first_lock);
			json_kv_string(stdout, &first, "name", name);
			json_kv_string(stdout, &first, "why", why);
			json_kv_string(stdout, &first, "owner", owner);
			json_kv_u64(stdout, &first, "uid", uid);
			json_kv_u64(stdout, &first, "pid", pid);
			json_kv_u64(stdout, &first, "since_usec", since);
			json_kv_u64(stdout, &first, "deadline_usec", deadline);
			if (st.state)
				json_kv_string(stdout, &first, "state", st.state);
			if (st.lid_closed >= 0)
				json_kv_bool(stdout, &first, "lid_closed", st.lid_closed);
			fputc('}', stdout);
			continue;
		}
		if (n++ == 0)
			printf("%-24s %-8s %-8s %-10s %-19s %-19s %-8s %s\n", "NAME", "UID", "PID", "OWNER", "SINCE",
			       "DEADLINE", "STATE", "WHY");
		format_time(s, sizeof(s), since);
		format_time(d, sizeof(d), deadline);
		/*
		 * No owner: a lock restored from an earlier bus, whose unique names are gone.
		 * lid-wait: a person's lock while the lid is closed; it holds again once the lid opens.
		 */
		printf("%-24s %-8" PRIu32 " %-8" PRIu32 " %-10s %-19s %-19s %-8s %s\n", esc(name), uid, pid,
		       owner[0] ? esc(owner) : "-", s, d,
		       !st.state ? "-" : strcmp(st.state, "waiting-for-lid") == 0 ? "lid-wait" : esc(st.state), esc(why));
	}
	if (r < 0)
		return r;
	if (json)
		fputc(']', stdout);
	else if (waiting)
		printf("\n%u wake lock%s, %u of them waiting for the lid to open.\n", n, n == 1 ? "" : "s", waiting);
	else
		printf("%s%u wake lock%s held.\n", n ? "\n" : "", n, n == 1 ? "" : "s");
	return 0;
}

static int verb_list(sd_bus *bus, int argc, char **argv)
{
	int r = print_locks(bus, arg_json);

	if (r >= 0 && arg_json)
		fputc('\n', stdout);
	return r;
}

/* Walk GetStatistics(); cb gets each lock row, then each suspend key with its variant entered. */
struct stats_cb {
	void (*lock)(void *u, const char *name, uint64_t count, uint64_t total, uint64_t max, uint64_t last,
		     uint32_t active);
	bus_dict_entry_t suspend;
	void *userdata;
};

static int walk_statistics(sd_bus *bus, const struct stats_cb *cb)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *name;
	uint64_t count, total, max, last;
	uint32_t active;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "GetStatistics", &e, &reply, "");
	if (r < 0)
		return bus_fail("get statistics", &e, r);
	r = sd_bus_message_enter_container(reply, 'a', "(sttttu)");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_read(reply, "(sttttu)", &name, &count, &total, &max, &last, &active)) > 0)
		if (cb->lock)
			cb->lock(cb->userdata, name, count, total, max, last, active);
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(reply);
	if (r < 0)
		return r;
	return bus_dict_walk(reply, cb->suspend, cb->userdata);
}

struct stats_out {
	bool first_lock, first_key, in_suspend;
	unsigned recent_max;
};

static void stats_lock(void *u, const char *name, uint64_t count, uint64_t total, uint64_t max, uint64_t last,
		       uint32_t active)
{
	struct stats_out *o = u;
	char a[FORMAT_TIMESPAN_MAX], b[FORMAT_TIMESPAN_MAX], l[32];

	if (arg_json) {
		bool first = true;

		json_object_in_array(stdout, &o->first_lock);
		json_kv_string(stdout, &first, "name", name);
		json_kv_u64(stdout, &first, "count", count);
		json_kv_u64(stdout, &first, "total_usec", total);
		json_kv_u64(stdout, &first, "max_usec", max);
		json_kv_u64(stdout, &first, "last_change_usec", last);
		json_kv_u64(stdout, &first, "active", active);
		fputc('}', stdout);
		return;
	}
	if (o->first_lock)
		printf("%-24s %8s %14s %14s %-19s %s\n", "LOCK", "COUNT", "TOTAL", "LONGEST", "LAST CHANGE", "ACTIVE");
	o->first_lock = false;
	format_time(l, sizeof(l), last);
	printf("%-24s %8" PRIu64 " %14s %14s %-19s %" PRIu32 "\n", esc(name), count,
	       format_timespan(a, sizeof(a), total),
	       format_timespan(b, sizeof(b), max), l, active);
}

static int print_recent(sd_bus_message *m, unsigned max)
{
	const char *result, *reason, *error;
	uint64_t attempt, when, asleep;
	unsigned n = 0;
	bool first_row = true;
	int r;

	r = sd_bus_message_enter_container(m, 'a', "(tsttss)");
	if (r < 0)
		return r;
	if (arg_json)
		fputc('[', stdout);
	while ((r = sd_bus_message_read(m, "(tsttss)", &attempt, &result, &when, &asleep, &reason, &error)) > 0) {
		char t[32], a[FORMAT_TIMESPAN_MAX];

		if (n++ >= max)
			continue;
		if (arg_json) {
			bool first = true;

			json_object_in_array(stdout, &first_row);
			json_kv_u64(stdout, &first, "attempt", attempt);
			json_kv_string(stdout, &first, "result", result);
			json_kv_u64(stdout, &first, "time_usec", when);
			json_kv_u64(stdout, &first, "asleep_usec", asleep);
			json_kv_string(stdout, &first, "wake_reason", reason);
			json_kv_string(stdout, &first, "error", error);
			fputc('}', stdout);
			continue;
		}
		format_time(t, sizeof(t), when);
		/* logind's suspends are no attempts of ours and have no number. */
		if (strcmp(result, "external") == 0)
			printf("  %-7s %s  %-12s slept %-10s %s\n", "-", t, esc(result),
			       format_timespan(a, sizeof(a), asleep), esc(reason));
		else
			printf("  #%-6" PRIu64 " %s  %-12s slept %-10s %s\n", attempt, t, esc(result),
			       format_timespan(a, sizeof(a), asleep), esc(*error ? error : reason));
	}
	if (r < 0)
		return r;
	if (arg_json)
		fputc(']', stdout);
	else if (n == 0)
		printf("  (none yet)\n");
	return sd_bus_message_exit_container(m);
}

/* KernelBlockers: the kernel wakeup sources that kept the machine awake, as a table or a JSON array. */
static int print_blockers(sd_bus_message *m, const char *indent)
{
	const char *name;
	uint64_t count, total, last_time, when;
	bool first_row = true;
	unsigned n = 0;
	int r;

	r = sd_bus_message_enter_container(m, 'a', "(stttt)");
	if (r < 0)
		return r;
	if (arg_json)
		fputc('[', stdout);
	while ((r = sd_bus_message_read(m, "(stttt)", &name, &count, &total, &last_time, &when)) > 0) {
		char a[FORMAT_TIMESPAN_MAX], b[FORMAT_TIMESPAN_MAX], t[32];

		if (arg_json) {
			bool first = true;

			json_object_in_array(stdout, &first_row);
			json_kv_string(stdout, &first, "name", name);
			json_kv_u64(stdout, &first, "count", count);
			json_kv_u64(stdout, &first, "total_usec", total);
			json_kv_u64(stdout, &first, "last_usec", last_time);
			json_kv_u64(stdout, &first, "time_usec", when);
			fputc('}', stdout);
			continue;
		}
		if (n++ == 0)
			printf("%s%-24s %8s %14s %14s %s\n", indent, "KERNEL SOURCE", "COUNT", "TOTAL", "LAST", "WHEN");
		format_time(t, sizeof(t), when);
		printf("%s%-24s %8" PRIu64 " %14s %14s %s\n", indent, esc(name), count, format_timespan(a, sizeof(a), total),
		       format_timespan(b, sizeof(b), last_time), t);
	}
	if (r < 0)
		return r;
	if (arg_json)
		fputc(']', stdout);
	else if (n == 0)
		printf("%s(none)\n", indent);
	return sd_bus_message_exit_container(m);
}

static int stats_suspend(void *u, const char *key, sd_bus_message *m, const char *type)
{
	struct stats_out *o = u;
	char buf[FORMAT_TIMESPAN_MAX];
	const char *s;
	uint64_t t;
	int32_t i;
	double d;
	int r;

	if (arg_json && !o->in_suspend) {
		/* Locks come first in the reply; close their array before the suspend object. */
		fputs("],\"suspend\":{", stdout);
		o->in_suspend = true;
	}
	if (!arg_json && !o->in_suspend) {
		printf("%s", o->first_lock ? "" : "\n");
		o->in_suspend = true;
	}
	if (arg_json)
		json_key(stdout, &o->first_key, key);
	else if (strcmp(key, "Recent") == 0)
		printf("Recent cycles:\n");
	else if (strcmp(key, "KernelBlockers") == 0)
		printf("Kernel wakeup sources that kept it awake:\n");
	else
		printf("%-18s ", esc(key));
	if (strcmp(type, "a(tsttss)") == 0)
		return print_recent(m, o->recent_max) < 0 ? -EBADMSG : 1;
	if (strcmp(type, "a(stttt)") == 0)
		return print_blockers(m, "  ") < 0 ? -EBADMSG : 1;
	switch (type[0]) {
	case 't':
		r = sd_bus_message_read(m, "t", &t);
		if (r < 0)
			return r;
		if (arg_json)
			printf("%" PRIu64, t);
		else if (strstr(key, "USec"))
			printf("%s\n", format_timespan(buf, sizeof(buf), t));
		else
			printf("%" PRIu64 "\n", t);
		return 1;
	case 'i':
		r = sd_bus_message_read(m, "i", &i);
		if (r < 0)
			return r;
		printf(arg_json ? "%" PRId32 : "%" PRId32 "\n", i);
		return 1;
	case 'd':
		r = sd_bus_message_read(m, "d", &d);
		if (r < 0)
			return r;
		/* The daemon says -1 for "no figure". */
		if (arg_json)
			json_figure(stdout, d);
		else if (d < 0)
			printf("-\n");
		else
			printf("%.6g\n", d);
		return 1;
	case 's':
		r = sd_bus_message_read(m, "s", &s);
		if (r < 0)
			return r;
		if (arg_json)
			json_string(stdout, s);
		else
			printf("%s\n", *s ? esc(s) : "-");
		return 1;
	}
	if (arg_json)
		fputs("null", stdout);
	else
		printf("?\n");
	return 0;
}

static int verb_stats(sd_bus *bus, int argc, char **argv)
{
	struct stats_out o = { .first_lock = true, .first_key = true, .recent_max = 8 };
	int r;

	if (arg_json)
		fputs("{\"locks\":[", stdout);
	r = walk_statistics(bus, &(struct stats_cb){ stats_lock, stats_suspend, &o });
	if (r < 0)
		return r;
	if (arg_json)
		fputs(o.in_suspend ? "}}\n" : "],\"suspend\":{}}\n", stdout);
	else if (o.first_lock)
		printf("\nNo wake lock has been taken yet.\n");
	return 0;
}

/* status shows only the kernel blockers and the Recent entry of the statistics. */
static int recent_only(void *u, const char *key, sd_bus_message *m, const char *type)
{
	struct stats_out *o = u;

	if (strcmp(key, "KernelBlockers") == 0 && strcmp(type, "a(stttt)") == 0) {
		if (arg_json)
			json_key(stdout, &o->first_key, "kernel_blockers");
		else
			printf("\nKernel wakeup sources that kept it awake:\n");
		return print_blockers(m, "  ") < 0 ? -EBADMSG : 1;
	}
	if (strcmp(key, "Recent") != 0)
		return 0;
	if (arg_json)
		json_key(stdout, &o->first_key, "recent");
	else
		printf("\nRecent cycles (newest first):\n");
	return print_recent(m, o->recent_max) < 0 ? -EBADMSG : 1;
}

/*
 * "Battery: asleep 87% of the last hour; drain 0.4 %/h (35 mW) asleep,
 * 9.8 %/h (860 mW) awake": the figure a phone-like laptop is for. Each part
 * only where the daemon has it (-1: none).
 */
static void print_drain(const char *phase, double drain, double power)
{
	if (drain < 0)
		printf("- %s", phase);
	else if (power < 0)
		printf("%.1f %%/h %s", drain, phase);
	else
		printf("%.1f %%/h (%.0f mW) %s", drain, power, phase);
}

static void print_battery(double share, const double drain[2], const double power[2])
{
	printf("Battery:          ");
	if (share < 0) {
		printf("no figures yet\n");
		return;
	}
	printf("asleep %.0f%% of the last hour", share * 100);
	if (drain[0] < 0 && drain[1] < 0) {
		printf("; no drain figures (no battery, on AC, or under a minute measured)\n");
		return;
	}
	printf("; drain ");
	print_drain("asleep", drain[1], power[1]);
	printf(", ");
	print_drain("awake", drain[0], power[0]);
	printf("\n");
}

/*
 * logind's sessions as autosleepd sees them: JSON, or one line per session
 * with the ones keeping the machine awake first.
 */
static int print_sessions(sd_bus *bus, bool json)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	const char *id, *user, *class, *type;
	int active, remote, idle, locked, counts;
	bool first_row = true;
	unsigned n = 0;
	uint32_t uid;
	int r;

	r = sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "Sessions", &e, &m, "a(susssbbbbb)");
	if (r < 0)
		return bus_fail("read Sessions", &e, r);
	r = sd_bus_message_enter_container(m, 'a', "(susssbbbbb)");
	if (r < 0)
		return r;
	if (json)
		fputc('[', stdout);
	while ((r = sd_bus_message_read(m, "(susssbbbbb)", &id, &uid, &user, &class, &type, &active, &remote, &idle,
					&locked, &counts)) > 0) {
		if (json) {
			bool first = true;

			json_object_in_array(stdout, &first_row);
			json_kv_string(stdout, &first, "id", id);
			json_kv_u64(stdout, &first, "uid", uid);
			json_kv_string(stdout, &first, "user", user);
			json_kv_string(stdout, &first, "class", class);
			json_kv_string(stdout, &first, "type", type);
			json_kv_bool(stdout, &first, "active", active);
			json_kv_bool(stdout, &first, "remote", remote);
			json_kv_bool(stdout, &first, "idle", idle);
			json_kv_bool(stdout, &first, "locked", locked);
			json_kv_bool(stdout, &first, "counts", counts);
			json_kv_bool(stdout, &first, "keeps_awake", counts && active && !idle);
			fputc('}', stdout);
			continue;
		}
		printf("%s %-6s %-10s %-8s %-8s %s, %s%s%s\n", n++ ? "                 " : "Sessions:        ", esc(id),
		       esc(user), esc(class), esc(type), active ? "active" : "inactive", idle ? "idle" : "not idle", locked ? ", locked" : "",
		       !counts			 ? (remote ? " (remote: does not count)" : " (not graphical: does not count)")
		       : active && !idle ? " <- keeps the machine awake"
					 : "");
	}
	if (r < 0)
		return r;
	if (json)
		fputc(']', stdout);
	else if (n == 0)
		printf("Sessions:         none\n");
	return 0;
}

/* A CLOCK_REALTIME time as the clock on the wall shows it: the time alone today, with the date otherwise. */
static void format_wall(char *buf, size_t size, usec_t t)
{
	time_t sec = (time_t)(t / USEC_PER_SEC), today = time(NULL);
	struct tm tm, now_tm;

	if (!localtime_r(&sec, &tm) || !localtime_r(&today, &now_tm)) {
		snprintf(buf, size, "@%" PRIu64, (uint64_t)t);
		return;
	}
	strftime(buf, size, tm.tm_yday == now_tm.tm_yday && tm.tm_year == now_tm.tm_year ? "%H:%M:%S" : "%a %Y-%m-%d %H:%M:%S",
		 &tm);
}

/*
 * systemd's WakeSystem= timers as autosleepd follows them: the next one
 * due, and the ones it holds the machine awake for (NextWakeUp, TimerHolds).
 */
static int print_timers(sd_bus *bus, bool json, bool *first)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *next = NULL, *holds = NULL;
	const char *id, *unit, *phase;
	uint64_t when, since;
	usec_t t = now(CLOCK_REALTIME);
	char a[64], b[FORMAT_TIMESPAN_MAX];
	bool first_row = true;
	unsigned n = 0;
	int r;

	r = sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "NextWakeUp", &e, &next, "(st)");
	if (r < 0)
		return bus_fail("read NextWakeUp", &e, r);
	r = sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "TimerHolds", &e, &holds, "a(ssst)");
	if (r < 0)
		return bus_fail("read TimerHolds", &e, r);
	r = sd_bus_message_read(next, "(st)", &id, &when);
	if (r < 0)
		return r;
	if (json) {
		json_kv_string(stdout, first, "next_wake_up", id);
		json_kv_u64(stdout, first, "next_wake_up_usec", when);
		json_key(stdout, first, "timer_holds");
		fputc('[', stdout);
	} else if (id[0]) {
		format_wall(a, sizeof(a), when);
		printf("Next wake-up:     %s at %s (%s %s)\n", esc(id), a, when >= t ? "in" : "due",
		       when >= t ? format_timespan(b, sizeof(b), when - t) : "now");
	} else {
		printf("Next wake-up:     none (no systemd timer with WakeSystem=yes is scheduled)\n");
	}
	r = sd_bus_message_enter_container(holds, 'a', "(ssst)");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_read(holds, "(ssst)", &id, &unit, &phase, &since)) > 0) {
		if (json) {
			bool f = true;

			json_object_in_array(stdout, &first_row);
			json_kv_string(stdout, &f, "timer", id);
			json_kv_string(stdout, &f, "unit", unit);
			json_kv_string(stdout, &f, "phase", phase);
			json_kv_u64(stdout, &f, "since_usec", since);
			fputc('}', stdout);
			continue;
		}
		printf("%s %s %s %s for %s%s\n", n++ ? "                 " : "Timer holds:     ", esc(id), esc(phase),
		       esc(unit),
		       format_timespan(b, sizeof(b), t > since ? t - since : 0),
		       strcmp(phase, "capped") == 0 ? " (MaxHoldSec reached: not held)" : "");
	}
	if (r < 0)
		return r;
	if (json)
		fputc(']', stdout);
	return 0;
}

static int verb_status(sd_bus *bus, int argc, char **argv)
{
	_cleanup_free_ char *state = NULL, *reason = NULL, *kernel = NULL, *mode = NULL, *lock_step = NULL;
	_cleanup_free_ char *lid = NULL, *lid_handler = NULL;
	int away = 0;
	struct stats_out o = { .first_lock = true, .first_key = true, .recent_max = 5 };
	uint64_t external = 0;
	int enabled = 0, wakelocks = 0;
	int32_t knob = -1;
	uint64_t count = 0, idle = 0, idle_timeout = 0;
	uint32_t nlocks = 0, nlid = 0, ninput = 0;
	double share = -1, drain[2] = { -1, -1 }, power[2] = { -1, -1 };
	int r;

	if ((r = get_string_property(bus, "State", &state)) < 0 ||
	    (r = get_string_property(bus, "LastWakeReason", &reason)) < 0 ||
	    (r = get_string_property(bus, "KernelUserspaceAutosleep", &kernel)) < 0 ||
	    (r = get_string_property(bus, "UserspaceAutosleep", &mode)) < 0 ||
	    (r = get_trivial_property(bus, "UserspaceAutosleepKnob", 'i', &knob)) < 0 ||
	    (r = get_trivial_property(bus, "Enabled", 'b', &enabled)) < 0 ||
	    (r = get_trivial_property(bus, "KernelWakeLocks", 'b', &wakelocks)) < 0 ||
	    (r = get_trivial_property(bus, "SuspendCount", 't', &count)) < 0 ||
	    (r = get_trivial_property(bus, "NWakeLocks", 'u', &nlocks)) < 0 ||
	    (r = get_trivial_property(bus, "IdleUSec", 't', &idle)) < 0 ||
	    (r = get_trivial_property(bus, "IdleTimeoutUSec", 't', &idle_timeout)) < 0 ||
	    (r = get_trivial_property(bus, "NInputDevices", 'u', &ninput)) < 0 ||
	    (r = get_trivial_property(bus, "AsleepShare", 'd', &share)) < 0 ||
	    (r = get_trivial_property(bus, "BatteryDrainAwake", 'd', &drain[0])) < 0 ||
	    (r = get_trivial_property(bus, "BatteryDrainAsleep", 'd', &drain[1])) < 0 ||
	    (r = get_trivial_property(bus, "BatteryPowerAwake", 'd', &power[0])) < 0 ||
	    (r = get_trivial_property(bus, "BatteryPowerAsleep", 'd', &power[1])) < 0 ||
	    (r = get_string_property(bus, "LockStep", &lock_step)) < 0 ||
	    (r = get_trivial_property(bus, "ExternalSuspendCount", 't', &external)) < 0 ||
	    (r = get_string_property(bus, "Lid", &lid)) < 0 ||
	    (r = get_string_property(bus, "LidHandler", &lid_handler)) < 0 ||
	    (r = get_trivial_property(bus, "Away", 'b', &away)) < 0)
		return r;
	/* An older daemon has no such property: none wait for the lid there. */
	(void)sd_bus_get_property_trivial(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "NWakeLocksWaitingForLid", NULL, 'u',
					  &nlid);

	if (arg_json) {
		bool first = true;

		fputc('{', stdout);
		json_kv_string(stdout, &first, "state", state);
		json_kv_bool(stdout, &first, "enabled", enabled);
		json_kv_u64(stdout, &first, "suspend_count", count);
		json_kv_string(stdout, &first, "last_wake_reason", reason);
		json_kv_string(stdout, &first, "kernel_userspace_autosleep", kernel);
		json_kv_string(stdout, &first, "userspace_autosleep", mode);
		json_key(stdout, &first, "userspace_autosleep_knob");
		if (knob < 0)
			fputs("null", stdout);
		else
			printf("%" PRIi32, knob);
		json_kv_bool(stdout, &first, "kernel_wake_locks", wakelocks);
		json_kv_u64(stdout, &first, "idle_usec", idle);
		json_kv_u64(stdout, &first, "idle_timeout_usec", idle_timeout);
		json_kv_u64(stdout, &first, "input_devices", ninput);
		json_kv_figure(stdout, &first, "asleep_share", share);
		json_kv_figure(stdout, &first, "drain_awake_percent_per_hour", drain[0]);
		json_kv_figure(stdout, &first, "drain_asleep_percent_per_hour", drain[1]);
		json_kv_figure(stdout, &first, "drain_awake_mw", power[0]);
		json_kv_figure(stdout, &first, "drain_asleep_mw", power[1]);
		json_kv_string(stdout, &first, "lock_step", lock_step);
		json_kv_u64(stdout, &first, "external_suspends", external);
		json_kv_string(stdout, &first, "lid", lid);
		json_kv_string(stdout, &first, "lid_handler", lid_handler);
		json_kv_bool(stdout, &first, "away", away);
		json_kv_u64(stdout, &first, "wake_locks_waiting_for_lid", nlid);
		r = print_timers(bus, true, &first);
		if (r < 0)
			return r;
		json_key(stdout, &first, "sessions");
		r = print_sessions(bus, true);
		if (r < 0)
			return r;
		json_key(stdout, &first, "locks");
		r = print_locks(bus, true);
		if (r < 0)
			return r;
		o.first_key = false;
	} else {
		printf("State:            %s%s\n", esc(state), enabled ? "" : " (disabled)");
		printf("Suspends:         %" PRIu64 " (and %" PRIu64 " by logind, not ours)\n", count, external);
		printf("Last wake reason: %s\n", esc(reason));
		if (nlid > 0)
			printf("Wake locks:       %" PRIu32 " (%" PRIu32 " of users wait%s for the lid to open)\n", nlocks,
			       nlid, nlid == 1 ? "s" : "");
		else
			printf("Wake locks:       %" PRIu32 "\n", nlocks);
		if (idle_timeout > 0) {
			char a[FORMAT_TIMESPAN_MAX], b[FORMAT_TIMESPAN_MAX];

			printf("User input:       idle %s of %s, %" PRIu32 " device%s watched\n",
			       format_timespan(a, sizeof(a), idle), format_timespan(b, sizeof(b), idle_timeout), ninput,
			       ninput == 1 ? "" : "s");
		} else
			printf("User input:       not followed\n");
		print_battery(share, drain, power);
		r = print_timers(bus, false, NULL);
		if (r < 0)
			return r;
		r = print_sessions(bus, false);
		if (r < 0)
			return r;
		if (strcmp(lid, "none") == 0)
			printf("Lid:              no lid switch seen; the sleep key is handled by %s%s\n", esc(lid_handler),
			       away ? "; away: no idle timeout" : "");
		else
			printf("Lid:              %s, handled by %s%s\n", esc(lid), esc(lid_handler),
			       away ? "; away: no idle timeout, built-in keyboard and touchpad ignored" : "");
		printf("Lock step:        %s\n", strcmp(lock_step, "off") == 0 ? "off (LockBeforeSleep=no or no logind)"
				: strcmp(lock_step, "pending") == 0 ? "pending: the next suspend locks the sessions first"
				: strcmp(lock_step, "locking") == 0 ? "locking the sessions"
				: strcmp(lock_step, "locked") == 0 ? "ran: every graphical session locked"
				: strcmp(lock_step, "timed-out") == 0 ? "ran: timed out waiting for a session to lock"
				: strcmp(lock_step, "failed") == 0 ? "ran: LockSessions() failed" : esc(lock_step));
		printf("Kernel:           PM_USERSPACE_AUTOSLEEP=%s, wake_lock %s\n", esc(kernel),
		       wakelocks ? "available" : "missing (the kernel lock is an epoll wakeup source)");
		if (knob < 0)
			printf("Frequent suspend: %s (no /sys/power/userspace_autosleep)\n", esc(mode));
		else
			printf("Frequent suspend: %s (/sys/power/userspace_autosleep=%" PRIi32 ")\n", esc(mode), knob);
		/* While disabled, a knob at 0 is what we want: nothing suspends often. */
		if (strcmp(mode, "none") == 0 && (enabled || knob < 0))
			printf("\nWarning: neither CONFIG_PM_USERSPACE_AUTOSLEEP nor /sys/power/userspace_autosleep is in\n"
			       "force: every suspend reseeds the crng and clears all WireGuard session keys.\n");
		else if (strcmp(mode, "unknown") == 0)
			printf("\nWarning: this kernel may lack CONFIG_PM_USERSPACE_AUTOSLEEP: every suspend may reseed\n"
			       "the crng and clear all WireGuard session keys.\n");
		if (nlocks > 0) {
			printf("\n");
			r = print_locks(bus, false);
			if (r < 0)
				return r;
		}
	}
	r = walk_statistics(bus, &(struct stats_cb){ NULL, recent_only, &o });
	if (r < 0)
		return r;
	if (arg_json)
		fputs("}\n", stdout);
	return 0;
}

static int verb_enable(sd_bus *bus, int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *method = strcmp(argv[0], "enable") == 0 ? "Enable" : "Disable";
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	int r;

	r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, BUS_INTERFACE, method);
	if (r < 0)
		return r;
	/* Let polkit ask for a password on a terminal, like systemctl does. */
	(void)sd_bus_message_set_allow_interactive_authorization(m, isatty(STDIN_FILENO));
	r = sd_bus_call(bus, m, 0, &e, NULL);
	if (r < 0)
		return bus_fail(strcmp(method, "Enable") == 0 ? "enable autosleep" : "disable autosleep", &e, r);
	return 0;
}

struct hold {
	sd_bus *bus;
	const char *name;
	int fd;            /* our copy of the lock's fd */
	usec_t deadline;   /* CLOCK_BOOTTIME, USEC_INFINITY for none */
	int status;
};

static int hold_acquire(struct hold *h)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	usec_t timeout = 0;
	int lockfd, fd, r;

	if (h->deadline != USEC_INFINITY) {
		usec_t t = now(CLOCK_BOOTTIME);

		if (t >= h->deadline)
			return 0; /* its time is up: nothing to take again */
		timeout = h->deadline - t;
	}
	/* The plain call without --lid-closed: it works with an older daemon too. */
	if (arg_lid_closed)
		r = sd_bus_call_method(h->bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "AcquireWakeLockWithOptions", &e, &reply,
				       "ssta{sv}", h->name, arg_why, (uint64_t)timeout, 1, "LidClosed", "b", 1);
	else
		r = sd_bus_call_method(h->bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "AcquireWakeLock", &e, &reply, "sst",
				       h->name, arg_why, (uint64_t)timeout);
	if (r < 0)
		return bus_fail("take wake lock", &e, r);
	r = sd_bus_message_read(reply, "h", &lockfd);
	if (r < 0)
		return r;
	/* The fd belongs to the message; keep our own copy, and keep it from the child. */
	fd = fcntl(lockfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return negative_errno();
	safe_close(h->fd);
	h->fd = fd;
	return 1;
}

/* Is our lock, by name and our unique bus name, among the daemon's? */
static int hold_is_listed(struct hold *h)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *unique = NULL, *n, *why, *owner;
	uint32_t uid, pid;
	uint64_t since, until;
	int r, found = 0;

	r = sd_bus_get_unique_name(h->bus, &unique);
	if (r < 0)
		return r;
	r = sd_bus_call_method(h->bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "ListWakeLocks", NULL, &reply, "");
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "(sssuutt)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(sssuutt)", &n, &why, &owner, &uid, &pid, &since, &until)) > 0)
		if (strcmp(n, h->name) == 0 && strcmp(owner, unique) == 0)
			found = 1;
	return r < 0 ? r : found;
}

/*
 * autosleepd came back. Under systemd it took our lock back from its fd store;
 * without one it did not, and we take it again ourselves.
 */
static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct hold *h = userdata;
	const char *name, *old_owner, *new_owner;
	int r;

	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || strcmp(name, BUS_NAME) != 0 ||
	    !*new_owner)
		return 0;
	r = hold_is_listed(h);
	if (r > 0) {
		fprintf(stderr, "autosleepctl: autosleepd restarted and still holds wake lock '%s'\n", h->name);
		return 0;
	}
	r = hold_acquire(h);
	if (r > 0)
		fprintf(stderr, "autosleepctl: autosleepd restarted; took wake lock '%s' again\n", h->name);
	return 0;
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct hold *h = userdata;

	h->status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* Forward what would end us to the command, which decides when it ends. */
static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	pid_t *pid = userdata;

	(void)s;
	kill(*pid, (int)si->ssi_signo);
	return 0;
}

static int verb_hold(sd_bus *bus, int argc, char **argv)
{
	_cleanup_(sd_event_unrefp) sd_event *event = NULL;
	struct hold h = { .bus = bus, .name = arg_name, .fd = -EBADF, .deadline = USEC_INFINITY };
	sigset_t ss, old;
	pid_t pid;
	int r;

	if (argc < 2) {
		fprintf(stderr, "hold needs a command to run: autosleepctl hold -- CMD [ARGS...]\n");
		return -EINVAL;
	}
	if (!h.name) {
		const char *slash = strrchr(argv[1], '/');

		h.name = slash ? slash + 1 : argv[1];
	}
	if (arg_timeout != 0 && arg_timeout != USEC_INFINITY)
		h.deadline = usec_add(now(CLOCK_BOOTTIME), arg_timeout);
	r = hold_acquire(&h);
	if (r < 0)
		return r;

	/* Before the fork: the child must not die unseen, and must get signals back unblocked. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &ss, &old) < 0) {
		r = negative_errno();
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = negative_errno();
		goto out;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "Failed to execute %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}

	r = sd_event_default(&event);
	if (r >= 0)
		r = sd_event_add_child(event, NULL, pid, WEXITED, on_child, &h);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGTERM, on_term, &pid);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGINT, on_term, &pid);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGHUP, on_term, &pid);
	if (r >= 0)
		r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
	/* A restarted daemon shows as a new owner of its name. */
	if (r >= 0)
		r = sd_bus_add_match(bus, NULL,
				     "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
				     "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" BUS_NAME "'",
				     on_owner_changed, &h);
	if (r < 0) {
		fprintf(stderr, "Failed to watch %s and autosleepd: %s; the lock is held, but not taken again if "
			"autosleepd restarts\n", argv[1], strerror(-r));
		while (waitpid(pid, &h.status, 0) < 0 && errno == EINTR)
			;
		r = WIFEXITED(h.status) ? WEXITSTATUS(h.status) : 128 + WTERMSIG(h.status);
		goto out;
	}
	r = sd_event_loop(event);
	sd_bus_detach_event(bus);
	if (r >= 0)
		r = h.status;
out:
	safe_close(h.fd);
	return r;
}

static int on_monitor_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	const char *member = sd_bus_message_get_member(m), *a = "", *b = "", *c = "";
	char ts[32], span[FORMAT_TIMESPAN_MAX];
	struct timespec now_ts;
	uint64_t t = 0;
	uint32_t u = 0;
	int ok = 0;
	bool first = true;

	clock_gettime(CLOCK_REALTIME, &now_ts);
	format_time(ts, sizeof(ts), timespec_load(&now_ts));
	if (strcmp(member, "Resumed") == 0)
		(void)sd_bus_message_read(m, "tsb", &t, &a, &ok);
	else if (strcmp(member, "WakeLockAcquired") == 0)
		(void)sd_bus_message_read(m, "sssu", &a, &b, &c, &u);
	else if (strcmp(member, "WakeLockReleased") == 0)
		(void)sd_bus_message_read(m, "sss", &a, &b, &c);
	else if (strcmp(member, "Suspending") != 0)
		return 0;

	if (arg_json) {
		fputc('{', stdout);
		json_kv_u64(stdout, &first, "time_usec", timespec_load(&now_ts));
		json_kv_string(stdout, &first, "event", member);
		if (strcmp(member, "Resumed") == 0) {
			json_kv_u64(stdout, &first, "slept_usec", t);
			json_kv_string(stdout, &first, "reason", a);
			json_kv_bool(stdout, &first, "success", ok);
		} else if (strcmp(member, "WakeLockAcquired") == 0) {
			json_kv_string(stdout, &first, "name", a);
			json_kv_string(stdout, &first, "why", b);
			json_kv_string(stdout, &first, "owner", c);
			json_kv_u64(stdout, &first, "uid", u);
		} else if (strcmp(member, "WakeLockReleased") == 0) {
			json_kv_string(stdout, &first, "name", a);
			json_kv_string(stdout, &first, "owner", b);
			json_kv_string(stdout, &first, "reason", c);
		}
		fputs("}\n", stdout);
	} else if (strcmp(member, "Suspending") == 0)
		printf("%s suspending\n", ts);
	else if (strcmp(member, "Resumed") == 0)
		printf("%s resumed: %s, slept %s, %s\n", ts, ok ? "success" : "failed", format_timespan(span, sizeof(span), t), esc(a));
	else if (strcmp(member, "WakeLockAcquired") == 0)
		printf("%s lock acquired: %s by %s (uid %" PRIu32 ")%s%s\n", ts, esc(a), esc(c), u, *b ? ": " : "", esc(b));
	else
		printf("%s lock released: %s by %s (%s)\n", ts, esc(a), esc(b), esc(c));
	fflush(stdout);
	return 0;
}

static int verb_monitor(sd_bus *bus, int argc, char **argv)
{
	int r;

	r = sd_bus_match_signal(bus, NULL, BUS_NAME, BUS_PATH, BUS_INTERFACE, NULL, on_monitor_signal, NULL);
	if (r < 0) {
		fprintf(stderr, "Failed to subscribe to signals: %s\n", strerror(-r));
		return r;
	}
	if (!arg_json)
		fprintf(stderr, "Monitoring autosleepd events; press Ctrl-C to stop.\n");
	for (;;) {
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		r = sd_bus_wait(bus, UINT64_MAX);
		if (r < 0 && r != -EINTR)
			return r;
	}
}

static const struct verb {
	const char *name;
	int (*run)(sd_bus *bus, int argc, char **argv);
} verbs[] = {
	{ "status", verb_status },   { "list", verb_list },	 { "hold", verb_hold },
	{ "stats", verb_stats }, { "enable", verb_enable }, { "disable", verb_enable },
	{ "monitor", verb_monitor }, { "soak", NULL },
};

enum {
	ARG_VERSION = 0x100,
	ARG_JSON,
	ARG_NAME,
	ARG_WHY,
	ARG_TIMEOUT,
	ARG_LID_CLOSED,
};

static const struct option options[] = {
	{ "help", no_argument, NULL, 'h' },	  { "version", no_argument, NULL, ARG_VERSION },
	{ "json", no_argument, NULL, ARG_JSON },  { "name", required_argument, NULL, ARG_NAME },
	{ "why", required_argument, NULL, ARG_WHY }, { "timeout", required_argument, NULL, ARG_TIMEOUT },
	{ "lid-closed", no_argument, NULL, ARG_LID_CLOSED },
	{}
};

/*
 * Parse options from optind up to the first non-option ("+": so that in
 * "hold -- cmd -x" the command keeps its own options). Returns 1 to go on,
 * 0 to exit successfully (--help, --version), -EINVAL on bad input.
 */
static int parse_options(int argc, char *argv[])
{
	int c;

	while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("autosleepctl %s\n", PACKAGE_VERSION);
			return 0;
		case ARG_JSON:
			arg_json = true;
			break;
		case ARG_NAME:
			arg_name = optarg;
			break;
		case ARG_WHY:
			arg_why = optarg;
			break;
		case ARG_LID_CLOSED:
			arg_lid_closed = true;
			break;
		case ARG_TIMEOUT:
			if (parse_sec(optarg, &arg_timeout) < 0) {
				fprintf(stderr, "Invalid --timeout '%s': expected a time span such as 30s or 5min\n", optarg);
				return -EINVAL;
			}
			break;
		default:
			return -EINVAL;
		}
	}
	return 1;
}

int main(int argc, char *argv[])
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	const struct verb *v = NULL;
	int first, r;

	r = parse_options(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	if (optind >= argc) {
		fprintf(stderr, "No command given; see autosleepctl --help\n");
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
		if (strcmp(argv[optind], verbs[i].name) == 0)
			v = &verbs[i];
	if (!v) {
		fprintf(stderr, "Unknown command '%s'; see autosleepctl --help\n", argv[optind]);
		return EXIT_FAILURE;
	}
	/* soak has options of its own and opens the bus only when it needs it (not for --compare). */
	if (strcmp(argv[optind], "soak") == 0)
		return verb_soak(argc - optind, argv + optind) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	/* Options may follow the verb too: "autosleepctl stats --json", "hold --why=x -- cmd". */
	first = optind;
	optind = first + 1;
	r = parse_options(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	if (v->run != verb_hold && optind < argc) {
		fprintf(stderr, "Unexpected argument '%s' for %s\n", argv[optind], argv[first]);
		return EXIT_FAILURE;
	}
	/* Hand the verb the remaining arguments, with its own name first. */
	argv[optind - 1] = argv[first];
	optind--;

	r = sd_bus_open_system(&bus);
	if (r < 0) {
		fprintf(stderr, "Failed to connect to the system bus: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	r = v->run(bus, argc - optind, argv + optind);
	if (v->run == verb_hold && r >= 0)
		return r;
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
