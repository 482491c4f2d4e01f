/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "string-table.h"
#include "suspend-stats.h"
#include "suspender.h"
#include "sysfs.h"

/*
 * Sent to the thread to break a blocking read of wakeup_count: the kernel
 * waits there interruptibly and returns -EINTR when a signal is pending.
 */
#define SUSPENDER_SIGNAL (SIGRTMIN + 2)

struct suspender {
	pthread_t thread;
	bool started;
	bool joined;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	/*
	 * The gate: the thread holds it from its last look at blocked/enabled
	 * until the state write returned. Only the thread ever waits for it:
	 * the main loop tries it (suspender_barrier()) and is told by an event
	 * when the holder left, so a state write that hangs in sync() on a dead
	 * NFS mount never stalls the bus. Lock order: gate, then lock.
	 */
	pthread_mutex_t gate;
	/*
	 * Under lock: how often the gate was taken (counted with the look at
	 * the flags) and left (counted before the unlock), and whether a
	 * barrier waits for the next exit. entries > exits: a holder is in.
	 */
	uint64_t gate_entries;
	uint64_t gate_exits;
	bool gate_waiting;
	bool blocked;
	bool enabled;
	bool stopping;
	bool prepare;
	/*
	 * Bumped by every suspender_set_prepare(false): the main loop may clear
	 * prepare and set it again (activity during the lock step) before this
	 * thread ran, and the thread must then ask again rather than wait on a
	 * flag that only looks unchanged.
	 */
	uint64_t prepare_done;
	uint64_t activity; /* suspender_note_activity() calls, sent with each ask */
	/* Only this thread: whether the last look found a battery, and when to look again if not. */
	bool battery_seen;
	usec_t battery_next_scan;
	/* What kept reads of attempts that have not reported yet waiting; see set_blockers(). */
	struct wakeup_blocker carry[SUSPEND_BLOCKERS_MAX];
	unsigned n_carry;
	/* Soak: the loop paused, and a cycle queued (pending) until the thread takes it. */
	bool paused;
	bool soak_pending;
	bool soak_running;
	struct soak_request soak_req;

	int pipe[2];
	char *state;
	bool dry_run;
	struct backoff backoff;
	usec_t short_suspend;
	char **own_sources;
	usec_t (*now)(clockid_t clock);
	uint64_t attempts;
};

static const char *const state_names[_SUSPENDER_STATE_MAX] = {
	[SUSPENDER_AWAKE] = "awake",
	[SUSPENDER_SUSPENDING] = "suspending",
	[SUSPENDER_BACKING_OFF] = "backing-off",
	[SUSPENDER_DISABLED] = "disabled",
	[SUSPENDER_SOAKING] = "soaking",
};

static const char *const result_names[_SUSPEND_RESULT_MAX] = {
	[SUSPEND_SUCCESS] = "success",
	[SUSPEND_EARLY_CANCEL] = "early-cancel",
	[SUSPEND_LATE_CANCEL] = "late-cancel",
	[SUSPEND_FAILURE] = "failure",
	[SUSPEND_ALARM_IMMINENT] = "alarm-imminent",
	[SUSPEND_EXTERNAL] = "external",
};

DEFINE_STRING_TABLE_TO_STRING(suspender_state, enum suspender_state, state_names, _SUSPENDER_STATE_MAX)

DEFINE_STRING_TABLE_TO_STRING(suspend_result, enum suspend_result, result_names, _SUSPEND_RESULT_MAX)

static void noop_handler(int sig)
{
	(void)sig;
}

static char **strv_free(char **l)
{
	for (char **i = l; i && *i; i++)
		free(*i);
	free(l);
	return NULL;
}

static int strv_copy(char *const *l, char ***ret)
{
	size_t n = 0;
	char **c;

	while (l && l[n])
		n++;
	c = calloc(n + 1, sizeof(char *));
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		c[i] = strdup(l[i]);
		if (!c[i]) {
			strv_free(c);
			return -ENOMEM;
		}
	}
	*ret = c;
	return 0;
}

int suspender_new(const struct suspender_params *p, struct suspender **ret)
{
	_cleanup_(freep) struct suspender *s = NULL;
	pthread_condattr_t ca;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pipe[0] = s->pipe[1] = -EBADF;
	s->state = strdup(p->state ? p->state : "mem");
	if (!s->state)
		return -ENOMEM;
	r = strv_copy(p->own_sources, &s->own_sources);
	if (r < 0) {
		free(s->state);
		return r;
	}
	/*
	 * Both ends non-blocking: the thread must never sleep on a full pipe
	 * while it holds the gate, or a main loop waiting at the gate would
	 * never drain it.
	 */
	if (pipe2(s->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = negative_errno();
		strv_free(s->own_sources);
		free(s->state);
		return r;
	}
	s->dry_run = p->dry_run;
	s->short_suspend = p->short_suspend;
	s->now = p->now ? p->now : now;
	s->enabled = true;
	backoff_init(&s->backoff, p->backoff_base, p->backoff_multiplier, p->backoff_flat_attempts,
		     p->backoff_max);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->gate, NULL);
	/* Backoff is awake time: the monotonic clock does not run while suspended. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	*ret = TAKE_PTR(s);
	return 0;
}

int suspender_get_fd(struct suspender *s)
{
	return s->pipe[0];
}

int suspender_read_event(struct suspender *s, struct suspender_event *ret)
{
	ssize_t n;

	n = read(s->pipe[0], ret, sizeof(*ret));
	if (n < 0)
		return errno == EAGAIN ? 0 : negative_errno();
	if (n == 0)
		return 0;
	/* Writes of less than PIPE_BUF are atomic, so a short read is a bug. */
	if ((size_t)n != sizeof(*ret))
		return -EIO;
	return 1;
}

static bool is_stopping(struct suspender *s)
{
	bool r;

	pthread_mutex_lock(&s->lock);
	r = s->stopping;
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* One event into the pipe without waiting: 0, -EAGAIN when full, or -errno. */
static int emit_now(struct suspender *s, const struct suspender_event *ev)
{
	_Static_assert(sizeof(struct suspender_event) <= PIPE_BUF, "event must fit one atomic pipe write");
	ssize_t n;

	/* Writes up to PIPE_BUF are all or nothing, also non-blocking. */
	do
		n = write(s->pipe[1], ev, sizeof(*ev));
	while (n < 0 && errno == EINTR);
	return n < 0 ? negative_errno() : 0;
}

/* Wait for room in the pipe; false when stopping, which ends the wait. */
static bool wait_pipe_room(struct suspender *s)
{
	struct pollfd p = { .fd = s->pipe[1], .events = POLLOUT };

	/* A bounded wait: the main loop stops reading once it is exiting. */
	(void)poll(&p, 1, 50);
	return !is_stopping(s);
}

static void emit(struct suspender *s, const struct suspender_event *ev)
{
	while (emit_now(s, ev) == -EAGAIN)
		if (!wait_pipe_room(s))
			return;
}

static void emit_state(struct suspender *s, enum suspender_state st)
{
	struct suspender_event ev = { .type = SUSPENDER_EVENT_STATE, .state = st };

	emit(s, &ev);
}

/* Wait out delay (awake time) and any Disable(). Returns false when stopping. */
static bool wait_ready(struct suspender *s, usec_t delay)
{
	usec_t t = now(CLOCK_MONOTONIC);
	/* Saturate: a deadline past what the clock can say is no deadline. */
	bool forever = delay >= USEC_INFINITY - t;
	struct timespec deadline = timespec_from_usec(forever ? 0 : t + delay);
	enum suspender_state announced = _SUSPENDER_STATE_INVALID;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping && !s->soak_pending && delay > 0) {
		int r;

		if (forever) {
			pthread_cond_wait(&s->cond, &s->lock);
			continue;
		}
		r = pthread_cond_timedwait(&s->cond, &s->lock, &deadline);
		if (r == ETIMEDOUT)
			break;
		/* A deadline the C library cannot take is as good as none; never spin on it. */
		if (r != 0)
			forever = true;
	}
	while (!s->stopping && !s->soak_pending && (!s->enabled || s->paused)) {
		/* Paused for a soak, or disabled: announce each change, such as the soak ending while disabled. */
		enum suspender_state st = s->paused ? SUSPENDER_SOAKING : SUSPENDER_DISABLED;

		if (announced != st) {
			pthread_mutex_unlock(&s->lock);
			emit_state(s, st);
			announced = st;
			pthread_mutex_lock(&s->lock);
			continue;
		}
		pthread_cond_wait(&s->cond, &s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return !is_stopping(s);
}

/*
 * Wait while a lease is held (or we are disabled). Returns 1 if we had to
 * wait, so the wakeup_count we read is stale; 0 if free; -ESHUTDOWN.
 */
static int wait_unblocked(struct suspender *s)
{
	int waited = 0;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping && (s->blocked || !s->enabled || s->paused)) {
		waited = 1;
		/* A soak cycle goes first; this count will be read again after it. */
		if (s->soak_pending)
			break;
		pthread_cond_wait(&s->cond, &s->lock);
	}
	if (s->stopping)
		waited = -ESHUTDOWN;
	pthread_mutex_unlock(&s->lock);
	return waited;
}

/*
 * Free to suspend, but the main loop has a step to take first: ask for it
 * and wait until it is done. Returns 1 if we waited, 0 if nothing was
 * pending, -ESHUTDOWN.
 */
static int wait_prepared(struct suspender *s)
{
	struct suspender_event ev = { .type = SUSPENDER_EVENT_PREPARE };
	uint64_t done;
	int waited = 0;

	pthread_mutex_lock(&s->lock);
	done = s->prepare_done;
	if (s->prepare && !s->stopping && !s->paused && !s->soak_pending) {
		ev.activity = s->activity;
		pthread_mutex_unlock(&s->lock);
		emit(s, &ev);
		pthread_mutex_lock(&s->lock);
		waited = 1;
	}
	/*
	 * A soak cycle goes first: suspender_soak() waits on the main loop for
	 * this thread to take it, so waiting here for the main loop would be a
	 * deadlock. The attempt starts over after the cycle. A step that ended
	 * and was asked for again meanwhile ends this wait too: the attempt
	 * starts over and asks for the new step, which the main loop starts
	 * only when asked.
	 */
	while (s->prepare && s->prepare_done == done && !s->stopping && !s->paused && !s->soak_pending)
		pthread_cond_wait(&s->cond, &s->lock);
	if (s->stopping)
		waited = -ESHUTDOWN;
	else if (s->paused || s->soak_pending || s->prepare_done != done)
		waited = 1;
	pthread_mutex_unlock(&s->lock);
	return waited;
}

/*
 * Every release of the gate: a barrier that found a holder in hears of its
 * exit. Counted before the unlock, so the next holder's entry comes after.
 */
static void gate_leave(struct suspender *s)
{
	struct suspender_event ev = { .type = SUSPENDER_EVENT_GATE };
	bool waiting;

	pthread_mutex_lock(&s->lock);
	ev.gate_exits = ++s->gate_exits;
	waiting = s->gate_waiting;
	s->gate_waiting = false;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->gate);
	if (waiting)
		emit(s, &ev);
}

/*
 * Take the gate for a state write: the last look at the flags, then the
 * SUSPENDING event, all under the gate. Returns 0 with the gate held, 1 when
 * a lease or Disable() came first, or -ESHUTDOWN.
 */
static int gate_enter(struct suspender *s)
{
	struct suspender_event ev = { .type = SUSPENDER_EVENT_STATE, .state = SUSPENDER_SUSPENDING };
	int r;

	for (;;) {
		pthread_mutex_lock(&s->gate);
		pthread_mutex_lock(&s->lock);
		s->gate_entries++;
		if (s->stopping)
			r = -ESHUTDOWN;
		else if (s->blocked || !s->enabled || s->paused || s->soak_pending)
			r = 1;
		else
			r = 0;
		pthread_mutex_unlock(&s->lock);
		if (r != 0) {
			gate_leave(s);
			return r;
		}
		/*
		 * Announce the suspend only once it is certain. A full pipe means
		 * the main loop is behind: let go of the gate while it catches
		 * up, so a barrier call waiting there cannot deadlock with us.
		 */
		if (emit_now(s, &ev) != -EAGAIN)
			return 0;
		gate_leave(s);
		if (!wait_pipe_room(s))
			return -ESHUTDOWN;
	}
}

enum verdict {
	VERDICT_GOOD,
	VERDICT_BAD,
	VERDICT_NEUTRAL, /* early cancel: the protocol working, neither good nor bad */
	VERDICT_WAIT,    /* neither good nor bad, but retrying at once would be refused again: the current delay */
};

/* Send the result; returns the delay before the next attempt. */
static usec_t finish_attempt(struct suspender *s, struct suspend_report *rep, enum verdict v)
{
	struct suspender_event ev = { .type = SUSPENDER_EVENT_RESULT };

	switch (v) {
	case VERDICT_GOOD:
		backoff_good(&s->backoff);
		break;
	case VERDICT_BAD:
		backoff_bad(&s->backoff);
		break;
	case VERDICT_NEUTRAL:
	case VERDICT_WAIT:
		break;
	}
	rep->bad_streak = s->backoff.bad;
	rep->next_delay = v == VERDICT_NEUTRAL ? 0 : backoff_delay(&s->backoff);
	memcpy(rep->blockers, s->carry, s->n_carry * sizeof(s->carry[0]));
	rep->n_blockers = s->n_carry;
	s->n_carry = 0;
	ev.report = *rep;
	emit(s, &ev);
	return rep->next_delay;
}

/*
 * Who kept us awake, added to what the attempt carries. An attempt often
 * starts over before it reports (a lease came, the lock step ran, a signal):
 * what blocked its read then goes with the next report instead of nowhere.
 */
static void set_blockers(struct suspender *s, const struct wakeup_sources *before, const struct wakeup_sources *after)
{
	struct wakeup_blocker found[SUSPEND_BLOCKERS_MAX];
	size_t n = MIN(wakeup_sources_blockers(before, after, s->own_sources, found, SUSPEND_BLOCKERS_MAX),
		       (size_t)SUSPEND_BLOCKERS_MAX);

	for (size_t i = 0; i < n; i++) {
		unsigned j;

		for (j = 0; j < s->n_carry; j++)
			if (strcmp(s->carry[j].name, found[i].name) == 0)
				break;
		if (j < s->n_carry)
			s->carry[j].ms += found[i].ms;
		else if (s->n_carry < SUSPEND_BLOCKERS_MAX)
			s->carry[s->n_carry++] = found[i];
	}
}

/*
 * The battery around a state write, for the drain asleep against awake.
 * Outside the gate: an ACPI battery read can take milliseconds, and a lease
 * taken meanwhile must not wait for it.
 */
static void read_battery(struct suspender *s, struct battery_sample *ret)
{
	usec_t t = now(CLOCK_MONOTONIC);

	*ret = (struct battery_sample){};
	/*
	 * Without a battery, look again at most once a minute: a desktop's
	 * attempts (and a soak's thousands) then pay for no power_supply scan,
	 * and a pack plugged in later is still found.
	 */
	if (!s->battery_seen && t < s->battery_next_scan)
		return;
	s->battery_seen = battery_read(ret) >= 0;
	if (!s->battery_seen) {
		*ret = (struct battery_sample){};
		s->battery_next_scan = usec_add(t, USEC_PER_MINUTE);
	}
}

/*
 * One pass of the protocol. Returns 0 and the delay to wait before the next
 * one (0 for an immediate retry after an early cancel or a stale count, the
 * backoff delay after a completed or failed suspend), or -ESHUTDOWN. Stop and
 * delay are kept apart: any usec_t is a valid delay, USEC_INFINITY included.
 */
static int attempt(struct suspender *s, usec_t *ret_delay)
{
	int step = s->dry_run ? LOG_INFO : LOG_DEBUG;
	_cleanup_(suspend_snapshot_clear) struct suspend_snapshot before = {}, after = {};
	_cleanup_(wakeup_sources_clear) struct wakeup_sources pre = {}, post = {};
	struct suspend_report rep = {};
	usec_t b0, m0, b1, m1, r0;
	char buf[32];
	uint64_t count;
	bool fresh = false; /* pre was read after this count's read: it can stand in for before's sources */
	int r;

	emit_state(s, SUSPENDER_AWAKE);
	log_full(step, "Reading wakeup_count");
	/* Never blocks: what was active before the read that may block, for "who kept me awake". */
	if (!s->dry_run)
		(void)wakeup_sources_read(&pre);
	r0 = now(CLOCK_MONOTONIC);
	r = sysfs_read_u64(SYSFS_POWER_WAKEUP_COUNT, &count);
	if (is_stopping(s))
		return -ESHUTDOWN;
	if (r >= 0 && !s->dry_run && now(CLOCK_MONOTONIC) - r0 >= SUSPEND_BLOCKED_READ_USEC &&
	    wakeup_sources_read(&post) >= 0) {
		set_blockers(s, &pre, &post);
		wakeup_sources_clear(&pre);
		pre = post;
		post = (struct wakeup_sources){};
		fresh = true;
	}
	if (r == -EINTR) {
		*ret_delay = 0;
		return 0;
	}
	if (r < 0) {
		rep.attempt = ++s->attempts;
		log_error_errno(r, "Failed to read wakeup_count: %m");
		rep.result = SUSPEND_FAILURE;
		rep.error = r;
		*ret_delay = finish_attempt(s, &rep, VERDICT_BAD);
		return 0;
	}
	log_full(step, "Read wakeup_count %" PRIu64, count);

	r = wait_unblocked(s);
	if (r < 0)
		return r;
	if (r > 0) {
		/* Events happened while we waited; the kernel would reject this count. */
		log_full(step, "Last lease released, reading wakeup_count again");
		*ret_delay = 0;
		return 0;
	}

	r = wait_prepared(s);
	if (r != 0) {
		if (r < 0)
			return r;
		/* The step took time: the count we hold may be stale, and a lease may have come. */
		log_full(step, "Prepared for suspend, reading wakeup_count again");
		*ret_delay = 0;
		return 0;
	}

	rep.attempt = ++s->attempts;
	/*
	 * Before the count write: once it succeeded, no event can have moved a
	 * source between this snapshot and the write (it would have failed).
	 */
	if (!s->dry_run) {
		/*
		 * With a lease held the kernel lock blocks the count read, so after
		 * the last release the sources were read just now, for "who kept me
		 * awake": take those rather than read every source again between
		 * the release and the state write.
		 */
		suspend_snapshot_read_counters(&before);
		if (fresh) {
			before.sources = pre;
			before.have_sources = true;
			pre = (struct wakeup_sources){};
		} else {
			before.have_sources = wakeup_sources_read(&before.sources) >= 0;
		}
	}
	/* Also in a dry run: reading the battery changes nothing, and shows the accounting works. */
	read_battery(s, &rep.battery_before);
	snprintf(buf, sizeof(buf), "%" PRIu64, count);
	if (s->dry_run) {
		log_info("Dry run: would write %s to wakeup_count", buf);
		r = 0;
	} else {
		r = sysfs_write(SYSFS_POWER_WAKEUP_COUNT, buf);
	}
	rep.count = count;
	if (r == -EINVAL) {
		/*
		 * What moved since our read: measured from the look before it, or
		 * from the one just after it when the read blocked (now before's).
		 */
		const struct wakeup_sources *base = fresh ? &before.sources : &pre;

		log_full(step, "wakeup_count write rejected: wakeup event after our read, retrying at once");
		wakeup_sources_clear(&post);
		if (base->n > 0 && wakeup_sources_read(&post) >= 0)
			set_blockers(s, base, &post);
		rep.result = SUSPEND_EARLY_CANCEL;
		rep.error = r;
		*ret_delay = finish_attempt(s, &rep, VERDICT_NEUTRAL);
		return 0;
	}
	if (r < 0) {
		log_error_errno(r, "Failed to write wakeup_count: %m");
		rep.result = SUSPEND_FAILURE;
		rep.error = r;
		*ret_delay = finish_attempt(s, &rep, VERDICT_BAD);
		return 0;
	}
	log_full(step, "Wrote %s to wakeup_count", buf);

	r = gate_enter(s);
	if (r != 0) {
		if (r < 0)
			return r;
		log_full(step, "Lease taken or disabled after the wakeup_count write, not suspending");
		*ret_delay = 0;
		return 0;
	}
	b0 = s->now(CLOCK_BOOTTIME);
	m0 = s->now(CLOCK_MONOTONIC);
	/* The battery samples take the clocks read around the state write: no reads of their own. */
	rep.battery_before.boottime = b0;
	rep.battery_before.monotonic = m0;
	if (s->dry_run) {
		log_info("Dry run: would write %s to state", s->state);
		r = 0;
	} else {
		log_debug("Writing %s to state", s->state);
		r = sysfs_write(SYSFS_POWER_STATE, s->state);
	}
	/*
	 * Read the clocks nested (boot, mono ... mono, boot) so the boottime span
	 * covers the monotonic one: time asleep may come out a few microseconds
	 * high from the reads themselves, never low.
	 */
	m1 = s->now(CLOCK_MONOTONIC);
	b1 = s->now(CLOCK_BOOTTIME);
	gate_leave(s);
	rep.duration = b1 - b0;
	/* CLOCK_BOOTTIME runs during suspend, CLOCK_MONOTONIC does not. */
	rep.asleep = (b1 - b0) > (m1 - m0) ? (b1 - b0) - (m1 - m0) : 0;

	read_battery(s, &rep.battery_after);
	rep.battery_after.boottime = b1;
	rep.battery_after.monotonic = m1;
	if (s->dry_run) {
		rep.result = SUSPEND_SUCCESS;
		snprintf(rep.wake_reason, sizeof(rep.wake_reason), "dry-run");
	} else {
		/*
		 * Never re-read wakeup_count here: it blocks while any wakeup
		 * source is active, our own lease's included, and the result
		 * (and a Resumed for the Suspending sent) would wait for the
		 * last lease to end. The counters below never block.
		 */
		suspend_snapshot_read(&after);
		suspend_classify(&before, &after, r, s->own_sources, &rep);
	}
	rep.error = r < 0 ? r : 0;
	if (rep.result == SUSPEND_SUCCESS) {
		bool bad = false;

		if (s->short_suspend > 0 && rep.asleep < s->short_suspend) {
			rep.short_suspend = true;
			bad = true;
		}
		*ret_delay = finish_attempt(s, &rep, bad ? VERDICT_BAD : VERDICT_GOOD);
		return 0;
	}
	if (rep.result == SUSPEND_LATE_CANCEL && before.have_sources && after.have_sources)
		set_blockers(s, &before.sources, &after.sources);
	if (rep.result == SUSPEND_LATE_CANCEL)
		log_full(step, "State write failed (%s): late cancel by %s", strerror(-r), rep.cancel_source);
	/*
	 * An alarm due within 2 s: the kernel refuses until it fired. That is
	 * no sign of a broken machine, so the delay does not grow, but an
	 * attempt at once would only be refused again.
	 */
	*ret_delay = finish_attempt(s, &rep, rep.result == SUSPEND_ALARM_IMMINENT ? VERDICT_WAIT : VERDICT_BAD);
	return 0;
}

/*
 * A soak cycle's gate, taken for its state write only: the wakeup_count read
 * before it may block for the whole read timeout (up to an hour), and
 * Disable(), or a lease without an enforced kernel lock, waits at the gate
 * on the main loop. A soak runs whether or not the loop is enabled, so only
 * a lease (unless forced) and stopping keep it out.
 */
static int soak_gate_enter(void *userdata, bool force)
{
	struct suspender *s = userdata;
	bool out;

	pthread_mutex_lock(&s->gate);
	pthread_mutex_lock(&s->lock);
	s->gate_entries++;
	out = s->stopping || (s->blocked && !force);
	pthread_mutex_unlock(&s->lock);
	if (out)
		gate_leave(s);
	return out;
}

static void soak_gate_leave(void *userdata)
{
	struct suspender *s = userdata;

	gate_leave(s);
}

/* Run the queued soak cycle, if any; false when there was none. */
static bool run_soak(struct suspender *s)
{
	struct suspender_event ev = { .type = SUSPENDER_EVENT_SOAK };
	struct soak_env env = {
		.own_sources = s->own_sources,
		.signo = SUSPENDER_SIGNAL,
		.now = s->now,
		.gate_enter = soak_gate_enter,
		.gate_leave = soak_gate_leave,
		.userdata = s,
	};
	struct soak_request req;

	pthread_mutex_lock(&s->lock);
	if (!s->soak_pending) {
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	req = s->soak_req;
	s->soak_pending = false;
	s->soak_running = true;
	env.leases_held = s->blocked;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);

	emit_state(s, SUSPENDER_SUSPENDING);
	soak_cycle_run(&req, &env, &ev.soak);

	pthread_mutex_lock(&s->lock);
	s->soak_running = false;
	pthread_mutex_unlock(&s->lock);
	emit(s, &ev);
	emit_state(s, SUSPENDER_AWAKE);
	return true;
}

static void *thread_main(void *userdata)
{
	struct suspender *s = userdata;
	sigset_t ss;
	usec_t delay = 0;

	sigemptyset(&ss);
	sigaddset(&ss, SUSPENDER_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &ss, NULL);

	for (;;) {
		if (delay > 0)
			emit_state(s, SUSPENDER_BACKING_OFF);
		if (!wait_ready(s, delay))
			break;
		if (run_soak(s)) {
			delay = 0;
			continue;
		}
		if (attempt(s, &delay) < 0)
			break;
	}
	return NULL;
}

int suspender_start(struct suspender *s)
{
	struct sigaction sa = { .sa_handler = noop_handler };
	sigset_t ss, old;
	int r;

	/* No SA_RESTART: the blocking read must return EINTR. */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SUSPENDER_SIGNAL, &sa, NULL) < 0)
		return negative_errno();
	/* The thread must never take SIGTERM & co. meant for the main loop's signalfd. */
	sigfillset(&ss);
	pthread_sigmask(SIG_BLOCK, &ss, &old);
	r = -pthread_create(&s->thread, NULL, thread_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return r;
	s->started = true;
	return 0;
}

uint64_t suspender_barrier(struct suspender *s)
{
	uint64_t ticket = 0;

	/*
	 * A holder counted in looked at the flags before the caller closed
	 * its own, and may be writing: wait for its exit, the next one. Not
	 * counted in yet, it will look after, under this lock, and see the
	 * flag: nothing to wait for.
	 */
	pthread_mutex_lock(&s->lock);
	if (s->gate_entries > s->gate_exits) {
		ticket = s->gate_entries;
		s->gate_waiting = true;
	}
	pthread_mutex_unlock(&s->lock);
	return ticket;
}

uint64_t suspender_gate_holder(struct suspender *s)
{
	uint64_t entry;

	pthread_mutex_lock(&s->lock);
	entry = s->gate_entries > s->gate_exits ? s->gate_entries : 0;
	pthread_mutex_unlock(&s->lock);
	return entry;
}

void suspender_set_blocked(struct suspender *s, bool blocked)
{
	pthread_mutex_lock(&s->lock);
	s->blocked = blocked;
	/* Only wait_unblocked() waits on this flag, and only for it to clear: taking a lease wakes nobody. */
	if (!blocked)
		pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void suspender_set_blocked_by_kernel(struct suspender *s)
{
	pthread_mutex_lock(&s->lock);
	s->blocked = true;
	pthread_mutex_unlock(&s->lock);
}

void suspender_set_enabled(struct suspender *s, bool enabled)
{
	pthread_mutex_lock(&s->lock);
	s->enabled = enabled;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void suspender_set_prepare(struct suspender *s, bool prepare)
{
	pthread_mutex_lock(&s->lock);
	s->prepare = prepare;
	if (!prepare) {
		s->prepare_done++;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
}

void suspender_prepare_again(struct suspender *s)
{
	pthread_mutex_lock(&s->lock);
	s->prepare_done++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void suspender_note_activity(struct suspender *s)
{
	pthread_mutex_lock(&s->lock);
	s->activity++;
	pthread_mutex_unlock(&s->lock);
}

bool suspender_ask_stale(struct suspender *s, uint64_t seen)
{
	bool r;

	pthread_mutex_lock(&s->lock);
	r = s->blocked || s->activity != seen;
	pthread_mutex_unlock(&s->lock);
	return r;
}

void suspender_set_paused(struct suspender *s, bool paused)
{
	pthread_mutex_lock(&s->lock);
	s->paused = paused;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int suspender_soak(struct suspender *s, const struct soak_request *req)
{
	if (!s->started || s->joined)
		return -ESRCH;
	pthread_mutex_lock(&s->lock);
	if (s->soak_pending || s->soak_running || s->stopping) {
		pthread_mutex_unlock(&s->lock);
		return -EBUSY;
	}
	s->soak_req = *req;
	s->soak_pending = true;
	pthread_cond_broadcast(&s->cond);
	/*
	 * The thread may sit in a wakeup_count read that blocks: signal it
	 * until it took the cycle. One signal sent just before it entered
	 * read() would be lost, hence the loop; each round is short, and a
	 * read that returns EINTR goes straight back to the loop's top.
	 */
	while (s->soak_pending && !s->stopping) {
		struct timespec ts = timespec_from_usec(now(CLOCK_MONOTONIC) + 20 * USEC_PER_MSEC);

		pthread_kill(s->thread, SUSPENDER_SIGNAL);
		(void)pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int suspender_stop(struct suspender *s, usec_t timeout)
{
	usec_t end = now(CLOCK_MONOTONIC) + timeout;

	if (!s->started || s->joined)
		return 0;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);

	/* Signal repeatedly: one sent just before the thread enters read() is lost. */
	for (;;) {
		struct timespec ts = timespec_from_usec(now(CLOCK_REALTIME) + 20 * USEC_PER_MSEC);

		pthread_kill(s->thread, SUSPENDER_SIGNAL);
		if (pthread_timedjoin_np(s->thread, NULL, &ts) == 0) {
			s->joined = true;
			return 0;
		}
		if (now(CLOCK_MONOTONIC) >= end)
			return -ETIMEDOUT;
	}
}

struct suspender *suspender_free(struct suspender *s)
{
	if (!s)
		return NULL;
	/* A thread stuck in the kernel still uses s; leak it, the process is exiting. */
	if (s->started && !s->joined)
		return NULL;
	safe_close(s->pipe[0]);
	safe_close(s->pipe[1]);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->gate);
	pthread_cond_destroy(&s->cond);
	strv_free(s->own_sources);
	free(s->state);
	free(s);
	return NULL;
}
