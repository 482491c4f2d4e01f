/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "sysfs.h"
#include "wakeup-sources.h"

static uint64_t read_count(const char *dir, const char *attr)
{
	char rel[128];
	uint64_t v;

	snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, dir, attr);
	if (sysfs_read_u64(rel, &v) < 0)
		return WAKEUP_SOURCE_COUNT_UNKNOWN;
	return v;
}

/* The first rtcN below the source's device, if it is an RTC. */
static void read_rtc(const char *dir, char *buf, size_t size)
{
	_cleanup_free_ char *path = NULL;
	char rel[128];
	struct dirent *de;
	DIR *d;

	buf[0] = 0;
	snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, dir, "device/rtc");
	if (sysfs_path(rel, &path) < 0)
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, "rtc", 3) == 0 && strlen(de->d_name) < size) {
			snprintf(buf, size, "%s", de->d_name);
			break;
		}
	closedir(d);
}

static int cmp_dir(const void *a, const void *b)
{
	const struct wakeup_source_stat *x = a, *y = b;

	return strcmp(x->dir, y->dir);
}

int wakeup_sources_read(struct wakeup_sources *ret)
{
	_cleanup_free_ char *path = NULL;
	struct wakeup_source_stat *items = NULL;
	size_t n = 0, allocated = 0;
	struct dirent *de;
	DIR *d;
	int r;

	r = sysfs_path(SYSFS_CLASS_WAKEUP, &path);
	if (r < 0)
		return r;
	d = opendir(path);
	if (!d)
		return negative_errno();
	/* Entries are symlinks into /sys/devices: do not trust d_type, just try the files. */
	while ((de = readdir(d))) {
		struct wakeup_source_stat *w;
		char rel[128];

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(w->dir))
			continue;
		if (n == allocated) {
			size_t m = allocated ? allocated * 2 : 32;
			struct wakeup_source_stat *p = reallocarray(items, m, sizeof(*items));

			if (!p) {
				free(items);
				closedir(d);
				return -ENOMEM;
			}
			items = p;
			allocated = m;
		}
		w = &items[n];
		memset(w, 0, sizeof(*w));
		snprintf(w->dir, sizeof(w->dir), "%s", de->d_name);
		snprintf(rel, sizeof(rel), SYSFS_CLASS_WAKEUP_ATTR_FMT, w->dir, "name");
		/* Gone since readdir(), or not a source at all. */
		if (sysfs_read(rel, w->name, sizeof(w->name)) < 0)
			continue;
		w->event_count = read_count(w->dir, "event_count");
		w->wakeup_count = read_count(w->dir, "wakeup_count");
		w->active_count = read_count(w->dir, "active_count");
		w->total_time_ms = read_count(w->dir, "total_time_ms");
		read_rtc(w->dir, w->rtc, sizeof(w->rtc));
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(items, n, sizeof(*items), cmp_dir);
	*ret = (struct wakeup_sources){ .items = items, .n = n };
	return 0;
}

void wakeup_sources_clear(struct wakeup_sources *w)
{
	if (!w)
		return;
	free(w->items);
	*w = (struct wakeup_sources){};
}

static const struct wakeup_source_stat *find(const struct wakeup_sources *w, const struct wakeup_source_stat *x)
{
	struct wakeup_source_stat *hit;

	if (!w || w->n == 0)
		return NULL;
	hit = bsearch(x, w->items, w->n, sizeof(*x), cmp_dir);
	/* The same wakeupN with another name is a new source on a reused id. */
	if (hit && strcmp(hit->name, x->name) != 0)
		return NULL;
	return hit;
}

static bool count_moved(uint64_t before, uint64_t after)
{
	if (after == WAKEUP_SOURCE_COUNT_UNKNOWN)
		return false;
	if (before == WAKEUP_SOURCE_COUNT_UNKNOWN)
		return after > 0;
	return after != before;
}

static bool excluded(char *const *exclude, const char *name)
{
	for (char *const *e = exclude; e && *e; e++)
		if (strcmp(*e, name) == 0)
			return true;
	return false;
}

static size_t list_moved(const struct wakeup_sources *before, const struct wakeup_sources *after,
			 char *const *exclude, bool by_wakeup_count, char *buf, size_t size)
{
	size_t found = 0, len = 0;

	if (size > 0)
		buf[0] = 0;
	for (size_t i = 0; after && i < after->n; i++) {
		const struct wakeup_source_stat *a = &after->items[i], *b = find(before, a);
		uint64_t was, is;

		is = by_wakeup_count ? a->wakeup_count : a->event_count;
		was = b ? (by_wakeup_count ? b->wakeup_count : b->event_count) : WAKEUP_SOURCE_COUNT_UNKNOWN;
		if (!count_moved(was, is) || excluded(exclude, a->name))
			continue;
		if (len < size) {
			int k = a->rtc[0] ? snprintf(buf + len, size - len, "%s%s (%s)", found ? ", " : "", a->rtc, a->name)
					  : snprintf(buf + len, size - len, "%s%s", found ? ", " : "", a->name);

			len = k < 0 ? size : MIN(size, len + (size_t)k);
		}
		found++;
	}
	return found;
}

size_t wakeup_sources_moved(const struct wakeup_sources *before, const struct wakeup_sources *after,
			    char *const *exclude, char *buf, size_t size)
{
	size_t n;

	n = list_moved(before, after, exclude, true, buf, size);
	if (n > 0)
		return n;
	return list_moved(before, after, exclude, false, buf, size);
}

static int cmp_blocker(const void *a, const void *b)
{
	const struct wakeup_blocker *x = a, *y = b;

	return x->ms < y->ms ? 1 : x->ms > y->ms ? -1 : strcmp(x->name, y->name);
}

size_t wakeup_sources_blockers(const struct wakeup_sources *before, const struct wakeup_sources *after,
			       char *const *exclude, struct wakeup_blocker *ret, size_t max)
{
	struct wakeup_blocker *all;
	size_t n = 0;

	if (!after || after->n == 0)
		return 0;
	all = calloc(after->n, sizeof(*all));
	if (!all)
		return 0;
	for (size_t i = 0; i < after->n; i++) {
		const struct wakeup_source_stat *a = &after->items[i], *b = find(before, a);
		uint64_t was = b ? b->total_time_ms : 0, is = a->total_time_ms;
		bool activated;

		if (is == WAKEUP_SOURCE_COUNT_UNKNOWN || was == WAKEUP_SOURCE_COUNT_UNKNOWN || excluded(exclude, a->name))
			continue;
		/* A source active for less than a millisecond still held us up if it was activated. */
		activated = count_moved(b ? b->active_count : WAKEUP_SOURCE_COUNT_UNKNOWN, a->active_count);
		if (is <= was && !activated)
			continue;
		/* The device name may be cut short to fit: the rtcN in front is what tells. */
		if (a->rtc[0])
			snprintf(all[n].name, sizeof(all[n].name), "%s (%.*s)", a->rtc,
				 (int)(sizeof(all[n].name) - strlen(a->rtc) - 4), a->name);
		else
			snprintf(all[n].name, sizeof(all[n].name), "%s", a->name);
		all[n].ms = is > was ? is - was : 0;
		n++;
	}
	if (n > 1)
		qsort(all, n, sizeof(*all), cmp_blocker);
	memcpy(ret, all, MIN(n, max) * sizeof(*all));
	free(all);
	return n;
}
