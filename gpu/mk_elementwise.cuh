// SPDX-License-Identifier: MIT
//
// gpu/mk_elementwise.cuh - the elementwise ops and the reductions on the
// device (FILL, COPY, ADD, XOR, MUL; SUM, MAX): one warp (or block) over one
// chunk of an item's words, several loads in flight per thread.
//
// gpu/megakernel.cu includes this inside its anonymous namespace, after its
// common helpers (combine, reduce, kUnroll), whose code this uses.

// out[i] = f(in[i]) (or param for FILL) for i < n, by `step` threads of which
// this one is `idx`. Each thread reads kUnroll values before storing any, so
// several PCIe reads are in flight; in and out are equal or disjoint (the
// host sends partial overlaps down the sequential path), so batching the
// loads cannot reorder a read after a write of the same word.
__device__ void map_words(uint32_t op, const uint32_t *in, uint32_t *out, uint32_t n,
			  uint32_t param, uint32_t idx, uint32_t step)
{
	const bool fill = op == VYRE_OP_FILL;
	uint32_t done = 0;

	if ((((uintptr_t)in | (uintptr_t)out) & 15u) == 0) {
		const uint4 *in4 = reinterpret_cast<const uint4 *>(in);
		uint4 *out4 = reinterpret_cast<uint4 *>(out);
		const uint32_t n4 = n / 4;
		const uint4 p4 = make_uint4(param, param, param, param);

		for (uint32_t base = 0; base < n4; base += step * kUnroll) {
			uint4 v[kUnroll];
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++) {
				uint32_t i = base + k * step + idx;
				if (i < n4)
					v[k] = fill ? p4 : combine4(op, in4[i], param);
			}
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++) {
				uint32_t i = base + k * step + idx;
				if (i < n4)
					out4[i] = v[k];
			}
		}
		done = n4 * 4;
	}
	for (uint32_t base = done; base < n; base += step * kUnroll) {
		uint32_t v[kUnroll];
#pragma unroll
		for (uint32_t k = 0; k < kUnroll; k++) {
			uint32_t i = base + k * step + idx;
			if (i < n)
				v[k] = fill ? param : combine(op, in[i], param);
		}
#pragma unroll
		for (uint32_t k = 0; k < kUnroll; k++) {
			uint32_t i = base + k * step + idx;
			if (i < n)
				out[i] = v[k];
		}
	}
}

// This thread's share of a SUM/MAX over in[0..n); 0 is the identity of both.
__device__ uint32_t accumulate(uint32_t op, const uint32_t *in, uint32_t n, uint32_t idx,
			       uint32_t step, vyre_mk_devstate *ds)
{
	uint32_t acc = 0, done = 0;

	if (((uintptr_t)in & 15u) == 0) {
		const uint4 *in4 = reinterpret_cast<const uint4 *>(in);
		const uint32_t n4 = n / 4;

		for (uint32_t base = 0; base < n4; base += step * kUnroll) {
			uint4 v[kUnroll];
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++) {
				uint32_t i = base + k * step + idx;
				v[k] = i < n4 ? in4[i] : make_uint4(0, 0, 0, 0);
			}
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++)
				acc = reduce(op, reduce(op, acc, v[k].x),
					     reduce(op, reduce(op, v[k].y, v[k].z), v[k].w));
			if (idx == 0 && step > 32)
				bump_progress(ds);
		}
		done = n4 * 4;
	}
	for (uint32_t i = done + idx; i < n; i += step)
		acc = reduce(op, acc, in[i]);
	return acc;
}

__device__ __forceinline__ uint32_t warp_reduce(uint32_t op, uint32_t v)
{
#pragma unroll
	for (int d = 16; d > 0; d /= 2)
		v = reduce(op, v, __shfl_xor_sync(kFull, v, d));
	return v;
}
