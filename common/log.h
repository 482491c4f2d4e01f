/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <syslog.h>

#include "macro.h"

/*
 * Logging to stderr. When stderr is not a terminal (journald, a pipe in the
 * tests) each line carries an sd-daemon "<N>" priority prefix so journald
 * keeps the level.
 */
void log_set_max_level(int level);
void log_set_ident(const char *ident);

/* Returns error (negative errno) so callers can "return log_error_errno(r, ...)". */
int log_internal(int level, int error, const char *file, int line, const char *fmt, ...) _printf_(5, 6);

/*
 * A log line that also carries journal fields (FIELD=value strings, NULL
 * terminated) when stderr is connected to the journal.
 */
void log_struct_internal(int level, const char *message, ...);
#define log_struct(level, message, ...) log_struct_internal(level, message, __VA_ARGS__, NULL)

#define log_full_errno(level, error, ...) log_internal(level, error, __FILE__, __LINE__, __VA_ARGS__)
#define log_full(level, ...) (void)log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)

int log_level_from_string(const char *s);
