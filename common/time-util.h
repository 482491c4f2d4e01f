/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;
typedef uint64_t nsec_t;

#define USEC_INFINITY ((usec_t)UINT64_MAX)
#define NSEC_INFINITY ((nsec_t)UINT64_MAX)
#define USEC_PER_MSEC ((usec_t)1000ULL)
#define USEC_PER_SEC ((usec_t)1000000ULL)
#define USEC_PER_MINUTE ((usec_t)(60ULL * USEC_PER_SEC))
#define USEC_PER_HOUR ((usec_t)(3600ULL * USEC_PER_SEC))
#define USEC_PER_DAY ((usec_t)(24ULL * USEC_PER_HOUR))
#define NSEC_PER_USEC ((nsec_t)1000ULL)

usec_t now(clockid_t clock);
usec_t timespec_load(const struct timespec *ts);
struct timespec timespec_from_usec(usec_t u);

/*
 * Saturating arithmetic: USEC_INFINITY means "never", so a sum or product
 * that does not fit becomes "never" rather than wrapping to "soon".
 */
static inline usec_t usec_add(usec_t a, usec_t b)
{
	usec_t s;

	if (__builtin_add_overflow(a, b, &s) || s == USEC_INFINITY)
		return USEC_INFINITY;
	return s;
}

/* a - b, 0 if b is later; infinity minus anything stays infinity. */
static inline usec_t usec_sub_unsigned(usec_t a, usec_t b)
{
	if (a == USEC_INFINITY)
		return USEC_INFINITY;
	return a > b ? a - b : 0;
}

static inline usec_t usec_mul(usec_t a, uint64_t k)
{
	usec_t p;

	if (a == USEC_INFINITY || __builtin_mul_overflow(a, k, &p))
		return USEC_INFINITY;
	return p;
}

/*
 * Exact conversion for interfaces that take nanoseconds. -ERANGE when u is
 * USEC_INFINITY or u * 1000 does not fit 64 bits; ret is untouched then.
 */
int usec_to_nsec(usec_t u, nsec_t *ret);

/*
 * A time span in a strict decimal grammar: one or more "<digits>[.<digits>]<unit>"
 * parts, optionally separated by whitespace ("1min 30s"), where unit is
 * us, usec, ms, msec, s, sec, m, min, h or hour, and a missing unit means
 * seconds; or the literal "infinity". No sign, hex, exponent, "inf" or "nan".
 * -EINVAL for anything else; -ERANGE when the total does not fit, or when a
 * non-zero part rounds to 0 us (so "0.0000001s" is never silently 0).
 */
int parse_sec(const char *s, usec_t *ret);

/* Human output like "1min 2.500s"; buf must hold at least 32 bytes. */
const char *format_timespan(char *buf, size_t size, usec_t u);
#define FORMAT_TIMESPAN_MAX 64
