/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <cmocka.h>

#include "wake-epoll.h"

/* A pipe stands in for an input device. */
struct ctx {
	int ep;
	int p[2];
	int tag;
};

static int setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	x->ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(x->ep >= 0);
	assert_int_equal(pipe2(x->p, O_CLOEXEC | O_NONBLOCK), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *x = *state;

	close(x->ep);
	close(x->p[0]);
	close(x->p[1]);
	free(x);
	return 0;
}

/* The event mask the kernel keeps for fd, from /proc/self/fdinfo, or -1. */
static int64_t kernel_mask(int ep, int fd)
{
	char path[64], line[256];
	int64_t r = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* "tfd:        5 events: 20000019 data: ..." per item, in hex. */
	while (fgets(line, sizeof(line), f)) {
		unsigned events;
		int tfd;

		if (sscanf(line, "tfd: %d events: %x", &tfd, &events) == 2 && tfd == fd) {
			r = events;
			break;
		}
	}
	fclose(f);
	return r;
}

static int ready(struct ctx *x)
{
	struct epoll_event ev[4];
	int n;

	n = epoll_wait(x->ep, ev, 4, 0);
	assert_true(n >= 0);
	if (n > 0)
		assert_ptr_equal(ev[0].data.ptr, &x->tag);
	return n;
}

static void test_pause_and_resume(void **state)
{
	struct ctx *x = *state;
	char c = 'k';

	assert_int_equal(wake_epoll_add(x->ep, x->p[0], &x->tag), 0);
	assert_int_equal(ready(x), 0);
	assert_int_equal(write(x->p[1], &c, 1), 1);
	assert_int_equal(ready(x), 1);
	/* Level-triggered: still there until read. */
	assert_int_equal(ready(x), 1);

	/* Paused: input keeps queueing, nothing is delivered. */
	assert_int_equal(wake_epoll_pause(x->ep, x->p[0], &x->tag), 0);
	assert_int_equal(ready(x), 0);
	assert_int_equal(write(x->p[1], &c, 1), 1);
	assert_int_equal(ready(x), 0);
	/* Pausing twice is harmless. */
	assert_int_equal(wake_epoll_pause(x->ep, x->p[0], &x->tag), 0);
	assert_int_equal(ready(x), 0);

	/* Resumed: what queued meanwhile is delivered at once. */
	assert_int_equal(wake_epoll_resume(x->ep, x->p[0], &x->tag), 0);
	assert_int_equal(ready(x), 1);
	while (read(x->p[0], &c, 1) == 1)
		;
	assert_int_equal(ready(x), 0);
	assert_int_equal(write(x->p[1], &c, 1), 1);
	assert_int_equal(ready(x), 1);
}

/*
 * EPOLLWAKEUP stays in the item's mask while paused, so the kernel keeps its
 * wakeup source (ep_modify() drops it only when a modify clears the bit).
 */
static void test_pause_keeps_epollwakeup(void **state)
{
	struct ctx *x = *state;
	int64_t m;

	assert_int_equal(wake_epoll_add(x->ep, x->p[0], &x->tag), 0);
	m = kernel_mask(x->ep, x->p[0]);
	if (m < 0)
		skip();
	/* Without CAP_BLOCK_SUSPEND the kernel silently drops EPOLLWAKEUP. */
	if (!(m & EPOLLWAKEUP)) {
		fprintf(stderr, "EPOLLWAKEUP not granted (no CAP_BLOCK_SUSPEND?), mask %llx\n", (long long)m);
		skip();
	}
	assert_true(m & EPOLLIN);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(wake_epoll_pause(x->ep, x->p[0], &x->tag), 0);
		m = kernel_mask(x->ep, x->p[0]);
		assert_true(m & EPOLLWAKEUP);
		assert_false(m & EPOLLIN);
		assert_int_equal(wake_epoll_resume(x->ep, x->p[0], &x->tag), 0);
		m = kernel_mask(x->ep, x->p[0]);
		assert_true(m & EPOLLWAKEUP);
		assert_true(m & EPOLLIN);
	}
}

/* wake_epoll_kept() says what the kernel kept, with it and without EPOLLWAKEUP asked for. */
static void test_kept_is_the_kernel_mask(void **state)
{
	struct ctx *x = *state;
	struct epoll_event ev = { .events = EPOLLIN };
	int64_t m;

	assert_false(wake_epoll_kept(x->ep, x->p[0]));
	assert_int_equal(wake_epoll_add(x->ep, x->p[0], &x->tag), 0);
	m = kernel_mask(x->ep, x->p[0]);
	if (m < 0)
		skip();
	assert_int_equal(wake_epoll_kept(x->ep, x->p[0]), !!(m & EPOLLWAKEUP));
	/* Another fd in the same epoll, without EPOLLWAKEUP: its own line decides. */
	assert_int_equal(epoll_ctl(x->ep, EPOLL_CTL_ADD, x->p[1], &ev), 0);
	assert_false(wake_epoll_kept(x->ep, x->p[1]));
	assert_false(wake_epoll_kept(-1, x->p[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pause_and_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pause_keeps_epollwakeup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_is_the_kernel_mask, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
