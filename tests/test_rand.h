/* SPDX-License-Identifier: MIT */
/*
 * tests/test_rand.h - splitmix64, the seeded sequence the randomized tests
 * share, so a failure replays from its seed.
 */
#ifndef VYRE_TEST_RAND_H
#define VYRE_TEST_RAND_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif /* VYRE_TEST_RAND_H */
