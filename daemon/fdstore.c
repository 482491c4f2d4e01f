/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "fdstore.h"
#include "log.h"
#include "macro.h"
#include "notify.h"

bool fdstore_available(void)
{
	return notify_available();
}

int fdstore_receive(struct fdstore *s)
{
	char **names = NULL;
	int n;

	*s = (struct fdstore){};
	n = sd_listen_fds_with_names(true, &names);
	if (n <= 0) {
		free(names);
		return n;
	}
	s->entries = calloc((size_t)n, sizeof(*s->entries));
	if (!s->entries) {
		for (int i = 0; i < n; i++) {
			safe_close(SD_LISTEN_FDS_START + i);
			free(names[i]);
		}
		free(names);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		s->entries[i].fd = SD_LISTEN_FDS_START + i;
		s->entries[i].name = names[i];
		/* Inherited fds are not close-on-exec; ours all are. */
		(void)fcntl(s->entries[i].fd, F_SETFD, FD_CLOEXEC);
	}
	free(names);
	s->n = (size_t)n;
	log_debug("Received %d fd%s from the service manager's store", n, n == 1 ? "" : "s");
	return n;
}

int fdstore_take(struct fdstore *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->entries[i].fd >= 0 && s->entries[i].name && strcmp(s->entries[i].name, name) == 0)
			return TAKE_FD(s->entries[i].fd);
	return -ENOENT;
}

void fdstore_done(struct fdstore *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->entries[i].fd >= 0) {
			log_debug("Dropping stored fd '%s' that nothing claimed", strna(s->entries[i].name));
			safe_close(s->entries[i].fd);
			if (s->entries[i].name)
				(void)fdstore_remove(s->entries[i].name);
		}
		free(s->entries[i].name);
	}
	free(s->entries);
	*s = (struct fdstore){};
}

void fdstore_release(struct fdstore *s)
{
	for (size_t i = 0; i < s->n; i++) {
		safe_close(s->entries[i].fd);
		free(s->entries[i].name);
	}
	free(s->entries);
	*s = (struct fdstore){};
}

int fdstore_push(const char *name, int fd)
{
	char msg[128];
	int r;

	snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
	r = notify_send(msg, &fd, 1);
	return r < 0 ? r : 0;
}

int fdstore_remove(const char *name)
{
	int r = notify_sendf("FDSTOREREMOVE=1\nFDNAME=%s", name);

	return r < 0 ? r : 0;
}
