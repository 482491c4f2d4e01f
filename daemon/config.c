/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "input-class.h"
#include "log.h"
#include "macro.h"

void config_init(struct config *c)
{
	*c = (struct config){
		.backoff_base = 100 * USEC_PER_MSEC,
		.backoff_multiplier = 2.0,
		.backoff_flat_attempts = 0,
		.backoff_max = 60 * USEC_PER_SEC,
		.short_suspend = 0,
		.max_locks_per_user = 64,
		.startup_hold = 5 * USEC_PER_SEC,
		.honor_inhibitors = true,
		.hold_sleep_inhibitor = false,
		.idle_timeout = 30 * USEC_PER_SEC,
		.resume_grace = 5 * USEC_PER_SEC,
		.input_classes = (1u << INPUT_CLASS_KEYBOARD) | (1u << INPUT_CLASS_POINTER) | (1u << INPUT_CLASS_TOUCHPAD) |
				 (1u << INPUT_CLASS_TOUCHSCREEN) | (1u << INPUT_CLASS_TABLET),
	};
	/* Allocation failure here is fatal anyway; config_verify catches NULL. */
	c->state = strdup("mem");
	c->wake_lock_name = strdup("autosleepd");
	c->ignore_devices = strdup("");
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

typedef int (*parse_fn)(const char *value, void *field);

static int parse_string(const char *value, void *field)
{
	char **s = field, *copy;

	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	free(*s);
	*s = copy;
	return 0;
}

static int parse_state(const char *value, void *field)
{
	/* Hibernation ("disk") is not an opportunistic sleep state. */
	if (strcmp(value, "mem") != 0 && strcmp(value, "standby") != 0 && strcmp(value, "freeze") != 0)
		return -EINVAL;
	return parse_string(value, field);
}

static int parse_mem_sleep(const char *value, void *field)
{
	if (*value == 0) {
		char **s = field;

		free(*s);
		*s = NULL;
		return 0;
	}
	if (strcmp(value, "s2idle") != 0 && strcmp(value, "shallow") != 0 && strcmp(value, "deep") != 0)
		return -EINVAL;
	return parse_string(value, field);
}

static int parse_wake_lock_name(const char *value, void *field)
{
	if (!wake_lock_name_is_valid(value))
		return -EINVAL;
	return parse_string(value, field);
}

static int parse_usec(const char *value, void *field)
{
	return parse_sec(value, field);
}

static int parse_multiplier(const char *value, void *field)
{
	double *d = field, v;
	char *end;

	errno = 0;
	v = strtod(value, &end);
	if (errno != 0 || end == value || *end != 0 || !isfinite(v) || v < 1.0 || v > 1000.0)
		return -EINVAL;
	*d = v;
	return 0;
}

static int parse_unsigned(const char *value, void *field)
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

static int parse_bool(const char *value, void *field)
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

static int parse_lock_limit(const char *value, void *field)
{
	unsigned v;
	int r;

	r = parse_unsigned(value, &v);
	if (r < 0 || v < 1 || v > 4096)
		return -EINVAL;
	*(unsigned *)field = v;
	return 0;
}

static int parse_classes(const char *value, void *field)
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

static int parse_word_list(const char *value, void *field)
{
	/* Words are matched against device names and IRQ actions; control bytes are never meant. */
	for (const char *p = value; *p; p++)
		if ((unsigned char)*p < ' ' && *p != '\t')
			return -EINVAL;
	return parse_string(value, field);
}

static const struct config_key {
	const char *section;
	const char *key;
	parse_fn parse;
	size_t offset;
	const char *expect;
} config_keys[] = {
	{ "Suspend", "State", parse_state, offsetof(struct config, state), "mem, standby or freeze" },
	{ "Suspend", "MemSleep", parse_mem_sleep, offsetof(struct config, mem_sleep),
	  "s2idle, shallow, deep or empty" },
	{ "Suspend", "WakeLockName", parse_wake_lock_name, offsetof(struct config, wake_lock_name),
	  "1-64 printable ASCII characters without whitespace" },
	{ "Backoff", "DelaySec", parse_usec, offsetof(struct config, backoff_base), "a time span such as 100ms" },
	{ "Backoff", "Multiplier", parse_multiplier, offsetof(struct config, backoff_multiplier),
	  "a number from 1 to 1000" },
	{ "Backoff", "FlatAttempts", parse_unsigned, offsetof(struct config, backoff_flat_attempts),
	  "a whole number from 0 to 1000000" },
	{ "Backoff", "MaxDelaySec", parse_usec, offsetof(struct config, backoff_max), "a time span such as 60s" },
	{ "Backoff", "ShortSuspendSec", parse_usec, offsetof(struct config, short_suspend),
	  "a time span, 0 to turn it off" },
	{ "WakeLocks", "MaxPerUser", parse_lock_limit, offsetof(struct config, max_locks_per_user),
	  "a whole number from 1 to 4096" },
	{ "WakeLocks", "StartupHoldSec", parse_usec, offsetof(struct config, startup_hold),
	  "a time span, 0 to not hold" },
	{ "Activity", "IdleTimeoutSec", parse_usec, offsetof(struct config, idle_timeout),
	  "a time span, 0 to not watch input" },
	{ "Activity", "ResumeGraceSec", parse_usec, offsetof(struct config, resume_grace), "a time span" },
	{ "Activity", "Classes", parse_classes, offsetof(struct config, input_classes),
	  "a list of keyboard, pointer, touchpad, touchscreen and tablet" },
	{ "Activity", "IgnoreDevices", parse_word_list, offsetof(struct config, ignore_devices),
	  "a list of device name patterns" },
	{ "Activity", "InputWakeSources", parse_word_list, offsetof(struct config, input_wake_sources),
	  "a list of IRQ action names" },
	{ "Logind", "HonorInhibitors", parse_bool, offsetof(struct config, honor_inhibitors), "a boolean" },
	{ "Logind", "HoldSleepInhibitor", parse_bool, offsetof(struct config, hold_sleep_inhibitor), "a boolean" },
};

static bool section_known(const char *section)
{
	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
		if (strcmp(config_keys[i].section, section) == 0)
			return true;
	return false;
}

int config_parse_file(struct config *c, const char *path)
{
	_cleanup_free_ char *line = NULL;
	char section[64] = "";
	size_t cap = 0;
	unsigned lineno = 0;
	FILE *f;
	int r = 0;

	f = fopen(path, "re");
	if (!f)
		return negative_errno();

	while (getline(&line, &cap, f) >= 0) {
		const struct config_key *k = NULL;
		char *l, *eq, *key, *value;

		lineno++;
		l = strip(line);
		if (*l == 0 || *l == '#' || *l == ';')
			continue;
		if (*l == '[') {
			size_t n = strlen(l);

			if (n < 3 || l[n - 1] != ']' || n - 2 >= sizeof(section)) {
				r = log_error_errno(-EINVAL, "%s:%u: malformed section header '%s'", path, lineno, l);
				goto out;
			}
			memcpy(section, l + 1, n - 2);
			section[n - 2] = 0;
			if (!section_known(section)) {
				r = log_error_errno(-EINVAL, "%s:%u: unknown section [%s]", path, lineno, section);
				goto out;
			}
			continue;
		}
		eq = strchr(l, '=');
		if (!eq) {
			r = log_error_errno(-EINVAL, "%s:%u: expected 'Key=value', got '%s'", path, lineno, l);
			goto out;
		}
		*eq = 0;
		key = strip(l);
		value = strip(eq + 1);
		if (section[0] == 0) {
			r = log_error_errno(-EINVAL, "%s:%u: key '%s' outside of any section", path, lineno, key);
			goto out;
		}
		for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
			if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].key, key) == 0)
				k = &config_keys[i];
		if (!k) {
			r = log_error_errno(-EINVAL, "%s:%u: unknown key '%s' in section [%s]", path, lineno, key,
					    section);
			goto out;
		}
		r = k->parse(value, (char *)c + k->offset);
		if (r == -ENOMEM)
			goto out;
		if (r < 0) {
			r = log_error_errno(-EINVAL, "%s:%u: invalid value '%s' for key '%s' in section [%s]: expected %s",
					    path, lineno, value, key, section, k->expect);
			goto out;
		}
	}
	if (ferror(f))
		r = log_error_errno(-EIO, "%s: read error", path);
out:
	fclose(f);
	return r;
}

static int dropin_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0;
}

int config_verify(const struct config *c)
{
	char a[FORMAT_TIMESPAN_MAX], b[FORMAT_TIMESPAN_MAX];

	if (!c->state || !c->wake_lock_name || !c->ignore_devices || !c->input_wake_sources)
		return -ENOMEM;
	/* The activity lock is "<WakeLockName>.activity" and must stay a valid name too. */
	if (strlen(c->wake_lock_name) > WAKE_LOCK_NAME_MAX - strlen(".activity"))
		return log_error_errno(-EINVAL, "[Suspend] WakeLockName=%s is too long to add '.activity' (at most %zu characters)",
				       c->wake_lock_name, WAKE_LOCK_NAME_MAX - strlen(".activity"));
	if (c->backoff_max == 0)
		return log_error_errno(-EINVAL, "[Backoff] MaxDelaySec must be greater than 0");
	if (c->backoff_base > c->backoff_max)
		return log_error_errno(-EINVAL, "[Backoff] DelaySec=%s is greater than MaxDelaySec=%s",
				       format_timespan(a, sizeof(a), c->backoff_base),
				       format_timespan(b, sizeof(b), c->backoff_max));
	return 0;
}

int config_load(struct config *c, const char *path, bool must_exist, const char *dropin_dir)
{
	struct dirent **list = NULL;
	int n, r;

	r = config_parse_file(c, path);
	if (r == -ENOENT && !must_exist)
		log_debug("No %s, using defaults", path);
	else if (r == -ENOENT)
		return log_error_errno(r, "Configuration file %s: %m", path);
	else if (r < 0 && r != -EINVAL)
		return log_error_errno(r, "Failed to read %s: %m", path);
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
				r = -ENOMEM;
			else {
				r = config_parse_file(c, p);
				if (r < 0 && r != -EINVAL)
					r = log_error_errno(r, "Failed to read %s: %m", p);
			}
		}
		free(list[i]);
	}
	free(list);
	if (r < 0)
		return r;
	return config_verify(c);
}
