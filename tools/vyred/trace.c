/* SPDX-License-Identifier: MIT */
/*
 * The out-of-line halves of trace.h: only reached while a tracer is
 * attached, so they may walk the connection table and fill structs.
 * Everything read from a client region is read once and clamped.
 */
#include <stddef.h>
#include <string.h>

#include "../../gpu/op_modules.h"
#include "../../gpu/ops.h"
#include "opmod_manifest.h"
#include "trace.h"

/* SQEs reserved or published and not yet consumed: tail - head, at most a ring. */
static uint32_t sq_waiting(const struct vyre_sq_consumer *sq)
{
	uint32_t tail = __atomic_load_n(&sq->hdr->sq_tail, __ATOMIC_ACQUIRE);
	uint32_t n = tail - sq->head;
	return n > sq->entries ? sq->entries : n;
}

void vyre_trace_pressure_fire(struct vyre_daemon *d)
{
	for (uint32_t s = 0; s < d->n_conn_slots; s++) {
		struct vyre_conn *c = &d->conns[s];
		if (c->state != VYRE_CONN_ACTIVE)
			continue;
		uint32_t waiting = sq_waiting(&c->sq);
		int space = vyre_cq_space(&c->cq);
		if (waiting >= c->sq.entries)
			VYRE_PROBE_BACKPRESSURE(c->id, c->pid, VYRE_TM_BP_SQ_FULL, waiting);
		else if (waiting > 0 && space >= 0 && (uint32_t)space <= c->inflight)
			VYRE_PROBE_BACKPRESSURE(c->id, c->pid, VYRE_TM_BP_CQ_FULL, waiting);
	}
}

static void fire_drains(struct vyre_daemon *d, const struct vyre_batch *b, uint64_t batch_id)
{
	for (uint32_t t = 0; t < b->n_touched; t++) {
		struct vyre_conn *c = &d->conns[b->touched[t]];
		/* Clients are contiguous in batch order: this one drained up to the next one. */
		uint32_t end = t + 1 < b->n_touched ? b->first[t + 1] : b->n;
		uint32_t drained = end > b->first[t] ? end - b->first[t] : 0;
		uint32_t left = drained > b->count[t] ? drained - b->count[t] : 0;
		uint32_t waiting = sq_waiting(&c->sq);
		int space = vyre_cq_space(&c->cq);

		if (b->count[t] && VYRE_PROBE_ENABLED(batch_drained)) {
			struct vyre_tm_drain dr = {
			    .bytes = sizeof(dr),
			    .client_id = c->id,
			    .pid = (uint32_t)c->pid,
			    .domain_id = c->domain ? c->domain->id : 0,
			    .batch_id = batch_id,
			    .items = b->count[t],
			    .sq_depth = waiting > b->count[t] ? waiting - b->count[t] : 0,
			    .sq_entries = c->sq.entries,
			    .cq_free = space > 0 ? (uint32_t)space : 0,
			};
			VYRE_PROBE_BATCH_DRAINED(&dr);
		}
		if (left && VYRE_PROBE_ENABLED(backpressure))
			VYRE_PROBE_BACKPRESSURE(c->id, c->pid, VYRE_TM_BP_ARENA, left);
	}
}

void vyre_trace_plan_fire(struct vyre_daemon *d, const struct vyre_batch *b, uint64_t start)
{
	uint64_t batch_id = b->stats.seq;
	const struct vyre_exec_plan *p = &b->plan;

	fire_drains(d, b, batch_id);
	if (VYRE_PROBE_ENABLED(dedupe))
		VYRE_PROBE_DEDUPE(batch_id, b->n_accepted, b->stats.deduped);
	if (!VYRE_PROBE_ENABLED(plan))
		return;
	uint32_t invalid = 0;
	for (uint32_t i = 0; i < b->n_accepted; i++)
		invalid += b->status[i] != 0;
	struct vyre_tm_plan tp = {
	    .bytes = sizeof(tp),
	    .items = b->n_accepted,
	    .batch_id = batch_id,
	    .executed = p->n_order,
	    .deduped = b->stats.deduped,
	    .invalid = invalid,
	    .groups = p->n_groups,
	    .barriers = p->n_groups ? p->n_groups - 1 : 0,
	    .launches = p->n_launches,
	    .launches_avoided = p->n_groups > p->n_launches ? p->n_groups - p->n_launches : 0,
	    .frontier_splits = b->stats.frontier_splits,
	    .bytes_avoided = b->stats.bytes_avoided,
	    .plan_ns = vyre_now_ns() - start,
	    .readback_bytes = b->stats.readback_bytes,
	};
	VYRE_PROBE_PLAN(&tp);
}

void vyre_trace_arena_fire(const struct vyre_batch *b, uint64_t used, uint64_t capacity,
			   uint64_t high_water, int shrunk)
{
	struct vyre_tm_arena a = {
	    .bytes = sizeof(a),
	    .shrunk = shrunk != 0,
	    .batch_id = b->stats.seq,
	    .used = used,
	    .capacity = capacity,
	    .high_water = high_water,
	};
	VYRE_PROBE_ARENA(&a);
}

static void backend_mode(const struct vyre_daemon *d, uint32_t *backend, uint32_t *mode)
{
	int cpu = d->backend_ops == &vyre_cpu_backend;
	*backend = cpu ? VYRE_TM_BACKEND_CPU : VYRE_TM_BACKEND_CUDA;
	*mode = cpu				  ? VYRE_TM_MODE_NONE
		: d->cfg.mode == VYRE_CUDA_LAUNCH ? VYRE_TM_MODE_LAUNCH
						  : VYRE_TM_MODE_PERSISTENT;
}

void vyre_trace_dispatch_begin_fire(struct vyre_daemon *d, const struct vyre_batch *b)
{
	uint32_t backend, mode;
	backend_mode(d, &backend, &mode);
	VYRE_PROBE_DISPATCH_BEGIN(b->stats.seq, b->plan.n_launches, backend, mode,
				  vyre_trace_gpu(d));
}

void vyre_trace_dispatch_end_fire(struct vyre_daemon *d, const struct vyre_batch *b, int status,
				  uint64_t start)
{
	uint32_t backend, mode;
	backend_mode(d, &backend, &mode);
	VYRE_PROBE_DISPATCH_END(b->stats.seq, status, b->plan.n_order, vyre_now_ns() - start,
				backend, mode, vyre_trace_gpu(d));
}

void vyre_trace_cqes_begin_fire(struct vyre_trace_cqes *t, const struct vyre_daemon *d,
				const struct vyre_batch *b)
{
	memset(&t->batch, 0, sizeof(t->batch));
	t->batch.bytes = sizeof(t->batch);
	t->batch.batch_id = b->stats.seq;
	t->batch.priority = b->priority;
	t->batch.gpu = vyre_trace_gpu(d);
	t->batch.loop = vyre_trace_loop(d);
	t->client_errors = 0;
	t->client_code = 0;
	t->ops_on = VYRE_PROBE_ENABLED(ops);
	if (!t->ops_on)
		return;
	memset(&t->ops, 0, offsetof(struct vyre_tm_ops, op));
	t->ops.bytes = sizeof(t->ops);
	t->ops.batch_id = t->batch.batch_id;
	t->ops.gpu = t->batch.gpu;
	t->ops.loop = t->batch.loop;
	t->last = 0;
	t->drain_ns = b->drain_ns;
}

/* @op as the ops probe names it: an op of this vyred, or VYRE_TM_OP_UNKNOWN. */
static uint32_t known_op(uint32_t op)
{
	return op < VYRE_OP_COUNT || vyre_op_module(op) ? op : VYRE_TM_OP_UNKNOWN;
}

/* The entry of @op in @o, or -1. */
static int32_t op_entry(const struct vyre_tm_ops *o, uint32_t op)
{
	for (uint32_t k = 0; k < o->n_ops; k++)
		if (o->op[k].op == op)
			return (int32_t)k;
	return -1;
}

/*
 * An op of the batch is looked up in the registry once, when its entry is
 * made: a CQE of an op that has an entry finds it by number (an unknown
 * number's entry is VYRE_TM_OP_UNKNOWN's, found by a second look).
 */
void vyre_trace_op_slot(struct vyre_trace_cqes *t, uint32_t op)
{
	struct vyre_tm_ops *o = &t->ops;
	int32_t k = op_entry(o, op);
	const uint32_t want = k < 0 ? known_op(op) : op;

	if (k < 0 && want != op)
		k = op_entry(o, want);
	if (k >= 0) {
		t->last = (uint32_t)k;
		return;
	}
	if (o->n_ops == VYRE_TM_OPS_MAX) {
		/* full: this part goes out, the rest of the batch follows in the next */
		VYRE_PROBE_OPS(o);
		o->part++;
		o->n_ops = 0;
	}
	t->last = o->n_ops++;
	memset(&o->op[t->last], 0, sizeof(o->op[0]));
	o->op[t->last].op = want;
}

void vyre_trace_client_done_fire(struct vyre_trace_cqes *t, const struct vyre_conn *c)
{
	if (VYRE_PROBE_ENABLED(error))
		VYRE_PROBE_ERROR(c->id, c->pid, t->client_code, t->client_errors);
	t->client_errors = 0;
	t->client_code = 0;
}

static uint32_t live_domains(const struct vyre_daemon *d)
{
	uint32_t n = 0;
	for (uint32_t s = 0; d->domains && s < d->cfg.max_domains; s++)
		n += d->domains[s].live != 0;
	return n;
}

/*
 * The GPU's own figures (docs/design.md 8.8). A loop whose GPU table is not
 * filled in (no --gpus list: a test's lone loop) reports zeros and its own
 * view of the loss.
 */
static void gpu_figures(const struct vyre_daemon *d, struct vyre_tm_gpu *g)
{
	const struct vyre_shared *sh = d->sh;

	g->lost = d->gpu_down != 0;
	if (!sh || d->gpu >= sh->n_gpus)
		return;
	const struct vyre_gpu *gp = &sh->gpus[d->gpu];
	g->ordinal = gp->ordinal;
	g->loops_per_gpu = gp->n_loops;
	g->lost |= __atomic_load_n(&gp->lost, __ATOMIC_RELAXED) != 0;
	g->device_bytes_max = __atomic_load_n(&gp->device_bytes_max, __ATOMIC_RELAXED);
	g->device_bytes_used = __atomic_load_n(&gp->device_bytes_used, __ATOMIC_RELAXED);
	_Static_assert(sizeof(g->name) >= sizeof(gp->name), "GPU name fits the record");
	memcpy(g->name, gp->name, sizeof(gp->name));
	g->name[sizeof(g->name) - 1] = '\0';
}

void vyre_trace_gpu_state_fire(struct vyre_daemon *d)
{
	struct vyre_tm_gpu g;

	memset(&g, 0, sizeof(g));
	g.bytes = sizeof(g);
	g.gpu = vyre_trace_gpu(d);
	g.loop = vyre_trace_loop(d);
	backend_mode(d, &g.backend, &g.mode);
	g.slots = d->n_slots;
	g.running = d->n_running;
	g.domains = live_domains(d);
	g.clients = d->n_active;
	g.batches = d->batches;
	g.items = d->items_total;
	gpu_figures(d, &g);
	g.time_ns = vyre_now_ns();
	VYRE_PROBE_GPU_STATE(&g);
}

static void op_info_copy(char *dst, const char *src)
{
	size_t n = src ? strnlen(src, VYRE_TM_OP_NAME_MAX - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

void vyre_trace_op_info_fire(void)
{
	uint32_t n_mod = 0;
	const struct vyre_op_module_entry *m = vyre_op_modules_all(&n_mod);
	struct vyre_tm_op_info r;

	_Static_assert(VYRE_OP_NAME_MAX + 1 <= VYRE_TM_OP_NAME_MAX, "op names fit op_info");
	for (uint32_t i = 0; i < VYRE_OP_COUNT + n_mod; i++) {
		memset(&r, 0, sizeof(r));
		r.bytes = sizeof(r);
		r.index = i;
		r.count = VYRE_OP_COUNT + n_mod;
		if (i < VYRE_OP_COUNT) {
			r.op = i;
			r.flags = vyre_op_pure(i) ? VYRE_TM_OP_F_PURE : 0;
			op_info_copy(r.name, vyre_opmod_builtin(i));
		} else {
			const struct vyre_op_module_entry *e = &m[i - VYRE_OP_COUNT];
			r.op = e->number;
			r.flags = VYRE_TM_OP_F_MODULE | (e->pure ? VYRE_TM_OP_F_PURE : 0);
			op_info_copy(r.name, e->name);
			op_info_copy(r.module, e->module);
		}
		VYRE_PROBE_OP_INFO(&r);
	}
}
