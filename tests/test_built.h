/* SPDX-License-Identifier: MIT */
/*
 * tests/test_built.h - for tests that read what the build made beside them
 * and stage files in a directory of their own: a path relative to
 * $(BUILD)/tests (where the test runs from), and removing that directory.
 */
#ifndef VYRE_TEST_BUILT_H
#define VYRE_TEST_BUILT_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* @rel under $(BUILD) ("examples/ops") into @out: 0, or -1. */
static inline int test_built_path(char *out, size_t len, const char *rel)
{
	char exe[PATH_MAX];
	const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(out, len, "%s/../%s", dirname(exe), rel);
	return 0;
}

/* Removes @dir and everything in it, saying so (as @test) when it cannot. */
static inline void test_remove_tree(const char *test, const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "%s: could not remove %s\n", test, dir);
}

#endif /* VYRE_TEST_BUILT_H */
