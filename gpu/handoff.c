/* SPDX-License-Identifier: MIT */
/*
 * Which writer -> reader pairs an on-chip handoff keeps exact (ops.h): the
 * reader may only read bytes of the handed-off buffer that the writer wrote,
 * since a fresh on-chip buffer has none of the heap's older bytes.
 */
#include "ops.h"

/* Bytes from the start of its output that @w writes when it succeeds; 0 when unknown. */
static uint64_t written_prefix(const struct vyre_exec_item *w)
{
	switch (w->op) {
	case VYRE_OP_FILL:
		return w->out_bytes;
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		return w->in_bytes < w->out_bytes ? w->in_bytes : w->out_bytes;
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED:
		return 4;
	default:
		return 0;
	}
}

/* A counted output (section 6.1): word 0 and the bytes it counts. */
static int counted_writer(uint32_t op)
{
	return op == VYRE_OP_BASE64_DECODE || op == VYRE_OP_HEX_DECODE || op == VYRE_OP_BYTEMAP;
}

static int counted_reader(uint32_t op)
{
	return counted_writer(op) || op == VYRE_OP_DFA_SCAN_COUNTED ||
	       op == VYRE_OP_DFA_REPORT_COUNTED;
}

/* Bytes from the start of its input that @r may read; UINT64_MAX when unknown. */
static uint64_t read_prefix(const struct vyre_exec_item *r)
{
	switch (r->op) {
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		return r->in_bytes < r->out_bytes ? r->in_bytes : r->out_bytes;
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_REPORT:
		return r->in_bytes;
	default:
		return counted_reader(r->op) ? r->in_bytes : UINT64_MAX;
	}
}

int vyre_exec_handoff_exact(const struct vyre_exec_item *w, const struct vyre_exec_item *r)
{
	/* the on-chip copy starts where the writer's output does: no other byte range */
	if (r->in_heap != w->out_heap || r->in_off != w->out_off)
		return 0;
	/* a counted reader reads word 0 and the bytes it counts: what a counted writer wrote */
	if (counted_writer(w->op))
		return counted_reader(r->op);
	return read_prefix(r) <= written_prefix(w);
}
