/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/sessions.c against the real daemon (--dry-run, on a fixture tree)
 * on a private dbus-daemon, with the fake logind of fake-login1.c: which
 * sessions hold the machine awake, the lock step before the first suspend,
 * and logind's own suspends. A dry-run suspend shows as "would write mem to
 * state" in the daemon's log.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "fake-login1.h"
#include "fixture.h"
#include "sessions.h"

#define WRITE "would write mem to state"
#define LOG "daemon.log"

static struct harness h;
static struct fake_login1 fake;
static sd_bus *client;

static int writes(void)
{
	return harness_count_in_log(&h, LOG, WRITE);
}

static int in_log(const char *needle)
{
	return harness_count_in_log(&h, LOG, needle);
}

static int session_locks(void)
{
	return harness_count_locks(client, "session-active");
}

/* Serve the fake logind until cond() holds, for at most 10 s; false if it never did. */
#define PUMP_UNTIL(cond)                                                   \
	({                                                                 \
		bool _ok = false;                                          \
		for (int _i = 0; _i < 500 && !(_ok = (cond)); _i++)        \
			fake_login1_pump(&fake, 20);                       \
		if (!_ok)                                                  \
			harness_show_log(&h, LOG);                         \
		_ok;                                                       \
	})

static void start(const char *logind_config)
{
	char config[512];

	snprintf(config, sizeof(config), "[Backoff]\nDelaySec=100ms\n[WakeLocks]\nStartupHoldSec=0\n[Logind]\n%s",
		 logind_config);
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){ .config = config, .log = LOG }) > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
}

static char *string_property(const char *name)
{
	char *s = NULL;

	assert_true(sd_bus_get_property_string(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, name, NULL, &s) >= 0);
	return s;
}

static char *lock_step(void)
{
	return string_property("LockStep");
}

/* For PUMP_UNTIL(): the daemon learns of a change through a signal, at its own pace. */
static bool lock_step_is(const char *want)
{
	char *step = lock_step();
	bool is = strcmp(step, want) == 0;

	free(step);
	return is;
}

static uint64_t property_u64(const char *name)
{
	uint64_t v = 0;

	assert_true(sd_bus_get_property_trivial(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, name, NULL, 't', &v) >= 0);
	return v;
}

/* autosleepctl's output for args against the test's bus (caller frees). */
static char *ctl(const char *args)
{
	char cmd[1024], *out = calloc(1, 8192);
	size_t n = 0;
	FILE *p;

	assert_non_null(out);
	snprintf(cmd, sizeof(cmd), "DBUS_SYSTEM_BUS_ADDRESS='%s' '%s' %s", h.address, getenv("AUTOSLEEPCTL"), args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n < 8191 && fgets(out + n, (int)(8192 - n), p))
		n = strlen(out);
	assert_int_equal(pclose(p), 0);
	return out;
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD") || !getenv("AUTOSLEEPCTL")) {
		fprintf(stderr, "test-sessions needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
	return 0;
}

static int per_test_setup(void **state)
{
	(void)state;
	assert_int_equal(harness_bus_start(&h, "sysfs-basic",
					   "<policy user=\"root\"><allow own=\"org.freedesktop.login1\"/>"
					   "<allow send_destination=\"org.freedesktop.login1\"/></policy>"),
			 0);
	assert_int_equal(fake_login1_start(&fake, h.address), 0);
	return 0;
}

static int per_test_teardown(void **state)
{
	(void)state;
	client = sd_bus_flush_close_unref(client);
	if (h.daemon_pid > 0)
		harness_daemon_stop(&h, SIGTERM);
	fake_login1_stop(&fake);
	harness_stop(&h);
	return 0;
}

static void test_counts(void **state)
{
	(void)state;
	/* Local graphical user and greeter sessions count; text, remote and background ones do not. */
	assert_true(session_counts("user", "x11", false));
	assert_true(session_counts("user", "wayland", false));
	assert_true(session_counts("greeter", "wayland", false));
	assert_false(session_counts("user", "tty", false));
	assert_false(session_counts("user", "x11", true));
	assert_false(session_counts("background", "x11", false));
	assert_false(session_counts("user", "unspecified", false));
	assert_string_equal(lock_step_to_string(LOCK_STEP_TIMED_OUT), "timed-out");
	assert_null(lock_step_to_string(_LOCK_STEP_MAX));
}

static void test_idle_hint_holds(void **state)
{
	struct fake_session *s;
	int w0;

	(void)state;
	s = fake_login1_add(&fake, "c1", "user", "x11", false, true, false, false);
	assert_non_null(s);
	start("LockBeforeSleep=no\n");
	/* Held from the start: first while logind describes the session, then for it. */
	assert_true(PUMP_UNTIL(in_log("Staying awake for session c1 of userc1 (x11) is active and not idle") == 1));
	assert_int_equal(session_locks(), 1);
	/* A second of no input at all: held by the session alone. */
	w0 = writes();
	fake_login1_pump(&fake, 1000);
	assert_int_equal(writes(), w0);

	fake_session_set(s, "IdleHint", true);
	assert_true(PUMP_UNTIL(session_locks() == 0));
	assert_true(PUMP_UNTIL(writes() > w0 + 2));

	/* Back from idle: held again, and nothing more suspends. */
	fake_session_set(s, "IdleHint", false);
	assert_true(PUMP_UNTIL(session_locks() == 1));
	w0 = writes();
	fake_login1_pump(&fake, 500);
	assert_int_equal(writes(), w0);
	assert_int_equal(fake.lock_calls, 0);
}

static void test_what_does_not_count(void **state)
{
	struct fake_session *inactive;
	int w0;

	(void)state;
	assert_non_null(fake_login1_add(&fake, "c2", "user", "tty", false, true, false, false));
	assert_non_null(fake_login1_add(&fake, "c3", "user", "x11", true, true, false, false));
	assert_non_null(fake_login1_add(&fake, "c4", "background", "x11", false, true, false, false));
	inactive = fake_login1_add(&fake, "c5", "user", "wayland", false, false, false, false);
	assert_non_null(inactive);
	start("LockBeforeSleep=no\n");
	assert_true(PUMP_UNTIL(in_log(": seen,") == 4));
	w0 = writes();
	assert_true(PUMP_UNTIL(writes() > w0 + 2));
	assert_int_equal(session_locks(), 0);

	/* The inactive one is switched to: now it counts. */
	fake_session_set(inactive, "Active", true);
	assert_true(PUMP_UNTIL(session_locks() == 1));
	assert_int_equal(in_log("Staying awake for session c5 of userc5 (wayland) is active and not idle"), 1);
}

static void test_session_new_and_removed(void **state)
{
	struct fake_session *s;
	int w0;

	(void)state;
	start("LockBeforeSleep=no\n");
	w0 = writes();
	assert_true(PUMP_UNTIL(writes() > w0 + 2));
	s = fake_login1_add(&fake, "c6", "user", "wayland", false, true, false, true);
	assert_non_null(s);
	assert_true(PUMP_UNTIL(in_log("Session c6 of userc6 (user, wayland): seen") == 1));
	assert_int_equal(session_locks(), 1);
	fake_login1_remove(&fake, s);
	assert_true(PUMP_UNTIL(session_locks() == 0));
	assert_int_equal(in_log("Session c6 of userc6 (user, wayland): removed"), 1);
	w0 = writes();
	assert_true(PUMP_UNTIL(writes() > w0 + 2));
}

/*
 * Any client may send the daemon a signal of its own, addressed to it, with
 * logind's path, interface and member: dbus-daemon delivers it, and sd-bus
 * cannot tell a well-known sender from its match alone. A forged
 * SessionRemoved for an active session must not drop that session's hold,
 * a forged PrepareForSleep must not count as logind's suspend, and a forged
 * NameOwnerChanged must not make logind seem gone (which drops its holds).
 */
static void send_forged(sd_bus *b, const char *dest, const char *path, const char *iface, const char *member,
			const char *sig, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;

	assert_true(sd_bus_message_new_signal(b, &m, path, iface, member) >= 0);
	assert_true(sd_bus_message_set_destination(m, dest) >= 0);
	va_start(ap, sig);
	assert_true(sd_bus_message_appendv(m, sig, ap) >= 0);
	va_end(ap);
	assert_true(sd_bus_send(b, m, NULL) >= 0);
	assert_true(sd_bus_flush(b) >= 0);
	sd_bus_message_unref(m);
}

static void test_forged_logind_signals(void **state)
{
	const char *daemon_name = NULL;
	sd_bus_message *reply = NULL;
	sd_bus *stranger;

	(void)state;
	assert_non_null(fake_login1_add(&fake, "c7", "user", "wayland", false, true, false, false));
	start("LockBeforeSleep=no\n");
	assert_true(PUMP_UNTIL(session_locks() == 1));
	assert_true(sd_bus_call_method(client, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
				       "GetNameOwner", NULL, &reply, "s", HARNESS_NAME) >= 0);
	assert_true(sd_bus_message_read(reply, "s", &daemon_name) >= 0);
	assert_int_equal(harness_open_client(&h, &stranger), 0);
	send_forged(stranger, daemon_name, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "SessionRemoved",
		    "so", "c7", "/org/freedesktop/login1/session/c7");
	send_forged(stranger, daemon_name, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep",
		    "b", 1);
	send_forged(stranger, daemon_name, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss",
		    "org.freedesktop.login1", ":1.1", "");
	fake_login1_pump(&fake, 500);
	assert_int_equal(session_locks(), 1);
	assert_int_equal(in_log("removed"), 0);
	assert_int_equal(in_log("logind is suspending the machine"), 0);
	assert_int_equal(in_log("logind left the bus"), 0);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(stranger);
}

static void test_honor_idle_hint_off(void **state)
{
	int w0;

	(void)state;
	assert_non_null(fake_login1_add(&fake, "c1", "user", "x11", false, true, false, false));
	start("LockBeforeSleep=no\nHonorIdleHint=no\n");
	assert_true(PUMP_UNTIL(in_log(": seen,") == 1));
	/* The old behaviour: a session that is not idle does not hold anything. */
	w0 = writes();
	assert_true(PUMP_UNTIL(writes() > w0 + 2));
	assert_int_equal(session_locks(), 0);
}

static int writes_at_lock = -1;

static void record_writes(struct fake_login1 *f, void *userdata)
{
	(void)f;
	(void)userdata;
	writes_at_lock = writes();
}

static void test_lock_before_first_suspend(void **state)
{
	struct fake_session *s;
	char *step, *out;
	int w0;

	(void)state;
	s = fake_login1_add(&fake, "c1", "user", "x11", false, true, true, false);
	assert_non_null(s);
	s->locker = true;
	fake.on_lock = record_writes;
	start("LockTimeoutSec=10s\n");
	assert_true(PUMP_UNTIL(writes() >= 3));
	/* Locked before the first suspend, and only once for all of them. */
	assert_int_equal(fake.lock_calls, 1);
	assert_int_equal(writes_at_lock, 0);
	assert_int_equal(s->lock_signals, 1);
	assert_int_equal(in_log("Every graphical session is locked"), 1);
	step = lock_step();
	assert_string_equal(step, "locked");
	free(step);
	out = ctl("status");
	assert_non_null(strstr(out, "Sessions:         c1     userc1     user     x11      active, idle, locked\n"));
	assert_non_null(strstr(out, "Lock step:        ran: every graphical session locked\n"));
	free(out);

	/* The user comes back and unlocks, then leaves: lock again before the next suspend. */
	fake_session_set(s, "IdleHint", false);
	assert_true(PUMP_UNTIL(session_locks() == 1));
	out = ctl("status");
	assert_non_null(strstr(out, "active, not idle, locked <- keeps the machine awake\n"));
	free(out);
	out = ctl("status --json");
	assert_non_null(strstr(out, "\"id\":\"c1\",\"uid\":1000,\"user\":\"userc1\",\"class\":\"user\",\"type\":\"x11\","
				    "\"active\":true,\"remote\":false,\"idle\":false,\"locked\":true,\"counts\":true,"
				    "\"keeps_awake\":true"));
	free(out);
	fake_session_set(s, "LockedHint", false);
	assert_true(PUMP_UNTIL(lock_step_is("pending")));
	w0 = writes();
	fake_session_set(s, "IdleHint", true);
	assert_true(PUMP_UNTIL(writes() > w0 + 2));
	assert_int_equal(fake.lock_calls, 2);
	assert_int_equal(writes_at_lock, w0);
}

static void test_lock_timeout(void **state)
{
	char *log, *missed, *write;
	char *step;

	(void)state;
	/* No locker in this session: it never reports LockedHint=true. */
	assert_non_null(fake_login1_add(&fake, "c7", "user", "x11", false, true, true, false));
	start("LockTimeoutSec=300ms\n");
	assert_true(PUMP_UNTIL(writes() >= 1));
	assert_int_equal(fake.lock_calls, 1);
	log = fixture_read(h.dir, LOG);
	assert_non_null(log);
	missed = strstr(log, "Session c7 of userc7 (x11) did not lock within LockTimeoutSec=300.0ms, suspending anyway");
	write = strstr(log, WRITE);
	assert_non_null(missed);
	assert_non_null(write);
	/* The suspend waited for the timeout. */
	assert_true(missed < write);
	free(log);
	step = lock_step();
	assert_string_equal(step, "timed-out");
	free(step);
}

static void test_lock_off(void **state)
{
	(void)state;
	assert_non_null(fake_login1_add(&fake, "c8", "user", "x11", false, true, true, false));
	start("LockBeforeSleep=no\n");
	assert_true(PUMP_UNTIL(writes() >= 2));
	assert_int_equal(fake.lock_calls, 0);
}

static void test_external_suspend(void **state)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	uint64_t ours;
	char *out;
	int fd;

	(void)state;
	start("LockBeforeSleep=no\n");
	/* Our own cycles stop while a lock is held; logind's do not care. */
	assert_int_equal(harness_acquire(client, "test", "external suspend test", 0, &fd, &e), 1);
	fake_login1_pump(&fake, 300);
	ours = property_u64("SuspendCount");

	fake_login1_prepare_for_sleep(&fake, true);
	assert_true(PUMP_UNTIL(in_log("logind is suspending the machine") == 1));
	fixture_write(h.dir, "sys/power/suspend_stats/success", "1\n");
	fake_login1_prepare_for_sleep(&fake, false);
	assert_true(PUMP_UNTIL(property_u64("ExternalSuspendCount") == 1));
	assert_int_equal(property_u64("SuspendCount"), ours);
	out = ctl("stats --json");
	assert_non_null(strstr(out, "\"ExternalSuspends\":1"));
	assert_non_null(strstr(out, "\"result\":\"external\""));
	assert_non_null(strstr(out, "\"wake_reason\":\"external (logind)\""));
	free(out);
	assert_int_equal(in_log("External suspend by logind"), 1);

	/* A PrepareForSleep(false) without a suspend in suspend_stats is still logind's, and says so. */
	fake_login1_prepare_for_sleep(&fake, true);
	fake_login1_prepare_for_sleep(&fake, false);
	assert_true(PUMP_UNTIL(property_u64("ExternalSuspendCount") == 2));
	assert_int_equal(property_u64("SuspendCount"), ours);
	close(fd);
}

#define LID_WHAT "handle-lid-switch:handle-suspend-key"

/* The lid is read by the input watch: an empty /dev/input is enough for it to run. */
static void make_dev_input(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/dev", h.dir);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/input", h.dir);
	assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void test_lid_inhibitor(void **state)
{
	char *handler;

	(void)state;
	make_dev_input();
	start("LockBeforeSleep=no\n");
	/* Ours, taken in block mode once logind listed nobody else's. */
	assert_true(PUMP_UNTIL(fake_login1_count_inhibitors(&fake, LID_WHAT) == 1));
	assert_string_equal(fake.inhibitors[0].mode, "block");
	assert_true(PUMP_UNTIL(in_log("autosleepd handles the lid and the sleep key") >= 1));
	handler = string_property("LidHandler");
	assert_string_equal(handler, "autosleepd");
	free(handler);

	/* A desktop's power manager takes the lid: we let go of ours and say whose it is. */
	fake_login1_add_inhibitor(&fake, "handle-power-key:handle-lid-switch", "gsd-power", 77);
	assert_true(PUMP_UNTIL(fake_login1_count_inhibitors(&fake, LID_WHAT) == 0));
	handler = string_property("LidHandler");
	assert_string_equal(handler, "gsd-power (pid 77)");
	free(handler);
	assert_int_equal(in_log("gsd-power (pid 77) handles the lid now: leaving it alone"), 1);
}

/* The why of the first lock of that name, as ListWakeLocks gives it, or NULL. */
static char *lock_why(const char *name)
{
	sd_bus_message *reply = NULL;
	const char *n, *why, *owner;
	uint32_t uid, pid;
	uint64_t since, deadline;
	char *found = NULL;

	assert_true(sd_bus_call_method(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "ListWakeLocks", NULL, &reply,
				       "") >= 0);
	assert_true(sd_bus_message_enter_container(reply, 'a', "(sssuutt)") >= 0);
	while (!found && sd_bus_message_read(reply, "(sssuutt)", &n, &why, &owner, &uid, &pid, &since, &deadline) > 0)
		if (strcmp(n, name) == 0)
			found = strdup(why);
	sd_bus_message_unref(reply);
	return found;
}

/*
 * Any user may take a logind inhibitor and give it any who and why. They
 * reach the journal's stream and the lock list only escaped: a newline
 * there would start an entry of its own at priority 0 (a wall message),
 * and an escape sequence would drive the terminal of whoever lists locks.
 * (D-Bus strings are valid UTF-8, so the C1 control is U+009B, not a lone
 * byte.)
 */
static void test_inhibitor_strings_escaped(void **state)
{
	char *why;

	(void)state;
	start("LockBeforeSleep=no\n");
	fake_login1_add_inhibitor_why(&fake, "idle", "x\n<0>FORGED\x1b[2J", "y\n<0>Disk failing\xc2\x9b\\", 66);
	assert_true(PUMP_UNTIL(in_log("Staying awake for logind inhibitor by") >= 1));
	why = lock_why("logind-inhibitor");
	assert_non_null(why);
	assert_string_equal(why, "logind inhibitor by x\\x0a<0>FORGED\\x1b[2J (idle, uid 0): y\\x0a<0>Disk failing\\xc2\\x9b\\");
	free(why);
	/* Every line the daemon wrote starts with its own "<N>", none with a forged one. */
	assert_int_equal(in_log("\n<0>"), 0);
	assert_int_equal(in_log("\x1b"), 0);
	assert_int_equal(in_log("\xc2\x9b"), 0);
	assert_true(in_log("by x\\x0a<0>FORGED\\x1b[2J (idle, uid 0): y\\x0a<0>Disk failing") >= 1);
}

static int held_index(const char *member, const char *path)
{
	for (unsigned i = 0; i < fake.n_held; i++)
		if (strcmp(fake_login1_held_member(&fake, i), member) == 0 &&
		    (!path || strcmp(sd_bus_message_get_path(fake.held[i]), path) == 0))
			return (int)i;
	return -1;
}

/*
 * logind restarts: every session is described again, and one that does not
 * count answers first. The reader's hold must not drop in between: no
 * LockSessions() on a reader, no suspend with LockBeforeSleep=no.
 */
static void test_logind_restart_keeps_the_hold(void **state)
{
	struct fake_session *reader, *tty;
	int w0, i;

	(void)state;
	reader = fake_login1_add(&fake, "c1", "user", "wayland", false, true, false, false);
	tty = fake_login1_add(&fake, "c2", "user", "tty", false, true, false, false);
	assert_non_null(reader);
	assert_non_null(tty);
	start("LockBeforeSleep=no\n");
	assert_true(PUMP_UNTIL(in_log("Staying awake for session c1 of userc1 (wayland) is active and not idle") == 1));
	w0 = writes();

	assert_int_equal(fake_login1_defer(&fake, true), 0);
	fake_login1_leave(&fake);
	fake_login1_pump(&fake, 100);
	fake_login1_return(&fake);
	/* The list again, then both sessions' properties: the tty's first. */
	assert_true(PUMP_UNTIL(held_index("ListSessions", NULL) >= 0));
	i = held_index("ListSessions", NULL);
	fake_login1_answer(&fake, (unsigned)i, FAKE_ANSWER_NOW);
	assert_true(PUMP_UNTIL(held_index("GetAll", tty->path) >= 0 && held_index("GetAll", reader->path) >= 0));
	fake_login1_answer(&fake, (unsigned)held_index("GetAll", tty->path), FAKE_ANSWER_NOW);
	fake_login1_pump(&fake, 300);
	assert_int_equal(session_locks(), 1);
	fake_login1_answer(&fake, (unsigned)held_index("GetAll", reader->path), FAKE_ANSWER_NOW);
	fake.defer = false;
	while (fake.n_held > 0)
		fake_login1_answer(&fake, 0, FAKE_ANSWER_NOW);
	fake_login1_pump(&fake, 500);
	assert_int_equal(session_locks(), 1);
	/* Never released, never suspended: the hold stood throughout. */
	assert_int_equal(in_log("No active session keeps us awake"), 0);
	assert_int_equal(writes(), w0);
}

/* With no input devices nothing reads the lid: logind keeps it, and we say so. */
static void test_no_lid_reader_no_inhibitor(void **state)
{
	char *handler;

	(void)state;
	start("LockBeforeSleep=no\n");
	assert_true(PUMP_UNTIL(in_log("Not taking logind's lid and sleep key inhibitor") == 1));
	fake_login1_pump(&fake, 300);
	assert_int_equal(fake_login1_count_inhibitors(&fake, LID_WHAT), 0);
	handler = string_property("LidHandler");
	assert_string_equal(handler, "logind (no input watch: no input devices to follow)");
	free(handler);
}

/* IdleTimeoutSec=0 turns the input watch off, and with it the lid. */
static void test_idle_timeout_zero_no_inhibitor(void **state)
{
	char *handler;

	(void)state;
	make_dev_input();
	start("LockBeforeSleep=no\n[Activity]\nIdleTimeoutSec=0\n");
	assert_true(PUMP_UNTIL(in_log("IdleTimeoutSec=0 turns the input watch off") == 1));
	fake_login1_pump(&fake, 300);
	assert_int_equal(fake_login1_count_inhibitors(&fake, LID_WHAT), 0);
	handler = string_property("LidHandler");
	assert_string_equal(handler, "logind (no input watch: IdleTimeoutSec=0 turns the input watch off)");
	free(handler);
}

static void test_lid_other_holder_first(void **state)
{
	char *handler;

	(void)state;
	fake_login1_add_inhibitor(&fake, "handle-lid-switch", "powerdevil", 55);
	make_dev_input();
	start("LockBeforeSleep=no\n");
	assert_true(PUMP_UNTIL(in_log("No logind inhibitors keep us awake") == 1));
	fake_login1_pump(&fake, 300);
	assert_int_equal(fake_login1_count_inhibitors(&fake, LID_WHAT), 0);
	handler = string_property("LidHandler");
	assert_string_equal(handler, "powerdevil (pid 55)");
	free(handler);
}

static void test_handle_lid_off(void **state)
{
	char *handler;

	(void)state;
	start("LockBeforeSleep=no\nHandleLid=no\n");
	assert_true(PUMP_UNTIL(in_log("No logind inhibitors keep us awake") == 1));
	fake_login1_pump(&fake, 300);
	/* The old behaviour: logind keeps the lid and the sleep key. */
	assert_int_equal(fake_login1_count_inhibitors(&fake, LID_WHAT), 0);
	handler = string_property("LidHandler");
	assert_string_equal(handler, "logind (HandleLid=no)");
	free(handler);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test_setup_teardown(test_idle_hint_holds, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_what_does_not_count, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_session_new_and_removed, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_forged_logind_signals, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_honor_idle_hint_off, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_lock_before_first_suspend, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_lock_timeout, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_lock_off, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_external_suspend, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_lid_inhibitor, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_inhibitor_strings_escaped, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_lid_other_holder_first, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_logind_restart_keeps_the_hold, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_no_lid_reader_no_inhibitor, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout_zero_no_inhibitor, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_handle_lid_off, per_test_setup, per_test_teardown),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
