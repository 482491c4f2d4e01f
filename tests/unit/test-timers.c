/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/timers.c against the real daemon (--dry-run, on a fixture tree)
 * on a private dbus-daemon, with the fake PID 1 of fake-systemd1.c: the
 * guard before a WakeSystem timer is due, the hold while it runs, its cap,
 * the hold after a resume until systemd dispatched a due timer, a reload, a
 * unit removed, systemd leaving and coming back, and seeded runs in which
 * systemd answers late and out of order. A dry-run suspend shows as "would
 * write mem to state" in the daemon's log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "fake-systemd1.h"

#define WRITE "would write mem to state"
#define LOG "daemon.log"

static struct harness h;
static struct fake_systemd1 fake;
static sd_bus *client;

static uint64_t clock_usec(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

static int writes(void)
{
	return harness_count_in_log(&h, LOG, WRITE);
}

static int in_log(const char *needle)
{
	return harness_count_in_log(&h, LOG, needle);
}

static int locks(const char *timer)
{
	char name[96];

	snprintf(name, sizeof(name), "timer:%s", timer);
	return harness_count_locks(client, name);
}

/* The phase TimerHolds shows for id, "" for none; NULL if the property could not be read. */
static const char *phase_of(const char *id)
{
	static char phase[32];
	sd_bus_message *m = NULL;
	const char *tid, *unit, *ph;
	uint64_t since;
	const char *ret = NULL;

	if (sd_bus_get_property(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "TimerHolds", NULL, &m, "a(ssst)") < 0)
		return NULL;
	if (sd_bus_message_enter_container(m, 'a', "(ssst)") >= 0) {
		ret = "";
		while (sd_bus_message_read(m, "(ssst)", &tid, &unit, &ph, &since) > 0)
			if (strcmp(tid, id) == 0) {
				snprintf(phase, sizeof(phase), "%s", ph);
				ret = phase;
			}
	}
	sd_bus_message_unref(m);
	return ret;
}

static bool phase_is(const char *id, const char *phase)
{
	const char *p = phase_of(id);

	return p && strcmp(p, phase) == 0;
}

/* Serve the fake systemd until cond() holds, for at most 10 s; false if it never did. */
#define PUMP_UNTIL(cond)                                                   \
	({                                                                 \
		bool _ok = false;                                          \
		for (int _i = 0; _i < 500 && !(_ok = (cond)); _i++)        \
			fake_systemd1_pump(&fake, 20);                     \
		if (!_ok)                                                  \
			harness_show_log(&h, LOG);                         \
		_ok;                                                       \
	})

static void start(const char *timers_config)
{
	char config[512];

	/* Nothing but the timers holds: no logind here, and no input devices in the fixture. */
	snprintf(config, sizeof(config),
		 "[Backoff]\nDelaySec=100ms\n[WakeLocks]\nStartupHoldSec=0\n[Activity]\nResumeGraceSec=1s\n"
		 "[Logind]\nHonorInhibitors=no\nHonorIdleHint=no\nLockBeforeSleep=no\nHandleLid=no\n[Timers]\n%s",
		 timers_config);
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){ .config = config, .log = LOG }) > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_true(PUMP_UNTIL(fake.subscribes >= 1 && in_log("Following systemd's WakeSystem= timers") == 1));
}

/* No suspend for ms milliseconds while the fake is served. */
static bool no_writes_for(int ms)
{
	int w0 = writes();

	fake_systemd1_pump(&fake, ms);
	return writes() == w0;
}

static void test_running_holds(void **state)
{
	struct fake_timer *backup, *plain;

	(void)state;
	backup = fake_systemd1_add(&fake, "backup.timer", "backup.service", true, false);
	plain = fake_systemd1_add(&fake, "logrotate.timer", "logrotate.service", false, false);
	start("");
	assert_true(PUMP_UNTIL(in_log("Following backup.timer (WakeSystem=yes") == 1));
	assert_int_equal(in_log("Following logrotate.timer"), 0);

	/* A timer without WakeSystem= is not ours to hold for. */
	fake_timer_trigger(plain);
	fake_systemd1_pump(&fake, 300);
	assert_int_equal(locks("logrotate.timer"), 0);

	fake_timer_trigger(backup);
	assert_true(PUMP_UNTIL(locks("backup.timer") == 1 && phase_is("backup.timer", "running")));
	assert_true(no_writes_for(600));
	fake_timer_set_sub(backup, "waiting");
	assert_true(PUMP_UNTIL(locks("backup.timer") == 0 && phase_is("backup.timer", "")));
	{
		int w0 = writes();

		assert_true(PUMP_UNTIL(writes() > w0));
	}
}

static void fake_pause(struct fake_systemd1 *f)
{
	fake_systemd1_pump(f, 300);
}

static void test_guard(void **state)
{
	struct fake_timer *t;
	sd_bus_message *m = NULL;
	const char *id;
	uint64_t when, t0;

	(void)state;
	start("GuardSec=2s\n");
	t0 = clock_usec(CLOCK_MONOTONIC);
	t = fake_systemd1_add(&fake, "mail.timer", "mail.service", true, true);
	fake_timer_set_next(t, t0 + 4 * 1000000ULL, 0);
	assert_true(PUMP_UNTIL(in_log("Following mail.timer") == 1));

	/* Due in 4 s, guarded from 2 s before: free now, held before it is due. */
	assert_true(sd_bus_get_property(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "NextWakeUp", NULL, &m,
					"(st)") >= 0);
	assert_true(sd_bus_message_read(m, "(st)", &id, &when) > 0);
	assert_string_equal(id, "mail.timer");
	assert_true(when > clock_usec(CLOCK_REALTIME) + 2 * 1000000ULL);
	m = sd_bus_message_unref(m);
	if (clock_usec(CLOCK_MONOTONIC) < t0 + 1500000ULL)
		assert_int_equal(locks("mail.timer"), 0);
	assert_true(PUMP_UNTIL(locks("mail.timer") == 1 && phase_is("mail.timer", "due")));
	assert_true(clock_usec(CLOCK_MONOTONIC) >= t0 + 1500000ULL);
	assert_true(no_writes_for(300));

	/*
	 * systemd starts it: the guard becomes the running hold with no gap,
	 * although the trigger (Timer interface) is told before SubState (Unit
	 * interface), in two signals with a pause between, as systemd does.
	 */
	fake_timer_trigger_split(t, &fake_pause);
	assert_true(PUMP_UNTIL(phase_is("mail.timer", "running")));
	assert_int_equal(locks("mail.timer"), 1);
	assert_int_equal(in_log("ended: the timer's work is done"), 0);
	assert_true(no_writes_for(300));
	/* It runs until its next time is within the guard: the hold goes from running to due, no gap. */
	fake_timer_set_next(t, clock_usec(CLOCK_MONOTONIC) + 1500000ULL, 0);
	fake_timer_set_sub(t, "waiting");
	assert_true(PUMP_UNTIL(phase_is("mail.timer", "due")));
	assert_int_equal(in_log("ended: the timer's work is done"), 0);
	assert_int_equal(locks("mail.timer"), 1);
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(phase_is("mail.timer", "running")));
	fake_timer_set_sub(t, "waiting");
	assert_true(PUMP_UNTIL(locks("mail.timer") == 0));
}

static void test_cap(void **state)
{
	struct fake_timer *t;
	int w0;

	(void)state;
	t = fake_systemd1_add(&fake, "sync.timer", "sync.service", true, false);
	start("MaxHoldSec=1s\n");
	assert_true(PUMP_UNTIL(in_log("Following sync.timer") == 1));
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(locks("sync.timer") == 1));
	/* Still running after MaxHoldSec: no longer held, said once, shown as capped. */
	assert_true(PUMP_UNTIL(locks("sync.timer") == 0 && phase_is("sync.timer", "capped")));
	assert_int_equal(in_log("sync.service still running after MaxHoldSec"), 1);
	w0 = writes();
	assert_true(PUMP_UNTIL(writes() > w0));
	fake_timer_set_sub(t, "waiting");
	assert_true(PUMP_UNTIL(phase_is("sync.timer", "")));
	assert_int_equal(locks("sync.timer"), 0);
}

static void test_dispatch_after_resume(void **state)
{
	struct fake_timer *t;
	char *reason = NULL;
	int w0;

	(void)state;
	/* No guard: the dry-run suspends run while the timer comes due, as a real suspend would sleep through it. */
	t = fake_systemd1_add(&fake, "fetch.timer", "fetch.service", true, false);
	fake_timer_set_next(t, clock_usec(CLOCK_MONOTONIC) + 500000ULL, 0);
	start("GuardSec=0\n");
	/* The first resume after it came due names it and holds for its dispatch, capped by ResumeGraceSec=1s. */
	assert_true(PUMP_UNTIL(locks("fetch.timer") == 1 && phase_is("fetch.timer", "dispatching")));
	assert_true(sd_bus_get_property_string(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "LastWakeReason", NULL,
					       &reason) >= 0);
	assert_string_equal(reason, "fetch.timer (dry-run)");
	free(reason);
	assert_true(no_writes_for(300));
	/* systemd never starts it: the hold ends with the grace, once, and the due time is not held again. */
	assert_true(PUMP_UNTIL(locks("fetch.timer") == 0));
	assert_int_equal(in_log("systemd did not start fetch.service in time"), 1);
	w0 = writes();
	assert_true(PUMP_UNTIL(writes() > w0 + 3));
	assert_int_equal(in_log("Timer fetch.timer: dispatching"), 1);

	/* Due again: dispatched this time, and the dispatch hold hands over to the running one. */
	fake_timer_set_next(t, clock_usec(CLOCK_MONOTONIC) + 200000ULL, 0);
	assert_true(PUMP_UNTIL(phase_is("fetch.timer", "dispatching")));
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(phase_is("fetch.timer", "running")));
	assert_int_equal(locks("fetch.timer"), 1);
	fake_timer_set_sub(t, "waiting");
	assert_true(PUMP_UNTIL(locks("fetch.timer") == 0));
}

/*
 * ResumeGraceSec=0: no hold for systemd's dispatch after a resume (0 is no
 * cap to manager_hold(), so one would last for ever when systemd never
 * starts the timer, as here).
 */
static void test_zero_grace(void **state)
{
	struct fake_timer *t;
	int w0;

	(void)state;
	t = fake_systemd1_add(&fake, "late.timer", "late.service", true, false);
	fake_timer_set_next(t, clock_usec(CLOCK_MONOTONIC) + 500000ULL, 0);
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
						     .config = "[Backoff]\nDelaySec=100ms\n[WakeLocks]\nStartupHoldSec=0\n"
							       "[Activity]\nResumeGraceSec=0\n"
							       "[Logind]\nHonorInhibitors=no\nHonorIdleHint=no\n"
							       "LockBeforeSleep=no\nHandleLid=no\n[Timers]\nGuardSec=0\n",
						     .log = LOG }) > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_true(PUMP_UNTIL(in_log("Following late.timer") == 1));
	/* Due, and the resumes that follow name it, but nothing holds for it. */
	assert_true(PUMP_UNTIL(in_log("woken by late.timer (dry-run)") > 0));
	w0 = writes();
	assert_true(PUMP_UNTIL(writes() > w0 + 5));
	assert_int_equal(locks("late.timer"), 0);
	assert_int_equal(in_log("Timer late.timer: dispatching"), 0);
}

static void test_reload_and_remove(void **state)
{
	struct fake_timer *a, *b, *c;

	(void)state;
	a = fake_systemd1_add(&fake, "a.timer", "a.service", true, false);
	b = fake_systemd1_add(&fake, "b.timer", "b.service", true, false);
	start("");
	assert_true(PUMP_UNTIL(in_log("Following a.timer") == 1 && in_log("Following b.timer") == 1));
	fake_timer_trigger(a);
	fake_timer_trigger(b);
	assert_true(PUMP_UNTIL(locks("a.timer") == 1 && locks("b.timer") == 1));

	/* A reload turns WakeSystem= off for a: read again after it, a is no longer held. */
	fake_systemd1_reloading(&fake, true);
	a->wake = false;
	fake_systemd1_reloading(&fake, false);
	assert_true(PUMP_UNTIL(locks("a.timer") == 0));
	assert_int_equal(locks("b.timer"), 1);

	/* Unloaded while running: the hold goes with it. */
	fake_systemd1_remove(b);
	assert_true(PUMP_UNTIL(locks("b.timer") == 0 && phase_is("b.timer", "")));

	/* A timer loaded later (UnitNew) is followed once it changes (started, run). */
	c = fake_systemd1_add(&fake, "c.timer", "c.service", true, true);
	fake_timer_trigger(c);
	assert_true(PUMP_UNTIL(locks("c.timer") == 1));
	assert_int_equal(in_log("Following c.timer"), 1);
	fake_timer_set_sub(c, "waiting");
	assert_true(PUMP_UNTIL(locks("c.timer") == 0));
}

static void test_systemd_restart(void **state)
{
	struct fake_timer *t;

	(void)state;
	t = fake_systemd1_add(&fake, "backup.timer", "backup.service", true, false);
	start("");
	assert_true(PUMP_UNTIL(in_log("Following backup.timer") == 1));
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(locks("backup.timer") == 1));

	/* systemd re-executes: what was held stands while it is away. */
	fake_systemd1_leave(&fake);
	fake_systemd1_pump(&fake, 500);
	assert_int_equal(locks("backup.timer"), 1);
	/* The unit finished meanwhile; nobody said so (no subscriber after the restart). */
	fake_timer_set_sub(t, "waiting");
	fake_systemd1_return(&fake);
	/* Back: subscribed anew, listed again, and the hold ends. */
	assert_true(PUMP_UNTIL(fake.subscribes >= 2 && locks("backup.timer") == 0));
	/* Signals reach us again: the subscription is live. */
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(locks("backup.timer") == 1));
	fake_timer_set_sub(t, "waiting");
	assert_true(PUMP_UNTIL(locks("backup.timer") == 0));
}

/*
 * systemd loads a unit when its object is touched and unloads it when
 * nothing needs it: reading a dead timer on its UnitNew would load it again,
 * and round it would go (PID 1 spinning; seen in the VM). A dead timer
 * announced is not read, and once unloaded never loaded again by us.
 */
static void test_no_load_loop(void **state)
{
	struct fake_timer *t;

	(void)state;
	t = fake_systemd1_add(&fake, "once.timer", "once.service", true, false);
	start("");
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(locks("once.timer") == 1));
	/* RemainAfterElapse=no: done, stopped and unloaded. */
	fake.load_on_access = true;
	fake_timer_set_sub(t, "dead");
	fake_systemd1_remove(t);
	assert_true(PUMP_UNTIL(locks("once.timer") == 0 && phase_is("once.timer", "")));
	/* systemd loads it for a while (its service's TriggeredBy=), and unloads it. */
	fake_systemd1_announce_new(t);
	fake_systemd1_announce_new(t);
	fake_systemd1_pump(&fake, 1000);
	assert_int_equal(fake.loads, 0);
	assert_int_equal(locks("once.timer"), 0);
}

/* systemd's list fails: timers are read as they change, and the next reload lists again. */
static void test_list_fails(void **state)
{
	struct fake_timer *t;

	(void)state;
	t = fake_systemd1_add(&fake, "backup.timer", "backup.service", true, false);
	fake_systemd1_defer(&fake, true);
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
						     .config = "[Backoff]\nDelaySec=100ms\n[WakeLocks]\nStartupHoldSec=0\n"
							       "[Logind]\nHonorInhibitors=no\nHonorIdleHint=no\n"
							       "LockBeforeSleep=no\nHandleLid=no\n",
						     .log = LOG }) > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	/* Subscribe and ListUnitsByPatterns are held; answer the list with an error, then Subscribe. */
	assert_true(PUMP_UNTIL(fake.n_held == 2));
	for (unsigned i = 0; i < fake.n_held; i++)
		if (strcmp(sd_bus_message_get_member(fake.held[i]), "ListUnitsByPatterns") == 0) {
			fake_systemd1_answer(&fake, i, FAKE_SYSTEMD1_ERROR);
			break;
		}
	fake_systemd1_answer(&fake, 0, FAKE_SYSTEMD1_NOW);
	fake_systemd1_defer(&fake, false);
	assert_true(PUMP_UNTIL(in_log("systemd does not list its timers") == 1));
	/* Unlisted, a timer is read on its first change all the same. */
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(locks("backup.timer") == 1));
	fake_timer_set_sub(t, "waiting");
	assert_true(PUMP_UNTIL(locks("backup.timer") == 0));
	/* A reload lists again, and keeps what it lists. */
	fake_systemd1_reloading(&fake, true);
	fake_systemd1_reloading(&fake, false);
	fake_systemd1_pump(&fake, 300);
	fake_timer_trigger(t);
	assert_true(PUMP_UNTIL(locks("backup.timer") == 1));
	fake_timer_set_sub(t, "waiting");
	assert_true(PUMP_UNTIL(locks("backup.timer") == 0));
}

/*
 * Seeded: systemd's answers held and given in random order, signals before
 * or after the answers they race, timers added, removed, run, finished,
 * reloaded and systemd restarted. After each step and once everything is
 * answered, the invariant: a timer is held if and only if systemd has it
 * loaded, with WakeSystem=yes, running.
 */
#define N_NAMES 5

static bool expected_held(const struct fake_timer *t)
{
	return t && !t->gone && t->wake && strcmp(t->sub, "running") == 0;
}

static struct fake_timer *current(const char *id)
{
	for (unsigned i = fake.n; i-- > 0;)
		if (strcmp(fake.timers[i].id, id) == 0)
			return fake.timers[i].gone ? NULL : &fake.timers[i];
	return NULL;
}

static bool invariant_holds(const char *const *names, char *what, size_t size)
{
	for (unsigned i = 0; i < N_NAMES; i++) {
		struct fake_timer *t = current(names[i]);
		int n = locks(names[i]);

		if (n != (expected_held(t) ? 1 : 0)) {
			snprintf(what, size, "%s: %d locks, systemd has it %s%s%s", names[i], n, t ? t->sub : "unloaded",
				 t && !t->wake ? ", WakeSystem=no" : "", t && t->gone ? ", gone" : "");
			return false;
		}
	}
	return true;
}

static void test_seeded(void **state)
{
	static const char *const names[N_NAMES] = { "n0.timer", "n1.timer", "n2.timer", "n3.timer", "n4.timer" };
	const char *env = getenv("TIMERS_SEEDS");
	unsigned seeds = env ? (unsigned)atoi(env) : 4, steps = 40;
	char log[4096], what[160];

	(void)state;
	for (unsigned i = 0; i < 3; i++)
		fake_systemd1_add(&fake, names[i], "x.service", true, false);
	start("");
	for (unsigned seed = 1; seed <= seeds; seed++) {
		unsigned step;
		size_t len = 0;

		srandom(seed);
		log[0] = 0;
		for (step = 0; step < steps; step++) {
			const char *id = names[random() % N_NAMES];
			struct fake_timer *t = current(id);
			int action = random() % 9;
			char ev[80];

			fake_systemd1_defer(&fake, random() % 2);
			switch (action) {
			case 0:
			case 1:
				if (t)
					fake_timer_trigger(t);
				snprintf(ev, sizeof(ev), "run %s", id);
				break;
			case 2:
			case 3:
				if (t)
					fake_timer_set_sub(t, random() % 3 ? "waiting" : "elapsed");
				snprintf(ev, sizeof(ev), "finish %s", id);
				break;
			case 4:
				if (t)
					fake_systemd1_remove(t);
				else
					fake_systemd1_add(&fake, id, "x.service", random() % 4 != 0, true);
				snprintf(ev, sizeof(ev), "%s %s", t ? "remove" : "add", id);
				break;
			case 5:
				fake_systemd1_reloading(&fake, true);
				if (t)
					t->wake = !t->wake;
				fake_systemd1_reloading(&fake, false);
				snprintf(ev, sizeof(ev), "reload flipping %s", id);
				break;
			case 6:
				fake_systemd1_leave(&fake);
				fake_systemd1_pump(&fake, random() % 100);
				if (t)
					snprintf(t->sub, sizeof(t->sub), "%s", random() % 2 ? "running" : "waiting");
				fake_systemd1_return(&fake);
				snprintf(ev, sizeof(ev), "restart, %s now %s", id, t ? t->sub : "-");
				break;
			default:
				snprintf(ev, sizeof(ev), "pause");
				break;
			}
			/* What was held is answered now, in random order, after a random delay. */
			fake_systemd1_pump(&fake, random() % 60);
			while (fake.n_held > 0)
				fake_systemd1_answer(&fake, random() % fake.n_held, FAKE_SYSTEMD1_NOW);
			fake_systemd1_defer(&fake, false);
			len += snprintf(log + len, len < sizeof(log) ? sizeof(log) - len : 0, "%s; ", ev);
			if (!PUMP_UNTIL(invariant_holds(names, what, sizeof(what)))) {
				fprintf(stderr, "seed %u step %u: %s\nevents: %s\n", seed, step, what, log);
				fail();
			}
		}
		/* End of seed: everything finishes, and the machine must be free to suspend again. */
		for (unsigned i = 0; i < N_NAMES; i++)
			if (current(names[i]))
				fake_timer_set_sub(current(names[i]), "waiting");
		assert_true(PUMP_UNTIL(invariant_holds(names, what, sizeof(what))));
		{
			int w0 = writes();

			assert_true(PUMP_UNTIL(writes() > w0));
		}
		print_message("seed %u: %u steps, invariant held\n", seed, steps);
	}
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "test-timers needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
	return 0;
}

static int per_test_setup(void **state)
{
	(void)state;
	assert_int_equal(harness_bus_start(&h, "sysfs-basic",
					   "<policy user=\"root\"><allow own=\"org.freedesktop.systemd1\"/>"
					   "<allow send_destination=\"org.freedesktop.systemd1\"/></policy>"),
			 0);
	assert_int_equal(fake_systemd1_start(&fake, h.address), 0);
	return 0;
}

static int per_test_teardown(void **state)
{
	(void)state;
	client = sd_bus_flush_close_unref(client);
	if (h.daemon_pid > 0)
		harness_daemon_stop(&h, SIGTERM);
	fake_systemd1_stop(&fake);
	harness_stop(&h);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_running_holds, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_guard, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_cap, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_dispatch_after_resume, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_zero_grace, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_reload_and_remove, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_systemd_restart, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_list_fails, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_no_load_loop, per_test_setup, per_test_teardown),
		cmocka_unit_test_setup_teardown(test_seeded, per_test_setup, per_test_teardown),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
