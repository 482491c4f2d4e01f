/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays a corpus through a fuzz target's LLVMFuzzerTestOneInput(), built
 * with the ordinary compiler: make check runs the seed corpus under ASan or
 * valgrind without clang, and a crash found by the long run (run.sh) can be
 * replayed the same way once it is added to the corpus.
 *
 *   fuzz-<target>-replay [FILE|DIR]...
 *
 * Without arguments it reads $FUZZ_CORPUS_DIR/<target>/.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "macro.h"

static unsigned n_inputs;

static int replay_file(const char *path)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ uint8_t *buf = NULL;
	size_t size = 0, alloc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	for (;;) {
		ssize_t n;

		if (size == alloc) {
			uint8_t *b = realloc(buf, alloc = alloc ? alloc * 2 : 4096);

			if (!b)
				return -ENOMEM;
			buf = b;
		}
		n = read(fd, buf + size, alloc - size);
		if (n < 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			return -errno;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	/* Named first, so the log shows which input a crash came from. */
	printf("%s (%zu bytes)\n", path, size);
	fflush(stdout);
	/* Like libFuzzer: the data is exactly the file, in a buffer of exactly its size. */
	{
		_cleanup_free_ uint8_t *exact = malloc(size ? size : 1);

		if (!exact)
			return -ENOMEM;
		memcpy(exact, buf, size);
		LLVMFuzzerTestOneInput(exact, size);
	}
	n_inputs++;
	return 0;
}

static int replay(const char *path)
{
	struct dirent **list;
	struct stat st;
	int n, r = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	n = scandir(path, &list, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < n; i++) {
		char *p;

		if (list[i]->d_name[0] != '.' && r >= 0) {
			if (asprintf(&p, "%s/%s", path, list[i]->d_name) < 0)
				r = -ENOMEM;
			else {
				r = replay_file(p);
				free(p);
			}
		}
		free(list[i]);
	}
	free(list);
	return r;
}

int main(int argc, char *argv[])
{
	const char *dir = getenv("FUZZ_CORPUS_DIR");
	char *def = NULL;
	int r = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2) {
		if (!dir) {
			fprintf(stderr, "usage: %s FILE|DIR... (or set FUZZ_CORPUS_DIR)\n", argv[0]);
			return EXIT_FAILURE;
		}
		if (asprintf(&def, "%s/%s", dir, FUZZ_TARGET) < 0)
			return EXIT_FAILURE;
		r = replay(def);
	}
	for (int i = 1; i < argc && r >= 0; i++)
		r = replay(argv[i]);
	printf("%s: replayed %u inputs through fuzz target '%s'\n", r < 0 ? "FAIL" : "ok", n_inputs, FUZZ_TARGET);
	free(def);
	/* An empty corpus means a wrong path, not a pass. */
	return r < 0 || n_inputs == 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
