/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An AcquireWakeLock that arrives while the daemon is inside its state
 * write, end to end. The fixture's /sys/power/state is a FIFO, so the test
 * decides when the "suspend" ends.
 *
 * With a kernel lock the kernel honours (wake_lock, or the epoll wakeup
 * source with CAP_BLOCK_SUSPEND), the kernel aborts that suspend, so the
 * daemon answers at once, with the kernel lock already taken: the loop is
 * not stalled for as long as the kernel takes to back out. Without
 * CAP_BLOCK_SUSPEND the kernel ignores EPOLLWAKEUP, and the gate is the only
 * guarantee: no answer until the write returned. Either way no state write
 * may start after the answer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "fixture.h"
#include "macro.h"
#include "time-util.h"
#include "wake-epoll.h"

#define DROPPED "dropped EPOLLWAKEUP"

static struct harness h;
/* Killed in teardown too: a failed assertion must not leave it holding a lock (and our stdout). */
static pid_t acquirer;
static char state_path[512];

static int count_in_log(const char *needle)
{
	return harness_count_in_log(&h, "barrier.log", needle);
}

static void need_root(void)
{
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "test-bus-barrier needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
}

static int setup_nowakelock(void **state)
{
	need_root();
	assert_int_equal(harness_bus_start(&h, "sysfs-nowakelock", NULL), 0);
	*state = NULL;
	return 0;
}

static int setup_wakelock(void **state)
{
	need_root();
	assert_int_equal(harness_bus_start(&h, "sysfs-basic", NULL), 0);
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (acquirer > 0) {
		kill(acquirer, SIGKILL);
		waitpid(acquirer, NULL, 0);
		acquirer = 0;
	}
	/* A test that failed may leave the daemon inside the write, its loop waiting there: let it out. */
	if (state_path[0]) {
		int fifo = open(state_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

		harness_stop(&h);
		if (fifo >= 0)
			close(fifo);
		state_path[0] = 0;
	} else {
		harness_stop(&h);
	}
	return 0;
}

#define BASE_CONFIG "[WakeLocks]\nStartupHoldSec=0\n[Logind]\nHonorInhibitors=no\n"

static void start_inside_state_write_with(bool no_block_suspend, const char *config);

/* Start the daemon with state a FIFO, answer its start-up read, and wait until it is inside the state write. */
static void start_inside_state_write(bool no_block_suspend)
{
	start_inside_state_write_with(no_block_suspend, BASE_CONFIG);
}

static void start_inside_state_write_with(bool no_block_suspend, const char *config)
{
	pid_t writer;

	snprintf(state_path, sizeof(state_path), "%s/sys/power/state", h.dir);
	assert_int_equal(unlink(state_path), 0);
	assert_int_equal(mkfifo(state_path, 0600), 0);
	/* The daemon reads the offered states once at start: answer that read. */
	writer = fork();
	assert_true(writer >= 0);
	if (writer == 0) {
		int fd = open(state_path, O_WRONLY | O_CLOEXEC);

		_exit(fd >= 0 && write(fd, "freeze mem disk\n", 16) == 16 ? 0 : 1);
	}
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = config, .log = "barrier.log", .real = true, .no_block_suspend = no_block_suspend }) > 0);
	assert_int_equal(waitpid(writer, NULL, 0), writer);
	/* Now it is inside the state write, blocked opening the FIFO: the kernel is "suspending". */
	for (int i = 0; i < 500 && count_in_log("Writing mem to state") == 0; i++)
		usleep(10000);
	assert_int_equal(count_in_log("Writing mem to state"), 1);
}

static int spawn_caller(const char *method);

/* A client that takes a lock, writes the CLOCK_MONOTONIC of the reply (or its error) to the returned fd, and holds on. */
static int spawn_acquirer(void)
{
	return spawn_caller("AcquireWakeLock");
}

/* A reply line: the time of a success, or "E <error name>" (in error, NUL-terminated). */
static usec_t read_reply(int fd, int timeout_ms, char *error, size_t size)
{
	char buf[256];
	int n;

	error[0] = 0;
	if (poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, timeout_ms) != 1)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		fail_msg("the client died without an answer");
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (buf[0] == 'E') {
		snprintf(error, size, "%s", buf + 2);
		return 0;
	}
	return strtoull(buf, NULL, 10);
}

/* The time of a successful reply, or 0 if none came within timeout_ms; an error reply fails the test. */
static usec_t wait_reply(int fd, int timeout_ms)
{
	char error[256];
	usec_t t = read_reply(fd, timeout_ms, error, sizeof(error));

	if (error[0])
		fail_msg("the call failed with %s", error);
	return t;
}

/* The "resume": open the FIFO's other end, so the write goes through, and check what was written. */
static usec_t let_write_through(void)
{
	usec_t t = now(CLOCK_MONOTONIC);
	int fifo = open(state_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char buf[16];
	int n = -1;

	assert_true(fifo >= 0);
	for (int i = 0; i < 500 && n <= 0; i++) {
		n = (int)read(fifo, buf, sizeof(buf));
		if (n <= 0)
			usleep(10000);
	}
	assert_int_equal(n, 3);
	assert_memory_equal(buf, "mem", 3);
	close(fifo);
	return t;
}

static void assert_no_second_write(void)
{
	/* Absence can only be shown by waiting: give a broken gate time to write again. */
	usleep(500 * 1000);
	assert_int_equal(count_in_log("Writing mem to state"), 1);
}

/*
 * Whether this kernel keeps EPOLLWAKEUP for us: without CONFIG_PM_SLEEP (a
 * host that cannot suspend) it drops the flag like it does without the
 * capability, and the epoll kernel lock is no lock at all.
 */
static bool kernel_keeps_epollwakeup(void)
{
	int ep, p[2];
	bool kept;

	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(wake_epoll_add(ep, p[0], NULL), 0);
	kept = wake_epoll_kept(ep, p[0]);
	close(p[0]);
	close(p[1]);
	close(ep);
	return kept;
}

/* Whether CAP_BLOCK_SUSPEND is in the daemon's effective set. */
static bool daemon_can_block_suspend(void)
{
	char path[64], line[256];
	unsigned long long eff = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)h.daemon_pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << CAP_BLOCK_SUSPEND);
}

/* The daemon's eventfds that hold a count: the epoll kernel lock, when held. */
static int daemon_eventfds_set(void)
{
	char path[64], line[256];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)h.daemon_pid);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d))) {
		char p[600];
		unsigned long long v;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		f = fopen(p, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "eventfd-count: %llx", &v) == 1 && v > 0)
				n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void finish(int replies)
{
	kill(acquirer, SIGKILL);
	waitpid(acquirer, NULL, 0);
	acquirer = 0;
	close(replies);
	harness_daemon_stop(&h, SIGTERM);
}

static void test_acquire_waits_without_block_suspend(void **state)
{
	usec_t t_release, t_reply;
	int replies;

	(void)state;
	/* Without the capability: the kernel drops EPOLLWAKEUP on any kernel. */
	start_inside_state_write(true);
	assert_false(daemon_can_block_suspend());
	assert_int_equal(count_in_log(DROPPED), 1);
	replies = spawn_acquirer();
	/* Half a second with the write under way: no reply may come. */
	assert_int_equal(wait_reply(replies, 500), 0);
	t_release = let_write_through();
	t_reply = wait_reply(replies, 5000);
	assert_true(t_reply > 0);
	fprintf(stderr, "# reply %.1f ms after the state write was let through\n",
		(double)(t_reply - t_release) / USEC_PER_MSEC);
	assert_true(t_reply >= t_release);
	assert_no_second_write();
	finish(replies);
}

/* wake_lock is there but refuses the write (a directory here): the gate is all there is. */
static void test_acquire_waits_when_kernel_lock_fails(void **state)
{
	char path[512];
	usec_t t_release, t_reply;
	int replies;

	(void)state;
	snprintf(path, sizeof(path), "%s/sys/power/wake_lock", h.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	start_inside_state_write(false);
	replies = spawn_acquirer();
	assert_int_equal(wait_reply(replies, 500), 0);
	t_release = let_write_through();
	t_reply = wait_reply(replies, 5000);
	assert_true(t_reply >= t_release);
	assert_true(count_in_log("Failed to take the kernel lock") >= 1);
	assert_no_second_write();
	finish(replies);
}

/* Answered during the write, with the kernel lock held first; check_lock says how it shows. */
static void check_left_to_kernel(bool (*check_lock)(void))
{
	usec_t t_asked, t_reply;
	int replies;

	start_inside_state_write(false);
	assert_true(daemon_can_block_suspend());
	assert_int_equal(count_in_log(DROPPED), 0);
	/*
	 * A plain file keeps what the start-up holds wrote (logind had sessions
	 * to describe, or none answered): only a write from now on counts.
	 */
	fixture_write(h.dir, "sys/power/wake_lock", "");
	assert_false(check_lock());
	t_asked = now(CLOCK_MONOTONIC);
	replies = spawn_acquirer();
	t_reply = wait_reply(replies, 5000);
	/* The write is still blocked: nobody opened the FIFO's other end. */
	assert_true(t_reply > 0);
	fprintf(stderr, "# reply %.1f ms after the acquirer started, the state write still under way\n",
		(double)(t_reply - t_asked) / USEC_PER_MSEC);
	assert_true(check_lock());
	let_write_through();
	assert_no_second_write();
	finish(replies);
}

static bool epoll_lock_held(void)
{
	return daemon_eventfds_set() > 0;
}

static bool wake_lock_written(void)
{
	_cleanup_free_ char *s = fixture_read(h.dir, "sys/power/wake_lock");

	return s && strncmp(s, "autosleepd", strlen("autosleepd")) == 0;
}

static void test_acquire_left_to_kernel_epoll(void **state)
{
	(void)state;
	if (!kernel_keeps_epollwakeup()) {
		fprintf(stderr, "# this kernel drops EPOLLWAKEUP (no CONFIG_PM_SLEEP?): the barrier case covers it\n");
		skip();
	}
	check_left_to_kernel(epoll_lock_held);
}

static void test_acquire_left_to_kernel_wake_lock(void **state)
{
	(void)state;
	check_left_to_kernel(wake_lock_written);
}

/*
 * Another client's call, answered within timeout_ms while the daemon is in
 * its state write: the main loop must not wait for the kernel. Returns how
 * long the answer took, or fails.
 */
static usec_t served_meanwhile(int timeout_ms)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	char *st = NULL;
	usec_t t0;
	int r;

	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_int_equal(sd_bus_set_method_call_timeout(b, (uint64_t)timeout_ms * USEC_PER_MSEC), 0);
	t0 = now(CLOCK_MONOTONIC);
	r = sd_bus_get_property_string(b, "org.autosleep1", "/org/autosleep1", "org.autosleep1.Manager", "State", &e, &st);
	if (r < 0) {
		fprintf(stderr, "# a bystander's Get(State) during the state write: %s (%s)\n", strerror(-r),
			e.message ? e.message : "-");
		fail();
	}
	fprintf(stderr, "# a bystander's Get(State) answered in %.1f ms during the state write: %s\n",
		(double)(now(CLOCK_MONOTONIC) - t0) / USEC_PER_MSEC, st);
	free(st);
	return now(CLOCK_MONOTONIC) - t0;
}

/*
 * A client that calls method, with no arguments, (SoakCycle) an empty a{sv},
 * or (AcquireWakeLock) for a lock "racer" it then holds, and writes the
 * reply's CLOCK_MONOTONIC, or "E <error name>".
 */
static int spawn_caller(const char *method)
{
	int replies[2];

	assert_int_equal(pipe(replies), 0);
	acquirer = fork();
	assert_true(acquirer >= 0);
	if (acquirer == 0) {
		sd_bus_error e = SD_BUS_ERROR_NULL;
		sd_bus *b;
		int fd, r;

		close(replies[0]);
		if (harness_open_client(&h, &b) < 0)
			_exit(1);
		(void)sd_bus_set_method_call_timeout(b, 60 * USEC_PER_SEC);
		if (strcmp(method, "AcquireWakeLock") == 0)
			r = harness_acquire(b, "racer", "barrier", 0, &fd, &e) == 1 ? 0 : -EIO;
		else if (strcmp(method, "SoakCycle") == 0)
			r = sd_bus_call_method(b, "org.autosleep1", "/org/autosleep1", "org.autosleep1.Manager", method, &e,
					       NULL, "a{sv}", 0);
		else
			r = sd_bus_call_method(b, "org.autosleep1", "/org/autosleep1", "org.autosleep1.Manager", method, &e,
					       NULL, "");
		if (r < 0)
			dprintf(replies[1], "E %s\n", e.name ? e.name : "?");
		else
			dprintf(replies[1], "%llu\n", (unsigned long long)now(CLOCK_MONOTONIC));
		pause();
		_exit(0);
	}
	close(replies[1]);
	return replies[0];
}

/*
 * The waiting acquire does not stall the loop: with only the gate to hold
 * the machine, its answer waits for the write, and meanwhile every other
 * client is served. On the old code the loop itself waited at the gate.
 */
static void test_bystander_served_while_acquire_waits(void **state)
{
	usec_t t_release, t_reply;
	int replies;

	(void)state;
	start_inside_state_write(true);
	assert_false(daemon_can_block_suspend());
	replies = spawn_acquirer();
	assert_int_equal(wait_reply(replies, 300), 0);
	served_meanwhile(3000);
	/* Still no answer for the acquirer: the write is still under way. */
	assert_int_equal(wait_reply(replies, 200), 0);
	t_release = let_write_through();
	t_reply = wait_reply(replies, 5000);
	assert_true(t_reply >= t_release);
	assert_no_second_write();
	finish(replies);
}

/* The bound: the acquire gives up with SuspendInProgress, takes no lock, and the gate opens again. */
static void test_acquire_gives_up_after_bound(void **state)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;
	char buf[128] = "";
	usec_t t0, took;
	int replies;

	(void)state;
	start_inside_state_write_with(true, BASE_CONFIG "[Suspend]\nWaitForResumeSec=1s\n");
	t0 = now(CLOCK_MONOTONIC);
	replies = spawn_acquirer();
	assert_int_equal(read_reply(replies, 5000, buf, sizeof(buf)), 0);
	took = now(CLOCK_MONOTONIC) - t0;
	assert_string_equal(buf, "org.autosleep1.Error.SuspendInProgress");
	fprintf(stderr, "# the acquire gave up after %.0f ms (WaitForResumeSec=1s)\n", (double)took / USEC_PER_MSEC);
	assert_true(took >= USEC_PER_SEC);
	assert_int_equal(count_in_log("waited 1000 ms for the suspend under way to return"), 1);
	assert_int_equal(harness_open_client(&h, &b), 0);
	assert_int_equal(harness_count_locks(b, "racer"), 0);
	served_meanwhile(3000);
	let_write_through();
	/* Nothing holds: the daemon goes round and writes state again. */
	for (int i = 0; i < 500 && count_in_log("Writing mem to state") < 2; i++)
		usleep(10000);
	assert_int_equal(count_in_log("Writing mem to state"), 2);
	let_write_through();
	finish(replies);
}

/*
 * Disable() during the write, with a kernel lock the kernel enforces (it
 * does not help here: nothing to abort for): its answer waits for the
 * write to return, the knob goes back only then, and a bystander is served
 * meanwhile. On the old code Disable() stalled the whole loop.
 */
static void test_disable_answered_after_write(void **state)
{
	usec_t t_release, t_reply;
	int replies;
	char *k;

	(void)state;
	fixture_write(h.dir, "sys/power/userspace_autosleep", "0\n");
	start_inside_state_write(false);
	k = fixture_read(h.dir, "sys/power/userspace_autosleep");
	assert_int_equal(atoi(k), 1);
	free(k);
	replies = spawn_caller("Disable");
	assert_int_equal(wait_reply(replies, 500), 0);
	served_meanwhile(3000);
	/* A suspend under way saw the knob set: it stays until the write returned. */
	k = fixture_read(h.dir, "sys/power/userspace_autosleep");
	assert_int_equal(atoi(k), 1);
	free(k);
	t_release = let_write_through();
	t_reply = wait_reply(replies, 5000);
	assert_true(t_reply >= t_release);
	k = fixture_read(h.dir, "sys/power/userspace_autosleep");
	assert_int_equal(atoi(k), 0);
	free(k);
	assert_no_second_write();
	finish(replies);
}

/*
 * SoakCycle during the loop's own state write: the pause it starts waits for
 * that write, the loop serves everyone else meanwhile (this failed on the
 * old code, whose loop waited at the gate inside the SoakCycle handler), and
 * the reply comes after the loop's write returned. The two writes read from
 * the FIFO only show that the cycle ran after its wait.
 */
static void test_soak_waits_for_loop_write(void **state)
{
	usec_t t_release, t_reply;
	int replies;

	(void)state;
	start_inside_state_write(false);
	replies = spawn_caller("SoakCycle");
	assert_int_equal(wait_reply(replies, 500), 0);
	served_meanwhile(3000);
	assert_int_equal(count_in_log("Writing mem to state"), 1);
	/*
	 * Open the FIFO and keep it open for both writes: the loop's, then the
	 * cycle's own, which may follow within microseconds.
	 */
	{
		int fifo = open(state_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		char buf[32];
		size_t got = 0;

		t_release = now(CLOCK_MONOTONIC);
		assert_true(fifo >= 0);
		for (int i = 0; i < 1000 && got < 6; i++) {
			int n = (int)read(fifo, buf + got, sizeof(buf) - 1 - got);

			if (n > 0)
				got += (size_t)n;
			else
				usleep(10000);
		}
		buf[got] = 0;
		close(fifo);
		assert_string_equal(buf, "memmem");
	}
	t_reply = wait_reply(replies, 10000);
	assert_true(t_reply >= t_release);
	finish(replies);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_acquire_waits_without_block_suspend, setup_nowakelock, teardown),
		cmocka_unit_test_setup_teardown(test_acquire_left_to_kernel_epoll, setup_nowakelock, teardown),
		cmocka_unit_test_setup_teardown(test_acquire_left_to_kernel_wake_lock, setup_wakelock, teardown),
		cmocka_unit_test_setup_teardown(test_acquire_waits_when_kernel_lock_fails, setup_wakelock, teardown),
		cmocka_unit_test_setup_teardown(test_bystander_served_while_acquire_waits, setup_nowakelock, teardown),
		cmocka_unit_test_setup_teardown(test_acquire_gives_up_after_bound, setup_nowakelock, teardown),
		cmocka_unit_test_setup_teardown(test_disable_answered_after_write, setup_wakelock, teardown),
		cmocka_unit_test_setup_teardown(test_soak_waits_for_loop_write, setup_wakelock, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
