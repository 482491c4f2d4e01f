/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VM rows of docs/benchmarks.md, on the guest's real system bus with
 * the real unit and the real logind:
 *
 *   bench-client ITERATIONS
 *
 * Each iteration, in an order that rotates, times a Peer.Ping to autosleepd,
 * AcquireWakeLock + close (to the reply, and on to our WakeLockReleased),
 * logind's Inhibit("sleep", ..., "block") + close (to the reply), and a raw
 * kernel wake lock: a write to /sys/power/wake_lock and one to wake_unlock.
 * Prints "# " lines with medians, 99th percentiles and ratios to the ping;
 * exits non-zero only when a call fails, never on the numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "../bench/percentile.h"

enum { PING, ACQUIRE, RELEASED, INHIBIT, RAW, _KIND_MAX };

static const char *const kind_names[_KIND_MAX] = {
	[PING] = "Peer.Ping to autosleepd",
	[ACQUIRE] = "AcquireWakeLock + close, to the reply",
	[RELEASED] = "  ... to WakeLockReleased",
	[INHIBIT] = "logind Inhibit(sleep, block) + close",
	[RAW] = "write wake_lock + wake_unlock",
};

static bool released;

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int on_released(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	(void)m;
	(void)userdata;
	(void)ret_error;
	released = true;
	return 0;
}

static int call(sd_bus *bus, const char *dest, const char *path, const char *iface, const char *member,
		sd_bus_message **reply, const char *types, ...)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	va_list ap;
	int r;

	r = sd_bus_message_new_method_call(bus, &m, dest, path, iface, member);
	if (r >= 0 && types) {
		va_start(ap, types);
		r = sd_bus_message_appendv(m, types, ap);
		va_end(ap);
	}
	if (r >= 0)
		r = sd_bus_call(bus, m, 0, &e, reply);
	if (r < 0)
		fprintf(stderr, "%s.%s: %s\n", iface, member, e.message ? e.message : strerror(-r));
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	return r;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		r = -errno;
	close(fd);
	return r;
}

static int one(sd_bus *bus, int kind, uint64_t *t, uint64_t *t_released)
{
	sd_bus_message *reply = NULL;
	uint64_t t0 = now_usec();
	int r;

	switch (kind) {
	case PING:
		r = call(bus, "org.autosleep1", "/org/autosleep1", "org.freedesktop.DBus.Peer", "Ping", NULL, NULL);
		break;
	case ACQUIRE:
		released = false;
		r = call(bus, "org.autosleep1", "/org/autosleep1", "org.autosleep1.Manager", "AcquireWakeLock", &reply,
			 "sst", "vm-bench", "bench", (uint64_t)0);
		/* Freeing the reply closes the only copy of the fd. */
		sd_bus_message_unref(reply);
		*t = now_usec() - t0;
		while (r >= 0 && !released) {
			r = sd_bus_process(bus, NULL);
			if (r == 0)
				r = sd_bus_wait(bus, 5000000);
			if (r == 0)
				r = -ETIMEDOUT;
		}
		*t_released = now_usec() - t0;
		return r < 0 ? r : 0;
	case INHIBIT:
		r = call(bus, "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "Inhibit",
			 &reply, "ssss", "sleep", "vm-bench", "bench", "block");
		sd_bus_message_unref(reply);
		break;
	case RAW:
		r = write_file("/sys/power/wake_lock", "vm-bench-raw");
		if (r >= 0)
			r = write_file("/sys/power/wake_unlock", "vm-bench-raw");
		break;
	default:
		return -EINVAL;
	}
	*t = now_usec() - t0;
	return r < 0 ? r : 0;
}

int main(int argc, char *argv[])
{
	static const int order[] = { PING, ACQUIRE, INHIBIT, RAW };
	uint64_t *v[_KIND_MAX];
	sd_bus *bus = NULL;
	const char *unique;
	char rule[256];
	unsigned n;
	int r;

	if (argc != 2 || (n = (unsigned)atoi(argv[1])) == 0) {
		fprintf(stderr, "usage: %s ITERATIONS\n", argv[0]);
		return 2;
	}
	for (int k = 0; k < _KIND_MAX; k++)
		if (!(v[k] = calloc(n, sizeof(uint64_t))))
			return 1;
	r = sd_bus_open_system(&bus);
	if (r >= 0)
		r = sd_bus_get_unique_name(bus, &unique);
	if (r < 0) {
		fprintf(stderr, "system bus: %s\n", strerror(-r));
		return 1;
	}
	snprintf(rule, sizeof(rule),
		 "type='signal',sender='org.autosleep1',interface='org.autosleep1.Manager',member='WakeLockReleased',"
		 "arg1='%s'", unique);
	r = sd_bus_add_match(bus, NULL, rule, on_released, NULL);
	if (r < 0)
		return 1;
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < 4; k++) {
			int kind = order[(i + k) % 4];

			r = one(bus, kind, &v[kind][i], &v[RELEASED][i]);
			if (r < 0) {
				fprintf(stderr, "%s failed: %s\n", kind_names[kind], strerror(-r));
				return 1;
			}
		}
	struct percentiles ping = percentiles_of(v[PING], n);
	printf("# bench: %u interleaved iterations, us: p50, p99, p50/ping p50\n", n);
	for (int k = 0; k < _KIND_MAX; k++) {
		struct percentiles p = percentiles_of(v[k], n);

		printf("# bench: %-40s %8" PRIu64 " %8" PRIu64 " %6.2f\n", kind_names[k], p.p50, p.p99,
		       (double)p.p50 / (double)ping.p50);
	}
	sd_bus_flush_close_unref(bus);
	return 0;
}
