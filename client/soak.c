/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <zlib.h>

#include "bus-names.h"
#include "bus-dict.h"
#include "macro.h"
#include "soak-report.h"
#include "soak.h"
#include "time-util.h"

#define RTC_WAKEALARM "/sys/class/rtc/rtc0/wakealarm"
#define KMSG "/dev/kmsg"
/* One kernel log line, as much of it as a report needs. */
#define KMSG_LINE_MAX 512
#define KMSG_KEEP_MAX 4096

struct range {
	usec_t min, max;
};

struct soak_args {
	unsigned cycles;       /* 0: until duration */
	usec_t duration;       /* 0: until cycles */
	struct range sleep, awake;
	const char *state;
	const char *pm_test;
	bool timerfd;          /* --alarm=timerfd: a CLOCK_BOOTTIME_ALARM timerfd instead of rtc0's wakealarm */
	unsigned max_failures; /* consecutive; 0: never stop */
	bool force;
	const char *output;
	uint64_t seed;
	bool have_seed;
	const char *compare[2];
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void soak_help(void)
{
	printf("Usage: autosleepctl soak [OPTIONS...]\n"
	       "       autosleepctl soak --compare DIR_A DIR_B\n\n"
	       "Suspend and resume the machine many times through autosleepd and write one record per\n"
	       "cycle (DIR/cycles.jsonl) and a report (DIR/report.md, report.svg, report.html).\n"
	       "Autosleep pauses while the soak runs. Needs root (or polkit's org.autosleep1.manage)\n"
	       "and root to arm the RTC alarm and read the kernel log.\n\n"
	       "  --cycles=N             Run N cycles (default 10)\n"
	       "  --duration=SPAN        Run until SPAN has passed (instead of --cycles)\n"
	       "  --sleep=MIN[-MAX]      Time asleep per cycle, whole seconds, random in the range (default 5s)\n"
	       "  --awake=MIN[-MAX]      Time awake between cycles, random in the range (default 2s)\n"
	       "  --seed=N               Seed for the ranges (printed; default from the clock)\n"
	       "  --state=STATE          mem (default), freeze or standby\n"
	       "  --alarm=rtc|timerfd    Wake by rtc0's wakealarm (default) or a CLOCK_BOOTTIME_ALARM timerfd\n"
	       "  --pm-test=LEVEL        pm_test level (core, processors, platform, devices, freezer):\n"
	       "                         the kernel stops at that level and resumes by itself; no alarm\n"
	       "  --max-failures=K       Stop after K consecutive failed cycles (default: never)\n"
	       "  --force                Suspend even while wake locks are held (blocked cycles otherwise)\n"
	       "  --output=DIR           Where to write (default ./soak-YYYYmmdd-HHMMSS)\n"
	       "  --compare A B          Print two runs' reports side by side\n");
}

/* "5", "5s", "2-8", "2s-8s": whole seconds for the RTC. */
static int parse_range(const char *what, const char *s, struct range *ret)
{
	_cleanup_free_ char *a = strdup(s);
	char *dash;
	usec_t lo, hi;

	if (!a)
		return -ENOMEM;
	dash = strchr(a, '-');
	if (dash)
		*dash = 0;
	if (parse_sec(a, &lo) < 0 || (dash && parse_sec(dash + 1, &hi) < 0)) {
		fprintf(stderr, "Invalid --%s '%s': expected MIN[-MAX] such as 5 or 3s-10s\n", what, s);
		return -EINVAL;
	}
	if (!dash)
		hi = lo;
	if (hi < lo || hi > 24 * 3600 * USEC_PER_SEC) {
		fprintf(stderr, "Invalid --%s '%s': MAX must be at least MIN and at most a day\n", what, s);
		return -EINVAL;
	}
	*ret = (struct range){ lo, hi };
	return 0;
}

static int parse_uint(const char *what, const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > 100000000) {
		fprintf(stderr, "Invalid --%s '%s': expected a whole number\n", what, s);
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct soak_args *a)
{
	enum { A_CYCLES = 0x100, A_DURATION, A_SLEEP, A_AWAKE, A_SEED, A_STATE, A_PM_TEST, A_MAXF, A_FORCE, A_OUTPUT,
	       A_COMPARE, A_ALARM };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },	      { "cycles", required_argument, NULL, A_CYCLES },
		{ "duration", required_argument, NULL, A_DURATION }, { "sleep", required_argument, NULL, A_SLEEP },
		{ "awake", required_argument, NULL, A_AWAKE },	{ "seed", required_argument, NULL, A_SEED },
		{ "state", required_argument, NULL, A_STATE },	{ "pm-test", required_argument, NULL, A_PM_TEST },
		{ "max-failures", required_argument, NULL, A_MAXF }, { "force", no_argument, NULL, A_FORCE },
		{ "output", required_argument, NULL, A_OUTPUT },	{ "compare", no_argument, NULL, A_COMPARE },
		{ "alarm", required_argument, NULL, A_ALARM },
		{}
	};
	bool compare = false, have_cycles = false;
	int c;

	*a = (struct soak_args){ .cycles = 10, .sleep = { 5 * USEC_PER_SEC, 5 * USEC_PER_SEC },
				 .awake = { 2 * USEC_PER_SEC, 2 * USEC_PER_SEC }, .state = "mem" };
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		char *end;

		switch (c) {
		case 'h':
			soak_help();
			return 0;
		case A_CYCLES:
			if (parse_uint("cycles", optarg, &a->cycles) < 0)
				return -EINVAL;
			if (a->cycles == 0) {
				fprintf(stderr, "Invalid --cycles '0': at least one\n");
				return -EINVAL;
			}
			have_cycles = true;
			break;
		case A_DURATION:
			if (parse_sec(optarg, &a->duration) < 0 || a->duration == 0) {
				fprintf(stderr, "Invalid --duration '%s': expected a time span such as 10min\n", optarg);
				return -EINVAL;
			}
			break;
		case A_SLEEP:
			if (parse_range("sleep", optarg, &a->sleep) < 0)
				return -EINVAL;
			if (a->sleep.min < USEC_PER_SEC) {
				fprintf(stderr, "Invalid --sleep '%s': at least 1s, the RTC alarm's resolution\n", optarg);
				return -EINVAL;
			}
			break;
		case A_AWAKE:
			if (parse_range("awake", optarg, &a->awake) < 0)
				return -EINVAL;
			break;
		case A_SEED:
			errno = 0;
			a->seed = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				fprintf(stderr, "Invalid --seed '%s': expected a whole number\n", optarg);
				return -EINVAL;
			}
			a->have_seed = true;
			break;
		case A_STATE:
			if (strcmp(optarg, "mem") && strcmp(optarg, "freeze") && strcmp(optarg, "standby")) {
				fprintf(stderr, "Invalid --state '%s': expected mem, freeze or standby\n", optarg);
				return -EINVAL;
			}
			a->state = optarg;
			break;
		case A_PM_TEST:
			if (strcmp(optarg, "core") && strcmp(optarg, "processors") && strcmp(optarg, "platform") &&
			    strcmp(optarg, "devices") && strcmp(optarg, "freezer")) {
				fprintf(stderr, "Invalid --pm-test '%s': expected core, processors, platform, devices or freezer\n",
					optarg);
				return -EINVAL;
			}
			a->pm_test = optarg;
			break;
		case A_ALARM:
			if (strcmp(optarg, "rtc") && strcmp(optarg, "timerfd")) {
				fprintf(stderr, "Invalid --alarm '%s': expected rtc or timerfd\n", optarg);
				return -EINVAL;
			}
			a->timerfd = strcmp(optarg, "timerfd") == 0;
			break;
		case A_MAXF:
			if (parse_uint("max-failures", optarg, &a->max_failures) < 0)
				return -EINVAL;
			break;
		case A_FORCE:
			a->force = true;
			break;
		case A_OUTPUT:
			a->output = optarg;
			break;
		case A_COMPARE:
			compare = true;
			break;
		default:
			return -EINVAL;
		}
	}
	if (compare) {
		if (argc - optind != 2) {
			fprintf(stderr, "--compare takes two soak output directories\n");
			return -EINVAL;
		}
		a->compare[0] = argv[optind];
		a->compare[1] = argv[optind + 1];
		return 1;
	}
	if (optind < argc) {
		fprintf(stderr, "Unexpected argument '%s' for soak\n", argv[optind]);
		return -EINVAL;
	}
	if (a->duration > 0 && have_cycles) {
		fprintf(stderr, "--cycles and --duration exclude each other\n");
		return -EINVAL;
	}
	if (a->duration > 0)
		a->cycles = 0;
	return 1;
}

/* splitmix64: small, seedable, the same sequence everywhere for --seed. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static usec_t pick(const struct range *r, uint64_t *state, bool whole_seconds)
{
	usec_t v = r->min;

	if (r->max > r->min)
		v = r->min + next_random(state) % (r->max - r->min + 1);
	if (whole_seconds)
		v = v / USEC_PER_SEC * USEC_PER_SEC;
	return v;
}

static int write_file(const char *path, const char *value)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(value);

	if (fd < 0)
		return negative_errno();
	if (write(fd, value, len) != (ssize_t)len)
		return negative_errno();
	return 0;
}

/* FNV-1a 64 over the uncompressed kernel config, and the options that matter to autosleep. */
static void read_config(struct soak_provenance *p)
{
	static const char *const wanted[] = { "CONFIG_PM_USERSPACE_AUTOSLEEP", "CONFIG_PM_AUTOSLEEP",
					      "CONFIG_PM_WAKELOCKS", "CONFIG_PM_SLEEP_DEBUG", "CONFIG_PM_DEBUG", NULL };
	char path[256], line[512];
	uint64_t h = 0xcbf29ce484222325ULL;
	gzFile g;

	snprintf(p->config_hash, sizeof(p->config_hash), "unknown");
	snprintf(p->autosleep_options, sizeof(p->autosleep_options), "unknown (no /proc/config.gz or /boot/config-%s)",
		 p->kernel_release);
	g = gzopen("/proc/config.gz", "rb");
	if (!g) {
		snprintf(path, sizeof(path), "/boot/config-%s", p->kernel_release);
		g = gzopen(path, "rb");
	}
	if (!g)
		return;
	p->autosleep_options[0] = 0;
	while (gzgets(g, line, sizeof(line))) {
		size_t len = strlen(line);

		for (size_t i = 0; i < len; i++) {
			h ^= (unsigned char)line[i];
			h *= 0x100000001b3ULL;
		}
		for (const char *const *w = wanted; *w; w++) {
			size_t wl = strlen(*w);

			if ((strncmp(line, *w, wl) == 0 && line[wl] == '=') ||
			    (strncmp(line, "# ", 2) == 0 && strncmp(line + 2, *w, wl) == 0 && line[wl + 2] == ' ')) {
				size_t ol = strlen(p->autosleep_options);

				line[strcspn(line, "\n")] = 0;
				snprintf(p->autosleep_options + ol, sizeof(p->autosleep_options) - ol, "%s%s", ol ? ", " : "",
					 line[0] == '#' ? line + 2 : line);
			}
		}
	}
	gzclose(g);
	snprintf(p->config_hash, sizeof(p->config_hash), "%016" PRIx64, h);
	if (!p->autosleep_options[0])
		snprintf(p->autosleep_options, sizeof(p->autosleep_options), "none of the PM autosleep options");
}

static void read_provenance(struct soak_provenance *p, int argc, char **argv, uint64_t seed)
{
	struct utsname u;
	char product[128] = "", host[64] = "";
	FILE *f;
	size_t len = 0;

	*p = (struct soak_provenance){ .seed = seed, .started_usec = now(CLOCK_REALTIME) };
	if (uname(&u) == 0)
		snprintf(p->kernel_release, sizeof(p->kernel_release), "%s", u.release);
	f = fopen("/sys/class/dmi/id/product_name", "re");
	if (f) {
		if (!fgets(product, sizeof(product), f))
			product[0] = 0;
		product[strcspn(product, "\n")] = 0;
		fclose(f);
	}
	(void)gethostname(host, sizeof(host) - 1);
	snprintf(p->machine, sizeof(p->machine), "%s, %s, %s", u.machine, product[0] ? product : "unknown product", host);
	read_config(p);
	/* Shell-like: arguments with spaces quoted. */
	len = (size_t)snprintf(p->command_line, sizeof(p->command_line), "autosleepctl");
	for (int i = 0; i < argc && len < sizeof(p->command_line); i++)
		len += (size_t)snprintf(p->command_line + len, sizeof(p->command_line) - len, strchr(argv[i], ' ') ? " '%s'" : " %s",
					argv[i]);
}

/* The kernel log since the last call: each read(2) of /dev/kmsg is one record. */
struct kmsg {
	int fd;
	struct kmsg_line lines[KMSG_KEEP_MAX];
	char *texts[KMSG_KEEP_MAX];
	size_t n;
};

static void kmsg_clear(struct kmsg *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->texts[i]);
	k->n = 0;
}

static void kmsg_drain(struct kmsg *k)
{
	char buf[8192];

	if (k->fd < 0)
		return;
	for (;;) {
		ssize_t n = read(k->fd, buf, sizeof(buf) - 1);
		unsigned long long seq, ts;
		unsigned pri;
		char *msg, *nl;

		if (n < 0 && errno == EPIPE)
			continue; /* overwritten before we read it: the next one */
		if (n <= 0)
			return;
		buf[n] = 0;
		msg = strchr(buf, ';');
		if (!msg || sscanf(buf, "%u,%llu,%llu", &pri, &seq, &ts) != 3)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		if (k->n == KMSG_KEEP_MAX) {
			/* Keep the newest: drop the oldest. */
			free(k->texts[0]);
			memmove(k->texts, k->texts + 1, (KMSG_KEEP_MAX - 1) * sizeof(k->texts[0]));
			memmove(k->lines, k->lines + 1, (KMSG_KEEP_MAX - 1) * sizeof(k->lines[0]));
			k->n--;
		}
		k->texts[k->n] = strndup(msg, KMSG_LINE_MAX);
		if (!k->texts[k->n])
			return;
		k->lines[k->n] = (struct kmsg_line){ .ts_usec = ts, .text = k->texts[k->n] };
		k->n++;
	}
}

/* One entry of a SoakCycle record: 1 when read (known type), 0 to have it skipped. */
static int record_entry(void *userdata, const char *key, sd_bus_message *m, const char *type)
{
	struct soak_cycle *c = userdata;
	int r;

	if (strcmp(type, "s") == 0) {
		const char *s;

		r = sd_bus_message_read(m, "s", &s);
		if (r < 0)
			return r;
		if (strcmp(key, "Result") == 0)
			c->result = soak_class_from_string(s);
		else if (strcmp(key, "WakeReason") == 0)
			snprintf(c->wake_reason, sizeof(c->wake_reason), "%s", s);
		else if (strcmp(key, "Detail") == 0)
			snprintf(c->detail, sizeof(c->detail), "%s", s);
		else if (strcmp(key, "FailedDevice") == 0)
			snprintf(c->failed_dev, sizeof(c->failed_dev), "%s", s);
		else if (strcmp(key, "FailedStep") == 0)
			snprintf(c->failed_step, sizeof(c->failed_step), "%s", s);
		else if (strcmp(key, "BatteryUnit") == 0)
			snprintf(c->battery_unit, sizeof(c->battery_unit), "%s", s);
	} else if (strcmp(type, "t") == 0) {
		uint64_t t;

		r = sd_bus_message_read(m, "t", &t);
		if (r < 0)
			return r;
		if (strcmp(key, "StartUSec") == 0)
			c->start_usec = t;
		else if (strcmp(key, "AsleepUSec") == 0)
			c->asleep_usec = t;
		else if (strcmp(key, "WriteUSec") == 0)
			c->write_usec = t;
		else if (strcmp(key, "AwakeInWriteUSec") == 0)
			c->awake_in_write_usec = t;
		else if (strcmp(key, "SuccessDelta") == 0)
			c->stats_success = t;
		else if (strcmp(key, "FailDelta") == 0)
			c->stats_fail = t;
		else if (strncmp(key, "Battery", 7) == 0) {
			int64_t v = (int64_t)MIN(t, (uint64_t)INT64_MAX);

			if (strcmp(key, "BatteryEntry") == 0)
				c->battery_entry = v;
			else if (strcmp(key, "BatteryExit") == 0)
				c->battery_exit = v;
			else if (strcmp(key, "BatteryFull") == 0)
				c->battery_full = v;
			/* 0: no battery gave energy, nor charge with a voltage. */
			else if (strcmp(key, "BatteryEnergyEntryUWh") == 0 && t > 0)
				c->battery_energy_entry_uwh = v;
			else if (strcmp(key, "BatteryEnergyExitUWh") == 0 && t > 0)
				c->battery_energy_exit_uwh = v;
		}
	} else if (strcmp(type, "i") == 0) {
		int32_t i;

		r = sd_bus_message_read(m, "i", &i);
		if (r < 0)
			return r;
		if (strcmp(key, "Errno") == 0)
			c->error = i;
		else if (strcmp(key, "FailedErrno") == 0)
			c->failed_errno = i < 0 ? -i : i;
	} else if (strcmp(type, "x") == 0) {
		int64_t x;

		r = sd_bus_message_read(m, "x", &x);
		if (r < 0)
			return r;
		if (strcmp(key, "LastHwSleepUSec") == 0)
			c->last_hw_sleep_usec = x;
	} else if (strcmp(type, "b") == 0) {
		int b;

		r = sd_bus_message_read(m, "b", &b);
		if (r < 0)
			return r;
		if (strcmp(key, "AlarmArmed") == 0)
			c->alarm_armed = b;
		else if (strcmp(key, "BatteryOnAC") == 0)
			c->battery_on_ac = b;
		else if (strcmp(key, "AlarmCleared") == 0)
			c->alarm_cleared = b;
	} else if (strcmp(type, "a(st)") == 0) {
		const char *name;
		uint64_t usec;
		size_t len = 0;

		r = sd_bus_message_enter_container(m, 'a', "(st)");
		if (r < 0)
			return r;
		while ((r = sd_bus_message_read(m, "(st)", &name, &usec)) > 0)
			if (len < sizeof(c->blockers))
				len += (size_t)snprintf(c->blockers + len, sizeof(c->blockers) - len,
							"%s%s %" PRIu64 ".%03" PRIu64 "s", len ? ", " : "", name,
							usec / USEC_PER_SEC, usec % USEC_PER_SEC / 1000);
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(m);
	} else
		return 0;
	return r < 0 ? r : 1;
}

static int get_record(sd_bus_message *reply, struct soak_cycle *c)
{
	int r = bus_dict_walk(reply, record_entry, c);

	if (r < 0)
		return r;
	return c->result < 0 ? -EBADMSG : 0;
}

static int arm_rtc(usec_t sleep)
{
	char buf[32];
	int r;

	/* Disarm first: the kernel refuses a new alarm while one is armed. */
	r = write_file(RTC_WAKEALARM, "0");
	snprintf(buf, sizeof(buf), "+%" PRIu64, (uint64_t)(sleep / USEC_PER_SEC));
	if (r >= 0)
		r = write_file(RTC_WAKEALARM, buf);
	if (r < 0)
		fprintf(stderr, "Failed to arm the RTC alarm (%s): %s\n", RTC_WAKEALARM, strerror(-r));
	return r;
}

/*
 * A CLOCK_BOOTTIME_ALARM timer wakes the machine through the alarmtimer's
 * RTC, in the kernel's hands (it refuses to suspend less than 2 s before
 * it). It must stay open across the suspend; it needs CAP_WAKE_ALARM.
 */
static int arm_timerfd(usec_t sleep)
{
	struct itimerspec its = { .it_value = timespec_from_usec(sleep) };
	int fd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd < 0) {
		fprintf(stderr, "CLOCK_BOOTTIME_ALARM timers are not available here (%m): use --alarm=rtc\n");
		return negative_errno();
	}
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		int r = negative_errno();

		fprintf(stderr, "Failed to arm the CLOCK_BOOTTIME_ALARM timer: %s\n", strerror(-r));
		close(fd);
		return r;
	}
	return fd;
}

/* One cycle: arm the alarm, ask the daemon, disarm. */
static int run_cycle(sd_bus *bus, const struct soak_args *a, usec_t sleep, struct soak_cycle *c)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
	_cleanup_close_ int tfd = -EBADF;
	usec_t wake_at = 0;
	uint64_t expired = 0;
	int r;

	c->requested_usec = a->pm_test ? 0 : sleep;
	snprintf(c->wake_alarm, sizeof(c->wake_alarm), "%s", a->pm_test ? "none" : a->timerfd ? "timerfd" : "rtc");
	if (!a->pm_test) {
		if (a->timerfd) {
			tfd = arm_timerfd(sleep);
			r = tfd < 0 ? tfd : 0;
		} else
			r = arm_rtc(sleep);
		if (r < 0)
			return r;
		wake_at = now(CLOCK_BOOTTIME) + sleep;
	}
	r = sd_bus_message_new_method_call(bus, &call, BUS_NAME, BUS_PATH, BUS_INTERFACE, "SoakCycle");
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0)
		r = sd_bus_message_append(call, "{sv}{sv}{sv}{sv}", "State", "s", a->state, "SleepUSec", "t", (uint64_t)sleep,
					  "WakeAtUSec", "t", (uint64_t)wake_at, "Force", "b", a->force);
	if (r >= 0 && a->pm_test)
		r = sd_bus_message_append(call, "{sv}", "PmTest", "s", a->pm_test);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r < 0)
		return r;
	/* The daemon's own watchdog answers a hang; this only bounds a daemon that never does. */
	r = sd_bus_call(bus, call, sleep + 600 * USEC_PER_SEC, &e, &reply);
	if (!a->pm_test && !a->timerfd)
		(void)write_file(RTC_WAKEALARM, "0");
	if (r < 0) {
		fprintf(stderr, "SoakCycle failed: %s\n", e.message ? e.message : strerror(-r));
		return r;
	}
	r = get_record(reply, c);
	if (r < 0) {
		fprintf(stderr, "Failed to read the soak record: %s\n", strerror(-r));
		return r;
	}
	if (tfd >= 0) {
		struct itimerspec left = {};

		/*
		 * The daemon saw rtc0's wakealarm, which this timer does not use:
		 * the timer's own word counts. The alarmtimer sets the RTC in whole
		 * seconds and may wake us a little before the timer is due; it
		 * fired if it expired, or is due within the tolerance of a
		 * premature wake. Further off, something else woke us.
		 */
		c->alarm_armed = true;
		if (read(tfd, &expired, sizeof(expired)) == sizeof(expired) && expired > 0)
			c->alarm_cleared = true;
		else
			c->alarm_cleared = timerfd_gettime(tfd, &left) == 0 &&
					   (uint64_t)left.it_value.tv_sec * USEC_PER_SEC + (uint64_t)left.it_value.tv_nsec / 1000 <=
						   soak_wake_tolerance(sleep);
		if (c->result == SOAK_CLASS_SUCCESS && !c->alarm_cleared)
			c->result = SOAK_CLASS_ALARM_NOT_CLEARED;
	}
	return 0;
}

static int write_report(const char *dir, const struct soak_provenance *p, const struct soak_cycle *cycles, size_t n)
{
	static const char *const names[] = { "report.md", "report.svg", "report.html" };

	for (int i = 0; i < 3; i++) {
		_cleanup_free_ char *path = NULL;
		FILE *f;

		if (asprintf(&path, "%s/%s", dir, names[i]) < 0)
			return -ENOMEM;
		f = fopen(path, "we");
		if (!f) {
			fprintf(stderr, "Failed to write %s: %m\n", path);
			return negative_errno();
		}
		if (i == 0)
			soak_report_markdown(f, p, cycles, n);
		else if (i == 1)
			soak_report_svg(f, cycles, n);
		else
			soak_report_html(f, p, cycles, n);
		if (fclose(f) != 0)
			return negative_errno();
	}
	return 0;
}

static int compare(const struct soak_args *a)
{
	struct soak_provenance pa, pb;
	struct soak_cycle *ca = NULL, *cb = NULL;
	size_t na, nb;
	int r;

	r = soak_run_load(a->compare[0], &pa, &ca, &na);
	if (r >= 0)
		r = soak_run_load(a->compare[1], &pb, &cb, &nb);
	if (r >= 0)
		soak_report_compare(stdout, a->compare[0], &pa, ca, na, a->compare[1], &pb, cb, nb);
	free(ca);
	free(cb);
	return r;
}

static void print_cycle(const struct soak_cycle *c, unsigned total)
{
	char of[32] = "";

	if (total)
		snprintf(of, sizeof(of), "/%u", total);
	printf("cycle %u%s: %s, slept %.3f s (asked %.0f s), woken by %s, entry+exit %.1f ms%s%s%s%s\n", c->cycle, of,
	       soak_class_to_string(c->result), c->asleep_usec / 1e6, c->requested_usec / 1e6,
	       c->wake_reason[0] ? c->wake_reason : "-", c->awake_in_write_usec / 1e3, c->premature ? ", premature" : "",
	       c->late ? ", late" : "", c->detail[0] ? "; " : "", c->detail);
	fflush(stdout);
}

int verb_soak(int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_free_ char *dir_buf = NULL, *jsonl = NULL, *prov = NULL;
	struct soak_cycle *cycles = NULL;
	struct kmsg *k = NULL;
	struct soak_provenance p;
	struct soak_args a;
	size_t n = 0, cap = 0, failures = 0;
	unsigned streak = 0;
	uint64_t rng;
	usec_t t0;
	const char *dir;
	FILE *out = NULL, *pf;
	int r;

	r = parse_args(argc, argv, &a);
	if (r <= 0)
		return r;
	if (a.compare[0])
		return compare(&a);
	if (!a.have_seed)
		a.seed = now(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
	rng = a.seed;
	dir = a.output;
	if (!dir) {
		time_t t = time(NULL);
		struct tm tm;
		char stamp[32];

		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime_r(&t, &tm));
		if (asprintf(&dir_buf, "soak-%s", stamp) < 0)
			return -ENOMEM;
		dir = dir_buf;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "Failed to create %s: %m\n", dir);
		return negative_errno();
	}
	if (asprintf(&jsonl, "%s/cycles.jsonl", dir) < 0 || asprintf(&prov, "%s/provenance.json", dir) < 0)
		return -ENOMEM;
	read_provenance(&p, argc, argv, a.seed);
	pf = fopen(prov, "we");
	if (!pf) {
		fprintf(stderr, "Failed to write %s: %m\n", prov);
		return negative_errno();
	}
	soak_provenance_write_json(pf, &p);
	fclose(pf);
	out = fopen(jsonl, "we");
	if (!out) {
		fprintf(stderr, "Failed to write %s: %m\n", jsonl);
		return negative_errno();
	}
	r = sd_bus_open_system(&bus);
	if (r < 0) {
		fprintf(stderr, "Failed to connect to the system bus: %s\n", strerror(-r));
		goto finish;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		r = -ENOMEM;
		goto finish;
	}
	k->fd = open(KMSG, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd < 0)
		fprintf(stderr, "Cannot read %s (%m): no kernel log, latencies or BUG lines in the records\n", KMSG);
	else
		(void)lseek(k->fd, 0, SEEK_END);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("Soak: seed %" PRIu64 " (--seed=%" PRIu64 " replays the ranges), output %s\n", a.seed, a.seed, dir);
	fflush(stdout);
	t0 = now(CLOCK_BOOTTIME);
	for (unsigned i = 1; !interrupted; i++) {
		struct soak_cycle *c;
		usec_t sleep, awake;

		if (a.cycles && i > a.cycles)
			break;
		if (a.duration && now(CLOCK_BOOTTIME) - t0 >= a.duration)
			break;
		if (n == cap) {
			size_t m = cap ? cap * 2 : 64;
			struct soak_cycle *x = reallocarray(cycles, m, sizeof(*x));

			if (!x) {
				r = -ENOMEM;
				break;
			}
			cycles = x;
			cap = m;
		}
		c = &cycles[n];
		soak_cycle_init(c, i);
		sleep = pick(&a.sleep, &rng, true);
		awake = pick(&a.awake, &rng, false);
		kmsg_drain(k);
		kmsg_clear(k);
		r = run_cycle(bus, &a, sleep, c);
		if (r < 0)
			break;
		kmsg_drain(k);
		soak_cycle_flag_wake(c);
		soak_cycle_scan_kmsg(c, k->lines, k->n);
		soak_cycle_write_json(out, c);
		fflush(out);
		print_cycle(c, a.cycles);
		n++;
		if (soak_class_is_failure(c->result)) {
			failures++;
			if (a.max_failures && ++streak >= a.max_failures) {
				printf("Stopping: %u consecutive failures (--max-failures)\n", streak);
				break;
			}
		} else
			streak = 0;
		if (c->result == SOAK_CLASS_HANG) {
			printf("Stopping: the daemon reported a hang\n");
			break;
		}
		if (!interrupted && awake > 0) {
			struct timespec ts = timespec_from_usec(awake);

			(void)nanosleep(&ts, NULL);
		}
	}
finish:
	if (out)
		fclose(out);
	if (k) {
		kmsg_clear(k);
		safe_close(k->fd);
		free(k);
	}
	if (n > 0) {
		int q = write_report(dir, &p, cycles, n);

		if (q < 0 && r >= 0)
			r = q;
		printf("Soak: %zu cycles, %zu failed; report in %s/report.md, report.html, report.svg\n", n, failures, dir);
	}
	free(cycles);
	if (r < 0)
		return r;
	/* A run with failed cycles is a failed run, for scripts. */
	return failures > 0 ? -EIO : 0;
}
