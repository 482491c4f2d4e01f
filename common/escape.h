/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * Strings from outside (bus peers, logind inhibitors, input device names,
 * config files, the daemon as seen by the CLI) reach the journal's stream
 * and terminals. A newline there starts a new journal entry with its own
 * "<N>" priority, and an escape sequence drives the reader's terminal. So
 * every such string is written through here first: each C0 control, DEL,
 * C1 control (U+0080..U+009F) and byte that is not valid UTF-8 becomes
 * "\xNN", and everything else stays as it was. A backslash stays too, so
 * that escaping twice (a lease's why, escaped when taken, then logged)
 * changes nothing more: an escaped string is only ever printable text.
 *
 * escape_untrusted() writes as much of the escaped s as fits in buf
 * (size > 0), never cutting an escape or a UTF-8 character, always
 * terminated, and returns buf so it can be an argument of printf. A NULL s
 * is written as "". escape_untrusted_len() is the length of the whole
 * escaped form, without the terminator.
 */
char *escape_untrusted(char *buf, size_t size, const char *s);
size_t escape_untrusted_len(const char *s);

/* 0 when s has nothing escape_untrusted() would change. */
int escape_needed(const char *s);
