/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "observers.h"

static int find(const struct observers *o, observer_fn fn, void *userdata)
{
	for (unsigned i = 0; i < o->n; i++)
		if (!o->list[i].gone && o->list[i].fn == fn && o->list[i].userdata == userdata)
			return (int)i;
	return -ENOENT;
}

int observers_add(struct observers *o, observer_fn fn, void *userdata)
{
	if (o->n >= ELEMENTSOF(o->list))
		return -ENOSPC;
	o->list[o->n].fn = fn;
	o->list[o->n].userdata = userdata;
	o->list[o->n].gone = false;
	o->n++;
	return 0;
}

static void drop(struct observers *o, unsigned i)
{
	memmove(&o->list[i], &o->list[i + 1], (o->n - i - 1) * sizeof(o->list[0]));
	o->n--;
}

void observers_remove(struct observers *o, observer_fn fn, void *userdata)
{
	int i = find(o, fn, userdata);

	if (i < 0)
		return;
	/* A round walks the list by index: moving entries now would skip one or call one twice. */
	if (o->depth > 0) {
		o->list[i].gone = true;
		o->dirty = true;
		return;
	}
	drop(o, (unsigned)i);
}

unsigned observers_count(const struct observers *o)
{
	unsigned n = 0;

	for (unsigned i = 0; i < o->n; i++)
		n += !o->list[i].gone;
	return n;
}

void observers_notify(struct observers *o, bool reverse, void (*call)(observer_fn fn, void *userdata, void *ctx),
		      void *ctx)
{
	/* Those that join during the round sit past n0, and wait for the next one. */
	unsigned n0 = o->n;

	o->depth++;
	for (unsigned k = 0; k < n0; k++) {
		unsigned i = reverse ? n0 - 1 - k : k;

		if (!o->list[i].gone)
			call(o->list[i].fn, o->list[i].userdata, ctx);
	}
	if (--o->depth > 0 || !o->dirty)
		return;
	o->dirty = false;
	for (unsigned i = o->n; i-- > 0;)
		if (o->list[i].gone)
			drop(o, i);
}
