/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A wake lock client for the tests, as a program of its own so a test can
 * fork and exec hundreds of them (natively, even when the test itself runs
 * under valgrind): connect to $DBUS_SYSTEM_BUS_ADDRESS, take NAME, print
 * "ok" on stdout, then hold the lock until killed.
 */
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *bus = NULL;
	int fd, r;

	if (argc != 2)
		return 2;
	r = sd_bus_open_system(&bus);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.autosleep1", "/org/autosleep1", "org.autosleep1.Manager", "AcquireWakeLock",
				       &e, &reply, "sst", argv[1], "lock-holder", (uint64_t)0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "h", &fd);
	if (r < 0) {
		printf("error %s\n", e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
		sd_bus_message_unref(reply);
		sd_bus_flush_close_unref(bus);
		return 1;
	}
	printf("ok\n");
	fflush(stdout);
	for (;;)
		pause();
}
