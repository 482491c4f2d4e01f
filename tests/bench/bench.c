/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmarks of the wake lock hot path against the real daemon on a private
 * dbus-daemon, a fixture sysfs on tmpfs and a stand-in for systemd's fd
 * store (so every lock is stored for restarts, as under the shipped unit).
 * Every comparison is a ratio to Peer.Ping measured in the same run with
 * interleaved iterations, because a shared host is noisy: absolute numbers
 * move with the load, ratios much less.
 *
 * It prints numbers and fails only when a benchmark breaks (a call fails,
 * the daemon dies), never on the numbers themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "bus-harness.h"
#include "fake-systemd.h"
#include "fixture.h"
#include "inflight.h"
#include "macro.h"
#include "percentile.h"
#include "proc-stats.h"
#include "time-util.h"

/*
 * Connections enough for the clients (the system bus default is 256), and
 * root may become a monitor (dbus-monitor) as on a stock system bus.
 */
#define BENCH_BUS_EXTRA "<limit name=\"max_connections_per_user\">4096</limit>" \
			"<limit name=\"max_completed_connections\">4096</limit>" \
			"<policy user=\"root\"><allow send_destination=\"org.freedesktop.DBus\" " \
			"send_interface=\"org.freedesktop.DBus.Monitoring\"/>" \
			"<allow own=\"org.autosleep1.BenchFloor\"/>" \
			"<allow send_destination=\"org.autosleep1.BenchFloor\"/></policy>"

#define MAX_HOLD 10000
#define CLIENTS_MAX 64

static struct {
	bool smoke;
	unsigned iterations;   /* interleaved ping / lock pairs per measurement */
	unsigned idle_seconds; /* window for counting wakeups */
	unsigned trace_ops;    /* operations under strace and dbus-monitor */
	unsigned holds[3];     /* other locks held for the scaling rows */
	unsigned clients;      /* concurrent clients */
	const char *only;      /* one section */
	bool no_store;         /* no $NOTIFY_SOCKET: locks are not stored for restarts */
} arg = {
	.iterations = 5000,
	.idle_seconds = 60,
	.trace_ops = 1000,
	.holds = { 1, 1000, 10000 },
	.clients = CLIENTS_MAX,
};

static struct harness h;
static struct fake_systemd sd;
static sd_bus *client;  /* the measuring connection */
static sd_bus *holder;  /* holds the other locks */
static int held_fds[MAX_HOLD];
static unsigned n_held;
static bool released_seen;
static bool broken;

static void fail(const char *what, int r)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(r < 0 ? -r : r));
	broken = true;
}

/*
 * Who answers: autosleepd, or the floor, a service in this program that does
 * only what any fd-based lock over D-Bus must (a pipe, its fd in the reply,
 * a watch for the hang-up, a signal then) with the same messages, so the
 * ratio of the two shows what is ours and what is the bus's.
 */
struct service {
	const char *name;
	const char *dest;
	const char *path;
};

static const struct service daemon_service = { "autosleepd", HARNESS_NAME, HARNESS_PATH };
static const struct service floor_service = { "floor", "org.autosleep1.BenchFloor", "/" };

static int ping_service(sd_bus *b, const struct service *svc)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	r = sd_bus_call_method(b, svc->dest, svc->path, "org.freedesktop.DBus.Peer", "Ping", &e, NULL, "");
	sd_bus_error_free(&e);
	return r;
}

static int ping(sd_bus *b)
{
	return ping_service(b, &daemon_service);
}

/* Take a lock and return our own copy of its fd (what a client that keeps it does). */
static int acquire(sd_bus *b, const char *name, int *ret_fd)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = harness_acquire(b, name, "bench", 0, ret_fd, &e);

	if (r < 0)
		fprintf(stderr, "bench: AcquireWakeLock(%s): %s\n", name, e.message ? e.message : strerror(-r));
	sd_bus_error_free(&e);
	return r;
}

/* Take a lock and drop it at once: the reply holds the only copy of the fd, freeing it closes that. */
static int acquire_and_close(sd_bus *b, const struct service *svc)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_call_method(b, svc->dest, svc->path, HARNESS_IFACE, "AcquireWakeLock", &e, &reply, "sst", "bench",
			       "bench", (uint64_t)0);
	if (r < 0)
		fprintf(stderr, "bench: AcquireWakeLock: %s\n", e.message ? e.message : strerror(-r));
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	return r;
}

static int on_released(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	bool *seen = userdata;

	(void)m;
	(void)ret_error;
	*seen = true;
	return 0;
}

/* Our own WakeLockReleased signals only: the bus filters on the owner argument. */
static int match_own_released(sd_bus *b, const struct service *svc, bool *seen)
{
	const char *unique;
	char rule[320];
	int r;

	r = sd_bus_get_unique_name(b, &unique);
	if (r < 0)
		return r;
	snprintf(rule, sizeof(rule),
		 "type='signal',sender='%s',path='%s',interface='" HARNESS_IFACE "',member='WakeLockReleased',arg1='%s'",
		 svc->dest, svc->path, unique);
	return sd_bus_add_match(b, NULL, rule, on_released, seen);
}

static int wait_released(sd_bus *b, bool *seen)
{
	int r;

	while (!*seen) {
		r = sd_bus_process(b, NULL);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		r = sd_bus_wait(b, 5 * USEC_PER_SEC);
		if (r < 0)
			return r;
		if (r == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/*
 * One lock taken and dropped: t_reply is the call until its reply (the fd
 * is closed right after, which costs the client nothing), t_signal until
 * our WakeLockReleased arrived.
 */
static int lock_cycle(sd_bus *b, const struct service *svc, bool *seen, usec_t *t_reply, usec_t *t_signal)
{
	usec_t t0, t1;
	int r;

	*seen = false;
	t0 = now(CLOCK_MONOTONIC);
	r = acquire_and_close(b, svc);
	if (r < 0)
		return r;
	t1 = now(CLOCK_MONOTONIC);
	r = wait_released(b, seen);
	if (r < 0)
		return r;
	*t_reply = t1 - t0;
	*t_signal = now(CLOCK_MONOTONIC) - t0;
	return 0;
}

struct round {
	usec_t *ping, *reply, *signal, *close_to_signal;
	unsigned n;
};

static void round_free(struct round *rd)
{
	free(rd->ping);
	free(rd->reply);
	free(rd->signal);
	free(rd->close_to_signal);
}

/* n interleaved iterations of a ping and a lock, the order alternating so neither always goes first. */
static int round_run(unsigned n, const struct service *svc, struct round *rd)
{
	usec_t t0;
	int r;

	*rd = (struct round){ .n = n };
	rd->ping = calloc(n, sizeof(usec_t));
	rd->reply = calloc(n, sizeof(usec_t));
	rd->signal = calloc(n, sizeof(usec_t));
	rd->close_to_signal = calloc(n, sizeof(usec_t));
	if (!rd->ping || !rd->reply || !rd->signal || !rd->close_to_signal)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			if ((k == 0) == (i % 2 == 0)) {
				t0 = now(CLOCK_MONOTONIC);
				r = ping_service(client, svc);
				if (r < 0)
					return r;
				rd->ping[i] = now(CLOCK_MONOTONIC) - t0;
			} else {
				r = lock_cycle(client, svc, &released_seen, &rd->reply[i], &rd->signal[i]);
				if (r < 0)
					return r;
				rd->close_to_signal[i] = rd->signal[i] - rd->reply[i];
			}
		}
	}
	return 0;
}

static void print_header(const char *title, unsigned n)
{
	printf("\n%s (%u interleaved iterations, medians and 99th percentiles in us)\n", title, n);
	printf("  %-56s %9s %9s %9s %9s\n", "", "p50", "p99", "p50/ping", "p99/ping");
}

static void print_row(const char *what, struct percentiles s, struct percentiles ping)
{
	printf("  %-56s %9" PRIu64 " %9" PRIu64 " %9.2f %9.2f\n", what, (uint64_t)s.p50, (uint64_t)s.p99,
	       ping.p50 ? (double)s.p50 / (double)ping.p50 : 0, ping.p99 ? (double)s.p99 / (double)ping.p99 : 0);
}

static void print_round(const char *who, const struct round *rd)
{
	struct percentiles p = percentiles_of(rd->ping, rd->n);
	char what[96];

	snprintf(what, sizeof(what), "%s: Peer.Ping", who);
	print_row(what, p, p);
	snprintf(what, sizeof(what), "%s: AcquireWakeLock + close, to the reply", who);
	print_row(what, percentiles_of(rd->reply, rd->n), p);
	snprintf(what, sizeof(what), "%s: ... to WakeLockReleased", who);
	print_row(what, percentiles_of(rd->signal, rd->n), p);
	snprintf(what, sizeof(what), "%s:   of which close -> WakeLockReleased", who);
	print_row(what, percentiles_of(rd->close_to_signal, rd->n), p);
}

/* autosleepd and the floor in blocks of 100 iterations taken in turn, so both see the same load. */
static int bench_hot_path(const char *title)
{
	struct round d = {}, f = {}, part;
	int r = 0;

	d.ping = calloc(arg.iterations, sizeof(usec_t));
	d.reply = calloc(arg.iterations, sizeof(usec_t));
	d.signal = calloc(arg.iterations, sizeof(usec_t));
	d.close_to_signal = calloc(arg.iterations, sizeof(usec_t));
	f.ping = calloc(arg.iterations, sizeof(usec_t));
	f.reply = calloc(arg.iterations, sizeof(usec_t));
	f.signal = calloc(arg.iterations, sizeof(usec_t));
	f.close_to_signal = calloc(arg.iterations, sizeof(usec_t));
	if (!d.ping || !d.reply || !d.signal || !d.close_to_signal || !f.ping || !f.reply || !f.signal ||
	    !f.close_to_signal)
		r = -ENOMEM;
	for (unsigned done = 0; r >= 0 && done < arg.iterations;) {
		unsigned n = MIN(100u, arg.iterations - done);

		for (int k = 0; k < 2 && r >= 0; k++) {
			struct round *to = k == 0 ? &d : &f;

			r = round_run(n, k == 0 ? &daemon_service : &floor_service, &part);
			if (r >= 0) {
				memcpy(to->ping + done, part.ping, n * sizeof(usec_t));
				memcpy(to->reply + done, part.reply, n * sizeof(usec_t));
				memcpy(to->signal + done, part.signal, n * sizeof(usec_t));
				memcpy(to->close_to_signal + done, part.close_to_signal, n * sizeof(usec_t));
			}
			round_free(&part);
		}
		done += n;
		d.n = f.n = done;
	}
	if (r < 0) {
		fail(title, r);
	} else {
		print_header(title, d.n);
		print_round("autosleepd", &d);
		print_round("floor", &f);
	}
	round_free(&d);
	round_free(&f);
	return r;
}

/* Hold more locks on the holder connection until n are held. */
static int hold_up_to(unsigned n)
{
	char name[32];

	for (; n_held < n; n_held++) {
		/* Distinct names: the statistics table sees as many names as there are locks. */
		snprintf(name, sizeof(name), "hold-%05u", n_held);
		if (acquire(holder, name, &held_fds[n_held]) < 0)
			return -EIO;
	}
	return 0;
}

static void hold_down_to(unsigned n)
{
	while (n_held > n)
		close(held_fds[--n_held]);
	/* Let the daemon take in the hang-ups before the next measurement. */
	(void)ping(holder);
	for (int i = 0; i < 500 && harness_count_locks(holder, NULL) != (int)n; i++)
		usleep(10000);
}

/* --- what the daemon process costs --------------------------------------- */

static long smaps_kib(const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)h.daemon_pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
			v = strtol(line + strlen(key) + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct memory {
	unsigned locks;
	long rss, private_dirty;
};

static struct memory memory_now(unsigned locks)
{
	return (struct memory){ .locks = locks, .rss = smaps_kib("Rss"), .private_dirty = smaps_kib("Private_Dirty") };
}

/* --- syscalls (strace -c) and bus messages (dbus-monitor) per operation ------ */

static pid_t spawn_logged(const char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();

	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		dup2(o, STDOUT_FILENO);
		dup2(e, STDERR_FILENO);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static bool file_contains(const char *path, const char *needle)
{
	char *s = fixture_read("/", path);
	bool found = s && strstr(s, needle);

	free(s);
	return found;
}

/* Total calls from strace -c's summary: the line ending in "total". */
static long strace_total(const char *path)
{
	char line[256];
	long calls = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *t = strstr(line, " total");
		double pct, secs;
		long usecs, c;

		if (!t)
			continue;
		/* "100.00    0.012345           3      4000       12 total" (errors may be blank) */
		if (sscanf(line, "%lf %lf %ld %ld", &pct, &secs, &usecs, &c) == 4)
			calls = c;
		else if (sscanf(line, "%lf %lf %ld", &pct, &secs, &c) == 3)
			calls = c;
	}
	fclose(f);
	return calls;
}

/* Print the syscalls that make up the summary, per operation. */
static void strace_show(const char *path, unsigned ops)
{
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		double pct, secs;
		long usecs, calls, errors;
		char name[64];

		if (sscanf(line, "%lf %lf %ld %ld %ld %63s", &pct, &secs, &usecs, &calls, &errors, name) == 6 ||
		    (errors = 0, sscanf(line, "%lf %lf %ld %ld %63s", &pct, &secs, &usecs, &calls, name) == 5))
			if (strcmp(name, "total") != 0 && calls * 100 >= (long)ops * 5)
				printf("      %-20s %6.2f per operation\n", name, (double)calls / ops);
	}
	fclose(f);
}

typedef int (*op_fn)(void);

static int op_ping(void)
{
	return ping(client);
}

static int op_lock(void)
{
	usec_t a, s;

	return lock_cycle(client, &daemon_service, &released_seen, &a, &s);
}

static int run_ops(op_fn op, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int r = op();

		if (r < 0)
			return r;
	}
	return 0;
}

static int trace_syscalls(const char *what, op_fn op)
{
	char pid[16], out[512], err[512];
	pid_t tracer;
	long total;
	int r, status;

	if (access("/usr/bin/strace", X_OK) < 0) {
		printf("  %-46s (no /usr/bin/strace)\n", what);
		return 0;
	}
	snprintf(pid, sizeof(pid), "%d", (int)h.daemon_pid);
	snprintf(out, sizeof(out), "%s/strace.out", h.dir);
	snprintf(err, sizeof(err), "%s/strace.err", h.dir);
	/* Not an earlier run's "attached". */
	(void)unlink(err);
	tracer = spawn_logged((const char *const[]){ "/usr/bin/strace", "-c", "-f", "-o", out, "-p", pid, NULL },
			      "/dev/null", err);
	if (tracer < 0)
		return -errno;
	for (int i = 0; i < 500 && !file_contains(err, "attached"); i++)
		usleep(10000);
	/* Attached to the main thread; give it the suspender thread too. */
	usleep(200000);
	r = run_ops(op, arg.trace_ops);
	/* Whatever the last operation set off has run by then. */
	usleep(100000);
	kill(tracer, SIGINT);
	waitpid(tracer, &status, 0);
	if (r < 0)
		return r;
	total = strace_total(out);
	if (total < 0) {
		printf("  %-46s (strace gave no summary)\n", what);
		return 0;
	}
	printf("  %-46s %9.1f syscalls per operation (%u operations, strace -c -f)\n", what,
	       (double)total / arg.trace_ops, arg.trace_ops);
	strace_show(out, arg.trace_ops);
	return 0;
}

/*
 * dbus-monitor --profile lines: type, time, serial, sender, destination, then
 * path, interface, member (calls and signals) or the serial replied to.
 * Counts every message but the monitor's own and the closing ping's pair.
 */
static void monitor_count(const char *path, unsigned ops)
{
	struct {
		char key[160];
		long n;
	} seen[32] = {};
	unsigned n_seen = 0;
	long total = 0;
	char line[1024];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *field[8] = {}, *saveptr = NULL, key[160];
		unsigned i;
		int nf = 0;

		line[strcspn(line, "\n")] = 0;
		for (char *t = strtok_r(line, "\t", &saveptr); t && nf < 8; t = strtok_r(NULL, "\t", &saveptr))
			field[nf++] = t;
		if (nf < 5 || line[0] == '#')
			continue;
		if (nf >= 8 && (strcmp(field[7], "NameAcquired") == 0 || strcmp(field[7], "NameLost") == 0))
			continue;
		snprintf(key, sizeof(key), "%s %s", field[0], nf >= 8 ? field[7] : "");
		total++;
		for (i = 0; i < n_seen; i++)
			if (strcmp(seen[i].key, key) == 0)
				break;
		if (i == n_seen && n_seen < (unsigned)ELEMENTSOF(seen))
			snprintf(seen[n_seen++].key, sizeof(seen[0].key), "%s", key);
		if (i < n_seen)
			seen[i].n++;
	}
	fclose(f);
	/* The closing ping and its reply. */
	total -= 2;
	for (unsigned i = 0; i < n_seen; i++)
		if (strcmp(seen[i].key, "mc Ping") == 0 || strcmp(seen[i].key, "mr ") == 0)
			seen[i].n--;
	printf("%9.2f bus messages per operation\n", (double)total / ops);
	for (unsigned i = 0; i < n_seen; i++)
		if (seen[i].n > 0)
			printf("      %-28s %6.2f per operation\n", seen[i].key, (double)seen[i].n / ops);
}

static int trace_messages(const char *what, op_fn op)
{
	char out[512], err[512];
	pid_t mon;
	int r, status;

	if (access("/usr/bin/dbus-monitor", X_OK) < 0) {
		printf("  %-46s (no /usr/bin/dbus-monitor)\n", what);
		return 0;
	}
	snprintf(out, sizeof(out), "%s/monitor.out", h.dir);
	snprintf(err, sizeof(err), "%s/monitor.err", h.dir);
	(void)unlink(out);
	mon = spawn_logged((const char *const[]){ "/usr/bin/dbus-monitor", "--address", h.address, "--profile", NULL },
			   out, err);
	if (mon < 0)
		return -errno;
	/* A monitor loses its unique name: from then on it sees every message. */
	for (int i = 0; i < 500 && !file_contains(out, "NameLost"); i++)
		usleep(10000);
	r = run_ops(op, arg.trace_ops);
	/* Everything the operations sent precedes the reply to this. */
	(void)ping(client);
	usleep(100000);
	kill(mon, SIGTERM);
	waitpid(mon, &status, 0);
	if (r < 0)
		return r;
	printf("  %-46s ", what);
	monitor_count(out, arg.trace_ops);
	return 0;
}

/* --- concurrency ------------------------------------------------------------- */

struct shared {
	usec_t reply[CLIENTS_MAX * 1000];
	usec_t signal[CLIENTS_MAX * 1000];
	int errors;
};

static int bench_clients(unsigned clients, unsigned per_client, struct percentiles *ret_reply, struct percentiles *ret_signal,
			 double *ret_rate)
{
	struct shared *sh;
	int go[2], ready[2];
	pid_t pids[CLIENTS_MAX];
	usec_t t0;
	char c;
	int r = 0;

	per_client = MIN(per_client, 1000u);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	for (unsigned k = 0; k < clients; k++) {
		pids[k] = fork();
		if (pids[k] == 0) {
			sd_bus *b = NULL;
			bool seen = false;
			int ok;

			close(go[1]);
			close(ready[0]);
			ok = harness_open_client(&h, &b) >= 0 && match_own_released(b, &daemon_service, &seen) >= 0 && ping(b) >= 0;

			(void)!write(ready[1], ok ? "r" : "e", 1);
			/* The parent closes its end for "go". */
			if (read(go[0], &c, 1) < 0 || !ok)
				_exit(1);
			for (unsigned i = 0; i < per_client; i++)
				if (lock_cycle(b, &daemon_service, &seen, &sh->reply[k * per_client + i], &sh->signal[k * per_client + i]) < 0) {
					__atomic_add_fetch(&sh->errors, 1, __ATOMIC_SEQ_CST);
					_exit(1);
				}
			sd_bus_flush_close_unref(b);
			_exit(0);
		}
	}
	close(ready[1]);
	for (unsigned k = 0; k < clients; k++)
		if (read(ready[0], &c, 1) != 1 || c != 'r')
			r = -ECONNREFUSED;
	t0 = now(CLOCK_MONOTONIC);
	close(go[1]);
	for (unsigned k = 0; k < clients; k++) {
		int status;

		waitpid(pids[k], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			r = -EIO;
	}
	*ret_rate = (double)(clients * per_client) / ((double)(now(CLOCK_MONOTONIC) - t0) / USEC_PER_SEC);
	close(go[0]);
	close(ready[0]);
	if (r >= 0) {
		*ret_reply = percentiles_of(sh->reply, clients * per_client);
		*ret_signal = percentiles_of(sh->signal, clients * per_client);
	}
	munmap(sh, sizeof(*sh));
	return r;
}

/* --- ListWakeLocks with many locks, and what it costs another client ------------ */

static int bench_list(unsigned calls)
{
	usec_t *list = calloc(calls, sizeof(usec_t)), *pings;
	unsigned n_pings = 0, max_pings = 200000;
	int stop[2];
	pid_t pinger;
	struct {
		unsigned n;
		usec_t v[200000];
	} *shm;
	int r = 0;

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!list || shm == MAP_FAILED || pipe2(stop, O_CLOEXEC) < 0) {
		free(list);
		return -ENOMEM;
	}
	shm->n = 0;
	pinger = fork();
	if (pinger == 0) {
		sd_bus *b = NULL;

		close(stop[1]);
		if (harness_open_client(&h, &b) < 0)
			_exit(1);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		/* Ping back to back until told to stop: the longest gap is the stall. */
		for (char c; read(stop[0], &c, 1) < 0 && shm->n < max_pings;) {
			usec_t t0 = now(CLOCK_MONOTONIC);

			if (ping(b) < 0)
				_exit(1);
			shm->v[shm->n++] = now(CLOCK_MONOTONIC) - t0;
		}
		_exit(0);
	}
	close(stop[0]);
	usleep(200000);
	for (unsigned i = 0; i < calls; i++) {
		usec_t t0 = now(CLOCK_MONOTONIC);
		int n = harness_count_locks(client, NULL);

		list[i] = now(CLOCK_MONOTONIC) - t0;
		if (n < (int)n_held) {
			r = -EIO;
			break;
		}
		usleep(100000);
	}
	close(stop[1]);
	waitpid(pinger, NULL, 0);
	n_pings = shm->n;
	pings = shm->v;
	if (r >= 0) {
		struct percentiles l = percentiles_of(list, calls), p = percentiles_of(pings, n_pings);

		printf("  ListWakeLocks with %u locks: p50 %" PRIu64 " us, max %" PRIu64 " us (%u calls)\n", n_held,
		       (uint64_t)l.p50, (uint64_t)l.max, calls);
		printf("  another client's Peer.Ping meanwhile: p50 %" PRIu64 " us, p99 %" PRIu64 " us, max %" PRIu64
		       " us (%u pings): the longest stall\n",
		       (uint64_t)p.p50, (uint64_t)p.p99, (uint64_t)p.max, n_pings);
	}
	free(list);
	munmap(shm, sizeof(*shm));
	return r;
}

/* --- the floor: the least an fd-based lock over D-Bus costs -------------------- */

struct floor_lock {
	sd_bus *bus;
	sd_event_source *io;
	char *owner;
};

static int floor_on_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct floor_lock *l = userdata;

	(void)fd;
	(void)revents;
	(void)sd_bus_emit_signal(l->bus, "/", HARNESS_IFACE, "WakeLockReleased", "sss", "bench", l->owner, "closed");
	sd_event_source_disable_unref(s);
	free(l->owner);
	free(l);
	return 0;
}

static int floor_acquire(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	sd_bus *bus = sd_bus_message_get_bus(m);
	struct floor_lock *l;
	int p[2], r;

	(void)userdata;
	(void)error;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->bus = bus;
	l->owner = strdup(sd_bus_message_get_sender(m));
	r = sd_event_add_io(sd_bus_get_event(bus), &l->io, p[0], EPOLLIN, floor_on_hangup, l);
	if (r >= 0)
		r = sd_event_source_set_io_fd_own(l->io, true);
	if (r >= 0)
		r = sd_bus_reply_method_return(m, "h", p[1]);
	close(p[1]);
	if (r >= 0)
		(void)sd_bus_emit_signal(bus, "/", HARNESS_IFACE, "WakeLockAcquired", "sssu", "bench", "bench", l->owner,
					 0u);
	return r;
}

static const sd_bus_vtable floor_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("AcquireWakeLock", "sst", "h", floor_acquire, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL("WakeLockAcquired", "sssu", 0),
	SD_BUS_SIGNAL("WakeLockReleased", "sss", 0),
	SD_BUS_VTABLE_END
};

static pid_t floor_pid;

static int floor_start(void)
{
	int ready[2];
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	floor_pid = fork();
	if (floor_pid < 0)
		return -errno;
	if (floor_pid == 0) {
		sd_event *e = NULL;
		sd_bus *b = NULL;

		close(ready[0]);
		if (sd_event_new(&e) < 0 || harness_open_client(&h, &b) < 0 ||
		    sd_bus_add_object_vtable(b, NULL, "/", HARNESS_IFACE, floor_vtable, NULL) < 0 ||
		    sd_bus_request_name(b, floor_service.dest, 0) < 0 || sd_bus_attach_event(b, e, 0) < 0)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		close(ready[1]);
		(void)sd_event_loop(e);
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return -ECONNREFUSED;
	}
	close(ready[0]);
	return 0;
}

/* --- main ------------------------------------------------------------------ */

static int parse_argv(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "smoke", no_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "idle-seconds", required_argument, NULL, 'i' },
		{ "trace-ops", required_argument, NULL, 't' },
		{ "holds", required_argument, NULL, 'H' },
		{ "only", required_argument, NULL, 'o' },
		{ "no-store", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case 's':
			arg.smoke = true;
			arg.iterations = 20;
			arg.idle_seconds = 1;
			arg.trace_ops = 20;
			arg.holds[1] = 50;
			arg.holds[2] = 200;
			arg.clients = 4;
			break;
		case 'n':
			arg.iterations = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'i':
			arg.idle_seconds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			arg.trace_ops = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'H':
			if (sscanf(optarg, "%u,%u,%u", &arg.holds[0], &arg.holds[1], &arg.holds[2]) != 3 ||
			    arg.holds[2] > MAX_HOLD || arg.holds[0] == 0)
				return -EINVAL;
			break;
		case 'o':
			arg.only = optarg;
			break;
		case 'N':
			arg.no_store = true;
			break;
		case 'h':
			printf("Usage: bench [--smoke] [--iterations N] [--idle-seconds S] [--trace-ops N] [--holds A,B,C]\n"
			       "             [--only hot|trace|idle|clients|scaling|inflight] [--no-store]\n"
			       "Run through tests/bench/run.sh or make bench, which set the environment.\n");
			return 0;
		default:
			return -EINVAL;
		}
	if (arg.iterations == 0 || arg.trace_ops == 0)
		return -EINVAL;
	return 1;
}

static int section_hot_path(void)
{
	int r;

	r = bench_hot_path("Acquire + release, no other lock held (each lock takes and drops the kernel lock)");
	if (r >= 0 && (r = hold_up_to(1)) >= 0)
		r = bench_hot_path("Acquire + release, 1 other lock held");
	return r;
}

/* Per operation, what the daemon does (strace) and what crosses the bus (dbus-monitor). */
static int section_trace(void)
{
	int r;

	printf("\nDaemon syscalls and bus messages per operation (1 other lock held)\n");
	if ((r = hold_up_to(1)) < 0 || (r = trace_syscalls("Peer.Ping", op_ping)) < 0 ||
	    (r = trace_syscalls("AcquireWakeLock + close", op_lock)) < 0 || (r = trace_messages("Peer.Ping", op_ping)) < 0 ||
	    (r = trace_messages("AcquireWakeLock + close", op_lock)) < 0)
		return fail("tracing", r), r;
	hold_down_to(0);
	printf("\nDaemon syscalls and bus messages per operation (no other lock held)\n");
	if ((r = trace_syscalls("AcquireWakeLock + close", op_lock)) < 0 ||
	    (r = trace_messages("AcquireWakeLock + close", op_lock)) < 0)
		return fail("tracing", r), r;
	return 0;
}

/* Nothing may wake the daemon while a lock is held. */
static int section_idle(void)
{
	long sw0, sw1;
	int r;

	if ((r = hold_up_to(1)) < 0)
		return fail("hold", r), r;
	/* Past the NWakeLocks announcement and whatever else the last operations set off. */
	usleep(300000);
	sw0 = proc_ctxt_switches(h.daemon_pid);
	sleep(arg.idle_seconds);
	sw1 = proc_ctxt_switches(h.daemon_pid);
	if (sw0 < 0 || sw1 < 0)
		return fail("reading /proc/PID/task/*/status", EIO), -EIO;
	printf("\nIdle with a lock held: %ld context switches of the daemon's threads in %u s\n", sw1 - sw0,
	       arg.idle_seconds);
	return 0;
}

/* The same cycle from 1 and from many clients at once. */
static int section_clients(void)
{
	int r;

	if ((r = hold_up_to(1)) < 0)
		return fail("hold", r), r;
	printf("\nConcurrent clients, 1 other lock held (acquire + close; p50/p99 over every client's cycles, us)\n");
	printf("  %-12s %10s %10s %12s %12s %12s\n", "clients", "reply p50", "reply p99", "signal p50", "signal p99",
	       "cycles/s");
	for (unsigned k = 0; k < 2; k++) {
		unsigned c = k == 0 ? 1 : arg.clients;
		unsigned per = arg.smoke ? 10 : MIN(1000u, MAX(20u, 4000u / c));
		struct percentiles a = {}, s = {};
		double rate = 0;

		r = bench_clients(c, per, &a, &s, &rate);
		if (r < 0)
			return fail("concurrent clients", r), r;
		printf("  %-12u %10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12.0f   (%u cycles each)\n", c,
		       (uint64_t)a.p50, (uint64_t)a.p99, (uint64_t)s.p50, (uint64_t)s.p99, rate, per);
	}
	return 0;
}

/* The same cycle with ever more other locks held, and what the daemon's memory does meanwhile. */
static int section_scaling(void)
{
	struct memory mem[ELEMENTSOF(arg.holds) + 1];
	double first = 0, first_norm = 0;
	unsigned n_mem = 0;
	int r;

	hold_down_to(0);
	mem[n_mem++] = memory_now(0);
	printf("\nScaling: acquire + close with other locks held (distinct names), %u interleaved iterations each\n",
	       arg.iterations);
	printf("  %-12s %10s %10s %10s %12s %10s %14s\n", "other locks", "ping p50", "reply p50", "reply/ping",
	       "signal p50", "sig/ping", "reply p50 / first row");
	for (unsigned k = 0; k < ELEMENTSOF(arg.holds); k++) {
		struct round rd;
		struct percentiles p, a, s;

		r = hold_up_to(arg.holds[k]);
		if (r < 0)
			return fail("holding locks", r), r;
		mem[n_mem++] = memory_now(n_held);
		r = round_run(arg.iterations, &daemon_service, &rd);
		if (r < 0) {
			round_free(&rd);
			return fail("scaling", r), r;
		}
		p = percentiles_of(rd.ping, rd.n);
		a = percentiles_of(rd.reply, rd.n);
		s = percentiles_of(rd.signal, rd.n);
		round_free(&rd);
		if (k == 0) {
			first = (double)a.p50;
			first_norm = (double)a.p50 / (double)p.p50;
		}
		printf("  %-12u %10" PRIu64 " %10" PRIu64 " %10.2f %12" PRIu64 " %10.2f %6.2f (%.2f as ratios to ping)\n",
		       n_held, (uint64_t)p.p50, (uint64_t)a.p50, (double)a.p50 / (double)p.p50, (uint64_t)s.p50,
		       (double)s.p50 / (double)p.p50, (double)a.p50 / first, ((double)a.p50 / (double)p.p50) / first_norm);
	}
	r = bench_list(arg.smoke ? 2 : 10);
	if (r < 0)
		return fail("ListWakeLocks", r), r;

	printf("\nDaemon memory (smaps_rollup, KiB), locks held by one client with distinct names\n");
	printf("  %-12s %10s %16s %24s\n", "locks", "Rss", "Private_Dirty", "Private_Dirty per lock");
	for (unsigned i = 0; i < n_mem; i++) {
		printf("  %-12u %10ld %16ld", mem[i].locks, mem[i].rss, mem[i].private_dirty);
		/* A handful of locks fit in memory the allocator already has: no meaningful ratio. */
		if (mem[i].locks >= 50)
			printf(" %20.0f B", (double)(mem[i].private_dirty - mem[0].private_dirty) * 1024 / mem[i].locks);
		printf("\n");
	}
	hold_down_to(0);
	return 0;
}

/* The suspend path, with a real daemon on a bus of its own and this program as the kernel. */
static int section_inflight(void)
{
	int r = bench_inflight(arg.smoke ? 5 : MIN(arg.iterations, 1000u), arg.idle_seconds, BENCH_BUS_EXTRA);

	if (r < 0)
		fail("the suspend path", r);
	return r;
}

static const struct {
	const char *name;
	int (*fn)(void);
} sections[] = {
	{ "hot", section_hot_path },
	{ "trace", section_trace },
	{ "idle", section_idle },
	{ "clients", section_clients },
	{ "scaling", section_scaling },
	{ "inflight", section_inflight },
};

static int run(void)
{
	char *const env[] = { sd.notify_env, sd.runtime_env, NULL };
	char config[256];
	struct rlimit rl;
	int r;

	/* We hold every lock's fd. */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max < MAX_HOLD + 1024)
		return fail("RLIMIT_NOFILE is too low", EMFILE), -EMFILE;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return fail("setrlimit", errno), -errno;
	r = harness_bus_start(&h, "sysfs-basic", BENCH_BUS_EXTRA);
	if (r < 0)
		return fail("dbus-daemon", r), r;
	r = fake_systemd_start(&sd, h.dir);
	if (r < 0)
		return fail("notify socket", r), r;
	/* The store's copies would double our fds; the daemon cannot tell the difference. */
	sd.discard_fds = true;
	snprintf(config, sizeof(config), "[WakeLocks]\nMaxPerUser=%u\nStartupHoldSec=0\n", arg.holds[2] + 64);
	r = harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = config, .env = arg.no_store ? NULL : env, .log_level = "info", .nofile = MAX_HOLD + 1024 });
	if (r < 0)
		return fail("autosleepd", r), r;
	r = floor_start();
	if (r < 0)
		return fail("the floor service", r), r;
	r = harness_open_client(&h, &client);
	if (r >= 0)
		r = harness_open_client(&h, &holder);
	if (r >= 0)
		r = match_own_released(client, &daemon_service, &released_seen);
	if (r >= 0)
		r = match_own_released(client, &floor_service, &released_seen);
	if (r < 0)
		return fail("client connection", r), r;

	printf("autosleep benchmarks: private dbus-daemon, autosleepd --dry-run on a fixture sysfs in %s,\n"
	       "%s; %s mode\n", h.dir,
	       arg.no_store ? "no fd store (locks do not survive a restart)" : "fd store and runtime directory stood in for",
	       arg.smoke ? "smoke" : "full");

	/* Warm up: first calls fault in code and fill caches on both sides. */
	r = run_ops(op_lock, MIN(arg.iterations, 200u));
	if (r < 0)
		return fail("warm-up", r), r;

	for (unsigned i = 0; i < ELEMENTSOF(sections); i++) {
		if (arg.only && strcmp(arg.only, sections[i].name) != 0)
			continue;
		r = sections[i].fn();
		if (r < 0)
			return r;
	}
	if (kill(h.daemon_pid, 0) < 0)
		return fail("autosleepd died", ESRCH), -ESRCH;
	return 0;
}

int main(int argc, char *argv[])
{
	int r;

	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? 2 : 0;
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "bench needs root, /usr/bin/dbus-daemon and $AUTOSLEEPD (run tests/bench/run.sh)\n");
		return 77;
	}
	r = run();
	if (client)
		sd_bus_flush_close_unref(client);
	if (holder)
		sd_bus_flush_close_unref(holder);
	while (n_held > 0)
		close(held_fds[--n_held]);
	if (r < 0 || broken)
		harness_show_log(&h, "daemon.log");
	if (floor_pid > 0) {
		kill(floor_pid, SIGTERM);
		waitpid(floor_pid, NULL, 0);
	}
	fake_systemd_stop(&sd);
	harness_stop(&h);
	return r < 0 || broken ? 1 : 0;
}
