/* SPDX-License-Identifier: MIT */
/*
 * A view as one Prometheus exposition: the OpenMetrics 1.0 text format, or
 * the Prometheus 0.0.4 text format for scrapers that do not ask for it.
 * Counters count since vyre-top attached (a restart of vyre-top is a
 * counter reset to Prometheus); the log2 histograms become cumulative
 * buckets whose bounds are the largest value each log2 bucket holds.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "top.h"

struct om {
	FILE *f;
	int openmetrics;
};

enum om_type { OM_COUNTER, OM_GAUGE, OM_HISTOGRAM, OM_INFO };

/*
 * OpenMetrics names the family (vyre_items, TYPE counter, samples
 * vyre_items_total); the 0.0.4 format names the sample and has no info
 * type, so an info family is a gauge of value 1 there.
 */
static void family(const struct om *w, const char *name, enum om_type type, const char *unit,
		   const char *help)
{
	static const char *const words[] = {"counter", "gauge", "histogram", "info"};
	if (w->openmetrics) {
		fprintf(w->f, "# TYPE %s %s\n", name, words[type]);
		if (unit)
			fprintf(w->f, "# UNIT %s %s\n", name, unit);
		fprintf(w->f, "# HELP %s %s\n", name, help);
		return;
	}
	const char *suffix = type == OM_COUNTER ? "_total" : type == OM_INFO ? "_info" : "";
	fprintf(w->f, "# HELP %s%s %s\n", name, suffix, help);
	fprintf(w->f, "# TYPE %s%s %s\n", name, suffix, type == OM_INFO ? "gauge" : words[type]);
}

/* Appends name="value" to @buf (length @len, already holding @used bytes), escaped. */
static size_t label(char *buf, size_t len, size_t used, const char *name, const char *value)
{
	if (used >= len)
		return used;
	int n = snprintf(buf + used, len - used, "%s%s=\"", used ? "," : "", name);
	used = n < 0 ? len : used + (size_t)n;
	for (; *value && used + 3 < len; value++) {
		unsigned char ch = (unsigned char)*value;
		if (ch == '\\' || ch == '"') {
			buf[used++] = '\\';
			buf[used++] = (char)ch;
		} else if (ch == '\n') {
			buf[used++] = '\\';
			buf[used++] = 'n';
		} else if (ch >= 0x20) {
			buf[used++] = (char)ch;
		}
	}
	if (used + 1 < len) {
		buf[used++] = '"';
		buf[used] = '\0';
	}
	return used;
}

static size_t label_u(char *buf, size_t len, size_t used, const char *name, uint64_t value)
{
	char v[24];
	snprintf(v, sizeof(v), "%" PRIu64, value);
	return label(buf, len, used, name, v);
}

static void sample_u(const struct om *w, const char *name, const char *suffix, const char *labels,
		     uint64_t v)
{
	if (labels && *labels)
		fprintf(w->f, "%s%s{%s} %" PRIu64 "\n", name, suffix, labels, v);
	else
		fprintf(w->f, "%s%s %" PRIu64 "\n", name, suffix, v);
}

/* @ns as seconds, exactly: integer nanoseconds need nine decimals at most. */
static const char *seconds(char *buf, size_t len, uint64_t ns)
{
	int n = snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
	if (n > 0 && (size_t)n < len) {
		while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
			buf[--n] = '\0';
	}
	return buf;
}

static void sample_s(const struct om *w, const char *name, const char *suffix, const char *labels,
		     const char *v)
{
	if (labels && *labels)
		fprintf(w->f, "%s%s{%s} %s\n", name, suffix, labels, v);
	else
		fprintf(w->f, "%s%s %s\n", name, suffix, v);
}

static void sample_d(const struct om *w, const char *name, const char *labels, double v)
{
	char buf[40];
	snprintf(buf, sizeof(buf), "%.17g", isfinite(v) ? v : 0.0);
	sample_s(w, name, "", labels, buf);
}

/*
 * One histogram series from log2 buckets: bucket b holds values up to
 * 2^b - 1 (bucket 0 only 0), the last one is open. @ns: the values are
 * nanoseconds, written as seconds.
 */
static void histogram(const struct om *w, const char *name, const char *labels,
		      const struct vyre_bpf_hist *h, uint64_t sum, int ns)
{
	char lb[512], le[40];
	uint64_t cum = 0;
	for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++) {
		cum += h->bucket[b];
		uint64_t max = b ? (1ull << b) - 1 : 0;
		if (b == VYRE_BPF_HIST_BUCKETS - 1)
			snprintf(le, sizeof(le), "+Inf");
		else if (ns)
			seconds(le, sizeof(le), max);
		else
			snprintf(le, sizeof(le), "%" PRIu64 ".0", max);
		size_t used = 0;
		lb[0] = '\0';
		if (labels && *labels)
			used = (size_t)snprintf(lb, sizeof(lb), "%s", labels);
		label(lb, sizeof(lb), used, "le", le);
		sample_u(w, name, "_bucket", lb, cum);
	}
	if (ns)
		sample_s(w, name, "_sum", labels, seconds(le, sizeof(le), sum));
	else
		sample_u(w, name, "_sum", labels, sum);
	sample_u(w, name, "_count", labels, cum);
}

struct counter_def {
	size_t off; /* in struct vyre_bpf_counters */
	const char *name, *unit, *help;
};

#define C(field) offsetof(struct vyre_bpf_counters, field)

/* plan_ns, dispatch_ns and latency_ns are the _sum of their histograms. */
static const struct counter_def counters[] = {
    {C(batches), "vyre_batches", NULL, "Batches completed."},
    {C(items), "vyre_items", NULL, "Items (SQEs) drained from client rings."},
    {C(completed), "vyre_completed_items", NULL, "CQEs posted."},
    {C(failed), "vyre_failed_items", NULL, "CQEs posted with a negative status."},
    {C(deduped), "vyre_deduped_items", NULL, "Items satisfied by an identical earlier item."},
    {C(executed), "vyre_executed_items", NULL,
     "Items executed that did not fail with VYRE_E_INVAL."},
    {C(invalid), "vyre_invalid_items", NULL,
     "Items not deduplicated that failed with VYRE_E_INVAL, before planning or at execution."},
    {C(groups), "vyre_groups", NULL, "Barrier groups planned."},
    {C(barriers), "vyre_barriers", NULL, "Global barriers planned."},
    {C(launches), "vyre_launches", NULL, "Device submissions after fusion."},
    {C(launches_avoided), "vyre_launches_avoided", NULL, "Stages fused away."},
    {C(frontier_splits), "vyre_frontier_splits", NULL,
     "Extra groups made to fit the memory budget."},
    {C(bytes_avoided), "vyre_avoided_bytes", "bytes",
     "Transient bytes on-chip handoffs kept off the heap."},
    {C(readback_bytes), "vyre_readback_bytes", "bytes",
     "Bytes items reading device buffers wrote into heap buffers."},
    {C(dispatches), "vyre_dispatches", NULL, "Batches the backend reported done."},
    {C(dispatch_errors), "vyre_dispatch_errors", NULL, "Backend runs that failed."},
    {C(errors), "vyre_errors", NULL, "Failures reported by the error probe."},
    {C(backpressure), "vyre_backpressure_events", NULL,
     "Back-pressure events: SQ full, CQ full, arena exhausted."},
    {C(arena_shrinks), "vyre_arena_shrinks", NULL, "Batches planned shorter for arena room."},
    {C(connects), "vyre_client_connects", NULL, "Clients that connected."},
    {C(disconnects), "vyre_client_disconnects", NULL, "Clients that left."},
    {C(slow_batches), "vyre_slow_batches", NULL, "Batches at or over the slow threshold."},
    {C(slow_dropped), "vyre_slow_batch_events_dropped", NULL,
     "Slow-batch events lost to a full ring buffer."},
    {C(layout_errors), "vyre_top_layout_errors", NULL,
     "Probe records whose layout vyre-top does not know."},
    {C(gpu_states), "vyre_gpu_state_records", NULL, "gpu_state records received."},
};

static uint64_t counter_at(const struct vyre_bpf_counters *c, size_t off)
{
	uint64_t v;
	memcpy(&v, (const unsigned char *)c + off, sizeof(v));
	return v;
}

/* Backend and mode of the dispatches, or of the first GPU's gpu_state before any traffic. */
static void daemon_info(const struct om *w, const struct top_view *v)
{
	const char *backend = "unknown", *mode = "unknown";
	if (v->gauges.have_backend) {
		backend = top_backend_word(v->gauges.backend);
		mode = top_mode_word(v->gauges.mode);
	} else {
		for (uint32_t i = 0; i < v->n_gpus; i++) {
			if (v->gpus[i].g.loops) {
				backend = top_backend_word(v->gpus[i].g.backend);
				mode = top_mode_word(v->gpus[i].g.mode);
				break;
			}
		}
	}
	char lb[1024];
	size_t u = label_u(lb, sizeof(lb), 0, "pid", (uint64_t)v->pid);
	u = label(lb, sizeof(lb), u, "backend", backend);
	u = label(lb, sizeof(lb), u, "mode", mode);
	label(lb, sizeof(lb), u, "exe", v->exe ? v->exe : "");
	family(w, "vyre_daemon", OM_INFO, NULL, "The vyred watched: pid, backend, mode.");
	sample_u(w, "vyre_daemon", "_info", lb, 1);
	family(w, "vyre_top_probes_attached", OM_GAUGE, NULL, "Probes vyre-top attached.");
	sample_u(w, "vyre_top_probes_attached", "", NULL, v->probes);
	family(w, "vyre_top_probes", OM_GAUGE, NULL, "Probes vyre-top's BPF program has.");
	sample_u(w, "vyre_top_probes", "", NULL, v->probes_total);
}

static void totals(const struct om *w, const struct top_view *v)
{
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		const struct counter_def *d = &counters[i];
		family(w, d->name, OM_COUNTER, d->unit, d->help);
		sample_u(w, d->name, "_total", NULL, counter_at(&v->total, d->off));
	}
	const struct vyre_bpf_counters *t = &v->total;
	static const struct {
		const char *name, *unit, *help;
		int ns;
	} hists[VYRE_BPF_HIST_COUNT] = {
	    [VYRE_BPF_HIST_LATENCY] = {"vyre_item_latency_seconds", "seconds",
				       "Item latency, submit to complete.", 1},
	    [VYRE_BPF_HIST_BATCH] = {"vyre_batch_items", NULL, "Items per completed batch.", 0},
	    [VYRE_BPF_HIST_PLAN] = {"vyre_plan_duration_seconds", "seconds",
				    "Time in the planner per batch.", 1},
	    [VYRE_BPF_HIST_DISPATCH] = {"vyre_dispatch_duration_seconds", "seconds",
					"Backend run per batch, submit to last poll.", 1},
	};
	const uint64_t sums[VYRE_BPF_HIST_COUNT] = {
	    [VYRE_BPF_HIST_LATENCY] = t->latency_ns,
	    [VYRE_BPF_HIST_BATCH] = t->completed,
	    [VYRE_BPF_HIST_PLAN] = t->plan_ns,
	    [VYRE_BPF_HIST_DISPATCH] = t->dispatch_ns,
	};
	for (uint32_t id = 0; id < VYRE_BPF_HIST_COUNT; id++) {
		family(w, hists[id].name, OM_HISTOGRAM, hists[id].unit, hists[id].help);
		histogram(w, hists[id].name, NULL, &v->hists[id], sums[id], hists[id].ns);
	}
}

static void gauges(const struct om *w, const struct top_view *v)
{
	const struct vyre_bpf_gauges *g = &v->gauges;
	if (g->have_arena) {
		family(w, "vyre_arena_used_bytes", OM_GAUGE, "bytes",
		       "Planner arena used by the last batch.");
		sample_u(w, "vyre_arena_used_bytes", "", NULL, g->arena_used);
		family(w, "vyre_arena_capacity_bytes", OM_GAUGE, "bytes",
		       "Planner arena reserved.");
		sample_u(w, "vyre_arena_capacity_bytes", "", NULL, g->arena_capacity);
		family(w, "vyre_arena_high_water_bytes", OM_GAUGE, "bytes",
		       "Most planner arena any batch used.");
		sample_u(w, "vyre_arena_high_water_bytes", "", NULL, g->arena_high_water);
	}
	family(w, "vyre_queue_depth", OM_GAUGE, NULL, "SQEs waiting over connected clients.");
	sample_u(w, "vyre_queue_depth", "", NULL, v->queue_depth);
	family(w, "vyre_queue_max_fill_ratio", OM_GAUGE, "ratio",
	       "Fullest connected client's SQ fill.");
	sample_d(w, "vyre_queue_max_fill_ratio", NULL, v->queue_max_fill / 100.0);
	family(w, "vyre_dedupe_ratio", OM_GAUGE, "ratio", "Deduplicated items over items.");
	sample_d(w, "vyre_dedupe_ratio", NULL, v->dedupe_ratio);
	family(w, "vyre_fusion_ratio", OM_GAUGE, "ratio",
	       "Launches avoided over launches plus launches avoided.");
	sample_d(w, "vyre_fusion_ratio", NULL, v->fusion_ratio);
	family(w, "vyre_last_error_code", OM_GAUGE, NULL,
	       "Code of the last error probe (0: none).");
	fprintf(w->f, "vyre_last_error_code %d\n", (int)g->last_error);
}

static size_t gpu_labels(char *buf, size_t len, const struct top_gpu *g)
{
	return label_u(buf, len, 0, "gpu", g->gpu);
}

/* A per-GPU family over the GPUs that sent a gpu_state (@state) or all of them. */
#define GPU_FAMILY(w, v, fname, type, unit, help, state, suffix, expr)                             \
	do {                                                                                       \
		family(w, fname, type, unit, help);                                                \
		for (uint32_t i_ = 0; i_ < (v)->n_gpus; i_++) {                                    \
			const struct top_gpu *g = &(v)->gpus[i_].g;                                \
			char lb_[64];                                                              \
			if ((state) && !g->loops)                                                  \
				continue;                                                          \
			gpu_labels(lb_, sizeof(lb_), g);                                           \
			sample_u(w, fname, suffix, lb_, (expr));                                   \
		}                                                                                  \
	} while (0)

static void gpus(const struct om *w, const struct top_view *v)
{
	if (v->n_gpus == 0)
		return;
	family(w, "vyre_gpu", OM_INFO, NULL,
	       "A GPU of vyred's --gpus: ordinal, name, backend, mode.");
	for (uint32_t i = 0; i < v->n_gpus; i++) {
		const struct top_gpu *g = &v->gpus[i].g;
		char lb[256];
		if (!g->loops)
			continue;
		size_t u = gpu_labels(lb, sizeof(lb), g);
		u = label_u(lb, sizeof(lb), u, "ordinal", g->ordinal);
		u = label(lb, sizeof(lb), u, "name", g->name);
		u = label(lb, sizeof(lb), u, "backend", top_backend_word(g->backend));
		label(lb, sizeof(lb), u, "mode", top_mode_word(g->mode));
		sample_u(w, "vyre_gpu", "_info", lb, 1);
	}
	GPU_FAMILY(w, v, "vyre_gpu_batches", OM_COUNTER, NULL, "Batches completed on the GPU.", 0,
		   "_total", g->c.batches);
	GPU_FAMILY(w, v, "vyre_gpu_completed_items", OM_COUNTER, NULL, "CQEs posted for the GPU.",
		   0, "_total", g->c.items);
	GPU_FAMILY(w, v, "vyre_gpu_failed_items", OM_COUNTER, NULL,
		   "CQEs posted for the GPU with a negative status.", 0, "_total", g->c.errors);
	GPU_FAMILY(w, v, "vyre_gpu_dispatches", OM_COUNTER, NULL,
		   "Batches the GPU's backend reported done.", 0, "_total", g->c.dispatches);
	GPU_FAMILY(w, v, "vyre_gpu_lost", OM_GAUGE, NULL, "1 once the GPU is out of service.", 1,
		   "", g->lost);
	GPU_FAMILY(w, v, "vyre_gpu_loops", OM_GAUGE, NULL, "Event loops of the GPU reporting.", 1,
		   "", g->loops);
	GPU_FAMILY(w, v, "vyre_gpu_slots", OM_GAUGE, NULL, "Batch slots over the GPU's loops.", 1,
		   "", g->slots);
	GPU_FAMILY(w, v, "vyre_gpu_running_batches", OM_GAUGE, NULL,
		   "Batches in flight on the GPU.", 1, "", g->running);
	GPU_FAMILY(w, v, "vyre_gpu_domains", OM_GAUGE, NULL, "Live domains of the GPU.", 1, "",
		   g->domains);
	GPU_FAMILY(w, v, "vyre_gpu_clients", OM_GAUGE, NULL, "Connected clients of the GPU.", 1, "",
		   g->clients);
	GPU_FAMILY(w, v, "vyre_gpu_device_memory_used_bytes", OM_GAUGE, "bytes",
		   "The GPU's device buffers.", 1, "", g->device_bytes_used);
	GPU_FAMILY(w, v, "vyre_gpu_device_memory_limit_bytes", OM_GAUGE, "bytes",
		   "The GPU's --device-bytes-max.", 1, "", g->device_bytes_max);
	GPU_FAMILY(w, v, "vyre_gpu_daemon_batches", OM_COUNTER, NULL,
		   "Batches the GPU completed since vyred started.", 1, "_total", g->batches_total);
	GPU_FAMILY(w, v, "vyre_gpu_daemon_items", OM_COUNTER, NULL,
		   "CQEs the GPU posted since vyred started.", 1, "_total", g->items_total);
	family(w, "vyre_gpu_item_latency_seconds", OM_HISTOGRAM, "seconds",
	       "Item latency on the GPU, submit to complete.");
	for (uint32_t i = 0; i < v->n_gpus; i++) {
		const struct top_gpu *g = &v->gpus[i].g;
		char lb[64];
		gpu_labels(lb, sizeof(lb), g);
		histogram(w, "vyre_gpu_item_latency_seconds", lb, &g->c.latency, g->c.latency_ns,
			  1);
	}
}

static size_t client_labels(char *buf, size_t len, const struct top_client *c)
{
	size_t u = label_u(buf, len, 0, "client", c->id);
	return label_u(buf, len, u, "pid", c->pid);
}

#define CLIENT_FAMILY(w, v, fname, type, help, suffix, expr)                                       \
	do {                                                                                       \
		family(w, fname, type, NULL, help);                                                \
		for (uint32_t i_ = 0; i_ < (v)->n_rows; i_++) {                                    \
			const struct top_client_row *r = &(v)->rows[i_];                           \
			char lb_[96];                                                              \
			client_labels(lb_, sizeof(lb_), &r->c);                                    \
			sample_u(w, fname, suffix, lb_, (expr));                                   \
		}                                                                                  \
	} while (0)

static void clients(const struct om *w, const struct top_view *v)
{
	if (v->n_rows == 0)
		return;
	family(w, "vyre_client", OM_INFO, NULL,
	       "A client seen since attach: uid, domain, GPU, priority class.");
	for (uint32_t i = 0; i < v->n_rows; i++) {
		const struct top_client *c = &v->rows[i].c;
		char lb[192];
		size_t u = client_labels(lb, sizeof(lb), c);
		u = label_u(lb, sizeof(lb), u, "uid", c->uid);
		u = label_u(lb, sizeof(lb), u, "domain", c->domain_id);
		if (c->flags & VYRE_BPF_CLIENT_CONNECTED) {
			u = label_u(lb, sizeof(lb), u, "gpu", c->gpu);
			label_u(lb, sizeof(lb), u, "class", c->priority);
		} else {
			u = label(lb, sizeof(lb), u, "gpu", "");
			label(lb, sizeof(lb), u, "class", "");
		}
		sample_u(w, "vyre_client", "_info", lb, 1);
	}
	CLIENT_FAMILY(w, v, "vyre_client_connected", OM_GAUGE, "1 until the client disconnects.",
		      "", (uint64_t)r->connected);
	CLIENT_FAMILY(w, v, "vyre_client_items", OM_COUNTER, "Items drained from the client's SQ.",
		      "_total", r->c.items);
	CLIENT_FAMILY(w, v, "vyre_client_drains", OM_COUNTER,
		      "Batches the client contributed items to.", "_total", r->c.drains);
	CLIENT_FAMILY(w, v, "vyre_client_errors", OM_COUNTER, "The client's failed CQEs.", "_total",
		      r->c.errors);
	CLIENT_FAMILY(w, v, "vyre_client_backpressure_events", OM_COUNTER,
		      "The client's back-pressure events.", "_total", r->c.backpressure);
	CLIENT_FAMILY(w, v, "vyre_client_sq_depth", OM_GAUGE, "SQEs left in the client's SQ.", "",
		      r->c.sq_depth);
	CLIENT_FAMILY(w, v, "vyre_client_sq_entries", OM_GAUGE, "The client's SQ capacity.", "",
		      r->c.sq_entries);
	CLIENT_FAMILY(w, v, "vyre_client_cq_free", OM_GAUGE, "Free CQ slots at the last drain.", "",
		      r->c.cq_free);
}

/* Per priority class (docs/design.md 8.9): the classes in use since attach. */
static void classes(const struct om *w, const struct top_view *v)
{
	char lb[32];

	if (v->n_classes == 0)
		return;
	family(w, "vyre_class_completed_items", OM_COUNTER, NULL,
	       "CQEs posted for items of the priority class.");
	for (uint32_t i = 0; i < v->n_classes; i++) {
		label_u(lb, sizeof(lb), 0, "class", v->classes[i].cls);
		sample_u(w, "vyre_class_completed_items", "_total", lb, v->classes[i].items);
	}
	family(w, "vyre_class_item_latency_seconds", OM_HISTOGRAM, "seconds",
	       "Item latency of the priority class, submit to complete.");
	for (uint32_t i = 0; i < v->n_classes; i++) {
		const struct vyre_bpf_class *c = &v->class_totals[v->classes[i].cls];

		label_u(lb, sizeof(lb), 0, "class", v->classes[i].cls);
		histogram(w, "vyre_class_item_latency_seconds", lb, &c->latency, c->latency_ns, 1);
	}
}

/* op="crc32c",module="crc32c": an op row's labels (module "" for a built-in op). */
static void op_labels(char *buf, size_t len, const struct top_op_row *r)
{
	char name[24];
	size_t u = label(buf, len, 0, "op", top_op_name(&r->o, name, sizeof(name)));

	label(buf, len, u, "module", r->o.module);
}

/*
 * One family over the op rows: the u64 at offset @field of each row's
 * struct vyre_bpf_op, as seconds when @unit is "seconds".
 */
static void op_family(const struct om *w, const struct top_view *v, const char *name,
		      enum om_type type, const char *unit, const char *help, size_t field)
{
	family(w, name, type, unit, help);
	for (uint32_t i = 0; i < v->n_ops; i++) {
		const struct top_op_row *r = &v->ops[i];
		uint64_t x;
		char lb[128];

		memcpy(&x, (const char *)&r->o.c + field, sizeof(x));
		op_labels(lb, sizeof(lb), r);
		const char *suffix = type == OM_COUNTER ? "_total" : "";
		if (unit) {
			char sec[40];
			sample_s(w, name, suffix, lb, seconds(sec, sizeof(sec), x));
		} else
			sample_u(w, name, suffix, lb, x);
	}
}

/* Per op (docs/design.md 6.7): the ops that completed items since attach. */
static void ops(const struct om *w, const struct top_view *v)
{
	if (v->n_ops == 0)
		return;
	family(w, "vyre_op", OM_INFO, NULL,
	       "An op that completed items since attach: its number, and pure or not.");
	for (uint32_t i = 0; i < v->n_ops; i++) {
		const struct top_op_row *r = &v->ops[i];
		char lb[160], num[16];

		op_labels(lb, sizeof(lb), r);
		snprintf(num, sizeof(num), "0x%08x", r->o.op);
		size_t u = label(lb, sizeof(lb), strlen(lb), "number", num);
		label(lb, sizeof(lb), u, "pure", (r->o.flags & VYRE_TM_OP_F_PURE) ? "1" : "0");
		sample_u(w, "vyre_op", "_info", lb, 1);
	}
	op_family(w, v, "vyre_op_items", OM_COUNTER, NULL, "CQEs posted for items of the op.",
		  offsetof(struct vyre_bpf_op, items));
	op_family(w, v, "vyre_op_failed_items", OM_COUNTER, NULL,
		  "CQEs of the op with a negative status.", offsetof(struct vyre_bpf_op, failed));
	op_family(w, v, "vyre_op_deduped_items", OM_COUNTER, NULL,
		  "CQEs of the op satisfied by an identical item.",
		  offsetof(struct vyre_bpf_op, deduped));
	op_family(w, v, "vyre_op_item_latency_seconds", OM_COUNTER, "seconds",
		  "Sum of the op's item latencies, submit to complete.",
		  offsetof(struct vyre_bpf_op, latency_ns));
	op_family(w, v, "vyre_op_drain_to_complete_seconds", OM_COUNTER, "seconds",
		  "Sum over the op's items of drain to complete, vyred's own clock.",
		  offsetof(struct vyre_bpf_op, drain_ns));
	op_family(w, v, "vyre_op_item_latency_max_seconds", OM_GAUGE, "seconds",
		  "The op's slowest item since attach, submit to complete.",
		  offsetof(struct vyre_bpf_op, max_ns));
}

void top_print_metrics(FILE *f, const struct top_view *v, int openmetrics)
{
	struct om w = {f, openmetrics};
	daemon_info(&w, v);
	totals(&w, v);
	gauges(&w, v);
	gpus(&w, v);
	clients(&w, v);
	classes(&w, v);
	ops(&w, v);
	if (openmetrics)
		fputs("# EOF\n", f);
}
