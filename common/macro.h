/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand ownership of a pointer out of a _cleanup_ variable. */
#define TAKE_PTR(p)                             \
	({                                      \
		__typeof__(p) _p_ = (p);        \
		(p) = NULL;                     \
		_p_;                            \
	})

#define TAKE_FD(fd)                             \
	({                                      \
		int _fd_ = (fd);                \
		(fd) = -EBADF;                  \
		_fd_;                           \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd)
{
	if (fd >= 0) {
		/* close() must not clobber errno of an earlier failure we are reporting. */
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -EBADF;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline const char *strna(const char *s)
{
	return s ? s : "n/a";
}

static inline int negative_errno(void)
{
	/* Some libc paths return -1 without setting errno; never report success. */
	return errno > 0 ? -errno : -EIO;
}
