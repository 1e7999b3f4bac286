/* SPDX-License-Identifier: MIT */
/* Whether a batch's items share no written buffer, and their plan then (disjoint.h). */
#include <stdlib.h>
#include <string.h>

#include "../../ring/handles.h"
#include "disjoint.h"

int vyre_disjoint_init(struct vyre_disjoint *t, uint32_t max_buffers)
{
	/* slots run from 1 to max_buffers at most, plus the unused slot 0 */
	t->n_slots = max_buffers > VYRE_HANDLES_MAX ? VYRE_HANDLES_MAX + 1 : max_buffers + 1;
	t->mark = calloc(t->n_slots, sizeof(*t->mark));
	t->stamp = 0;
	return t->mark ? 0 : VYRE_E_NOMEM;
}

void vyre_disjoint_fini(struct vyre_disjoint *t)
{
	free(t->mark);
	t->mark = NULL;
	t->n_slots = 0;
}

/* The slot @handle's writes are recorded in, or 0 when it has none. */
static uint32_t slot_of(const struct vyre_disjoint *t, uint32_t handle)
{
	const uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	return s < t->n_slots ? s : 0;
}

/* A stamp no slot holds yet. */
static uint32_t next_stamp(struct vyre_disjoint *t)
{
	if (++t->stamp == 0) {
		memset(t->mark, 0, (size_t)t->n_slots * sizeof(*t->mark));
		t->stamp = 1;
	}
	return t->stamp;
}

/* 1 when item @i reads @handle, which another item of the batch writes (or it cannot tell). */
static int read_conflicts(const struct vyre_disjoint *t, uint32_t stamp, uint32_t handle,
			  uint32_t i)
{
	const uint32_t s = slot_of(t, handle);

	return s == 0 || (t->mark[s].stamp == stamp && t->mark[s].writer != i);
}

/*
 * @bytes of an item's table the first time the batch stamped @stamp reads
 * it, 0 after: a DFA table read by hundreds of scans is one buffer on the
 * device, and charging it per item sent such batches to the planner. A
 * table whose slot cannot be told (0) is charged every time.
 */
static uint64_t table_bytes_once(struct vyre_disjoint *t, uint32_t stamp, int mask, uint32_t table,
				 uint32_t bytes)
{
	if (mask <= 0 || !(mask & VYRE_OPERAND_TABLE))
		return bytes;
	const uint32_t s = slot_of(t, table);

	if (s == 0)
		return bytes;
	if (t->mark[s].counted == stamp)
		return 0;
	t->mark[s].counted = stamp;
	return bytes;
}

int64_t vyre_disjoint_order(struct vyre_disjoint *t, uint32_t n, const struct vyre_work_item *items,
			    const struct vyre_exec_item *exec, const int32_t *status,
			    const uint32_t *flags, uint64_t budget, uint32_t *order)
{
	const uint32_t stamp = next_stamp(t);
	uint64_t bytes = 0;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (status[i] != 0)
			continue;
		/* a stream (design.md 6.8) is a second written buffer: the planner orders those */
		if ((flags[i] & (VYRE_SQE_CHAIN | VYRE_SQE_RANGE)) || exec[i].aux_bytes)
			return -1;
		const int mask = vyre_op_operands(items[i].op_handle);

		/* three u32 sizes an item, n < 2^32 items: no u64 overflow */
		bytes += (uint64_t)exec[i].in_bytes + exec[i].out_bytes;
		bytes += table_bytes_once(t, stamp, mask, items[i].param, exec[i].table_bytes);

		if (mask <= 0 || !(mask & VYRE_OPERAND_OUT))
			continue;
		const uint32_t s = slot_of(t, items[i].output_handle);

		if (s == 0 || t->mark[s].stamp == stamp)
			return -1;
		t->mark[s].stamp = stamp;
		t->mark[s].writer = i;
	}
	if (bytes > budget)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		if (status[i] != 0)
			continue;
		const int mask = vyre_op_operands(items[i].op_handle);

		if (mask > 0 && (mask & VYRE_OPERAND_IN) &&
		    read_conflicts(t, stamp, items[i].input_handle, i))
			return -1;
		if (mask > 0 && (mask & VYRE_OPERAND_TABLE) &&
		    read_conflicts(t, stamp, items[i].param, i))
			return -1;
		order[k++] = i;
	}
	return k;
}
