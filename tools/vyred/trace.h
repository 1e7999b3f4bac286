/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/trace.h - where vyred fires its USDT probes (probes.h).
 *
 * One call per pipeline stage, made unconditionally by the stage; each is an
 * inline check of the probe semaphores that calls into trace.c only while a
 * tracer is attached, so an untraced batch pays a few loads and branches and
 * a VYRE_PROBES=0 build pays nothing. Per CQE there is one inline test of a
 * flag the batch computed once. Probe arguments are documented in
 * include/vyre/telemetry.h; the batch id is the number the batch got when it
 * was drained (b->stats.seq); batches in flight complete in any order.
 */
#ifndef VYRED_TRACE_H
#define VYRED_TRACE_H

#include "daemon.h"
#include "probes.h"

/* Per batch: SQ full / CQ full back-pressure of every client, after draining. */
void vyre_trace_pressure_fire(struct vyre_daemon *d);
static inline void vyre_trace_pressure(struct vyre_daemon *d)
{
	if (VYRE_PROBE_ENABLED(backpressure))
		vyre_trace_pressure_fire(d);
}

/*
 * Per batch, after the plan stage: batch_drained per client (its accepted
 * items), arena back-pressure for items left in the rings, dedupe, plan.
 */
/* @start: when the plan stage began (the clock is read only while traced) */
void vyre_trace_plan_fire(struct vyre_daemon *d, const struct vyre_batch *b, uint64_t start);
static inline void vyre_trace_plan(struct vyre_daemon *d, const struct vyre_batch *b,
				   uint64_t start)
{
	if (VYRE_PROBE_ENABLED(batch_drained) || VYRE_PROBE_ENABLED(backpressure) ||
	    VYRE_PROBE_ENABLED(dedupe) || VYRE_PROBE_ENABLED(plan))
		vyre_trace_plan_fire(d, b, start);
}

/*
 * Per batch, when the plan stage reports its arena: bytes this batch's plan
 * used, the arena's size and high-water mark, and whether the arena ran out
 * so the batch was planned shorter.
 */
void vyre_trace_arena_fire(const struct vyre_batch *b, uint64_t used, uint64_t capacity,
			   uint64_t high_water, int shrunk);
static inline void vyre_trace_arena(const struct vyre_batch *b, uint64_t used, uint64_t capacity,
				    uint64_t high_water, int shrunk)
{
	if (VYRE_PROBE_ENABLED(arena))
		vyre_trace_arena_fire(b, used, capacity, high_water, shrunk);
}

void vyre_trace_dispatch_begin_fire(struct vyre_daemon *d, const struct vyre_batch *b);
static inline void vyre_trace_dispatch_begin(struct vyre_daemon *d, const struct vyre_batch *b)
{
	if (VYRE_PROBE_ENABLED(dispatch_begin))
		vyre_trace_dispatch_begin_fire(d, b);
}

/* After the backend ran the batch; @start: when the execute stage began. */
void vyre_trace_dispatch_end_fire(struct vyre_daemon *d, const struct vyre_batch *b, int status,
				  uint64_t start);
static inline void vyre_trace_dispatch_end(struct vyre_daemon *d, const struct vyre_batch *b,
					   int status, uint64_t start)
{
	if (VYRE_PROBE_ENABLED(dispatch_end))
		vyre_trace_dispatch_end_fire(d, b, status, start);
}

/* A daemon-side fault (planner, backend), or a client dropped for a protocol error. */
static inline void vyre_trace_error(uint32_t client_id, pid_t pid, int code)
{
	if (VYRE_PROBE_ENABLED(error))
		VYRE_PROBE_ERROR(client_id, pid, code, 1);
}

/*
 * The GPU and loop a probe names: indexes of the whole vyred (its --gpus
 * list, its loops GPU by GPU), also in a GPU worker, whose own start at 0
 * (docs/design.md 8.8, 9).
 */
static inline uint32_t vyre_trace_gpu(const struct vyre_daemon *d)
{
	return d->gpu + d->cfg.worker_first;
}

static inline uint32_t vyre_trace_loop(const struct vyre_daemon *d)
{
	return (d->sh ? d->cfg.worker_first * d->sh->loops_per_gpu : 0) + d->loop_index;
}

static inline void vyre_trace_connect(const struct vyre_daemon *d, const struct vyre_conn *c)
{
	if (VYRE_PROBE_ENABLED(client_connect))
		VYRE_PROBE_CLIENT_CONNECT(c->id, c->pid, c->uid, c->domain->id, vyre_trace_gpu(d),
					  c->priority);
}

static inline void vyre_trace_disconnect(const struct vyre_conn *c, int reason)
{
	if (VYRE_PROBE_ENABLED(client_disconnect))
		VYRE_PROBE_CLIENT_DISCONNECT(c->id, c->pid, reason);
}

/* The complete stage's accounting of the CQEs it posts. */
struct vyre_trace_cqes {
	int on;	    /* the complete, the error or the ops probe is attached */
	int ops_on; /* the ops probe is */
	uint32_t client_errors;
	int32_t client_code; /* the first failure of the current client */
	uint32_t last;	     /* the ops entry of the previous CQE */
	uint64_t drain_ns;   /* the batch's drain time (struct vyre_batch) */
	struct vyre_tm_complete batch;
	struct vyre_tm_ops ops;
};

void vyre_trace_cqes_begin_fire(struct vyre_trace_cqes *t, const struct vyre_daemon *d,
				const struct vyre_batch *b);
static inline void vyre_trace_cqes_begin(struct vyre_trace_cqes *t, const struct vyre_daemon *d,
					 const struct vyre_batch *b)
{
	t->on =
	    VYRE_PROBE_ENABLED(complete) || VYRE_PROBE_ENABLED(error) || VYRE_PROBE_ENABLED(ops);
	if (t->on)
		vyre_trace_cqes_begin_fire(t, d, b);
}

/* A CQE of an op other than the previous CQE's: find or add its entry (trace.c). */
void vyre_trace_op_slot(struct vyre_trace_cqes *t, uint32_t op);

/* One CQE posted for @sqe (the batch's copy); untraced, one test of t->on. */
static inline void vyre_trace_cqe(struct vyre_trace_cqes *t, const struct vyre_sqe *sqe,
				  const struct vyre_cqe *cqe)
{
	if (!t->on)
		return;
	vyre_tm_complete_add(&t->batch, sqe->submit_ns, cqe);
	if (cqe->status != 0 && t->client_errors++ == 0)
		t->client_code = cqe->status;
	if (!t->ops_on)
		return;
	if (t->last >= t->ops.n_ops || t->ops.op[t->last].op != sqe->item.op_handle)
		vyre_trace_op_slot(t, sqe->item.op_handle);
	vyre_tm_op_add(&t->ops.op[t->last], sqe->submit_ns, t->drain_ns, cqe);
}

/* After the CQEs of one client: the error probe, when some failed. */
void vyre_trace_client_done_fire(struct vyre_trace_cqes *t, const struct vyre_conn *c);
static inline void vyre_trace_client_done(struct vyre_trace_cqes *t, const struct vyre_conn *c)
{
	if (t->on && t->client_errors)
		vyre_trace_client_done_fire(t, c);
}

/*
 * After the batch's CQEs: complete, whose exec_invalid is the complete
 * stage's own count (the batch's stats.exec_invalid, which the exit log
 * sums too), so every reader splits items the same way.
 */
static inline void vyre_trace_cqes_end(struct vyre_trace_cqes *t, uint32_t exec_invalid)
{
	if (t->on && VYRE_PROBE_ENABLED(complete)) {
		t->batch.exec_invalid = exec_invalid;
		VYRE_PROBE_COMPLETE(&t->batch);
	}
	if (t->on && t->ops_on && t->ops.n_ops)
		VYRE_PROBE_OPS(&t->ops);
}

/*
 * gpu_state: this loop's view of its GPU (struct vyre_tm_gpu). The loop
 * calls it once a second from its timer; fault handling calls it at once
 * when the GPU is lost, so a tracer sees the loss before the next tick.
 */
void vyre_trace_gpu_state_fire(struct vyre_daemon *d);
static inline void vyre_trace_gpu_state(struct vyre_daemon *d)
{
	if (VYRE_PROBE_ENABLED(gpu_state))
		vyre_trace_gpu_state_fire(d);
}

/*
 * op_info: every op this vyred runs, one record each, so that a tracer can
 * name module ops. Each process's loop 0 calls it once a second from the
 * same timer as gpu_state.
 */
void vyre_trace_op_info_fire(void);
static inline void vyre_trace_op_info(const struct vyre_daemon *d)
{
	if (d->loop_index == 0 && VYRE_PROBE_ENABLED(op_info))
		vyre_trace_op_info_fire();
}

#endif /* VYRED_TRACE_H */
