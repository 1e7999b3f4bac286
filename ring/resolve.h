/* SPDX-License-Identifier: MIT */
/*
 * ring/resolve.h - from a client's work item to an item a backend can run.
 *
 * vyre_resolve maps the handles of @it, looked up in @domain only, to
 * (heap, offset, length) and applies the static checks of gpu/ops.h: a
 * heap buffer lies in @heap (the domain's heap index), a device buffer in
 * the heap index its handle records. It does
 * not look inside a DFA table: an earlier item of the same batch may still
 * write it, so vyre_exec_one checks the table when the item runs.
 *
 * Returns 0 or VYRE_E_INVAL (unknown op, unknown, freed or foreign handle,
 * a handle where the op takes none, an output too short).
 */
#ifndef VYRE_RING_RESOLVE_H
#define VYRE_RING_RESOLVE_H

#include <stdint.h>

#include "../gpu/ops.h"
#include "handles.h"

/* A device buffer is a heap of its own; any other buffer is in the domain's heap. */
static inline uint32_t vyre_buffer_heap(const struct vyre_buffer_ref *ref, uint32_t domain_heap)
{
	return (ref->flags & VYRE_BUF_DEVICE) ? ref->heap : domain_heap;
}

/*
 * Inline: vyred resolves every item of a batch with it, and the build has
 * no link-time optimization (a call, a memset and the length checks' call
 * an item were a fifth of the resolve stage).
 */
static inline int vyre_resolve(const struct vyre_handle_table *t, uint32_t domain, uint32_t heap,
			       const struct vyre_work_item *it, struct vyre_exec_item *out)
{
	struct vyre_buffer_ref in = {0}, res = {0}, table = {0};
	const int mask = vyre_op_operands(it->op_handle);

	if (mask < 0)
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_IN) && vyre_handles_get(t, it->input_handle, domain, &in) != 0)
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_OUT) && vyre_handles_get(t, it->output_handle, domain, &res) != 0)
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_TABLE) && vyre_handles_get(t, it->param, domain, &table) != 0)
		return VYRE_E_INVAL;
	if (vyre_op_check_lengths(it->op_handle, it, in.bytes, res.bytes) != 0)
		return VYRE_E_INVAL;
	*out = (struct vyre_exec_item){
	    .op = it->op_handle,
	    .param = (mask & VYRE_OPERAND_TABLE) ? 0 : it->param,
	    .in_heap = (mask & VYRE_OPERAND_IN) ? vyre_buffer_heap(&in, heap) : 0,
	    .out_heap = (mask & VYRE_OPERAND_OUT) ? vyre_buffer_heap(&res, heap) : 0,
	    .table_heap = (mask & VYRE_OPERAND_TABLE) ? vyre_buffer_heap(&table, heap) : 0,
	    .in_bytes = in.bytes,
	    .out_bytes = res.bytes,
	    .table_bytes = table.bytes,
	    .in_off = in.off,
	    .out_off = res.off,
	    .table_off = table.off,
	};
	return 0;
}

/*
 * docs/design.md 6.6: narrow @x, which vyre_resolve made of @sqe's item, to
 * the byte ranges of @sqe (a VYRE_SQE_RANGE item): each operand the op has
 * becomes [offset, offset + length) of its buffer; the table stays whole.
 * VYRE_E_INVAL, @x unchanged, for an offset or length not a multiple of 4,
 * a range past its buffer, a non-zero range of an operand the op lacks,
 * input and output ranges of one buffer that overlap without being equal,
 * or a range too short for the op (vyre_op_check_lengths).
 */
int vyre_resolve_range(const struct vyre_sqe *sqe, struct vyre_exec_item *x);

/*
 * docs/design.md 6.8: the stream of a DFA_REPORT item, @sqe's aux_handle
 * (0: none), into @x's aux_heap, aux_off and aux_bytes, as the whole
 * buffer even with VYRE_SQE_RANGE. The aux_handle of an op without a stream
 * is left alone (vyre_resolve_range refuses a non-zero one on a ranged
 * item). VYRE_E_INVAL for a handle that does not resolve in @domain, a
 * buffer under 16 bytes, a transient one, or one that is also the item's
 * input, output or table.
 */
int vyre_resolve_aux(const struct vyre_handle_table *t, uint32_t domain, uint32_t heap,
		     const struct vyre_sqe *sqe, struct vyre_exec_item *x);

#endif /* VYRE_RING_RESOLVE_H */
