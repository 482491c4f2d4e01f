/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The config parser on arbitrary text, through the same entry point that
 * config_parse_file() uses. Beyond not crashing or leaking: whatever is
 * accepted must satisfy the limits the rest of the daemon relies on.
 */
#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "config.h"
#include "fuzz.h"
#include "log.h"
#include "time-util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Every rejected input logs an error; millions of them say nothing. */
	log_set_max_level(-1);
	return 0;
}

static void check_accepted(const struct config *c)
{
	static const unsigned bad[] = { 0, 1, 2, 64, 1000, 1000001, BACKOFF_BAD_MAX };
	struct backoff b;
	nsec_t ns;

	FUZZ_CHECK(c->backoff_base >= CONFIG_DELAY_MIN);
	FUZZ_CHECK(c->backoff_base <= c->backoff_max);
	FUZZ_CHECK(c->backoff_max <= CONFIG_TIME_MAX);
	FUZZ_CHECK(c->short_suspend <= CONFIG_TIME_MAX);
	FUZZ_CHECK(c->idle_timeout <= CONFIG_TIME_MAX);
	FUZZ_CHECK(c->resume_grace <= CONFIG_TIME_MAX);
	FUZZ_CHECK(usec_to_nsec(c->idle_timeout, &ns) == 0);
	FUZZ_CHECK(usec_to_nsec(c->resume_grace, &ns) == 0);
	FUZZ_CHECK(c->backoff_multiplier >= 1.0 && c->backoff_multiplier <= BACKOFF_MULTIPLIER_MAX);
	FUZZ_CHECK(c->backoff_flat_attempts <= 1000000);
	FUZZ_CHECK(c->max_locks_per_user >= 1 && c->max_locks_per_user <= WAKE_LOCKS_MAX);
	FUZZ_CHECK(wake_lock_name_is_valid(c->wake_lock_name));
	FUZZ_CHECK(strlen(c->wake_lock_name) + strlen(".activity") <= WAKE_LOCK_NAME_MAX);

	/* The backoff the suspender would build from it: bounded, and no inf or NaN made on the way. */
	backoff_init(&b, c->backoff_base, c->backoff_multiplier, c->backoff_flat_attempts, c->backoff_max);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		usec_t d;

		b.bad = bad[i];
		feclearexcept(FE_ALL_EXCEPT);
		d = backoff_delay(&b);
		FUZZ_CHECK(!fetestexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO));
		FUZZ_CHECK(d >= c->backoff_base && d <= c->backoff_max);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char s[256];
	usec_t u;

	config_init(&c);
	if (config_parse_buffer(&c, "fuzz.conf", (const char *)data, size) >= 0 && config_verify(&c) >= 0)
		check_accepted(&c);
	config_done(&c);

	/* parse_sec() on its own, on the start of the input as a string. */
	size = size < sizeof(s) ? size : sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = 0;
	if (parse_sec(s, &u) >= 0)
		FUZZ_CHECK(u != USEC_INFINITY || strstr(s, "infinity"));
	return 0;
}
