/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "json.h"

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			/* Strings from the bus are valid UTF-8; only control bytes need escaping. */
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json_key(FILE *f, bool *first, const char *key)
{
	if (!*first)
		fputc(',', f);
	*first = false;
	json_string(f, key);
	fputc(':', f);
}

void json_kv_string(FILE *f, bool *first, const char *key, const char *value)
{
	json_key(f, first, key);
	json_string(f, value);
}

void json_kv_u64(FILE *f, bool *first, const char *key, uint64_t value)
{
	json_key(f, first, key);
	fprintf(f, "%" PRIu64, value);
}

void json_kv_bool(FILE *f, bool *first, const char *key, bool value)
{
	json_key(f, first, key);
	fputs(value ? "true" : "false", f);
}

void json_object_in_array(FILE *f, bool *first_in_array)
{
	if (!*first_in_array)
		fputc(',', f);
	*first_in_array = false;
	fputc('{', f);
}

void json_figure(FILE *f, double value)
{
	if (value < 0)
		fputs("null", f);
	else
		fprintf(f, "%.6g", value);
}

void json_kv_figure(FILE *f, bool *first, const char *key, double value)
{
	json_key(f, first, key);
	json_figure(f, value);
}
