/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"

static void die(const char *what)
{
	fprintf(stderr, "fixture: %s: %s\n", what, strerror(errno));
	abort();
}

static char *join(const char *dir, const char *rel)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, rel) < 0)
		die("asprintf");
	return p;
}

char *fixture_new(const char *name)
{
	const char *src = getenv("FIXTURE_DIR"), *tmp = getenv("TEST_TMPDIR");
	char *dir, *cmd;

	if (!src)
		src = ".";
	if (!tmp)
		tmp = "/tmp";
	if (asprintf(&cmd, "mkdir -p '%s'", tmp) < 0 || system(cmd) != 0)
		die("mkdir TEST_TMPDIR");
	free(cmd);
	if (asprintf(&dir, "%s/%s.XXXXXX", tmp, name) < 0)
		die("asprintf");
	if (!mkdtemp(dir))
		die("mkdtemp");
	/* Copy the contents; distcheck makes the source read-only, so fix modes too. */
	if (asprintf(&cmd, "cp -R '%s/%s/.' '%s/' && chmod -R u+w '%s'", src, name, dir, dir) < 0)
		die("asprintf");
	if (system(cmd) != 0)
		die(cmd);
	free(cmd);
	return dir;
}

void fixture_free(char *dir)
{
	char *cmd;

	if (!dir)
		return;
	if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0) {
		if (system(cmd) != 0)
			fprintf(stderr, "fixture: failed to remove %s\n", dir);
		free(cmd);
	}
	free(dir);
}

char *fixture_read(const char *dir, const char *rel)
{
	char *p = join(dir, rel), *buf = NULL;
	size_t cap = 0;
	FILE *f = fopen(p, "re");
	ssize_t n;

	free(p);
	if (!f)
		return NULL;
	n = getdelim(&buf, &cap, 0, f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

void fixture_write(const char *dir, const char *rel, const char *content)
{
	char *p = join(dir, rel);
	FILE *f = fopen(p, "we");

	if (!f)
		die(p);
	fputs(content, f);
	fclose(f);
	free(p);
}

static int saved_stderr = -1;
static FILE *capture;

void stderr_capture_begin(void)
{
	fflush(stderr);
	capture = tmpfile();
	if (!capture)
		die("tmpfile");
	saved_stderr = dup(STDERR_FILENO);
	if (saved_stderr < 0 || dup2(fileno(capture), STDERR_FILENO) < 0)
		die("dup2");
}

char *stderr_capture_end(void)
{
	char *buf = NULL;
	size_t cap = 0;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	rewind(capture);
	if (getdelim(&buf, &cap, 0, capture) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(capture);
	capture = NULL;
	return buf;
}
