/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz.h - the libFuzzer entry point every harness defines.
 *
 * Each harness is built twice: with clang -fsanitize=fuzzer for the bounded
 * fuzzing runs (tests/fuzz/run.sh), and with the project's compiler and
 * sanitizers into test_fuzz_replay, where FUZZ_ENTRY renames the entry point
 * so every harness links into one program that replays the committed corpus
 * and regressions. A harness reports a broken promise with FUZZ_CHECK, which
 * traps: libFuzzer saves the input as a crash, the replay test dies.
 */
#ifndef VYRE_TESTS_FUZZ_H
#define VYRE_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int FUZZ_ENTRY(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__,      \
				#cond);                                                            \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

/* Little-endian reads from fuzz input, bounds checked by the caller. */
static inline uint32_t fuzz_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint16_t fuzz_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

#endif /* VYRE_TESTS_FUZZ_H */
