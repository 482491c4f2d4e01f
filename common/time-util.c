/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "time-util.h"

usec_t timespec_load(const struct timespec *ts)
{
	return (usec_t)ts->tv_sec * USEC_PER_SEC + (usec_t)ts->tv_nsec / NSEC_PER_USEC;
}

struct timespec timespec_from_usec(usec_t u)
{
	return (struct timespec){
		.tv_sec = (time_t)(u / USEC_PER_SEC),
		.tv_nsec = (long)((u % USEC_PER_SEC) * NSEC_PER_USEC),
	};
}

usec_t now(clockid_t clock)
{
	struct timespec ts;

	/* Only programmer errors (a bad clock id) can make this fail. */
	if (clock_gettime(clock, &ts) < 0)
		abort();
	return timespec_load(&ts);
}

int parse_sec(const char *s, usec_t *ret)
{
	static const struct {
		const char *suffix;
		usec_t factor;
	} units[] = {
		{ "us", 1 },
		{ "usec", 1 },
		{ "ms", USEC_PER_MSEC },
		{ "msec", USEC_PER_MSEC },
		{ "s", USEC_PER_SEC },
		{ "sec", USEC_PER_SEC },
		{ "", USEC_PER_SEC },
		{ "m", 60 * USEC_PER_SEC },
		{ "min", 60 * USEC_PER_SEC },
		{ "h", 3600 * USEC_PER_SEC },
		{ "hour", 3600 * USEC_PER_SEC },
	};
	usec_t total = 0;
	const char *p = s;
	bool any = false;

	while (isspace((unsigned char)*p))
		p++;
	if (strcmp(p, "infinity") == 0) {
		*ret = USEC_INFINITY;
		return 0;
	}
	/* Allow "1min 30s" like systemd, one number+unit at a time. */
	while (*p) {
		char *end;
		double v;
		size_t ulen = 0;
		usec_t factor = 0;

		if (*p == '-' || *p == '+')
			return -EINVAL;
		errno = 0;
		v = strtod(p, &end);
		if (errno != 0 || end == p || !isfinite(v) || v < 0)
			return -EINVAL;
		p = end;
		while (isspace((unsigned char)*p))
			p++;
		while (isalpha((unsigned char)p[ulen]))
			ulen++;
		for (size_t i = 0; i < ELEMENTSOF(units); i++)
			if (strlen(units[i].suffix) == ulen && strncmp(p, units[i].suffix, ulen) == 0) {
				factor = units[i].factor;
				break;
			}
		if (factor == 0)
			return -EINVAL;
		if (v * (double)factor >= (double)(USEC_INFINITY - total))
			return -ERANGE;
		total += (usec_t)llround(v * (double)factor);
		p += ulen;
		while (isspace((unsigned char)*p))
			p++;
		any = true;
	}
	if (!any)
		return -EINVAL;
	*ret = total;
	return 0;
}

const char *format_timespan(char *buf, size_t size, usec_t u)
{
	if (u == USEC_INFINITY)
		snprintf(buf, size, "infinity");
	else if (u >= 60 * USEC_PER_SEC && u % (60 * USEC_PER_SEC) == 0)
		snprintf(buf, size, "%llumin", (unsigned long long)(u / (60 * USEC_PER_SEC)));
	else if (u >= 60 * USEC_PER_SEC)
		snprintf(buf, size, "%llumin %.3fs", (unsigned long long)(u / (60 * USEC_PER_SEC)),
			 (double)(u % (60 * USEC_PER_SEC)) / USEC_PER_SEC);
	else if (u >= USEC_PER_SEC)
		snprintf(buf, size, "%.3fs", (double)u / USEC_PER_SEC);
	else if (u >= USEC_PER_MSEC)
		snprintf(buf, size, "%.1fms", (double)u / USEC_PER_MSEC);
	else
		snprintf(buf, size, "%lluus", (unsigned long long)u);
	return buf;
}
