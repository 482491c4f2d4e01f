/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <string.h>

/*
 * An enum and its names through one table indexed by the enum, as systemd's
 * string-table.h does: name_to_string() gives NULL outside [0, max), and
 * name_from_string() the enum's invalid value for NULL or a name not in the
 * table. Every enum the daemon prints or parses is written this way, so a
 * new value needs only its table entry.
 */
#define DEFINE_STRING_TABLE_TO_STRING(name, type, table, max)          \
	const char *name##_to_string(type v)                           \
	{                                                              \
		return (int)v >= 0 && (int)v < (max) ? (table)[v] : NULL; \
	}

#define DEFINE_STRING_TABLE_FROM_STRING(name, type, table, max, invalid) \
	type name##_from_string(const char *s)                           \
	{                                                                \
		for (int i = 0; s && i < (max); i++)                     \
			if ((table)[i] && strcmp((table)[i], s) == 0)    \
				return (type)i;                          \
		return (invalid);                                        \
	}
