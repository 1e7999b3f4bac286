/* SPDX-License-Identifier: MIT */
/* Narrowing a resolved item to the byte ranges of its SQE (docs/design.md 6.6; resolve.h). */
#include "resolve.h"

/* [off, off + len) of a buffer of @bytes: aligned and inside it, with no overflow. */
static int range_fits(uint64_t off, uint32_t len, uint32_t bytes)
{
	return ((off | len) & 3u) == 0 && off <= bytes && len <= bytes - off;
}

/* Two ranges of one buffer share no byte (an empty one shares none). */
static int apart(uint64_t a, uint32_t a_len, uint64_t b, uint32_t b_len)
{
	return a_len == 0 || b_len == 0 || a + a_len <= b || b + b_len <= a;
}

int vyre_resolve_range(const struct vyre_sqe *sqe, struct vyre_exec_item *x)
{
	const struct vyre_work_item *it = &sqe->item;
	const int mask = vyre_op_operands(it->op_handle);
	const int in = mask > 0 && (mask & VYRE_OPERAND_IN);
	const int out = mask > 0 && (mask & VYRE_OPERAND_OUT);

	if (mask < 0)
		return VYRE_E_INVAL;
	/* aux_handle took the high half of the old in_offset: another op's must be 0 */
	if (sqe->aux_handle != 0 && !(mask > 0 && (mask & VYRE_OPERAND_AUX)))
		return VYRE_E_INVAL;
	if (in ? !range_fits(sqe->in_offset, sqe->in_length, x->in_bytes)
	       : (sqe->in_offset | sqe->in_length) != 0)
		return VYRE_E_INVAL;
	if (out ? !range_fits(sqe->out_offset, sqe->out_length, x->out_bytes)
		: (sqe->out_offset | sqe->out_length) != 0)
		return VYRE_E_INVAL;
	/* in place (equal ranges) or apart, as with two handles */
	if (in && out && it->input_handle == it->output_handle &&
	    !(sqe->in_offset == sqe->out_offset && sqe->in_length == sqe->out_length) &&
	    !apart(sqe->in_offset, sqe->in_length, sqe->out_offset, sqe->out_length))
		return VYRE_E_INVAL;
	if (vyre_op_check_lengths(it->op_handle, it, in ? sqe->in_length : 0,
				  out ? sqe->out_length : 0) != 0)
		return VYRE_E_INVAL;
	if (in) {
		x->in_off += sqe->in_offset;
		x->in_bytes = sqe->in_length;
	}
	if (out) {
		x->out_off += sqe->out_offset;
		x->out_bytes = sqe->out_length;
	}
	return 0;
}
