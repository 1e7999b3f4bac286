/* SPDX-License-Identifier: MIT */
/* Lowering a planned batch to megakernel units (see cuda_lower.h). */
#include "cuda_lower.h"

#include <string.h>

enum item_kind {
	ITEM_OK,    /* completes with status 0 and no device work */
	ITEM_INVAL, /* fails the static checks of vyre_exec_one */
	ITEM_DEVICE,
};

struct item_class {
	enum item_kind kind;
	uint32_t n_units;
	uint32_t words; /* elementwise: words written */
	int block;	/* its unit runs on a whole block */
	int sequential; /* its unit runs on one thread with byte loads */
	int result;	/* it produces a result record */
	uint64_t in, out, table;
};

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

static void classify(const struct vyre_exec_item *it, const struct vyre_cuda_heap *heaps,
		     uint32_t n_heaps, struct item_class *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = ITEM_INVAL;
	if (it->heap >= n_heaps || !heaps[it->heap].registered)
		return;
	const struct vyre_cuda_heap *h = &heaps[it->heap];
	int mask = vyre_op_operands(it->op);

	if (mask < 0 || ((it->in_bytes | it->out_bytes | it->table_bytes) & 3u))
		return;
	if (h->dptr > UINT64_MAX - h->bytes || !range_ok(h, it->in_off, it->in_bytes) ||
	    !range_ok(h, it->out_off, it->out_bytes) ||
	    !range_ok(h, it->table_off, it->table_bytes))
		return;
	if ((mask & VYRE_OPERAND_WORD0) && it->out_bytes < 4)
		return;

	const uint32_t in_words = it->in_bytes / 4, out_words = it->out_bytes / 4;
	const uint32_t n = in_words < out_words ? in_words : out_words;

	c->kind = ITEM_OK;
	c->in = h->dptr + it->in_off;
	c->out = h->dptr + it->out_off;
	c->table = h->dptr + it->table_off;
	c->n_units = 1;
	switch (it->op) {
	case VYRE_OP_FILL:
		if (out_words == 0)
			break;
		c->kind = ITEM_DEVICE;
		c->words = out_words;
		c->sequential = (c->out & 3u) != 0;
		break;
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		if (n == 0)
			break;
		c->kind = ITEM_DEVICE;
		c->words = n;
		c->sequential =
		    ((c->in | c->out) & 3u) != 0 || partial_overlap(c->in, c->out, 4 * (uint64_t)n);
		break;
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
		c->kind = ITEM_DEVICE;
		c->result = 1;
		c->sequential = ((c->in | c->out) & 3u) != 0;
		c->block = !c->sequential && in_words > VYRE_MK_WARP_REDUCE_WORDS;
		break;
	case VYRE_OP_DFA_SCAN:
		c->kind = ITEM_DEVICE;
		c->result = 1;
		c->sequential = ((c->in | c->out | c->table) & 3u) != 0;
		c->block = !c->sequential;
		break;
	default:
		break;
	}
	if (c->kind == ITEM_DEVICE && c->words && !c->sequential)
		c->n_units = chunks(c->words);
	if (c->kind != ITEM_DEVICE)
		c->n_units = 0;
}

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

int vyre_cuda_lower_measure(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
			    uint32_t n_heaps, struct vyre_cuda_layout *lay)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint64_t units = 0, stages = 0, results = 0, launches = 0;
	struct item_class c;

	memset(lay, 0, sizeof(*lay));
	if (check_plan(batch) != 0)
		return VYRE_E_INVAL;
	for (uint32_t l = 0; l < p->n_launches; l++) {
		uint64_t launch_units = 0;

		for (uint32_t g = begin_of(p->launch_end, l); g < p->launch_end[l]; g++) {
			uint64_t group_units = 0;

			for (uint32_t k = begin_of(p->group_end, g); k < p->group_end[g]; k++) {
				classify(&batch->items[p->order[k]], heaps, n_heaps, &c);
				group_units += c.n_units;
				results += c.result;
			}
			stages += group_units != 0;
			launch_units += group_units;
		}
		launches += launch_units != 0;
		units += launch_units;
	}
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
	return 0;
}

struct fill_cursor {
	uint8_t *units;
	uint32_t unit, result;
};

static void put_unit(struct fill_cursor *cur, const struct vyre_mk_unit *u)
{
	memcpy(cur->units + (uint64_t)cur->unit * sizeof(*u), u, sizeof(*u));
	cur->unit++;
}

/* Emits the units of one device item; returns its order slot. */
static uint32_t emit_item(struct fill_cursor *cur, const struct vyre_exec_item *it,
			  const struct item_class *c)
{
	struct vyre_mk_unit u;

	memset(&u, 0, sizeof(u));
	u.op = it->op | (c->sequential ? VYRE_MK_SEQUENTIAL : 0u);
	u.param = it->param;
	u.in = c->in;
	u.out = c->out;
	u.table = c->table;
	if (c->result) {
		u.slot = cur->result++;
		u.count = it->op == VYRE_OP_DFA_SCAN ? it->in_bytes : it->in_bytes / 4;
		u.aux = it->op == VYRE_OP_DFA_SCAN ? it->table_bytes : 0;
		put_unit(cur, &u);
		return u.slot;
	}
	if (c->sequential) {
		u.count = c->words;
		put_unit(cur, &u);
		return VYRE_CUDA_SLOT_OK;
	}
	for (uint32_t i = 0; i < c->n_units; i++) {
		uint64_t first = (uint64_t)i * VYRE_MK_CHUNK_WORDS;
		uint64_t left = c->words - first;

		u.count = left < VYRE_MK_CHUNK_WORDS ? (uint32_t)left : VYRE_MK_CHUNK_WORDS;
		u.in = c->in + 4 * first;
		u.out = c->out + 4 * first;
		put_unit(cur, &u);
	}
	return VYRE_CUDA_SLOT_OK;
}

/* Emits one plan group as a stage (block units first); returns its units. */
static uint32_t emit_group(struct fill_cursor *cur, const struct vyre_exec_batch *batch,
			   const struct vyre_cuda_heap *heaps, uint32_t n_heaps, uint32_t g,
			   uint32_t *order_slot, uint32_t *n_block_units)
{
	const struct vyre_exec_plan *p = &batch->plan;
	const uint32_t first = cur->unit;
	struct item_class c;

	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = begin_of(p->group_end, g); k < p->group_end[g]; k++) {
			const struct vyre_exec_item *it = &batch->items[p->order[k]];

			classify(it, heaps, n_heaps, &c);
			if (c.kind != ITEM_DEVICE) {
				order_slot[k] =
				    c.kind == ITEM_OK ? VYRE_CUDA_SLOT_OK : VYRE_CUDA_SLOT_INVAL;
				continue;
			}
			if (c.block == (pass == 0))
				order_slot[k] = emit_item(cur, it, &c);
		}
		if (pass == 0)
			*n_block_units = cur->unit - first;
	}
	return cur->unit - first;
}

void vyre_cuda_lower_fill(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
			  uint32_t n_heaps, const struct vyre_cuda_layout *lay, uint8_t *slab,
			  uint32_t grid_max, uint32_t *order_slot,
			  struct vyre_cuda_launch *launches)
{
	const struct vyre_exec_plan *p = &batch->plan;
	struct fill_cursor cur = {slab + lay->units_off, 0, 0};
	uint8_t *stages = slab + lay->stages_off;
	uint32_t stage = 0, launch = 0;

	for (uint32_t l = 0; l < p->n_launches; l++) {
		const uint32_t first_unit = cur.unit, first_stage = stage;
		uint32_t need = 1;

		for (uint32_t g = begin_of(p->launch_end, l); g < p->launch_end[l]; g++) {
			const uint32_t stage_first = cur.unit;
			uint32_t nb = 0;
			const uint32_t n =
			    emit_group(&cur, batch, heaps, n_heaps, g, order_slot, &nb);

			if (n == 0)
				continue;
			struct vyre_mk_stage st = {stage_first - first_unit, nb, n - nb, 0};
			const uint32_t nw_blocks =
			    (n - nb) / VYRE_MK_WARPS + ((n - nb) % VYRE_MK_WARPS != 0);

			memcpy(stages + (uint64_t)stage * sizeof(st), &st, sizeof(st));
			stage++;
			need = nb > need ? nb : need;
			need = nw_blocks > need ? nw_blocks : need;
		}
		if (cur.unit == first_unit)
			continue;
		launches[launch].first_unit = first_unit;
		launches[launch].n_units = cur.unit - first_unit;
		launches[launch].first_stage = first_stage;
		launches[launch].n_stages = stage - first_stage;
		launches[launch].n_blocks = need < grid_max ? need : (grid_max ? grid_max : 1);
		launches[launch].flags = 0;
		launch++;
	}
}

void vyre_cuda_lower_results(const struct vyre_exec_batch *batch, const uint32_t *order_slot,
			     const struct vyre_mk_result *records)
{
	const struct vyre_exec_plan *p = &batch->plan;

	for (uint32_t k = 0; k < p->n_order; k++) {
		struct vyre_exec_result *r = &batch->results[p->order[k]];
		const uint32_t s = order_slot[k];

		r->reserved = 0;
		if (s == VYRE_CUDA_SLOT_OK || s == VYRE_CUDA_SLOT_INVAL) {
			r->status = s == VYRE_CUDA_SLOT_OK ? 0 : VYRE_E_INVAL;
			r->result = 0;
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
