/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_ops.c - the example op modules as the "modules" suite
 * runs them (bench_modules_ops.h): operands, random inputs, the check of an
 * item against the host function.
 */
#include "bench_modules_ops.h"

#include <stdio.h>
#include <string.h>

vyre_op_host_fn vyre_op_crc32c_host, vyre_op_hash64_host, vyre_op_histogram_host, vyre_op_dot_host;

const struct vyre_modules_op vyre_modules_ops[VYRE_MODULES_OPS] = {
    {"crc32c", 4, 0, 1, vyre_op_crc32c_host},
    {"hash64", 8, 0, 1, vyre_op_hash64_host},
    {"histogram", 1024, 0, 0, vyre_op_histogram_host},
    {"dot", 4, 1, 0, vyre_op_dot_host},
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill_one(void *dst, uint32_t bytes, int floats, uint64_t *s)
{
	uint8_t *p = dst;

	for (uint32_t k = 0; k < bytes; k += 4) {
		uint32_t w = (uint32_t)splitmix(s);

		if (floats) {
			const float f = (float)(int32_t)w * 0x1p-31f;

			memcpy(&w, &f, 4);
		}
		memcpy(p + k, &w, bytes - k < 4 ? bytes - k : 4);
	}
}

void vyre_modules_fill(const struct vyre_modules_op *op, void *in, void *table, uint32_t bytes,
		       uint64_t seed)
{
	uint64_t s = seed;

	fill_one(in, bytes, op->table, &s);
	if (op->table)
		fill_one(table, bytes, 1, &s);
}

uint32_t vyre_modules_param(const struct vyre_modules_op *op, uint32_t seq)
{
	return op->param_word ? seq * 0x9e3779b9u : 0;
}

int vyre_modules_sampled(uint32_t seq)
{
	return seq <= 16 || seq % 64 == 0;
}

int vyre_modules_check(const struct vyre_modules_op *op, const void *in, const void *table,
		       uint32_t bytes, uint32_t param, int rc, const void *out, uint64_t result,
		       char *why, size_t why_len)
{
	uint8_t want[VYRE_MODULES_OUT_MAX];
	uint64_t want_result = 0;
	const struct vyre_op_host_args a = {in,
					    bytes,
					    want,
					    op->out_bytes,
					    op->table ? table : NULL,
					    op->table ? bytes : 0,
					    op->param_word ? param : 0,
					    VYRE_OP_MODULE_ABI};
	const int want_rc = op->host(&a, &want_result);

	if (rc != want_rc) {
		snprintf(why, why_len, "%s: rc %d, the host function's %d", op->name, rc, want_rc);
		return -1;
	}
	if (result != want_result) {
		snprintf(why, why_len, "%s: result %#llx, the host function's %#llx", op->name,
			 (unsigned long long)result, (unsigned long long)want_result);
		return -1;
	}
	for (uint32_t i = 0; i < op->out_bytes; i++)
		if (((const uint8_t *)out)[i] != want[i]) {
			snprintf(why, why_len, "%s: output byte %u is %#x, the host function's %#x",
				 op->name, i, ((const uint8_t *)out)[i], want[i]);
			return -1;
		}
	return 0;
}
