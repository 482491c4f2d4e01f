/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sysfs.h"
#include "sysfs-inject.h"

/* The real functions in daemon/sysfs.c, as ld --wrap names them. */
int __real_sysfs_read(const char *rel, char *buf, size_t size);
int __real_sysfs_write(const char *rel, const char *value);
int __wrap_sysfs_read(const char *rel, char *buf, size_t size);
int __wrap_sysfs_write(const char *rel, const char *value);

static const struct sysfs_injector *injector;

void sysfs_inject_set(const struct sysfs_injector *i)
{
	injector = i;
}

int __wrap_sysfs_read(const char *rel, char *buf, size_t size)
{
	int r;

	if (injector && injector->read && size > 0) {
		r = injector->read(injector->userdata, rel, buf, size);
		if (r != SYSFS_INJECT_PASS)
			return r;
	}
	return __real_sysfs_read(rel, buf, size);
}

int __wrap_sysfs_write(const char *rel, const char *value)
{
	int r;

	if (injector && injector->write) {
		r = injector->write(injector->userdata, rel, value);
		if (r != SYSFS_INJECT_PASS)
			return r;
	}
	return __real_sysfs_write(rel, value);
}
