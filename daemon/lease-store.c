/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fdstore.h"
#include "lease-store.h"
#include "log.h"
#include "macro.h"
#include "sysfs.h"

/* A record is a handful of short lines; anything bigger is not ours. */
#define RECORD_MAX 2048

#define BUS_ID_LEN 32

struct lease_store {
	char *dir;
	int dir_fd;
	char bus_id[BUS_ID_LEN + 1]; /* "" when unknown */
};

static bool bus_id_valid(const char *id)
{
	return strlen(id) == BUS_ID_LEN && strspn(id, "0123456789abcdef") == BUS_ID_LEN;
}

int lease_store_new(const char *dir, const char *bus_id, struct lease_store **ret)
{
	struct lease_store *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dir_fd = -EBADF;
	if (bus_id && bus_id_valid(bus_id))
		snprintf(s->bus_id, sizeof(s->bus_id), "%s", bus_id);
	if (dir && fdstore_available()) {
		/* A store we cannot use is no reason to refuse wake locks: they just end with us. */
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			log_warning_errno(negative_errno(), "Cannot create %s: %m; wake locks will not survive a restart",
					  dir);
		else if ((s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
			log_warning_errno(negative_errno(), "Cannot open %s: %m; wake locks will not survive a restart",
					  dir);
		else if (!(s->dir = strdup(dir))) {
			lease_store_free(s);
			return -ENOMEM;
		}
	}
	*ret = s;
	return 0;
}

struct lease_store *lease_store_free(struct lease_store *s)
{
	if (!s)
		return NULL;
	safe_close(s->dir_fd);
	free(s->dir);
	free(s);
	return NULL;
}

bool lease_store_enabled(const struct lease_store *s)
{
	return s && s->dir_fd >= 0;
}

static void fd_name(char *buf, size_t size, uint64_t id)
{
	snprintf(buf, size, "lease-%" PRIu64, id);
}

int lease_store_save(struct lease_store *s, const struct lease *x, int fd)
{
	char name[32], rec[RECORD_MAX];
	_cleanup_close_ int f = -EBADF;
	int n, r;

	if (!lease_store_enabled(s))
		return 0;
	n = snprintf(rec, sizeof(rec),
		     "id=%" PRIu64 "\nname=%s\nowner=%s\nwhy=%s\nuid=%u\npid=%d\nsince=%" PRIu64 "\n"
		     "since_realtime=%" PRIu64 "\ndeadline=%" PRIu64 "\nlid=%d\n%s%s%s",
		     x->id, x->name, x->owner, x->why, (unsigned)x->uid, (int)x->pid, (uint64_t)x->since,
		     (uint64_t)x->since_realtime, (uint64_t)x->deadline, x->lid, s->bus_id[0] ? "bus=" : "", s->bus_id,
		     s->bus_id[0] ? "\n" : "");
	if (n < 0 || (size_t)n >= sizeof(rec))
		return -E2BIG;
	/*
	 * The record first, then the fd: a restart finds no fd without its
	 * record. Written in place, without a rename: one killed before the
	 * write is complete has no fd in the store yet, and the next instance
	 * drops it either way (an unparsable record, or a record without fd).
	 */
	snprintf(name, sizeof(name), "%" PRIu64, x->id);
	f = openat(s->dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f < 0)
		return negative_errno();
	if (write(f, rec, (size_t)n) != n) {
		(void)unlinkat(s->dir_fd, name, 0);
		return -EIO;
	}
	fd_name(name, sizeof(name), x->id);
	r = fdstore_push(name, fd);
	if (r < 0) {
		snprintf(name, sizeof(name), "%" PRIu64, x->id);
		(void)unlinkat(s->dir_fd, name, 0);
	}
	return r;
}

void lease_store_forget(struct lease_store *s, uint64_t id)
{
	char name[32];

	if (!lease_store_enabled(s))
		return;
	fd_name(name, sizeof(name), id);
	(void)fdstore_remove(name);
	snprintf(name, sizeof(name), "%" PRIu64, id);
	if (unlinkat(s->dir_fd, name, 0) < 0 && errno != ENOENT)
		log_warning_errno(negative_errno(), "Failed to remove %s/%s: %m, ignoring", s->dir, name);
}

/* Record numbers are written as plain decimals, the same rule as sysfs numbers. */
static int parse_u64(const char *v, uint64_t *ret)
{
	return sysfs_parse_u64(v, strlen(v), ret);
}

int lease_record_parse(char *buf, struct lease_spec *ret, const char **ret_bus)
{
	const char *bus = NULL;
	struct lease_spec spec = { .deadline = USEC_INFINITY };
	char problem[160], *saveptr = NULL, *line;
	unsigned seen = 0;
	uint64_t v;

	for (line = strtok_r(buf, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
		char *eq = strchr(line, '='), *val;

		if (!eq)
			return -EBADMSG;
		*eq = 0;
		val = eq + 1;
		if (strcmp(line, "bus") == 0) {
			if (!bus_id_valid(val))
				return -EBADMSG;
			bus = val;
			continue;
		}
		if (strcmp(line, "name") == 0 || strcmp(line, "owner") == 0 || strcmp(line, "why") == 0) {
			if (strcmp(line, "name") == 0) {
				if (wake_lock_name_check(val, problem, sizeof(problem)) < 0)
					return -EBADMSG;
				spec.name = val;
			} else {
				if (lease_why_check(val, problem, sizeof(problem)) < 0)
					return -EBADMSG;
				if (line[0] == 'o')
					spec.owner = val;
				else
					spec.why = val;
			}
			seen |= 1u << (line[0] == 'n' ? 0 : line[0] == 'o' ? 1 : 2);
			continue;
		}
		if (parse_u64(val, &v) < 0)
			return -EBADMSG;
		if (strcmp(line, "id") == 0 && v > 0)
			spec.id = v;
		else if (strcmp(line, "uid") == 0 && v <= UINT32_MAX)
			spec.uid = (uid_t)v;
		else if (strcmp(line, "pid") == 0 && v <= INT32_MAX)
			spec.pid = (pid_t)v;
		else if (strcmp(line, "since") == 0)
			spec.since = v;
		else if (strcmp(line, "since_realtime") == 0)
			spec.since_realtime = v;
		else if (strcmp(line, "deadline") == 0)
			spec.deadline = v;
		/* Absent in records of 0.1: those were taken without LidClosed. */
		else if (strcmp(line, "lid") == 0 && v <= 1)
			spec.lid = v;
		else
			return -EBADMSG;
		if (strcmp(line, "id") == 0)
			seen |= 1u << 3;
	}
	/* A record without id, name, owner and reason is not one we wrote. */
	if (seen != 0xf)
		return -EBADMSG;
	*ret = spec;
	if (ret_bus)
		*ret_bus = bus;
	return 0;
}

static int read_record(struct lease_store *s, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int f = -EBADF;
	struct stat st;
	ssize_t n;

	f = openat(s->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (f < 0)
		return negative_errno();
	if (fstat(f, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (size_t)st.st_size >= size)
		return -EBADMSG;
	n = read(f, buf, size - 1);
	if (n < 0)
		return negative_errno();
	buf[n] = 0;
	return (int)n;
}

int lease_store_restore(struct lease_store *s, struct fdstore *fds, lease_store_restore_fn fn, void *userdata)
{
	_cleanup_free_ char *buf = NULL;
	DIR *d;
	struct dirent *de;
	int restored = 0;

	if (!lease_store_enabled(s))
		return 0;
	buf = malloc(RECORD_MAX);
	if (!buf)
		return -ENOMEM;
	d = fdopendir(dup(s->dir_fd));
	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		struct lease_spec spec;
		const char *bus;
		char name[32];
		uint64_t id;
		int fd, r;

		if (de->d_name[0] == '.') {
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				(void)unlinkat(s->dir_fd, de->d_name, 0);
			continue;
		}
		r = parse_u64(de->d_name, &id);
		if (r >= 0)
			r = read_record(s, de->d_name, buf, RECORD_MAX);
		if (r >= 0)
			r = lease_record_parse(buf, &spec, &bus);
		if (r >= 0 && spec.id != id)
			r = -EBADMSG;
		if (r < 0) {
			log_warning("Ignoring unreadable lease record %s/%s", s->dir, de->d_name);
			(void)unlinkat(s->dir_fd, de->d_name, 0);
			continue;
		}
		fd_name(name, sizeof(name), id);
		fd = fdstore_take(fds, name);
		if (fd < 0) {
			/* The client closed its end while we were away: systemd dropped the fd. */
			log_debug("Lease %" PRIu64 " '%s' ended while the daemon was down", id, spec.name);
			(void)unlinkat(s->dir_fd, de->d_name, 0);
			continue;
		}
		if (bus && s->bus_id[0] && strcmp(bus, s->bus_id) != 0) {
			log_notice("Wake lock '%s' of %s was taken on an earlier D-Bus system bus, whose unique names are "
				   "handed out again: it holds, and only its fd ends it now", spec.name, spec.owner);
			spec.owner = "";
		}
		r = fn(&spec, fd, userdata);
		if (r < 0) {
			lease_store_forget(s, id);
			continue;
		}
		restored++;
	}
	closedir(d);
	return restored;
}
