/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>

#include "macro.h"
#include "wake-epoll.h"

#define WATCH_EVENTS (EPOLLIN | EPOLLWAKEUP)
/* No poll bits: disabled, but EPOLLWAKEUP keeps the item's wakeup source. */
#define PAUSED_EVENTS EPOLLWAKEUP

static int ctl(int epfd, int op, int fd, uint32_t events, void *data)
{
	struct epoll_event ev = { .events = events, .data.ptr = data };

	if (epoll_ctl(epfd, op, fd, &ev) < 0)
		return negative_errno();
	return 0;
}

int wake_epoll_add(int epfd, int fd, void *data)
{
	return ctl(epfd, EPOLL_CTL_ADD, fd, WATCH_EVENTS, data);
}

int wake_epoll_pause(int epfd, int fd, void *data)
{
	return ctl(epfd, EPOLL_CTL_MOD, fd, PAUSED_EVENTS, data);
}

int wake_epoll_resume(int epfd, int fd, void *data)
{
	return ctl(epfd, EPOLL_CTL_MOD, fd, WATCH_EVENTS, data);
}

bool wake_epoll_kept(int epfd, int fd)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	/* Our own process's view of our own epoll: not sysfs, so no root prefix. */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned events;
		int tfd;

		if (sscanf(line, "tfd: %d events: %x", &tfd, &events) == 2 && tfd == fd) {
			found = events & EPOLLWAKEUP;
			break;
		}
	}
	fclose(f);
	return found;
}
