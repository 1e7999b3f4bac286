/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/disjoint.h - the plan of a batch whose items share no written
 * buffer, found without the planner.
 *
 * When no item of a batch writes a buffer that another item of it reads or
 * writes, and none is chained or names a byte range, the planner has
 * nothing to do: no item can be deduplicated (identical items would share
 * their output), no edge orders two of them, so the plan is one group and
 * one launch of every valid item in batch order, as long as their bytes fit
 * the group budget. Large batches of independent small items (one client
 * filling its own buffers, many clients each writing their own) are the
 * common case under load, and the planner spent most of vyred's CPU on
 * them (docs/fastpath.md).
 *
 * The check is one linear pass with stamps a handle slot, made by the
 * resolve stage as it resolves each item (vyre_disjoint_add): its reads
 * against the writes of the items before it, its write against their reads
 * and writes. The plan stage then only asks for the verdict
 * (vyre_disjoint_finish): the batch's arrays are not walked again. Writes
 * and reads are recorded per handle slot (the low bits of a handle), so
 * two live buffers whose handles share a slot, which only adopted domains'
 * aliases can, look like one buffer: the batch then goes to the planner,
 * never the other way round. One array of --max-buffers + 1 entries,
 * allocated at start-up.
 */
#ifndef VYRED_DISJOINT_H
#define VYRED_DISJOINT_H

#include <stdint.h>

#include "../../gpu/ops.h"
#include "../../ring/handles.h"

/* Batches of at most this many items are checked pair by pair instead (plan_wrap.c). */
#define VYRE_SMALL_PLAN_ITEMS 8u

/*
 * 16 bytes a slot. Which item wrote the slot is not kept: an item's reads
 * are added before its write, so a write of the batch that a read finds
 * is always an earlier item's.
 */
struct vyre_disjoint_mark {
	uint32_t stamp;	  /* the batch that wrote the slot, 0: none */
	uint32_t counted; /* the batch that counted the slot's table bytes, 0: none */
	uint32_t read;	  /* the batch that read the slot, 0: none */
	uint32_t reader;  /* the first of its items that did */
};

struct vyre_disjoint {
	struct vyre_disjoint_mark *mark; /* handle slot -> what the current batch did with it */
	uint32_t n_slots;
	uint32_t stamp;
	/* the batch being added (vyre_disjoint_begin) */
	uint32_t *order; /* its valid items, in batch order */
	uint32_t k;	 /* how many */
	int planner;	 /* it needs the planner, whatever comes after */
	uint64_t bytes;	 /* what its valid items touch so far */
};

int vyre_disjoint_init(struct vyre_disjoint *t, uint32_t max_buffers);
void vyre_disjoint_fini(struct vyre_disjoint *t);

/* A new batch, whose valid items go to @order (room for all of them). */
void vyre_disjoint_begin(struct vyre_disjoint *t, uint32_t *order);

/* The slot @handle is recorded in, or 0 when it cannot be told. */
static inline uint32_t vyre_disjoint_slot(const struct vyre_disjoint *t, uint32_t handle)
{
	const uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	return s < t->n_slots ? s : 0;
}

/* Start loading @handle's slot: the resolve stage asks for those of items some way ahead. */
static inline void vyre_disjoint_prefetch(const struct vyre_disjoint *t, uint32_t handle)
{
	__builtin_prefetch(&t->mark[vyre_disjoint_slot(t, handle)], 1);
}

/*
 * Item @i reads @handle: 1 when an earlier item of the batch wrote it (or
 * its slot cannot be told), else recorded for the later writers.
 */
static inline int vyre_disjoint_read(struct vyre_disjoint *t, uint32_t handle, uint32_t i)
{
	const uint32_t s = vyre_disjoint_slot(t, handle);
	struct vyre_disjoint_mark *m = &t->mark[s];

	if (s == 0 || m->stamp == t->stamp)
		return 1;
	/* the first reader is enough: a later writer is after every reader seen so far */
	if (m->read != t->stamp) {
		m->read = t->stamp;
		m->reader = i;
	}
	return 0;
}

/*
 * Item @i writes @handle: 1 when an earlier item of the batch wrote it or
 * an earlier item read it (or its slot cannot be told), else recorded. Its
 * own read of it (an in-place ADD) is none: it reads before it writes.
 */
static inline int vyre_disjoint_write(struct vyre_disjoint *t, uint32_t handle, uint32_t i)
{
	const uint32_t s = vyre_disjoint_slot(t, handle);
	struct vyre_disjoint_mark *m = &t->mark[s];

	if (s == 0 || m->stamp == t->stamp || (m->read == t->stamp && m->reader != i))
		return 1;
	m->stamp = t->stamp;
	return 0;
}

/*
 * @bytes of an item's table the first time the batch reads it, 0 after: a
 * DFA table read by hundreds of scans is one buffer on the device, and
 * charging it per item sent such batches to the planner. A table whose
 * slot cannot be told (0) is charged every time.
 */
static inline uint64_t vyre_disjoint_table_bytes(struct vyre_disjoint *t, int mask, uint32_t table,
						 uint32_t bytes)
{
	if (mask <= 0 || !(mask & VYRE_OPERAND_TABLE))
		return bytes;
	const uint32_t s = vyre_disjoint_slot(t, table);

	if (s == 0)
		return bytes;
	if (t->mark[s].counted == t->stamp)
		return 0;
	t->mark[s].counted = t->stamp;
	return bytes;
}

/*
 * Item @i of the batch, valid (its status 0), added in batch order: @it its
 * work item, @x its resolved exec item, @flags its SQE flags, @stream not 0
 * when it has a stream (a resolved item's x->aux_bytes, or vyred's b->aux,
 * known before its exec item is read back). A chained or ranged item, or
 * one with a stream (design.md 6.8: a second written buffer), sends the
 * batch to the planner, as does a read or write that meets another item's
 * write.
 */
static inline void vyre_disjoint_add(struct vyre_disjoint *t, uint32_t i,
				     const struct vyre_work_item *it,
				     const struct vyre_exec_item *x, uint32_t flags,
				     uint32_t stream)
{
	if (t->planner)
		return;
	if ((flags & (VYRE_SQE_CHAIN | VYRE_SQE_RANGE)) || stream) {
		t->planner = 1;
		return;
	}
	const int mask = vyre_op_operands(it->op_handle);

	/* three u32 sizes an item, fewer than 2^32 items: no u64 overflow */
	t->bytes += (uint64_t)x->in_bytes + x->out_bytes;
	t->bytes += vyre_disjoint_table_bytes(t, mask, it->param, x->table_bytes);
	if (mask > 0 &&
	    (((mask & VYRE_OPERAND_IN) && vyre_disjoint_read(t, it->input_handle, i)) ||
	     ((mask & VYRE_OPERAND_TABLE) && vyre_disjoint_read(t, it->param, i)) ||
	     ((mask & VYRE_OPERAND_OUT) && vyre_disjoint_write(t, it->output_handle, i)))) {
		t->planner = 1;
		return;
	}
	t->order[t->k++] = i;
}

/*
 * The batch added since vyre_disjoint_begin: how many valid items it
 * wrote to its order when they share no written buffer, carry neither
 * VYRE_SQE_CHAIN nor VYRE_SQE_RANGE and touch at most @budget bytes
 * together (a table read by several items counts once, as the planner
 * counts it). -1 when the batch needs the planner.
 */
int64_t vyre_disjoint_finish(const struct vyre_disjoint *t, uint64_t budget);

/*
 * The same for items i < @n with status[i] == 0, added at once: their
 * order into @order.
 */
int64_t vyre_disjoint_order(struct vyre_disjoint *t, uint32_t n, const struct vyre_work_item *items,
			    const struct vyre_exec_item *exec, const int32_t *status,
			    const uint32_t *flags, uint64_t budget, uint32_t *order);

#endif /* VYRED_DISJOINT_H */
