/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "time-util.h"

/*
 * Delay between suspend attempts. After n consecutive bad attempts the delay
 * is base while n <= flat, then min(base * multiplier^(n - flat), max).
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
