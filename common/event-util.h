/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <systemd/sd-event.h>

/*
 * Arm the one-shot timer *s for usec on clock, from now if relative, making
 * it on first use and moving it if it is armed: systemd's event_reset_time().
 * Every timer the daemon re-arms goes through here, so none makes a second
 * source or keeps an old due time. 0, or -errno (an existing *s is then off,
 * so it never fires at a time nobody asked for).
 */
int event_reset_time(sd_event *e, sd_event_source **s, clockid_t clock, uint64_t usec, uint64_t accuracy,
		     sd_event_time_handler_t callback, void *userdata, bool relative);

/* Whether *s exists and is armed (an armed timer that must not move is left alone). */
bool event_source_armed(sd_event_source *s);
