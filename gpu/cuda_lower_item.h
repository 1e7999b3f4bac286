/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_lower_item.h - one item of a batch in the CUDA lowering: the
 * heap and per-item types, the class of an order position (CLS_*), the
 * order slots, and the helpers that the chain rules (cuda_lower_chain.c)
 * and the batch layout (cuda_lower.c) share. Not an interface of its own:
 * cuda_lower.h is, and includes this.
 */
#ifndef VYRE_GPU_CUDA_LOWER_ITEM_H
#define VYRE_GPU_CUDA_LOWER_ITEM_H

#include <stdint.h>

#include "backend.h"
#include "cuda_abi.h"

/* A registered heap as the device sees it. */
struct vyre_cuda_heap {
	uint64_t dptr; /* device address of byte 0 */
	uint64_t bytes;
	int registered;
	int device; /* a device buffer (cuMemAlloc), not host memory */
};

/*
 * Per batch item, scratch of vyre_cuda_lower_measure and _fill (n_items
 * entries): the plan group it runs in, and what says whether it failed
 * (for the items after it in a chain: docs/design.md 6.3).
 */
struct vyre_cuda_item_state {
	uint32_t group;
	uint32_t src;
};

/* order_slot[k] for items that need no result record. */
#define VYRE_CUDA_SLOT_OK	0xffffffffu /* status 0, result 0 */
#define VYRE_CUDA_SLOT_INVAL	0xfffffffeu /* status VYRE_E_INVAL, result 0 */
#define VYRE_CUDA_SLOT_CANCELED 0xfffffffdu /* status VYRE_E_CANCELED, result 0 */
/*
 * order_slot[k] = FOLLOW | record r (r < 2^28, as the slab is at most 4 GiB):
 * an item that continues a chain whose predecessor's outcome record r holds
 * (non-zero status: it failed). VYRE_E_CANCELED, result 0 when it failed;
 * else status 0, or VYRE_E_INVAL with FOLLOW_INVAL (a statically invalid item).
 */
#define VYRE_CUDA_SLOT_FOLLOW	    0x80000000u
#define VYRE_CUDA_SLOT_FOLLOW_INVAL 0x40000000u
#define VYRE_CUDA_SLOT_RECORD	    0x0fffffffu

/*
 * The class of an order position, packed in 32 bits so a batch is checked
 * once and filled from a compact array: how many units it becomes and how
 * they run. An item that is not DEVICE completes on the host (0, INVAL or
 * CANCELED, or as its chain predecessor's record says).
 */
#define CLS_UNITS      0x000fffffu /* an item is at most 2^30 words: 2^19 chunks */
#define CLS_AFTER      (1u << 20)  /* its units check the chain predecessor's record first */
#define CLS_FUSED      (1u << 21)  /* heads an on-chip handoff run of CLS_UNITS members */
#define CLS_MEMBER     (1u << 22)  /* a later member of a run: its head's units run it */
#define CLS_CANCELED   (1u << 23)  /* its chain predecessor failed, as the host knows */
#define CLS_DEVICE     (1u << 24)
#define CLS_INVAL      (1u << 25)
#define CLS_BLOCK      (1u << 26) /* its unit runs on a whole block */
#define CLS_SEQUENTIAL (1u << 27) /* its unit runs on one thread with byte loads */
#define CLS_RESULT     (1u << 28) /* it produces a result record */
#define CLS_DEVMEM     (1u << 29) /* an operand is a device buffer, not in host memory */
#define CLS_SPLIT      (1u << 30) /* a DFA item in parts (block units) and a join */
#define CLS_BAD	       (1u << 31) /* not a class: the plan breaks the chain rules */

/*
 * struct vyre_cuda_item_state.src: what says whether an item failed, for
 * the items after it in its chain. Below VYRE_CUDA_SRC_FIRST: a result
 * record whose status is non-zero exactly when the item failed.
 */
#define VYRE_CUDA_SRC_FIRST  0xfffffff0u
#define VYRE_CUDA_SRC_OK     0xfffffff0u /* status 0, known on the host */
#define VYRE_CUDA_SRC_FAIL   0xfffffff1u /* non-zero, known on the host */
#define VYRE_CUDA_SRC_OWN    0xfffffff2u /* its own record (slot given by fill) */
#define VYRE_CUDA_SRC_FOLLOW 0xfffffff3u /* fails when its predecessor fails: that one's */
/* struct vyre_cuda_item_state.group */
#define VYRE_CUDA_GROUP_NONE	0xffffffffu /* not lowered (yet) */
#define VYRE_CUDA_GROUP_PENDING (1u << 31)  /* a run member whose own place is yet to come */

struct fill_cursor {
	struct vyre_mk_unit *units;
	struct vyre_mk_result *records; /* a report item's: its stream until it runs */
	uint32_t unit, result;
	uint32_t chained; /* vyre_cuda_layout.chained */
	uint32_t blocks;  /* vyre_cuda_layout.blocks */
};

/*
 * How a DFA item that scans up to @bytes bytes is split for a launch on
 * @blocks blocks: *parts parts of *part_bytes bytes (a multiple of 16; the
 * last part gets the rest), at most VYRE_MK_DFA_MAX_PARTS, one a block or a
 * multiple of @blocks when a block's share exceeds VYRE_MK_DFA_PART_MAX, and
 * none below VYRE_MK_DFA_PART_MIN. *parts is 1 (no split) up to
 * VYRE_MK_DFA_BLOCK_BYTES or with fewer than 2 blocks.
 */
void vyre_cuda_dfa_split(uint32_t bytes, uint32_t blocks, uint32_t *parts, uint32_t *part_bytes);

/*
 * A report item's record (slot) holds its stream buffer's device address (0:
 * none) until the unit writes its outcome there: the unit has no field left
 * for a fourth operand (gpu/mk_report.cuh reads it first). No-op for
 * other items.
 */
void vyre_cuda_report_prefill(const struct fill_cursor *cur, const struct vyre_exec_item *it,
			      const struct vyre_cuda_heap *heaps, uint32_t slot);

/* The unit of a result item of class @c (a split DFA item: its join). */
struct vyre_mk_unit vyre_cuda_result_unit(const struct vyre_exec_item *it, uint32_t c,
					  const struct vyre_cuda_heap *heaps, uint32_t slot);

/*
 * Small helpers on the per-unit path of measure and fill: inline, as the
 * build has no link-time optimization.
 */
static inline uint32_t vyre_cuda_min_words(const struct vyre_exec_item *it)
{
	return it->in_bytes < it->out_bytes ? it->in_bytes / 4 : it->out_bytes / 4;
}

/* Words an elementwise item writes. */
static inline uint32_t vyre_cuda_elementwise_words(const struct vyre_exec_item *it)
{
	return it->op == VYRE_OP_FILL ? it->out_bytes / 4 : vyre_cuda_min_words(it);
}

/* Bytes a DFA item of @parts parts gives each (the last one may get fewer). */
static inline uint32_t vyre_cuda_dfa_part_bytes(uint32_t bytes, uint32_t parts)
{
	const uint64_t per = ((uint64_t)bytes + parts - 1) / parts;

	return (uint32_t)((per + 15) & ~(uint64_t)15);
}

/* The bytes a DFA item scans at most: DFA_SCAN_COUNTED's length word is not scanned. */
static inline uint32_t vyre_cuda_dfa_scan_bytes(const struct vyre_exec_item *it)
{
	return it->in_bytes - (it->op == VYRE_OP_DFA_SCAN_COUNTED ? 4u : 0u);
}

/* The device address of an operand classify accepted; 0 when the op does not use it. */
static inline uint64_t vyre_cuda_operand_addr(const struct vyre_cuda_heap *heaps, int used,
					      uint32_t heap, uint64_t off)
{
	return used ? heaps[heap].dptr + off : 0;
}

/*
 * How an item runs (its class): called for every item of a batch by the
 * layout and the chain rules, so inline (no link-time optimization).
 */
static inline int range_ok(const struct vyre_cuda_heap *h, uint64_t off, uint32_t bytes)
{
	return off <= h->bytes && bytes <= h->bytes - off;
}

static inline uint32_t chunks(uint32_t words)
{
	return words / VYRE_MK_CHUNK_WORDS + (words % VYRE_MK_CHUNK_WORDS != 0);
}

/* [a, a+bytes) and [b, b+bytes) share a byte without being the same range. */
static inline int partial_overlap(uint64_t a, uint64_t b, uint64_t bytes)
{
	return a != b && a < b + bytes && b < a + bytes;
}

/* How a DFA item runs: a warp, a block, or parts and a join. */
static inline uint32_t classify_dfa(const struct vyre_exec_item *it, uint64_t addresses,
				    uint32_t split_blocks)
{
	uint32_t parts, part_bytes;

	if (it->op == VYRE_OP_DFA_SCAN_COUNTED && it->in_bytes < 4)
		return CLS_INVAL;
	if (addresses & 3u)
		return CLS_DEVICE | CLS_RESULT | CLS_SEQUENTIAL | 1u;
	if (vyre_cuda_dfa_scan_bytes(it) <= VYRE_MK_DFA_WARP_BYTES)
		return CLS_DEVICE | CLS_RESULT | 1u;
	vyre_cuda_dfa_split(vyre_cuda_dfa_scan_bytes(it), split_blocks, &parts, &part_bytes);
	if (parts < 2)
		return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u;
	/* parts + 1 units and result records: the join's is the item's */
	return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | CLS_SPLIT | (parts + 1);
}

/*
 * The device address of an operand (0 when the op does not use it): 0 when
 * its heap is not registered or the range leaves it. *devmem gets
 * CLS_DEVMEM when the heap is a device buffer.
 */
static inline int operand(const struct vyre_cuda_heap *heaps, uint32_t n_heaps, int used,
			  uint32_t heap, uint64_t off, uint32_t bytes, uint64_t *dptr,
			  uint32_t *devmem)
{
	*dptr = 0;
	if (!used)
		return 1;
	if (heap >= n_heaps || !heaps[heap].registered)
		return 0;
	const struct vyre_cuda_heap *h = &heaps[heap];

	if (h->dptr > UINT64_MAX - h->bytes || !range_ok(h, off, bytes))
		return 0;
	*dptr = h->dptr + off;
	*devmem |= h->device ? CLS_DEVMEM : 0u;
	return 1;
}

static inline int vyre_cuda_is_report(uint32_t op)
{
	return op == VYRE_OP_DFA_REPORT || op == VYRE_OP_DFA_REPORT_COUNTED;
}

/* Two ranges of device addresses share a byte. */
static inline int ranges_meet(uint64_t a, uint64_t a_bytes, uint64_t b, uint64_t b_bytes)
{
	return a_bytes && b_bytes && a < b + b_bytes && b < a + a_bytes;
}

/*
 * DFA_REPORT and DFA_REPORT_COUNTED (design.md 6.8): operands in, out,
 * table and the stream when aux_bytes is not 0; an output of at least a
 * report header, a stream of at least its state, and no two of out, in,
 * table and stream sharing a byte (the stream may not share one with any).
 * One unit of any alignment (gpu/mk_report.cuh), never split: a warp's when
 * it scans at most VYRE_MK_DFA_WARP_BYTES, as a DFA_SCAN item, else a
 * block's (a handoff run's member runs on the run's block either way).
 */
static inline uint32_t classify_report(const struct vyre_exec_item *it,
				       const struct vyre_cuda_heap *heaps, uint32_t n_heaps,
				       uint32_t *devmem)
{
	uint64_t in, out, table, aux;

	if ((it->in_bytes | it->out_bytes | it->table_bytes) & 3u)
		return CLS_INVAL;
	if (!operand(heaps, n_heaps, 1, it->in_heap, it->in_off, it->in_bytes, &in, devmem) ||
	    !operand(heaps, n_heaps, 1, it->out_heap, it->out_off, it->out_bytes, &out, devmem) ||
	    !operand(heaps, n_heaps, 1, it->table_heap, it->table_off, it->table_bytes, &table,
		     devmem) ||
	    !operand(heaps, n_heaps, it->aux_bytes != 0, it->aux_heap, it->aux_off, it->aux_bytes,
		     &aux, devmem))
		return CLS_INVAL;
	if (it->out_bytes < 16 || (it->op == VYRE_OP_DFA_REPORT_COUNTED && it->in_bytes < 4) ||
	    (it->aux_bytes != 0 && it->aux_bytes < 16))
		return CLS_INVAL;
	if (ranges_meet(in, it->in_bytes, out, it->out_bytes) ||
	    ranges_meet(table, it->table_bytes, out, it->out_bytes) ||
	    ranges_meet(aux, it->aux_bytes, in, it->in_bytes) ||
	    ranges_meet(aux, it->aux_bytes, out, it->out_bytes) ||
	    ranges_meet(aux, it->aux_bytes, table, it->table_bytes))
		return CLS_INVAL;
	if (it->in_bytes - (it->op == VYRE_OP_DFA_REPORT_COUNTED ? 4u : 0u) <=
	    VYRE_MK_DFA_WARP_BYTES)
		return CLS_DEVICE | CLS_RESULT | 1u;
	return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u;
}

/* The static checks of vyre_exec_one, then how the item runs. */
static inline uint32_t classify_ops(const struct vyre_exec_item *it,
				    const struct vyre_cuda_heap *heaps, uint32_t n_heaps,
				    uint32_t split_blocks, uint32_t *devmem)
{
	const int mask = vyre_op_operands(it->op);
	uint64_t in, out, table;

	if (vyre_cuda_is_report(it->op))
		return classify_report(it, heaps, n_heaps, devmem);
	if (mask < 0 || ((it->in_bytes | it->out_bytes | it->table_bytes) & 3u))
		return CLS_INVAL;
	/* a module op runs only with its device code linked in (gpu/cuda_modules.c) */
	if (it->op >= VYRE_OP_COUNT) {
		const struct vyre_op_module_entry *m = vyre_op_module(it->op);

		if (!m || !m->device_fn)
			return CLS_INVAL;
	}
	if (!operand(heaps, n_heaps, mask & VYRE_OPERAND_IN, it->in_heap, it->in_off, it->in_bytes,
		     &in, devmem) ||
	    !operand(heaps, n_heaps, mask & VYRE_OPERAND_OUT, it->out_heap, it->out_off,
		     it->out_bytes, &out, devmem) ||
	    !operand(heaps, n_heaps, mask & VYRE_OPERAND_TABLE, it->table_heap, it->table_off,
		     it->table_bytes, &table, devmem))
		return CLS_INVAL;
	if ((mask & (VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED)) && it->out_bytes < 4)
		return CLS_INVAL;
	if ((mask & VYRE_OPERAND_COUNTED) && it->in_bytes < 4)
		return CLS_INVAL;

	uint32_t words;

	if (it->op & VYRE_OP_MODULE_BIT) {
		/* a block an item (op_module.h); a partial overlap is the oracle's INVAL */
		if (in && out && in != out && in < out + it->out_bytes && out < in + it->in_bytes)
			return CLS_INVAL;
		return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u;
	}
	switch (it->op) {
	case VYRE_OP_FILL:
		words = it->out_bytes / 4;
		if (words == 0)
			return 0;
		return (out & 3u) ? CLS_DEVICE | CLS_SEQUENTIAL | 1u : CLS_DEVICE | chunks(words);
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		words = vyre_cuda_min_words(it);
		if (words == 0)
			return 0;
		if (((in | out) & 3u) || partial_overlap(in, out, 4 * (uint64_t)words))
			return CLS_DEVICE | CLS_SEQUENTIAL | 1u;
		return CLS_DEVICE | chunks(words);
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
		if ((in | out) & 3u)
			return CLS_DEVICE | CLS_RESULT | CLS_SEQUENTIAL | 1u;
		return CLS_DEVICE | CLS_RESULT | 1u |
		       (it->in_bytes / 4 > VYRE_MK_WARP_REDUCE_WORDS ? CLS_BLOCK : 0u);
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED:
		return classify_dfa(it, in | out | table, split_blocks);
	case VYRE_OP_BASE64_DECODE:
	case VYRE_OP_HEX_DECODE:
	case VYRE_OP_BYTEMAP:
		/* gpu/mk_decode.cuh, aligned or not; a partial overlap is the oracle's INVAL */
		if (in != out && in < out + it->out_bytes && out < in + it->in_bytes)
			return CLS_INVAL;
		return CLS_DEVICE | CLS_RESULT | CLS_BLOCK | 1u;
	default:
		return 0; /* NOP */
	}
}

/* The static checks of vyre_exec_one, then how @it runs (CLS_*), marking device items that touch a
 * device buffer. */
static inline uint32_t vyre_cuda_classify(const struct vyre_exec_item *it,
					  const struct vyre_cuda_heap *heaps, uint32_t n_heaps,
					  uint32_t split_blocks)
{
	uint32_t devmem = 0;
	const uint32_t c = classify_ops(it, heaps, n_heaps, split_blocks, &devmem);

	return (c & CLS_DEVICE) ? c | devmem : c;
}

#endif /* VYRE_GPU_CUDA_LOWER_ITEM_H */
