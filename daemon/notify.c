/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "notify.h"

#define NOTIFY_SNDBUF (8 * 1024 * 1024)

static int notify_fd = -EBADF;
static struct sockaddr_un notify_addr;
static socklen_t notify_addr_len;

bool notify_available(void)
{
	const char *e = getenv("NOTIFY_SOCKET");

	return e && *e;
}

/* 1 if we can reach the socket ourselves, 0 if sd_notify() must, -errno. */
static int notify_open(void)
{
	const char *e = getenv("NOTIFY_SOCKET");
	size_t n;

	if (notify_fd >= 0)
		return 1;
	if (!e || (e[0] != '/' && e[0] != '@'))
		return 0;
	n = strlen(e);
	if (n >= sizeof(notify_addr.sun_path))
		return -EINVAL;
	notify_addr = (struct sockaddr_un){ .sun_family = AF_UNIX };
	memcpy(notify_addr.sun_path, e, n);
	if (e[0] == '@')
		notify_addr.sun_path[0] = 0;
	/* A path is NUL-terminated, an abstract name is exactly its bytes. */
	notify_addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (e[0] == '/'));
	/* Not connected: every message names the address, so a re-executed manager's new socket is found. */
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (notify_fd < 0)
		return negative_errno();
	/*
	 * As sd_notify() does: a datagram that carries fds into the store is
	 * charged to our send buffer until the manager reads it, and a burst of
	 * them (a restart with thousands of locks to store) must not stall on
	 * the default buffer. FORCE works for root (us, in the unit), beyond
	 * wmem_max; without it the plain option still raises what it may.
	 */
	if (setsockopt(notify_fd, SOL_SOCKET, SO_SNDBUFFORCE, &(int){ NOTIFY_SNDBUF }, sizeof(int)) < 0)
		(void)setsockopt(notify_fd, SOL_SOCKET, SO_SNDBUF, &(int){ NOTIFY_SNDBUF }, sizeof(int));
	return 1;
}

int notify_send(const char *msg, const int *fds, unsigned n_fds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} control = {};
	struct iovec iov = { .iov_base = (char *)msg, .iov_len = strlen(msg) };
	struct msghdr mh = {
		.msg_name = &notify_addr,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	int r;

	if (!notify_available())
		return 0;
	r = notify_open();
	if (r < 0)
		return r;
	if (r == 0)
		return sd_pid_notify_with_fds(0, false, msg, fds, n_fds);
	if (n_fds > 8)
		return -E2BIG;
	mh.msg_namelen = notify_addr_len;
	if (n_fds > 0) {
		struct cmsghdr *c;

		mh.msg_control = &control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	/* The manager has SO_PASSCRED on its socket: the kernel tells it who we are. */
	if (sendmsg(notify_fd, &mh, MSG_NOSIGNAL) < 0)
		return negative_errno();
	return 1;
}

int notify_sendf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	return notify_send(buf, NULL, 0);
}

void notify_close(void)
{
	notify_fd = safe_close(notify_fd);
}
