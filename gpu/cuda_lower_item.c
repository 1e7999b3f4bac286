/* SPDX-License-Identifier: MIT */
/*
 * One item of a batch in the CUDA lowering: the static checks of
 * vyre_exec_one and how the item runs (its class), the split of a large DFA
 * item, and the unit of a result item. Below both the chain rules
 * (cuda_lower_chain.c) and the batch layout (cuda_lower.c), which use it.
 */
#include "cuda_lower_item.h"

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

static int is_dfa(uint32_t op)
{
	return op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED;
}

/* A module op's unit (cuda_abi.h, VYRE_MK_OP_MODULE): classify found it registered. */
static struct vyre_mk_unit module_unit(const struct vyre_exec_item *it,
				       const struct vyre_cuda_heap *heaps, uint32_t slot)
{
	const int mask = vyre_op_operands(it->op);
	const int32_t index = vyre_op_module_index(it->op);
	const int table = (mask & VYRE_OPERAND_TABLE) != 0;

	return (struct vyre_mk_unit){
	    .op = VYRE_MK_OP_MODULE | (uint32_t)index << VYRE_MK_MODULE_SHIFT |
		  (table ? VYRE_MK_MODULE_TABLE : 0u) |
		  ((mask & VYRE_OPERAND_COUNTED) ? VYRE_MK_MODULE_COUNTED : 0u),
	    .param = table ? it->table_bytes : it->param,
	    .count = (mask & VYRE_OPERAND_IN) ? it->in_bytes : 0u,
	    .aux = (mask & VYRE_OPERAND_OUT) ? it->out_bytes : 0u,
	    .slot = slot,
	    .in = vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_IN, it->in_heap, it->in_off),
	    .out =
		vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_OUT, it->out_heap, it->out_off),
	    .table = vyre_cuda_operand_addr(heaps, table, it->table_heap, it->table_off),
	};
}

void vyre_cuda_report_prefill(const struct fill_cursor *cur, const struct vyre_exec_item *it,
			      const struct vyre_cuda_heap *heaps, uint32_t slot)
{
	if (!vyre_cuda_is_report(it->op))
		return;
	cur->records[slot] = (struct vyre_mk_result){
	    .status = 0,
	    .reserved = 0,
	    .result = vyre_cuda_operand_addr(heaps, it->aux_bytes != 0, it->aux_heap, it->aux_off),
	};
}

/*
 * A report item's unit (gpu/mk_report.cuh): count, aux, param: in, table and
 * out bytes. A warp unit or a block unit alike (classify_report).
 */
static struct vyre_mk_unit report_unit(const struct vyre_exec_item *it,
				       const struct vyre_cuda_heap *heaps, uint32_t slot)
{
	return (struct vyre_mk_unit){
	    .op = it->op | dfa_table_trust(it) |
		  ((it->flags & VYRE_EXEC_REPORT_TRUSTED) ? VYRE_MK_REPORT_TRUSTED : 0u) |
		  (it->aux_bytes != 0 ? VYRE_MK_REPORT_STREAM : 0u) |
		  /* a warp unit stages host input, walks device input in place */
		  (heaps[it->in_heap].device ? 0u : VYRE_MK_DFA_HOST_IN),
	    .param = it->out_bytes,
	    .count = it->in_bytes,
	    .aux = it->table_bytes,
	    .slot = slot,
	    .in = vyre_cuda_operand_addr(heaps, 1, it->in_heap, it->in_off),
	    .out = vyre_cuda_operand_addr(heaps, 1, it->out_heap, it->out_off),
	    .table = vyre_cuda_operand_addr(heaps, 1, it->table_heap, it->table_off),
	};
}

/* The unit of a result item; a split DFA item's join (its parts differ in op, param, reserved). */
struct vyre_mk_unit vyre_cuda_result_unit(const struct vyre_exec_item *it, uint32_t c,
					  const struct vyre_cuda_heap *heaps, uint32_t slot)
{
	if (it->op & VYRE_OP_MODULE_BIT)
		return module_unit(it, heaps, slot);
	if (vyre_cuda_is_report(it->op))
		return report_unit(it, heaps, slot);
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
