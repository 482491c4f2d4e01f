/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Just enough JSON output for autosleepctl --json: one value per call, caller places separators. */
void json_string(FILE *f, const char *s);
/* Open the next object of an array: a comma unless it is the first. */
void json_object_in_array(FILE *f, bool *first_in_array);
void json_key(FILE *f, bool *first, const char *key);
void json_kv_string(FILE *f, bool *first, const char *key, const char *value);
void json_kv_u64(FILE *f, bool *first, const char *key, uint64_t value);
void json_kv_bool(FILE *f, bool *first, const char *key, bool value);
/* A measured figure: a number, or null when negative (the daemon's "none"). */
void json_figure(FILE *f, double value);
void json_kv_figure(FILE *f, bool *first, const char *key, double value);
