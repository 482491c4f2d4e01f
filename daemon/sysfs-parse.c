/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numbers from sysfs. Kept out of sysfs.c so that the readers below call
 * sysfs_read() across objects: the test binaries replace sysfs_read() with
 * ld --wrap, which rewrites only references between objects, and the fake
 * kernel in the tests has to answer these reads too.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sysfs.h"

/*
 * The kernel prints numbers as plain decimals. strto*() would also take
 * leading whitespace and '+', wrap " -3" to a huge unsigned value, and stop
 * at a NUL byte as if the number ended there.
 */
static bool is_decimal(const char *buf, size_t len, bool allow_minus)
{
	size_t i = allow_minus && len > 0 && buf[0] == '-';

	if (i == len)
		return false;
	for (; i < len; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return false;
	return true;
}

int sysfs_parse_u64(const char *s, size_t len, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!is_decimal(s, len, false))
		return -EBADMSG;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end != s + len)
		return -EBADMSG;
	*ret = v;
	return 0;
}

int sysfs_parse_int(const char *s, size_t len, int *ret)
{
	char *end;
	long v;

	if (!is_decimal(s, len, true))
		return -EBADMSG;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end != s + len || v < INT_MIN || v > INT_MAX)
		return -EBADMSG;
	*ret = (int)v;
	return 0;
}

int sysfs_read_u64(const char *rel, uint64_t *ret)
{
	char buf[64];
	int r;

	r = sysfs_read(rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	return sysfs_parse_u64(buf, (size_t)r, ret);
}

int sysfs_read_int(const char *rel, int *ret)
{
	char buf[64];
	int r;

	r = sysfs_read(rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	return sysfs_parse_int(buf, (size_t)r, ret);
}
