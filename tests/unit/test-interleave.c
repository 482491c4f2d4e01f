/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's two promises, checked after every step of seeded, randomized
 * interleavings of everything that can happen to it:
 *
 *   Safety:   no state write goes through while a lease is held (D-Bus wake
 *             locks, session-active, logind's inhibitors, input, start-up),
 *             nor while a kernel wake lock is active; and the lock step
 *             never starts while a lease is held (it would lock out a user
 *             who just came back).
 *   Liveness: while autosleep is enabled, no soak client is connected and
 *             nothing holds the machine, a state write starts within
 *             DelaySec + LockTimeoutSec + 1 s. The lock step may delay a
 *             suspend; it may never cancel one.
 *
 * The whole manager runs in this process (not --dry-run) on a fixture tree,
 * with a private dbus-daemon and the fake logind of fake-login1.c on the same
 * sd-event loop. A fake kernel behind the sysfs injector answers
 * wakeup_count, wake_lock, wake_unlock and state as the kernel does: a read
 * blocks while a wakeup source is active, a count write fails on a stale
 * count, and a state write backs out (-EBUSY) when an event came after it.
 * It checks safety at the moment it lets a suspend through; the main loop
 * checks liveness between events.
 *
 * The events: sessions appearing, changing (Active, IdleHint, LockedHint,
 * Remote, Type) and disappearing; logind answering on time, late, never or
 * with an error, and leaving the bus and coming back; input, the lid, the
 * sleep key and the dock; D-Bus wake locks taken and dropped; Disable and
 * Enable; soak cycles; logind's own suspends. Each seed runs in a child
 * process; a failure prints the seed and its events, and
 * INTERLEAVE_SEEDS=<seed> replays the same events.
 *
 *   INTERLEAVE_SEEDS   "N" or "A-B" (default 1-6; 1-2 under valgrind, where
 *                      the ASan build has run them all already)
 *   INTERLEAVE_STEPS   events per seed (default 100)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "activity.h"
#include "bus-harness.h"
#include "config.h"
#include "fake-login1.h"
#include "fixture.h"
#include "leases.h"
#include "log.h"
#include "manager.h"
#include "sysfs.h"
#include "sysfs-inject.h"
#include "time-util.h"

#define MS USEC_PER_MSEC
#define DELAY (100 * MS)
#define LOCK_TIMEOUT (200 * MS)
#define WAKE_LOCKS_MAX_FAKE 16
#define CLIENT_LOCKS_MAX 8
#define LIVE_SESSIONS_MAX 4

static const char config_text[] =
	"[Backoff]\nDelaySec=100ms\nMultiplier=1\nShortSuspendSec=0\n"
	"[WakeLocks]\nStartupHoldSec=0\n"
	"[Activity]\nIdleTimeoutSec=300ms\nResumeGraceSec=100ms\n"
	"[Logind]\nLockTimeoutSec=200ms\nLockBeforeSleep=yes\nHonorIdleHint=yes\nHandleLid=yes\n";

struct kernel_wake_lock {
	char name[64];
	usec_t until; /* CLOCK_MONOTONIC; USEC_INFINITY: until unlocked */
};

/* Shared by the main loop and the suspender thread: everything under lock. */
struct fake_kernel {
	pthread_mutex_t lock;
	uint64_t count, saved;
	bool armed;
	struct kernel_wake_lock locks[WAKE_LOCKS_MAX_FAKE];
	unsigned n_locks;
	bool held;            /* the registry holds a lease, as its observer last heard */
	usec_t last_write;    /* when the last state write began */
	unsigned writes, suspends;
	unsigned blocked_reads; /* wakeup_count reads that found a source active and waited */
	unsigned rng;
	char violation[512];
	char held_by[128]; /* the lease whose LEASE_HELD came last: named in a violation */
	/*
	 * Where the fixture has no wake_lock, the daemon's kernel lock is an
	 * epoll item this fake cannot see: a write under way when a lease came
	 * may go through, as with a kernel that dropped EPOLLWAKEUP. held_entry
	 * is that write's entry into the gate (0: none, or the lock is seen).
	 */
	bool sees_kernel_lock;
	uint64_t held_entry;
};

static struct fake_kernel fk = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Per seed, in the child. */
static struct harness h;
static struct fake_login1 fake;
static struct manager *m;
static sd_bus *client, *soaker;
static int lock_fds[CLIENT_LOCKS_MAX];
static unsigned n_lock_fds;
static uint64_t rng;
static char *events;
static size_t events_len, events_size;
static usec_t quiet_since;
static usec_t quiet_total, last_check; /* time spent with nothing held, for the report */
static usec_t slack = USEC_PER_SEC;
static bool failed;

static uint64_t next_rand(void)
{
	/* splitmix64: every seed gives its own sequence, the same on every machine. */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned pick(unsigned n)
{
	return n ? (unsigned)(next_rand() % n) : 0;
}

static void event(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (events_len + (size_t)n + 3 > events_size) {
		size_t size = (events_size + (size_t)n + 3) * 2;
		char *p = realloc(events, size);

		if (!p)
			return;
		events = p;
		events_size = size;
	}
	events_len += (size_t)sprintf(events + events_len, "%s%s", events_len ? "; " : "", line);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (failed)
		return;
	failed = true;
	fprintf(stderr, "not ok: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* --- the fake kernel ------------------------------------------------------ */

/* Under fk.lock: end the timed locks that ran out; each end is a wakeup event. */
static void fk_expire(usec_t t)
{
	for (unsigned i = 0; i < fk.n_locks;) {
		if (fk.locks[i].until <= t) {
			fk.locks[i] = fk.locks[--fk.n_locks];
			fk.count++;
			continue;
		}
		i++;
	}
}

static struct kernel_wake_lock *fk_find(const char *name)
{
	for (unsigned i = 0; i < fk.n_locks; i++)
		if (strcmp(fk.locks[i].name, name) == 0)
			return &fk.locks[i];
	return NULL;
}

/* What pm_wakeup_pending() says after a wakeup_count write: an event since, or one in progress. */
static bool fk_pending(void)
{
	return fk.armed && (fk.count != fk.saved || fk.n_locks > 0);
}

static int fk_read(void *userdata, const char *rel, char *buf, size_t size)
{
	(void)userdata;
	if (strcmp(rel, SYSFS_POWER_WAKE_LOCK) == 0) {
		size_t len = 0;

		pthread_mutex_lock(&fk.lock);
		fk_expire(now(CLOCK_MONOTONIC));
		buf[0] = 0;
		for (unsigned i = 0; i < fk.n_locks && len + 2 < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", fk.locks[i].name);
		pthread_mutex_unlock(&fk.lock);
		return (int)strlen(buf);
	}
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) != 0)
		return SYSFS_INJECT_PASS;
	/* Blocks while any wakeup source is active, interruptibly, like the kernel's read. */
	for (bool waited = false;; waited = true) {
		pthread_mutex_lock(&fk.lock);
		fk_expire(now(CLOCK_MONOTONIC));
		if (fk.n_locks > 0 && !waited)
			fk.blocked_reads++;
		if (fk.n_locks == 0) {
			int n = snprintf(buf, size, "%" PRIu64, fk.count);

			pthread_mutex_unlock(&fk.lock);
			return n;
		}
		pthread_mutex_unlock(&fk.lock);
		if (nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL) < 0 && errno == EINTR)
			return -EINTR;
	}
}

static int fk_state_write(void)
{
	usec_t t = now(CLOCK_MONOTONIC);
	/* On the suspender thread, inside the gate: this write's entry. */
	uint64_t entry = suspender_gate_holder(m->suspender);
	unsigned ms;
	int r;

	pthread_mutex_lock(&fk.lock);
	fk_expire(t);
	fk.writes++;
	fk.last_write = t;
	if (fk_pending()) {
		fk.armed = false;
		pthread_mutex_unlock(&fk.lock);
		return -EBUSY;
	}
	ms = (unsigned)rand_r(&fk.rng) % 15;
	pthread_mutex_unlock(&fk.lock);
	/* Devices suspend meanwhile: a lease may come now, and the kernel lock then aborts. */
	(void)nanosleep(&(struct timespec){ .tv_nsec = (long)ms * 1000 * 1000 }, NULL);
	pthread_mutex_lock(&fk.lock);
	fk_expire(now(CLOCK_MONOTONIC));
	if (fk_pending()) {
		r = -EBUSY;
	} else {
		fk.suspends++;
		/* Only the write that had looked at the flags before the lease came may go on. */
		if (fk.held && (fk.held_entry == 0 || fk.held_entry != entry) && !fk.violation[0])
			snprintf(fk.violation, sizeof(fk.violation),
				 "safety: suspend #%u went through while a lease was held (%s)", fk.suspends,
				 fk.held_by);
		/* The wakeup that ends the suspend is an event of its own. */
		fk.count++;
		r = 0;
	}
	fk.armed = false;
	pthread_mutex_unlock(&fk.lock);
	return r;
}

static int fk_write(void *userdata, const char *rel, const char *value)
{
	char name[64];
	unsigned long long timeout = 0;
	int r = 0;

	(void)userdata;
	if (strcmp(rel, SYSFS_POWER_STATE) == 0)
		return fk_state_write();
	if (strcmp(rel, SYSFS_POWER_WAKEUP_COUNT) == 0) {
		uint64_t n = strtoull(value, NULL, 10);

		pthread_mutex_lock(&fk.lock);
		fk_expire(now(CLOCK_MONOTONIC));
		if (n != fk.count || fk.n_locks > 0) {
			r = -EINVAL;
		} else {
			fk.saved = n;
			fk.armed = true;
		}
		pthread_mutex_unlock(&fk.lock);
		return r;
	}
	if (strcmp(rel, SYSFS_POWER_WAKE_LOCK) == 0 || strcmp(rel, SYSFS_POWER_WAKE_UNLOCK) == 0) {
		bool lock = strcmp(rel, SYSFS_POWER_WAKE_LOCK) == 0;
		struct kernel_wake_lock *k;

		if (sscanf(value, "%63s %llu", name, &timeout) < 1)
			return -EINVAL;
		pthread_mutex_lock(&fk.lock);
		fk_expire(now(CLOCK_MONOTONIC));
		k = fk_find(name);
		if (!lock) {
			if (!k) {
				r = -EINVAL;
			} else {
				*k = fk.locks[--fk.n_locks];
				fk.count++;
			}
		} else {
			if (!k && fk.n_locks < WAKE_LOCKS_MAX_FAKE) {
				k = &fk.locks[fk.n_locks++];
				snprintf(k->name, sizeof(k->name), "%s", name);
			}
			if (k)
				k->until = timeout ? usec_add(now(CLOCK_MONOTONIC), timeout / 1000) : USEC_INFINITY;
			else
				r = -ENOSPC;
		}
		pthread_mutex_unlock(&fk.lock);
		return r;
	}
	return SYSFS_INJECT_PASS;
}

static const struct sysfs_injector injector = { .read = fk_read, .write = fk_write };

/* The registry's last observer: "held" after the gate closed, "unheld" before it opens (reverse order). */
static void on_lease(struct leases *l, enum lease_event ev, struct lease *x, const char *reason, void *userdata)
{
	uint64_t entry;

	(void)l, (void)x, (void)reason, (void)userdata;
	if (ev != LEASE_HELD && ev != LEASE_UNHELD)
		return;
	/* Before fk.lock: the suspender thread takes its own lock while holding ours. */
	entry = suspender_gate_holder(m->suspender);
	pthread_mutex_lock(&fk.lock);
	fk.held = ev == LEASE_HELD;
	if (fk.held) {
		snprintf(fk.held_by, sizeof(fk.held_by), "%s", x && x->name ? x->name : "?");
		fk.held_entry = fk.sees_kernel_lock ? 0 : entry;
	}
	pthread_mutex_unlock(&fk.lock);
}

/*
 * Linked with --wrap=sessions_lock: the lock step starts here, on the main
 * loop, where the lease observer above has run for every change before it.
 */
void __real_sessions_lock(struct sessions *s);
void __wrap_sessions_lock(struct sessions *s);
void __wrap_sessions_lock(struct sessions *s)
{
	pthread_mutex_lock(&fk.lock);
	if (fk.held && !fk.violation[0])
		snprintf(fk.violation, sizeof(fk.violation), "safety: the lock step started while a lease was held");
	pthread_mutex_unlock(&fk.lock);
	__real_sessions_lock(s);
}

/* --- the invariants, between events --------------------------------------- */

static void check(void)
{
	usec_t t = now(CLOCK_MONOTONIC), last;
	bool quiet;

	pthread_mutex_lock(&fk.lock);
	fk_expire(t);
	if (fk.violation[0])
		fail("%s", fk.violation);
	/* Nothing holds: no lease, no kernel wake lock (input's, timed), enabled, no soak client. */
	quiet = !fk.held && fk.n_locks == 0 && m->enabled && !m->soak_track;
	last = fk.last_write;
	pthread_mutex_unlock(&fk.lock);
	if (quiet && last_check)
		quiet_total += t - last_check;
	last_check = t;
	if (!quiet) {
		quiet_since = 0;
		return;
	}
	if (quiet_since == 0)
		quiet_since = t;
	/* A write may have begun on the thread since t was read. */
	last = MAX(last, quiet_since);
	if (last < t && t - last > DELAY + LOCK_TIMEOUT + slack)
		fail("liveness: nothing held for %" PRIu64 " ms and no state write (lock step %s, state %s)",
		     (t - last) / MS, strna(lock_step_to_string(m->lock_step)), strna(suspender_state_to_string(m->state)));
}

/* Run the loop for d, checking after every dispatch. */
static void run_for(usec_t d)
{
	usec_t end = now(CLOCK_MONOTONIC) + d;

	while (!failed) {
		usec_t t = now(CLOCK_MONOTONIC);

		check();
		if (t >= end)
			break;
		(void)sd_event_run(m->event, MIN(end - t, 10 * MS));
	}
}

/* --- the events ------------------------------------------------------------ */

static const char *const types[] = { "x11", "wayland", "tty", "mir", "unspecified" };
static const char *const classes[] = { "user", "greeter", "background" };
static unsigned n_added;

static struct fake_session *random_session(void)
{
	unsigned live[FAKE_LOGIN1_SESSIONS_MAX], n = 0;

	for (unsigned i = 0; i < fake.n; i++)
		if (!fake.sessions[i].gone)
			live[n++] = i;
	return n ? &fake.sessions[live[pick(n)]] : NULL;
}

static unsigned live_sessions(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < fake.n; i++)
		n += !fake.sessions[i].gone;
	return n;
}

static void add_session(bool announce)
{
	char id[16];
	struct fake_session *s;
	const char *type = types[pick(ELEMENTSOF(types))], *class = classes[pick(ELEMENTSOF(classes))];
	bool remote = pick(5) == 0, active = pick(3) != 0, idle = pick(3) != 0;

	if (live_sessions() >= LIVE_SESSIONS_MAX || fake.n >= FAKE_LOGIN1_SESSIONS_MAX - 1)
		return;
	snprintf(id, sizeof(id), "s%u", ++n_added);
	s = fake_login1_add(&fake, id, class, type, remote, active, idle, announce);
	if (!s)
		return;
	s->locker = pick(4) != 0;
	event("add %s %s %s%s%s%s%s", id, class, type, remote ? " remote" : "", active ? " active" : "",
	      idle ? " idle" : "", s->locker ? " locker" : "");
}

static void change_session(void)
{
	static const char *const props[] = { "Active", "IdleHint", "LockedHint", "Remote", "Type" };
	struct fake_session *s = random_session();
	const char *p = props[pick(ELEMENTSOF(props))];

	if (!s)
		return add_session(true);
	if (strcmp(p, "Type") == 0) {
		const char *t = types[pick(ELEMENTSOF(types))];

		event("%s Type=%s", s->id, t);
		fake_session_set_string(s, "Type", t);
		return;
	}
	/* Idle and locked go together more often than not, as a desktop's screen saver does it. */
	{
		bool v = pick(2);

		event("%s %s=%d", s->id, p, v);
		fake_session_set(s, p, v);
	}
}

static void answer_held(void)
{
	unsigned i;
	enum fake_answer how;

	if (fake.n_held == 0)
		return;
	i = pick(fake.n_held);
	how = pick(20) == 0 ? FAKE_ANSWER_NEVER : pick(10) == 0 ? FAKE_ANSWER_ERROR : FAKE_ANSWER_NOW;
	event("answer %s %s", fake_login1_held_member(&fake, i),
	      how == FAKE_ANSWER_NOW ? "now" : how == FAKE_ANSWER_ERROR ? "error" : "never");
	fake_login1_answer(&fake, i, how);
}

static int on_acquired(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	int fd;

	(void)userdata, (void)ret_error;
	if (sd_bus_message_is_method_error(reply, NULL) || sd_bus_message_read(reply, "h", &fd) < 0)
		return 0;
	if (n_lock_fds < CLIENT_LOCKS_MAX)
		lock_fds[n_lock_fds++] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return 0;
}

static void acquire(void)
{
	event("acquire");
	(void)sd_bus_call_method_async(client, NULL, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "AcquireWakeLock",
				       on_acquired, NULL, "sst", "interleave", "test", (uint64_t)0);
}

static void release(void)
{
	unsigned i;

	if (n_lock_fds == 0)
		return;
	i = pick(n_lock_fds);
	event("release");
	close(lock_fds[i]);
	lock_fds[i] = lock_fds[--n_lock_fds];
}

static void call_manager(sd_bus *b, const char *method)
{
	(void)sd_bus_call_method_async(b, NULL, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, method, NULL, NULL, "");
}

static void soak_cycle(void)
{
	event("soak cycle");
	(void)sd_bus_call_method_async(soaker, NULL, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "SoakCycle", NULL, NULL,
				       "a{sv}", 1, "ReadTimeoutUSec", "t", (uint64_t)(200 * MS));
}

/* A soak client: a few cycles, then it leaves (autosleep resumes); now and then it stays a while. */
static void soak(void)
{
	if (soaker) {
		event("soak client leaves");
		soaker = sd_bus_flush_close_unref(soaker);
		return;
	}
	if (harness_open_client(&h, &soaker) < 0)
		return;
	(void)sd_bus_attach_event(soaker, m->event, SD_EVENT_PRIORITY_NORMAL);
	for (unsigned i = 1 + pick(3); i > 0; i--) {
		soak_cycle();
		run_for(pick(300) * MS);
	}
	if (pick(5) == 0)
		return;
	event("soak client leaves");
	soaker = sd_bus_flush_close_unref(soaker);
}

static void input(void)
{
	bool builtin = pick(2);

	event("input%s", builtin ? " builtin" : "");
	if (manager_input_counts(m, builtin)) {
		manager_user_active(m);
		activity_present(m->activity);
	}
}

/* The user comes back: a session turns active and not idle, or a key is pressed. */
static void user_moves(const char *when)
{
	struct fake_session *s = random_session();

	if (s && pick(2) == 0) {
		event("%s: %s active, not idle", when, s->id);
		fake_session_set(s, "Active", true);
		fake_session_set(s, "IdleHint", false);
	} else {
		event("%s:", when);
		input();
	}
}

/*
 * Where the daemon waits on someone, the user acts more often than chance
 * would have it: during the lock step (the mouse nudged while the screen
 * locks, a session turning active) and while logind is describing.
 */
static bool step_at_a_wait(void)
{
	if (m->lock_step != LOCK_STEP_LOCKING || pick(2) != 0)
		return false;
	user_moves("during the lock step");
	run_for(pick(40) * MS);
	return true;
}

/* logind hears LockSessions(): the daemon is in its lock step now, and the user may move just then. */
static void on_lock_sessions(struct fake_login1 *f, void *userdata)
{
	(void)f, (void)userdata;
	if (pick(2) == 0)
		user_moves("while locking");
}

/*
 * The user walks away: services drop their locks, the screens blank, logind
 * answers what it was asked. Nothing holds the machine now, so it must
 * suspend, after the lock step (which this is the usual way into).
 */
static void user_leaves(void)
{
	event("user leaves");
	while (n_lock_fds > 0)
		close(lock_fds[--n_lock_fds]);
	for (unsigned i = 0; i < fake.n; i++)
		if (!fake.sessions[i].gone && !fake.sessions[i].idle)
			fake_session_set(&fake.sessions[i], "IdleHint", true);
	while (fake.n_held > 0 && pick(4) != 0)
		answer_held();
	run_for((500 + pick(1500)) * MS);
}

static void disable(void)
{
	event("disable");
	call_manager(client, "Disable");
	/* Mostly a short pause, as a user toggling it; sometimes it stays off until an enable. */
	if (pick(5) == 0)
		return;
	run_for(pick(500) * MS);
	event("enable");
	call_manager(client, "Enable");
}

static void step(void)
{
	unsigned k = pick(100);

	if (step_at_a_wait())
		return;
	if (k < 8)
		add_session(pick(4) != 0);
	else if (k < 26)
		change_session();
	else if (k < 30) {
		struct fake_session *s = random_session();

		if (s) {
			event("remove %s", s->id);
			fake_login1_remove(&fake, s);
		}
	} else if (k < 44) {
		answer_held();
		answer_held();
	}
	else if (k < 47) {
		event("defer %s", fake.defer ? "off" : "on");
		(void)fake_login1_defer(&fake, !fake.defer);
	} else if (k < 49) {
		event(fake.away ? "logind returns" : "logind leaves");
		if (fake.away) {
			fake_login1_return(&fake);
		} else {
			fake_login1_leave(&fake);
			/* Mostly a restart: back within half a second. */
			if (pick(5) != 0) {
				run_for(pick(500) * MS);
				event("logind returns");
				fake_login1_return(&fake);
			}
		}
	} else if (k < 57)
		input();
	else if (k < 60) {
		bool closed = pick(2);

		event("lid %s", closed ? "closed" : "open");
		manager_lid_switch(m, closed);
	} else if (k < 61) {
		event("sleep key");
		manager_sleep_key(m);
	} else if (k < 63) {
		fake.docked = !fake.docked;
		event("docked=%d", fake.docked);
	} else if (k < 70) {
		/* A few at a time, as services take them around their work. */
		if (n_lock_fds < 3)
			acquire();
		else
			release();
	} else if (k < 80)
		release();
	else if (k < 82)
		disable();
	else if (k < 85) {
		event("enable");
		call_manager(client, "Enable");
	} else if (k < 87)
		soak();
	else if (k < 88) {
		bool start = pick(2);

		event("PrepareForSleep(%d)", start);
		fake_login1_prepare_for_sleep(&fake, start);
	} else if (k < 97) {
		user_leaves();
		return;
	} else {
		usec_t d = (100 + pick(900)) * MS;

		event("wait %" PRIu64 "ms", d / MS);
		run_for(d);
		return;
	}
	run_for(pick(40) * MS);
}

/* Everything answered and released, everyone idle and locked: the machine must suspend again. */
static void settle(void)
{
	unsigned writes;

	event("settle");
	/* The user is gone for good: nobody moves while the sessions lock now. */
	fake.on_lock = NULL;
	fake.defer = false;
	while (fake.n_held > 0)
		fake_login1_answer(&fake, 0, FAKE_ANSWER_NOW);
	fake_login1_return(&fake);
	for (unsigned i = 0; i < fake.n; i++)
		if (!fake.sessions[i].gone) {
			fake_session_set(&fake.sessions[i], "IdleHint", true);
			fake_session_set(&fake.sessions[i], "LockedHint", true);
		}
	while (n_lock_fds > 0)
		close(lock_fds[--n_lock_fds]);
	soaker = sd_bus_flush_close_unref(soaker);
	manager_lid_switch(m, false);
	call_manager(client, "Enable");
	/* A call logind was never answered ends at the caller's own timeout (SYSTEMD_BUS_TIMEOUT). */
	run_for(4 * USEC_PER_SEC);
	pthread_mutex_lock(&fk.lock);
	writes = fk.writes;
	pthread_mutex_unlock(&fk.lock);
	run_for(DELAY + LOCK_TIMEOUT + slack);
	pthread_mutex_lock(&fk.lock);
	writes = fk.writes - writes;
	pthread_mutex_unlock(&fk.lock);
	/* Nothing may hold now: a hold that outlives every reason for it is a machine that never sleeps. */
	if (writes == 0) {
		char held[512] = "";
		size_t n = 0;

		for (struct lease *x = m->leases.head; x && n < sizeof(held); x = x->next)
			n += (size_t)snprintf(held + n, sizeof(held) - n, " '%s' (%s)", x->name, x->why);
		fail("liveness: no state write after everything settled; held:%s; enabled %d; lock step %s", held,
		     m->enabled, strna(lock_step_to_string(m->lock_step)));
	}
}

static int setup_failed(const char *what, int r)
{
	fprintf(stderr, "not ok: %s failed: %s\n", what, strerror(-r));
	return 2;
}

static struct config config;

/*
 * The world of one child: the bus, the fake logind (deferring or not), the
 * fake kernel and the manager, started. sessions: how many random sessions
 * logind has before the daemon starts (the seeds' choice).
 */
static int world_start(uint64_t seed, const char *fixture, int defer, int sessions)
{
	char path[512];
	FILE *f;
	int r;

	config_init(&config);
	rng = seed;
	/* The seed's first choices: deferring from the start, and how many sessions there are already. */
	if (defer < 0)
		defer = (int)pick(2);
	if (sessions < 0)
		sessions = (int)pick(3);
	fk.rng = (unsigned)seed;
	log_set_max_level(getenv("INTERLEAVE_DEBUG") ? LOG_DEBUG : LOG_ERR);
	r = harness_bus_start(&h, fixture,
			      "<policy user=\"root\"><allow own=\"org.freedesktop.login1\"/>"
			      "<allow send_destination=\"org.freedesktop.login1\"/></policy>");
	if (r < 0)
		return setup_failed("starting dbus-daemon", r);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", h.address, 1);
	/* A call logind never answers ends here after 3 s, not sd-bus's default 25 s. */
	setenv("SYSTEMD_BUS_TIMEOUT", "3", 1);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("RUNTIME_DIRECTORY");
	/* The lid, the sleep key and input are read by the input watch: an empty /dev/input runs it. */
	snprintf(path, sizeof(path), "%s/dev", h.dir);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/input", h.dir);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/interleave.conf", h.dir);
	f = fopen(path, "we");
	if (!f || fputs(config_text, f) < 0 || fclose(f) != 0)
		return setup_failed("writing the configuration", -EIO);
	r = config_load(&config, path, true, NULL);
	if (r >= 0)
		r = sysfs_set_root(h.dir);
	if (r < 0)
		return setup_failed("loading the configuration", r);
	snprintf(path, sizeof(path), "%s/sys/power/wake_lock", h.dir);
	fk.sees_kernel_lock = access(path, F_OK) == 0;
	r = fake_login1_start(&fake, h.address);
	if (r >= 0)
		r = fake_login1_defer(&fake, defer);
	if (r < 0)
		return setup_failed("starting the fake logind", r);
	fake.on_lock = on_lock_sessions;
	/* Sessions present before the daemon starts, described at start-up. */
	for (int i = sessions; i > 0; i--)
		add_session(false);

	sysfs_inject_set(&injector);
	r = manager_new(&config, false, &m);
	if (r >= 0)
		r = leases_observe(&m->leases, on_lease, NULL);
	if (r < 0)
		return setup_failed("manager_new", r);
	(void)sd_bus_attach_event(fake.bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	r = manager_startup(m);
	if (r < 0)
		return setup_failed("manager_startup", r);
	r = harness_open_client(&h, &client);
	if (r >= 0)
		r = sd_bus_attach_event(client, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0)
		return setup_failed("the test's client", r);
	return 0;
}

/* 0, or 1 after a failure (with what happened on stderr). */
static int world_stop(const char *name)
{
	if (getenv("INTERLEAVE_DEBUG") && !failed)
		fprintf(stderr, "# events: %s\n", events ? events : "");
	if (failed) {
		fprintf(stderr, "# %s\n# events: %s\n", name, events ? events : "");
		fprintf(stderr, "# state writes %u, suspends %u\n", fk.writes, fk.suspends);
		/* Only the bus and the fixture: the manager may be wedged in just the way found. */
		harness_stop(&h);
		return 1;
	}
	soaker = sd_bus_flush_close_unref(soaker);
	client = sd_bus_flush_close_unref(client);
	(void)sd_bus_detach_event(fake.bus);
	sysfs_inject_set(NULL);
	manager_free(m);
	fake_login1_stop(&fake);
	harness_stop(&h);
	config_done(&config);
	free(events);
	return 0;
}

static int run_seed(uint64_t seed, unsigned steps, const char *fixture)
{
	char name[128];
	int r;

	r = world_start(seed, fixture, -1, -1);
	if (r != 0)
		return r;
	for (unsigned i = 0; i < steps && !failed; i++)
		step();
	if (!failed)
		settle();
	snprintf(name, sizeof(name), "seed %" PRIu64 " (%s), replay with INTERLEAVE_SEEDS=%" PRIu64, seed, fixture,
		 seed);
	if (world_stop(name) != 0)
		return 1;
	printf("ok - seed %" PRIu64 " (%s): %u steps, %u state writes, %u suspends, %u lock steps, %.1f s with nothing "
	       "held\n", seed, fixture, steps, fk.writes, fk.suspends, fake.lock_calls,
	       (double)quiet_total / USEC_PER_SEC);
	fflush(stdout);
	return 0;
}

/* Run the loop until cond holds or timeout passed; false on timeout. */
#define RUN_UNTIL(cond, timeout)                                                  \
	({                                                                        \
		usec_t _end = now(CLOCK_MONOTONIC) + (timeout);                   \
		bool _ok;                                                         \
		while (!(_ok = (cond)) && !failed && now(CLOCK_MONOTONIC) < _end) \
			run_for(20 * MS);                                         \
		_ok;                                                              \
	})

static unsigned suspends(void)
{
	unsigned n;

	pthread_mutex_lock(&fk.lock);
	n = fk.suspends;
	pthread_mutex_unlock(&fk.lock);
	return n;
}

/*
 * Docked with the lid closed and a session on the external screen: awake.
 * Undocked, the user is gone: logind announces no change of Docked, so the
 * daemon must ask again, and suspend within 30 s.
 */
static int scenario_undock(void)
{
	struct fake_session *s;
	unsigned n;
	usec_t t0;
	int r;

	r = world_start(1, "sysfs-basic", false, 0);
	if (r != 0)
		return r;
	fake.on_lock = NULL;
	s = fake_login1_add(&fake, "d1", "user", "wayland", false, true, false, true);
	if (!s)
		return setup_failed("adding a session", -ENOMEM);
	s->locker = true;
	if (!RUN_UNTIL(!m->lid_handler && m->session_lease != 0, 5 * USEC_PER_SEC))
		fail("undock: the lid inhibitor or the session hold never came (lid handler %s)", strna(m->lid_handler));
	fake.docked = 1;
	event("docked=1; lid closed");
	manager_lid_switch(m, true);
	n = suspends();
	run_for(2 * USEC_PER_SEC);
	if (suspends() != n || m->lid_away)
		fail("undock: suspended or away while docked with a session on the screen");
	fake.docked = 0;
	event("docked=0");
	t0 = now(CLOCK_MONOTONIC);
	if (!RUN_UNTIL(suspends() > n, 30 * USEC_PER_SEC))
		fail("undock: still awake 30 s after undocking with the lid closed");
	else
		printf("ok - undock: suspended %.1f s after undocking with the lid closed\n",
		       (double)(now(CLOCK_MONOTONIC) - t0) / USEC_PER_SEC);
	fflush(stdout);
	return world_stop("scenario undock");
}

/* The why of the daemon's hold for logind's inhibitors, or "" with none. */
static const char *logind_hold_why(void)
{
	struct lease *x = m->logind_lease ? leases_find(&m->leases, m->logind_lease) : NULL;

	return x ? x->why : "";
}

static const char *logind_hold_name(void)
{
	struct lease *x = m->logind_lease ? leases_find(&m->leases, m->logind_lease) : NULL;

	return x ? x->name : "";
}

/* What ListWakeLocksWithState says of one lock: its State and LidClosed. */
struct listed {
	const char *name;
	bool answered, found, lid_closed;
	char state[32];
};

static int on_listed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct listed *l = userdata;
	const char *name;

	(void)ret_error;
	l->answered = true;
	if (sd_bus_message_is_method_error(reply, NULL) ||
	    sd_bus_message_enter_container(reply, 'a', "(sssuutta{sv})") <= 0)
		return 0;
	while (sd_bus_message_enter_container(reply, 'r', "sssuutta{sv}") > 0) {
		const char *key, *state;
		int b;

		if (sd_bus_message_read(reply, "s", &name) < 0 || sd_bus_message_skip(reply, "ssuutt") < 0 ||
		    sd_bus_message_enter_container(reply, 'a', "{sv}") < 0)
			return 0;
		while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
			if (sd_bus_message_read(reply, "s", &key) < 0)
				return 0;
			if (strcmp(name, l->name) == 0 && strcmp(key, "State") == 0 &&
			    sd_bus_message_read(reply, "v", "s", &state) >= 0) {
				l->found = true;
				snprintf(l->state, sizeof(l->state), "%s", state);
			} else if (strcmp(name, l->name) == 0 && strcmp(key, "LidClosed") == 0 &&
				   sd_bus_message_read(reply, "v", "b", &b) >= 0)
				l->lid_closed = b;
			else if (sd_bus_message_skip(reply, "v") < 0)
				return 0;
			if (sd_bus_message_exit_container(reply) < 0)
				return 0;
		}
		if (sd_bus_message_exit_container(reply) < 0 || sd_bus_message_exit_container(reply) < 0)
			return 0;
	}
	return 0;
}

/* The State of name in ListWakeLocksWithState ("not listed", "no answer"); lid_closed gets its LidClosed. */
static const char *listed_state(const char *name, bool *lid_closed)
{
	static struct listed l;

	l = (struct listed){ .name = name };
	if (sd_bus_call_method_async(client, NULL, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "ListWakeLocksWithState",
				     on_listed, &l, "") < 0 ||
	    !RUN_UNTIL(l.answered, 5 * USEC_PER_SEC))
		return "no answer";
	*lid_closed = l.lid_closed;
	return l.found ? l.state : "not listed";
}

/* autosleepctl's output for args, run while the loop serves it (caller frees); NULL if it failed. */
static char *ctl_output(const char *args)
{
	char path[PATH_MAX], cmd[PATH_MAX + 256], *out = NULL;
	size_t len = 0;
	int status = -1;
	pid_t pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ctl.out", h.dir);
	snprintf(cmd, sizeof(cmd), "exec '%s' %s > '%s'", getenv("AUTOSLEEPCTL"), args, path);
	pid = fork();
	if (pid < 0)
		return NULL;
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (!RUN_UNTIL(waitpid(pid, &status, WNOHANG) == pid, 10 * USEC_PER_SEC)) {
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		return NULL;
	}
	f = fopen(path, "re");
	if (!f || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || getdelim(&out, &len, '\0', f) < 0) {
		free(out);
		out = NULL;
	}
	if (f)
		fclose(f);
	return out;
}

/* The line of autosleepctl list that starts with name, and holds what; false if none does. */
static bool ctl_line_has(const char *list, const char *name, const char *what)
{
	size_t n = strlen(name);

	for (const char *line = list; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end = strchrnul(line, '\n');

		if (strncmp(line, name, n) == 0 && line[n] == ' ' && memmem(line, end - line, what, strlen(what)))
			return true;
	}
	return false;
}

/*
 * What the bus and autosleepctl list say of name: the state (and LidClosed)
 * from ListWakeLocksWithState, and list's STATE column (lid-wait or held).
 */
static void check_listed(const char *when, const char *name, const char *state, bool lid_closed)
{
	bool lid = !lid_closed;
	const char *got = listed_state(name, &lid);
	_cleanup_free_ char *list = NULL, *json = NULL;
	const char *obj;
	char want[128];

	if (strcmp(got, state) != 0 || lid != lid_closed)
		fail("lid-inhibitors: %s, ListWakeLocksWithState says '%s' is %s (LidClosed %d), not %s (LidClosed %d)",
		     when, name, got, lid, state, lid_closed);
	list = ctl_output("list");
	if (!list || !ctl_line_has(list, name, strcmp(state, "held") == 0 ? " held " : " lid-wait "))
		fail("lid-inhibitors: %s, autosleepctl list does not mark '%s' %s:\n%s", when, name, state,
		     strna(list));
	else if (strcmp(state, "held") != 0 && !strstr(list, "1 of them waiting for the lid to open."))
		fail("lid-inhibitors: %s, autosleepctl list does not count the lock that waits:\n%s", when, list);
	snprintf(want, sizeof(want), "\"name\":\"%s\",", name);
	json = ctl_output("list --json");
	obj = json ? strstr(json, want) : NULL;
	if (!obj) {
		fail("lid-inhibitors: %s, autosleepctl list --json has no '%s': %s", when, name, strna(json));
		return;
	}
	/* Its own object only: from its name to the first '}' (no name or why here holds one). */
	snprintf(want, sizeof(want), "\"state\":\"%s\",\"lid_closed\":%s}", state, lid_closed ? "true" : "false");
	if (!strchr(obj, '}') || !memmem(obj, strchr(obj, '}') + 1 - obj, want, strlen(want)))
		fail("lid-inhibitors: %s, autosleepctl list --json lacks %s for '%s': %s", when, want, name, json);
}

/*
 * A closed lid overrides logind's idle inhibitors and users' sleep ones, as
 * logind's LidSwitchIgnoreInhibited=yes does; a system service's sleep
 * inhibitor (a firmware flash) still holds. Anyone may take an idle
 * inhibitor, over SSH too: without this a laptop in a bag stays awake.
 * A user's wake lock (uid 1000, without LidClosed) waits for the lid too,
 * and is counted as waiting (NWakeLocksWaitingForLid) while it does.
 */
static int scenario_lid_inhibitors(void)
{
	const usec_t bound = DELAY + LOCK_TIMEOUT + slack;
	struct lease *user;
	unsigned n;
	int r;

	r = world_start(4, "sysfs-basic", false, 0);
	if (r != 0)
		return r;
	fake.on_lock = NULL;
	if (!RUN_UNTIL(!m->lid_handler, 5 * USEC_PER_SEC))
		fail("lid-inhibitors: the lid inhibitor never came (lid handler %s)", strna(m->lid_handler));
	event("inhibitors: idle by uid 65534, sleep by uid 1000, sleep by uid 0");
	fake_login1_add_inhibitor_uid(&fake, "idle", "remote-user", "reading mail over ssh", 65534, 901);
	fake_login1_add_inhibitor_uid(&fake, "sleep", "user-download", "a download", 1000, 902);
	fake_login1_add_inhibitor_uid(&fake, "sleep", "fwupd", "flashing firmware", 0, 903);
	if (!RUN_UNTIL(strstr(logind_hold_why(), "and 2 more"), 5 * USEC_PER_SEC))
		fail("lid-inhibitors: with the lid open, not held for all three inhibitors (why '%s')", logind_hold_why());
	event("uid 1000 takes a wake lock");
	r = manager_acquire(m, &(struct lease_spec){ .name = "user-build", .owner = ":1.999", .why = "a user's build",
						   .uid = 1000, .pid = 1, .deadline = USEC_INFINITY },
			    &user);
	if (r < 0)
		return setup_failed("a user's wake lock", r);
	if (user->lid || leases_waiting_for_lid(&m->leases) != 0)
		fail("lid-inhibitors: a user's lock holds with the lid closed, or waits with the lid open");
	event("lid closed, undocked");
	fake.docked = 0;
	manager_lid_switch(m, true);
	if (!RUN_UNTIL(m->lid_away, 5 * USEC_PER_SEC))
		fail("lid-inhibitors: the closed lid never meant the user is gone");
	n = suspends();
	run_for(bound + USEC_PER_SEC);
	if (suspends() != n)
		fail("lid-inhibitors: suspended with the lid closed while a system service's sleep inhibitor held");
	if (!strstr(logind_hold_why(), "fwupd (sleep, uid 0)") || strstr(logind_hold_why(), "more"))
		fail("lid-inhibitors: with the lid closed the hold is not fwupd's alone (why '%s')", logind_hold_why());
	if (leases_waiting_for_lid(&m->leases) != 1)
		fail("lid-inhibitors: %u wake locks wait for the lid, not uid 1000's one",
		     leases_waiting_for_lid(&m->leases));
	check_listed("lid closed", "user-build", "waiting-for-lid", false);
	check_listed("lid closed", logind_hold_name(), "held", true);
	event("fwupd lets go");
	fake_login1_remove_inhibitor(&fake, "fwupd");
	if (!RUN_UNTIL(suspends() > n, bound + 5 * USEC_PER_SEC))
		fail("lid-inhibitors: the lid closed, and uid 65534's idle and uid 1000's sleep inhibitors or uid "
		     "1000's wake lock kept the machine awake (hold '%s')", logind_hold_why());
	else
		printf("ok - lid-inhibitors: with the lid closed, fwupd's sleep inhibitor held, then uid 65534's idle "
		       "and uid 1000's sleep inhibitors and uid 1000's wake lock did not\n");
	event("lid open");
	manager_lid_switch(m, false);
	if (!RUN_UNTIL(strstr(logind_hold_why(), "and 1 more"), 5 * USEC_PER_SEC))
		fail("lid-inhibitors: with the lid open again, the two users' inhibitors do not hold (why '%s')",
		     logind_hold_why());
	if (leases_waiting_for_lid(&m->leases) != 0 || !leases_holding(&m->leases))
		fail("lid-inhibitors: with the lid open again, uid 1000's wake lock still waits");
	check_listed("lid open again", "user-build", "held", false);
	(void)manager_release(m, user->id, "released");
	fflush(stdout);
	return world_stop("scenario lid-inhibitors");
}

/*
 * The freeze, on purpose: the user moves while the sessions lock, ten times.
 * The step ends, another is owed, and with nothing held the machine must
 * still suspend each time.
 */
static int scenario_lock_step_activity(void)
{
	int r;

	r = world_start(3, "sysfs-basic", true, 0);
	if (r != 0)
		return r;
	fake.on_lock = NULL;
	for (unsigned i = 0; i < 10 && !failed; i++) {
		unsigned n;
		int held = -1;

		while (fake.n_held > 0)
			fake_login1_answer(&fake, 0, FAKE_ANSWER_NOW);
		event("input");
		input();
		if (!RUN_UNTIL(m->lock_step == LOCK_STEP_LOCKING, 5 * USEC_PER_SEC)) {
			fail("lock step activity: no lock step after input (round %u)", i + 1);
			break;
		}
		event("input while locking");
		input();
		for (unsigned k = 0; k < fake.n_held; k++)
			if (strcmp(fake_login1_held_member(&fake, k), "LockSessions") == 0)
				held = (int)k;
		if (held >= 0)
			fake_login1_answer(&fake, (unsigned)held, FAKE_ANSWER_NOW);
		n = suspends();
		/* run_for() checks liveness: a step that never asks again shows as nothing held and no write. */
		if (!RUN_UNTIL(suspends() > n, 10 * USEC_PER_SEC))
			fail("lock step activity: no suspend after the step (round %u)", i + 1);
	}
	if (!failed)
		printf("ok - lock step activity: 10 rounds of input during the lock step, each followed by a suspend\n");
	fflush(stdout);
	return world_stop("scenario lock-step-activity");
}

static void bump(const char *dir, const char *attr, unsigned v)
{
	char path[600], value[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/class/wakeup/%s/%s", h.dir, dir, attr);
	snprintf(value, sizeof(value), "%u\n", v);
	f = fopen(path, "we");
	if (f) {
		fputs(value, f);
		fclose(f);
	}
}

static void make_source(const char *dir, const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/sys/class", h.dir);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class/wakeup", h.dir);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class/wakeup/%s", h.dir, dir);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class/wakeup/%s/name", h.dir, dir);
	fixture_write("/", path, name);
	bump(dir, "active_count", 0);
	bump(dir, "event_count", 0);
	bump(dir, "wakeup_count", 0);
	bump(dir, "total_time_ms", 0);
}

static bool blocker_named(const char *name)
{
	for (unsigned i = 0; i < m->stats.n_blockers; i++)
		if (strcmp(m->stats.blockers[i].name, name) == 0)
			return true;
	return false;
}

/*
 * On a kernel without wake_lock, our epoll kernel lock is an "[eventfd]"
 * item's wakeup source, and every epoll with such an item has an
 * "eventpoll" source that epoll_wait() activates: ours must never be named
 * as what kept the machine awake, another program's source must.
 */
static int scenario_own_sources(void)
{
	const char *const names[] = { "eventpoll", "[eventfd]", "other-program" };
	struct kernel_wake_lock *held;
	unsigned n, blocked;
	int r;

	r = world_start(2, "sysfs-nowakelock", false, 0);
	if (r != 0)
		return r;
	fake.on_lock = NULL;
	for (unsigned i = 0; i < ELEMENTSOF(names); i++) {
		char dir[16];

		snprintf(dir, sizeof(dir), "wakeup9%u", i);
		make_source(dir, names[i]);
	}
	if (!RUN_UNTIL(suspends() > 0, 5 * USEC_PER_SEC))
		fail("own sources: no suspend to start from");
	/*
	 * A wakeup source holds the next read until the three have moved and
	 * the read has blocked for longer than SUSPEND_BLOCKED_READ_USEC; it
	 * ends then, not on a timer, so a slow run (valgrind) cannot end it
	 * before the sources moved.
	 */
	pthread_mutex_lock(&fk.lock);
	blocked = fk.blocked_reads;
	snprintf(fk.locks[fk.n_locks].name, sizeof(fk.locks[0].name), "held-by-test");
	fk.locks[fk.n_locks++].until = USEC_INFINITY;
	pthread_mutex_unlock(&fk.lock);
	event("a kernel wakeup source until the read blocked");
	if (!RUN_UNTIL(fk.blocked_reads > blocked, 5 * USEC_PER_SEC))
		fail("own sources: the read never blocked");
	for (unsigned i = 0; i < ELEMENTSOF(names); i++) {
		char dir[16];

		snprintf(dir, sizeof(dir), "wakeup9%u", i);
		bump(dir, "active_count", 1);
		bump(dir, "event_count", 1);
		bump(dir, "total_time_ms", 300);
	}
	run_for(2 * SUSPEND_BLOCKED_READ_USEC);
	/* Before the release: the thread waits in the read, so no suspend can come in between. */
	n = suspends();
	/* As wake_unlock would: the source ends, an event. */
	pthread_mutex_lock(&fk.lock);
	held = fk_find("held-by-test");
	if (held) {
		*held = fk.locks[--fk.n_locks];
		fk.count++;
	}
	pthread_mutex_unlock(&fk.lock);
	if (!RUN_UNTIL(suspends() > n, 5 * USEC_PER_SEC))
		fail("own sources: no suspend after the source ended");
	/*
	 * The fake counts the suspend at the state write; the main loop counts
	 * who kept us awake when the thread's report reaches it, later. All
	 * sources of one blocked read come in one report, so once
	 * other-program is there, ours would be too if they had been named.
	 */
	(void)RUN_UNTIL(blocker_named("other-program"), 5 * USEC_PER_SEC);
	for (unsigned i = 0; i < m->stats.n_blockers; i++)
		event("blocker '%s'", m->stats.blockers[i].name);
	if (!blocker_named("other-program") || blocker_named("eventpoll") || blocker_named("[eventfd]"))
		fail("own sources: who kept us awake should name other-program and none of ours");
	else
		printf("ok - own sources: only other-program kept us awake\n");
	fflush(stdout);
	return world_stop("scenario own-sources");
}

static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

/* Run fn in a child of its own, killed after budget; true if it passed. */
static bool run_child(const char *name, int (*fn)(uint64_t, unsigned, const char *), uint64_t seed, unsigned steps,
		      const char *fixture, usec_t budget)
{
	usec_t t0 = now(CLOCK_MONOTONIC);
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		/* A group of its own: a child killed for taking too long takes its dbus-daemon along. */
		(void)setpgid(0, 0);
		_exit(fn(seed, steps, fixture));
	}
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (now(CLOCK_MONOTONIC) - t0 > budget) {
			fprintf(stderr, "not ok: %s did not finish in %" PRIu64 " s: killed\n", name, budget / USEC_PER_SEC);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return false;
		}
		(void)usleep(20 * 1000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	fprintf(stderr, "not ok - %s: %s %d\n", name, WIFEXITED(status) ? "exit" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return false;
}

static int run_undock(uint64_t seed, unsigned steps, const char *fixture)
{
	(void)seed, (void)steps, (void)fixture;
	return scenario_undock();
}

static int run_lock_step_activity(uint64_t seed, unsigned steps, const char *fixture)
{
	(void)seed, (void)steps, (void)fixture;
	return scenario_lock_step_activity();
}

static int run_lid_inhibitors(uint64_t seed, unsigned steps, const char *fixture)
{
	(void)seed, (void)steps, (void)fixture;
	return scenario_lid_inhibitors();
}

static int run_own_sources(uint64_t seed, unsigned steps, const char *fixture)
{
	(void)seed, (void)steps, (void)fixture;
	return scenario_own_sources();
}

int main(void)
{
	const char *seeds = getenv("INTERLEAVE_SEEDS"), *s = getenv("INTERLEAVE_STEPS");
	unsigned long long first = 1, last = under_valgrind() ? 2 : 6;
	unsigned steps = s ? (unsigned)strtoul(s, NULL, 10) : 100, passed = 0, bad = 0;
	unsigned scale = 1;

	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0) {
		fprintf(stderr, "test-interleave needs root and /usr/bin/dbus-daemon, skipping\n");
		return 77;
	}
	/* Empty is unset: tests/run-all.sh clears them where its --interleave does not apply. */
	if (seeds && !*seeds)
		seeds = NULL;
	if (s && !*s)
		steps = 100;
	if (seeds && sscanf(seeds, "%llu-%llu", &first, &last) < 2)
		first = last = strtoull(seeds, NULL, 10);
	/*
	 * The bound is the daemon's, DelaySec + LockTimeoutSec + 1 s; the slack
	 * grows with the tools that slow the same code down (ASan two to three
	 * times, valgrind some twenty), as make check runs other tests beside
	 * this one. A freeze is forever, and is found all the same.
	 */
#if defined(__SANITIZE_ADDRESS__)
	slack = 3 * USEC_PER_SEC;
#endif
	if (under_valgrind()) {
		slack = 10 * USEC_PER_SEC;
		scale = 4;
	}
	/* Fixed scenarios first, unless only seeds were asked for. */
	if (!seeds) {
		passed += run_child("scenario undock", run_undock, 0, 0, NULL, 60 * USEC_PER_SEC * scale);
		passed += run_child("scenario own-sources", run_own_sources, 0, 0, NULL, 60 * USEC_PER_SEC * scale);
		passed += run_child("scenario lock-step-activity", run_lock_step_activity, 0, 0, NULL,
				    120 * USEC_PER_SEC * scale);
		passed += run_child("scenario lid-inhibitors", run_lid_inhibitors, 0, 0, NULL,
				    60 * USEC_PER_SEC * scale);
		bad = 4 - passed;
	}
	for (unsigned long long seed = first; seed <= last; seed++) {
		/* Both kinds of kernel lock: wake_lock (the kernel backs out), and the epoll lock (the gate's barrier). */
		const char *fixture = seed % 2 ? "sysfs-basic" : "sysfs-nowakelock";
		char name[64];

		snprintf(name, sizeof(name), "seed %llu (%s)", seed, fixture);
		if (run_child(name, run_seed, seed, steps, fixture, (steps * 300 * MS + 60 * USEC_PER_SEC) * scale))
			passed++;
		else
			bad++;
	}
	printf("# interleave: %u passed, %u failed (seeds %llu-%llu, %u steps each)\n", passed, bad, first, last, steps);
	return bad ? 1 : 0;
}
