/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;

#define USEC_INFINITY ((usec_t)UINT64_MAX)
#define USEC_PER_MSEC ((usec_t)1000ULL)
#define USEC_PER_SEC ((usec_t)1000000ULL)
#define NSEC_PER_USEC ((uint64_t)1000ULL)

/* Saturating: time values come from clients and config files, and must never wrap. */
static inline usec_t usec_add(usec_t a, usec_t b)
{
	return a > USEC_INFINITY - b ? USEC_INFINITY : a + b;
}

static inline usec_t usec_sub(usec_t a, usec_t b)
{
	return a > b ? a - b : 0;
}

usec_t now(clockid_t clock);
usec_t timespec_load(const struct timespec *ts);
struct timespec timespec_from_usec(usec_t u);

/* "100ms", "1.5s", "2min", "1h", "infinity"; a bare number means seconds. */
int parse_sec(const char *s, usec_t *ret);

/* Human output like "1min 2.500s"; buf must hold at least 32 bytes. */
const char *format_timespan(char *buf, size_t size, usec_t u);
#define FORMAT_TIMESPAN_MAX 64
