/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/hash64/device.cu - the device code of the example op module
 * `hash64` (docs/design.md 6.7), the same XXH64 as host.c: one block an
 * item. XXH64's four lanes each run through every 32-byte stripe in order,
 * so the block stages the stripes' words into scratch (all threads, 8
 * bytes each), threads 0-3 advance one lane each over them, and thread 0
 * merges the lanes and hashes the tail. Scratch: up to 1024 words.
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
	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 8 || (!p && n) || nt < 4 || cap < 4 ||
	    ((uintptr_t)a->scratch & 7u))
		return VYRE_E_INVAL;

	const uint64_t stripe_words = n / 32 * 4;
	const bool aligned = ((uintptr_t)p & 7u) == 0;
	uint64_t lane = xxh_lane_start(seed, t < 4 ? t : 0);

	for (uint64_t base = 0; base < stripe_words; base += cap) {
		const uint64_t left = stripe_words - base;
		const uint32_t cnt = left < cap ? (uint32_t)left : cap;

		for (uint32_t w = t; w < cnt; w += nt) {
			const uint8_t *q = p + 8 * (base + w);

			words[w] = aligned ? *(const uint64_t *)q : xxh_load(q, 8);
		}
		__syncthreads();
		if (t < 4)
			for (uint32_t w = t; w < cnt; w += 4)
				lane = xxh_step(lane, words[w]);
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
