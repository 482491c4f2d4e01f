/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fixture sysfs trees live in the source tree (tests/unit/sysfs-<case>/) and
 * are copied to a fresh directory per test, so tests can write to them and
 * the source stays pristine.
 */
char *fixture_new(const char *name);
void fixture_free(char *dir);

/* Read or replace a file below a fixture; rel is relative to its root. */
char *fixture_read(const char *dir, const char *rel);
void fixture_write(const char *dir, const char *rel, const char *content);

/* Capture what the code under test logs to stderr; end returns it (caller frees). */
void stderr_capture_begin(void);
char *stderr_capture_end(void);
