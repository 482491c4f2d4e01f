/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Race wake lock acquires against autosleepd's suspend attempts (pm_test
 * cycles in the VM) and report TAP lines:
 *
 *   race-client [--no-lock] ITERATIONS MAX_HOLD_MS MAX_GAP_MS [KERNEL_LOCK]
 *
 * Each iteration takes a wake lock with AcquireWakeLock, holds it for a random
 * 0..MAX_HOLD_MS, closes the fd, and waits a random 0..MAX_GAP_MS with nothing
 * held so that autosleepd starts its next attempt. KERNEL_LOCK, if given, is
 * a /sys/power/wake_lock name that the caller holds: it is released once the
 * kernel log is being followed and taken again at the end.
 *
 * The evidence is the kernel's, in the kernel log's own order: pm_suspend()
 * logs "PM: suspend entry" before it syncs and freezes, the thaw logs
 * "Restarting tasks" before any task runs again, and "PM: suspend exit"
 * comes before the state write returns; with /sys/power/pm_debug_messages
 * on, pm_wakeup_pending() logs "Wakeup pending, aborting suspend" where the
 * kernel backs out (the freezer and device suspend log their own abort
 * too). The client writes "race-client: reply" to /dev/kmsg right after each
 * reply and "race-client: release" right before it closes the fd. A user
 * task cannot log while frozen, so an attempt whose thaw comes after a reply
 * mark, or whose entry lies between a reply and its release, overlapped a
 * granted lock before the freeze: the daemon took its kernel lock before it
 * answered, so the kernel must have backed out of it. One that exited
 * without an abort is a suspend that went ahead with a lock held, the
 * promise broken. (A reply that comes after the thaw but before the exit is
 * fine: the suspend is over. The reply does not wait for an attempt under
 * way, which would stall the daemon for as long as the kernel takes to back
 * out.) Before the release the client waits, still holding the lock, until
 * no attempt is under way, so every outcome is known. Use pm_test=devices:
 * at "freezer" pm_test returns before the kernel looks for wakeup events if
 * every task froze in one pass.
 *
 * --no-lock checks the instrument: the same loop without AcquireWakeLock,
 * holding for exactly MAX_HOLD_MS, must see attempts enter in its windows.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#define VIOLATIONS_SHOWN 20

struct kmsg {
	int fd, wfd;
	uint64_t entries, exits, lost;
	uint64_t last_entry_usec; /* the kernel's timestamp of the last entry */
	bool holding;             /* between our reply and release marks, in the log's order */
	bool in_attempt, thawed;  /* the attempt under way, and whether its thaw was logged */
	bool overlap, aborted;
	uint64_t overlapped, went_ahead, clean_exits;
	uint64_t marks_written, marks_read; /* /dev/kmsg drops user records over its rate limit, silently */
};

#define MARK_REPLY "race-client: reply"
#define MARK_RELEASE "race-client: release"

/* The kernel backing out of a suspend for a wakeup event (6.1 and 6.12 wording). */
static bool is_abort(const char *msg)
{
	return strstr(msg, "Wakeup pending, aborting suspend") || strstr(msg, "early wake event detected") ||
	       (strstr(msg, "Freezing") && strstr(msg, "aborted"));
}

/* A mark in the kernel log, ordered with its records. */
static void kmsg_mark(struct kmsg *k, const char *what)
{
	char line[64];

	/* With its newline: a record without one stays open for continuation, unread, until the next. */
	snprintf(line, sizeof(line), "%s\n", what);
	if (write(k->wfd, line, strlen(line)) > 0)
		k->marks_written++;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Read every record logged so far; each read() returns one record. */
static void kmsg_drain(struct kmsg *k)
{
	char buf[8192];

	for (;;) {
		ssize_t n = read(k->fd, buf, sizeof(buf) - 1);
		unsigned long long seq, ts;
		const char *msg;

		if (n < 0 && errno == EPIPE) {
			/* Overwritten before we read it: the counts are no longer exact. */
			k->lost++;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf[n] = '\0';
		msg = strchr(buf, ';');
		if (!msg || sscanf(buf, "%*u,%llu,%llu", &seq, &ts) != 2)
			continue;
		msg++;
		if (strncmp(msg, "PM: suspend entry", 17) == 0) {
			k->entries++;
			k->last_entry_usec = ts;
			k->in_attempt = true;
			k->thawed = false;
			k->overlap = k->holding;
			k->aborted = false;
		} else if (strncmp(msg, "PM: suspend exit", 16) == 0) {
			k->exits++;
			if (k->overlap) {
				k->overlapped++;
				if (!k->aborted && k->went_ahead++ < VIOLATIONS_SHOWN)
					printf("# race: the attempt that entered at %" PRIu64 " us (kernel clock) overlapped a "
					       "granted lock and exited at %llu us without the kernel backing out\n",
					       k->last_entry_usec, ts);
			}
			if (!k->aborted)
				k->clean_exits++;
			k->in_attempt = k->overlap = false;
		} else if (strstr(msg, "Restarting tasks")) {
			k->thawed = true;
		} else if (is_abort(msg)) {
			k->aborted = true;
		} else if (strstr(msg, MARK_REPLY)) {
			k->marks_read++;
			k->holding = true;
			/* Answered before this attempt froze us: the kernel lock was taken before the freeze. */
			if (k->in_attempt && !k->thawed)
				k->overlap = true;
		} else if (strstr(msg, MARK_RELEASE)) {
			k->marks_read++;
			k->holding = false;
		}
	}
}

static int write_sysfs(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Take a wake lock; returns our own copy of its fd. */
static int acquire(sd_bus *bus)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int fd, r;

	r = sd_bus_call_method(bus, "org.autosleep1", "/org/autosleep1", "org.autosleep1.Manager", "AcquireWakeLock",
			       &e, &reply, "sst", "race", "pm-test race", (uint64_t)0);
	if (r < 0) {
		fprintf(stderr, "AcquireWakeLock failed: %s\n", e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
		return r;
	}
	r = sd_bus_message_read(reply, "h", &fd);
	if (r >= 0) {
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		r = fd < 0 ? -errno : fd;
	}
	sd_bus_message_unref(reply);
	return r;
}

int main(int argc, char *argv[])
{
	struct kmsg k = { .fd = -1, .wfd = -1 };
	sd_bus *bus = NULL;
	unsigned long iterations, max_hold, max_gap, i;
	unsigned long entered_held = 0, inflight_reply = 0, during_cycle = 0, unfinished = 0;
	const char *kernel_lock;
	uint64_t t_start, elapsed, entries0;
	bool no_lock = argc > 1 && strcmp(argv[1], "--no-lock") == 0;
	unsigned seed;
	char lock_line[80];
	int r;

	if (no_lock) {
		argc--;
		argv++;
	}
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: race-client [--no-lock] ITERATIONS MAX_HOLD_MS MAX_GAP_MS [KERNEL_LOCK]\n");
		return 2;
	}
	kernel_lock = argc > 4 ? argv[4] : NULL;
	iterations = strtoul(argv[1], NULL, 10);
	max_hold = strtoul(argv[2], NULL, 10);
	max_gap = strtoul(argv[3], NULL, 10);
	seed = (unsigned)now_usec();
	srand(seed);

	r = sd_bus_open_system(&bus);
	if (r < 0) {
		printf("not ok - race: connect to the system bus: %s\n", strerror(-r));
		return 1;
	}
	k.fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	k.wfd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (k.fd < 0 || k.wfd < 0 || lseek(k.fd, 0, SEEK_END) < 0) {
		printf("not ok - race: follow /dev/kmsg: %s\n", strerror(errno));
		return 1;
	}
	kmsg_drain(&k);
	entries0 = k.entries;
	if (kernel_lock) {
		snprintf(lock_line, sizeof(lock_line), "%s", kernel_lock);
		r = write_sysfs("/sys/power/wake_unlock", lock_line);
		if (r < 0) {
			printf("not ok - race: release kernel lock %s: %s\n", kernel_lock, strerror(-r));
			return 1;
		}
	}
	printf("# race%s: %lu iterations, hold %s%lu ms, gap 0-%lu ms, seed %u\n", no_lock ? " without a lock" : "",
	       iterations, no_lock ? "" : "0-", max_hold, max_gap, seed);
	fflush(stdout);

	t_start = now_usec();
	/*
	 * Without attempts between the acquires there is no race to lose, and
	 * how many attempts fit in a run depends on how fast the emulated guest
	 * runs: on a loaded host, go on past the iterations asked for (up to 4
	 * times as many) until a quarter as many attempts entered.
	 */
	for (i = 0; i < iterations ||
		    (!no_lock && (k.entries - entries0 < iterations / 4 || k.overlapped == 0) && i < 4 * iterations);
	     i++) {
		unsigned long e1;
		int fd;

		kmsg_drain(&k);
		if (k.entries > k.exits)
			during_cycle++;
		fd = no_lock ? open("/dev/null", O_RDONLY | O_CLOEXEC) : acquire(bus);
		if (fd < 0) {
			printf("not ok - race: AcquireWakeLock %lu of %lu: %s\n", i + 1, iterations, strerror(-fd));
			break;
		}
		if (!no_lock)
			kmsg_mark(&k, MARK_REPLY);
		kmsg_drain(&k);
		e1 = k.entries;
		if (k.entries > k.exits)
			inflight_reply++;
		sleep_ms(no_lock ? (unsigned)max_hold : max_hold ? (unsigned)(rand() % (max_hold + 1)) : 0);
		kmsg_drain(&k);
		if (k.entries > e1)
			entered_held += k.entries - e1;
		/* Still holding: let every attempt that overlapped the lock end, so its outcome is known. */
		for (unsigned w = 0; !no_lock && k.entries > k.exits; w++) {
			if (w == 2000) {
				unfinished++;
				break;
			}
			sleep_ms(10);
			kmsg_drain(&k);
		}
		if (!no_lock)
			kmsg_mark(&k, MARK_RELEASE);
		close(fd);
		sleep_ms(max_gap ? (unsigned)(rand() % (max_gap + 1)) : 0);
	}
	elapsed = now_usec() - t_start;
	kmsg_drain(&k);
	if (kernel_lock)
		(void)write_sysfs("/sys/power/wake_lock", lock_line);

	if (no_lock) {
		/* Entries in the windows, and attempts the kernel went through: else nothing here can tell. */
		printf("%s - race instrument: without a lock, %lu suspend entries fell in %lu windows of %lu ms "
		       "(%lu replies would have been in flight), %" PRIu64 " attempts ended without an abort\n",
		       entered_held > 0 && k.clean_exits > 0 ? "ok" : "not ok", entered_held, i, max_hold, inflight_reply,
		       k.clean_exits);
		return entered_held == 0 || k.clean_exits == 0;
	}
	printf("# race: %lu acquires in %.1f s; %" PRIu64 " suspend entries (%.1f/s), %lu requests sent while an "
	       "attempt was under way\n", i, (double)elapsed / 1e6, k.entries - entries0,
	       (double)(k.entries - entries0) * 1e6 / (double)(elapsed ? elapsed : 1), during_cycle);
	printf("# race: %lu replies came while an attempt was under way, %lu attempts entered while a granted lock "
	       "was held\n", inflight_reply, entered_held);
	printf("%s - race: %lu acquires: %" PRIu64 " suspend attempts overlapped a granted lock (at least 1 needed), "
	       "%" PRIu64 " of them went ahead without the kernel backing out\n",
	       i >= iterations && k.overlapped > 0 && k.went_ahead == 0 && unfinished == 0 ? "ok" : "not ok", i,
	       k.overlapped, k.went_ahead);
	printf("%s - race: all %" PRIu64 " marks written to /dev/kmsg were read back (%" PRIu64 ")\n",
	       k.marks_read == k.marks_written ? "ok" : "not ok", k.marks_written, k.marks_read);
	/* Without cycles between the acquires there was no race to lose. */
	printf("%s - race: autosleepd made %" PRIu64 " pm_test attempts during the race (at least %lu needed, "
	       "in at most 4 times the iterations)\n",
	       k.entries - entries0 >= iterations / 4 ? "ok" : "not ok", k.entries - entries0, iterations / 4);
	printf("%s - race: no kernel log records were lost (%" PRIu64 " lost)\n", k.lost == 0 ? "ok" : "not ok",
	       k.lost);
	sd_bus_flush_close_unref(bus);
	close(k.fd);
	close(k.wfd);
	return k.went_ahead || !k.overlapped || unfinished || k.lost || k.marks_read != k.marks_written ||
	       i < iterations;
}
