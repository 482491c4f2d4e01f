/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libevdev/libevdev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "activity.h"
#include "event-util.h"
#include "idle.h"
#include "input-class.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "sysfs.h"
#include "wake-epoll.h"
#include "wakelock.h"

/* Events read per wakeup before yielding to the rest of the loop. */
#define READ_BATCH 512

struct input_device {
	struct activity *a;
	char *node;
	int fd;
	struct libevdev *dev;
	bool watched; /* registered in the activity epoll */
	bool paused;
	bool user;    /* its events are user input (a keyboard, pointer...); else only a lid switch or sleep key */
	bool builtin; /* the laptop's own keyboard or touchpad (i8042, I2C, SPI, RMI, platform) */
	struct input_device *prev, *next;
};

struct activity {
	struct manager *m;
	char *dir;
	int inotify_fd;
	sd_event_source *inotify_src;
	/*
	 * Input fds live in an epoll of our own, registered with EPOLLWAKEUP:
	 * from the moment an event is queued until we collect it, the kernel
	 * holds a wakeup source, so a keystroke during suspend entry aborts the
	 * suspend instead of being lost (sd-event cannot pass EPOLLWAKEUP).
	 */
	int epoll_fd;
	sd_event_source *epoll_src;
	struct input_device *devices;
	unsigned n_devices;

	struct refresh_limiter limiter;
	sd_event_source *flush_timer;
	sd_event_source *unpause_timer;
	struct idle_clock idle;
	char lock_name[80];
	bool kernel;
	bool kernel_failed_logged;
	usec_t hold_start, hold_until; /* kernel-timed hold, CLOCK_BOOTTIME */
	uint64_t lease;                /* in-process hold */
	uint64_t writes, events, overflows;
	bool seen_input;
};

/*
 * Register the device, or pause and resume it. Pausing keeps EPOLLWAKEUP, so
 * the kernel keeps the device's wakeup source instead of destroying and
 * recreating it (a /sys/class/wakeup device and uevents) once a second
 * while someone types.
 */
static int device_watch(struct input_device *d, bool on)
{
	int r;

	if (!d->watched) {
		r = wake_epoll_add(d->a->epoll_fd, d->fd, d);
		if (r < 0)
			return r;
		d->watched = true;
		if (on)
			return 0;
	}
	if (on)
		return wake_epoll_resume(d->a->epoll_fd, d->fd, d);
	return wake_epoll_pause(d->a->epoll_fd, d->fd, d);
}

static void device_free(struct input_device *d)
{
	if (!d)
		return;
	if (d->watched)
		(void)epoll_ctl(d->a->epoll_fd, EPOLL_CTL_DEL, d->fd, NULL);
	libevdev_free(d->dev);
	safe_close(d->fd);
	free(d->node);
	free(d);
}

static void device_remove(struct activity *a, struct input_device *d, const char *why)
{
	log_info("Input device %s gone (%s)", d->node, why);
	if (d->prev)
		d->prev->next = d->next;
	else
		a->devices = d->next;
	if (d->next)
		d->next->prev = d->prev;
	a->n_devices--;
	device_free(d);
	manager_changed(a->m, "NInputDevices");
}

void activity_sync_stats(struct activity *a)
{
	usec_t t;

	if (!a || !a->kernel || a->hold_until <= a->hold_start)
		return;
	t = now(CLOCK_BOOTTIME);
	if (t < a->hold_until)
		return;
	(void)leases_stats_add(&a->m->leases, a->lock_name, a->hold_until - a->hold_start);
	a->hold_start = a->hold_until;
}

/* Keep the machine awake for timeout from now; never shortens a longer hold. */
static void activity_hold(struct activity *a, usec_t timeout)
{
	usec_t t = now(CLOCK_BOOTTIME);
	int r;

	log_debug("Holding '%s' for %llums", a->lock_name, (unsigned long long)(timeout / USEC_PER_MSEC));
	if (a->kernel) {
		r = wakelock_lock(a->lock_name, timeout);
		a->writes++;
		if (r >= 0) {
			activity_sync_stats(a);
			if (t >= a->hold_until)
				a->hold_start = t;
			a->hold_until = MAX(a->hold_until, usec_add(t, timeout));
			return;
		}
		if (!a->kernel_failed_logged)
			log_warning_errno(r, "Failed to write kernel wake lock '%s': %m; holding in-process instead",
					  a->lock_name);
		a->kernel_failed_logged = true;
	}
	if (a->lease && leases_find(&a->m->leases, a->lease)) {
		struct lease *x = leases_find(&a->m->leases, a->lease);

		if (x->deadline < usec_add(t, timeout))
			(void)leases_set_deadline(&a->m->leases, a->lease, usec_add(t, timeout));
		return;
	}
	r = manager_hold(a->m, a->lock_name, "user input", timeout, &a->lease);
	if (r < 0)
		log_error_errno(r, "Failed to hold for user input: %m");
}

static int on_flush(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct activity *a = userdata;
	usec_t t = now(CLOCK_MONOTONIC), since;

	(void)s;
	(void)usec;
	if (!a->limiter.pending)
		return 0;
	/* Hold for what is left of the idle period that the last event started. */
	since = t > a->limiter.last_event ? t - a->limiter.last_event : 0;
	refresh_limiter_flush(&a->limiter, t);
	if (since < a->m->config.idle_timeout)
		activity_hold(a, a->m->config.idle_timeout - since);
	return 0;
}

static void activity_input(struct activity *a, struct input_device *d)
{
	usec_t t = now(CLOCK_MONOTONIC);
	int r;

	if (!manager_input_counts(a->m, d->builtin))
		return;
	/* Once per busy spell, so "why is it not sleeping?" has an answer in the journal. */
	if (!a->seen_input ||
	    idle_clock_idle(&a->idle, now(CLOCK_BOOTTIME), a->m->stats.total_asleep) >= a->m->config.idle_timeout)
		log_info("User input on %s '%s': staying awake until %llus after the last event", d->node,
			 libevdev_get_name(d->dev), (unsigned long long)(a->m->config.idle_timeout / USEC_PER_SEC));
	a->seen_input = true;
	manager_user_active(a->m);
	idle_clock_input(&a->idle, now(CLOCK_BOOTTIME), a->m->stats.total_asleep);
	if (refresh_limiter_event(&a->limiter, t)) {
		activity_hold(a, a->m->config.idle_timeout);
		return;
	}
	if (event_source_armed(a->flush_timer))
		return;
	r = event_reset_time(a->m->event, &a->flush_timer, CLOCK_MONOTONIC, refresh_limiter_due(&a->limiter), 0,
			     on_flush, a, false);
	if (r < 0)
		log_warning_errno(r, "Failed to arm the refresh timer: %m, ignoring");
}

static int on_unpause(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct activity *a = userdata;

	(void)s;
	(void)usec;
	/* Whatever queued up meanwhile (or a SYN_DROPPED) is read now, as one batch. */
	for (struct input_device *d = a->devices; d; d = d->next)
		if (d->paused) {
			d->paused = false;
			(void)device_watch(d, true);
		}
	return 0;
}

/*
 * Input just refreshed the hold, which lasts far longer than the refresh
 * interval: stop reading this device until the interval ends, so a flood
 * costs one wakeup a second rather than one per event. The kernel keeps
 * queueing, and reports an overflow as SYN_DROPPED, which counts as input.
 */
static void device_pause(struct activity *a, struct input_device *d)
{
	usec_t due = a->limiter.last_write + a->limiter.interval;
	int r;

	if (device_watch(d, false) < 0)
		return;
	d->paused = true;
	if (event_source_armed(a->unpause_timer))
		return;
	r = event_reset_time(a->m->event, &a->unpause_timer, CLOCK_MONOTONIC, due, 0, on_unpause, a, false);
	if (r < 0) {
		/* Nothing would wake it up again: read on unpaused. */
		d->paused = false;
		(void)device_watch(d, true);
	}
}

/* The lid and the sleep key are no user input: they say the user is gone or back. Returns true if ev was one. */
static bool device_switch_event(struct input_device *d, const struct input_event *ev)
{
	if (ev->type == EV_SW && ev->code == SW_LID) {
		manager_lid_switch(d->a->m, ev->value != 0);
		return true;
	}
	if (ev->type == EV_KEY && (ev->code == KEY_SLEEP || ev->code == KEY_SUSPEND)) {
		if (ev->value == 1)
			manager_sleep_key(d->a->m);
		return true;
	}
	return false;
}

static void on_device(struct input_device *d, uint32_t revents)
{
	struct activity *a = d->a;
	struct input_event ev;
	bool user = false;
	int rc = -EAGAIN;

	for (int i = 0; i < READ_BATCH; i++) {
		rc = libevdev_next_event(d->dev, LIBEVDEV_READ_FLAG_NORMAL, &ev);
		if (rc == LIBEVDEV_READ_STATUS_SYNC) {
			/* SYN_DROPPED: the kernel buffer overflowed, which takes input. Resync. */
			user = d->user;
			a->overflows++;
			while (rc == LIBEVDEV_READ_STATUS_SYNC) {
				rc = libevdev_next_event(d->dev, LIBEVDEV_READ_FLAG_SYNC, &ev);
				if (rc == LIBEVDEV_READ_STATUS_SYNC)
					(void)device_switch_event(d, &ev);
			}
			continue;
		}
		if (rc != LIBEVDEV_READ_STATUS_SUCCESS)
			break;
		if (device_switch_event(d, &ev))
			continue;
		if (d->user && (ev.type == EV_KEY || ev.type == EV_REL || ev.type == EV_ABS)) {
			a->events++;
			user = true;
		}
	}
	if (rc != -EAGAIN && rc != LIBEVDEV_READ_STATUS_SUCCESS && rc != LIBEVDEV_READ_STATUS_SYNC) {
		if (user)
			activity_input(a, d);
		device_remove(a, d, strerror(-rc));
		return;
	}
	if (revents & (EPOLLHUP | EPOLLERR)) {
		if (user)
			activity_input(a, d);
		device_remove(a, d, "hangup");
		return;
	}
	if (user) {
		activity_input(a, d);
		device_pause(a, d);
	}
}

static int on_epoll(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct epoll_event evs[16];
	int n;

	(void)s;
	(void)revents;
	(void)userdata;
	/* This epoll_wait() also lets the kernel drop the wakeup sources of what it returns. */
	n = epoll_wait(fd, evs, ELEMENTSOF(evs), 0);
	for (int i = 0; i < n; i++)
		on_device(evs[i].data.ptr, evs[i].events);
	return 0;
}

static bool ignored(struct activity *a, const char *name)
{
	_cleanup_free_ char *copy = strdup(a->m->config.ignore_devices);
	char *saveptr = NULL, *tok;

	if (!copy)
		return false;
	for (tok = strtok_r(copy, " \t", &saveptr); tok; tok = strtok_r(NULL, " \t", &saveptr))
		if (fnmatch(tok, name, 0) == 0)
			return true;
	return false;
}

/* quiet: a rescan after resume, which meets the same ignored devices every time. */
static void device_add(struct activity *a, const char *node, bool quiet)
{
	_cleanup_free_ char *path = NULL;
	struct input_device *d;
	enum input_class c;
	const char *name;
	int r;

	if (strncmp(node, "event", 5) != 0)
		return;
	for (d = a->devices; d; d = d->next)
		if (strcmp(d->node, node) == 0)
			return;
	if (asprintf(&path, "%s/%s", a->dir, node) < 0)
		return;
	d = calloc(1, sizeof(*d));
	if (!d)
		return;
	d->a = a;
	d->node = strdup(node);
	/* Read-only and never grabbed: the desktop keeps its input. */
	d->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (!d->node || d->fd < 0) {
		/* udev may not have set permissions yet; IN_ATTRIB brings us back. */
		log_debug_errno(negative_errno(), "Cannot open %s yet: %m", path);
		device_free(d);
		return;
	}
	r = libevdev_new_from_fd(d->fd, &d->dev);
	if (r < 0) {
		log_debug_errno(r, "%s is not an evdev device: %m", path);
		device_free(d);
		return;
	}
	name = libevdev_get_name(d->dev);
	c = input_class_of(d->dev);
	d->user = c != INPUT_CLASS_NONE && (a->m->config.input_classes & (1u << c)) && !ignored(a, name);
	switch (libevdev_get_id_bustype(d->dev)) {
	case BUS_I8042:
	case BUS_I2C:
	case BUS_SPI:
	case BUS_RMI:
	case BUS_HOST:
		d->builtin = true;
		break;
	default:
		break;
	}
	/* A lid switch or sleep button is watched for those alone (never as input). */
	if (!d->user && (libevdev_has_event_code(d->dev, EV_SW, SW_LID) ||
			 libevdev_has_event_code(d->dev, EV_KEY, KEY_SLEEP) ||
			 libevdev_has_event_code(d->dev, EV_KEY, KEY_SUSPEND))) {
		r = device_watch(d, true);
		if (r < 0) {
			log_warning_errno(r, "Failed to watch %s: %m, ignoring", path);
			device_free(d);
			return;
		}
		goto added;
	}
	if (!d->user) {
		log_full(quiet ? LOG_DEBUG : LOG_INFO, "Not watching %s '%s' (%s%s)", node, name, input_class_to_string(c),
			 c == INPUT_CLASS_NONE ? ": not user input" : ", by configuration");
		device_free(d);
		return;
	}
	r = device_watch(d, true);
	if (r < 0) {
		log_warning_errno(r, "Failed to watch %s: %m, ignoring", path);
		device_free(d);
		return;
	}
added:
	d->next = a->devices;
	if (a->devices)
		a->devices->prev = d;
	a->devices = d;
	a->n_devices++;
	log_info("Watching %s '%s' (%s)%s%s", node, name, d->user ? input_class_to_string(c) : "lid switch or sleep key",
		 d->builtin ? ", built-in" : "", d->user && libevdev_has_event_code(d->dev, EV_SW, SW_LID) ? ", lid switch" : "");
	manager_changed(a->m, "NInputDevices");
	if (libevdev_has_event_code(d->dev, EV_SW, SW_LID))
		manager_lid_switch(a->m, libevdev_get_event_value(d->dev, EV_SW, SW_LID) != 0);
}

static void activity_scan(struct activity *a, bool quiet)
{
	struct dirent *de;
	DIR *dir = opendir(a->dir);

	if (!dir)
		return;
	while ((de = readdir(dir)))
		device_add(a, de->d_name, quiet);
	closedir(dir);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct activity *a = userdata;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	(void)s;
	(void)revents;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			if (e->len > 0) {
				if (e->mask & (IN_DELETE | IN_MOVED_FROM)) {
					for (struct input_device *d = a->devices; d; d = d->next)
						if (strcmp(d->node, e->name) == 0) {
							device_remove(a, d, "removed");
							break;
						}
				} else {
					device_add(a, e->name, false);
				}
			}
			p += sizeof(*e) + e->len;
		}
	}
	return 0;
}

/*
 * After a resume: a full idle period if an input device woke us; nothing if
 * a timer we know of did (its own hold keeps the machine up exactly as long
 * as its work runs); else ResumeGraceSec. A soak cycle's client asks for
 * the next cycle itself.
 */
static void on_wake(enum wake_event ev, struct wake *w, void *userdata)
{
	struct activity *a = userdata;
	_cleanup_free_ char *copy = NULL;
	char *saveptr = NULL, *tok;
	bool by_input = false;

	if (ev != WAKE_RESUMED || w->soak)
		return;
	/* Devices may have come and gone while we slept. */
	activity_scan(a, true);
	copy = strdup(a->m->config.input_wake_sources);
	for (tok = copy ? strtok_r(copy, " \t", &saveptr) : NULL; tok; tok = strtok_r(NULL, " \t", &saveptr))
		if (strstr(w->reason, tok))
			by_input = true;
	/* With the lid closed, a wake by the keyboard under it is no user. */
	if (by_input && !manager_away(a->m)) {
		log_info("Woken by input (%s): staying awake for a full idle period", w->reason);
		manager_user_active(a->m);
		idle_clock_input(&a->idle, now(CLOCK_BOOTTIME), a->m->stats.total_asleep);
		activity_hold(a, a->m->config.idle_timeout);
	} else if (w->timer[0]) {
		log_debug("Woken by %s: its hold replaces the resume grace", w->timer);
	} else if (a->m->config.resume_grace > 0) {
		activity_hold(a, a->m->config.resume_grace);
	}
}

void activity_away(struct activity *a)
{
	usec_t t;

	if (!a)
		return;
	a->limiter.pending = false;
	if (a->flush_timer)
		(void)sd_event_source_set_enabled(a->flush_timer, SD_EVENT_OFF);
	t = now(CLOCK_BOOTTIME);
	if (a->kernel && t < a->hold_until) {
		if (wakelock_unlock(a->lock_name) < 0)
			log_warning("Failed to drop kernel wake lock '%s', ignoring", a->lock_name);
		a->hold_until = t;
		activity_sync_stats(a);
	}
	if (a->lease) {
		(void)manager_release(a->m, a->lease, "the user is gone");
		a->lease = 0;
	}
}

void activity_present(struct activity *a)
{
	if (!a)
		return;
	idle_clock_input(&a->idle, now(CLOCK_BOOTTIME), a->m->stats.total_asleep);
	activity_hold(a, a->m->config.idle_timeout);
}

usec_t activity_idle(struct activity *a)
{
	return a ? idle_clock_idle(&a->idle, now(CLOCK_BOOTTIME), a->m->stats.total_asleep) : 0;
}

unsigned activity_n_devices(struct activity *a)
{
	return a ? a->n_devices : 0;
}

uint64_t activity_writes(struct activity *a)
{
	return a ? a->writes : 0;
}

uint64_t activity_events(struct activity *a)
{
	return a ? a->events : 0;
}

uint64_t activity_overflows(struct activity *a)
{
	return a ? a->overflows : 0;
}

bool activity_kernel_hold(struct activity *a, const char **ret_name, usec_t *ret_since, usec_t *ret_until)
{
	if (!a || !a->kernel || now(CLOCK_BOOTTIME) >= a->hold_until)
		return false;
	*ret_name = a->lock_name;
	*ret_since = a->hold_start;
	*ret_until = a->hold_until;
	return true;
}

int activity_new(struct manager *m, struct activity **ret)
{
	struct activity *a;
	int r;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->m = m;
	a->inotify_fd = -EBADF;
	a->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epoll_fd < 0) {
		r = negative_errno();
		goto fail;
	}
	r = sd_event_add_io(m->event, &a->epoll_src, a->epoll_fd, EPOLLIN, on_epoll, a);
	if (r < 0)
		goto fail;
	a->limiter.interval = USEC_PER_SEC;
	a->kernel = m->kernel_wakelocks;
	snprintf(a->lock_name, sizeof(a->lock_name), "%s.activity", m->config.wake_lock_name);
	/* Until the first event, idle counts from start-up. */
	idle_clock_input(&a->idle, now(CLOCK_BOOTTIME), 0);
	r = sysfs_path(SYSFS_DEV_INPUT, &a->dir);
	if (r < 0)
		goto fail;
	a->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->inotify_fd < 0) {
		r = negative_errno();
		goto fail;
	}
	if (inotify_add_watch(a->inotify_fd, a->dir, IN_CREATE | IN_ATTRIB | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM) < 0) {
		r = negative_errno();
		log_notice_errno(r, "Cannot watch %s (%m): user activity is not followed", a->dir);
		goto fail;
	}
	r = sd_event_add_io(m->event, &a->inotify_src, a->inotify_fd, EPOLLIN, on_inotify, a);
	if (r < 0)
		goto fail;
	r = wake_observe(&m->wake, on_wake, a);
	if (r < 0)
		goto fail;
	activity_scan(a, false);
	log_info("Following user input in %s: idle timeout %llus, %u device%s", a->dir,
		 (unsigned long long)(m->config.idle_timeout / USEC_PER_SEC), a->n_devices, a->n_devices == 1 ? "" : "s");
	/* Start-up counts as input: someone may be at the login screen, and a restart must not suspend at once. */
	activity_hold(a, m->config.idle_timeout);
	*ret = a;
	return 0;
fail:
	activity_free(a);
	return r;
}

struct activity *activity_free(struct activity *a)
{
	struct input_device *d;

	if (!a)
		return NULL;
	wake_unobserve(&a->m->wake, on_wake, a);
	while ((d = a->devices)) {
		a->devices = d->next;
		device_free(d);
	}
	/* A clean stop hands the machine back, as for our other lock. */
	if (a->kernel && now(CLOCK_BOOTTIME) < a->hold_until)
		(void)wakelock_unlock(a->lock_name);
	sd_event_source_disable_unref(a->inotify_src);
	sd_event_source_disable_unref(a->epoll_src);
	safe_close(a->epoll_fd);
	sd_event_source_disable_unref(a->flush_timer);
	sd_event_source_disable_unref(a->unpause_timer);
	safe_close(a->inotify_fd);
	free(a->dir);
	free(a);
	return NULL;
}
