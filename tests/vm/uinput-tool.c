/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Synthetic input devices for the VM tests, through libevdev's uinput API:
 *
 *   uinput-tool keyboard NAME EVERY_MS SECONDS   press and release "a" every EVERY_MS
 *   uinput-tool pointer NAME EVERY_MS SECONDS    move one unit right every EVERY_MS
 *   uinput-tool flood NAME RATE SECONDS          RATE pointer moves per second
 *
 * The device appears, the tool waits half a second so autosleepd can open it,
 * sends its events, and its last event is sent right before it exits, so the
 * exit time is the start of the idle period.
 */
#include <errno.h>
#include <libevdev/libevdev-uinput.h>
#include <libevdev/libevdev.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

int main(int argc, char *argv[])
{
	struct libevdev_uinput *ui = NULL;
	struct libevdev *dev;
	struct timespec next, end, now;
	bool keyboard, flood;
	long every_ns, n = 0;
	double seconds;
	int r;

	if (argc != 5) {
		fprintf(stderr, "usage: %s keyboard|pointer|flood NAME EVERY_MS|RATE SECONDS\n", argv[0]);
		return 2;
	}
	keyboard = strcmp(argv[1], "keyboard") == 0;
	flood = strcmp(argv[1], "flood") == 0;
	every_ns = flood ? 1000000000L / atol(argv[3]) : atol(argv[3]) * 1000000L;
	seconds = atof(argv[4]);
	if (every_ns <= 0 || seconds <= 0) {
		fprintf(stderr, "bad rate or duration\n");
		return 2;
	}

	dev = libevdev_new();
	libevdev_set_name(dev, argv[2]);
	if (keyboard) {
		/* Enough of a keyboard for any classifier: letters and space. */
		for (unsigned k = KEY_ESC; k <= KEY_SPACE; k++)
			libevdev_enable_event_code(dev, EV_KEY, k, NULL);
	} else {
		libevdev_enable_event_code(dev, EV_REL, REL_X, NULL);
		libevdev_enable_event_code(dev, EV_REL, REL_Y, NULL);
		libevdev_enable_event_code(dev, EV_KEY, BTN_LEFT, NULL);
		libevdev_enable_event_code(dev, EV_KEY, BTN_RIGHT, NULL);
	}
	r = libevdev_uinput_create_from_device(dev, LIBEVDEV_UINPUT_OPEN_MANAGED, &ui);
	if (r < 0) {
		fprintf(stderr, "cannot create uinput device: %s\n", strerror(-r));
		return 1;
	}
	printf("%s\n", libevdev_uinput_get_devnode(ui));
	fflush(stdout);
	usleep(500 * 1000);

	clock_gettime(CLOCK_MONOTONIC, &next);
	end = next;
	add_ns(&end, (long)(seconds * 1e9));
	for (;;) {
		if (keyboard) {
			libevdev_uinput_write_event(ui, EV_KEY, KEY_A, 1);
			libevdev_uinput_write_event(ui, EV_SYN, SYN_REPORT, 0);
			libevdev_uinput_write_event(ui, EV_KEY, KEY_A, 0);
		} else {
			libevdev_uinput_write_event(ui, EV_REL, REL_X, 1);
		}
		libevdev_uinput_write_event(ui, EV_SYN, SYN_REPORT, 0);
		n++;
		add_ns(&next, every_ns);
		if (next.tv_sec > end.tv_sec || (next.tv_sec == end.tv_sec && next.tv_nsec > end.tv_nsec))
			break;
		/* Behind schedule (a slow emulated CPU): send at once, but never past the end. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(stderr, "%ld events sent in %.1f s (%.0f/s)\n", n,
		seconds - ((double)(end.tv_sec - now.tv_sec) + (double)(end.tv_nsec - now.tv_nsec) / 1e9),
		n / (seconds - ((double)(end.tv_sec - now.tv_sec) + (double)(end.tv_nsec - now.tv_nsec) / 1e9)));
	libevdev_uinput_destroy(ui);
	libevdev_free(dev);
	return 0;
}
