/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "escape.h"

/*
 * Length of the valid UTF-8 character at p that a terminal shows as text,
 * or 0 when the byte at p must be escaped: an ASCII control, DEL, a C1
 * control, an overlong form, a surrogate, a value past U+10FFFF or a
 * sequence cut short.
 */
static size_t text_char_len(const unsigned char *p)
{
	uint32_t c;
	size_t n;

	if (*p < 0x80)
		return *p >= 0x20 && *p != 0x7f ? 1 : 0;
	if ((*p & 0xe0) == 0xc0) {
		n = 2;
		c = *p & 0x1f;
	} else if ((*p & 0xf0) == 0xe0) {
		n = 3;
		c = *p & 0x0f;
	} else if ((*p & 0xf8) == 0xf0) {
		n = 4;
		c = *p & 0x07;
	} else
		return 0;
	for (size_t i = 1; i < n; i++) {
		/* A NUL terminator is not a continuation byte, so no overread. */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000))
		return 0;
	if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (c >= 0x80 && c <= 0x9f)
		return 0;
	return n;
}

static size_t escaped_len(const unsigned char *p, size_t *ret_src)
{
	size_t n = text_char_len(p);

	if (n > 0) {
		*ret_src = n;
		return n;
	}
	*ret_src = 1;
	return 4;
}

char *escape_untrusted(char *buf, size_t size, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0;

	if (size == 0)
		return buf;
	while (*p) {
		size_t src, out = escaped_len(p, &src);

		if (o + out >= size)
			break;
		if (out == src)
			memcpy(buf + o, p, src);
		else {
			buf[o] = '\\';
			buf[o + 1] = 'x';
			buf[o + 2] = hex[*p >> 4];
			buf[o + 3] = hex[*p & 0xf];
		}
		o += out;
		p += src;
	}
	buf[o] = '\0';
	return buf;
}

size_t escape_untrusted_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t total = 0;

	while (*p) {
		size_t src;

		total += escaped_len(p, &src);
		p += src;
	}
	return total;
}

int escape_needed(const char *s)
{
	return s && escape_untrusted_len(s) != strlen(s);
}
