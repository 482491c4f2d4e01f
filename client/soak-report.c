/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "macro.h"
#include "soak-report.h"

static const char *const class_names[_SOAK_CLASS_MAX] = {
	[SOAK_CLASS_SUCCESS] = "success",
	[SOAK_CLASS_BLOCKED] = "blocked",
	[SOAK_CLASS_EARLY_CANCEL] = "early-cancel",
	[SOAK_CLASS_LATE_CANCEL] = "late-cancel",
	[SOAK_CLASS_FAILURE] = "failure",
	[SOAK_CLASS_ALARM_NOT_CLEARED] = "alarm-not-cleared",
	[SOAK_CLASS_HANG] = "hang",
	[SOAK_CLASS_ALARM_IMMINENT] = "alarm-imminent",
};

/* Timeline colours, by class. */
static const char *const class_colors[_SOAK_CLASS_MAX] = {
	[SOAK_CLASS_SUCCESS] = "#2e7d32",
	[SOAK_CLASS_BLOCKED] = "#9e9e9e",
	[SOAK_CLASS_EARLY_CANCEL] = "#f9a825",
	[SOAK_CLASS_LATE_CANCEL] = "#ef6c00",
	[SOAK_CLASS_FAILURE] = "#c62828",
	[SOAK_CLASS_ALARM_NOT_CLEARED] = "#6a1b9a",
	[SOAK_CLASS_HANG] = "#000000",
	[SOAK_CLASS_ALARM_IMMINENT] = "#1565c0",
};

const char *soak_class_to_string(enum soak_class c)
{
	if (c < 0 || c >= _SOAK_CLASS_MAX)
		return NULL;
	return class_names[c];
}

enum soak_class soak_class_from_string(const char *s)
{
	for (int i = 0; s && i < _SOAK_CLASS_MAX; i++)
		if (strcmp(class_names[i], s) == 0)
			return i;
	return _SOAK_CLASS_INVALID;
}

void soak_cycle_init(struct soak_cycle *c, unsigned cycle)
{
	*c = (struct soak_cycle){ .cycle = cycle, .result = _SOAK_CLASS_INVALID, .entry_usec = -1, .exit_usec = -1,
				  .last_hw_sleep_usec = -1, .battery_entry = -1, .battery_exit = -1, .battery_full = -1,
				  .battery_energy_entry_uwh = -1, .battery_energy_exit_uwh = -1 };
}

bool soak_class_is_failure(enum soak_class c)
{
	return c != SOAK_CLASS_SUCCESS && c != SOAK_CLASS_BLOCKED && c != SOAK_CLASS_ALARM_IMMINENT;
}

uint64_t soak_wake_tolerance(uint64_t requested_usec)
{
	return 1000000 + requested_usec / 10;
}

void soak_cycle_flag_wake(struct soak_cycle *c)
{
	uint64_t tol = soak_wake_tolerance(c->requested_usec);

	c->premature = c->late = false;
	if (c->requested_usec == 0 || c->result != SOAK_CLASS_SUCCESS)
		return;
	c->premature = c->asleep_usec + tol < c->requested_usec;
	c->late = c->asleep_usec > c->requested_usec + tol;
}

static void append_line(char *buf, size_t size, const char *line)
{
	size_t len = strlen(buf);

	if (len + 1 >= size)
		return;
	snprintf(buf + len, size - len, "%s%s", len ? "\n" : "", line);
}

static bool is_bug_line(const char *t)
{
	return strncmp(t, "BUG", 3) == 0 || strncmp(t, "WARNING", 7) == 0 || strstr(t, "------------[ cut here ]") ||
	       strncmp(t, "Oops", 4) == 0 || strstr(t, "kernel BUG at");
}

void soak_cycle_scan_kmsg(struct soak_cycle *c, const struct kmsg_line *lines, size_t n)
{
	int64_t entry0 = -1, entry1 = -1, exit0 = -1, exit1 = -1;
	size_t from;

	c->entry_usec = c->exit_usec = -1;
	c->crng_reseeds = c->keypairs_destroyed = 0;
	c->bugs[0] = c->excerpt[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const char *t = lines[i].text;
		int64_t ts = (int64_t)lines[i].ts_usec;

		/* kernel/power/suspend.c and the ACPI or s2idle lines around the sleep itself. */
		if (strstr(t, "PM: suspend entry"))
			entry0 = ts;
		else if (entry1 < 0 && (strstr(t, "Preparing to enter system sleep state") || strstr(t, "PM: suspend-to-idle")))
			entry1 = ts;
		else if (strstr(t, "Low-level resume complete") || strstr(t, "PM: resume from suspend-to-idle"))
			exit0 = ts;
		else if (strstr(t, "PM: suspend exit"))
			exit1 = ts;
		if (strstr(t, "crng reseeded on system resumption"))
			c->crng_reseeds++;
		/* drivers/net/wireguard/noise.c, with its dynamic debug on: "wga: Keypair 7 destroyed for peer 1". */
		if (strstr(t, "Keypair ") && strstr(t, " destroyed for peer"))
			c->keypairs_destroyed++;
		if (is_bug_line(t))
			append_line(c->bugs, sizeof(c->bugs), t);
	}
	if (entry0 >= 0 && entry1 >= entry0)
		c->entry_usec = entry1 - entry0;
	if (exit0 >= 0 && exit1 >= exit0)
		c->exit_usec = exit1 - exit0;
	if (c->result == SOAK_CLASS_SUCCESS)
		return;
	/* The end of the log is where a failure shows. */
	from = n > 40 ? n - 40 : 0;
	for (size_t i = from; i < n; i++) {
		char l[512];

		snprintf(l, sizeof(l), "[%5" PRIu64 ".%06" PRIu64 "] %s", lines[i].ts_usec / 1000000,
			 lines[i].ts_usec % 1000000, lines[i].text);
		append_line(c->excerpt, sizeof(c->excerpt), l);
	}
}

static void kv_i64(FILE *f, bool *first, const char *key, int64_t v)
{
	json_key(f, first, key);
	if (v < 0)
		fputs("null", f);
	else
		fprintf(f, "%" PRId64, v);
}

static void kv_lines(FILE *f, bool *first, const char *key, const char *text)
{
	bool first_line = true;
	const char *p = text;

	json_key(f, first, key);
	fputc('[', f);
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char *l = strndup(p, len);

		if (!first_line)
			fputc(',', f);
		first_line = false;
		json_string(f, l ? l : "");
		free(l);
		p += len;
		if (*p)
			p++;
	}
	fputc(']', f);
}

void soak_cycle_write_json(FILE *f, const struct soak_cycle *c)
{
	bool first = true;

	fputc('{', f);
	json_kv_u64(f, &first, "cycle", c->cycle);
	json_kv_string(f, &first, "result", soak_class_to_string(c->result));
	json_kv_u64(f, &first, "start_usec", c->start_usec);
	json_kv_u64(f, &first, "requested_sleep_usec", c->requested_usec);
	json_kv_u64(f, &first, "actual_sleep_usec", c->asleep_usec);
	json_kv_bool(f, &first, "premature", c->premature);
	json_kv_bool(f, &first, "late", c->late);
	json_kv_u64(f, &first, "state_write_usec", c->write_usec);
	json_kv_u64(f, &first, "awake_in_write_usec", c->awake_in_write_usec);
	kv_i64(f, &first, "entry_latency_usec", c->entry_usec);
	kv_i64(f, &first, "exit_latency_usec", c->exit_usec);
	kv_i64(f, &first, "last_hw_sleep_usec", c->last_hw_sleep_usec);
	json_kv_u64(f, &first, "suspend_stats_success", c->stats_success);
	json_kv_u64(f, &first, "suspend_stats_fail", c->stats_fail);
	json_kv_string(f, &first, "wake_alarm", c->wake_alarm);
	json_kv_bool(f, &first, "alarm_armed", c->alarm_armed);
	json_kv_bool(f, &first, "alarm_cleared", c->alarm_cleared);
	json_kv_u64(f, &first, "errno", (uint64_t)c->error);
	json_kv_string(f, &first, "wake_reason", c->wake_reason);
	json_kv_string(f, &first, "detail", c->detail);
	json_kv_string(f, &first, "failed_dev", c->failed_dev);
	json_kv_string(f, &first, "failed_step", c->failed_step);
	json_kv_u64(f, &first, "failed_errno", (uint64_t)(c->failed_errno < 0 ? -c->failed_errno : c->failed_errno));
	json_kv_string(f, &first, "blockers", c->blockers);
	json_kv_u64(f, &first, "crng_reseeds", c->crng_reseeds);
	json_kv_u64(f, &first, "keypairs_destroyed", c->keypairs_destroyed);
	/* Without a battery: null, not a made-up number. */
	json_key(f, &first, "battery_unit");
	if (c->battery_unit[0])
		json_string(f, c->battery_unit);
	else
		fputs("null", f);
	kv_i64(f, &first, "battery_entry", c->battery_entry);
	kv_i64(f, &first, "battery_exit", c->battery_exit);
	kv_i64(f, &first, "battery_full", c->battery_full);
	kv_i64(f, &first, "battery_energy_entry_uwh", c->battery_energy_entry_uwh);
	kv_i64(f, &first, "battery_energy_exit_uwh", c->battery_energy_exit_uwh);
	json_kv_bool(f, &first, "battery_on_ac", c->battery_on_ac);
	kv_lines(f, &first, "kernel_bugs", c->bugs);
	kv_lines(f, &first, "kmsg_excerpt", c->excerpt);
	fputs("}\n", f);
}

/* --- a reader for the flat objects we write: strings, integers, booleans, null, arrays of strings --- */

enum jtype { J_STRING, J_NUMBER, J_BOOL, J_NULL, J_LINES };

struct jvalue {
	enum jtype type;
	char *s;        /* J_STRING, J_LINES ('\n'-joined) */
	int64_t n;
	bool b;
};

struct jparser {
	const char *p;
	char *err;
	size_t errsize;
};

static int jfail(struct jparser *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->err, j->errsize, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static void jspace(struct jparser *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static int jstring(struct jparser *j, char **ret)
{
	size_t cap = 64, len = 0;
	char *s;

	if (*j->p != '"')
		return jfail(j, "expected a string at '%.20s'", j->p);
	j->p++;
	s = malloc(cap);
	if (!s)
		return -ENOMEM;
	while (*j->p && *j->p != '"') {
		char ch = *j->p++;

		if (ch == '\\') {
			char e = *j->p++;
			unsigned u;

			switch (e) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case '/': ch = '/'; break;
			case 'u':
				if (sscanf(j->p, "%4x", &u) != 1 || u > 0x7f) {
					free(s);
					return jfail(j, "unsupported \\u escape");
				}
				ch = (char)u;
				j->p += 4;
				break;
			default:
				free(s);
				return jfail(j, "bad escape '\\%c'", e ? e : '0');
			}
		}
		if (len + 2 > cap) {
			char *t = realloc(s, cap *= 2);

			if (!t) {
				free(s);
				return -ENOMEM;
			}
			s = t;
		}
		s[len++] = ch;
	}
	if (*j->p != '"') {
		free(s);
		return jfail(j, "unterminated string");
	}
	j->p++;
	s[len] = 0;
	*ret = s;
	return 0;
}

static int jvalue(struct jparser *j, struct jvalue *v)
{
	*v = (struct jvalue){};
	jspace(j);
	if (*j->p == '"') {
		v->type = J_STRING;
		return jstring(j, &v->s);
	}
	if (strncmp(j->p, "true", 4) == 0 || strncmp(j->p, "false", 5) == 0) {
		v->type = J_BOOL;
		v->b = *j->p == 't';
		j->p += v->b ? 4 : 5;
		return 0;
	}
	if (strncmp(j->p, "null", 4) == 0) {
		v->type = J_NULL;
		j->p += 4;
		return 0;
	}
	if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
		char *end;

		errno = 0;
		v->type = J_NUMBER;
		v->n = strtoll(j->p, &end, 10);
		if (errno != 0 || *end == '.' || *end == 'e' || *end == 'E')
			return jfail(j, "expected an integer at '%.20s'", j->p);
		j->p = end;
		return 0;
	}
	if (*j->p == '[') {
		size_t len = 0;

		v->type = J_LINES;
		v->s = calloc(1, 1);
		if (!v->s)
			return -ENOMEM;
		j->p++;
		jspace(j);
		while (*j->p != ']') {
			char *l, *t;
			int r;

			jspace(j);
			r = jstring(j, &l);
			if (r < 0)
				return r;
			t = realloc(v->s, len + strlen(l) + 2);
			if (!t) {
				free(l);
				return -ENOMEM;
			}
			v->s = t;
			len += (size_t)sprintf(v->s + len, "%s%s", len ? "\n" : "", l);
			free(l);
			jspace(j);
			if (*j->p == ',')
				j->p++;
			else if (*j->p != ']')
				return jfail(j, "expected ',' or ']' in an array");
		}
		j->p++;
		return 0;
	}
	return jfail(j, "unexpected '%.20s'", j->p);
}

/* Walk one object; cb returns <0 to stop (with j->err set). */
static int jobject(struct jparser *j, int (*cb)(struct jparser *j, const char *key, const struct jvalue *v, void *u),
		   void *u)
{
	int r = 0;

	jspace(j);
	if (*j->p != '{')
		return jfail(j, "expected '{'");
	j->p++;
	jspace(j);
	if (*j->p == '}') {
		j->p++;
		return 0;
	}
	for (;;) {
		_cleanup_free_ char *key = NULL;
		struct jvalue v;

		jspace(j);
		r = jstring(j, &key);
		if (r < 0)
			return r;
		jspace(j);
		if (*j->p != ':')
			return jfail(j, "expected ':' after \"%s\"", key);
		j->p++;
		r = jvalue(j, &v);
		if (r >= 0)
			r = cb(j, key, &v, u);
		free(v.s);
		if (r < 0)
			return r;
		jspace(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == '}') {
			j->p++;
			break;
		}
		return jfail(j, "expected ',' or '}' after \"%s\"", key);
	}
	jspace(j);
	if (*j->p)
		return jfail(j, "trailing text after the object");
	return 0;
}

static int want(struct jparser *j, const char *key, const struct jvalue *v, enum jtype t)
{
	static const char *const names[] = { "a string", "an integer", "a boolean", "null", "an array of strings" };

	if (v->type == t)
		return 0;
	return jfail(j, "\"%s\" must be %s", key, names[t]);
}

#define COPY_STRING(field) snprintf(c->field, sizeof(c->field), "%s", v->s)

static int cycle_field(struct jparser *j, const char *key, const struct jvalue *v, void *u)
{
	struct soak_cycle *c = u;
	static const struct {
		const char *key;
		size_t off;
	} u64s[] = {
		{ "start_usec", offsetof(struct soak_cycle, start_usec) },
		{ "requested_sleep_usec", offsetof(struct soak_cycle, requested_usec) },
		{ "actual_sleep_usec", offsetof(struct soak_cycle, asleep_usec) },
		{ "state_write_usec", offsetof(struct soak_cycle, write_usec) },
		{ "awake_in_write_usec", offsetof(struct soak_cycle, awake_in_write_usec) },
		{ "suspend_stats_success", offsetof(struct soak_cycle, stats_success) },
		{ "suspend_stats_fail", offsetof(struct soak_cycle, stats_fail) },
	}, i64s[] = {
		{ "entry_latency_usec", offsetof(struct soak_cycle, entry_usec) },
		{ "exit_latency_usec", offsetof(struct soak_cycle, exit_usec) },
		{ "last_hw_sleep_usec", offsetof(struct soak_cycle, last_hw_sleep_usec) },
		{ "battery_entry", offsetof(struct soak_cycle, battery_entry) },
		{ "battery_exit", offsetof(struct soak_cycle, battery_exit) },
		{ "battery_full", offsetof(struct soak_cycle, battery_full) },
		{ "battery_energy_entry_uwh", offsetof(struct soak_cycle, battery_energy_entry_uwh) },
		{ "battery_energy_exit_uwh", offsetof(struct soak_cycle, battery_energy_exit_uwh) },
	}, bools[] = {
		{ "premature", offsetof(struct soak_cycle, premature) },
		{ "late", offsetof(struct soak_cycle, late) },
		{ "alarm_armed", offsetof(struct soak_cycle, alarm_armed) },
		{ "alarm_cleared", offsetof(struct soak_cycle, alarm_cleared) },
		{ "battery_on_ac", offsetof(struct soak_cycle, battery_on_ac) },
	};
	int r;

	for (size_t i = 0; i < ELEMENTSOF(u64s); i++)
		if (strcmp(key, u64s[i].key) == 0) {
			r = want(j, key, v, J_NUMBER);
			if (r >= 0 && v->n < 0)
				r = jfail(j, "\"%s\" must not be negative", key);
			if (r >= 0)
				*(uint64_t *)((char *)c + u64s[i].off) = (uint64_t)v->n;
			return r;
		}
	for (size_t i = 0; i < ELEMENTSOF(i64s); i++)
		if (strcmp(key, i64s[i].key) == 0) {
			if (v->type == J_NULL) {
				*(int64_t *)((char *)c + i64s[i].off) = -1;
				return 0;
			}
			r = want(j, key, v, J_NUMBER);
			if (r >= 0)
				*(int64_t *)((char *)c + i64s[i].off) = v->n;
			return r;
		}
	for (size_t i = 0; i < ELEMENTSOF(bools); i++)
		if (strcmp(key, bools[i].key) == 0) {
			r = want(j, key, v, J_BOOL);
			if (r >= 0)
				*(bool *)((char *)c + bools[i].off) = v->b;
			return r;
		}
	if (strcmp(key, "cycle") == 0 || strcmp(key, "errno") == 0 || strcmp(key, "failed_errno") == 0 ||
	    strcmp(key, "crng_reseeds") == 0 || strcmp(key, "keypairs_destroyed") == 0) {
		r = want(j, key, v, J_NUMBER);
		if (r >= 0 && (v->n < 0 || v->n > INT32_MAX))
			r = jfail(j, "\"%s\" is out of range", key);
		if (r < 0)
			return r;
		if (key[0] == 'c' && key[1] == 'y')
			c->cycle = (unsigned)v->n;
		else if (strcmp(key, "errno") == 0)
			c->error = (int)v->n;
		else if (strcmp(key, "failed_errno") == 0)
			c->failed_errno = (int)v->n;
		else if (key[0] == 'c')
			c->crng_reseeds = (unsigned)v->n;
		else
			c->keypairs_destroyed = (unsigned)v->n;
		return 0;
	}
	if (strcmp(key, "result") == 0) {
		r = want(j, key, v, J_STRING);
		if (r < 0)
			return r;
		c->result = soak_class_from_string(v->s);
		if (c->result < 0)
			return jfail(j, "unknown result '%s'", v->s);
		return 0;
	}
	if (strcmp(key, "battery_unit") == 0) {
		if (v->type == J_NULL) {
			c->battery_unit[0] = 0;
			return 0;
		}
		r = want(j, key, v, J_STRING);
		if (r >= 0)
			COPY_STRING(battery_unit);
		return r;
	}
	if (strcmp(key, "kernel_bugs") == 0 || strcmp(key, "kmsg_excerpt") == 0) {
		r = want(j, key, v, J_LINES);
		if (r < 0)
			return r;
		if (key[0] == 'k' && key[1] == 'e')
			COPY_STRING(bugs);
		else
			COPY_STRING(excerpt);
		return 0;
	}
	r = want(j, key, v, J_STRING);
	if (r < 0)
		return jfail(j, "unknown key \"%s\" or not a string", key);
	if (strcmp(key, "wake_reason") == 0)
		COPY_STRING(wake_reason);
	else if (strcmp(key, "detail") == 0)
		COPY_STRING(detail);
	else if (strcmp(key, "failed_dev") == 0)
		COPY_STRING(failed_dev);
	else if (strcmp(key, "failed_step") == 0)
		COPY_STRING(failed_step);
	else if (strcmp(key, "blockers") == 0)
		COPY_STRING(blockers);
	else if (strcmp(key, "wake_alarm") == 0)
		COPY_STRING(wake_alarm);
	else
		return jfail(j, "unknown key \"%s\"", key);
	return 0;
}

int soak_cycle_parse_json(const char *line, struct soak_cycle *c, char *err, size_t errsize)
{
	struct jparser j = { .p = line, .err = err, .errsize = errsize };

	soak_cycle_init(c, 0);
	err[0] = 0;
	if (jobject(&j, cycle_field, c) < 0)
		return -EBADMSG;
	if (c->cycle == 0 || c->result < 0) {
		snprintf(err, errsize, "a record needs \"cycle\" and \"result\"");
		return -EBADMSG;
	}
	return 0;
}

void soak_provenance_write_json(FILE *f, const struct soak_provenance *p)
{
	bool first = true;

	fputc('{', f);
	json_kv_string(f, &first, "kernel_release", p->kernel_release);
	json_kv_string(f, &first, "machine", p->machine);
	json_kv_string(f, &first, "config_hash", p->config_hash);
	json_kv_string(f, &first, "autosleep_options", p->autosleep_options);
	json_kv_string(f, &first, "command_line", p->command_line);
	json_kv_u64(f, &first, "seed", p->seed);
	json_kv_u64(f, &first, "started_usec", p->started_usec);
	fputs("}\n", f);
}

static int provenance_field(struct jparser *j, const char *key, const struct jvalue *v, void *u)
{
	struct soak_provenance *c = u;
	int r;

	if (strcmp(key, "seed") == 0 || strcmp(key, "started_usec") == 0) {
		r = want(j, key, v, J_NUMBER);
		if (r >= 0)
			*(key[0] == 's' && key[1] == 'e' ? &c->seed : &c->started_usec) = (uint64_t)v->n;
		return r;
	}
	r = want(j, key, v, J_STRING);
	if (r < 0)
		return r;
	if (strcmp(key, "kernel_release") == 0)
		COPY_STRING(kernel_release);
	else if (strcmp(key, "machine") == 0)
		COPY_STRING(machine);
	else if (strcmp(key, "config_hash") == 0)
		COPY_STRING(config_hash);
	else if (strcmp(key, "autosleep_options") == 0)
		COPY_STRING(autosleep_options);
	else if (strcmp(key, "command_line") == 0)
		COPY_STRING(command_line);
	else
		return jfail(j, "unknown key \"%s\"", key);
	return 0;
}

int soak_provenance_parse_json(const char *line, struct soak_provenance *p, char *err, size_t errsize)
{
	struct jparser j = { .p = line, .err = err, .errsize = errsize };

	*p = (struct soak_provenance){};
	err[0] = 0;
	return jobject(&j, provenance_field, p) < 0 ? -EBADMSG : 0;
}

/* --- summary --- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentiles over the values that are known (>= 0). */
static void stats_of(const struct soak_cycle *cycles, size_t n, size_t off, bool is_signed, bool successes_only,
		     struct soak_stats *ret)
{
	uint64_t *v = calloc(n ? n : 1, sizeof(*v));
	size_t k = 0;

	*ret = (struct soak_stats){};
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *base = (const char *)&cycles[i];

		if (successes_only && cycles[i].result != SOAK_CLASS_SUCCESS)
			continue;
		if (is_signed) {
			int64_t x = *(const int64_t *)(base + off);

			if (x >= 0)
				v[k++] = (uint64_t)x;
		} else
			v[k++] = *(const uint64_t *)(base + off);
	}
	if (k > 0) {
		qsort(v, k, sizeof(*v), cmp_u64);
		ret->n = k;
		ret->min = v[0];
		ret->max = v[k - 1];
		ret->median = v[(k + 1) / 2 - 1];
		ret->p95 = v[(k * 95 + 99) / 100 - 1];
	}
	free(v);
}

void soak_summarize(const struct soak_cycle *cycles, size_t n, struct soak_summary *ret)
{
	struct soak_summary s = { .cycles = n };

	for (size_t i = 0; i < n; i++) {
		const struct soak_cycle *c = &cycles[i];

		if (c->result >= 0 && c->result < _SOAK_CLASS_MAX)
			s.by_class[c->result]++;
		s.premature += c->premature;
		s.late += c->late;
		s.bugs += c->bugs[0] != 0;
		s.crng_reseeds += c->crng_reseeds;
		s.keypairs_destroyed += c->keypairs_destroyed;
		s.stats_success += c->stats_success;
		s.stats_fail += c->stats_fail;
		if (!s.first_failure && soak_class_is_failure(c->result))
			s.first_failure = c;
	}
	stats_of(cycles, n, offsetof(struct soak_cycle, entry_usec), true, true, &s.entry);
	stats_of(cycles, n, offsetof(struct soak_cycle, exit_usec), true, true, &s.exit);
	stats_of(cycles, n, offsetof(struct soak_cycle, awake_in_write_usec), false, true, &s.awake_in_write);
	stats_of(cycles, n, offsetof(struct soak_cycle, asleep_usec), false, true, &s.asleep);
	*ret = s;
}

/* --- report --- */

static void ms(char *buf, size_t size, uint64_t usec)
{
	snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, usec / 1000, usec % 1000);
}

static void stats_row(FILE *f, const char *what, const struct soak_stats *s)
{
	char a[32], b[32], c[32], d[32];

	if (s->n == 0) {
		fprintf(f, "| %s | - | - | - | - | 0 |\n", what);
		return;
	}
	ms(a, sizeof(a), s->min);
	ms(b, sizeof(b), s->median);
	ms(c, sizeof(c), s->p95);
	ms(d, sizeof(d), s->max);
	fprintf(f, "| %s | %s | %s | %s | %s | %zu |\n", what, a, b, c, d, s->n);
}

/* What the battery lost over the successful cycles, asleep, in its own unit (and in energy where known). */
static void soak_battery_line(FILE *f, const struct soak_cycle *cycles, size_t n)
{
	int64_t drop = 0, drop_uwh = 0;
	size_t k = 0, k_uwh = 0, ac = 0;
	const char *unit = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct soak_cycle *c = &cycles[i];

		if (!c->battery_unit[0] || c->battery_entry < 0 || c->battery_exit < 0)
			continue;
		ac += c->battery_on_ac;
		if (c->result != SOAK_CLASS_SUCCESS || c->battery_on_ac || (unit && strcmp(unit, c->battery_unit) != 0))
			continue;
		unit = c->battery_unit;
		drop += c->battery_entry - c->battery_exit;
		k++;
		if (c->battery_energy_entry_uwh >= 0 && c->battery_energy_exit_uwh >= 0) {
			drop_uwh += c->battery_energy_entry_uwh - c->battery_energy_exit_uwh;
			k_uwh++;
		}
	}
	if (!unit && ac == 0) {
		fprintf(f, "- Battery: none read (no battery, or none that reports energy, charge or capacity)\n\n");
		return;
	}
	fprintf(f, "- Battery: %zu successful cycles on battery lost %" PRId64 " %s in all", k, drop,
		!unit ? "" : strcmp(unit, "energy") == 0 ? "uWh" : strcmp(unit, "charge") == 0 ? "uAh" : "%");
	if (k_uwh > 0 && k_uwh == k && strcmp(unit, "energy") != 0)
		fprintf(f, " (%" PRId64 " uWh)", drop_uwh);
	fprintf(f, " from entry to exit; %zu cycles on AC not counted\n\n", ac);
}

void soak_report_markdown(FILE *f, const struct soak_provenance *p, const struct soak_cycle *cycles, size_t n)
{
	struct soak_summary s;

	soak_summarize(cycles, n, &s);
	fprintf(f, "# Suspend soak report\n\n");
	fprintf(f, "## Provenance\n\n");
	fprintf(f, "- Kernel release: %s\n", p->kernel_release);
	fprintf(f, "- Kernel config hash (FNV-1a 64 of the uncompressed config): %s\n", p->config_hash);
	fprintf(f, "- Autosleep options: %s\n", p->autosleep_options);
	fprintf(f, "- Machine: %s\n", p->machine);
	fprintf(f, "- Command line: `%s`\n", p->command_line);
	fprintf(f, "- Seed: %" PRIu64 "\n", p->seed);
	soak_battery_line(f, cycles, n);
	fprintf(f, "## Summary\n\n");
	fprintf(f, "%zu cycles.\n\n| Result | Cycles |\n|---|---|\n", s.cycles);
	for (int i = 0; i < _SOAK_CLASS_MAX; i++)
		fprintf(f, "| %s | %zu |\n", class_names[i], s.by_class[i]);
	fprintf(f, "\n- Failures (neither success, blocked nor alarm-imminent): %zu\n",
		s.cycles - s.by_class[SOAK_CLASS_SUCCESS] - s.by_class[SOAK_CLASS_BLOCKED] -
			s.by_class[SOAK_CLASS_ALARM_IMMINENT]);
	fprintf(f, "- suspend_stats deltas: success +%" PRIu64 ", fail +%" PRIu64 "\n", s.stats_success, s.stats_fail);
	fprintf(f, "- Premature wakes: %zu, late wakes: %zu (tolerance 1 s + 10%% of the request)\n", s.premature, s.late);
	fprintf(f, "- Cycles with kernel BUG/WARNING lines: %zu\n", s.bugs);
	fprintf(f, "- crng reseeds on resume: %zu, WireGuard keypairs destroyed: %zu\n\n", s.crng_reseeds,
		s.keypairs_destroyed);
	fprintf(f, "## Latency (ms, successful cycles)\n\n| | min | median | p95 | max | n |\n|---|---|---|---|---|---|\n");
	stats_row(f, "entry (kernel log: suspend entry to sleep)", &s.entry);
	stats_row(f, "exit (kernel log: resume to suspend exit)", &s.exit);
	stats_row(f, "entry + exit (CLOCK_MONOTONIC in the state write)", &s.awake_in_write);
	stats_row(f, "time asleep", &s.asleep);
	fprintf(f, "\n## First failure\n\n");
	if (!s.first_failure) {
		fprintf(f, "None.\n");
		return;
	}
	fprintf(f, "Cycle %u: %s", s.first_failure->cycle, class_names[s.first_failure->result]);
	if (s.first_failure->detail[0])
		fprintf(f, " (%s)", s.first_failure->detail);
	if (s.first_failure->failed_step[0] || s.first_failure->failed_dev[0])
		fprintf(f, ", step '%s', device '%s', errno %d", s.first_failure->failed_step, s.first_failure->failed_dev,
			s.first_failure->failed_errno);
	fprintf(f, "\n\nKernel log:\n\n```\n%s\n```\n", s.first_failure->excerpt[0] ? s.first_failure->excerpt : "(nothing)");
}

#define SVG_W 800
#define TL_H 220
#define HIST_H 200
#define HIST_BINS 20

static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

void soak_report_svg(FILE *f, const struct soak_cycle *cycles, size_t n)
{
	uint64_t max_sleep = 1, max_lat = 1;
	unsigned bins[HIST_BINS] = {}, max_bin = 1;
	double bw;

	for (size_t i = 0; i < n; i++) {
		max_sleep = MAX(max_sleep, MAX(cycles[i].asleep_usec, cycles[i].requested_usec));
		if (cycles[i].result == SOAK_CLASS_SUCCESS)
			max_lat = MAX(max_lat, cycles[i].awake_in_write_usec);
	}
	for (size_t i = 0; i < n; i++)
		if (cycles[i].result == SOAK_CLASS_SUCCESS) {
			unsigned b = (unsigned)MIN((uint64_t)HIST_BINS - 1, cycles[i].awake_in_write_usec * HIST_BINS / max_lat);

			max_bin = MAX(max_bin, ++bins[b]);
		}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
		   "font-size=\"11\">\n", SVG_W, TL_H + HIST_H + 60);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"16\" font-size=\"13\">Timeline: time asleep per cycle (bar), colour by result; "
		   "tick: requested (max %.1f s)</text>\n", max_sleep / 1e6);
	bw = n ? (double)(SVG_W - 60) / (double)n : 0;
	for (size_t i = 0; i < n; i++) {
		const struct soak_cycle *c = &cycles[i];
		double h = (double)(TL_H - 40) * (double)c->asleep_usec / (double)max_sleep;
		double rq = (double)(TL_H - 40) * (double)c->requested_usec / (double)max_sleep;
		double x = 40 + bw * (double)i;

		/* A failed cycle with no sleep still shows, as a short bar. */
		if (h < 4)
			h = 4;
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>cycle %u: ", x,
			TL_H - h, bw > 2 ? bw - 1 : bw, h, class_colors[c->result >= 0 ? c->result : SOAK_CLASS_FAILURE],
			c->cycle);
		svg_text(f, soak_class_to_string(c->result) ?: "?");
		fprintf(f, ", asleep %.3f s, woken by ", c->asleep_usec / 1e6);
		svg_text(f, c->wake_reason[0] ? c->wake_reason : "-");
		fprintf(f, "</title></rect>\n");
		if (c->requested_usec > 0)
			fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n", x,
				x + (bw > 2 ? bw - 1 : bw), TL_H - rq, TL_H - rq);
	}
	fprintf(f, "<line x1=\"40\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", SVG_W - 20, TL_H, TL_H);
	for (int i = 0; i < _SOAK_CLASS_MAX; i++)
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			40 + i * 105, TL_H + 8, class_colors[i], 54 + i * 105, TL_H + 17, class_names[i]);

	fprintf(f, "<text x=\"10\" y=\"%d\" font-size=\"13\">Latency histogram: entry + exit (ms in the state write, "
		   "successful cycles), %d bins up to %.1f ms</text>\n", TL_H + 46, HIST_BINS, max_lat / 1e3);
	for (int i = 0; i < HIST_BINS; i++) {
		double h = (double)(HIST_H - 40) * bins[i] / max_bin;
		double w = (double)(SVG_W - 60) / HIST_BINS;

		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#1565c0\"><title>%.1f-%.1f ms: "
			   "%u</title></rect>\n", 40 + w * i, TL_H + HIST_H + 20 - h, w - 2, h,
			max_lat / 1e3 * i / HIST_BINS, max_lat / 1e3 * (i + 1) / HIST_BINS, bins[i]);
	}
	fprintf(f, "<line x1=\"40\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", SVG_W - 20, TL_H + HIST_H + 20,
		TL_H + HIST_H + 20);
	fprintf(f, "<text x=\"40\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\">%.1f ms</text>\n", TL_H + HIST_H + 34,
		SVG_W - 80, TL_H + HIST_H + 34, max_lat / 1e3);
	fprintf(f, "</svg>\n");
}

void soak_report_html(FILE *f, const struct soak_provenance *p, const struct soak_cycle *cycles, size_t n)
{
	char *md = NULL, *svg = NULL;
	size_t mdlen = 0, svglen = 0;
	FILE *m = open_memstream(&md, &mdlen), *s = open_memstream(&svg, &svglen);

	if (m) {
		soak_report_markdown(m, p, cycles, n);
		fclose(m);
	}
	if (s) {
		soak_report_svg(s, cycles, n);
		fclose(s);
	}
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Suspend soak report</title></head><body>\n");
	/* The SVG inline, without its XML declaration. */
	if (svg)
		fputs(strstr(svg, "<svg") ? strstr(svg, "<svg") : svg, f);
	fprintf(f, "<pre>\n");
	if (md)
		svg_text(f, md);
	fprintf(f, "</pre>\n</body></html>\n");
	free(md);
	free(svg);
}

static void compare_row(FILE *f, const char *what, const char *a, const char *b)
{
	fprintf(f, "%-34s %-24s %-24s\n", what, a, b);
}

void soak_report_compare(FILE *f, const char *label_a, const struct soak_provenance *a, const struct soak_cycle *ca,
			 size_t na, const char *label_b, const struct soak_provenance *b, const struct soak_cycle *cb,
			 size_t nb)
{
	struct soak_summary sa, sb;
	char x[64], y[64];

	soak_summarize(ca, na, &sa);
	soak_summarize(cb, nb, &sb);
	compare_row(f, "", label_a, label_b);
	compare_row(f, "kernel", a->kernel_release, b->kernel_release);
	compare_row(f, "config hash", a->config_hash, b->config_hash);
	snprintf(x, sizeof(x), "%zu", sa.cycles);
	snprintf(y, sizeof(y), "%zu", sb.cycles);
	compare_row(f, "cycles", x, y);
	for (int i = 0; i < _SOAK_CLASS_MAX; i++) {
		snprintf(x, sizeof(x), "%zu", sa.by_class[i]);
		snprintf(y, sizeof(y), "%zu", sb.by_class[i]);
		compare_row(f, class_names[i], x, y);
	}
#define ROW(label, fa, fb)                                 \
	do {                                               \
		snprintf(x, sizeof(x), "%zu", (size_t)(fa)); \
		snprintf(y, sizeof(y), "%zu", (size_t)(fb)); \
		compare_row(f, label, x, y);               \
	} while (0)
	ROW("premature wakes", sa.premature, sb.premature);
	ROW("late wakes", sa.late, sb.late);
	ROW("cycles with BUG/WARNING", sa.bugs, sb.bugs);
	ROW("crng reseeds", sa.crng_reseeds, sb.crng_reseeds);
	ROW("WireGuard keypairs destroyed", sa.keypairs_destroyed, sb.keypairs_destroyed);
#undef ROW
	ms(x, sizeof(x), sa.awake_in_write.median);
	ms(y, sizeof(y), sb.awake_in_write.median);
	compare_row(f, "entry+exit median (ms)", x, y);
	ms(x, sizeof(x), sa.awake_in_write.p95);
	ms(y, sizeof(y), sb.awake_in_write.p95);
	compare_row(f, "entry+exit p95 (ms)", x, y);
	ms(x, sizeof(x), sa.asleep.median);
	ms(y, sizeof(y), sb.asleep.median);
	compare_row(f, "time asleep median (ms)", x, y);
}

static int read_lines(const char *path, int (*cb)(const char *line, unsigned lineno, void *u), void *u)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return negative_errno();
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		if (line[0] == '\n' || line[0] == 0)
			continue;
		r = cb(line, lineno, u);
		if (r < 0)
			break;
	}
	fclose(f);
	return r;
}

struct load {
	const char *path;
	struct soak_cycle *cycles;
	size_t n, cap;
	struct soak_provenance *p;
};

static int load_cycle(const char *line, unsigned lineno, void *u)
{
	struct load *l = u;
	char err[160];

	if (l->n == l->cap) {
		size_t m = l->cap ? l->cap * 2 : 64;
		struct soak_cycle *c = reallocarray(l->cycles, m, sizeof(*c));

		if (!c)
			return -ENOMEM;
		l->cycles = c;
		l->cap = m;
	}
	if (soak_cycle_parse_json(line, &l->cycles[l->n], err, sizeof(err)) < 0) {
		fprintf(stderr, "%s:%u: %s\n", l->path, lineno, err);
		return -EBADMSG;
	}
	l->n++;
	return 0;
}

static int load_provenance(const char *line, unsigned lineno, void *u)
{
	struct load *l = u;
	char err[160];

	if (soak_provenance_parse_json(line, l->p, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s:%u: %s\n", l->path, lineno, err);
		return -EBADMSG;
	}
	return 0;
}

int soak_run_load(const char *dir, struct soak_provenance *ret_p, struct soak_cycle **ret_cycles, size_t *ret_n)
{
	_cleanup_free_ char *pp = NULL, *cp = NULL;
	struct load l = { .p = ret_p };
	int r;

	if (asprintf(&pp, "%s/provenance.json", dir) < 0 || asprintf(&cp, "%s/cycles.jsonl", dir) < 0)
		return -ENOMEM;
	l.path = pp;
	r = read_lines(pp, load_provenance, &l);
	if (r == -ENOENT)
		fprintf(stderr, "%s: no such file: not a soak output directory?\n", pp);
	if (r < 0)
		return r;
	l.path = cp;
	r = read_lines(cp, load_cycle, &l);
	if (r == -ENOENT)
		fprintf(stderr, "%s: no such file\n", cp);
	if (r < 0) {
		free(l.cycles);
		return r;
	}
	*ret_cycles = l.cycles;
	*ret_n = l.n;
	return 0;
}
