/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The kernel's wakeup sources, from /sys/class/wakeup/wakeupN/: name,
 * event_count (every event reported) and wakeup_count (events reported while
 * the kernel was checking for wakeups, i.e. from a successful wakeup_count
 * write until the suspend ends). Unlike /sys/power/wakeup_count these reads
 * never block, so they can be taken around a state write while a wakeup
 * source, ours included, is active. Two snapshots tell which sources moved:
 * who aborted a suspend, who woke the machine, who kept it awake.
 */
#define WAKEUP_SOURCE_NAME_MAX 64
#define WAKEUP_SOURCE_COUNT_UNKNOWN UINT64_MAX

struct wakeup_source_stat {
	char dir[24];                     /* wakeupN: ids are reused, so matched together with name */
	char name[WAKEUP_SOURCE_NAME_MAX];
	uint64_t event_count;             /* WAKEUP_SOURCE_COUNT_UNKNOWN when unreadable */
	uint64_t wakeup_count;
	/* For "who kept me awake": activations, and time active in all (ms, the current activation included). */
	uint64_t active_count;
	uint64_t total_time_ms;
	/*
	 * "rtc0" when the source is an RTC's device (its device has an rtc/rtcN
	 * child), else "": the kernel names the source after the device
	 * ("00:06" for rtc_cmos), which tells a reader nothing.
	 */
	char rtc[16];
};

struct wakeup_sources {
	struct wakeup_source_stat *items;
	size_t n;
};

/*
 * Read every source below the sysfs root. Returns 0, -ENOENT without
 * /sys/class/wakeup (kernels before 5.4, fixtures without it), or -ENOMEM.
 * Sources that vanish while being read are skipped.
 */
int wakeup_sources_read(struct wakeup_sources *ret);
void wakeup_sources_clear(struct wakeup_sources *w);

/*
 * Names of the sources that moved from before to after, as "a, b", into buf;
 * names listed in exclude (NULL-terminated, may be NULL) are left out.
 * Sources whose wakeup_count moved are the ones that mattered while the kernel
 * was watching; only if none did, those whose event_count moved are named. A
 * source that appeared in between counts if any of its counts is non-zero.
 * Returns the number of names (all of them, even if buf was too short).
 */
size_t wakeup_sources_moved(const struct wakeup_sources *before, const struct wakeup_sources *after,
			    char *const *exclude, char *buf, size_t size);

/*
 * "Who kept me awake": the sources (not in exclude) that were active between
 * before and after, with how long each was active in between (the growth of
 * total_time_ms; a source that appeared in between counts all of it). Fills
 * up to max entries, longest first, and returns how many there were in all.
 */
/* As many as a suspend report or soak record carries. */
#define WAKEUP_BLOCKERS_MAX 4

struct wakeup_blocker {
	char name[WAKEUP_SOURCE_NAME_MAX];
	uint64_t ms;
};

size_t wakeup_sources_blockers(const struct wakeup_sources *before, const struct wakeup_sources *after,
			       char *const *exclude, struct wakeup_blocker *ret, size_t max);
