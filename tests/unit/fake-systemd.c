/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fake-systemd.h"

static void store_remove(struct fake_systemd *s, const char *name)
{
	for (unsigned i = 0; i < s->n_store; i++)
		if (strcmp(s->store[i].name, name) == 0) {
			close(s->store[i].fd);
			s->store[i] = s->store[--s->n_store];
			return;
		}
}

static void store_add(struct fake_systemd *s, const char *name, int fd)
{
	store_remove(s, name);
	if (s->n_store == s->size) {
		unsigned size = s->size ? s->size * 2 : 64;
		struct fake_systemd_fd *n = realloc(s->store, size * sizeof(*n));

		if (!n) {
			close(fd);
			return;
		}
		s->store = n;
		s->size = size;
	}
	snprintf(s->store[s->n_store].name, sizeof(s->store[s->n_store].name), "%s", name);
	s->store[s->n_store++].fd = fd;
}

static void pump_locked(struct fake_systemd *s, int timeout_ms)
{
	while (poll(&(struct pollfd){ .fd = s->notify_fd, .events = POLLIN }, 1, timeout_ms) > 0) {
		char buf[4096], cbuf[CMSG_SPACE(sizeof(int) * 8)];
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		int fds[8], n_fds = 0;
		const char *name = NULL;
		char *saveptr = NULL;
		bool add = false, remove = false;
		ssize_t n;

		n = recvmsg(s->notify_fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0)
			break;
		buf[n] = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				n_fds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
				memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)n_fds);
			}
		for (char *l = strtok_r(buf, "\n", &saveptr); l; l = strtok_r(NULL, "\n", &saveptr)) {
			if (strncmp(l, "FDNAME=", 7) == 0)
				name = l + 7;
			add |= strcmp(l, "FDSTORE=1") == 0;
			remove |= strcmp(l, "FDSTOREREMOVE=1") == 0;
		}
		if (remove && name) {
			store_remove(s, name);
		} else if (add && name && n_fds == 1 && !s->discard_fds) {
			store_add(s, name, fds[0]);
			n_fds = 0;
		}
		for (int i = 0; i < n_fds; i++)
			close(fds[i]);
		timeout_ms = 0;
	}
}

void fake_systemd_pump(struct fake_systemd *s, int timeout_ms)
{
	pthread_mutex_lock(&s->lock);
	pump_locked(s, timeout_ms);
	pthread_mutex_unlock(&s->lock);
}

static void *pump_main(void *userdata)
{
	struct fake_systemd *s = userdata;

	while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST))
		fake_systemd_pump(s, 20);
	return NULL;
}

int fake_systemd_start(struct fake_systemd *s, const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[512];

	*s = (struct fake_systemd){ .notify_fd = -1 };
	pthread_mutex_init(&s->lock, NULL);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
	s->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->notify_fd < 0)
		return -errno;
	if (bind(s->notify_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	snprintf(s->notify_env, sizeof(s->notify_env), "NOTIFY_SOCKET=%s", sa.sun_path);
	snprintf(path, sizeof(path), "%s/run", dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(s->runtime_env, sizeof(s->runtime_env), "RUNTIME_DIRECTORY=%s", path);
	if (pthread_create(&s->pump, NULL, pump_main, s) != 0)
		return -EAGAIN;
	s->pump_started = true;
	return 0;
}

void fake_systemd_stop(struct fake_systemd *s)
{
	if (s->pump_started) {
		__atomic_store_n(&s->stop, true, __ATOMIC_SEQ_CST);
		pthread_join(s->pump, NULL);
		s->pump_started = false;
	}
	while (s->n_store > 0)
		store_remove(s, s->store[0].name);
	free(s->store);
	s->store = NULL;
	s->size = 0;
	if (s->notify_fd >= 0)
		close(s->notify_fd);
	s->notify_fd = -1;
	pthread_mutex_destroy(&s->lock);
}

void fake_systemd_drop_hung_up(struct fake_systemd *s)
{
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->n_store;) {
		struct pollfd p = { .fd = s->store[i].fd };

		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) {
			close(s->store[i].fd);
			s->store[i] = s->store[--s->n_store];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

bool fake_systemd_stored(struct fake_systemd *s, const char *prefix)
{
	bool found = false;

	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->n_store && !found; i++)
		found = strncmp(s->store[i].name, prefix, strlen(prefix)) == 0;
	pthread_mutex_unlock(&s->lock);
	return found;
}

unsigned fake_systemd_copy_store(struct fake_systemd *s, int *fds, unsigned max, char *names, size_t size)
{
	size_t len = 0;
	unsigned n = 0;

	names[0] = 0;
	pthread_mutex_lock(&s->lock);
	for (; n < s->n_store && n < max; n++) {
		/* Copies: systemd keeps its own while it hands them out. */
		fds[n] = dup(s->store[n].fd);
		len += (size_t)snprintf(names + len, size - len, "%s%s", n ? ":" : "", s->store[n].name);
		if (len >= size)
			break;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}
