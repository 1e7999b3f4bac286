/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/hazards.h - which buffers, and which bytes of them, the
 * batches in flight read and write.
 *
 * Batches in different backend slots run side by side in no set order, so
 * an item may enter a new batch only if it has no RAW, WAR or WAW hazard
 * with an item of a batch still in flight. Hazards are per buffer handle
 * and byte range (docs/design.md 8.6; a DFA table is a read of its whole
 * buffer): each handle keeps the span from the lowest to the highest byte
 * that in-flight items read, and that they write, and a range conflicts
 * when it meets a span it must not. An item without VYRE_SQE_RANGE names
 * [0, UINT64_MAX). A span only grows while items of it are in flight and is
 * emptied when its count drops to 0, so it always holds every byte in
 * flight (more, never less). Handles are unique across domains, so items
 * of different domains never conflict.
 *
 * The table counts readers and writers per handle slot (the low bits of a
 * handle); one array of --max-buffers + 1 entries allocated at start-up.
 * A slot counted here is never freed (control.c defers the free), so a
 * reused slot can never be confused with a running one. A handle that does
 * not resolve still maps to some slot: the check may then make its item
 * wait for a batch it has nothing to do with, never the other way round.
 * The ranges come from the SQE as submitted, before vyred checked them: a
 * bad one only makes its item wait, and the item then fails.
 */
#ifndef VYRED_HAZARDS_H
#define VYRED_HAZARDS_H

#include <stdint.h>

#include "../../gpu/ops.h"
#include "../../ring/handles.h"
#include "vyre/abi.h"

/* Bytes [lo, hi) of a buffer; empty when lo >= hi. */
struct vyre_hazard_span {
	uint64_t lo;
	uint64_t hi;
};

/*
 * A slot's counts, 16 bytes: every item takes and releases its buffers'
 * counts, so they stay small. Of its readers (writers), those whose operand
 * is a byte range widen the slot's span as well; the others name every
 * byte, and while one of those is in flight the span is not looked at.
 */
struct vyre_hazard_count {
	uint32_t readers;
	uint32_t writers;
	uint32_t ranged_readers; /* of the readers, those with a range */
	uint32_t ranged_writers;
};

/* What the ranged readers and writers of a slot name; only they touch it. */
struct vyre_hazard_spans {
	struct vyre_hazard_span read; /* empty when no ranged reader is in flight */
	struct vyre_hazard_span write;
};

struct vyre_hazards {
	struct vyre_hazard_count *slot;	 /* indexed by handle & VYRE_HANDLE_SLOT_MASK */
	struct vyre_hazard_spans *spans; /* the same slots */
	uint32_t n_slots;
};

int vyre_hazards_init(struct vyre_hazards *h, uint32_t max_buffers);
void vyre_hazards_fini(struct vyre_hazards *h);

/*
 * The counters of @handle, 0 for none. A domain adopted after a restart
 * keeps handles whose slots may lie past the table: they share counters
 * with others, which can only make an item wait, never miss a hazard.
 */
static inline uint32_t vyre_hazards_slot(const struct vyre_hazards *h, uint32_t handle)
{
	const uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	if (handle == 0)
		return 0;
	return s < h->n_slots ? s : 1 + s % (h->n_slots - 1);
}

/* vyre_hazards_conflict of an item with a byte range or a stream. */
int vyre_hazards_conflict_general(const struct vyre_hazards *h, const struct vyre_sqe *sqe);

/*
 * vyre_hazards_conflict of @sqe, whose op has the operand mask @mask. Most
 * items name no byte range and no stream: every operand is whole, and a
 * conflict is one test of the counts. Inline: the drain asks it of every
 * item it takes.
 */
static inline int vyre_hazards_conflict_mask(const struct vyre_hazards *h,
					     const struct vyre_sqe *sqe, int mask)
{
	const struct vyre_work_item *it = &sqe->item;
	uint32_t s;

	if (mask <= 0)
		return 0;
	if ((sqe->flags & VYRE_SQE_RANGE) || (mask & VYRE_OPERAND_AUX))
		return vyre_hazards_conflict_general(h, sqe);
	if ((mask & VYRE_OPERAND_IN) && (s = vyre_hazards_slot(h, it->input_handle)) &&
	    h->slot[s].writers)
		return 1;
	if ((mask & VYRE_OPERAND_TABLE) && (s = vyre_hazards_slot(h, it->param)) &&
	    h->slot[s].writers)
		return 1;
	return (mask & VYRE_OPERAND_OUT) && (s = vyre_hazards_slot(h, it->output_handle)) &&
	       (h->slot[s].readers | h->slot[s].writers);
}

/*
 * 1 when @sqe's item reads bytes an in-flight item writes, or writes bytes
 * one reads or writes.
 */
static inline int vyre_hazards_conflict(const struct vyre_hazards *h, const struct vyre_sqe *sqe)
{
	return vyre_hazards_conflict_mask(h, sqe, vyre_op_operands(sqe->item.op_handle));
}

/*
 * Start loading the count slots of @it's input and output: the drain is
 * the first of a batch to touch them, in a table of --max-buffers slots far
 * larger than the caches, and checks items VYRE_HAZARDS_AHEAD ahead of
 * these.
 */
#define VYRE_HAZARDS_AHEAD 8u

static inline void vyre_hazards_prefetch(const struct vyre_hazards *h,
					 const struct vyre_work_item *it)
{
	__builtin_prefetch(&h->slot[vyre_hazards_slot(h, it->input_handle)]);
	__builtin_prefetch(&h->slot[vyre_hazards_slot(h, it->output_handle)]);
}

/*
 * Of @n SQEs, the number before the first that vyre_hazards_conflict finds
 * in conflict (@n when none is).
 */
uint32_t vyre_hazards_free_prefix(const struct vyre_hazards *h, const struct vyre_sqe *sqes,
				  uint32_t n);

/*
 * A batch's counts as one record: what vyre_hazards_take_batch added, one
 * entry a count, which vyre_hazards_give_back takes off again. The finish
 * then reads neither the batch's SQEs (cold by then) nor their ops.
 *
 * A batch's items start and finish together, so a count held for the batch
 * covers every item of it that names the same handle the same way: a whole
 * operand (no byte range) equal to the same operand of the item before it
 * adds nothing (hundreds of scans of one table: one reader, not hundreds).
 * Ranged operands count per item, as their spans are widened per item.
 * An entry is slot << 2 | VYRE_HAZARD_WRITER | VYRE_HAZARD_RANGED; at most
 * VYRE_HAZARD_ENTRIES an item (the stream, two reads, the write).
 */
#define VYRE_HAZARD_WRITER  1u
#define VYRE_HAZARD_RANGED  2u
#define VYRE_HAZARD_ENTRIES 4u

/*
 * Count the reads and writes of each of @n SQEs whose @status is 0 as in
 * flight, into @taken (room for VYRE_HAZARD_ENTRIES * @n entries); returns
 * the entries written. @items and @flags are copies of the SQEs' item and
 * flags (VYRE_SQE_RANGE is what is looked at), read instead of the 64-byte
 * SQEs: only an item with a byte range or a stream reads its SQE.
 */
uint32_t vyre_hazards_take_batch(struct vyre_hazards *h, const struct vyre_work_item *items,
				 const uint32_t *flags, const struct vyre_sqe *sqes,
				 const int32_t *status, uint32_t n, uint32_t *taken);

/* Release the @n counts of @taken (vyre_hazards_take_batch). */
void vyre_hazards_give_back(struct vyre_hazards *h, const uint32_t *taken, uint32_t n);

/* 1 while an in-flight item uses @handle. */
int vyre_hazards_busy(const struct vyre_hazards *h, uint32_t handle);

#endif /* VYRED_HAZARDS_H */
