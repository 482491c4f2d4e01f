/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "wake.h"

int wake_observe(struct wake_observers *o, wake_observer_fn fn, void *userdata)
{
	if (observers_count(&o->list) >= WAKE_OBSERVERS_MAX)
		return -ENOSPC;
	return observers_add(&o->list, (observer_fn)fn, userdata);
}

void wake_unobserve(struct wake_observers *o, wake_observer_fn fn, void *userdata)
{
	observers_remove(&o->list, (observer_fn)fn, userdata);
}

struct wake_round {
	enum wake_event ev;
	struct wake *w;
};

static void call_observer(observer_fn fn, void *userdata, void *ctx)
{
	const struct wake_round *r = ctx;

	((wake_observer_fn)fn)(r->ev, r->w, userdata);
}

static void wake_notify(struct wake_observers *o, enum wake_event ev, struct wake *w)
{
	observers_notify(&o->list, false, call_observer, &(struct wake_round){ ev, w });
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
