/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysfs number readers on arbitrary file contents, through a real file
 * in a private fixture root. Each reader is checked against an independent
 * model of the format the kernel writes: decimal digits (and a '-' for
 * signed values), nothing else but the trailing newline sysfs_read() strips.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "log.h"
#include "sysfs.h"

#define REL SYSFS_POWER_WAKEUP_COUNT

static char *root, *file;
static int fd = -1;

static void cleanup(void)
{
	char *p;

	if (fd >= 0)
		close(fd);
	if (file)
		unlink(file);
	if (root && asprintf(&p, "%s/sys/power", root) >= 0) {
		rmdir(p);
		free(p);
		if (asprintf(&p, "%s/sys", root) >= 0) {
			rmdir(p);
			free(p);
		}
		rmdir(root);
	}
	free(file);
	free(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char *p;

	(void)argc;
	(void)argv;
	log_set_max_level(-1);
	if (asprintf(&root, "%s/autosleep-fuzz-sysfs.XXXXXX", tmp ? tmp : "/tmp") < 0 || !mkdtemp(root))
		abort();
	atexit(cleanup);
	if (asprintf(&p, "%s/sys", root) < 0 || mkdir(p, 0755) < 0)
		abort();
	free(p);
	if (asprintf(&p, "%s/sys/power", root) < 0 || mkdir(p, 0755) < 0)
		abort();
	free(p);
	if (sysfs_set_root(root) < 0 || sysfs_path(REL, &file) < 0)
		abort();
	/*
	 * One fd, rewritten in place: O_TRUNC on every run makes ext4 flush at
	 * close (auto_da_alloc) and costs two orders of magnitude in speed.
	 */
	fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		abort();
	return 0;
}

/* What sysfs_read() into a 64-byte buffer yields: 63 bytes at most, trailing '\n' and ' ' cut. */
static size_t model_text(const uint8_t *data, size_t size, char *text)
{
	size_t n = size < 63 ? size : 63;

	memcpy(text, data, n);
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
		n--;
	text[n] = 0;
	return n;
}

/* 1 and the value if text (n bytes) is a decimal that fits; 0 if not. */
static int model_u64(const char *text, size_t n, uint64_t *ret)
{
	uint64_t v = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (text[i] < '0' || text[i] > '9')
			return 0;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(text[i] - '0'), &v))
			return 0;
	}
	*ret = v;
	return 1;
}

static int model_int(const char *text, size_t n, int *ret)
{
	bool neg = n > 0 && text[0] == '-';
	uint64_t v;

	if (!model_u64(text + neg, n - neg, &v))
		return 0;
	if (neg ? v > (uint64_t)INT_MAX + 1 : v > (uint64_t)INT_MAX)
		return 0;
	*ret = neg ? (int)(-(int64_t)v) : (int)v;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[64];
	size_t n;
	uint64_t u = 0, mu = 0;
	int i = 0, mi = 0, r;

	if (pwrite(fd, data, size, 0) != (ssize_t)size || ftruncate(fd, (off_t)size) < 0)
		abort();
	n = model_text(data, size, text);

	r = sysfs_read_u64(REL, &u);
	FUZZ_CHECK(r == 0 || r == -EBADMSG);
	FUZZ_CHECK((r == 0) == (model_u64(text, n, &mu) == 1));
	FUZZ_CHECK(r < 0 || u == mu);

	r = sysfs_read_int(REL, &i);
	FUZZ_CHECK(r == 0 || r == -EBADMSG);
	FUZZ_CHECK((r == 0) == (model_int(text, n, &mi) == 1));
	FUZZ_CHECK(r < 0 || i == mi);
	return 0;
}
