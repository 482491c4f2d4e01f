/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The gate is a barrier, end to end: on a kernel without wake_lock (the
 * stock Debian fixture), an AcquireWakeLock that arrives while the daemon is
 * inside its state write must not be answered until that write returned,
 * and no state write may start after the answer. The fixture's
 * /sys/power/state is a FIFO, so the test decides when the "suspend" ends.
 */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "fixture.h"
#include "time-util.h"

static struct harness h;
/* Killed in teardown too: a failed assertion must not leave it holding a lock (and our stdout). */
static pid_t acquirer;

static int count_in_log(const char *needle)
{
	return harness_count_in_log(&h, "barrier.log", needle);
}

static int setup(void **state)
{
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "test-bus-barrier needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
	assert_int_equal(harness_bus_start(&h, "sysfs-nowakelock", NULL), 0);
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	if (acquirer > 0) {
		kill(acquirer, SIGKILL);
		waitpid(acquirer, NULL, 0);
	}
	harness_stop(&h);
	return 0;
}

static void test_acquire_waits_for_state_write(void **state)
{
	char path[512], buf[64];
	int replies[2], fifo, n;
	usec_t t_release, t_reply = 0;
	pid_t writer;

	snprintf(path, sizeof(path), "%s/sys/power/state", h.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	/* The daemon reads the offered states once at start: answer that read. */
	writer = fork();
	assert_true(writer >= 0);
	if (writer == 0) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		_exit(fd >= 0 && write(fd, "freeze mem disk\n", 16) == 16 ? 0 : 1);
	}
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=0\n[Logind]\nHonorInhibitors=no\n",
		.log = "barrier.log", .real = true }) > 0);
	assert_int_equal(waitpid(writer, NULL, 0), writer);
	/* Now it is inside the state write, blocked opening the FIFO: the kernel is "suspending". */
	for (int i = 0; i < 500 && count_in_log("Writing mem to state") == 0; i++)
		usleep(10000);
	assert_int_equal(count_in_log("Writing mem to state"), 1);

	assert_int_equal(pipe(replies), 0);
	acquirer = fork();
	assert_true(acquirer >= 0);
	if (acquirer == 0) {
		sd_bus *b;
		int fd;

		close(replies[0]);
		if (harness_open_client(&h, &b) < 0 || harness_acquire(b, "racer", "barrier", 0, &fd, NULL) != 1)
			_exit(1);
		dprintf(replies[1], "%llu\n", (unsigned long long)now(CLOCK_MONOTONIC));
		pause();
		_exit(0);
	}
	close(replies[1]);
	/* Half a second with the write under way: no reply may come. */
	assert_int_equal(poll(&(struct pollfd){ .fd = replies[0], .events = POLLIN }, 1, 500), 0);

	/* The "resume": let the write through. */
	t_release = now(CLOCK_MONOTONIC);
	fifo = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fifo >= 0);
	assert_int_equal(poll(&(struct pollfd){ .fd = replies[0], .events = POLLIN }, 1, 5000), 1);
	n = (int)read(replies[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = 0;
	t_reply = strtoull(buf, NULL, 10);
	fprintf(stderr, "# reply %.1f ms after the state write was let through\n",
		(double)(t_reply - t_release) / USEC_PER_MSEC);
	assert_true(t_reply >= t_release);
	n = (int)read(fifo, buf, sizeof(buf));
	assert_int_equal(n, 3);
	assert_memory_equal(buf, "mem", 3);

	/* Held: no state write starts after the reply. */
	usleep(500 * 1000);
	assert_int_equal(count_in_log("Writing mem to state"), 1);
	close(fifo);
	kill(acquirer, SIGKILL);
	waitpid(acquirer, NULL, 0);
	acquirer = 0;
	close(replies[0]);
	harness_daemon_stop(&h, SIGTERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acquire_waits_for_state_write),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
