/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/crc32c/host.c - the host code of the example op
 * module `crc32c` (docs/design.md 6.7): CRC32C (Castagnoli, reflected
 * polynomial 0x82f63b78, as iSCSI and ext4 use it) of the input's bytes,
 * continuing from the CRC in the param word (0 for a fresh one), into
 * word 0 of the output. Pure: the same bytes and param give the same CRC.
 * crc32c_counted is the same over a counted input: vyre hands the host
 * function the counted bytes, so one function serves both.
 */
#include <stdint.h>
#include <string.h>

#include "vyre/abi.h"
#include "vyre/op_module.h"

int vyre_op_crc32c_host(const struct vyre_op_host_args *a, uint64_t *result);
int vyre_op_crc32c_counted_host(const struct vyre_op_host_args *a, uint64_t *result);

/* The byte-at-a-time table, built on first use; any thread builds the same entries. */
static uint32_t table[256];
static int table_ready;

static void build_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
		__atomic_store_n(&table[i], c, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

int vyre_op_crc32c_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	const uint8_t *p = a->in;
	uint32_t crc = ~a->param;

	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 4 || (!p && a->in_bytes))
		return VYRE_E_INVAL;
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		build_table();
	for (uint64_t i = 0; i < a->in_bytes; i++)
		crc = (crc >> 8) ^ __atomic_load_n(&table[(crc ^ p[i]) & 0xffu], __ATOMIC_RELAXED);
	crc = ~crc;
	memcpy(a->out, &crc, 4);
	*result = crc;
	return 0;
}

int vyre_op_crc32c_counted_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	return vyre_op_crc32c_host(a, result);
}
