/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Medians and tails of latency samples, for the benchmarks on the host and in the VM. */
struct percentiles {
	uint64_t p50, p99, max;
	unsigned n;
};

static inline int percentile_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* v is left as it was; n == 0 gives zeros. */
static inline struct percentiles percentiles_of(const uint64_t *v, unsigned n)
{
	struct percentiles p = { .n = n };
	uint64_t *s;

	if (n == 0 || !(s = malloc(n * sizeof(*s))))
		return p;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), percentile_cmp);
	p.p50 = s[n / 2];
	p.p99 = s[(size_t)n * 99 / 100 < n - 1 ? (size_t)n * 99 / 100 : n - 1];
	p.max = s[n - 1];
	free(s);
	return p;
}
