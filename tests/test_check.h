/* SPDX-License-Identifier: MIT */
/*
 * tests/test_check.h - CHECK(cond, fmt, ...) for tests that go on after a
 * failure: it prints TEST_NAME (define it before including), the line and
 * the message, and counts the failure in test_failures.
 */
#ifndef VYRE_TEST_CHECK_H
#define VYRE_TEST_CHECK_H

#include <stdio.h>

static int test_failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s: line %d: ", TEST_NAME, __LINE__);                     \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			test_failures++;                                                           \
		}                                                                                  \
	} while (0)

#endif /* VYRE_TEST_CHECK_H */
