/* SPDX-License-Identifier: MIT */
/*
 * Byte ranges in the dependency pass (docs/design.md 7.2): in a batch that
 * has an item with VYRE_SQE_RANGE, an operand is the byte range of its
 * buffer the item's exec names, and the ranges of one buffer are cut into
 * runs of overlapping ranges (sorted by offset); each run gets a buffer
 * slot of its own, so ranges in different runs never meet in a hazard
 * while ranges of one run are ordered as one buffer (coarser than each
 * pair: parallelism lost, never correctness). An item's input and output
 * ranges of one buffer that share a run make it in place for the planner
 * (never deduplicated, its write ordered after its read), which is the
 * safe side.
 *
 * Cost: one lookup per operand of the (domain, handle) map, a counting
 * sort by buffer that keeps batch order, and a merge sort only of a
 * buffer's ranges that do not already come in offset order (a client
 * walking slices of one buffer submits them in order). Batches without a
 * ranged item never come here (plan.c's analyse finds the first one).
 */
#include "batch.h"

/* The operands of item @k as OPERANDS_PER_ITEM * k + these. */
#define OPND_IN	   0u
#define OPND_TABLE 1u
#define OPND_OUT   2u
#define OPND_AUX   3u

int batch_range_reserve(struct vyre_arena *a, uint32_t n, struct batch_scratch *s,
			struct vyre_plan_error *err)
{
	const size_t ops = OPERANDS_PER_ITEM * (size_t)n;
	void *opnd, *tmp;

	if (vyre_arena_reserve(a, ops, sizeof(struct range_opnd), &opnd) ||
	    vyre_arena_reserve(a, ops, sizeof(struct range_opnd), &tmp) ||
	    arena_u32(a, ops, &s->run_of) || arena_u32(a, ops + 1, &s->buf_start))
		return plan_err_reserve(err, VYRE_PLAN_IN_BATCH, "byte range runs", ops);
	s->opnd = opnd;
	s->opnd_tmp = tmp;
	return 0;
}

/* Operand @at (4k + which) of buffer @buf covering [off, off + bytes), when it has a buffer. */
static uint32_t add_opnd(struct batch_scratch *s, uint32_t m, uint64_t at, uint32_t buf,
			 uint64_t off, uint32_t bytes)
{
	s->run_of[at] = VYRE_PLAN_NONE;
	if (buf == VYRE_PLAN_NONE)
		return m;
	s->opnd[m] =
	    (struct range_opnd){.off = off, .end = off + bytes, .buf = buf, .at = (uint32_t)at};
	return m + 1;
}

/* Bottom-up merge sort of @a[0, n) by offset, @tmp as room; the result is in @a. */
static void sort_by_off(struct range_opnd *a, struct range_opnd *tmp, uint32_t n)
{
	struct range_opnd *src = a, *dst = tmp;

	for (uint64_t width = 1; width < n; width *= 2) {
		for (uint64_t lo = 0; lo < n; lo += 2 * width) {
			const uint64_t mid = lo + width < n ? lo + width : n;
			const uint64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			uint64_t i = lo, j = mid, o = lo;

			while (i < mid && j < hi)
				dst[o++] = src[j].off < src[i].off ? src[j++] : src[i++];
			while (i < mid)
				dst[o++] = src[i++];
			while (j < hi)
				dst[o++] = src[j++];
		}
		struct range_opnd *t = src;

		src = dst;
		dst = t;
	}
	if (src != a)
		for (uint32_t i = 0; i < n; i++)
			a[i] = src[i];
}

/* @a[0, n) are in offset order. */
static int sorted_by_off(const struct range_opnd *a, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (a[i].off < a[i - 1].off)
			return 0;
	return 1;
}

/* @m operands by buffer (batch order kept) into s->opnd_tmp; s->buf_start[b] starts buffer b. */
static void by_buffer(struct batch_scratch *s, uint32_t m, uint32_t n_bufs)
{
	uint32_t *start = s->buf_start;

	for (uint32_t b = 0; b <= n_bufs; b++)
		start[b] = 0;
	for (uint32_t i = 0; i < m; i++)
		start[s->opnd[i].buf + 1]++;
	for (uint32_t b = 0; b < n_bufs; b++)
		start[b + 1] += start[b];
	/* start[b] walks buffer b's places, then holds its end: buffer b starts at end[b - 1] */
	for (uint32_t i = 0; i < m; i++)
		s->opnd_tmp[start[s->opnd[i].buf]++] = s->opnd[i];
}

uint32_t batch_range_runs(struct batch_scratch *s, struct buffer_map *m,
			  const struct vyre_plan_batch *b, uint32_t n)
{
	const uint8_t *op_mask = s->t->op_mask;
	uint32_t n_opnd = 0, n_runs = 0;

	for (uint32_t k = 0; k < n; k++) {
		const uint32_t op = b->items[k].op_handle, dom = b->domain[k];
		const int mask = plan_op_mask(op_mask, op);
		const struct vyre_work_item *it = &b->items[k];
		const struct vyre_exec_item *x = &b->exec[k];
		const int valid = !(b->flags[k] & VYRE_PLAN_F_INVALID);
		const uint32_t in = valid && (mask & VYRE_OPERAND_IN)
					? buffer_slot(m, dom, it->input_handle)
					: VYRE_PLAN_NONE;
		const uint32_t table = valid && (mask & VYRE_OPERAND_TABLE)
					   ? buffer_slot(m, dom, it->param)
					   : VYRE_PLAN_NONE;
		const uint32_t out = valid && (mask & VYRE_OPERAND_OUT)
					 ? buffer_slot(m, dom, it->output_handle)
					 : VYRE_PLAN_NONE;

		/* a stream is its whole buffer (docs/design.md 6.8) */
		const uint32_t aux = valid && (mask & VYRE_OPERAND_AUX) && b->aux && b->aux[k]
					 ? buffer_slot(m, dom, b->aux[k])
					 : VYRE_PLAN_NONE;
		const uint64_t at = OPERANDS_PER_ITEM * (uint64_t)k;

		n_opnd = add_opnd(s, n_opnd, at + OPND_IN, in, x->in_off, x->in_bytes);
		n_opnd = add_opnd(s, n_opnd, at + OPND_TABLE, table, x->table_off, x->table_bytes);
		n_opnd = add_opnd(s, n_opnd, at + OPND_OUT, out, x->out_off, x->out_bytes);
		n_opnd = add_opnd(s, n_opnd, at + OPND_AUX, aux, x->aux_off, x->aux_bytes);
	}
	const uint32_t n_bufs = m->ids.n_ids;

	by_buffer(s, n_opnd, n_bufs);
	for (uint32_t buf = 0, first = 0; buf < n_bufs; first = s->buf_start[buf++]) {
		struct range_opnd *r = &s->opnd_tmp[first];
		const uint32_t count = s->buf_start[buf] - first;
		uint64_t end = 0;

		if (!sorted_by_off(r, count))
			sort_by_off(r, &s->opnd[first], count);
		for (uint32_t i = 0; i < count; i++) {
			/* ranges that share no byte with the run so far start the next one */
			if (i == 0 || r[i].off >= end) {
				buffer_slot_added(m, n_runs);
				n_runs++;
				end = r[i].end;
			}
			end = r[i].end > end ? r[i].end : end;
			s->run_of[r[i].at] = n_runs - 1;
		}
	}
	return n_runs;
}
