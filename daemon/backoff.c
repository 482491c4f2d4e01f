/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <math.h>

#include "backoff.h"

void backoff_init(struct backoff *b, usec_t base, double multiplier, unsigned flat, usec_t max)
{
	assert(multiplier >= 1.0);
	*b = (struct backoff){ .base = base, .max = max, .multiplier = multiplier, .flat = flat };
}

usec_t backoff_delay(const struct backoff *b)
{
	double d;

	if (b->bad <= b->flat)
		return b->base < b->max ? b->base : b->max;
	/* pow() overflows to inf long before the cap matters; compare in double. */
	d = (double)b->base * pow(b->multiplier, (double)(b->bad - b->flat));
	if (!(d < (double)b->max))
		return b->max;
	return (usec_t)d;
}

void backoff_bad(struct backoff *b)
{
	/* Saturate: a machine that fails for years must not wrap to 0. */
	if (b->bad < 1u << 30)
		b->bad++;
}

void backoff_good(struct backoff *b)
{
	b->bad = 0;
}
