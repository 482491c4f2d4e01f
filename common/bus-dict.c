/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-dict.h"

int bus_dict_walk(sd_bus_message *m, bus_dict_entry_t entry, void *userdata)
{
	const char *key, *type;
	int r;

	r = sd_bus_message_enter_container(m, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		r = sd_bus_message_read(m, "s", &key);
		if (r < 0)
			return r;
		r = sd_bus_message_peek_type(m, NULL, &type);
		if (r < 0)
			return r;
		r = sd_bus_message_enter_container(m, 'v', type);
		if (r < 0)
			return r;
		r = entry ? entry(userdata, key, m, type) : 0;
		if (r == 0)
			r = sd_bus_message_skip(m, type);
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(m);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(m);
	return r < 0 ? r : 0;
}
