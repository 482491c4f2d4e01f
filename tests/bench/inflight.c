/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The suspend path under load: a real (not --dry-run) autosleepd on its own
 * private bus and fixture, where this program plays the kernel. The
 * fixture's /sys/power/state is a FIFO we hold open for reading, so a state
 * write lands in our pipe:
 *
 * - suspend entry: how long after the last lease's release the state write
 *   comes, after a long hold and inside the backoff window after a suspend;
 * - acquire inside the state write: the pipe is full, so the daemon's write
 *   blocks like a kernel that is suspending; a thread here "backs out" a
 *   fixed time after the daemon writes wake_lock (the abort a real kernel
 *   does for that wakeup event), and the first lease's reply is timed;
 * - acquire with the suspender blocked in wakeup_count (a FIFO nobody
 *   writes), and the daemon's context switches meanwhile.
 *
 * wakeup_count turns from a file into a FIFO and back only while the
 * daemon's thread is parked where its next access to it is a read: inside
 * the state write on a full pipe, or in the open of the FIFO. Anywhere else
 * it may sit between its count read and its count write, and a FIFO swapped
 * in there would block that write for ever (no reader), where a kernel
 * would only have failed it.
 *
 * Every latency is printed next to a Peer.Ping taken in the same iterations.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "bus-harness.h"
#include "fixture.h"
#include "inflight.h"
#include "macro.h"
#include "percentile.h"
#include "proc-stats.h"
#include "time-util.h"

/* How long our "kernel" takes to back out of a suspend once a wakeup event came (Android saw 13.5 ms). */
#define ABORT_USEC (10 * USEC_PER_MSEC)
#define BACKOFF_USEC (100 * USEC_PER_MSEC)

struct kernel {
	struct harness h;
	char state[512], wakeup_count[512];
	int state_fd;     /* our end of the state FIFO, O_RDWR: a reader that never goes away */
	int inotify_fd;   /* wake_lock written */
	int unlock_fd;    /* wake_unlock written */
	int open_fd;      /* state opened: the daemon's state write begins */
	sd_bus *bus;
	pthread_t thread;
	bool thread_started;
	/* Under lock: the thread's orders and what it did. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed, stop;
	unsigned aborts;
};

static struct kernel K = { .state_fd = -1, .inotify_fd = -1, .unlock_fd = -1, .open_fd = -1,
			   .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Fill the pipe: the daemon's next state write blocks, as if the kernel were suspending. */
static int pipe_fill(void)
{
	static const char junk[4096];

	for (;;) {
		ssize_t n = write(K.state_fd, junk, sizeof(junk));

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
	}
}

/* Empty the pipe; returns whether a state write ("mem") was in it. */
static bool pipe_drain(void)
{
	char buf[4096];
	bool found = false;
	ssize_t n;

	while ((n = read(K.state_fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i + 3 <= n; i++)
			if (memcmp(buf + i, "mem", 3) == 0)
				found = true;
	return found;
}

/* Forget the daemon's opens of state so far. */
static void state_opens_forget(void)
{
	char buf[4096];

	while (read(K.open_fd, buf, sizeof(buf)) > 0)
		;
}

/*
 * Wait for the daemon to open state, which it does only for a state write,
 * after its count write; returns when it did, or 0. A full pipe keeps it
 * inside that write until we read.
 */
static usec_t wait_state_open(int timeout_ms)
{
	usec_t t;

	if (poll(&(struct pollfd){ .fd = K.open_fd, .events = POLLIN }, 1, timeout_ms) != 1)
		return 0;
	t = now(CLOCK_MONOTONIC);
	state_opens_forget();
	return t;
}

/* Whether one of the daemon's threads sits in write(2): the state write, blocked on our full pipe. */
static bool daemon_in_write(void)
{
	char path[320], line[128];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)K.h.daemon_pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		unsigned long fd;
		long nr;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", (int)K.h.daemon_pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* write(2) on the state FIFO itself: the thread also writes its event pipe, never for long. */
		if (fgets(line, sizeof(line), f) && sscanf(line, "%ld 0x%lx", &nr, &fd) == 2 && nr == SYS_write) {
			char link[64], target[600];
			ssize_t n;

			snprintf(link, sizeof(link), "/proc/%d/fd/%lu", (int)K.h.daemon_pid, fd);
			n = readlink(link, target, sizeof(target) - 1);
			if (n > 0) {
				target[n] = 0;
				found = strcmp(target, K.state) == 0;
			}
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

static bool wait_in_write(void)
{
	for (usec_t end = now(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC; now(CLOCK_MONOTONIC) < end; usleep(200))
		if (daemon_in_write())
			return true;
	return false;
}

/*
 * The kernel backing out: once armed, the first write to wake_lock (the
 * daemon's kernel lock, a wakeup event) ends the blocked state write
 * ABORT_USEC later, the way pm_wakeup_pending() makes the kernel resume
 * what it suspended. The pipe is filled again once the write went through.
 */
static void *kernel_thread(void *userdata)
{
	(void)userdata;
	for (;;) {
		bool armed;

		pthread_mutex_lock(&K.lock);
		while (!K.armed && !K.stop)
			pthread_cond_wait(&K.cond, &K.lock);
		armed = K.armed;
		pthread_mutex_unlock(&K.lock);
		if (!armed)
			return NULL;
		/* The main thread emptied the queue before it armed us: this is the lease's write. */
		if (poll(&(struct pollfd){ .fd = K.inotify_fd, .events = POLLIN }, 1, 10000) != 1)
			return NULL;
		usleep(ABORT_USEC);
		/* Our read makes room; the daemon's write then lands. */
		for (bool seen = pipe_drain(); !seen; seen = pipe_drain())
			if (poll(&(struct pollfd){ .fd = K.state_fd, .events = POLLIN }, 1, 10000) != 1)
				return NULL;
		pthread_mutex_lock(&K.lock);
		K.armed = false;
		K.aborts++;
		pthread_cond_broadcast(&K.cond);
		pthread_mutex_unlock(&K.lock);
	}
}

static int kernel_start(const char *bus_extra)
{
	char path[600];
	pid_t writer;
	int r;

	r = harness_bus_start(&K.h, "sysfs-basic", bus_extra);
	if (r < 0)
		return r;
	snprintf(K.state, sizeof(K.state), "%s/sys/power/state", K.h.dir);
	snprintf(K.wakeup_count, sizeof(K.wakeup_count), "%s/sys/power/wakeup_count", K.h.dir);
	if (unlink(K.state) < 0 || mkfifo(K.state, 0600) < 0)
		return -errno;
	/* The daemon reads the offered states once at start: answer that read, then be the reader. */
	writer = fork();
	if (writer < 0)
		return -errno;
	if (writer == 0) {
		int fd = open(K.state, O_WRONLY | O_CLOEXEC);

		_exit(fd >= 0 && write(fd, "freeze mem disk\n", 16) == 16 ? 0 : 1);
	}
	r = harness_daemon_start(&K.h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=0\n[Logind]\nHonorInhibitors=no\n[Activity]\nIdleTimeoutSec=0\n"
			  "[Backoff]\nDelaySec=100ms\n",
		.log = "inflight.log", .real = true, .log_level = "info" });
	waitpid(writer, NULL, 0);
	if (r < 0)
		return r;
	K.state_fd = open(K.state, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (K.state_fd < 0)
		return -errno;
	/* After our own open, and after the daemon's read of the states at start. */
	K.open_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (K.open_fd < 0 || inotify_add_watch(K.open_fd, K.state, IN_OPEN) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/sys/power/wake_lock", K.h.dir);
	K.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (K.inotify_fd < 0 || inotify_add_watch(K.inotify_fd, path, IN_CLOSE_WRITE) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/sys/power/wake_unlock", K.h.dir);
	K.unlock_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (K.unlock_fd < 0 || inotify_add_watch(K.unlock_fd, path, IN_CLOSE_WRITE) < 0)
		return -errno;
	r = harness_open_client(&K.h, &K.bus);
	if (r < 0)
		return r;
	r = -pthread_create(&K.thread, NULL, kernel_thread, NULL);
	if (r < 0)
		return r;
	K.thread_started = true;
	return 0;
}

static void kernel_stop(void)
{
	if (K.thread_started) {
		pthread_mutex_lock(&K.lock);
		K.stop = true;
		K.armed = false;
		pthread_cond_broadcast(&K.cond);
		pthread_mutex_unlock(&K.lock);
		pthread_join(K.thread, NULL);
	}
	if (K.bus)
		sd_bus_flush_close_unref(K.bus);
	/* A daemon inside the write, or opening the wakeup_count FIFO, must get out to take SIGTERM. */
	if (K.state_fd >= 0)
		(void)pipe_drain();
	if (K.h.daemon_pid > 0 && K.wakeup_count[0]) {
		struct stat st;

		if (stat(K.wakeup_count, &st) == 0 && S_ISFIFO(st.st_mode)) {
			int fd = open(K.wakeup_count, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

			if (fd >= 0) {
				(void)!write(fd, "0\n", 2);
				close(fd);
			}
		}
	}
	harness_stop(&K.h);
	if (K.state_fd >= 0)
		close(K.state_fd);
	if (K.inotify_fd >= 0)
		close(K.inotify_fd);
	if (K.unlock_fd >= 0)
		close(K.unlock_fd);
	if (K.open_fd >= 0)
		close(K.open_fd);
}

static int kbus_ping(void)
{
	return sd_bus_call_method(K.bus, HARNESS_NAME, HARNESS_PATH, "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
				  "");
}

static int kbus_acquire(int *ret_fd)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = harness_acquire(K.bus, "bench", "bench", 0, ret_fd, &e);

	if (r < 0)
		fprintf(stderr, "bench: AcquireWakeLock: %s\n", e.message ? e.message : strerror(-r));
	sd_bus_error_free(&e);
	return r;
}

static void print_latency(const char *what, const uint64_t *v, unsigned n, uint64_t ping_p50)
{
	struct percentiles p = percentiles_of(v, n);

	if (n == 0) {
		printf("  %s\n", what);
		return;
	}
	printf("  %-58s %8" PRIu64 " %8" PRIu64 " %8" PRIu64, what, (uint64_t)p.p50, (uint64_t)p.p99, (uint64_t)p.max);
	if (ping_p50 > 0)
		printf(" %8.2f", (double)p.p50 / (double)ping_p50);
	printf("\n");
}

/*
 * The count read as the kernel does it, for suspend entry: wakeup_count is a
 * FIFO nobody writes, so the daemon's read blocks in open() during a hold as
 * the kernel lock makes it block. When the daemon writes wake_unlock (its
 * kernel lock released) we answer that read, and put a regular file in the
 * FIFO's place for the count write that follows.
 */
static int wc_make(bool fifo)
{
	char tmp[600];

	snprintf(tmp, sizeof(tmp), "%s.bench", K.wakeup_count);
	(void)unlink(tmp);
	if (fifo && mkfifo(tmp, 0600) < 0)
		return -errno;
	if (!fifo)
		fixture_write(K.h.dir, "sys/power/wakeup_count.bench", "5\n");
	if (rename(tmp, K.wakeup_count) < 0)
		return -errno;
	return 0;
}

static int unlock_seen(int timeout_ms)
{
	char buf[4096];
	int r = poll(&(struct pollfd){ .fd = K.unlock_fd, .events = POLLIN }, 1, timeout_ms);

	while (read(K.unlock_fd, buf, sizeof(buf)) > 0)
		;
	return r == 1 ? 0 : -ETIMEDOUT;
}

/* Answer the daemon's read of the FIFO (waiting for it to open, if it has not yet), then swap in a file. */
static int wc_serve_read(void)
{
	usec_t end = now(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
	int fd, r;

	/* No reader yet is ENXIO: the daemon is still in its backoff. */
	while ((fd = open(K.wakeup_count, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		if (errno != ENXIO || now(CLOCK_MONOTONIC) >= end)
			return errno == ENXIO ? -ETIMEDOUT : -errno;
		usleep(50);
	}
	r = write(fd, "5\n", 2) == 2 ? 0 : -EIO;
	if (r >= 0)
		r = wc_make(false);
	close(fd);
	return r;
}

/*
 * Make wakeup_count a FIFO while the daemon's thread cycles freely on the
 * file: first catch it inside a state write, past its count write.
 */
static int wc_make_fifo_parked(void)
{
	int r = pipe_fill();

	if (r < 0)
		return r;
	if (!wait_in_write())
		return -ETIMEDOUT;
	r = wc_make(true);
	(void)pipe_drain();
	return r;
}

/*
 * Drop the lease and wait for the state write it lets through: when the
 * daemon opened state (ret_write), and when that write could return
 * (ret_resume), where the backoff before the next one starts. With
 * kernel_read, answer the count read as the kernel would once the daemon
 * wrote wake_unlock, and make wakeup_count a FIFO again for the next one
 * while a full pipe holds the daemon inside the state write.
 *
 * During the hold the daemon cannot open state: it waits for the lease to
 * end, or in the open of the FIFO. So the opens forgotten here are old ones.
 */
static int release_to_state_write(int fd, bool kernel_read, usec_t *ret_release, usec_t *ret_write,
				  usec_t *ret_resume)
{
	int r;

	(void)unlock_seen(0);
	state_opens_forget();
	if (kernel_read && (r = pipe_fill()) < 0)
		return r;
	*ret_release = now(CLOCK_MONOTONIC);
	close(fd);
	if (kernel_read && ((r = unlock_seen(5000)) < 0 || (r = wc_serve_read()) < 0))
		return r;
	*ret_write = wait_state_open(5000);
	if (*ret_write == 0)
		return -ETIMEDOUT;
	if (kernel_read && (r = wc_make(true)) < 0)
		return r;
	*ret_resume = kernel_read ? now(CLOCK_MONOTONIC) : *ret_write;
	(void)pipe_drain();
	return 0;
}

/*
 * Last release to the state write. After a hold longer than the backoff the
 * write should follow the release at once; a lease taken and dropped inside
 * the backoff after a suspend should not move the write past the backoff's
 * end. Both are printed as the excess over what was configured: 0, and
 * DelaySec counted from when the last state write could return (the
 * resume). A write's time is when the daemon opened state. kernel_read: the
 * count read blocks during the hold, as on a kernel (above); else it never
 * blocks and the thread waits on the gate.
 */
static int entry_latency(unsigned n, bool kernel_read, uint64_t *hold, uint64_t *window)
{
	int r;

	(void)pipe_drain();
	if (kernel_read && (r = wc_make_fifo_parked()) < 0)
		return r;
	for (unsigned i = 0; i < n; i++) {
		usec_t t_rel, t_w, t_w2, t_res, t_res2;
		int fd;

		/* After a long hold: a lease longer than the backoff, released. */
		r = kbus_acquire(&fd);
		if (r < 0)
			return r;
		(void)pipe_drain();
		usleep(2 * BACKOFF_USEC);
		(void)pipe_drain();
		r = release_to_state_write(fd, kernel_read, &t_rel, &t_w, &t_res);
		if (r < 0)
			return r;
		hold[i] = t_w - t_rel;

		/* Inside the backoff window after that suspend: take and drop a lease, the write keeps its time. */
		usleep(BACKOFF_USEC / 5);
		r = kbus_acquire(&fd);
		if (r < 0)
			return r;
		usleep(BACKOFF_USEC / 5);
		r = release_to_state_write(fd, kernel_read, &t_rel, &t_w2, &t_res2);
		if (r < 0)
			return r;
		window[i] = t_w2 > t_res + BACKOFF_USEC ? t_w2 - t_res - BACKOFF_USEC : 0;
	}
	/*
	 * The sections after this one want a count read that never blocks: the
	 * daemon is off to the FIFO's open, where it reads; answer that read.
	 */
	return kernel_read ? wc_serve_read() : 0;
}

static int entry_latencies(unsigned n)
{
	_cleanup_free_ uint64_t *v = calloc(4 * (size_t)n, sizeof(uint64_t));
	int r;

	if (!v)
		return -ENOMEM;
	r = entry_latency(n, true, v, v + n);
	if (r >= 0)
		r = entry_latency(n, false, v + 2 * n, v + 3 * n);
	if (r < 0)
		return r;
	printf("\nSuspend entry: last release to the state write, beyond the configured delay (us, %u each)\n", n);
	printf("  %-58s %8s %8s %8s\n", "", "p50", "p99", "max");
	print_latency("count read blocked by the kernel lock during the hold:", NULL, 0, 0);
	print_latency("  after a hold of 200 ms (configured: at once)", v, n, 0);
	print_latency("  lease inside the 100 ms backoff (configured: its end)", v + n, n, 0);
	print_latency("count read never blocks (the thread waits on the gate):", NULL, 0, 0);
	print_latency("  after a hold of 200 ms (configured: at once)", v + 2 * n, n, 0);
	print_latency("  lease inside the 100 ms backoff (configured: its end)", v + 3 * n, n, 0);
	return 0;
}

/* The first lease while the daemon is inside the state write, which the kernel abandons ABORT_USEC later. */
static int acquire_in_state_write(unsigned n)
{
	_cleanup_free_ uint64_t *acq = calloc(n, sizeof(uint64_t)), *png = calloc(n, sizeof(uint64_t));
	char buf[4096];
	unsigned k = 0;
	int r;

	if (!acq || !png)
		return -ENOMEM;
	(void)pipe_drain();
	r = pipe_fill();
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++) {
		usec_t t0;
		int fd;

		if (!wait_in_write())
			return -ETIMEDOUT;
		t0 = now(CLOCK_MONOTONIC);
		r = kbus_ping();
		if (r < 0)
			return r;
		png[k] = now(CLOCK_MONOTONIC) - t0;
		while (read(K.inotify_fd, buf, sizeof(buf)) > 0)
			;
		pthread_mutex_lock(&K.lock);
		K.armed = true;
		pthread_cond_broadcast(&K.cond);
		pthread_mutex_unlock(&K.lock);
		t0 = now(CLOCK_MONOTONIC);
		r = kbus_acquire(&fd);
		if (r < 0)
			return r;
		acq[k++] = now(CLOCK_MONOTONIC) - t0;
		/* The write went through (the "abort"); refill before the release lets the next attempt in. */
		pthread_mutex_lock(&K.lock);
		while (K.armed)
			pthread_cond_wait(&K.cond, &K.lock);
		pthread_mutex_unlock(&K.lock);
		r = pipe_fill();
		if (r < 0)
			return r;
		close(fd);
	}
	printf("\nFirst lease while the daemon is inside the state write (the kernel backs out %u ms after the "
	       "wake_lock write; us, %u iterations)\n", (unsigned)(ABORT_USEC / USEC_PER_MSEC), k);
	printf("  %-58s %8s %8s %8s %8s\n", "", "p50", "p99", "max", "/ping");
	print_latency("Peer.Ping (same iterations)", png, k, percentiles_of(png, k).p50);
	print_latency("AcquireWakeLock, to the reply", acq, k, percentiles_of(png, k).p50);
	return 0;
}

/* Put the suspender in a wakeup_count read that blocks: the file becomes a FIFO nobody writes. */
static int block_in_wakeup_count(void)
{
	int fd, r;

	/* The last section left it going round to a full pipe: wait until it is inside the state write. */
	if (!wait_in_write())
		return -ETIMEDOUT;
	if (unlink(K.wakeup_count) < 0 || mkfifo(K.wakeup_count, 0600) < 0)
		return -errno;
	/* A lease, then the write let through, sends it round to the read. */
	r = kbus_acquire(&fd);
	if (r < 0)
		return r;
	(void)pipe_drain();
	close(fd);
	/* The backoff after that "suspend", then the open of the FIFO. */
	usleep(3 * BACKOFF_USEC);
	return 0;
}

static int acquire_in_wakeup_count(unsigned n, unsigned idle_seconds)
{
	_cleanup_free_ uint64_t *acq = calloc(n, sizeof(uint64_t)), *png = calloc(n, sizeof(uint64_t));
	long sw0, sw1, sw2;
	int r, fd;

	if (!acq || !png)
		return -ENOMEM;
	r = block_in_wakeup_count();
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++) {
		usec_t t0 = now(CLOCK_MONOTONIC);

		r = kbus_ping();
		if (r < 0)
			return r;
		png[i] = now(CLOCK_MONOTONIC) - t0;
		t0 = now(CLOCK_MONOTONIC);
		r = kbus_acquire(&fd);
		if (r < 0)
			return r;
		acq[i] = now(CLOCK_MONOTONIC) - t0;
		close(fd);
	}
	printf("\nFirst lease with the suspender blocked in the wakeup_count read (us, %u iterations)\n", n);
	printf("  %-58s %8s %8s %8s %8s\n", "", "p50", "p99", "max", "/ping");
	print_latency("Peer.Ping (same iterations)", png, n, percentiles_of(png, n).p50);
	print_latency("AcquireWakeLock + close, to the reply", acq, n, percentiles_of(png, n).p50);

	/* Idle, the suspender still in the read: with a lease held, and with none. */
	r = kbus_acquire(&fd);
	if (r < 0)
		return r;
	usleep(300 * 1000);
	sw0 = proc_ctxt_switches(K.h.daemon_pid);
	sleep(idle_seconds);
	sw1 = proc_ctxt_switches(K.h.daemon_pid);
	close(fd);
	usleep(300 * 1000);
	sw2 = proc_ctxt_switches(K.h.daemon_pid);
	sleep(idle_seconds);
	sw2 = proc_ctxt_switches(K.h.daemon_pid) - sw2;
	if (sw0 < 0 || sw1 < 0 || sw2 < 0)
		return -EIO;
	printf("\nIdle with the suspender blocked in wakeup_count: %ld context switches of the daemon's threads in "
	       "%u s with a lock held, %ld in %u s with none\n", sw1 - sw0, idle_seconds, sw2, idle_seconds);
	return 0;
}

int bench_inflight(unsigned iterations, unsigned idle_seconds, const char *bus_extra)
{
	int r;

	r = kernel_start(bus_extra);
	if (r >= 0)
		r = entry_latencies(MAX(3u, MIN(iterations, 30u)));
	if (r >= 0)
		r = acquire_in_state_write(MAX(3u, MIN(iterations, 200u)));
	if (r >= 0)
		r = acquire_in_wakeup_count(iterations, idle_seconds);
	if (r < 0) {
		fprintf(stderr, "bench: suspend path: %s\n", strerror(-r));
		harness_show_log(&K.h, "inflight.log");
	}
	kernel_stop();
	return r;
}
