/* SPDX-License-Identifier: MIT */
/*
 * The batch slots and one step of the pipeline: complete what the backend
 * finished, then fill free slots. A batch takes only items without a hazard
 * against an in-flight item, its own client's included, and no FENCE item
 * of a client with a batch in flight (drain.c), so batches in different
 * slots never need an order between them; a client's CQEs are published in
 * its submission order whichever of its batches finishes first (complete.c).
 */
#include <stdlib.h>
#include <string.h>

#include "complete.h"
#include "daemon.h"
#include "disjoint.h"
#include "dispatch.h"
#include "drain.h"
#include "hazards.h"
#include "log.h"
#include "pipeline.h"
#include "plan_wrap.h"
#include "resolve_stage.h"
#include "transient.h"

/*
 * Each exec item on a cache line of its own (gpu/ops.h): calloc's large
 * blocks start 16 bytes into a page, which would split every item in two.
 */
static struct vyre_exec_item *exec_alloc(uint32_t cap)
{
	const size_t line = 64, bytes = (size_t)cap * sizeof(struct vyre_exec_item);
	struct vyre_exec_item *x = aligned_alloc(line, bytes ? bytes : line);

	if (x)
		memset(x, 0, bytes);
	return x;
}

static int batch_init(struct vyre_batch *b, uint32_t slot, uint32_t cap)
{
	memset(b, 0, sizeof(*b));
	b->slot = slot;
	b->cap = cap;
	b->sqes = calloc(cap, sizeof(*b->sqes));
	b->cqe_src = calloc(cap, sizeof(*b->cqe_src));
	b->items = calloc(cap, sizeof(*b->items));
	b->exec = exec_alloc(cap);
	b->results = calloc(cap, sizeof(*b->results));
	b->status = calloc(cap, sizeof(*b->status));
	b->domain = calloc(cap, sizeof(*b->domain));
	b->flags = calloc(cap, sizeof(*b->flags));
	b->conn = calloc(cap, sizeof(*b->conn));
	b->dedup_of = calloc(cap, sizeof(*b->dedup_of));
	b->table_gen = calloc(cap, sizeof(*b->table_gen));
	b->aux = calloc(cap, sizeof(*b->aux));
	b->group_of = calloc(cap, sizeof(*b->group_of));
	b->touched = calloc(cap, sizeof(*b->touched));
	b->first = calloc(cap, sizeof(*b->first));
	b->count = calloc(cap, sizeof(*b->count));
	b->cq_pos = calloc(cap, sizeof(*b->cq_pos));
	b->hz_taken = calloc((size_t)cap * VYRE_HAZARD_ENTRIES, sizeof(*b->hz_taken));
	b->plan_order = calloc(cap, sizeof(*b->plan_order));
	b->plan_group_end = calloc(cap, sizeof(*b->plan_group_end));
	b->plan_launch_end = calloc(cap, sizeof(*b->plan_launch_end));
	b->seq_order = calloc(cap, sizeof(*b->seq_order));
	b->seq_ends = calloc(cap, sizeof(*b->seq_ends));
	if (!b->sqes || !b->cqe_src || !b->items || !b->exec || !b->results || !b->status ||
	    !b->domain || !b->flags || !b->conn || !b->dedup_of || !b->table_gen || !b->aux ||
	    !b->group_of || !b->touched || !b->first || !b->count || !b->cq_pos || !b->hz_taken ||
	    !b->plan_order || !b->plan_group_end || !b->plan_launch_end || !b->seq_order ||
	    !b->seq_ends)
		return VYRE_E_NOMEM;
	return 0;
}

static void batch_fini(struct vyre_batch *b)
{
	free(b->sqes);
	free(b->cqe_src);
	free(b->items);
	free(b->exec);
	free(b->results);
	free(b->status);
	free(b->domain);
	free(b->flags);
	free(b->conn);
	free(b->dedup_of);
	free(b->table_gen);
	free(b->aux);
	free(b->group_of);
	free(b->touched);
	free(b->first);
	free(b->count);
	free(b->cq_pos);
	free(b->hz_taken);
	free(b->plan_order);
	free(b->plan_group_end);
	free(b->plan_launch_end);
	free(b->seq_order);
	free(b->seq_ends);
	memset(b, 0, sizeof(*b));
}

/*
 * One slot is required; more are taken while memory allows, since fewer
 * slots only mean fewer batches in flight.
 */
int vyre_pipeline_init(struct vyre_daemon *d)
{
	const uint32_t want = d->cfg.inflight;

	d->slots = calloc(want, sizeof(*d->slots));
	d->done = calloc(want, sizeof(*d->done));
	d->wake = calloc(d->n_conn_slots, sizeof(*d->wake));
	d->drop = calloc(d->n_conn_slots, sizeof(*d->drop));
	d->ready = calloc(d->n_conn_slots, sizeof(*d->ready));
	if (!d->slots || !d->done || !d->wake || !d->drop || !d->ready)
		return VYRE_E_NOMEM;
	for (d->n_slots = 0; d->n_slots < want; d->n_slots++) {
		struct vyre_batch *b = &d->slots[d->n_slots];

		if (batch_init(b, d->n_slots, d->cfg.max_batch) != 0) {
			batch_fini(b);
			break;
		}
	}
	if (d->n_slots == 0)
		return VYRE_E_NOMEM;
	if (d->n_slots < want)
		vyre_log("--inflight %u: memory for %u batches of %u items only", want, d->n_slots,
			 d->cfg.max_batch);
	d->client_batches = d->cfg.client_batches < d->n_slots ? d->cfg.client_batches : d->n_slots;
	if (vyre_transients_init(&d->transients, d->cfg.max_buffers) != 0 ||
	    vyre_disjoint_init(&d->disjoint, d->cfg.max_buffers) != 0)
		return VYRE_E_NOMEM;
	return vyre_hazards_init(&d->hazards, d->cfg.max_buffers);
}

void vyre_pipeline_fini(struct vyre_daemon *d)
{
	for (uint32_t s = 0; s < d->n_slots; s++)
		batch_fini(&d->slots[s]);
	free(d->slots);
	free(d->done);
	free(d->wake);
	free(d->drop);
	free(d->ready);
	vyre_hazards_fini(&d->hazards);
	vyre_transients_fini(&d->transients);
	vyre_disjoint_fini(&d->disjoint);
	d->slots = NULL;
	d->n_slots = 0;
}

static void count_plan(struct vyre_plan_totals *t, const struct vyre_batch *b)
{
	/* of the items it ran, those that ran into VYRE_E_INVAL are invalid (docs/design.md 9) */
	const uint32_t ran_invalid =
	    b->stats.exec_invalid < b->plan.n_order ? b->stats.exec_invalid : b->plan.n_order;

	t->items += b->n_accepted;
	t->executed += b->plan.n_order - ran_invalid;
	t->deduped += b->stats.deduped;
	t->groups += b->plan.n_groups;
	t->barriers += b->plan.n_groups ? b->plan.n_groups - 1 : 0;
	t->launches += b->plan.n_launches;
	/* an accepted item ran, was satisfied by another, or was refused */
	const uint32_t settled = b->plan.n_order + b->stats.deduped;

	t->invalid += (b->n_accepted > settled ? b->n_accepted - settled : 0) + ran_invalid;
	/* per item only where something was deduplicated: the common batch pays nothing */
	for (uint32_t i = 0; b->stats.deduped && i < b->n_accepted; i++) {
		const struct vyre_exec_item *it = &b->exec[i];

		if (b->status[i] == 0 && b->dedup_of[i] != VYRE_PLAN_NO_DEDUPE)
			t->bytes_deduped +=
			    (uint64_t)it->in_bytes + it->out_bytes + it->table_bytes;
	}
}

static void complete(struct vyre_daemon *d, struct vyre_batch *b)
{
	uint64_t t = vyre_now_ns();

	b->stats.execute_ns = t - b->dispatch_ns;
	vyre_stage_complete(d, b, t);
	b->stats.complete_ns = vyre_now_ns() - t;
	d->batches++;
	d->items_total += b->n_accepted;
	count_plan(&d->plan_totals, b);
	d->stage_ns[0] += b->stats.drain_ns;
	d->stage_ns[1] += b->stats.resolve_ns;
	d->stage_ns[2] += b->stats.plan_ns;
	d->stage_ns[3] += b->stats.execute_ns;
	d->stage_ns[4] += b->stats.complete_ns;
}

static int reap(struct vyre_daemon *d, int64_t timeout_ns)
{
	int items = 0;

	if (d->n_running == 0)
		return 0;
	int n = d->backend_ops->reap(d->backend, d->done, d->n_slots, timeout_ns);

	for (int k = 0; k < n; k++) {
		const uint32_t s = d->done[k].slot;
		struct vyre_batch *b = s < d->n_slots ? &d->slots[s] : NULL;

		if (!b || !b->running) {
			vyre_log("backend %s reported slot %u, which runs nothing: ignored",
				 d->backend_ops->name, s);
			continue;
		}
		vyre_stage_finish(d, b, d->done[k].status);
		b->running = 0;
		__atomic_sub_fetch(&d->inflight_items, b->n_accepted, __ATOMIC_RELAXED);
		d->n_running--;
		d->running_class[b->priority]--;
		complete(d, b);
		items += (int)b->n_accepted;
	}
	if (n < 0)
		vyre_log("backend %s: reap failed: %s", d->backend_ops->name, vyre_strerror(n));
	return items;
}

static struct vyre_batch *free_slot(struct vyre_daemon *d)
{
	if (d->n_running == d->n_slots)
		return NULL;
	for (uint32_t s = 0; s < d->n_slots; s++)
		if (!d->slots[s].running)
			return &d->slots[s];
	return NULL;
}

/* Drain, resolve, plan and start one batch; returns the items it accepted. */
static int dispatch_one(struct vyre_daemon *d, struct vyre_batch *b)
{
	uint64_t t[4];

	memset(&b->stats, 0, sizeof(b->stats));
	b->released = 0;
	vyre_stage_drain(d, b);
	if (b->n == 0)
		return 0;
	b->stats.seq = d->batch_seq++ * d->sh->n_loops + d->loop_index + 1;
	t[0] = b->drain_ns;
	t[1] = vyre_now_ns();
	vyre_stage_resolve(d, b);
	t[2] = vyre_now_ns();
	vyre_stage_plan(d, b, t[2]);
	t[3] = vyre_now_ns();
	b->stats.drain_ns = t[1] - t[0];
	b->stats.resolve_ns = t[2] - t[1];
	b->stats.plan_ns = t[3] - t[2];
	b->dispatch_ns = t[3];
	int running = vyre_stage_dispatch(d, b);

	d->submit_ns += vyre_now_ns() - t[3];
	if (running) {
		b->running = 1;
		__atomic_add_fetch(&d->inflight_items, b->n_accepted, __ATOMIC_RELAXED);
		if (++d->n_running > d->most_running)
			d->most_running = d->n_running;
		d->running_class[b->priority]++;
	} else {
		complete(d, b);
	}
	return (int)b->n_accepted;
}

int vyre_pipeline_step(struct vyre_daemon *d, int64_t timeout_ns)
{
	int items = reap(d, 0);
	struct vyre_batch *b;

	/* a lost GPU takes no new batch (gpus.h) */
	while (!d->gpu_down && (b = free_slot(d)) != NULL) {
		int n = dispatch_one(d, b);

		if (n == 0)
			break;
		items += n;
	}
	if (items == 0 && timeout_ns != 0)
		items = reap(d, timeout_ns);
	return items;
}
