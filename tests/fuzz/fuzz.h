/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The libFuzzer entry points. Each fuzz-<target>.c defines both; replay.c
 * calls them for every file of a corpus, so the corpus also runs in every
 * build (under ASan or valgrind) without clang.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A violated property: abort so libFuzzer saves the input as a crash. */
#define FUZZ_CHECK(cond)                                                                                     \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);       \
			abort();                                                                             \
		}                                                                                            \
	} while (0)
