/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event-util.h"

int event_reset_time(sd_event *e, sd_event_source **s, clockid_t clock, uint64_t usec, uint64_t accuracy,
		     sd_event_time_handler_t callback, void *userdata, bool relative)
{
	int r;

	if (!*s)
		return relative ? sd_event_add_time_relative(e, s, clock, usec, accuracy, callback, userdata)
				: sd_event_add_time(e, s, clock, usec, accuracy, callback, userdata);
	r = relative ? sd_event_source_set_time_relative(*s, usec) : sd_event_source_set_time(*s, usec);
	if (r >= 0)
		r = sd_event_source_set_time_accuracy(*s, accuracy);
	if (r >= 0)
		r = sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
	if (r < 0)
		(void)sd_event_source_set_enabled(*s, SD_EVENT_OFF);
	return r;
}

bool event_source_armed(sd_event_source *s)
{
	return s && sd_event_source_get_enabled(s, NULL) > 0;
}
