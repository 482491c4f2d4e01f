/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "sysfs.h"

static char *root_prefix;

int sysfs_set_root(const char *root)
{
	char *copy = NULL;
	size_t n;

	if (root && *root && strcmp(root, "/") != 0) {
		copy = strdup(root);
		if (!copy)
			return -ENOMEM;
		/* Keep exactly one slash between prefix and relative path. */
		n = strlen(copy);
		while (n > 1 && copy[n - 1] == '/')
			copy[--n] = 0;
	}
	free(root_prefix);
	root_prefix = copy;
	return 0;
}

const char *sysfs_get_root(void)
{
	return root_prefix ? root_prefix : "/";
}

int sysfs_path(const char *rel, char **ret)
{
	char *p;

	while (*rel == '/')
		rel++;
	if (asprintf(&p, "%s/%s", root_prefix ? root_prefix : "", rel) < 0)
		return -ENOMEM;
	*ret = p;
	return 0;
}

bool sysfs_exists(const char *rel)
{
	_cleanup_free_ char *p = NULL;

	if (sysfs_path(rel, &p) < 0)
		return false;
	return access(p, F_OK) == 0;
}

static int read_fd(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0)
			return negative_errno();
		if (n == 0)
			break;
		len += (size_t)n;
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = 0;
	return (int)len;
}

static int open_rel(const char *rel, int flags)
{
	_cleanup_free_ char *p = NULL;
	int fd, r;

	r = sysfs_path(rel, &p);
	if (r < 0)
		return r;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | flags);
	return fd < 0 ? negative_errno() : fd;
}

int sysfs_read(const char *rel, char *buf, size_t size)
{
	_cleanup_close_ int fd = -EBADF;

	if (size == 0)
		return -EINVAL;
	fd = open_rel(rel, 0);
	if (fd < 0)
		return fd;
	return read_fd(fd, buf, size);
}

int sysfs_read_regular(const char *rel, char *buf, size_t size)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;

	if (size == 0)
		return -EINVAL;
	fd = open_rel(rel, O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	return read_fd(fd, buf, size);
}

int sysfs_check_regular(const char *rel)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;
	int r;

	r = sysfs_path(rel, &p);
	if (r < 0)
		return r;
	if (stat(p, &st) < 0)
		return negative_errno();
	return S_ISREG(st.st_mode) ? 0 : -EBADFD;
}

int sysfs_write(const char *rel, const char *value)
{
	_cleanup_free_ char *p = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t len = strlen(value);
	ssize_t n;
	int r;

	r = sysfs_path(rel, &p);
	if (r < 0)
		return r;
	/* O_TRUNC is ignored by sysfs and keeps fixture files readable. */
	fd = open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_TRUNC);
	if (fd < 0)
		return negative_errno();
	n = write(fd, value, len);
	if (n < 0)
		return negative_errno();
	if ((size_t)n != len)
		return -EIO;
	return 0;
}
