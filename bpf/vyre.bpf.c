// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * bpf/vyre.bpf.c - aggregates vyred's USDT probes for vyre-top.
 *
 * One BPF_USDT program per probe of include/vyre/telemetry.h except dedupe
 * and dispatch_begin, whose figures plan and dispatch_end carry too: every
 * uprobe hit costs vyred about half a microsecond, so a batch costs four
 * (batch_drained per client, plan, dispatch_end, complete) plus arena, and
 * ops (per-op items, five then), and each loop adds one gpu_state a second
 * (loop 0 one op_info per op too). The
 * maps are described in bpf/vyre_bpf.h; the per-item latency distribution
 * arrives already bucketed by vyred.
 *
 * Struct arguments are copied out of vyred with bpf_probe_read_user and used
 * only when their leading size field equals the size this program was built
 * with (the layouts themselves are asserted in telemetry.h, which this file
 * includes for the BPF target); anything else counts as a layout error.
 *
 * No kernel types are used (arguments come through libbpf's USDT argument
 * specs and user memory reads), so the program needs no vmlinux.h and no
 * kernel BTF.
 *
 * It may be attached to several vyred processes at once (a supervisor's GPU
 * workers, docs/design.md 8.8): batch ids are each process's own, so a
 * batch in flight is keyed by its process too, and the GPU numbers a worker
 * fires are turned into --gpus indexes through the workers map.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "vyre_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set by the loader before load: batches at or over this many ns are reported. */
const volatile uint64_t slow_batch_ns = 10000000;

struct vyre_bpf_inflight {
	struct vyre_tm_plan plan;
	uint64_t dispatch_ns;
	uint32_t have_plan;
	uint32_t pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VYRE_BPF_HIST_COUNT);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_gauges);
} gauges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, VYRE_BPF_MAX_CLIENTS);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_client);
} clients SEC(".maps");

/*
 * Per-batch figures between plan and complete: the executed count (complete
 * adds plan's executed less its exec_invalid) and slow-batch events. Not an
 * LRU map: an LRU hash evicts live entries before it is full once CPUs hold
 * its free nodes, and a lost entry would lose a batch's executed items.
 * complete deletes each entry (vyre-top attaches complete before plan, so
 * none is left behind); at most VYRE_BPF_MAX_INFLIGHT are live.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VYRE_BPF_MAX_INFLIGHT);
	__type(key, struct vyre_bpf_batch_key);
	__type(value, struct vyre_bpf_inflight);
} inflight SEC(".maps");

/* The complete struct is too big for the BPF stack next to everything else. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, struct vyre_tm_complete);
} complete_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VYRE_BPF_MAX_GPUS);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_gpu);
} gpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VYRE_BPF_CLASSES);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_class);
} classes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VYRE_BPF_MAX_LOOPS);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_loop);
} loops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VYRE_BPF_MAX_WORKERS);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_worker);
} workers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VYRE_BPF_MAX_OPS);
	__type(key, uint32_t);
	__type(value, struct vyre_bpf_op);
} ops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VYRE_BPF_MAX_OPS);
	__type(key, uint32_t);
	__type(value, struct vyre_tm_op_info);
} op_names SEC(".maps");

/* The ops struct is too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, struct vyre_tm_ops);
} ops_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VYRE_BPF_SLOW_RING);
} slow SEC(".maps");

#define ADD(field, value) __sync_fetch_and_add(&(field), (value))

static __always_inline struct vyre_bpf_counters *counters_get(void)
{
	uint32_t zero = 0;
	return bpf_map_lookup_elem(&counters, &zero);
}

static __always_inline struct vyre_bpf_gauges *gauges_get(void)
{
	uint32_t zero = 0;
	return bpf_map_lookup_elem(&gauges, &zero);
}

/* Bit length of @v clamped to the last bucket: the bucket rule of telemetry.h. */
static __always_inline uint32_t bucket_of(uint64_t v)
{
	uint32_t bits = 0;
	if (v >> 32) {
		bits += 32;
		v >>= 32;
	}
	if (v >> 16) {
		bits += 16;
		v >>= 16;
	}
	if (v >> 8) {
		bits += 8;
		v >>= 8;
	}
	if (v >> 4) {
		bits += 4;
		v >>= 4;
	}
	if (v >> 2) {
		bits += 2;
		v >>= 2;
	}
	if (v >> 1) {
		bits += 1;
		v >>= 1;
	}
	bits += (uint32_t)v;
	return bits < VYRE_BPF_HIST_BUCKETS ? bits : VYRE_BPF_HIST_BUCKETS - 1;
}

static __always_inline void hist_add(uint32_t id, uint64_t value)
{
	struct vyre_bpf_hist *h = bpf_map_lookup_elem(&hists, &id);
	if (!h)
		return;
	uint32_t b = bucket_of(value) & (VYRE_BPF_HIST_BUCKETS - 1);
	ADD(h->bucket[b], 1);
}

static __always_inline struct vyre_bpf_client *client_get(uint32_t id)
{
	struct vyre_bpf_client *c = bpf_map_lookup_elem(&clients, &id);
	if (c)
		return c;
	struct vyre_bpf_client fresh = {};
	bpf_map_update_elem(&clients, &id, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&clients, &id);
}

static __always_inline uint32_t current_tgid(void)
{
	return (uint32_t)(bpf_get_current_pid_tgid() >> 32);
}

/* @gpu as the firing process numbers it, as its index in --gpus (struct vyre_bpf_worker) */
static __always_inline uint32_t gpu_index(uint32_t gpu)
{
	uint32_t tgid = current_tgid();
	const struct vyre_bpf_worker *w = bpf_map_lookup_elem(&workers, &tgid);
	if (!w || gpu >= w->n_gpus || gpu >= VYRE_BPF_MAX_GPUS)
		return gpu;
	return w->gpu[gpu & (VYRE_BPF_MAX_GPUS - 1)];
}

static __always_inline struct vyre_bpf_batch_key batch_key(uint64_t batch_id)
{
	struct vyre_bpf_batch_key k = {.batch_id = batch_id, .tgid = current_tgid()};
	return k;
}

static __always_inline struct vyre_bpf_inflight *inflight_get(uint64_t batch_id)
{
	struct vyre_bpf_batch_key k = batch_key(batch_id);
	struct vyre_bpf_inflight *f = bpf_map_lookup_elem(&inflight, &k);
	if (f)
		return f;
	struct vyre_bpf_inflight fresh = {};
	bpf_map_update_elem(&inflight, &k, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&inflight, &k);
}

/* Copy a struct argument; 0 when it was readable and of our layout. */
static __always_inline int read_arg(void *dst, uint32_t size, const void *src,
				    struct vyre_bpf_counters *ctr)
{
	if (bpf_probe_read_user(dst, size, src) != 0 || *(const uint32_t *)dst != size) {
		ADD(ctr->layout_errors, 1);
		return -1;
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_batch_drained, const struct vyre_tm_drain *arg)
{
	struct vyre_bpf_counters *ctr = counters_get();
	struct vyre_tm_drain d;
	if (!ctr || read_arg(&d, sizeof(d), arg, ctr) != 0)
		return 0;
	ADD(ctr->items, d.items);
	struct vyre_bpf_client *c = client_get(d.client_id);
	if (!c)
		return 0;
	ADD(c->items, d.items);
	ADD(c->drains, 1);
	c->pid = d.pid;
	c->worker = current_tgid();
	c->domain_id = d.domain_id;
	c->sq_depth = d.sq_depth;
	c->sq_entries = d.sq_entries;
	c->cq_free = d.cq_free;
	c->updated_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_plan, const struct vyre_tm_plan *arg)
{
	struct vyre_bpf_counters *ctr = counters_get();
	struct vyre_tm_plan p;
	if (!ctr || read_arg(&p, sizeof(p), arg, ctr) != 0)
		return 0;
	ADD(ctr->deduped, p.deduped);
	/* complete adds executed and the invalid items caught at execution (count_ran) */
	ADD(ctr->invalid, p.invalid);
	ADD(ctr->groups, p.groups);
	ADD(ctr->barriers, p.barriers);
	ADD(ctr->launches, p.launches);
	ADD(ctr->launches_avoided, p.launches_avoided);
	ADD(ctr->frontier_splits, p.frontier_splits);
	ADD(ctr->bytes_avoided, p.bytes_avoided);
	ADD(ctr->readback_bytes, p.readback_bytes);
	ADD(ctr->plan_ns, p.plan_ns);
	hist_add(VYRE_BPF_HIST_PLAN, p.plan_ns);
	struct vyre_bpf_inflight *f = inflight_get(p.batch_id);
	if (f) {
		f->plan = p;
		f->have_plan = 1;
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_arena, const struct vyre_tm_arena *arg)
{
	struct vyre_bpf_counters *ctr = counters_get();
	struct vyre_bpf_gauges *g = gauges_get();
	struct vyre_tm_arena a;
	if (!ctr || !g || read_arg(&a, sizeof(a), arg, ctr) != 0)
		return 0;
	if (a.shrunk)
		ADD(ctr->arena_shrinks, 1);
	g->arena_used = a.used;
	g->arena_capacity = a.capacity;
	g->arena_high_water = a.high_water;
	g->have_arena = 1;
	g->updated_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_dispatch_end, uint64_t batch_id, int32_t status, uint32_t executed,
	     uint64_t dispatch_ns, uint32_t backend, uint32_t mode, uint32_t gpu)
{
	struct vyre_bpf_counters *ctr = counters_get();
	struct vyre_bpf_gauges *g = gauges_get();
	uint32_t index = gpu_index(gpu);
	struct vyre_bpf_gpu *per_gpu = bpf_map_lookup_elem(&gpus, &index);
	if (!ctr)
		return 0;
	ADD(ctr->dispatches, 1);
	ADD(ctr->dispatch_ns, dispatch_ns);
	if (per_gpu) {
		ADD(per_gpu->dispatches, 1);
		ADD(per_gpu->dispatch_ns, dispatch_ns);
	}
	if (status < 0)
		ADD(ctr->dispatch_errors, 1);
	hist_add(VYRE_BPF_HIST_DISPATCH, dispatch_ns);
	if (g) {
		g->backend = backend;
		g->mode = mode;
		g->have_backend = 1;
		g->last_batch_id = batch_id;
		g->updated_ns = bpf_ktime_get_ns();
	}
	struct vyre_bpf_batch_key k = batch_key(batch_id);
	struct vyre_bpf_inflight *f = bpf_map_lookup_elem(&inflight, &k);
	if (f)
		f->dispatch_ns = dispatch_ns;
	return 0;
}

/*
 * Of @plan's executed items, the exec_invalid of @c ran into VYRE_E_INVAL:
 * invalid, not executed (docs/design.md 9), so every item is one of
 * deduped, invalid and executed, as in vyred's exit log.
 */
static __always_inline uint32_t ran_invalid(const struct vyre_tm_plan *plan,
					    const struct vyre_tm_complete *c)
{
	return c->exec_invalid < plan->executed ? c->exec_invalid : plan->executed;
}

/*
 * Counted at complete, when the outcome is known, so both counters only
 * grow; only for a batch whose plan was counted (not one planned before
 * the attach), like its deduped and rejected items.
 */
static __always_inline void count_ran(const struct vyre_bpf_inflight *f,
				      const struct vyre_tm_complete *c,
				      struct vyre_bpf_counters *ctr)
{
	if (!f || !f->have_plan)
		return;
	uint32_t bad = ran_invalid(&f->plan, c);
	ADD(ctr->executed, f->plan.executed - bad);
	ADD(ctr->invalid, bad);
}

static __always_inline void report_slow(const struct vyre_tm_complete *c,
					const struct vyre_bpf_inflight *f,
					struct vyre_bpf_counters *ctr)
{
	struct vyre_bpf_slow_batch *e = bpf_ringbuf_reserve(&slow, sizeof(*e), 0);
	if (!e) {
		ADD(ctr->slow_dropped, 1);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->batch_id = c->batch_id;
	e->max_ns = c->max_ns;
	e->sum_ns = c->sum_ns;
	e->items = c->items;
	e->errors = c->errors;
	e->deduped = c->deduped;
	if (f) {
		e->dispatch_ns = f->dispatch_ns;
		if (f->have_plan) {
			e->have_plan = 1;
			e->plan_ns = f->plan.plan_ns;
			e->bytes_avoided = f->plan.bytes_avoided;
			e->executed = f->plan.executed - ran_invalid(&f->plan, c);
			e->groups = f->plan.groups;
			e->barriers = f->plan.barriers;
			e->launches = f->plan.launches;
			e->launches_avoided = f->plan.launches_avoided;
			e->frontier_splits = f->plan.frontier_splits;
		}
	}
	bpf_ringbuf_submit(e, 0);
}

SEC("usdt")
int BPF_USDT(vyre_complete, const struct vyre_tm_complete *arg)
{
	struct vyre_bpf_counters *ctr = counters_get();
	uint32_t zero = 0;
	struct vyre_tm_complete *c = bpf_map_lookup_elem(&complete_scratch, &zero);
	if (!ctr || !c || read_arg(c, sizeof(*c), arg, ctr) != 0)
		return 0;
	ADD(ctr->batches, 1);
	ADD(ctr->completed, c->items);
	ADD(ctr->failed, c->errors);
	struct vyre_bpf_batch_key k = batch_key(c->batch_id);
	struct vyre_bpf_inflight *f = bpf_map_lookup_elem(&inflight, &k);
	count_ran(f, c, ctr);
	ADD(ctr->latency_ns, c->sum_ns);
	hist_add(VYRE_BPF_HIST_BATCH, c->items);
	uint32_t lat_id = VYRE_BPF_HIST_LATENCY;
	struct vyre_bpf_hist *h = bpf_map_lookup_elem(&hists, &lat_id);
	if (h) {
		for (uint32_t b = 0; b < VYRE_TM_LAT_BUCKETS; b++)
			ADD(h->bucket[b], c->lat[b]);
	}
	uint32_t gpu = gpu_index(c->gpu);
	struct vyre_bpf_gpu *per_gpu = bpf_map_lookup_elem(&gpus, &gpu);
	if (per_gpu) {
		ADD(per_gpu->batches, 1);
		ADD(per_gpu->items, c->items);
		ADD(per_gpu->errors, c->errors);
		ADD(per_gpu->latency_ns, c->sum_ns);
		for (uint32_t b = 0; b < VYRE_TM_LAT_BUCKETS; b++)
			ADD(per_gpu->latency.bucket[b], c->lat[b]);
	}
	uint32_t cls = c->priority;
	struct vyre_bpf_class *per_class = bpf_map_lookup_elem(&classes, &cls);
	if (per_class) {
		ADD(per_class->batches, 1);
		ADD(per_class->items, c->items);
		ADD(per_class->latency_ns, c->sum_ns);
		for (uint32_t b = 0; b < VYRE_TM_LAT_BUCKETS; b++)
			ADD(per_class->latency.bucket[b], c->lat[b]);
	}
	if (c->max_ns >= slow_batch_ns) {
		ADD(ctr->slow_batches, 1);
		report_slow(c, f, ctr);
	}
	if (f)
		bpf_map_delete_elem(&inflight, &k);
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_error, uint32_t client_id, uint32_t pid, int32_t code, uint32_t count)
{
	struct vyre_bpf_counters *ctr = counters_get();
	struct vyre_bpf_gauges *g = gauges_get();
	if (!ctr)
		return 0;
	ADD(ctr->errors, count);
	if (g)
		g->last_error = code;
	if (client_id == 0)
		return 0;
	struct vyre_bpf_client *c = client_get(client_id);
	if (!c)
		return 0;
	ADD(c->errors, count);
	if (pid)
		c->pid = pid;
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_backpressure, uint32_t client_id, uint32_t pid, uint32_t reason, uint32_t depth)
{
	struct vyre_bpf_counters *ctr = counters_get();
	if (!ctr)
		return 0;
	ADD(ctr->backpressure, 1);
	struct vyre_bpf_client *c = client_get(client_id);
	if (!c)
		return 0;
	ADD(c->backpressure, 1);
	if (pid)
		c->pid = pid;
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_client_connect, uint32_t client_id, uint32_t pid, uint32_t uid,
	     uint32_t domain_id, uint32_t gpu, uint32_t priority)
{
	struct vyre_bpf_counters *ctr = counters_get();
	if (!ctr)
		return 0;
	ADD(ctr->connects, 1);
	struct vyre_bpf_client *c = client_get(client_id);
	if (!c)
		return 0;
	c->pid = pid;
	c->uid = uid;
	c->domain_id = domain_id;
	c->gpu = gpu_index(gpu);
	c->priority = priority;
	c->worker = current_tgid();
	c->flags |= VYRE_BPF_CLIENT_CONNECTED;
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_client_disconnect, uint32_t client_id, uint32_t pid, int32_t reason)
{
	struct vyre_bpf_counters *ctr = counters_get();
	if (!ctr)
		return 0;
	ADD(ctr->disconnects, 1);
	struct vyre_bpf_client *c = client_get(client_id);
	if (!c)
		return 0;
	if (pid)
		c->pid = pid;
	c->flags |= VYRE_BPF_CLIENT_DISCONNECTED;
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_gpu_state, const struct vyre_tm_gpu *arg)
{
	struct vyre_bpf_counters *ctr = counters_get();
	struct vyre_bpf_loop l = {};
	if (!ctr || read_arg(&l.state, sizeof(l.state), arg, ctr) != 0)
		return 0;
	ADD(ctr->gpu_states, 1);
	/* a worker's loops and GPUs as numbered across the supervisor's --gpus */
	uint32_t local = l.state.gpu, index = gpu_index(local);
	uint32_t per = l.state.loops_per_gpu ? l.state.loops_per_gpu : 1;
	if (index != local && l.state.loop >= local * per)
		l.state.loop = index * per + (l.state.loop - local * per);
	l.state.gpu = index;
	uint32_t loop = l.state.loop;
	if (loop >= VYRE_BPF_MAX_LOOPS)
		return 0;
	l.updated_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&loops, &loop, &l, BPF_ANY);
	return 0;
}

/*
 * Per op: each entry of a batch's ops record into the op's counters. A
 * batch of more than VYRE_TM_OPS_MAX ops sends several records, each
 * counted alike.
 */
SEC("usdt")
int BPF_USDT(vyre_ops, const struct vyre_tm_ops *arg)
{
	struct vyre_bpf_counters *ctr = counters_get();
	uint32_t zero = 0;
	struct vyre_tm_ops *o = bpf_map_lookup_elem(&ops_scratch, &zero);
	if (!ctr || !o || read_arg(o, sizeof(*o), arg, ctr) != 0)
		return 0;
	uint64_t now = bpf_ktime_get_ns();
	for (uint32_t k = 0; k < VYRE_TM_OPS_MAX; k++) {
		if (k >= o->n_ops)
			break;
		const struct vyre_tm_op_count *e = &o->op[k];
		uint32_t op = e->op;
		struct vyre_bpf_op *a = bpf_map_lookup_elem(&ops, &op);
		if (!a) {
			struct vyre_bpf_op fresh = {};
			bpf_map_update_elem(&ops, &op, &fresh, BPF_NOEXIST);
			a = bpf_map_lookup_elem(&ops, &op);
			if (!a)
				continue;
		}
		a->batches += 1;
		a->items += e->items;
		a->failed += e->failed;
		a->deduped += e->deduped;
		a->latency_ns += e->sum_ns;
		a->drain_ns += e->drain_sum_ns;
		if (e->max_ns > a->max_ns)
			a->max_ns = e->max_ns;
		a->updated_ns = now;
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(vyre_op_info, const struct vyre_tm_op_info *arg)
{
	struct vyre_bpf_counters *ctr = counters_get();
	struct vyre_tm_op_info r;
	if (!ctr || read_arg(&r, sizeof(r), arg, ctr) != 0)
		return 0;
	r.name[VYRE_TM_OP_NAME_MAX - 1] = '\0';
	r.module[VYRE_TM_OP_NAME_MAX - 1] = '\0';
	uint32_t op = r.op;
	bpf_map_update_elem(&op_names, &op, &r, BPF_ANY);
	return 0;
}
