/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/*
 * A short list of observers, called in the order they were added or in
 * reverse. Like iwd's watchlist, an observer may leave, and another join,
 * while a notification runs: one that leaves is not called again (not even
 * later in the same round), the others are all called, none twice, and one
 * that joins is first called in the next round. Removal during a round only
 * marks the entry; the round that began first compacts the list as it ends.
 *
 * Each user keeps its own callback type: it is stored as observer_fn and
 * called back through the user's own trampoline, which casts it back.
 */
#define OBSERVERS_MAX 8

typedef void (*observer_fn)(void);

struct observers {
	struct {
		observer_fn fn;
		void *userdata;
		bool gone;
	} list[OBSERVERS_MAX];
	unsigned n;     /* entries in use, those marked gone too */
	unsigned depth; /* rounds under way (an observer may start another) */
	bool dirty;     /* an entry was marked gone during a round */
};

/* 0, or -ENOSPC past OBSERVERS_MAX (entries marked gone take room until their round ends). */
int observers_add(struct observers *o, observer_fn fn, void *userdata);
/* Remove the first fn with userdata, if there; during a round it is only marked, and not called again. */
void observers_remove(struct observers *o, observer_fn fn, void *userdata);
/* How many observers are there (those marked gone not counted). */
unsigned observers_count(const struct observers *o);

/*
 * One round: call(fn, userdata, ctx) for each observer there when it began
 * and not gone since, in the order added (reverse: the opposite order).
 */
void observers_notify(struct observers *o, bool reverse, void (*call)(observer_fn fn, void *userdata, void *ctx),
		      void *ctx);
