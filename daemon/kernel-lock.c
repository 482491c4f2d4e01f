/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fdstore.h"
#include "kernel-lock.h"
#include "log.h"
#include "macro.h"
#include "wake-epoll.h"
#include "wakelock.h"

#define STORE_EPOLL "kernel-lock-epoll"
#define STORE_EVENT "kernel-lock-eventfd"

struct kernel_lock {
	char *name;
	bool sysfs;
	bool held;
	bool enforced;
	int epoll_fd;
	int event_fd;
};

static int wakesource_setup(struct kernel_lock *k, struct fdstore *store)
{
	int ep = -ENOENT, efd = -ENOENT, r;

	if (store) {
		ep = fdstore_take(store, STORE_EPOLL);
		efd = fdstore_take(store, STORE_EVENT);
	}
	if (ep >= 0 && efd >= 0) {
		/*
		 * The item is still registered: systemd held both fds while we were
		 * gone. Register it again as ours would be: an instance without
		 * CAP_BLOCK_SUSPEND left it without a wakeup source, and a modify
		 * with EPOLLWAKEUP creates one (and keeps a readable eventfd's
		 * wakeup source active).
		 */
		r = wake_epoll_resume(ep, efd, NULL);
		if (r < 0)
			log_warning_errno(r, "Failed to register the adopted kernel lock again: %m");
		k->epoll_fd = ep;
		k->event_fd = efd;
		/* Look without reading: the wakeup source stays active until the leases are back. */
		k->held = poll(&(struct pollfd){ .fd = efd, .events = POLLIN }, 1, 0) > 0;
		log_debug("Adopted the kernel lock's wakeup source from the fd store (%s)", k->held ? "held" : "not held");
		return 0;
	}
	safe_close(ep);
	safe_close(efd);

	k->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (k->epoll_fd < 0)
		return negative_errno();
	k->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->event_fd < 0)
		return negative_errno();
	/* Without CAP_BLOCK_SUSPEND the kernel silently drops EPOLLWAKEUP: see wake_epoll_kept(). */
	r = wake_epoll_add(k->epoll_fd, k->event_fd, NULL);
	if (r < 0)
		return r;
	(void)fdstore_push(STORE_EPOLL, k->epoll_fd);
	(void)fdstore_push(STORE_EVENT, k->event_fd);
	return 0;
}

int kernel_lock_new(const char *name, bool sysfs, struct fdstore *store, struct kernel_lock **ret)
{
	struct kernel_lock *k;
	int r;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->epoll_fd = k->event_fd = -EBADF;
	k->sysfs = sysfs;
	k->name = strdup(name);
	if (!k->name) {
		kernel_lock_free(k);
		return -ENOMEM;
	}
	/* wake_lock needs CAP_BLOCK_SUSPEND too, but says so with EPERM instead of ignoring us. */
	k->enforced = sysfs;
	if (!sysfs) {
		r = wakesource_setup(k, store);
		if (r < 0) {
			kernel_lock_free(k);
			return r;
		}
		k->enforced = wake_epoll_kept(k->epoll_fd, k->event_fd);
	}
	*ret = k;
	return 0;
}

struct kernel_lock *kernel_lock_free(struct kernel_lock *k)
{
	if (!k)
		return NULL;
	safe_close(k->epoll_fd);
	safe_close(k->event_fd);
	free(k->name);
	free(k);
	return NULL;
}

int kernel_lock_hold(struct kernel_lock *k)
{
	uint64_t one = 1;
	int r;

	if (k->held)
		return 0;
	if (k->sysfs) {
		r = wakelock_lock(k->name, 0);
		if (r < 0)
			return r;
	} else if (write(k->event_fd, &one, sizeof(one)) != sizeof(one)) {
		return negative_errno();
	}
	k->held = true;
	return 0;
}

int kernel_lock_release(struct kernel_lock *k)
{
	struct epoll_event ev;
	uint64_t v;
	int r;

	if (k->sysfs) {
		if (!k->held)
			return 0;
		r = wakelock_unlock(k->name);
		if (r < 0)
			return r;
		k->held = false;
		return 0;
	}
	/* Drain, then collect: the kernel relaxes the wakeup source when epoll_wait() finds nothing ready. */
	(void)!read(k->event_fd, &v, sizeof(v));
	if (epoll_wait(k->epoll_fd, &ev, 1, 0) < 0)
		return negative_errno();
	k->held = false;
	return 0;
}

bool kernel_lock_enforced(const struct kernel_lock *k)
{
	return k->enforced;
}

const char *kernel_lock_kind(const struct kernel_lock *k)
{
	return k->sysfs ? "wake_lock" : "epoll wakeup source";
}
