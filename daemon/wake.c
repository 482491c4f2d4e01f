/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "wake.h"

int wake_observe(struct wake_observers *o, wake_observer_fn fn, void *userdata)
{
	if (o->n >= ELEMENTSOF(o->list))
		return -ENOSPC;
	o->list[o->n].fn = fn;
	o->list[o->n].userdata = userdata;
	o->n++;
	return 0;
}

void wake_unobserve(struct wake_observers *o, wake_observer_fn fn, void *userdata)
{
	for (unsigned i = 0; i < o->n; i++)
		if (o->list[i].fn == fn && o->list[i].userdata == userdata) {
			memmove(&o->list[i], &o->list[i + 1], (o->n - i - 1) * sizeof(o->list[0]));
			o->n--;
			return;
		}
}

static void wake_notify(struct wake_observers *o, enum wake_event ev, struct wake *w)
{
	for (unsigned i = 0; i < o->n; i++)
		o->list[i].fn(ev, w, o->list[i].userdata);
}

void wake_identify(struct wake_observers *o, struct wake *w, char *reason, size_t size, usec_t now,
		   usec_t duration, bool soak)
{
	char kernel[96];

	*w = (struct wake){ .reason = reason, .soak = soak, .since = usec_sub_unsigned(now, duration) };
	wake_notify(o, WAKE_IDENTIFY, w);
	if (!w->timer[0])
		return;
	snprintf(kernel, sizeof(kernel), "%s", reason);
	/* A long timer name cuts the kernel's part short: the timer is the news. */
	if (snprintf(reason, size, "%s (%s)", w->timer, kernel) >= (int)size)
		log_debug("Wake reason cut to '%s'", reason);
}

void wake_resumed(struct wake_observers *o, struct wake *w)
{
	wake_notify(o, WAKE_RESUMED, w);
}
