/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "time-util.h"

usec_t timespec_load(const struct timespec *ts)
{
	if (ts->tv_sec < 0 || ts->tv_nsec < 0)
		return 0;
	return usec_add(usec_mul((usec_t)ts->tv_sec, USEC_PER_SEC), (usec_t)ts->tv_nsec / NSEC_PER_USEC);
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

int usec_to_nsec(usec_t u, nsec_t *ret)
{
	nsec_t n;

	if (u == USEC_INFINITY || __builtin_mul_overflow(u, NSEC_PER_USEC, &n))
		return -ERANGE;
	*ret = n;
	return 0;
}

/*
 * Fractional digits kept: a part's fraction is frac / 10^FRAC_DIGITS of the
 * unit. 12 digits resolve 0.0036 us of an hour; later digits only decide
 * whether the part is non-zero.
 */
#define FRAC_DIGITS 12

/* round(frac / 10^FRAC_DIGITS * factor) in integers; factor is mult * 10^e. */
static usec_t frac_to_usec(uint64_t frac, usec_t factor)
{
	uint64_t div = 1;
	unsigned e = 0;

	while (e < FRAC_DIGITS && factor % 10 == 0) {
		factor /= 10;
		e++;
	}
	for (unsigned i = e; i < FRAC_DIGITS; i++)
		div *= 10;
	/* frac < 10^12 and factor <= 36 after the loop for our units: no overflow. */
	return (frac * factor + div / 2) / div;
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
		{ "m", USEC_PER_MINUTE },
		{ "min", USEC_PER_MINUTE },
		{ "h", USEC_PER_HOUR },
		{ "hour", USEC_PER_HOUR },
	};
	usec_t total = 0;
	const char *p = s;
	bool any = false;

	while (isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "infinity", 8) == 0) {
		for (p += 8; isspace((unsigned char)*p); p++)
			;
		if (*p)
			return -EINVAL;
		*ret = USEC_INFINITY;
		return 0;
	}
	/* Allow "1min 30s" like systemd, one number+unit at a time. */
	while (*p) {
		uint64_t whole = 0, frac = 0;
		unsigned nfrac = 0;
		bool nonzero = false;
		usec_t factor = 0, part;
		size_t ulen = 0;

		/* Digits only: strtod() would take "0x10", "1e-9", "inf" and "nan". */
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (__builtin_mul_overflow(whole, 10, &whole) ||
			    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
				return -ERANGE;
			nonzero = nonzero || *p != '0';
		}
		if (*p == '.') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			for (; isdigit((unsigned char)*p); p++) {
				if (nfrac < FRAC_DIGITS) {
					frac = frac * 10 + (uint64_t)(*p - '0');
					nfrac++;
				}
				nonzero = nonzero || *p != '0';
			}
			for (; nfrac < FRAC_DIGITS; nfrac++)
				frac *= 10;
		}
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
		if (__builtin_mul_overflow(whole, factor, &part) ||
		    __builtin_add_overflow(part, frac_to_usec(frac, factor), &part) ||
		    __builtin_add_overflow(total, part, &total) || total == USEC_INFINITY)
			return -ERANGE;
		/* "0.0000001s" must not quietly mean 0, which turns things off. */
		if (nonzero && part == 0)
			return -ERANGE;
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
