/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/hash64/host.c - the host code of the example op module
 * `hash64` (docs/design.md 6.7): XXH64 of the input's bytes with the param
 * word as the seed (xxh64.h), into bytes 0-7 of the output (little-endian)
 * and the result. Pure: the same bytes and seed give the same hash. The
 * output may be the input: it is written after every byte was read.
 */
#include <stdint.h>
#include <string.h>

#include "vyre/abi.h"
#include "vyre/op_module.h"
#include "xxh64.h"

int vyre_op_hash64_host(const struct vyre_op_host_args *a, uint64_t *result);

int vyre_op_hash64_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	const uint8_t *p = a->in;
	const uint64_t n = a->in_bytes, seed = a->param;
	uint64_t v[4], i = 0;
	uint8_t le[8];

	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 8 || (!p && n))
		return VYRE_E_INVAL;
	for (unsigned l = 0; l < 4; l++)
		v[l] = xxh_lane_start(seed, l);
	for (; i + 32 <= n; i += 32)
		for (unsigned l = 0; l < 4; l++)
			v[l] = xxh_step(v[l], xxh_load(p + i + 8 * l, 8));
	const uint64_t h = xxh_finish(xxh_converge(v, seed, n), p, i, n);

	for (int k = 0; k < 8; k++)
		le[k] = (uint8_t)(h >> 8 * k);
	memcpy(a->out, le, 8);
	*result = h;
	return 0;
}
