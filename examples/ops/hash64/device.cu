/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/hash64/device.cu - the device code of the example op module
 * `hash64` (docs/design.md 6.7), the same XXH64 as host.c: one block an
 * item. XXH64's four lanes each run through every 32-byte stripe in order,
 * so the block stages the stripes' words into scratch (8 bytes a thread),
 * threads 0-3 advance one lane each over them while the other warps stage
 * the next ones, and thread 0 merges the lanes and hashes the tail.
 * Scratch: up to 1024 words, used as two halves.
 *
 * Build: nvcc -std=c++17 -rdc=true -ptx -arch=compute_75 -Iinclude
 */
#include "../op_device.h"
#include "xxh64.h"

extern "C" __device__ int vyre_op_hash64_device(const struct vyre_op_dev_args *a,
						unsigned long long *result)
{
	const uint32_t t = a->thread, nt = a->threads;
	uint64_t *words = (uint64_t *)a->scratch;
	const uint8_t *p = (const uint8_t *)a->in;
	const uint64_t n = a->in_bytes, seed = a->param;
	uint32_t cap = a->scratch_bytes / 8 / 4 * 4; /* whole stripes */

	if (cap > 1024)
		cap = 1024;
	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 8 || (!p && n) || nt < 4 || cap < 8 ||
	    ((uintptr_t)a->scratch & 7u))
		return VYRE_E_INVAL;

	const uint64_t stripe_words = n / 32 * 4;
	const bool aligned = ((uintptr_t)p & 7u) == 0;
	uint64_t lane = xxh_lane_start(seed, t < 4 ? t : 0);
	/*
	 * Two halves of scratch: while threads 0-3 step through one, the warps
	 * after the first load the next, so an input in host memory (a PCIe
	 * round trip a load) costs its loads once, not once a half plus the
	 * steps. A block of one warp loads, then steps, half by half.
	 */
	const uint32_t half = cap / 2 / 4 * 4;
	const uint32_t first = nt > 32 ? 32 : 0, loaders = nt - first;
	uint64_t base = 0;

	for (uint32_t w = t; w < half && w < stripe_words; w += nt)
		words[w] = aligned ? *(const uint64_t *)(p + 8 * w) : xxh_load(p + 8 * w, 8);
	__syncthreads();
	for (uint32_t k = 0; base < stripe_words; base += half, k ^= 1) {
		const uint64_t left = stripe_words - base, next = base + half;
		const uint32_t cnt = left < half ? (uint32_t)left : half;
		const uint64_t *cur = words + k * half;
		uint64_t *nxt = words + (k ^ 1) * half;

		if (first == 0)
			__syncthreads();
		if (t >= first && next < stripe_words) {
			const uint64_t nleft = stripe_words - next;
			const uint32_t ncnt = nleft < half ? (uint32_t)nleft : half;

			for (uint32_t w = t - first; w < ncnt; w += loaders) {
				const uint8_t *q = p + 8 * (next + w);

				nxt[w] = aligned ? *(const uint64_t *)q : xxh_load(q, 8);
			}
		}
		if (first == 0)
			__syncthreads();
		if (t < 4)
			for (uint32_t w = t; w < cnt; w += 4)
				lane = xxh_step(lane, cur[w]);
		__syncthreads();
	}
	if (t < 4)
		words[t] = lane;
	__syncthreads();
	if (t == 0) {
		const uint64_t h = xxh_finish(xxh_converge(words, seed, n), p, stripe_words * 8, n);
		uint8_t *out = (uint8_t *)a->out;

		for (int k = 0; k < 8; k++)
			out[k] = (uint8_t)(h >> 8 * k);
		*result = h;
	}
	return 0;
}
