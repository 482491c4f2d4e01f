/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <math.h>

#include "backoff.h"
#include "macro.h"

void backoff_init(struct backoff *b, usec_t base, double multiplier, unsigned flat, usec_t max)
{
	/* Also false for NaN, which must never reach the arithmetic below. */
	assert(multiplier >= 1.0 && multiplier <= BACKOFF_MULTIPLIER_MAX);
	*b = (struct backoff){ .base = base, .max = max, .multiplier = multiplier, .flat = flat };
}

usec_t backoff_delay(const struct backoff *b)
{
	unsigned e;
	double d;

	if (b->base == 0 || b->base >= b->max)
		return MIN(b->base, b->max);
	if (b->bad <= b->flat || b->multiplier == 1.0)
		return b->base;
	e = b->bad - b->flat;
	/*
	 * Decide the cap with logarithms before any power is taken: base and max
	 * are at least 1 here and the multiplier is in (1, 1000], so every value
	 * is finite, and pow() below stays under max and cannot overflow. No
	 * inf, and no 0 * inf = NaN, on any path.
	 */
	if ((double)e * log(b->multiplier) >= log((double)b->max) - log((double)b->base))
		return b->max;
	d = (double)b->base * pow(b->multiplier, (double)e);
	if (!(d < (double)b->max))
		return b->max;
	return (usec_t)d;
}

void backoff_bad(struct backoff *b)
{
	/* Saturate: a machine that fails for years must not wrap to 0. */
	if (b->bad < BACKOFF_BAD_MAX)
		b->bad++;
}

void backoff_good(struct backoff *b)
{
	b->bad = 0;
}
