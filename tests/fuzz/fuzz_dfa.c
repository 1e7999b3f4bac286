/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: DFA table validation (vyre_dfa_validate) and DFA_SCAN
 * execution (vyre_exec_one), against an independent reference.
 *
 * Input: u8 mode, u16 table length, the table bytes, then the bytes to scan.
 * mode bit 0 leaves no room for the output word, bit 1 makes the input
 * length unaligned; both must be refused. The heap is allocated to the exact
 * byte, so AddressSanitizer sees any read or write outside it. Each input
 * runs twice: checked, and with VYRE_EXEC_TABLE_TRUSTED.
 */
#include <stdlib.h>
#include <string.h>

#include "../../gpu/ops.h"
#include "fuzz.h"

#define MODE_NO_OUTPUT 1u
#define MODE_UNALIGNED 2u
#define SENTINEL       0xa5a5a5a5u

/* docs/design.md section 6, written independently of gpu/ops.c. */
static int reference_valid(const uint8_t *t, uint32_t bytes)
{
	if (bytes < 8)
		return 0;
	uint32_t n = fuzz_le32(t), start = fuzz_le32(t + 4);

	if (n == 0 || start >= n)
		return 0;
	uint64_t next_off = 8 + 4 * (((uint64_t)n + 31) / 32);

	if (next_off + 1024 * (uint64_t)n > bytes)
		return 0;
	for (uint64_t i = 0; i < 256 * (uint64_t)n; i++)
		if (fuzz_le32(t + next_off + 4 * i) >= n)
			return 0;
	return 1;
}

static uint32_t reference_scan(const uint8_t *t, const uint8_t *in, uint32_t len)
{
	uint32_t n = fuzz_le32(t), state = fuzz_le32(t + 4), hits = 0;
	uint64_t next_off = 8 + 4 * (((uint64_t)n + 31) / 32);

	for (uint32_t i = 0; i < len; i++) {
		state = fuzz_le32(t + next_off + 4 * ((uint64_t)state * 256 + in[i]));
		hits += (fuzz_le32(t + 8 + 4 * (state / 32)) >> (state % 32)) & 1u;
	}
	return hits;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	if (size < 3 || size > (1u << 20))
		return 0;
	uint32_t mode = data[0];
	uint32_t table_bytes = fuzz_le16(data + 1);

	data += 3;
	size -= 3;
	if (table_bytes > size)
		table_bytes = (uint32_t)size;
	table_bytes &= ~3u;
	uint32_t in_bytes = (uint32_t)(size - table_bytes) & ~3u;

	if ((mode & MODE_UNALIGNED) && in_bytes + table_bytes < size)
		in_bytes += (uint32_t)(size - table_bytes - in_bytes);
	uint32_t out_bytes = (mode & MODE_NO_OUTPUT) ? 0 : 4;
	size_t heap_bytes = (size_t)table_bytes + in_bytes + out_bytes;
	uint8_t *heap = malloc(heap_bytes ? heap_bytes : 1);

	if (!heap)
		return 0;
	memcpy(heap, data, (size_t)table_bytes + in_bytes);
	if (out_bytes)
		memcpy(heap + table_bytes + in_bytes, &(uint32_t){SENTINEL}, 4);

	int valid = reference_valid(heap, table_bytes);

	FUZZ_CHECK((vyre_dfa_validate(heap, table_bytes) == 0) == valid);

	struct vyre_heap_view view = {heap, heap_bytes};
	struct vyre_exec_item it = {
	    .op = VYRE_OP_DFA_SCAN,
	    .table_off = 0,
	    .table_bytes = table_bytes,
	    .in_off = table_bytes,
	    .in_bytes = in_bytes,
	    .out_off = (uint64_t)table_bytes + in_bytes,
	    .out_bytes = out_bytes,
	};
	uint64_t result = 1;
	int status = vyre_exec_one(&view, &it, &result);
	int runnable = valid && out_bytes == 4 && (in_bytes & 3u) == 0;
	uint32_t out = SENTINEL;

	if (out_bytes)
		memcpy(&out, heap + table_bytes + in_bytes, 4);
	if (runnable) {
		uint32_t want = reference_scan(heap, heap + table_bytes, in_bytes);

		FUZZ_CHECK(status == 0);
		FUZZ_CHECK(result == want);
		FUZZ_CHECK(out == want);
	} else {
		FUZZ_CHECK(status == VYRE_E_INVAL);
		FUZZ_CHECK(result == 0);
		FUZZ_CHECK(out == SENTINEL);
	}
	/*
	 * A trusted table skips the whole-table check but no bound: a valid
	 * table scans the same, and any other reads and writes nothing outside
	 * its buffers (AddressSanitizer watches) and writes nothing on failure.
	 */
	if (out_bytes)
		memcpy(heap + table_bytes + in_bytes, &(uint32_t){SENTINEL}, 4);
	it.flags = VYRE_EXEC_TABLE_TRUSTED;
	result = 1;
	status = vyre_exec_one(&view, &it, &result);
	if (out_bytes)
		memcpy(&out, heap + table_bytes + in_bytes, 4);
	if (runnable) {
		FUZZ_CHECK(status == 0);
		FUZZ_CHECK(result == reference_scan(heap, heap + table_bytes, in_bytes));
	} else {
		FUZZ_CHECK(status == 0 || status == VYRE_E_INVAL);
		FUZZ_CHECK(status == 0 || (result == 0 && out == SENTINEL));
	}
	free(heap);
	return 0;
}
