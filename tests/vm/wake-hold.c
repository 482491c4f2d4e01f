/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wake-hold PIDFILE: keep the guest awake on a kernel without
 * /sys/power/wake_lock (Debian's stock kernel has no CONFIG_PM_WAKELOCKS).
 *
 * A timerfd that has expired and is never read, in an epoll with
 * EPOLLWAKEUP, keeps the epoll item's wakeup source active: reads of
 * /sys/power/wakeup_count block, and autosleepd does not suspend. It is the
 * mechanism of autosleepd's own kernel lock on such kernels, but a timerfd
 * ("[timerfd]" in /sys/class/wakeup) rather than autosleepd's eventfd
 * ("[eventfd]"), so a test can tell the two apart.
 *
 * The holder is a child: the parent exits 0 once the source is active and
 * the child's pid is in PIDFILE, so "wake-hold F && next" is ordered. Killing
 * the child releases the source (the kernel drops it with the epoll).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

static int hold(void)
{
	struct itimerspec its = { .it_value = { .tv_nsec = 1 } };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLWAKEUP };
	struct pollfd p;
	int tfd, efd;

	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	efd = epoll_create1(EPOLL_CLOEXEC);
	if (tfd < 0 || efd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0)
		return -errno;
	/* Readable before it is added: ep_insert() then activates the source at once. */
	p = (struct pollfd){ .fd = tfd, .events = POLLIN };
	if (poll(&p, 1, 1000) != 1)
		return -ETIMEDOUT;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, tfd, &ev) < 0)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	int pfd[2], r;
	char c = 0;
	FILE *f;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: wake-hold PIDFILE\n");
		return 2;
	}
	if (pipe(pfd) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0) {
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1 || c != 'y')
			return 1;
		return 0;
	}
	close(pfd[0]);
	r = hold();
	if (r < 0) {
		fprintf(stderr, "wake-hold: %s\n", strerror(-r));
		return 1;
	}
	f = fopen(argv[1], "we");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
		return 1;
	/* Detached from the caller's stdio, so $(...) and pipes do not wait for us. */
	if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout) ||
	    !freopen("/dev/null", "w", stderr))
		return 1;
	if (write(pfd[1], "y", 1) != 1)
		return 1;
	close(pfd[1]);
	for (;;)
		pause();
}
