/* SPDX-License-Identifier: MIT */
/* Lowering a planned batch to megakernel units (see cuda_lower.h). */
#include "cuda_lower.h"
#include "cuda_lower_chain.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static int check_ends(const uint32_t *ends, uint32_t n, uint32_t total)
{
	uint32_t prev = 0;

	if (n && !ends)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (ends[i] < prev || ends[i] > total)
			return VYRE_E_INVAL;
		prev = ends[i];
	}
	return prev == total ? 0 : VYRE_E_INVAL;
}

static int check_plan(const struct vyre_exec_batch *batch)
{
	const struct vyre_exec_plan *p = &batch->plan;

	if (p->n_order && (!p->order || !batch->items || !batch->results))
		return VYRE_E_INVAL;
	for (uint32_t k = 0; k < p->n_order; k++)
		if (p->order[k] >= batch->n_items)
			return VYRE_E_INVAL;
	if (check_ends(p->group_end, p->n_groups, p->n_order) != 0)
		return VYRE_E_INVAL;
	return check_ends(p->launch_end, p->n_launches, p->n_groups);
}

static uint32_t begin_of(const uint32_t *ends, uint32_t i)
{
	return i == 0 ? 0 : ends[i - 1];
}

static uint64_t align64(uint64_t v)
{
	return (v + 63) & ~(uint64_t)63;
}

/*
 * Result records of an item of class @c: a split DFA item has one per part
 * too, a handoff run one per member.
 */
static uint32_t result_records(uint32_t c)
{
	if (!(c & CLS_RESULT))
		return 0;
	return (c & (CLS_SPLIT | CLS_FUSED)) ? (c & CLS_UNITS) : 1u;
}

#define CHAIN_FLAGS (VYRE_EXEC_AFTER_PREV | VYRE_EXEC_HANDOFF_OUT | VYRE_EXEC_HANDOFF_IN)

/*
 * Classes and layout of the batch. Without @chained, the chain state is
 * neither kept nor read, and the first chained item met makes it return 1:
 * the caller measures again with @chained. Most batches have no chain, and
 * for them the chain passes cost more than the rest of the lowering.
 */
static int measure(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
		   uint32_t n_heaps, uint32_t split_blocks, uint32_t *cls,
		   struct vyre_cuda_item_state *st, struct vyre_cuda_layout *lay, int chained)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint64_t units = 0, stages = 0, results = 0, launches = 0;
	uint32_t blocks = 0;
	uint32_t pending = 0; /* handoff run members whose own place is yet to come */

	for (uint32_t i = 0; chained && i < batch->n_items; i++)
		st[i] = (struct vyre_cuda_item_state){VYRE_CUDA_GROUP_NONE, VYRE_CUDA_SRC_OK};
	for (uint32_t l = 0; l < p->n_launches; l++) {
		uint64_t launch_units = 0;
		const uint32_t launch_first = begin_of(p->launch_end, l);

		for (uint32_t g = launch_first; g < p->launch_end[l]; g++) {
			uint64_t group_units = 0;
			uint32_t split = 0;

			for (uint32_t k = begin_of(p->group_end, g); k < p->group_end[g]; k++) {
				const uint32_t i = p->order[k];
				const uint32_t alone = vyre_cuda_classify(&batch->items[i], heaps,
									  n_heaps, split_blocks);

				if (!chained && (batch->items[i].flags & CHAIN_FLAGS))
					return 1;
				const uint32_t c =
				    chained ? vyre_cuda_chain_measure(batch, heaps, n_heaps,
								      split_blocks, st, i, g,
								      launch_first, alone, &pending)
					    : alone;

				if (c & CLS_BAD)
					return VYRE_E_INVAL;
				cls[k] = c;
				group_units += c & CLS_UNITS;
				results += result_records(c);
				split |= c & CLS_SPLIT;
				blocks += (c & CLS_BLOCK) != 0;
			}
			/* the joins of split DFA items are a stage of their own */
			stages += (group_units != 0) + (split != 0);
			launch_units += group_units;
		}
		launches += launch_units != 0;
		units += launch_units;
	}
	/* a run member that never comes: the plan does not list it */
	if (pending)
		return VYRE_E_INVAL;
	if (units > UINT32_MAX)
		return VYRE_E_NOMEM;
	/* units < 2^32, stages and results <= n_order < 2^32: no u64 overflow below */
	lay->units_off = 0;
	lay->stages_off = align64(units * sizeof(struct vyre_mk_unit));
	lay->results_off = align64(lay->stages_off + stages * sizeof(struct vyre_mk_stage));
	lay->bytes = align64(lay->results_off + results * sizeof(struct vyre_mk_result));
	if (lay->bytes > UINT32_MAX)
		return VYRE_E_NOMEM;
	lay->n_units = (uint32_t)units;
	lay->n_stages = (uint32_t)stages;
	lay->n_results = (uint32_t)results;
	lay->n_launches = (uint32_t)launches;
	lay->chained = (uint32_t)chained;
	lay->blocks = blocks;
	return 0;
}

int vyre_cuda_lower_measure(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
			    uint32_t n_heaps, uint32_t split_blocks, uint32_t *cls,
			    struct vyre_cuda_item_state *st, struct vyre_cuda_layout *lay)
{
	int rc;

	memset(lay, 0, sizeof(*lay));
	if (check_plan(batch) != 0)
		return VYRE_E_INVAL;
	rc = measure(batch, heaps, n_heaps, split_blocks, cls, st, lay, 0);
	if (rc == 1)
		rc = measure(batch, heaps, n_heaps, split_blocks, cls, st, lay, 1);
	return rc;
}

/*
 * The elementwise units of a large batch are most of the slab, which the
 * host writes once and only the device reads: streaming stores skip reading
 * each line into the cache first. vyre_cuda_lower_fill fences them before
 * any doorbell can be posted. The unit is made in registers from its
 * fields: a unit built in memory field by field and read back 16 bytes at
 * a time cannot be forwarded from the store buffer, and the wait for each
 * store to land was most of the lowering of a trivial item (bench "lower").
 */
struct unit_head {
	uint32_t op, param, aux, slot, reserved;
	uint64_t table;
};

static inline void store_unit(struct vyre_mk_unit *dst, const struct unit_head *h, uint32_t count,
			      uint64_t in, uint64_t out)
{
#ifdef __SSE2__
	__m128i *d = (__m128i *)dst;

	_mm_stream_si128(d, _mm_set_epi32((int)h->aux, (int)count, (int)h->param, (int)h->op));
	_mm_stream_si128(
	    d + 1,
	    _mm_set_epi64x((long long)in, (long long)(((uint64_t)h->reserved << 32) | h->slot)));
	_mm_stream_si128(d + 2, _mm_set_epi64x((long long)h->table, (long long)out));
#else
	*dst = (struct vyre_mk_unit){h->op,	  h->param, count, h->aux,  h->slot,
				     h->reserved, in,	    out,   h->table};
#endif
}

/*
 * A unit made elsewhere (a result item's), streamed as store_unit does:
 * with ordinary stores each line of the slab, evicted by the streaming
 * stores of earlier batches, was read from memory before it was written
 * (the DFA items' emit cost 4-5x its hot-cache figure in vyred).
 */
static inline void stream_unit(struct vyre_mk_unit *dst, const struct vyre_mk_unit *u)
{
	const struct unit_head h = {u->op, u->param, u->aux, u->slot, u->reserved, u->table};

	store_unit(dst, &h, u->count, u->in, u->out);
}

/*
 * Emits the units of device item @i (a split DFA item: its parts; a handoff
 * run: every member's); returns its order slot.
 */
static uint32_t emit_item(struct fill_cursor *cur, const struct vyre_exec_batch *batch, uint32_t i,
			  uint32_t c, const struct vyre_cuda_heap *heaps,
			  struct vyre_cuda_item_state *st)
{
	const struct vyre_exec_item *it = &batch->items[i];

	if (c & CLS_FUSED)
		return vyre_cuda_chain_emit_run(cur, batch, heaps, st, i, c);
	if (c & CLS_RESULT) {
		const uint32_t slot = cur->result;
		struct vyre_mk_unit u = vyre_cuda_result_unit(it, c, heaps, slot);

		vyre_cuda_report_prefill(cur, it, heaps, slot);
		cur->result += result_records(c);
		if (cur->chained)
			st[i].src = st[i].src == VYRE_CUDA_SRC_OWN ? slot : st[i].src;
		if (!(c & CLS_SPLIT)) {
			vyre_cuda_chain_mark(batch, st, i, c, &u);
			stream_unit(&cur->units[cur->unit++], &u);
			return slot;
		}
		/* the parts: the join's unit, each with its index and bytes (the join checks) */
		u.op ^= VYRE_MK_DFA_JOIN | VYRE_MK_DFA_PART;
		u.reserved =
		    vyre_cuda_dfa_part_bytes(vyre_cuda_dfa_scan_bytes(it), (c & CLS_UNITS) - 1);
		for (uint32_t k = 0; k < (c & CLS_UNITS) - 1; k++) {
			u.param = k;
			stream_unit(&cur->units[cur->unit++], &u);
		}
		return slot;
	}
	const int mask = vyre_op_operands(it->op);
	const uint64_t in =
	    vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_IN, it->in_heap, it->in_off);
	const uint64_t out =
	    vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_OUT, it->out_heap, it->out_off);
	const uint32_t words = vyre_cuda_elementwise_words(it);
	const uint32_t n = c & CLS_UNITS;
	struct vyre_mk_unit u = {
	    .op = it->op | ((c & CLS_SEQUENTIAL) ? VYRE_MK_SEQUENTIAL : 0u),
	    .param = it->param,
	};

	vyre_cuda_chain_mark(batch, st, i, c, &u);
	const struct unit_head h = {u.op, u.param, u.aux, u.slot, u.reserved, u.table};

	for (uint32_t k = 0; k < n; k++) {
		const uint64_t first = (uint64_t)k * VYRE_MK_CHUNK_WORDS;
		const uint64_t left = words - first;
		const uint32_t count = (c & CLS_SEQUENTIAL) || left < VYRE_MK_CHUNK_WORDS
					   ? (uint32_t)left
					   : VYRE_MK_CHUNK_WORDS;

		store_unit(&cur->units[cur->unit++], &h, count,
			   (mask & VYRE_OPERAND_IN) ? in + 4 * first : 0, out + 4 * first);
	}
	return cur->chained ? vyre_cuda_chain_host_slot(batch, st, i, c) : VYRE_CUDA_SLOT_OK;
}

/* Emits the joins of plan group @g's split DFA items; returns how many. */
static uint32_t emit_joins(struct fill_cursor *cur, const struct vyre_exec_batch *batch,
			   const struct vyre_cuda_heap *heaps, const uint32_t *cls, uint32_t g,
			   const uint32_t *order_slot, const struct vyre_cuda_item_state *st)
{
	const struct vyre_exec_plan *p = &batch->plan;
	const uint32_t first = cur->unit;

	for (uint32_t k = begin_of(p->group_end, g); k < p->group_end[g]; k++) {
		if (!(cls[k] & CLS_SPLIT))
			continue;
		const uint32_t i = p->order[k];
		struct vyre_mk_unit u =
		    vyre_cuda_result_unit(&batch->items[i], cls[k], heaps, order_slot[k]);

		vyre_cuda_chain_mark(batch, st, i, cls[k], &u);
		stream_unit(&cur->units[cur->unit++], &u);
	}
	return cur->unit - first;
}

/*
 * The unit of a trivial item: elementwise, one unit, aligned, not chained
 * (class CLS_DEVICE | 1, maybe CLS_DEVMEM) in a batch without chains. Most
 * items of a busy vyred are such: emit_item's general path, made inline here.
 */
#define CLS_TRIVIAL (CLS_DEVICE | 1u)

static inline int is_trivial(uint32_t c, const struct fill_cursor *cur)
{
	return (c & ~CLS_DEVMEM) == CLS_TRIVIAL && !cur->chained;
}

static inline void emit_trivial(struct fill_cursor *cur, const struct vyre_exec_item *it,
				const struct vyre_cuda_heap *heaps)
{
	const int mask = vyre_op_operands(it->op);
	const struct unit_head h = {it->op, it->param, 0, 0, 0, 0};

	/* one unit: the item's words are at most VYRE_MK_CHUNK_WORDS */
	store_unit(
	    &cur->units[cur->unit++], &h, vyre_cuda_elementwise_words(it),
	    vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_IN, it->in_heap, it->in_off),
	    vyre_cuda_operand_addr(heaps, mask & VYRE_OPERAND_OUT, it->out_heap, it->out_off));
}

/*
 * Emits one plan group as a stage (block units first); returns its units.
 * A batch without block units or chains is walked once.
 */
static uint32_t emit_group(struct fill_cursor *cur, const struct vyre_exec_batch *batch,
			   const struct vyre_cuda_heap *heaps, const uint32_t *cls, uint32_t g,
			   uint32_t *order_slot, struct vyre_cuda_item_state *st,
			   uint32_t *n_block_units)
{
	const struct vyre_exec_plan *p = &batch->plan;
	const uint32_t first = cur->unit, begin = begin_of(p->group_end, g);
	const int two_pass = cur->chained || cur->blocks;
	uint32_t blocks = 0;

	if (cur->chained)
		vyre_cuda_chain_resolve(batch, cls, st, begin, p->group_end[g]);
	for (uint32_t k = begin; two_pass && k < p->group_end[g]; k++) {
		const uint32_t c = cls[k];

		if (!(c & CLS_DEVICE)) {
			order_slot[k] = vyre_cuda_chain_host_slot(batch, st, p->order[k], c);
			continue;
		}
		if (!(c & CLS_BLOCK))
			continue;
		const uint32_t before = cur->unit;

		order_slot[k] = emit_item(cur, batch, p->order[k], c, heaps, st);
		blocks += cur->unit - before; /* a split DFA item: its parts; a run: its members */
	}
	*n_block_units = blocks;
	for (uint32_t k = begin; k < p->group_end[g]; k++) {
		const uint32_t c = cls[k];

		if (is_trivial(c, cur)) {
			emit_trivial(cur, &batch->items[p->order[k]], heaps);
			order_slot[k] = VYRE_CUDA_SLOT_OK;
		} else if (!(c & CLS_DEVICE)) {
			if (!two_pass)
				order_slot[k] =
				    vyre_cuda_chain_host_slot(batch, st, p->order[k], c);
		} else if (!(c & CLS_BLOCK)) {
			order_slot[k] = emit_item(cur, batch, p->order[k], c, heaps, st);
		}
	}
	return cur->unit - first;
}

void vyre_cuda_lower_fill(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
			  const uint32_t *cls, struct vyre_cuda_item_state *st,
			  const struct vyre_cuda_layout *lay, uint8_t *slab, uint32_t grid_max,
			  uint32_t *order_slot, struct vyre_cuda_launch *launches)
{
	const struct vyre_exec_plan *p = &batch->plan;
	/* the slab is page aligned and units_off is 0: units are naturally aligned */
	struct fill_cursor cur = {(struct vyre_mk_unit *)(slab + lay->units_off),
				  (struct vyre_mk_result *)(slab + lay->results_off),
				  0,
				  0,
				  lay->chained,
				  lay->blocks};
	struct vyre_mk_stage *stages = (struct vyre_mk_stage *)(slab + lay->stages_off);
	uint32_t stage = 0, launch = 0;

	for (uint32_t l = 0; l < p->n_launches; l++) {
		const uint32_t first_unit = cur.unit, first_stage = stage;
		uint32_t need = 1;

		for (uint32_t g = begin_of(p->launch_end, l); g < p->launch_end[l]; g++) {
			const uint32_t stage_first = cur.unit;
			uint32_t nb = 0;
			const uint32_t n =
			    emit_group(&cur, batch, heaps, cls, g, order_slot, st, &nb);

			if (n == 0)
				continue;
			const uint32_t nw = n - nb;
			const uint32_t nw_blocks = nw / VYRE_MK_WARPS + (nw % VYRE_MK_WARPS != 0);

			stages[stage++] =
			    (struct vyre_mk_stage){stage_first - first_unit, nb, nw, 0};
			need = nb > need ? nb : need;
			need = nw_blocks > need ? nw_blocks : need;
			const uint32_t join_first = cur.unit;
			const uint32_t nj = emit_joins(&cur, batch, heaps, cls, g, order_slot, st);

			if (nj)
				stages[stage++] =
				    (struct vyre_mk_stage){join_first - first_unit, nj, 0, 0};
			need = nj > need ? nj : need;
		}
		if (cur.unit == first_unit)
			continue;
		launches[launch++] = (struct vyre_cuda_launch){
		    .first_unit = first_unit,
		    .n_units = cur.unit - first_unit,
		    .first_stage = first_stage,
		    .n_stages = stage - first_stage,
		    .n_blocks = need < grid_max ? need : (grid_max ? grid_max : 1),
		    .flags = 0,
		};
	}
#ifdef __SSE2__
	/* store_unit's streaming stores are visible before the doorbell that follows */
	_mm_sfence();
#endif
}

int vyre_cuda_lower_immediate(const struct vyre_exec_batch *batch, const uint32_t *cls,
			      const struct vyre_cuda_layout *lay, struct vyre_cuda_immediate *imm)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint32_t n = 0, data, cpl = 0;

	/* one stage: the items are one plan group, independent of each other */
	if (lay->n_launches != 1 || lay->n_stages != 1 || lay->n_units == 0 ||
	    lay->n_units > VYRE_MK_IMM_MAX_ITEMS)
		return 0;
	/* every unit is an item (checked below), so n_units descriptors come first */
	data = lay->n_units * VYRE_MK_IMM_DESC_WORDS;
	for (uint32_t k = 0; k < p->n_order; k++) {
		const uint32_t c = cls[k];

		if (!(c & CLS_DEVICE))
			continue;
		/*
		 * a device buffer's bytes cannot travel in a doorbell from host memory;
		 * nor is a chain's record read there
		 */
		if ((c & (CLS_SEQUENTIAL | CLS_BLOCK | CLS_DEVMEM | CLS_AFTER)) ||
		    n == lay->n_units)
			return 0;
		const struct vyre_exec_item *it = &batch->items[p->order[k]];
		uint32_t count, in_words, out_words;

		/* the doorbell names one heap per item */
		if ((vyre_op_operands(it->op) & VYRE_OPERAND_IN) && it->in_heap != it->out_heap)
			return 0;

		switch (it->op) {
		case VYRE_OP_FILL:
			count = out_words = it->out_bytes / 4;
			in_words = 0;
			break;
		case VYRE_OP_COPY:
		case VYRE_OP_ADD:
		case VYRE_OP_XOR:
		case VYRE_OP_MUL:
			count = in_words = out_words = vyre_cuda_min_words(it);
			break;
		case VYRE_OP_SUM:
		case VYRE_OP_MAX:
			count = in_words = it->in_bytes / 4;
			out_words = 0;
			break;
		default:
			return 0;
		}
		/* data <= VYRE_MK_IMM_DATA_WORDS and cpl <= VYRE_MK_SLOT_WORDS hold throughout */
		if (in_words > VYRE_MK_IMM_DATA_WORDS - data || out_words > VYRE_MK_IMM_OUT_WORDS ||
		    VYRE_MK_CPL_HEADER_WORDS + out_words > VYRE_MK_SLOT_WORDS - cpl)
			return 0;
		imm->item[n++] = (struct vyre_cuda_imm_item){
		    .order_pos = k,
		    .heap = it->out_heap,
		    .op = it->op,
		    .param = it->param,
		    .count = count,
		    .in_words = in_words,
		    .in_at = VYRE_MK_HEADER_WORDS + data,
		    .cpl_at = cpl,
		    .in_off = it->in_off,
		    .out_off = it->out_off,
		};
		data += in_words;
		cpl += VYRE_MK_CPL_HEADER_WORDS + out_words;
	}
	if (n != lay->n_units)
		return 0;
	imm->modules = 0;
	imm->n_items = n;
	imm->data_words = data;
	imm->cpl_words = cpl;
	return 1;
}

/* The class of a module item that is one block unit with its one record, in any memory. */
#define CLS_MODULE_ONE (CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u)

int vyre_cuda_lower_module_imm(const struct vyre_exec_batch *batch, const uint32_t *cls,
			       const uint32_t *order_slot, const struct vyre_cuda_layout *lay,
			       struct vyre_cuda_immediate *imm)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint32_t n = 0;

	/* a chain's record would be read from the slab, which this launch never writes */
	if (lay->n_launches != 1 || lay->n_stages != 1 || lay->n_units == 0 ||
	    lay->n_units > VYRE_MK_INLINE_UNITS || lay->chained)
		return 0;
	for (uint32_t k = 0; k < p->n_order; k++) {
		const uint32_t c = cls[k];

		if (!(c & CLS_DEVICE))
			continue;
		if ((c & ~CLS_DEVMEM) != CLS_MODULE_ONE || n == lay->n_units)
			return 0;
		const uint32_t op = batch->items[p->order[k]].op;

		/*
		 * the device posts unit j's outcome at j: fill emitted the block units
		 * in order, each with the next record; a batch that is not so keeps
		 * the slab path
		 */
		if (!(op & VYRE_OP_MODULE_BIT) || order_slot[k] != n)
			return 0;
		imm->item[n] = (struct vyre_cuda_imm_item){
		    .order_pos = k,
		    .op = op,
		    .cpl_at = VYRE_MK_CPL_MODULE_WORDS * n,
		};
		n++;
	}
	if (n != lay->n_units)
		return 0;
	imm->modules = 1;
	imm->n_items = n;
	imm->data_words = n * VYRE_MK_UNIT_WORDS;
	imm->cpl_words = n * VYRE_MK_CPL_MODULE_WORDS;
	return 1;
}

void vyre_cuda_lower_results(const struct vyre_exec_batch *batch, const uint32_t *order_slot,
			     const struct vyre_mk_result *records)
{
	const struct vyre_exec_plan *p = &batch->plan;

	for (uint32_t k = 0; k < p->n_order; k++) {
		struct vyre_exec_result *r = &batch->results[p->order[k]];
		const uint32_t s = order_slot[k];

		r->reserved = 0;
		r->result = 0;
		if (s == VYRE_CUDA_SLOT_OK || s == VYRE_CUDA_SLOT_INVAL ||
		    s == VYRE_CUDA_SLOT_CANCELED) {
			r->status = s == VYRE_CUDA_SLOT_OK	? 0
				    : s == VYRE_CUDA_SLOT_INVAL ? VYRE_E_INVAL
								: VYRE_E_CANCELED;
		} else if (s & VYRE_CUDA_SLOT_FOLLOW) {
			/* the chain predecessor's outcome, in record s & RECORD, decides */
			r->status = records[s & VYRE_CUDA_SLOT_RECORD].status ? VYRE_E_CANCELED
				    : (s & VYRE_CUDA_SLOT_FOLLOW_INVAL)	      ? VYRE_E_INVAL
									      : 0;
		} else {
			r->status = records[s].status;
			r->result = records[s].result;
		}
	}
}

void vyre_cuda_fail_results(const struct vyre_exec_batch *batch, int32_t status)
{
	const struct vyre_exec_plan *p = &batch->plan;

	for (uint32_t k = 0; k < p->n_order; k++) {
		if (p->order[k] >= batch->n_items)
			continue;
		batch->results[p->order[k]].status = status;
		batch->results[p->order[k]].reserved = 0;
		batch->results[p->order[k]].result = 0;
	}
}
