/* SPDX-License-Identifier: MIT */
/* Resolving work items against the handle table of the submitting domain. */
#include "resolve.h"

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
	x->aux_heap = vyre_buffer_heap(&s, heap);
	x->aux_off = s.off;
	x->aux_bytes = s.bytes;
	return 0;
}
