/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/hash64/xxh64.h - the parts of XXH64 (written from xxHash's
 * published description of the algorithm) that host.c and device.cu share:
 * the primes, a lane's step, the lanes' convergence, and the tail and final
 * mix after the 32-byte stripes. C and CUDA C++ alike.
 */
#ifndef VYRE_EXAMPLE_XXH64_H
#define VYRE_EXAMPLE_XXH64_H

#include <stdint.h>

#ifdef __CUDACC__
#define XXH_FN static __device__ __forceinline__
#else
#define XXH_FN static inline
#endif

#define XXH_P1 0x9e3779b185ebca87ull
#define XXH_P2 0xc2b2ae3d27d4eb4full
#define XXH_P3 0x165667b19e3779f9ull
#define XXH_P4 0x85ebca77c2b2ae63ull
#define XXH_P5 0x27d4eb2f165667c5ull

XXH_FN uint64_t xxh_rotl(uint64_t x, unsigned r)
{
	return x << r | x >> (64 - r);
}

/* @bytes (1 to 8) little-endian bytes at @p. */
XXH_FN uint64_t xxh_load(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* One lane's step over one 8-byte word. */
XXH_FN uint64_t xxh_step(uint64_t acc, uint64_t word)
{
	return xxh_rotl(acc + word * XXH_P2, 31) * XXH_P1;
}

/* The four lanes' start from @seed. */
XXH_FN uint64_t xxh_lane_start(uint64_t seed, unsigned lane)
{
	return lane == 0   ? seed + XXH_P1 + XXH_P2
	       : lane == 1 ? seed + XXH_P2
	       : lane == 2 ? seed
			   : seed - XXH_P1;
}

/* The hash so far after the stripes: the lanes converged (n >= 32), else seed + P5. */
XXH_FN uint64_t xxh_converge(const uint64_t *v, uint64_t seed, uint64_t n)
{
	if (n < 32)
		return seed + XXH_P5;
	uint64_t h =
	    xxh_rotl(v[0], 1) + xxh_rotl(v[1], 7) + xxh_rotl(v[2], 12) + xxh_rotl(v[3], 18);

	for (int l = 0; l < 4; l++)
		h = (h ^ xxh_step(0, v[l])) * XXH_P1 + XXH_P4;
	return h;
}

/* The hash of @n bytes at @p from @h after the stripes, which ended at byte @i. */
XXH_FN uint64_t xxh_finish(uint64_t h, const uint8_t *p, uint64_t i, uint64_t n)
{
	h += n;
	for (; i + 8 <= n; i += 8)
		h = xxh_rotl(h ^ xxh_step(0, xxh_load(p + i, 8)), 27) * XXH_P1 + XXH_P4;
	if (i + 4 <= n) {
		h = xxh_rotl(h ^ xxh_load(p + i, 4) * XXH_P1, 23) * XXH_P2 + XXH_P3;
		i += 4;
	}
	for (; i < n; i++)
		h = xxh_rotl(h ^ p[i] * XXH_P5, 11) * XXH_P1;
	h ^= h >> 33;
	h *= XXH_P2;
	h ^= h >> 29;
	h *= XXH_P3;
	h ^= h >> 32;
	return h;
}

#endif /* VYRE_EXAMPLE_XXH64_H */
