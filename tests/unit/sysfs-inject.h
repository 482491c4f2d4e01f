/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <limits.h>
#include <stddef.h>

/*
 * Fault injection for the tests: kernel behaviour a plain fixture file cannot
 * show (a write rejected with EINVAL, a state write that blocks, ...). Test
 * binaries that compile sysfs-inject.c link with SYSFS_INJECT_WRAP
 * (-Wl,--wrap=sysfs_read,--wrap=sysfs_write), so every sysfs_read() and
 * sysfs_write() of the daemon modules goes through the hooks first; the
 * daemon itself has no such seam. A hook returns SYSFS_INJECT_PASS to let the
 * real file answer.
 */
#define SYSFS_INJECT_PASS INT_MAX

struct sysfs_injector {
	int (*read)(void *userdata, const char *rel, char *buf, size_t size);
	int (*write)(void *userdata, const char *rel, const char *value);
	void *userdata;
};

/* NULL removes the hooks. Set it while no other thread does sysfs I/O. */
void sysfs_inject_set(const struct sysfs_injector *injector);
