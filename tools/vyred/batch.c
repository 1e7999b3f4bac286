/* SPDX-License-Identifier: MIT */
/* The batch arrays, allocated once, and one pass of the pipeline. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

int vyre_batch_init(struct vyre_batch *b, uint32_t cap)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap;
	b->sqes = calloc(cap, sizeof(*b->sqes));
	b->items = calloc(cap, sizeof(*b->items));
	b->exec = calloc(cap, sizeof(*b->exec));
	b->results = calloc(cap, sizeof(*b->results));
	b->status = calloc(cap, sizeof(*b->status));
	b->domain = calloc(cap, sizeof(*b->domain));
	b->flags = calloc(cap, sizeof(*b->flags));
	b->conn = calloc(cap, sizeof(*b->conn));
	b->dedup_of = calloc(cap, sizeof(*b->dedup_of));
	b->touched = calloc(cap, sizeof(*b->touched));
	b->seq_order = calloc(cap, sizeof(*b->seq_order));
	b->seq_ends = calloc(cap, sizeof(*b->seq_ends));
	if (!b->sqes || !b->items || !b->exec || !b->results || !b->status || !b->domain ||
	    !b->flags || !b->conn || !b->dedup_of || !b->touched || !b->seq_order || !b->seq_ends) {
		vyre_batch_fini(b);
		return VYRE_E_NOMEM;
	}
	return 0;
}

void vyre_batch_fini(struct vyre_batch *b)
{
	free(b->sqes);
	free(b->items);
	free(b->exec);
	free(b->results);
	free(b->status);
	free(b->domain);
	free(b->flags);
	free(b->conn);
	free(b->dedup_of);
	free(b->touched);
	free(b->seq_order);
	free(b->seq_ends);
	memset(b, 0, sizeof(*b));
}

int vyre_pipeline_run(struct vyre_daemon *d)
{
	struct vyre_batch *b = &d->batch;

	uint64_t t[6];

	t[0] = vyre_now_ns();
	memset(&b->stats, 0, sizeof(b->stats));
	b->released = 0;
	vyre_stage_drain(d, b);
	if (b->n == 0)
		return 0;
	t[1] = vyre_now_ns();
	vyre_stage_resolve(d, b);
	t[2] = vyre_now_ns();
	vyre_stage_plan(d, b, t[2]);
	t[3] = vyre_now_ns();
	vyre_stage_execute(d, b, t[3]);
	t[4] = vyre_now_ns();
	vyre_stage_complete(d, b, t[4]);
	t[5] = vyre_now_ns();
	b->stats.drain_ns = t[1] - t[0];
	b->stats.resolve_ns = t[2] - t[1];
	b->stats.plan_ns = t[3] - t[2];
	b->stats.execute_ns = t[4] - t[3];
	b->stats.complete_ns = t[5] - t[4];
	b->stats.seq = ++d->batches;
	d->items_total += b->n_accepted;
	d->stage_ns[0] += b->stats.drain_ns;
	d->stage_ns[1] += b->stats.resolve_ns;
	d->stage_ns[2] += b->stats.plan_ns;
	d->stage_ns[3] += b->stats.execute_ns;
	d->stage_ns[4] += b->stats.complete_ns;
	return (int)b->n_accepted;
}
