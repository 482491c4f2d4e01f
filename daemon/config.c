/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "input-class.h"
#include "log.h"
#include "macro.h"
#include "wakelock.h"

_Static_assert(CONFIG_TIME_MAX <= WAKELOCK_TIMEOUT_MAX, "IdleTimeoutSec must fit a kernel wake lock timeout");

void config_init(struct config *c)
{
	*c = (struct config){
		.backoff_base = 100 * USEC_PER_MSEC,
		.backoff_multiplier = 2.0,
		.backoff_flat_attempts = 0,
		.backoff_max = 60 * USEC_PER_SEC,
		.short_suspend = 0,
		.max_locks_per_user = 64,
		.set_userspace_autosleep = true,
		.wait_for_resume = 20 * USEC_PER_SEC,
		.startup_hold = 5 * USEC_PER_SEC,
		.honor_inhibitors = true,
		.hold_sleep_inhibitor = false,
		.honor_idle_hint = true,
		.lock_before_sleep = true,
		.lock_timeout = 2 * USEC_PER_SEC,
		.handle_lid = true,
		.hold_wake_timers = true,
		.timer_max_hold = 30 * USEC_PER_MINUTE,
		.timer_guard = 3 * USEC_PER_SEC,
		.idle_timeout = 30 * USEC_PER_SEC,
		.resume_grace = 5 * USEC_PER_SEC,
		.input_classes = (1u << INPUT_CLASS_KEYBOARD) | (1u << INPUT_CLASS_POINTER) | (1u << INPUT_CLASS_TOUCHPAD) |
				 (1u << INPUT_CLASS_TOUCHSCREEN) | (1u << INPUT_CLASS_TABLET),
	};
	/* Allocation failure here is fatal anyway; config_verify catches NULL. */
	c->state = strdup("mem");
	c->wake_lock_name = strdup("autosleepd");
	c->ignore_devices = strdup("");
	c->group = strdup("");
	/* i8042 keyboards and mice, USB host controllers (keyboards, mice, tablets). */
	c->input_wake_sources = strdup("i8042 xhci_hcd ehci_hcd ohci_hcd uhci_hcd");
}

void config_done(struct config *c)
{
	free(c->state);
	free(c->mem_sleep);
	free(c->wake_lock_name);
	free(c->ignore_devices);
	free(c->input_wake_sources);
	free(c->group);
	for (size_t i = 0; i < ELEMENTSOF(c->origin); i++)
		free(c->origin[i].file);
	*c = (struct config){};
}

int wake_lock_name_check(const char *name, char *ret_problem, size_t size)
{
	size_t n = strlen(name);

	/* The kernel splits wake_lock writes at whitespace; 64 keeps names readable. */
	if (n == 0) {
		snprintf(ret_problem, size, "Wake lock name is empty");
		return -EINVAL;
	}
	if (n > WAKE_LOCK_NAME_MAX) {
		snprintf(ret_problem, size, "Wake lock name is %zu bytes long, at most %d are allowed", n,
			 WAKE_LOCK_NAME_MAX);
		return -EINVAL;
	}
	for (const char *p = name; *p; p++)
		if (*p <= ' ' || *p > '~') {
			snprintf(ret_problem, size,
				 "Wake lock name contains byte 0x%02x at offset %zu; only printable ASCII without "
				 "whitespace is allowed",
				 (unsigned char)*p, (size_t)(p - name));
			return -EINVAL;
		}
	return 0;
}

bool wake_lock_name_is_valid(const char *name)
{
	char problem[160];

	return wake_lock_name_check(name, problem, sizeof(problem)) >= 0;
}

static char *strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

struct config_key;

/*
 * Parse value into field. On -EINVAL a parser may say why in problem (else
 * the message gives only the expected form); -ENOMEM is passed on.
 */
typedef int (*parse_fn)(const struct config_key *k, const char *value, void *field, char *problem, size_t size);

struct config_key {
	const char *section;
	const char *key;
	parse_fn parse;
	size_t offset;
	const char *expect;
	/* Time keys only: the allowed range. */
	usec_t min, max;
};

static int parse_string(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	char **s = field, *copy;

	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	free(*s);
	*s = copy;
	return 0;
}

static int parse_state(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	/* Hibernation ("disk") is not an opportunistic sleep state. */
	if (strcmp(value, "mem") != 0 && strcmp(value, "standby") != 0 && strcmp(value, "freeze") != 0)
		return -EINVAL;
	return parse_string(k, value, field, problem, size);
}

static int parse_mem_sleep(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	if (*value == 0) {
		char **s = field;

		free(*s);
		*s = NULL;
		return 0;
	}
	if (strcmp(value, "s2idle") != 0 && strcmp(value, "shallow") != 0 && strcmp(value, "deep") != 0)
		return -EINVAL;
	return parse_string(k, value, field, problem, size);
}

static int parse_wake_lock_name(const struct config_key *k, const char *value, void *field, char *problem,
				size_t size)
{
	if (wake_lock_name_check(value, problem, size) < 0)
		return -EINVAL;
	return parse_string(k, value, field, problem, size);
}

static int parse_usec(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	usec_t u;
	int r;

	r = parse_sec(value, &u);
	if (r == -ERANGE) {
		snprintf(problem, size, "not representable in whole microseconds below 2^64");
		return -EINVAL;
	}
	if (r < 0)
		return -EINVAL;
	/* "infinity" would overflow the deadlines and kernel timeouts built from it. */
	if (u == USEC_INFINITY) {
		snprintf(problem, size, "infinity is not allowed here");
		return -EINVAL;
	}
	/* The limits themselves are spelled out in k->expect. */
	if (u > k->max) {
		snprintf(problem, size, "more than the maximum");
		return -EINVAL;
	}
	if (u < k->min) {
		snprintf(problem, size, "less than the minimum");
		return -EINVAL;
	}
	*(usec_t *)field = u;
	return 0;
}

/* Digits, optionally '.' and digits: what strtod() may see (no hex, exponent, inf or nan). */
static bool is_plain_decimal(const char *s)
{
	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return *s == 0;
}

static int parse_multiplier(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	double *d = field, v;
	char *end;

	if (!is_plain_decimal(value))
		return -EINVAL;
	errno = 0;
	v = strtod(value, &end);
	if (errno != 0 || end == value || *end != 0 || !isfinite(v) || v < 1.0 || v > 1000.0)
		return -EINVAL;
	*d = v;
	return 0;
}

static int parse_unsigned(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	unsigned *u = field;
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*value))
		return -EINVAL;
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno != 0 || *end != 0 || v > 1000000)
		return -EINVAL;
	*u = (unsigned)v;
	return 0;
}

static int parse_bool(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	static const char *const yes[] = { "1", "yes", "true", "on" }, *const no[] = { "0", "no", "false", "off" };
	bool *b = field;

	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (strcasecmp(value, yes[i]) == 0) {
			*b = true;
			return 0;
		}
		if (strcasecmp(value, no[i]) == 0) {
			*b = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_lock_limit(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	unsigned v;
	int r;

	r = parse_unsigned(k, value, &v, problem, size);
	if (r < 0 || v < 1 || v > WAKE_LOCKS_MAX)
		return -EINVAL;
	*(unsigned *)field = v;
	return 0;
}

static int parse_classes(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	_cleanup_free_ char *copy = strdup(value);
	char *saveptr = NULL, *tok;
	unsigned mask = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, " \t", &saveptr); tok; tok = strtok_r(NULL, " \t", &saveptr)) {
		enum input_class c = input_class_from_string(tok);

		if (c < 0 || c == INPUT_CLASS_NONE)
			return -EINVAL;
		mask |= 1u << c;
	}
	*(unsigned *)field = mask;
	return 0;
}

static int parse_word_list(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	/* Words are matched against device names and IRQ actions; control bytes are never meant. */
	for (const char *p = value; *p; p++)
		if ((unsigned char)*p < ' ' && *p != '\t')
			return -EINVAL;
	return parse_string(k, value, field, problem, size);
}

/* A group name as useradd takes it, or a gid: looked up when the daemon starts. */
static int parse_group(const struct config_key *k, const char *value, void *field, char *problem, size_t size)
{
	size_t n = strlen(value);

	if (n > 32 || value[0] == '-')
		return -EINVAL;
	for (const char *p = value; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-' || *p == '.'))
			return -EINVAL;
	return parse_string(k, value, field, problem, size);
}

#define KEY(id, sec, name, fn, field, exp, ...)                                                     \
	[id] = { .section = sec, .key = name, .parse = fn, .offset = offsetof(struct config, field), .expect = exp, \
		 __VA_ARGS__ }

/* Indexed by enum config_key_id. */
static const struct config_key config_keys[_CONFIG_KEY_MAX] = {
	KEY(CONFIG_KEY_STATE, "Suspend", "State", parse_state, state, "mem, standby or freeze"),
	KEY(CONFIG_KEY_MEM_SLEEP, "Suspend", "MemSleep", parse_mem_sleep, mem_sleep, "s2idle, shallow, deep or empty"),
	KEY(CONFIG_KEY_WAKE_LOCK_NAME, "Suspend", "WakeLockName", parse_wake_lock_name, wake_lock_name,
	    "1-64 printable ASCII characters without whitespace"),
	KEY(CONFIG_KEY_SET_USERSPACE_AUTOSLEEP, "Suspend", "SetUserspaceAutosleep", parse_bool, set_userspace_autosleep,
	    "a boolean"),
	KEY(CONFIG_KEY_WAIT_FOR_RESUME, "Suspend", "WaitForResumeSec", parse_usec, wait_for_resume,
	    "a time span from 100ms to 1h", .min = 100 * USEC_PER_MSEC, .max = USEC_PER_HOUR),
	KEY(CONFIG_KEY_DELAY, "Backoff", "DelaySec", parse_usec, backoff_base, "a time span from 1ms to 24h",
	    .min = CONFIG_DELAY_MIN, .max = CONFIG_TIME_MAX),
	KEY(CONFIG_KEY_MULTIPLIER, "Backoff", "Multiplier", parse_multiplier, backoff_multiplier,
	    "a number from 1 to 1000"),
	KEY(CONFIG_KEY_FLAT_ATTEMPTS, "Backoff", "FlatAttempts", parse_unsigned, backoff_flat_attempts,
	    "a whole number from 0 to 1000000"),
	KEY(CONFIG_KEY_MAX_DELAY, "Backoff", "MaxDelaySec", parse_usec, backoff_max, "a time span from 1ms to 24h",
	    .min = CONFIG_DELAY_MIN, .max = CONFIG_TIME_MAX),
	KEY(CONFIG_KEY_SHORT_SUSPEND, "Backoff", "ShortSuspendSec", parse_usec, short_suspend,
	    "a time span up to 24h, 0 to turn it off", .min = 0, .max = CONFIG_TIME_MAX),
	KEY(CONFIG_KEY_MAX_PER_USER, "WakeLocks", "MaxPerUser", parse_lock_limit, max_locks_per_user,
	    "a whole number from 1 to 16384"),
	KEY(CONFIG_KEY_GROUP, "WakeLocks", "Group", parse_group, group,
	    "a group name or gid of at most 32 letters, digits, '_', '-' and '.', or empty"),
	KEY(CONFIG_KEY_STARTUP_HOLD, "WakeLocks", "StartupHoldSec", parse_usec, startup_hold,
	    "a time span up to 24h, 0 to not hold", .min = 0, .max = CONFIG_TIME_MAX),
	KEY(CONFIG_KEY_IDLE_TIMEOUT, "Activity", "IdleTimeoutSec", parse_usec, idle_timeout,
	    "a time span up to 24h, 0 to not watch input", .min = 0, .max = CONFIG_TIME_MAX),
	KEY(CONFIG_KEY_RESUME_GRACE, "Activity", "ResumeGraceSec", parse_usec, resume_grace, "a time span up to 24h",
	    .min = 0, .max = CONFIG_TIME_MAX),
	KEY(CONFIG_KEY_CLASSES, "Activity", "Classes", parse_classes, input_classes,
	    "a list of keyboard, pointer, touchpad, touchscreen and tablet"),
	KEY(CONFIG_KEY_IGNORE_DEVICES, "Activity", "IgnoreDevices", parse_word_list, ignore_devices,
	    "a list of device name patterns"),
	KEY(CONFIG_KEY_INPUT_WAKE_SOURCES, "Activity", "InputWakeSources", parse_word_list, input_wake_sources,
	    "a list of IRQ action names"),
	KEY(CONFIG_KEY_HONOR_INHIBITORS, "Logind", "HonorInhibitors", parse_bool, honor_inhibitors, "a boolean"),
	KEY(CONFIG_KEY_HOLD_SLEEP_INHIBITOR, "Logind", "HoldSleepInhibitor", parse_bool, hold_sleep_inhibitor,
	    "a boolean"),
	KEY(CONFIG_KEY_HONOR_IDLE_HINT, "Logind", "HonorIdleHint", parse_bool, honor_idle_hint, "a boolean"),
	KEY(CONFIG_KEY_LOCK_BEFORE_SLEEP, "Logind", "LockBeforeSleep", parse_bool, lock_before_sleep, "a boolean"),
	KEY(CONFIG_KEY_LOCK_TIMEOUT, "Logind", "LockTimeoutSec", parse_usec, lock_timeout,
	    "a time span from 1ms to 1min", .min = USEC_PER_MSEC, .max = USEC_PER_MINUTE),
	KEY(CONFIG_KEY_HANDLE_LID, "Logind", "HandleLid", parse_bool, handle_lid, "a boolean"),
	KEY(CONFIG_KEY_HOLD_WAKE_TIMERS, "Timers", "HoldWakeTimers", parse_bool, hold_wake_timers, "a boolean"),
	KEY(CONFIG_KEY_TIMER_MAX_HOLD, "Timers", "MaxHoldSec", parse_usec, timer_max_hold,
	    "a time span from 1s to 24h", .min = USEC_PER_SEC, .max = CONFIG_TIME_MAX),
	KEY(CONFIG_KEY_TIMER_GUARD, "Timers", "GuardSec", parse_usec, timer_guard,
	    "a time span up to 1min, 0 to not guard", .min = 0, .max = USEC_PER_MINUTE),
};

static bool section_known(const char *section)
{
	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
		if (strcmp(config_keys[i].section, section) == 0)
			return true;
	return false;
}

static const struct config_key *config_key_find(const char *section, const char *key)
{
	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
		if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].key, key) == 0)
			return &config_keys[i];
	return NULL;
}

static int config_set_origin(struct config *c, const struct config_key *k, const char *path, unsigned line)
{
	struct config_origin *o = &c->origin[k - config_keys];
	char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	free(o->file);
	*o = (struct config_origin){ .file = copy, .line = line, .seq = ++c->n_assignments };
	return 0;
}

/* One line, NUL terminated and stripped; section carries over between lines. */
static int config_parse_line(struct config *c, const char *path, unsigned lineno, char *l, char *section,
			     size_t section_size)
{
	const struct config_key *k;
	char *eq, *key, *value, problem[256] = "";
	int r;

	if (*l == 0 || *l == '#' || *l == ';')
		return 0;
	if (*l == '[') {
		size_t n = strlen(l);

		if (n < 3 || l[n - 1] != ']' || n - 2 >= section_size)
			return log_error_errno(-EINVAL, "%s:%u: malformed section header '%s'", path, lineno, l);
		memcpy(section, l + 1, n - 2);
		section[n - 2] = 0;
		if (!section_known(section))
			return log_error_errno(-EINVAL, "%s:%u: unknown section [%s]", path, lineno, section);
		return 0;
	}
	eq = strchr(l, '=');
	if (!eq)
		return log_error_errno(-EINVAL, "%s:%u: expected 'Key=value', got '%s'", path, lineno, l);
	*eq = 0;
	key = strip(l);
	value = strip(eq + 1);
	if (section[0] == 0)
		return log_error_errno(-EINVAL, "%s:%u: key '%s' outside of any section", path, lineno, key);
	k = config_key_find(section, key);
	if (!k)
		return log_error_errno(-EINVAL, "%s:%u: unknown key '%s' in section [%s]", path, lineno, key, section);
	r = k->parse(k, value, (char *)c + k->offset, problem, sizeof(problem));
	if (r == -ENOMEM)
		return log_error_errno(r, "%s:%u: out of memory", path, lineno);
	if (r < 0 && problem[0])
		return log_error_errno(-EINVAL, "%s:%u: invalid value '%s' for key '%s' in section [%s]: %s; expected %s",
				       path, lineno, value, key, section, problem, k->expect);
	if (r < 0)
		return log_error_errno(-EINVAL, "%s:%u: invalid value '%s' for key '%s' in section [%s]: expected %s",
				       path, lineno, value, key, section, k->expect);
	r = config_set_origin(c, k, path, lineno);
	if (r < 0)
		return log_error_errno(r, "%s:%u: out of memory", path, lineno);
	return 0;
}

int config_parse_buffer(struct config *c, const char *path, const char *buf, size_t size)
{
	_cleanup_free_ char *copy = NULL;
	char section[64] = "";
	unsigned lineno = 0;
	char *p, *end;
	int r;

	/* A private, NUL-terminated copy: lines are split and stripped in place. */
	copy = malloc(size + 1);
	if (!copy)
		return log_error_errno(-ENOMEM, "%s: out of memory", path);
	memcpy(copy, buf, size);
	copy[size] = 0;
	end = copy + size;
	for (p = copy; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		lineno++;
		/* A NUL would end the line early in every string function; never skip it. */
		if (memchr(p, 0, len))
			return log_error_errno(-EINVAL, "%s:%u: contains a NUL byte", path, lineno);
		p[len] = 0;
		r = config_parse_line(c, path, lineno, strip(p), section, sizeof(section));
		if (r < 0)
			return r;
		p += len + 1;
	}
	return 0;
}

static const char *file_type_to_string(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a regular file";
}

/*
 * The whole file, at most CONFIG_FILE_SIZE_MAX bytes. O_NONBLOCK: opening a
 * FIFO must not wait for a writer, and the checks after fstat() refuse it
 * (and /dev/zero, and directories) before anything is read.
 */
static int config_read_file(const char *path, char **ret, size_t *ret_size)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t size = 0, alloc;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int r = negative_errno();

		if (r == -ENOENT)
			return r;
		/* Opening a socket fails with ENXIO; say what it is. */
		if (r == -ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return log_error_errno(-EINVAL, "%s is %s, not a regular file", path,
					       file_type_to_string(st.st_mode));
		return log_error_errno(r, "Failed to open %s: %m", path);
	}
	if (fstat(fd, &st) < 0)
		return log_error_errno(negative_errno(), "Failed to stat %s: %m", path);
	if (S_ISDIR(st.st_mode))
		return log_error_errno(-EISDIR, "%s is a directory, not a regular file", path);
	if (!S_ISREG(st.st_mode))
		return log_error_errno(-EINVAL, "%s is %s, not a regular file", path, file_type_to_string(st.st_mode));
	if ((uintmax_t)st.st_size > CONFIG_FILE_SIZE_MAX)
		return log_error_errno(-EFBIG, "%s is %jd bytes long, more than the limit of %zu bytes", path,
				       (intmax_t)st.st_size, CONFIG_FILE_SIZE_MAX);

	/*
	 * st_size is a hint only: the file may grow while we read, or be a /proc
	 * file that says 0. One byte more than the limit tells "too long" apart.
	 */
	alloc = (size_t)st.st_size + 1;
	buf = malloc(alloc);
	if (!buf)
		return log_error_errno(-ENOMEM, "%s: out of memory", path);
	for (;;) {
		ssize_t n;

		if (size == alloc) {
			char *b;

			if (alloc > CONFIG_FILE_SIZE_MAX)
				return log_error_errno(-EFBIG, "%s is longer than the limit of %zu bytes", path,
						       CONFIG_FILE_SIZE_MAX);
			alloc = MIN(MAX(alloc * 2, (size_t)4096), CONFIG_FILE_SIZE_MAX + 1);
			b = realloc(buf, alloc);
			if (!b)
				return log_error_errno(-ENOMEM, "%s: out of memory", path);
			buf = b;
		}
		n = read(fd, buf + size, alloc - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return log_error_errno(negative_errno(), "Failed to read %s: %m", path);
		if (n == 0)
			break;
		size += (size_t)n;
	}
	*ret = TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

int config_parse_file(struct config *c, const char *path)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	int r;

	r = config_read_file(path, &buf, &size);
	if (r < 0)
		return r;
	return config_parse_buffer(c, path, buf, size);
}

static int dropin_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0;
}

/* "file:line: " for messages about a key, or "" for a built-in default. */
static char *origin_prefix(const struct config_origin *o)
{
	char *s;

	if (!o->file)
		return strdup("");
	if (asprintf(&s, "%s:%u: ", o->file, o->line) < 0)
		return NULL;
	return s;
}

/* " (Key set at file:line)" or " (Key is the default)". */
static char *origin_note(const struct config_origin *o, const char *key)
{
	char *s;

	if (!o->file && asprintf(&s, " (%s is the default)", key) < 0)
		return NULL;
	if (o->file && asprintf(&s, " (%s set at %s:%u)", key, o->file, o->line) < 0)
		return NULL;
	return s;
}

int config_verify(const struct config *c)
{
	char a[FORMAT_TIMESPAN_MAX], b[FORMAT_TIMESPAN_MAX];

	if (!c->state || !c->wake_lock_name || !c->ignore_devices || !c->input_wake_sources || !c->group)
		return -ENOMEM;
	/* The activity lock is "<WakeLockName>.activity" and must stay a valid name too. */
	if (strlen(c->wake_lock_name) > WAKE_LOCK_NAME_MAX - strlen(".activity")) {
		_cleanup_free_ char *at = origin_prefix(&c->origin[CONFIG_KEY_WAKE_LOCK_NAME]);

		if (!at)
			return -ENOMEM;
		return log_error_errno(-EINVAL,
				       "%s[Suspend] WakeLockName=%s is too long to add '.activity' (at most %zu characters)",
				       at, c->wake_lock_name, WAKE_LOCK_NAME_MAX - strlen(".activity"));
	}
	/* Already refused key by key; kept for a config built in code. */
	if (c->backoff_base < CONFIG_DELAY_MIN || c->backoff_max > CONFIG_TIME_MAX)
		return log_error_errno(-EINVAL, "[Backoff] DelaySec and MaxDelaySec must be from 1ms to 24h");
	if (c->backoff_base > c->backoff_max) {
		const struct config_origin *od = &c->origin[CONFIG_KEY_DELAY], *om = &c->origin[CONFIG_KEY_MAX_DELAY];
		/* Blame the assignment that came last, and say where the other one was made. */
		bool delay_last = od->seq > om->seq;
		_cleanup_free_ char *at = origin_prefix(delay_last ? od : om);
		_cleanup_free_ char *note = delay_last ? origin_note(om, "MaxDelaySec") : origin_note(od, "DelaySec");

		if (!at || !note)
			return -ENOMEM;
		return log_error_errno(-EINVAL, "%s[Backoff] DelaySec=%s is greater than MaxDelaySec=%s%s", at,
				       format_timespan(a, sizeof(a), c->backoff_base),
				       format_timespan(b, sizeof(b), c->backoff_max), note);
	}
	return 0;
}

int config_load(struct config *c, const char *path, bool must_exist, const char *dropin_dir)
{
	struct dirent **list = NULL;
	int n, r;

	/* config_parse_file() logs every error but a missing file. */
	r = config_parse_file(c, path);
	if (r == -ENOENT && !must_exist)
		log_debug("No %s, using defaults", path);
	else if (r == -ENOENT)
		return log_error_errno(r, "Configuration file %s: %m", path);
	else if (r < 0)
		return r;

	if (!dropin_dir)
		return config_verify(c);
	n = scandir(dropin_dir, &list, dropin_filter, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			return config_verify(c);
		return log_error_errno(negative_errno(), "Failed to list %s: %m", dropin_dir);
	}
	r = 0;
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *p = NULL;

		if (r >= 0) {
			if (asprintf(&p, "%s/%s", dropin_dir, list[i]->d_name) < 0)
				r = log_error_errno(-ENOMEM, "Out of memory");
			else {
				r = config_parse_file(c, p);
				/* Listed a moment ago: a dangling symlink, or removed since. */
				if (r == -ENOENT)
					r = log_error_errno(r, "Failed to open %s: %m", p);
			}
		}
		free(list[i]);
	}
	free(list);
	if (r < 0)
		return r;
	return config_verify(c);
}
