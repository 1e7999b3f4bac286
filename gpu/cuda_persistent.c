/* SPDX-License-Identifier: MIT */
/*
 * Persistent mode of the CUDA backend: the resident grid, its lanes, the
 * doorbells a busy slot posts to its lane, and how reap learns that a slot
 * is done. Kept apart from the launch mode because the two share nothing
 * but the core (cuda_core.c); the backend reaches this through the mode
 * table at the end, vyre_cuda_persistent_mode.
 *
 * Lanes: the grid is split into a big lane and a few small ones
 * (plan); a submitted slot posts to one lane (pick_lane), so small batches of different slots run
 * on SMs of their own. Each lane has its own poller warp, rings, control page and barrier state. A
 * watchdog trip stops the lane that tripped at once and the others at their next heartbeat check
 * (HALTED); the host fails the tripping slot, turns its remaining doorbells into empty launches and
 * restarts the grid where every lane left off.
 *
 * A lane runs its doorbells in ring order, several slots' interleaved. A
 * slab slot is done when the lane's done counter passes the slot's last
 * doorbell; an IMMEDIATE slot when its completion words are current. A
 * doorbell slot is reused only when the device consumed the one a lap
 * before and no busy IMMEDIATE slot still waits for that lap's completion
 * words (lane_floor).
 */
#include "cuda_persistent.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_immediate.h"

#define SMALL_LANE_BLOCKS 1u   /* blocks of each small lane */
#define SMALL_BATCH_UNITS 128u /* batches of at most this many units prefer a small lane */

/*
 * The pool (VYRE_CUDA_POOL, default on; 0 turns it off): each lane's first
 * block only reads its doorbells, and every launch runs on a team of the
 * grid's other blocks, side by side with the launches of other slots.
 */
static int pool_wanted(const struct vyre_backend *b)
{
	const char *s = getenv("VYRE_CUDA_POOL");

	return !(s && strcmp(s, "0") == 0) && b->dv.grid >= b->n_lanes + 2 &&
	       b->dv.grid <= VYRE_MK_POOL_MAX_BLOCKS;
}

/*
 * VYRE_CUDA_POOL_SELF (default on; 0 turns it off, for measuring): a
 * one-block launch that finds nothing of its lane in flight runs on the
 * lane's poller block instead of being handed to a team (docs/cuda.md, "The
 * pool").
 */
static uint32_t pool_flags(void)
{
	const char *s = getenv("VYRE_CUDA_POOL_SELF");

	return s && strcmp(s, "0") == 0 ? 0u : VYRE_MK_POOL_SELF;
}

/*
 * VYRE_CUDA_MODULE_IMM (default on; 0 turns it off, for comparing): a small
 * batch of module items rides in its doorbell and comes back in its
 * completion slot (VYRE_MK_LAUNCH_CPL). Only the pool's pollers with their
 * own blocks run such a launch, so it needs both.
 */
static int module_imm_wanted(const struct vyre_backend *b)
{
	const char *s = getenv("VYRE_CUDA_MODULE_IMM");

	return !(s && strcmp(s, "0") == 0) && b->pool != 0 && (pool_flags() & VYRE_MK_POOL_SELF);
}

/* VYRE_CUDA_POOL_SPREAD (1-64), for measuring: how many times the blocks a launch asks for it may
 * take. */
static uint32_t pool_spread(void)
{
	const char *s = getenv("VYRE_CUDA_POOL_SPREAD");
	const long v = s ? strtol(s, NULL, 10) : 0;

	return v >= 1 && v <= 64 ? (uint32_t)v : VYRE_MK_POOL_SPREAD;
}

/* Blocks a launch may run on: the pool's workers, or its lane's blocks. */
static uint32_t lane_workers(const struct vyre_backend *b, uint32_t lane)
{
	return b->pool ? b->dv.grid - b->n_lanes : b->lanes[lane].n_blocks;
}

static int pooled(const struct vyre_backend *b)
{
	return b->pool != 0;
}

static uint32_t lane_done(const struct cuda_lane *ln)
{
	return __atomic_load_n(&ln->ctrl->done, __ATOMIC_ACQUIRE);
}

/* The oldest doorbell whose ring and completion slots the host may not reuse yet. */
static uint32_t lane_floor(const struct vyre_backend *b, uint32_t lane)
{
	const struct cuda_lane *ln = &b->lanes[lane];
	uint32_t floor = lane_done(ln);

	for (uint32_t i = 0; i < b->n_slots && ln->busy; i++) {
		const struct cuda_slot *s = &b->slots[i];

		if (s->state == SLOT_BUSY && s->lane == lane && s->immediate &&
		    (int32_t)(s->last_seq - floor) < 0)
			floor = s->last_seq;
	}
	return floor;
}

static uint32_t lane_room(const struct vyre_backend *b, uint32_t lane)
{
	const uint32_t used = b->lanes[lane].seq - lane_floor(b, lane);

	return used >= VYRE_MK_RING_SLOTS ? 0 : VYRE_MK_RING_SLOTS - used;
}

/*
 * Every doorbell and completion slot of @ln holds the sequence number it had
 * one lap before ln->seq, which no launch to come uses.
 */
static void reset_ring(struct cuda_lane *ln)
{
	for (uint32_t i = 0; i < VYRE_MK_RING_SLOTS; i++) {
		const uint32_t seq = ln->seq + i;
		const uint64_t at = (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
		const uint64_t stale = (uint64_t)(seq - VYRE_MK_RING_SLOTS) << 32;

		for (uint32_t j = 0; j < VYRE_MK_SLOT_WORDS; j++) {
			__atomic_store_n(&ln->ring[at + j], stale, __ATOMIC_RELAXED);
			__atomic_store_n(&ln->cpl[at + j], stale, __ATOMIC_RELAXED);
		}
		ln->owner[i] = NO_SLOT;
	}
}

/*
 * Lane 0 (the big lane) gets most of the grid, for batches that fill it;
 * with several slots, up to one small lane of SMALL_LANE_BLOCKS blocks per
 * other slot, so small batches of different slots run side by side on SMs
 * of their own instead of queueing behind each other in one ring. At most a
 * quarter of the grid goes to small lanes.
 */
static int plan(struct vyre_backend *b)
{
	const uint32_t grid = b->dv.grid;
	uint32_t small = b->n_slots - 1;

	if (small > VYRE_MK_MAX_LANES - 1)
		small = VYRE_MK_MAX_LANES - 1;
	if (small > grid / 4 / SMALL_LANE_BLOCKS)
		small = grid / 4 / SMALL_LANE_BLOCKS;
	b->n_lanes = 1 + small;
	b->lanes = calloc(b->n_lanes, sizeof(*b->lanes));
	if (!b->lanes)
		return VYRE_E_NOMEM;
	b->lanes[0].first_block = 0;
	b->lanes[0].n_blocks = grid - small * SMALL_LANE_BLOCKS;
	for (uint32_t l = 1; l < b->n_lanes; l++) {
		b->lanes[l].first_block = b->lanes[l - 1].first_block + b->lanes[l - 1].n_blocks;
		b->lanes[l].n_blocks = SMALL_LANE_BLOCKS;
	}
	b->n_ctrl = b->n_lanes;
	b->split_blocks = pool_wanted(b) ? grid - b->n_lanes : b->lanes[0].n_blocks;
	return 0;
}

static int setup(struct vyre_backend *b)
{
	const uint64_t ring_bytes = (uint64_t)VYRE_MK_RING_SLOTS * VYRE_MK_SLOT_WORDS * 8;
	int err = vyre_cuda_pinned_alloc(&b->dv, &b->ring_mem, ring_bytes * b->n_lanes, b->why,
					 sizeof(b->why));

	if (!err)
		err = vyre_cuda_pinned_alloc(&b->dv, &b->cpl_mem, ring_bytes * b->n_lanes, b->why,
					     sizeof(b->why));
	if (err)
		return err;
	for (uint32_t l = 0; l < b->n_lanes; l++) {
		struct cuda_lane *ln = &b->lanes[l];

		ln->ring = (uint64_t *)b->ring_mem.host + (uint64_t)l * ring_bytes / 8;
		ln->cpl = (uint64_t *)b->cpl_mem.host + (uint64_t)l * ring_bytes / 8;
		ln->ctrl = (struct vyre_mk_ctrl *)b->ctrl_mem.host + l;
		reset_ring(ln);
	}
	if (pool_wanted(b)) {
		const CUresult r = b->dv.d->cuMemAlloc(&b->pool, VYRE_MK_POOL_BYTES);

		if (r != CUDA_SUCCESS) {
			b->pool = 0;
			return vyre_cuda_cu_note(b, "cuMemAlloc(pool)", r);
		}
	}
	b->module_imm = module_imm_wanted(b);
	return 0;
}

/* The first @words words of @ln's doorbell slot @seq; each word is current on its own. */
static void post_slot(struct vyre_backend *b, struct cuda_lane *ln, uint32_t owner,
		      const uint32_t *data, uint32_t words)
{
	const uint32_t seq = ln->seq;
	uint64_t *slot = ln->ring + (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;

	for (uint32_t j = 0; j < words; j++)
		__atomic_store_n(&slot[j], (uint64_t)seq << 32 | data[j], __ATOMIC_RELEASE);
	ln->owner[seq & (VYRE_MK_RING_SLOTS - 1)] = owner;
	ln->seq++;
	b->stats.bytes_to_device += (uint64_t)words * 8;
}

/* Launch the grid; each lane starts at its first doorbell not done. */
static int start_kernel(struct vyre_backend *b)
{
	struct vyre_mk_persist_args a = {
	    .ctrl = vyre_cuda_ctrl_dev(b, 0),
	    .ring = b->ring_mem.dev,
	    .cpl = b->cpl_mem.dev,
	    .devstate = vyre_cuda_devstate_dev(b, 0),
	    .heartbeat_cycles = b->heartbeat_cycles,
	    .watchdog_cycles = b->watchdog_cycles,
	    .n_lanes = b->n_lanes,
	    .pool_spread = pool_spread(),
	    .pool = b->pool,
	    /* module batches in the doorbell need these too: module_imm_wanted */
	    .pool_flags = pool_flags(),
	};
	void *params[] = {&a};
	CUresult r;
	int err;

	for (uint32_t l = 0; l < b->n_lanes; l++) {
		a.lane_first[l] = b->lanes[l].first_block;
		a.start_seq[l] = lane_done(&b->lanes[l]);
		__atomic_store_n(&b->lanes[l].ctrl->trip_seq, 0u, __ATOMIC_RELAXED);
		__atomic_store_n(&b->lanes[l].ctrl->after_done[0], 0u, __ATOMIC_RELAXED);
		__atomic_store_n(&b->lanes[l].ctrl->after_done[1], 0u, __ATOMIC_RELAXED);
		__atomic_store_n(&b->lanes[l].ctrl->state, VYRE_MK_STATE_RUNNING, __ATOMIC_RELEASE);
	}
	err = vyre_cuda_clear_devstate(b, 0, b->n_ctrl + 1, b->stream);
	if (err)
		return err;
	if (pooled(b)) {
		r = b->dv.d->cuMemsetD8Async(b->pool, 0, VYRE_MK_POOL_BYTES, b->stream);
		if (r != CUDA_SUCCESS)
			return vyre_cuda_cu_note(b, "cuMemsetD8Async(pool)", r);
	}
	r = b->dv.d->cuLaunchKernel(b->dv.persistent, b->dv.grid, 1, 1, VYRE_MK_THREADS, 1, 1,
				    b->dv.smem_dynamic, b->stream, params, NULL);
	if (r != CUDA_SUCCESS)
		return vyre_cuda_cu_note(b, "cuLaunchKernel(vyre_mk_persistent)", r);
	b->kernel_live = 1;
	b->next_check_ns = vyre_cuda_now_ns() + CHECK_EVERY_NS;
	b->stats.kernel_starts++;
	return 0;
}

/*
 * A small batch takes an idle small lane, else the big lane if idle, else
 * the small lane with the fewest slots; a large one the big lane if idle,
 * else an idle small lane (slower, but running at once), else the big lane.
 * A batch with a test hook takes the big lane, which the stall needs.
 */
static uint32_t pick_lane(const struct vyre_backend *b, const struct cuda_slot *s)
{
	const int small = s->lay.n_units <= SMALL_BATCH_UNITS;
	uint32_t best;

	if (b->n_lanes == 1 || b->inject)
		return 0;
	/* with the pool a lane is only a poller: an idle one, else the least busy */
	if (pooled(b)) {
		best = 0;
		for (uint32_t l = 0; l < b->n_lanes; l++) {
			if (b->lanes[l].busy == 0)
				return l;
			if (b->lanes[l].busy < b->lanes[best].busy)
				best = l;
		}
		return best;
	}
	if (!small && b->lanes[0].busy == 0)
		return 0;
	for (uint32_t l = 1; l < b->n_lanes; l++)
		if (b->lanes[l].busy == 0)
			return l;
	if (!small || b->lanes[0].busy == 0)
		return 0;
	best = 1;
	for (uint32_t l = 2; l < b->n_lanes; l++)
		if (b->lanes[l].busy < b->lanes[best].busy)
			best = l;
	return best;
}

/*
 * Where each item of @s's IMMEDIATE launch reads and writes: its heap's host
 * base. Never a device buffer's: vyre_cuda_lower_immediate refuses those.
 */
static void immediate_bases(const struct vyre_backend *b, const struct cuda_slot *s, uint8_t **base)
{
	/* a module batch's items keep their bytes where they are */
	for (uint32_t j = 0; j < s->imm.n_items; j++)
		base[j] = s->imm.modules ? NULL : b->host_heaps[s->imm.item[j].heap].base;
}

/* @s is one IMMEDIATE launch: its items' input goes inside the doorbell, the slab is not read. */
static void post_immediate(struct vyre_backend *b, struct cuda_slot *s)
{
	struct cuda_lane *ln = &b->lanes[s->lane];
	uint32_t data[VYRE_MK_SLOT_WORDS];
	uint8_t *base[VYRE_MK_IMM_MAX_ITEMS];

	immediate_bases(b, s, base);
	const uint32_t words =
	    vyre_cuda_immediate_doorbell(&s->imm, (const uint8_t *const *)base, data);

	s->last_seq = ln->seq;
	post_slot(b, ln, (uint32_t)(s - b->slots), data, words);
	s->next_post = 1;
	b->stats.launches++;
	b->stats.immediates++;
}

/*
 * @s is a module batch (vyre_cuda_lower_module_imm): its units, lowered into
 * the slab, go inside the doorbell; its outcome comes back in the completion
 * slot, its operands never leave their heaps.
 */
static void post_module_imm(struct vyre_backend *b, struct cuda_slot *s)
{
	struct cuda_lane *ln = &b->lanes[s->lane];
	const struct vyre_mk_unit *units =
	    (const struct vyre_mk_unit *)((const uint8_t *)s->slab.host + s->lay.units_off);
	uint32_t data[VYRE_MK_SLOT_WORDS];
	const uint32_t words =
	    vyre_cuda_module_doorbell(&s->imm, &s->lay, s->slab.dev, units, data);

	s->last_seq = ln->seq;
	post_slot(b, ln, (uint32_t)(s - b->slots), data, words);
	s->next_post = 1;
	b->stats.launches++;
	b->stats.module_imm++;
}

/*
 * Ring the doorbells of @s's launches not posted yet, as far as its lane's
 * ring has room. A launch of one stage, one block and at most
 * VYRE_MK_INLINE_UNITS units travels inside its slot.
 */
static void post_launches(struct vyre_backend *b, struct cuda_slot *s)
{
	struct cuda_lane *ln = &b->lanes[s->lane];
	const uint8_t *slab = s->slab.host;
	const struct vyre_mk_unit *units = (const struct vyre_mk_unit *)(slab + s->lay.units_off);
	const struct vyre_mk_stage *stages =
	    (const struct vyre_mk_stage *)(slab + s->lay.stages_off);
	uint32_t room;

	if (s->next_post >= s->lay.n_launches)
		return;
	room = lane_room(b, s->lane);
	for (; room && s->next_post < s->lay.n_launches; room--) {
		const struct vyre_cuda_launch *l = &s->launches[s->next_post];
		uint32_t data[VYRE_MK_SLOT_WORDS] = {
		    (uint32_t)s->slab.dev,
		    (uint32_t)((uint64_t)s->slab.dev >> 32),
		    (uint32_t)(s->lay.units_off +
			       (uint64_t)l->first_unit * sizeof(struct vyre_mk_unit)),
		    (uint32_t)(s->lay.stages_off +
			       (uint64_t)l->first_stage * sizeof(struct vyre_mk_stage)),
		    (uint32_t)s->lay.results_off,
		    l->n_stages,
		    l->n_blocks | l->flags << 16,
		    l->n_units,
		};
		/* the pool runs a lane's launches side by side: a batch's next waits for its last
		 */
		if (s->next_post > 0 && pooled(b))
			data[6] |= VYRE_MK_LAUNCH_ORDERED << 16;
		uint32_t words = VYRE_MK_HEADER_WORDS;

		if (l->n_stages == 1 && l->n_blocks == 1 && l->n_units <= VYRE_MK_INLINE_UNITS) {
			data[3] = stages[l->first_stage].n_block_units;
			data[6] |= VYRE_MK_LAUNCH_INLINE << 16;
			memcpy(&data[VYRE_MK_HEADER_WORDS], &units[l->first_unit],
			       l->n_units * sizeof(struct vyre_mk_unit));
			words += l->n_units * VYRE_MK_UNIT_WORDS;
		}
		s->last_seq = ln->seq;
		post_slot(b, ln, (uint32_t)(s - b->slots), data, words);
		s->next_post++;
		b->stats.launches++;
	}
}

static int submit(struct vyre_backend *b, struct cuda_slot *s)
{
	const uint32_t hooks = VYRE_MK_LAUNCH_FAULT | VYRE_MK_LAUNCH_STALL;

	b->lanes[s->lane].busy++;
	s->next_post = 0;
	if (!b->kernel_live && start_kernel(b) != 0)
		return vyre_cuda_device_fault(b);
	s->immediate =
	    !b->immediate_off && !(s->launches[0].flags & hooks) && lane_room(b, s->lane) > 0 &&
	    (vyre_cuda_lower_immediate(s->batch, s->cls, &s->lay, &s->imm) ||
	     (b->module_imm &&
	      vyre_cuda_lower_module_imm(s->batch, s->cls, s->order_slot, &s->lay, &s->imm)));
	if (s->immediate) {
		if (s->imm.modules)
			post_module_imm(b, s);
		else
			post_immediate(b, s);
		return 0;
	}
	b->stats.bytes_to_device += vyre_cuda_desc_bytes(s);
	s->posted_ns = vyre_cuda_now_ns();
	post_launches(b, s);
	return 0;
}

/* 1 when @s's IMMEDIATE launch posted its outcome; its items' output is then in the heap. */
static int immediate_done(struct vyre_backend *b, struct cuda_slot *s)
{
	const struct cuda_lane *ln = &b->lanes[s->lane];
	const uint64_t *cpl =
	    ln->cpl + (uint64_t)(s->last_seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
	const struct vyre_exec_batch *batch = s->batch;
	struct vyre_exec_result r[VYRE_MK_IMM_MAX_ITEMS];
	uint8_t *base[VYRE_MK_IMM_MAX_ITEMS];

	immediate_bases(b, s, base);
	if (!vyre_cuda_immediate_complete(&s->imm, s->last_seq, cpl, base, r))
		return 0;
	b->stats.bytes_from_device += 8ull * s->imm.cpl_words;
	vyre_cuda_slot_finish(b, s, 0);
	/* the items' own records in the slab are stale: their outcomes are r */
	for (uint32_t j = 0; j < s->imm.n_items; j++)
		batch->results[batch->plan.order[s->imm.item[j].order_pos]] = r[j];
	return 1;
}

/* Finish @s when the device is done with it, as far as the host can see without the driver. */
static int check_slot(struct vyre_backend *b, struct cuda_slot *s)
{
	if (s->immediate)
		return immediate_done(b, s);
	if (s->next_post < s->lay.n_launches ||
	    (int32_t)(lane_done(&b->lanes[s->lane]) - s->last_seq) <= 0)
		return 0;
	b->stats.slab_batches++;
	b->stats.slab_ns += (uint64_t)(vyre_cuda_now_ns() - s->posted_ns);
	vyre_cuda_slot_finish(b, s, 0);
	return 1;
}

/* Doorbell @seq of @ln, posted already, becomes an empty launch (one block, no stage). */
static void empty_doorbell(struct cuda_lane *ln, uint32_t seq)
{
	static const uint32_t data[VYRE_MK_HEADER_WORDS] = {0, 0, 0, 0, 0, 0, 1, 0};
	uint64_t *w = ln->ring + (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;

	for (uint32_t j = 0; j < VYRE_MK_HEADER_WORDS; j++)
		__atomic_store_n(&w[j], (uint64_t)seq << 32 | data[j], __ATOMIC_RELEASE);
}

/*
 * The doorbells of @slot still in @ln's ring become empty launches: the
 * slot failed, and its slab may be reused before the device reaches them.
 */
static void cancel_doorbells(struct cuda_lane *ln, uint32_t from, uint32_t slot)
{
	for (uint32_t seq = from; seq != ln->seq; seq++) {
		const uint32_t at = seq & (VYRE_MK_RING_SLOTS - 1);

		if (ln->owner[at] != slot)
			continue;
		empty_doorbell(ln, seq);
		ln->owner[at] = NO_SLOT;
	}
}

/*
 * The pool's launches after the one that tripped that finished anyway
 * (after_done) become empty launches, so the restart does not run them
 * again; their slots complete when `done` passes them.
 */
static void skip_finished(struct cuda_lane *ln)
{
	const uint32_t done = lane_done(ln);

	for (uint32_t i = 0; i < 64; i++) {
		const uint32_t seq = done + 1 + i;
		const uint32_t bits =
		    __atomic_load_n(&ln->ctrl->after_done[i / 32], __ATOMIC_RELAXED);

		if ((bits >> (i % 32) & 1u) && (int32_t)(ln->seq - seq) > 0)
			empty_doorbell(ln, seq);
	}
}

/* Lane @lane's launch at its done counter saw a barrier without progress. */
static int watchdog_fault(struct vyre_backend *b, uint32_t lane)
{
	struct cuda_lane *ln = &b->lanes[lane];
	const uint32_t done = lane_done(ln);
	const uint32_t slot = ln->owner[done & (VYRE_MK_RING_SLOTS - 1)];
	const uint32_t block = __atomic_load_n(&ln->ctrl->detail, __ATOMIC_RELAXED);
	struct cuda_slot *s = slot < b->n_slots ? &b->slots[slot] : NULL;

	b->stats.watchdog_trips++;
	if (!s || s->state != SLOT_BUSY || s->lane != lane) {
		vyre_cuda_note(b, "watchdog tripped in lane %u at doorbell %u, which no batch owns",
			       lane, done);
		return vyre_cuda_device_fault(b);
	}
	vyre_cuda_note(b,
		       "watchdog: a device-wide barrier saw no progress for %u ms (lane %u, "
		       "noticed by block %u); the %u item(s) of slot %u complete with "
		       "VYRE_E_DEVICE",
		       b->watchdog_ms, lane, block, s->batch->plan.n_order, slot);
	cancel_doorbells(ln, done, slot);
	if (pooled(b))
		skip_finished(ln);
	vyre_cuda_slot_finish(b, s, VYRE_E_TIMEDOUT);
	return 0;
}

/* The grid left (the stream is idle): settle every lane; a busy slot restarts it. */
static int grid_left(struct vyre_backend *b)
{
	int heartbeat = 0;

	b->kernel_live = 0;
	for (uint32_t i = 0; i < b->n_slots; i++)
		if (b->slots[i].state == SLOT_BUSY)
			check_slot(b, &b->slots[i]);
	for (uint32_t l = 0; l < b->n_lanes; l++) {
		struct cuda_lane *ln = &b->lanes[l];
		const uint32_t done = lane_done(ln);
		const uint32_t state = __atomic_load_n(&ln->ctrl->state, __ATOMIC_ACQUIRE);

		b->stats.pool_launches += ln->ctrl->pool_launches;
		b->stats.pool_self += ln->ctrl->pool_self;
		for (uint32_t i = 0; i < 3; i++)
			b->stats.pool_ns[i] += ln->ctrl->pool_ns[i];
		ln->ctrl->pool_launches = 0;
		ln->ctrl->pool_self = 0;
		memset(ln->ctrl->pool_ns, 0, sizeof(ln->ctrl->pool_ns));

		for (uint32_t i = 0; i < b->n_slots; i++) {
			const struct cuda_slot *s = &b->slots[i];

			if (s->state == SLOT_BUSY && s->lane == l && s->immediate &&
			    (int32_t)(done - s->last_seq) > 0) {
				vyre_cuda_note(b,
					       "the kernel counted launch %u of lane %u done "
					       "without posting its completion",
					       s->last_seq, l);
				return vyre_cuda_device_fault(b);
			}
		}
		if (state == VYRE_MK_STATE_WATCHDOG) {
			int err = watchdog_fault(b, l);
			if (err)
				return err;
		} else if (state == VYRE_MK_STATE_HEARTBEAT) {
			heartbeat = 1;
		} else if (state != VYRE_MK_STATE_EXITED && state != VYRE_MK_STATE_HALTED) {
			vyre_cuda_note(b, "persistent kernel left lane %u unexpectedly (state %u)",
				       l, state);
		}
	}
	if (heartbeat) {
		b->stats.heartbeat_exits++;
		vyre_cuda_note(b,
			       "persistent kernel left: the host heartbeat was still for %u ms; "
			       "the next batch restarts it",
			       b->heartbeat_ms);
	}
	return 0;
}

static int poll(struct vyre_backend *b)
{
	uint32_t busy = 0;
	CUresult r;
	int64_t now;

	for (uint32_t l = 0; l < b->n_lanes; l++)
		busy += b->lanes[l].busy;
	if (!busy)
		return 0;
	/* a stop (heap registration) or a heartbeat exit left work behind */
	if (!b->kernel_live && start_kernel(b) != 0)
		return vyre_cuda_device_fault(b);
	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct cuda_slot *s = &b->slots[i];

		if (s->state != SLOT_BUSY)
			continue;
		if (!s->immediate)
			post_launches(b, s);
		check_slot(b, s);
	}
	/*
	 * The driver call costs about a microsecond, and even a clock read is
	 * worth skipping while the completion words are due any moment.
	 */
	if (++b->polls % CLOCK_EVERY)
		return 0;
	now = vyre_cuda_now_ns();
	if (now < b->next_check_ns)
		return 0;
	b->next_check_ns = now + CHECK_EVERY_NS;
	r = b->dv.d->cuStreamQuery(b->stream);
	if (r == CUDA_ERROR_NOT_READY)
		return 0;
	if (r != CUDA_SUCCESS) {
		vyre_cuda_cu_note(b, "cuStreamQuery(persistent kernel)", r);
		return vyre_cuda_device_fault(b);
	}
	return grid_left(b);
}

/* Ring an EXIT doorbell in every lane and wait for the grid to leave. */
static int stop(struct vyre_backend *b)
{
	const int64_t deadline = vyre_cuda_now_ns() + vyre_cuda_stop_timeout_ns(b);
	const struct timespec pause = {0, 50000};
	uint32_t data[VYRE_MK_HEADER_WORDS] = {0};
	int err;

	if (!b->kernel_live)
		return 0;
	data[6] = VYRE_MK_LAUNCH_EXIT << 16;
	for (uint32_t l = 0; l < b->n_lanes; l++) {
		/* other slots' doorbells may fill the ring: the device drains it */
		while (b->lanes[l].seq - lane_done(&b->lanes[l]) >= VYRE_MK_RING_SLOTS) {
			const CUresult r = b->dv.d->cuStreamQuery(b->stream);

			if (r == CUDA_SUCCESS)
				return grid_left(b);
			if (r != CUDA_ERROR_NOT_READY)
				return vyre_cuda_cu_note(b, "cuStreamQuery(persistent kernel)", r);
			if (vyre_cuda_now_ns() > deadline) {
				vyre_cuda_note(b, "lane %u consumed no doorbell within %lld ms", l,
					       (long long)(vyre_cuda_stop_timeout_ns(b) / 1000000));
				return VYRE_E_TIMEDOUT;
			}
			nanosleep(&pause, NULL);
		}
		post_slot(b, &b->lanes[l], NO_SLOT, data, VYRE_MK_HEADER_WORDS);
	}
	b->kernel_live = 0;
	err = vyre_cuda_wait_stream(b, b->stream, vyre_cuda_stop_timeout_ns(b));
	if (err)
		return err;
	return grid_left(b);
}

/* @s runs on the lane pick_lane gives it. */
static uint32_t place(struct vyre_backend *b, struct cuda_slot *s)
{
	s->lane = pick_lane(b, s);
	return lane_workers(b, s->lane);
}

static void drain(struct vyre_backend *b)
{
	stop(b);
}

static void teardown(struct vyre_backend *b)
{
	if (b->pool)
		b->dv.d->cuMemFree(b->pool);
	b->pool = 0;
	vyre_cuda_pinned_free(&b->dv, &b->cpl_mem);
	vyre_cuda_pinned_free(&b->dv, &b->ring_mem);
}

const struct vyre_cuda_mode_ops vyre_cuda_persistent_mode = {
    .name = "persistent",
    .heartbeat = 1,
    .plan = plan,
    .setup = setup,
    .place = place,
    .submit = submit,
    .poll = poll,
    .stop = stop,
    .drain = drain,
    .teardown = teardown,
};
