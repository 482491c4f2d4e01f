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

/*
 * A laptop's lid switch and sleep button (SW_LID, KEY_SLEEP, on the host bus
 * as ACPI's are): reads "close", "open" and "sleep" from stdin, one per line,
 * until EOF.
 */
static int lid(const char *name)
{
	struct libevdev_uinput *ui = NULL;
	struct libevdev *dev = libevdev_new();
	char line[64];
	int r;

	libevdev_set_name(dev, name);
	libevdev_set_id_bustype(dev, BUS_HOST);
	libevdev_enable_event_code(dev, EV_SW, SW_LID, NULL);
	libevdev_enable_event_code(dev, EV_KEY, KEY_SLEEP, NULL);
	r = libevdev_uinput_create_from_device(dev, LIBEVDEV_UINPUT_OPEN_MANAGED, &ui);
	if (r < 0) {
		fprintf(stderr, "cannot create uinput device: %s\n", strerror(-r));
		return 1;
	}
	printf("%s\n", libevdev_uinput_get_devnode(ui));
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "close", 5) == 0 || strncmp(line, "open", 4) == 0) {
			libevdev_uinput_write_event(ui, EV_SW, SW_LID, line[0] == 'c');
		} else if (strncmp(line, "sleep", 5) == 0) {
			libevdev_uinput_write_event(ui, EV_KEY, KEY_SLEEP, 1);
			libevdev_uinput_write_event(ui, EV_SYN, SYN_REPORT, 0);
			libevdev_uinput_write_event(ui, EV_KEY, KEY_SLEEP, 0);
		} else {
			fprintf(stderr, "unknown lid command: %s", line);
			continue;
		}
		libevdev_uinput_write_event(ui, EV_SYN, SYN_REPORT, 0);
	}
	libevdev_uinput_destroy(ui);
	libevdev_free(dev);
	return 0;
}

int main(int argc, char *argv[])
{
	struct libevdev_uinput *ui = NULL;
	struct libevdev *dev;
	struct timespec next, end, now;
	bool keyboard, flood, builtin;
	long every_ns, n = 0;
	double seconds;
	int r;

	if (argc == 3 && strcmp(argv[1], "lid") == 0)
		return lid(argv[2]);
	if (argc != 5) {
		fprintf(stderr, "usage: %s keyboard|builtin-keyboard|pointer|flood NAME EVERY_MS|RATE SECONDS\n"
				"       %s lid NAME < commands\n", argv[0], argv[0]);
		return 2;
	}
	builtin = strcmp(argv[1], "builtin-keyboard") == 0;
	keyboard = builtin || strcmp(argv[1], "keyboard") == 0;
	flood = strcmp(argv[1], "flood") == 0;
	every_ns = flood ? 1000000000L / atol(argv[3]) : atol(argv[3]) * 1000000L;
	seconds = atof(argv[4]);
	if (every_ns <= 0 || seconds <= 0) {
		fprintf(stderr, "bad rate or duration\n");
		return 2;
	}

	dev = libevdev_new();
	libevdev_set_name(dev, argv[2]);
	/* A laptop's own keyboard sits on the i8042 controller; others say nothing of their bus here. */
	if (builtin)
		libevdev_set_id_bustype(dev, BUS_I8042);
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
