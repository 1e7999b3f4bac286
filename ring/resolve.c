/* SPDX-License-Identifier: MIT */
/* Resolving work items against the handle table of the submitting domain. */
#include <string.h>

#include "resolve.h"

/* A device buffer is a heap of its own; any other buffer is in the domain's heap. */
static uint32_t heap_of(const struct vyre_buffer_ref *ref, uint32_t domain_heap)
{
	return (ref->flags & VYRE_BUF_DEVICE) ? ref->heap : domain_heap;
}

int vyre_resolve(const struct vyre_handle_table *t, uint32_t domain, uint32_t heap,
		 const struct vyre_work_item *it, struct vyre_exec_item *out)
{
	struct vyre_buffer_ref in = {0}, res = {0}, table = {0};
	int mask = vyre_op_operands(it->op_handle);

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
	memset(out, 0, sizeof(*out));
	out->op = it->op_handle;
	out->param = (mask & VYRE_OPERAND_TABLE) ? 0 : it->param;
	if (mask & VYRE_OPERAND_IN)
		out->in_heap = heap_of(&in, heap);
	if (mask & VYRE_OPERAND_OUT)
		out->out_heap = heap_of(&res, heap);
	if (mask & VYRE_OPERAND_TABLE)
		out->table_heap = heap_of(&table, heap);
	out->in_off = in.off;
	out->in_bytes = in.bytes;
	out->out_off = res.off;
	out->out_bytes = res.bytes;
	out->table_off = table.off;
	out->table_bytes = table.bytes;
	return 0;
}

int vyre_resolve_aux(const struct vyre_handle_table *t, uint32_t domain, uint32_t heap,
		     const struct vyre_sqe *sqe, struct vyre_exec_item *x)
{
	const struct vyre_work_item *it = &sqe->item;
	const int mask = vyre_op_operands(it->op_handle);
	struct vyre_buffer_ref s;

	if (mask <= 0 || !(mask & VYRE_OPERAND_AUX) || sqe->aux_handle == 0)
		return 0;
	if (vyre_handles_get(t, sqe->aux_handle, domain, &s) != 0 ||
	    s.bytes < sizeof(struct vyre_stream_state) || (s.flags & VYRE_BUF_TRANSIENT))
		return VYRE_E_INVAL;
	/* the stream is none of the item's other operands (design.md 6.8) */
	if (sqe->aux_handle == it->input_handle || sqe->aux_handle == it->output_handle ||
	    sqe->aux_handle == it->param)
		return VYRE_E_INVAL;
	x->aux_heap = heap_of(&s, heap);
	x->aux_off = s.off;
	x->aux_bytes = s.bytes;
	return 0;
}
