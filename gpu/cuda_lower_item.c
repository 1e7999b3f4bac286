/* SPDX-License-Identifier: MIT */
/*
 * One item of a batch in the CUDA lowering: the static checks of
 * vyre_exec_one and how the item runs (its class), the split of a large DFA
 * item, and the unit of a result item. Below both the chain rules
 * (cuda_lower_chain.c) and the batch layout (cuda_lower.c), which use it.
 */
#include "cuda_lower_item.h"

static int range_ok(const struct vyre_cuda_heap *h, uint64_t off, uint32_t bytes)
{
	return off <= h->bytes && bytes <= h->bytes - off;
}

static uint32_t chunks(uint32_t words)
{
	return words / VYRE_MK_CHUNK_WORDS + (words % VYRE_MK_CHUNK_WORDS != 0);
}

/* [a, a+bytes) and [b, b+bytes) share a byte without being the same range. */
static int partial_overlap(uint64_t a, uint64_t b, uint64_t bytes)
{
	return a != b && a < b + bytes && b < a + bytes;
}

void vyre_cuda_dfa_split(uint32_t bytes, uint32_t blocks, uint32_t *parts, uint32_t *part_bytes)
{
	uint64_t want;

	*parts = 1;
	*part_bytes = bytes;
	if (bytes <= VYRE_MK_DFA_BLOCK_BYTES || blocks < 2)
		return;
	/* one part a block, or several when a block's share would exceed PART_MAX */
	const uint64_t per_block = ((uint64_t)bytes + blocks - 1) / blocks;

	if (per_block < VYRE_MK_DFA_PART_MIN)
		want = ((uint64_t)bytes + VYRE_MK_DFA_PART_MIN - 1) / VYRE_MK_DFA_PART_MIN;
	else
		want = (uint64_t)blocks *
		       ((per_block + VYRE_MK_DFA_PART_MAX - 1) / VYRE_MK_DFA_PART_MAX);
	if (want > VYRE_MK_DFA_MAX_PARTS)
		want = VYRE_MK_DFA_MAX_PARTS;
	/*
	 * Parts of a multiple of 16 bytes, so most loads are whole 16-byte words;
	 * rounding up may leave fewer parts. The kernel finds the part count again
	 * as ceil(bytes / part_bytes), and vyre_cuda_dfa_part_bytes(bytes, that count) gives
	 * back part_bytes.
	 */
	*part_bytes = vyre_cuda_dfa_part_bytes(bytes, (uint32_t)want);
	*parts = (uint32_t)(((uint64_t)bytes + *part_bytes - 1) / *part_bytes);
}

/*
 * VYRE_MK_TABLE_TRUSTED when the item's table needs no validation on the
 * device: a device buffer validated since it was last written (vyred's
 * VYRE_EXEC_TABLE_TRUSTED).
 */
static uint32_t dfa_table_trust(const struct vyre_exec_item *it)
{
	return (it->flags & VYRE_EXEC_TABLE_TRUSTED) ? VYRE_MK_TABLE_TRUSTED : 0u;
}

/* How a DFA item runs: a warp, a block, or parts and a join. */
static uint32_t classify_dfa(const struct vyre_exec_item *it, uint64_t addresses,
			     uint32_t split_blocks)
{
	uint32_t parts, part_bytes;

	if (it->op == VYRE_OP_DFA_SCAN_COUNTED && it->in_bytes < 4)
		return CLS_INVAL;
	if (addresses & 3u)
		return CLS_DEVICE | CLS_RESULT | CLS_SEQUENTIAL | 1u;
	if (vyre_cuda_dfa_scan_bytes(it) <= VYRE_MK_DFA_WARP_BYTES)
		return CLS_DEVICE | CLS_RESULT | 1u;
	vyre_cuda_dfa_split(vyre_cuda_dfa_scan_bytes(it), split_blocks, &parts, &part_bytes);
	if (parts < 2)
		return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u;
	/* parts + 1 units and result records: the join's is the item's */
	return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | CLS_SPLIT | (parts + 1);
}

/*
 * The device address of an operand (0 when the op does not use it): 0 when
 * its heap is not registered or the range leaves it. *devmem gets
 * CLS_DEVMEM when the heap is a device buffer.
 */
static int operand(const struct vyre_cuda_heap *heaps, uint32_t n_heaps, int used, uint32_t heap,
		   uint64_t off, uint32_t bytes, uint64_t *dptr, uint32_t *devmem)
{
	*dptr = 0;
	if (!used)
		return 1;
	if (heap >= n_heaps || !heaps[heap].registered)
		return 0;
	const struct vyre_cuda_heap *h = &heaps[heap];

	if (h->dptr > UINT64_MAX - h->bytes || !range_ok(h, off, bytes))
		return 0;
	*dptr = h->dptr + off;
	*devmem |= h->device ? CLS_DEVMEM : 0u;
	return 1;
}

/* The static checks of vyre_exec_one, then how the item runs. */
static uint32_t classify_ops(const struct vyre_exec_item *it, const struct vyre_cuda_heap *heaps,
			     uint32_t n_heaps, uint32_t split_blocks, uint32_t *devmem)
{
	const int mask = vyre_op_operands(it->op);
	uint64_t in, out, table;

	if (mask < 0 || ((it->in_bytes | it->out_bytes | it->table_bytes) & 3u))
		return CLS_INVAL;
	if (!operand(heaps, n_heaps, mask & VYRE_OPERAND_IN, it->in_heap, it->in_off, it->in_bytes,
		     &in, devmem) ||
	    !operand(heaps, n_heaps, mask & VYRE_OPERAND_OUT, it->out_heap, it->out_off,
		     it->out_bytes, &out, devmem) ||
	    !operand(heaps, n_heaps, mask & VYRE_OPERAND_TABLE, it->table_heap, it->table_off,
		     it->table_bytes, &table, devmem))
		return CLS_INVAL;
	if ((mask & (VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED)) && it->out_bytes < 4)
		return CLS_INVAL;
	if ((mask & VYRE_OPERAND_COUNTED) && it->in_bytes < 4)
		return CLS_INVAL;

	uint32_t words;

	switch (it->op) {
	case VYRE_OP_FILL:
		words = it->out_bytes / 4;
		if (words == 0)
			return 0;
		return (out & 3u) ? CLS_DEVICE | CLS_SEQUENTIAL | 1u : CLS_DEVICE | chunks(words);
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		words = vyre_cuda_min_words(it);
		if (words == 0)
			return 0;
		if (((in | out) & 3u) || partial_overlap(in, out, 4 * (uint64_t)words))
			return CLS_DEVICE | CLS_SEQUENTIAL | 1u;
		return CLS_DEVICE | chunks(words);
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
		if ((in | out) & 3u)
			return CLS_DEVICE | CLS_RESULT | CLS_SEQUENTIAL | 1u;
		return CLS_DEVICE | CLS_RESULT | 1u |
		       (it->in_bytes / 4 > VYRE_MK_WARP_REDUCE_WORDS ? CLS_BLOCK : 0u);
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED:
		return classify_dfa(it, in | out | table, split_blocks);
	case VYRE_OP_BASE64_DECODE:
	case VYRE_OP_HEX_DECODE:
	case VYRE_OP_BYTEMAP:
		/* gpu/mk_decode.cuh, aligned or not; a partial overlap is the oracle's INVAL */
		if (in != out && in < out + it->out_bytes && out < in + it->in_bytes)
			return CLS_INVAL;
		return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u;
	default:
		return 0; /* NOP */
	}
}

/* classify_ops, marking device items that touch a device buffer. */
uint32_t vyre_cuda_classify(const struct vyre_exec_item *it, const struct vyre_cuda_heap *heaps,
			    uint32_t n_heaps, uint32_t split_blocks)
{
	uint32_t devmem = 0;
	const uint32_t c = classify_ops(it, heaps, n_heaps, split_blocks, &devmem);

	return (c & CLS_DEVICE) ? c | devmem : c;
}
static int is_dfa(uint32_t op)
{
	return op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED;
}

/* The unit of a result item; a split DFA item's join (its parts differ in op, param, reserved). */
struct vyre_mk_unit vyre_cuda_result_unit(const struct vyre_exec_item *it, uint32_t c,
					  const struct vyre_cuda_heap *heaps, uint32_t slot)
{
	const int mask = vyre_op_operands(it->op);
	struct vyre_mk_unit u = {
	    .op = it->op | ((c & CLS_SEQUENTIAL) ? VYRE_MK_SEQUENTIAL : 0u),
	    .param = it->param,
	    .count = is_dfa(it->op) ? it->in_bytes : it->in_bytes / 4,
	    .slot = slot,
	    .in = vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_IN, it->in_heap, it->in_off),
	    .out =
		vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_OUT, it->out_heap, it->out_off),
	    .table = vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_TABLE, it->table_heap,
					    it->table_off),
	};

	if (is_dfa(it->op)) {
		u.aux = it->table_bytes;
		u.op |= dfa_table_trust(it);
		/* read over PCIe: staged in coalesced tiles (mk_dfa.cuh) */
		u.op |= heaps[it->in_heap].device ? 0u : VYRE_MK_DFA_HOST_IN;
	} else if (mask & VYRE_OPERAND_COUNTED) {
		/* mk_decode.cuh: bytes in, bytes out, table bytes */
		u.count = it->in_bytes;
		u.aux = it->out_bytes;
		u.param = it->table_bytes;
	}
	if (c & CLS_SPLIT) {
		/* the join finds the parts' bytes again from their number */
		u.op |= VYRE_MK_DFA_JOIN;
		u.param = (c & CLS_UNITS) - 1;
	}
	return u;
}
