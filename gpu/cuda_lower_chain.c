/* SPDX-License-Identifier: MIT */
/*
 * Chains and on-chip handoff runs in the CUDA lowering (docs/design.md 6.3,
 * 7.6; docs/cuda.md "Chains").
 *
 * Cancellation. An item that continues a chain (VYRE_EXEC_AFTER_PREV) runs
 * after its predecessor, in an earlier plan group, and is cancelled when
 * that one failed. Whether it failed is known on the host when it never
 * reached the device (statically invalid, or cancelled itself) or cannot
 * fail (elementwise ops, SUM, MAX, NOP): then the item is cancelled here or
 * runs as usual. Otherwise a result record on the device says so: the
 * predecessor's own (DFA and byte ops), or, for an item that cannot fail
 * by itself, the record its own predecessor's outcome follows. The item's
 * units then carry VYRE_MK_AFTER_PREV and that record, and read it before
 * doing anything; the host derives the outcome of those without a record.
 *
 * Handoff runs. Items the planner marked (VYRE_EXEC_HANDOFF_OUT/_IN) become
 * one run of units that one block (a warp, for a run that ends in a small
 * DFA_SCAN_COUNTED) executes where the first item's group runs, when the run is one this backend
 * keeps on chip: a decoder or BYTEMAP first, BYTEMAPs, and a BYTEMAP, DFA_SCAN_COUNTED,
 * DFA_REPORT_COUNTED or stream module op last, each reading exactly the range its predecessor
 * wrote, every operand word aligned, and the last one's output the first
 * one's input or apart from it (gpu/mk_fuse.cuh streams the first input in
 * order; a report writes records as it goes, so only apart). A marked link that
 * is not such runs through the heap, as the plan's groups allow.
 */
#include "cuda_lower_chain.h"

static int can_fail(uint32_t op)
{
	return op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED ||
	       vyre_cuda_is_report(op) || op == VYRE_OP_BASE64_DECODE || op == VYRE_OP_HEX_DECODE ||
	       op == VYRE_OP_BYTEMAP || (op & VYRE_OP_MODULE_BIT);
}

static int run_writer(uint32_t op)
{
	return op == VYRE_OP_BASE64_DECODE || op == VYRE_OP_HEX_DECODE || op == VYRE_OP_BYTEMAP;
}

static int run_reader(uint32_t op)
{
	return op == VYRE_OP_BYTEMAP || op == VYRE_OP_DFA_SCAN_COUNTED ||
	       op == VYRE_OP_DFA_REPORT_COUNTED ||
	       ((op & VYRE_OP_MODULE_BIT) && vyre_handoff_kept(VYRE_CUDA_HANDOFF_READERS, op));
}

/* A run ends at a member that writes no stream on: a scan, a report, or a module op. */
static int run_last(uint32_t op)
{
	return op == VYRE_OP_DFA_SCAN_COUNTED || op == VYRE_OP_DFA_REPORT_COUNTED ||
	       (op & VYRE_OP_MODULE_BIT);
}

/*
 * A run of @m members from item @i that one warp runs (gpu/mk_fuse.cuh,
 * warp_fused_run), 32 a block, as small DFA items: one that ends in a
 * DFA_SCAN_COUNTED of at most VYRE_MK_DFA_WARP_BYTES. Its units are then
 * warp units, the first running the run, the others skipped.
 */
static int warp_run(const struct vyre_exec_batch *batch, uint32_t i, uint32_t m)
{
	const struct vyre_exec_item *f = &batch->items[i + m - 1];

	/* a member's DFA_SCAN_COUNTED is valid: in_bytes >= 4 */
	return f->op == VYRE_OP_DFA_SCAN_COUNTED && f->in_bytes - 4 <= VYRE_MK_DFA_WARP_BYTES;
}

static uint64_t address(const struct vyre_cuda_heap *heaps, uint32_t heap, uint64_t off)
{
	return heaps[heap].dptr + off;
}

/* Every operand @it uses is word aligned (classify found them registered and in range). */
static int aligned(const struct vyre_cuda_heap *heaps, const struct vyre_exec_item *it)
{
	/* a report reads and writes any alignment, but its operands are in, out and table */
	const int mask = vyre_cuda_is_report(it->op)
			     ? (int)(VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE)
			     : vyre_op_operands(it->op);
	uint64_t a = 0;

	if (mask & VYRE_OPERAND_IN)
		a |= address(heaps, it->in_heap, it->in_off);
	if (mask & VYRE_OPERAND_OUT)
		a |= address(heaps, it->out_heap, it->out_off);
	if (mask & VYRE_OPERAND_TABLE)
		a |= address(heaps, it->table_heap, it->table_off);
	return (a & 3u) == 0;
}

/* Link j -> j + 1 of the run that item @head starts: see the top of the file. */
static int link_ok(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
		   uint32_t n_heaps, uint32_t split_blocks, const struct vyre_cuda_item_state *st,
		   uint32_t head, uint32_t j)
{
	const struct vyre_exec_item *w = &batch->items[head], *a = &batch->items[j];
	const struct vyre_exec_item *r = &batch->items[j + 1];
	const uint32_t both = VYRE_EXEC_HANDOFF_IN | VYRE_EXEC_AFTER_PREV;

	if (j + 1 >= batch->n_items || !(a->flags & VYRE_EXEC_HANDOFF_OUT) || !run_writer(a->op) ||
	    (r->flags & both) != both || r->prev != j || !run_reader(r->op) ||
	    st[j + 1].group != VYRE_CUDA_GROUP_NONE)
		return 0;
	if (r->in_heap != a->out_heap || r->in_off != a->out_off || r->in_bytes != a->out_bytes)
		return 0;
	if (!(vyre_cuda_classify(r, heaps, n_heaps, split_blocks) & CLS_DEVICE) ||
	    !aligned(heaps, r))
		return 0;
	/* its output may be the run's input (in place) or apart from it, never across it */
	const uint64_t o = address(heaps, r->out_heap, r->out_off);
	const uint64_t in = address(heaps, w->in_heap, w->in_off);

	/* a report writes its records as the input streams: never over it */
	if (o == in && !vyre_cuda_is_report(r->op))
		return 1;
	return o + r->out_bytes <= in || in + w->in_bytes <= o;
}

/* Members of the run item @i heads (1: it heads none). */
static uint32_t run_members(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
			    uint32_t n_heaps, uint32_t split_blocks,
			    const struct vyre_cuda_item_state *st, uint32_t i)
{
	uint32_t m = 1;

	if (!run_writer(batch->items[i].op) || !aligned(heaps, &batch->items[i]))
		return 1;
	while (m < VYRE_MK_FUSE_MAX &&
	       link_ok(batch, heaps, n_heaps, split_blocks, st, i, i + m - 1)) {
		m++;
		if (run_last(batch->items[i + m - 1].op))
			break;
	}
	return m;
}

uint32_t vyre_cuda_chain_measure(const struct vyre_exec_batch *batch,
				 const struct vyre_cuda_heap *heaps, uint32_t n_heaps,
				 uint32_t split_blocks, struct vyre_cuda_item_state *st, uint32_t i,
				 uint32_t g, uint32_t launch_first, uint32_t c, uint32_t *pending)
{
	const struct vyre_exec_item *it = &batch->items[i];
	struct vyre_cuda_item_state *s = &st[i];
	uint32_t pred = VYRE_CUDA_SRC_OK;

	if (s->group != VYRE_CUDA_GROUP_NONE && (s->group & VYRE_CUDA_GROUP_PENDING)) {
		/* a run member: its head's group runs it, earlier in the same launch */
		const uint32_t hg = s->group & ~VYRE_CUDA_GROUP_PENDING;

		if (hg >= g || hg < launch_first)
			return CLS_BAD;
		s->group = hg;
		(*pending)--;
		return CLS_MEMBER;
	}
	s->group = g;
	if (it->flags & VYRE_EXEC_AFTER_PREV) {
		if (it->prev >= batch->n_items) {
			pred = VYRE_CUDA_SRC_FAIL;
		} else {
			const struct vyre_cuda_item_state *p = &st[it->prev];

			/* docs/design.md 8.1: the predecessor runs in an earlier group */
			if (p->group == VYRE_CUDA_GROUP_NONE ||
			    (p->group & VYRE_CUDA_GROUP_PENDING) || p->group >= g)
				return CLS_BAD;
			pred = p->src;
		}
	}
	if (pred == VYRE_CUDA_SRC_FAIL) {
		s->src = VYRE_CUDA_SRC_FAIL;
		return CLS_CANCELED;
	}
	const int dynamic = pred != VYRE_CUDA_SRC_OK;

	if (!(c & CLS_DEVICE)) {
		s->src = (c & CLS_INVAL) ? VYRE_CUDA_SRC_FAIL
			 : dynamic	 ? VYRE_CUDA_SRC_FOLLOW
					 : VYRE_CUDA_SRC_OK;
		return c;
	}
	c |= dynamic ? CLS_AFTER : 0u;
	s->src = can_fail(it->op) ? VYRE_CUDA_SRC_OWN
		 : dynamic	  ? VYRE_CUDA_SRC_FOLLOW
				  : VYRE_CUDA_SRC_OK;
	if (!(it->flags & VYRE_EXEC_HANDOFF_OUT))
		return c;
	const uint32_t m = run_members(batch, heaps, n_heaps, split_blocks, st, i);

	if (m < 2)
		return c;
	for (uint32_t t = 1; t < m; t++) {
		st[i + t].group = g | VYRE_CUDA_GROUP_PENDING;
		st[i + t].src = VYRE_CUDA_SRC_OWN;
	}
	*pending += m - 1;
	return (c & ~(CLS_UNITS | (warp_run(batch, i, m) ? CLS_BLOCK : 0u))) | CLS_FUSED | m;
}

void vyre_cuda_chain_resolve(const struct vyre_exec_batch *batch, const uint32_t *cls,
			     struct vyre_cuda_item_state *st, uint32_t begin, uint32_t end)
{
	const uint32_t *order = batch->plan.order;

	for (uint32_t k = begin; k < end; k++) {
		const uint32_t i = order[k];

		/* the predecessor is in an earlier group: its record is known */
		if (!(cls[k] & CLS_MEMBER) && st[i].src == VYRE_CUDA_SRC_FOLLOW)
			st[i].src = st[batch->items[i].prev].src;
	}
}

uint32_t vyre_cuda_chain_emit_run(struct fill_cursor *cur, const struct vyre_exec_batch *batch,
				  const struct vyre_cuda_heap *heaps,
				  struct vyre_cuda_item_state *st, uint32_t i, uint32_t c)
{
	const uint32_t m = c & CLS_UNITS, first = cur->result;
	/* each member as it would run alone, on a block, never split */
	const uint32_t alone = CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u;

	for (uint32_t t = 0; t < m; t++) {
		struct vyre_mk_unit u =
		    vyre_cuda_result_unit(&batch->items[i + t], alone, heaps, cur->result);

		vyre_cuda_report_prefill(cur, &batch->items[i + t], heaps, cur->result);
		if (t == 0)
			vyre_cuda_chain_mark(batch, st, i, c, &u);
		else
			u.op |= VYRE_MK_HANDOFF_IN;
		if (t + 1 < m)
			u.op |= VYRE_MK_HANDOFF_OUT;
		st[i + t].src = cur->result++;
		cur->units[cur->unit++] = u;
	}
	return first;
}

uint32_t vyre_cuda_chain_host_slot(const struct vyre_exec_batch *batch,
				   const struct vyre_cuda_item_state *st, uint32_t i, uint32_t c)
{
	const struct vyre_exec_item *it = &batch->items[i];

	if (c & CLS_MEMBER)
		return st[i].src;
	if (c & CLS_CANCELED)
		return VYRE_CUDA_SLOT_CANCELED;
	if ((it->flags & VYRE_EXEC_AFTER_PREV) && it->prev < batch->n_items &&
	    st[it->prev].src < VYRE_CUDA_SRC_FIRST)
		return VYRE_CUDA_SLOT_FOLLOW |
		       ((c & CLS_INVAL) ? VYRE_CUDA_SLOT_FOLLOW_INVAL : 0u) | st[it->prev].src;
	return (c & CLS_INVAL) ? VYRE_CUDA_SLOT_INVAL : VYRE_CUDA_SLOT_OK;
}
