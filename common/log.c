/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "escape.h"
#include "log.h"

static int max_level = LOG_INFO;
static const char *ident;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_max_level(int level)
{
	max_level = level;
}

void log_set_ident(const char *s)
{
	ident = s;
}

/* journald sets JOURNAL_STREAM to "dev:ino" of the stream it gave us. */
static bool stderr_is_journal(void)
{
	static int cached = -1;
	const char *e;
	unsigned long long dev, ino;
	struct stat st;

	if (cached >= 0)
		return cached;
	cached = 0;
	e = getenv("JOURNAL_STREAM");
	if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0)
		cached = (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	return cached;
}

/* Each byte of a 2048-byte message can grow to a four-byte escape. */
static char line_buf[4 * 2048 + 1];

static void write_line(int level, const char *msg)
{
	/* One lock so lines from the suspender thread never interleave with ours. */
	pthread_mutex_lock(&log_lock);
	if (!isatty(STDERR_FILENO))
		fprintf(stderr, "<%d>", level);
	if (ident && !stderr_is_journal())
		fprintf(stderr, "%s: ", ident);
	/*
	 * Messages carry strings from outside (an inhibitor's why, a device's
	 * name). Escaped here, at the one place a line is written, none of them
	 * can end the line and start an entry of its own at "<0>", nor reach a
	 * terminal as an escape sequence.
	 */
	fprintf(stderr, "%s\n", escape_untrusted(line_buf, sizeof(line_buf), msg));
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}

int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int saved = errno;

	(void)file;
	(void)line;
	if (level > max_level)
		return error < 0 ? error : -abs(error);
	/* %m in fmt refers to the error we were given, not to whatever errno holds. */
	if (error != 0)
		errno = abs(error);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	errno = saved;
	write_line(level, buf);
	return error < 0 ? error : -abs(error);
}

void log_struct_internal(int level, const char *message, ...)
{
	struct iovec iov[32];
	char prio[16], msg[sizeof("MESSAGE=") + sizeof(line_buf)], *e;
	unsigned n = 0;
	const char *f;
	va_list ap;

	if (level > max_level)
		return;
	if (!stderr_is_journal()) {
		write_line(level, message);
		return;
	}
	snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
	/* The same text as on the stream: journalctl prints MESSAGE= to terminals. */
	e = stpcpy(msg, "MESSAGE=");
	escape_untrusted(e, sizeof(msg) - (size_t)(e - msg), message);
	iov[n++] = (struct iovec){ .iov_base = prio, .iov_len = strlen(prio) };
	iov[n++] = (struct iovec){ .iov_base = msg, .iov_len = strlen(msg) };
	va_start(ap, message);
	while ((f = va_arg(ap, const char *)) && n < ELEMENTSOF(iov))
		iov[n++] = (struct iovec){ .iov_base = (char *)f, .iov_len = strlen(f) };
	va_end(ap);
	if (sd_journal_sendv(iov, n) < 0)
		write_line(level, message);
}

int log_level_from_string(const char *s)
{
	static const char *const names[] = {
		"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
	};

	for (unsigned i = 0; i < ELEMENTSOF(names); i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}
