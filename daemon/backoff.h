/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "time-util.h"

#define BACKOFF_MULTIPLIER_MAX 1000.0
/* Consecutive bad attempts are counted up to this and then stay there. */
#define BACKOFF_BAD_MAX (1u << 30)

/*
 * Delay between suspend attempts. After n consecutive bad attempts the delay
 * is base while n <= flat, then min(base * multiplier^(n - flat), max).
 * multiplier is from 1 to BACKOFF_MULTIPLIER_MAX. The delay never exceeds
 * max and is never computed through inf or NaN, whatever n is.
 */
struct backoff {
	usec_t base;
	usec_t max;
	double multiplier;
	unsigned flat;
	unsigned bad;
};

void backoff_init(struct backoff *b, usec_t base, double multiplier, unsigned flat, usec_t max);
usec_t backoff_delay(const struct backoff *b);
void backoff_bad(struct backoff *b);
void backoff_good(struct backoff *b);
