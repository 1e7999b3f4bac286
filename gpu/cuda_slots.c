/* SPDX-License-Identifier: MIT */
/*
 * The batch path of the CUDA backend, common to both modes: submit lowers a
 * batch into its slot's slab and hands it to the mode; reap polls the mode
 * and reports finished slots. Each runs under the backend's operation lock
 * (see cuda_group.c).
 */
#include "cuda_slots.h"

#include <stdio.h>
#include <time.h>

#define SPIN_NS	      200000 /* busy polling before reap sleeps between checks */
#define POLL_SLEEP_NS 20000l

static int any_busy(const struct vyre_backend *b)
{
	for (uint32_t i = 0; i < b->n_slots; i++)
		if (b->slots[i].state == SLOT_BUSY)
			return 1;
	return 0;
}

/* Make room in @s's slab for @need bytes; the old slab stays on failure. */
static int grow_slab(struct vyre_backend *b, struct cuda_slot *s, uint64_t need)
{
	struct vyre_cuda_pinned fresh;
	uint64_t bytes = s->slab.bytes * 2 > need ? s->slab.bytes * 2 : need;
	int err;

	if (bytes > UINT64_MAX - 0xffff)
		return VYRE_E_NOMEM;
	bytes = (bytes + 0xffff) & ~(uint64_t)0xffff;
	err = vyre_cuda_pinned_alloc(&b->dv, &fresh, bytes, b->why, sizeof(b->why));
	if (err && bytes > need)
		err = vyre_cuda_pinned_alloc(&b->dv, &fresh, need, b->why, sizeof(b->why));
	if (err) {
		fprintf(stderr, "vyre-cuda: cannot grow the slab to %llu bytes: %s\n",
			(unsigned long long)need, b->why);
		return err;
	}
	/* the slot is idle: nothing on the device reads the old slab */
	vyre_cuda_pinned_free(&b->dv, &s->slab);
	s->slab = fresh;
	return 0;
}

static int submit_locked(struct vyre_backend *b, uint32_t slot, const struct vyre_exec_batch *batch)
{
	struct cuda_slot *s;
	uint32_t grid_max;
	int err;

	if (slot >= b->n_slots || b->slots[slot].state != SLOT_IDLE) {
		vyre_cuda_note(b, "submit to slot %u, which is %s", slot,
			       slot >= b->n_slots ? "out of range" : "not idle");
		return VYRE_E_INVAL;
	}
	s = &b->slots[slot];
	if (batch->n_items > b->cfg.max_items || batch->plan.n_order > b->cfg.max_items)
		return VYRE_E_INVAL;
	/* large DFA items are split for the big lane, where large batches go when it is idle */
	err = vyre_cuda_lower_measure(batch, b->heaps, b->cfg.max_heaps, b->split_blocks, s->cls,
				      s->item_state, &s->lay);
	if (err)
		return err;
	if (b->dead) {
		vyre_cuda_fail_results(batch, VYRE_E_DEVICE);
		return VYRE_E_DEVICE;
	}
	err = vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why));
	if (err)
		return err;
	if (s->lay.bytes > s->slab.bytes) {
		err = grow_slab(b, s, s->lay.bytes);
		if (err)
			return err;
	}
	s->batch = batch;
	s->lane = NO_SLOT;
	grid_max = b->mode->place(b, s);
	vyre_cuda_lower_fill(batch, b->heaps, s->cls, s->item_state, &s->lay, s->slab.host,
			     grid_max, s->order_slot, s->launches);
	if (b->inject && s->lay.n_launches > 0 && b->inject_after) {
		b->inject_after--;
	} else if (b->inject && s->lay.n_launches > 0) {
		struct vyre_cuda_launch *l = &s->launches[0];

		if (b->inject & VYRE_CUDA_INJECT_FAULT)
			l->flags |= VYRE_MK_LAUNCH_FAULT;
		if ((b->inject & VYRE_CUDA_INJECT_STALL) && grid_max >= 2) {
			l->flags |= VYRE_MK_LAUNCH_STALL;
			l->n_blocks = l->n_blocks < 2 ? 2 : l->n_blocks;
		}
		b->inject = 0;
	}
	s->state = SLOT_BUSY;
	s->status = 0;
	b->stats.batches++;
	if (s->lay.n_launches == 0) {
		s->lane = NO_SLOT;
		vyre_cuda_slot_finish(b, s, 0);
		return 0;
	}
	err = b->mode->submit(b, s);
	if (err) {
		/* nothing runs for this slot: its results say why and it stays idle */
		if (s->state == SLOT_BUSY)
			vyre_cuda_slot_finish(b, s, err);
		s->state = SLOT_IDLE;
		s->batch = NULL;
	}
	return err;
}

/* Report up to @max finished slots, starting after the last one reported. */
static uint32_t collect(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < b->n_slots && n < max; k++) {
		const uint32_t i = (b->reap_next + k) % b->n_slots;
		struct cuda_slot *s = &b->slots[i];

		if (s->state != SLOT_FINISHED)
			continue;
		done[n].slot = i;
		done[n].status = s->status;
		n++;
		s->state = SLOT_IDLE;
		s->batch = NULL;
		b->reap_next = (i + 1) % b->n_slots;
	}
	return n;
}

int vyre_cuda_submit(struct vyre_backend *b, uint32_t slot, const struct vyre_exec_batch *batch)
{
	pthread_mutex_lock(&b->op_lock);
	const int err = submit_locked(b, slot, batch);
	pthread_mutex_unlock(&b->op_lock);
	return err;
}

/* One look at the device; *busy: slots still run. */
static uint32_t reap_once(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max,
			  int *busy)
{
	uint32_t n;

	pthread_mutex_lock(&b->op_lock);
	if (!b->dead && any_busy(b) && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)))
		vyre_cuda_device_fault(b);
	if (!b->dead)
		b->mode->poll(b);
	n = collect(b, done, max);
	*busy = any_busy(b);
	pthread_mutex_unlock(&b->op_lock);
	return n;
}

int vyre_cuda_reap(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max,
		   int64_t timeout_ns)
{
	const struct timespec pause = {0, POLL_SLEEP_NS};
	int64_t start = 0;
	uint32_t polls = 0;

	if (max == 0)
		return 0;
	for (;;) {
		int busy;
		const uint32_t n = reap_once(b, done, max, &busy);
		/*
		 * timeout 0 is the event loop's look between its other work: one
		 * poll, and no clock read (a tenth of the loop's time once)
		 */
		if (n || !busy || timeout_ns == 0)
			return (int)n;
		if (!start)
			start = vyre_cuda_now_ns();
		if (++polls % CLOCK_EVERY)
			continue;
		const int64_t now = vyre_cuda_now_ns();
		if (timeout_ns >= 0 && now - start >= timeout_ns)
			return 0;
		/* by time, not by count: a poll costs 10-50 ns depending on the path */
		if (now - start > SPIN_NS)
			nanosleep(&pause, NULL);
	}
}
