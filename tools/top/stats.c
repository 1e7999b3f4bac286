/* SPDX-License-Identifier: MIT */
/* From two samples to what vyre-top shows: rates, ratios, percentiles, rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

const char *const top_counter_names[TOP_N_COUNTERS] = {
    "batches",		"items",	   "completed",	    "failed",	    "deduped",
    "executed",		"invalid",	   "groups",	    "barriers",	    "launches",
    "launches_avoided", "frontier_splits", "bytes_avoided", "plan_ns",	    "dispatches",
    "dispatch_ns",	"dispatch_errors", "latency_ns",    "errors",	    "backpressure",
    "arena_shrinks",	"connects",	   "disconnects",   "slow_batches", "slow_dropped",
    "layout_errors",	"readback_bytes",  "gpu_states",
};

_Static_assert(sizeof(struct vyre_bpf_counters) % sizeof(uint64_t) == 0, "counters are u64s");

uint64_t top_counter(const struct vyre_bpf_counters *c, size_t i)
{
	uint64_t v;
	memcpy(&v, (const unsigned char *)c + i * sizeof(uint64_t), sizeof(v));
	return v;
}

const char *top_sort_name(enum top_sort s)
{
	static const char *const names[TOP_SORT_COUNT] = {"items/s", "items", "queue", "errors",
							  "pid"};
	return (unsigned)s < TOP_SORT_COUNT ? names[s] : "?";
}

const char *top_backend_word(uint32_t backend)
{
	return backend == VYRE_TM_BACKEND_CUDA	? "cuda"
	       : backend == VYRE_TM_BACKEND_CPU ? "cpu"
						: "?";
}

const char *top_backend_name(const struct vyre_bpf_gauges *g)
{
	return g->have_backend ? top_backend_word(g->backend) : "-";
}

const char *top_mode_name(const struct vyre_bpf_gauges *g)
{
	return g->have_backend ? top_mode_word(g->mode) : "-";
}

const char *top_mode_word(uint32_t mode)
{
	switch (mode) {
	case VYRE_TM_MODE_PERSISTENT:
		return "persistent";
	case VYRE_TM_MODE_LAUNCH:
		return "launch";
	case VYRE_TM_MODE_NONE:
		return "none";
	default:
		return "?";
	}
}

/* The largest value bucket @b holds; the last bucket is open-ended. */
static uint64_t bucket_max(uint32_t b)
{
	if (b == 0)
		return 0;
	return b >= VYRE_BPF_HIST_BUCKETS - 1 ? UINT64_MAX : (1ull << b) - 1;
}

uint64_t top_hist_quantile(const struct vyre_bpf_hist *h, double q)
{
	uint64_t count = 0;
	for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++)
		count += h->bucket[b];
	if (count == 0)
		return 0;
	double want = ceil(q * (double)count);
	uint64_t rank = want < 1.0 ? 1 : want >= (double)count ? count : (uint64_t)want;
	uint64_t seen = 0;
	for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank)
			return bucket_max(b);
	}
	return bucket_max(VYRE_BPF_HIST_BUCKETS - 1);
}

void top_hist_percentiles(const struct vyre_bpf_hist *h, struct top_percentiles *out)
{
	out->count = 0;
	for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++)
		out->count += h->bucket[b];
	out->p50 = top_hist_quantile(h, 0.50);
	out->p99 = top_hist_quantile(h, 0.99);
	out->p999 = top_hist_quantile(h, 0.999);
}

/* cur - prev per bucket; a counter that went backwards (a reload) counts from 0. */
static void hist_delta(struct vyre_bpf_hist *d, const struct vyre_bpf_hist *cur,
		       const struct vyre_bpf_hist *prev)
{
	for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++)
		d->bucket[b] = cur->bucket[b] >= prev->bucket[b] ? cur->bucket[b] - prev->bucket[b]
								 : cur->bucket[b];
}

static double per_second(uint64_t cur, uint64_t prev, double seconds)
{
	if (seconds <= 0.0)
		return 0.0;
	return (double)(cur >= prev ? cur - prev : cur) / seconds;
}

static const struct top_client *find_client(const struct top_sample *s, uint32_t id)
{
	uint32_t lo = 0, hi = s->n_clients;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->clients[mid].id == id)
			return &s->clients[mid];
		if (s->clients[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int row_cmp(const void *pa, const void *pb, void *key)
{
	const struct top_client_row *a = pa, *b = pb;
	enum top_sort sort_key = *(const enum top_sort *)key;
	if (a->connected != b->connected)
		return b->connected - a->connected;
	int r = 0;
	switch (sort_key) {
	case TOP_SORT_RATE:
		r = (a->items_per_s < b->items_per_s) - (a->items_per_s > b->items_per_s);
		break;
	case TOP_SORT_ITEMS:
		r = cmp_u64_desc(a->c.items, b->c.items);
		break;
	case TOP_SORT_QUEUE:
		r = cmp_u64_desc(a->c.sq_depth, b->c.sq_depth);
		break;
	case TOP_SORT_ERRORS:
		r = cmp_u64_desc(a->c.errors, b->c.errors);
		break;
	case TOP_SORT_PID:
		r = (a->c.pid > b->c.pid) - (a->c.pid < b->c.pid);
		break;
	case TOP_SORT_COUNT:
		break;
	}
	return r ? r : (a->c.id > b->c.id) - (a->c.id < b->c.id);
}

static void build_rows(struct top_view *v, const struct top_sample *prev,
		       const struct top_sample *cur, struct top_client_row *rows,
		       enum top_sort sort)
{
	v->rows = rows;
	v->n_rows = cur->n_clients;
	v->sort = sort;
	v->queue_depth = 0;
	v->queue_max_fill = 0;
	v->queue_max_client = 0;
	for (uint32_t i = 0; i < cur->n_clients; i++) {
		const struct top_client *c = &cur->clients[i];
		const struct top_client *p = find_client(prev, c->id);
		struct top_client_row *r = &rows[i];
		r->c = *c;
		r->items_per_s = per_second(c->items, p ? p->items : 0, v->interval_s);
		r->errors_per_s = per_second(c->errors, p ? p->errors : 0, v->interval_s);
		r->connected = !(c->flags & VYRE_BPF_CLIENT_DISCONNECTED);
		if (!r->connected)
			continue;
		v->queue_depth += c->sq_depth;
		uint32_t fill =
		    c->sq_entries ? (uint32_t)((uint64_t)c->sq_depth * 100u / c->sq_entries) : 0;
		if (fill > v->queue_max_fill || v->queue_max_client == 0) {
			v->queue_max_fill = fill;
			v->queue_max_client = c->id;
		}
	}
	if (cur->n_clients > 1)
		qsort_r(rows, cur->n_clients, sizeof(*rows), row_cmp, &sort);
}

static const struct top_gpu *find_gpu(const struct top_sample *s, uint32_t gpu)
{
	for (uint32_t i = 0; i < s->n_gpus; i++)
		if (s->gpus[i].gpu == gpu)
			return &s->gpus[i];
	return NULL;
}

static void build_gpu_rows(struct top_view *v, const struct top_sample *prev,
			   const struct top_sample *cur)
{
	struct vyre_bpf_hist d, none;

	memset(&none, 0, sizeof(none));
	v->n_gpus = cur->n_gpus;
	for (uint32_t i = 0; i < cur->n_gpus; i++) {
		const struct top_gpu *g = &cur->gpus[i];
		const struct top_gpu *p = find_gpu(prev, g->gpu);
		struct top_gpu_row *r = &v->gpus[i];
		r->g = *g;
		r->items_per_s = per_second(g->c.items, p ? p->c.items : 0, v->interval_s);
		hist_delta(&d, &g->c.latency, p ? &p->c.latency : &none);
		top_hist_percentiles(&d, &r->latency);
	}
}

/* Classes highest first: those with items since attach or a connected client. */
static void build_class_rows(struct top_view *v, const struct top_sample *prev,
			     const struct top_sample *cur)
{
	uint32_t clients[VYRE_BPF_CLASSES] = {0};
	struct vyre_bpf_hist d;

	for (uint32_t i = 0; i < cur->n_clients; i++) {
		const struct top_client *c = &cur->clients[i];

		if ((c->flags & VYRE_BPF_CLIENT_CONNECTED) &&
		    !(c->flags & VYRE_BPF_CLIENT_DISCONNECTED) && c->priority < VYRE_BPF_CLASSES)
			clients[c->priority]++;
	}
	v->n_classes = 0;
	v->classes_used = 0;
	v->class_totals = cur->classes;
	for (uint32_t k = VYRE_BPF_CLASSES; k-- > 0;) {
		const struct vyre_bpf_class *c = &cur->classes[k], *p = &prev->classes[k];
		struct top_class_row *r = &v->classes[v->n_classes];

		if (!c->items && !clients[k])
			continue;
		v->classes_used |= k > 0;
		r->cls = k;
		r->clients = clients[k];
		r->items = c->items;
		r->items_per_s = per_second(c->items, p->items, v->interval_s);
		hist_delta(&d, &c->latency, &p->latency);
		top_hist_percentiles(&d, &r->latency);
		v->n_classes++;
	}
}

void top_view_build(struct top_view *v, const struct top_sample *prev, const struct top_sample *cur,
		    struct top_client_row *rows, enum top_sort sort)
{
	struct vyre_bpf_hist d;
	v->interval_s = cur->t_ns > prev->t_ns ? (double)(cur->t_ns - prev->t_ns) / 1e9 : 0.0;
	v->total = cur->c;
	for (size_t i = 0; i < TOP_N_COUNTERS; i++)
		v->rate[i] =
		    per_second(top_counter(&cur->c, i), top_counter(&prev->c, i), v->interval_s);
	v->dedupe_ratio = cur->c.items ? (double)cur->c.deduped / (double)cur->c.items : 0.0;
	uint64_t would_launch = cur->c.launches + cur->c.launches_avoided;
	v->fusion_ratio =
	    would_launch ? (double)cur->c.launches_avoided / (double)would_launch : 0.0;
	struct top_percentiles *now[VYRE_BPF_HIST_COUNT] = {&v->latency, &v->batch, &v->plan,
							    &v->dispatch};
	struct top_percentiles *all[VYRE_BPF_HIST_COUNT] = {&v->latency_all, &v->batch_all,
							    &v->plan_all, &v->dispatch_all};
	for (uint32_t id = 0; id < VYRE_BPF_HIST_COUNT; id++) {
		hist_delta(&d, &cur->h[id], &prev->h[id]);
		top_hist_percentiles(&d, now[id]);
		top_hist_percentiles(&cur->h[id], all[id]);
	}
	v->gauges = cur->g;
	v->hists = cur->h;
	v->slow = cur->slow;
	v->n_slow = cur->n_slow;
	v->slow_events = cur->slow_events;
	build_rows(v, prev, cur, rows, sort);
	build_gpu_rows(v, prev, cur);
	build_class_rows(v, prev, cur);
	top_ops_build(v, prev, cur);
}

void top_sample_free(struct top_sample *s)
{
	free(s->clients);
	s->clients = NULL;
	s->n_clients = s->cap_clients = 0;
}
