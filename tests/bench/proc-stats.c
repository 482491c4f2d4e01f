/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc-stats.h"

long proc_ctxt_switches(pid_t pid)
{
	char path[320], line[256];
	struct dirent *de;
	long total = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
				total += strtol(line + 24, NULL, 10);
			else if (strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0)
				total += strtol(line + 27, NULL, 10);
		fclose(f);
	}
	closedir(d);
	return total;
}
