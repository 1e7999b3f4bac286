/* SPDX-License-Identifier: MIT */
/* A view as plain text (vyre-top -b) or as one JSON object per line (--json). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "top.h"

const char *top_fmt_count(char *buf, size_t len, double v)
{
	static const char suffix[] = " kMGTPE";
	size_t i = 0;
	while (fabs(v) >= 1000.0 && i + 1 < sizeof(suffix) - 1) {
		v /= 1000.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, v == floor(v) ? "%.0f" : "%.2f", v);
	else
		snprintf(buf, len, "%.*f%c",
			 fabs(v) < 10.0	   ? 2
			 : fabs(v) < 100.0 ? 1
					   : 0,
			 v, suffix[i]);
	return buf;
}

const char *top_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns == UINT64_MAX)
		snprintf(buf, len, "inf");
	else if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", (double)ns / 1e9);
	return buf;
}

const char *top_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	size_t i = 0;
	while (v >= 1024.0 && i + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%" PRIu64 "B", bytes);
	else
		snprintf(buf, len, "%.1f%s", v, unit[i]);
	return buf;
}

static double rate_of(const struct top_view *v, const char *name)
{
	for (size_t i = 0; i < TOP_N_COUNTERS; i++)
		if (strcmp(top_counter_names[i], name) == 0)
			return v->rate[i];
	return 0.0;
}

static void text_percentiles(FILE *f, const char *label, const struct top_percentiles *p, int as_ns)
{
	if (p->count == 0) {
		fprintf(f, "%s -", label);
	} else if (as_ns) {
		char a[24], b[24], c[24];
		fprintf(f, "%s p50 %s p99 %s p999 %s", label, top_fmt_ns(a, sizeof(a), p->p50),
			top_fmt_ns(b, sizeof(b), p->p99), top_fmt_ns(c, sizeof(c), p->p999));
	} else {
		fprintf(f, "%s p50 %" PRIu64 " p99 %" PRIu64 " p999 %" PRIu64, label, p->p50,
			p->p99, p->p999);
	}
}

static const char *gpu_state_word(const struct top_gpu *g)
{
	return g->loops == 0 ? "-" : g->lost ? "LOST" : "ok";
}

/*
 * One line per GPU: items since attach and their rate and latency this
 * interval (from complete), the rest from its loops' latest gpu_state. A
 * GPU seen only through completions has "-" where gpu_state would speak.
 */
static void text_gpus(FILE *f, const struct top_view *v)
{
	if (v->n_gpus == 0)
		return;
	fprintf(f, "%8s %4s %9s %10s %8s %9s %7s %7s  %-16s %15s  %-5s %s\n", "GPU", "ORD",
		"ITEMS/S", "ITEMS", "LAT p50", "INFLIGHT", "DOMAINS", "CLIENTS", "MODE",
		"DEVICE MEMORY", "STATE", "NAME");
	for (uint32_t i = 0; i < v->n_gpus; i++) {
		const struct top_gpu_row *r = &v->gpus[i];
		const struct top_gpu *g = &r->g;
		char rate[24], lat[24] = "-", ord[16] = "-", flight[32] = "-", doms[16] = "-",
			       cls[16] = "-", mode[40] = "-", mem[48] = "-";
		char used[24], max[24];
		if (r->latency.count)
			top_fmt_ns(lat, sizeof(lat), r->latency.p50);
		if (g->loops) {
			snprintf(ord, sizeof(ord), "%u", g->ordinal);
			snprintf(flight, sizeof(flight), "%u/%u", g->running, g->slots);
			snprintf(doms, sizeof(doms), "%u", g->domains);
			snprintf(cls, sizeof(cls), "%u", g->clients);
			snprintf(mode, sizeof(mode), "%s/%s", top_backend_word(g->backend),
				 top_mode_word(g->mode));
			snprintf(mem, sizeof(mem), "%s/%s",
				 top_fmt_bytes(used, sizeof(used), g->device_bytes_used),
				 top_fmt_bytes(max, sizeof(max), g->device_bytes_max));
		}
		fprintf(f, "%8u %4s %9s %10" PRIu64 " %8s %9s %7s %7s  %-16s %15s  %-5s %s\n",
			g->gpu, ord, top_fmt_count(rate, sizeof(rate), r->items_per_s), g->c.items,
			lat, flight, doms, cls, mode, mem, gpu_state_word(g),
			g->loops && g->name[0] ? g->name : "-");
	}
}

/* One line per priority class, once a class above 0 is in use (docs/design.md 8.9). */
static void text_classes(FILE *f, const struct top_view *v)
{
	if (!v->classes_used)
		return;
	fprintf(f, "%8s %7s %9s %10s %8s %8s\n", "CLASS", "CLIENTS", "ITEMS/S", "ITEMS", "LAT p50",
		"LAT p99");
	for (uint32_t i = 0; i < v->n_classes; i++) {
		const struct top_class_row *r = &v->classes[i];
		char rate[24], p50[24] = "-", p99[24] = "-";
		if (r->latency.count) {
			top_fmt_ns(p50, sizeof(p50), r->latency.p50);
			top_fmt_ns(p99, sizeof(p99), r->latency.p99);
		}
		fprintf(f, "%8u %7u %9s %10" PRIu64 " %8s %8s\n", r->cls, r->clients,
			top_fmt_count(rate, sizeof(rate), r->items_per_s), r->items, p50, p99);
	}
}

/*
 * One line per op that completed items since attach (docs/design.md 6.7):
 * its name (op_info), module, items/s and failed/s this interval, items
 * and failed since attach, mean latency this interval and since attach,
 * the slowest item since attach.
 */
static void text_ops(FILE *f, const struct top_view *v)
{
	if (!v->n_ops)
		return;
	fprintf(f, "%-16s %-12s %9s %10s %8s %8s %9s %9s %9s\n", "OP", "MODULE", "ITEMS/S", "ITEMS",
		"FAILED", "FAIL/S", "LAT mean", "LAT all", "LAT max");
	for (uint32_t i = 0; i < v->n_ops; i++) {
		const struct top_op_row *r = &v->ops[i];
		char name[24], rate[24], frate[24], mean[24] = "-", all[24], max[24];

		if (r->mean_ns)
			top_fmt_ns(mean, sizeof(mean), r->mean_ns);
		fprintf(f, "%-16s %-12s %9s %10" PRIu64 " %8" PRIu64 " %8s %9s %9s %9s\n",
			top_op_name(&r->o, name, sizeof(name)), r->o.module[0] ? r->o.module : "-",
			top_fmt_count(rate, sizeof(rate), r->items_per_s), r->o.c.items,
			r->o.c.failed, top_fmt_count(frate, sizeof(frate), r->failed_per_s), mean,
			top_fmt_ns(all, sizeof(all), r->mean_all_ns),
			top_fmt_ns(max, sizeof(max), r->o.c.max_ns));
	}
}

void top_print_text(FILE *f, const struct top_view *v)
{
	char a[24], b[24], c[24], d[24];
	const struct vyre_bpf_counters *t = &v->total;
	const struct vyre_bpf_gauges *g = &v->gauges;
	const char *exe = v->exe ? strrchr(v->exe, '/') : NULL;
	fprintf(f, "vyre-top  pid %d %s", (int)v->pid, exe ? exe + 1 : "");
	/* a supervisor's GPU workers, whose probes these are */
	for (uint32_t i = 0; i < v->n_workers; i++)
		fprintf(f, "%s%d", i ? "," : "  workers ", (int)v->workers[i]);
	fprintf(f, "  backend %s  mode %s  probes %u/%u  interval %.2fs\n", top_backend_name(g),
		top_mode_name(g), v->probes, v->probes_total, v->interval_s);
	fprintf(f,
		"items %" PRIu64 " (%s/s)  batches %" PRIu64 " (%s/s)  completed %" PRIu64
		"  failed %" PRIu64 "  invalid %" PRIu64 "\n",
		t->items, top_fmt_count(a, sizeof(a), rate_of(v, "items")), t->batches,
		top_fmt_count(b, sizeof(b), rate_of(v, "batches")), t->completed, t->failed,
		t->invalid);
	fprintf(f, "dedupe %.1f%% (%" PRIu64 " deduped)  executed %" PRIu64 "\n",
		v->dedupe_ratio * 100.0, t->deduped, t->executed);
	fprintf(f,
		"launches %" PRIu64 " (%s/s)  avoided %" PRIu64
		" (%s/s)  fusion %.1f%%  groups %" PRIu64 "  barriers %" PRIu64 "  splits %" PRIu64
		"  bytes avoided %s\n",
		t->launches, top_fmt_count(a, sizeof(a), rate_of(v, "launches")),
		t->launches_avoided, top_fmt_count(b, sizeof(b), rate_of(v, "launches_avoided")),
		v->fusion_ratio * 100.0, t->groups, t->barriers, t->frontier_splits,
		top_fmt_bytes(c, sizeof(c), t->bytes_avoided));
	/* read-back: what items reading device buffers wrote into heap buffers */
	fprintf(f, "read-back %s/s (%s)\n",
		top_fmt_bytes(a, sizeof(a), (uint64_t)rate_of(v, "readback_bytes")),
		top_fmt_bytes(b, sizeof(b), t->readback_bytes));
	text_percentiles(f, "latency", &v->latency, 1);
	fprintf(f, "  (%" PRIu64 " items this interval)\n", v->latency.count);
	text_percentiles(f, "plan", &v->plan, 1);
	fputs("  ", f);
	text_percentiles(f, "dispatch", &v->dispatch, 1);
	fputs("  ", f);
	text_percentiles(f, "batch items", &v->batch, 0);
	fputc('\n', f);
	if (g->have_arena)
		fprintf(f, "arena %s / %s (%.0f%%)  high %s  shrinks %" PRIu64 "\n",
			top_fmt_bytes(a, sizeof(a), g->arena_used),
			top_fmt_bytes(b, sizeof(b), g->arena_capacity),
			g->arena_capacity
			    ? 100.0 * (double)g->arena_used / (double)g->arena_capacity
			    : 0.0,
			top_fmt_bytes(c, sizeof(c), g->arena_high_water), t->arena_shrinks);
	else
		fprintf(f, "arena -\n");
	fprintf(f,
		"queue depth %u  max %u%% (client %u)  back-pressure %" PRIu64
		" (%s/s)  errors %" PRIu64 " (%s/s)\n",
		v->queue_depth, v->queue_max_fill, v->queue_max_client, t->backpressure,
		top_fmt_count(a, sizeof(a), rate_of(v, "backpressure")), t->errors,
		top_fmt_count(d, sizeof(d), rate_of(v, "errors")));
	fprintf(f, "slow batches %" PRIu64 " (%" PRIu64 " this interval)", t->slow_batches,
		v->slow_events);
	if (v->n_slow) {
		const struct vyre_bpf_slow_batch *s = &v->slow[v->n_slow - 1];
		fprintf(f,
			"  last: batch %" PRIu64 " max %s items %u groups %u launches %u plan %s",
			s->batch_id, top_fmt_ns(a, sizeof(a), s->max_ns), s->items, s->groups,
			s->launches, top_fmt_ns(b, sizeof(b), s->plan_ns));
	}
	if (t->layout_errors)
		fprintf(f, "  LAYOUT ERRORS %" PRIu64, t->layout_errors);
	fputc('\n', f);
	text_gpus(f, v);
	text_classes(f, v);
	text_ops(f, v);
	fprintf(f, "%8s %8s %9s %10s %7s %7s %7s %7s  %-5s %4s %5s   (sort: %s)\n", "CLIENT", "PID",
		"ITEMS/S", "ITEMS", "QDEPTH", "QCAP", "ERRORS", "BP", "STATE", "GPU", "CLASS",
		top_sort_name(v->sort));
	uint32_t hidden = 0;
	for (uint32_t i = 0; i < v->n_rows; i++) {
		const struct top_client_row *r = &v->rows[i];
		/* Gone and idle this interval: only the count is worth a line. */
		if (!r->connected && r->items_per_s == 0.0 && r->errors_per_s == 0.0) {
			hidden++;
			continue;
		}
		char gpu[16] = "-", cls[16] = "-";
		if (r->c.flags & VYRE_BPF_CLIENT_CONNECTED) {
			snprintf(gpu, sizeof(gpu), "%u", r->c.gpu);
			snprintf(cls, sizeof(cls), "%u", r->c.priority);
		}
		fprintf(f,
			"%8u %8u %9s %10" PRIu64 " %7u %7u %7" PRIu64 " %7" PRIu64
			"  %-5s %4s %5s\n",
			r->c.id, r->c.pid, top_fmt_count(a, sizeof(a), r->items_per_s), r->c.items,
			r->c.sq_depth, r->c.sq_entries, r->c.errors, r->c.backpressure,
			r->connected ? "live" : "gone", gpu, cls);
	}
	if (hidden)
		fprintf(f, "%8s (%u disconnected clients idle this interval)\n", "", hidden);
	fputc('\n', f);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* JSON has no NaN or infinity: such a value prints as 0. */
static void json_double(FILE *f, double x)
{
	fprintf(f, "%.6g", isfinite(x) ? x : 0.0);
}

static void json_percentiles(FILE *f, const char *name, const struct top_percentiles *now,
			     const struct top_percentiles *all)
{
	fprintf(f,
		",\"%s\":{\"interval\":{\"count\":%" PRIu64 ",\"p50\":%" PRIu64 ",\"p99\":%" PRIu64
		",\"p999\":%" PRIu64 "},\"total\":{\"count\":%" PRIu64 ",\"p50\":%" PRIu64
		",\"p99\":%" PRIu64 ",\"p999\":%" PRIu64 "}}",
		name, now->count, now->p50, now->p99, now->p999, all->count, all->p50, all->p99,
		all->p999);
}

static void json_slow(FILE *f, const struct vyre_bpf_slow_batch *s)
{
	fprintf(f,
		"{\"batch_id\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"sum_ns\":%" PRIu64
		",\"items\":%u,\"errors\":%u,\"deduped\":%u,\"have_plan\":%s,\"executed\":%u,"
		"\"groups\":%u,\"barriers\":%u,\"launches\":%u,\"launches_avoided\":%u,"
		"\"frontier_splits\":%u,\"bytes_avoided\":%" PRIu64 ",\"plan_ns\":%" PRIu64
		",\"dispatch_ns\":%" PRIu64 "}",
		s->batch_id, s->max_ns, s->sum_ns, s->items, s->errors, s->deduped,
		s->have_plan ? "true" : "false", s->executed, s->groups, s->barriers, s->launches,
		s->launches_avoided, s->frontier_splits, s->bytes_avoided, s->plan_ns,
		s->dispatch_ns);
}

static void json_gpu(FILE *f, const struct top_gpu_row *r)
{
	const struct top_gpu *g = &r->g;
	struct top_percentiles all;

	top_hist_percentiles(&g->c.latency, &all);
	fprintf(f, "{\"gpu\":%u,\"have_state\":%s,\"ordinal\":%u,\"name\":", g->gpu,
		g->loops ? "true" : "false", g->ordinal);
	json_string(f, g->name);
	fputs(",\"backend\":", f);
	json_string(f, g->loops ? top_backend_word(g->backend) : "-");
	fputs(",\"mode\":", f);
	json_string(f, g->loops ? top_mode_word(g->mode) : "-");
	fputs(",\"state\":", f);
	json_string(f, gpu_state_word(g));
	fprintf(f,
		",\"lost\":%s,\"loops\":%u,\"loops_per_gpu\":%u,\"slots\":%u,\"running\":%u,"
		"\"domains\":%u,\"clients\":%u,\"batches_total\":%" PRIu64
		",\"items_total\":%" PRIu64 ",\"device_bytes_used\":%" PRIu64
		",\"device_bytes_max\":%" PRIu64 ",\"batches\":%" PRIu64 ",\"items\":%" PRIu64
		",\"errors\":%" PRIu64 ",\"dispatches\":%" PRIu64 ",\"dispatch_ns\":%" PRIu64
		",\"latency_sum_ns\":%" PRIu64 ",\"items_per_s\":",
		g->lost ? "true" : "false", g->loops, g->loops_per_gpu, g->slots, g->running,
		g->domains, g->clients, g->batches_total, g->items_total, g->device_bytes_used,
		g->device_bytes_max, g->c.batches, g->c.items, g->c.errors, g->c.dispatches,
		g->c.dispatch_ns, g->c.latency_ns);
	json_double(f, r->items_per_s);
	json_percentiles(f, "latency_ns", &r->latency, &all);
	fputc('}', f);
}

static void json_op(FILE *f, const struct top_op_row *r, uint32_t i)
{
	char buf[24];

	fprintf(f, "%s{\"op\":%u,\"name\":", i ? "," : "", r->o.op);
	json_string(f, top_op_name(&r->o, buf, sizeof(buf)));
	fputs(",\"module\":", f);
	if (r->o.named && (r->o.flags & VYRE_TM_OP_F_MODULE))
		json_string(f, r->o.module);
	else
		fputs("null", f);
	fprintf(f,
		",\"named\":%s,\"pure\":%s,\"batches\":%" PRIu64 ",\"items\":%" PRIu64
		",\"failed\":%" PRIu64 ",\"deduped\":%" PRIu64 ",\"latency_sum_ns\":%" PRIu64
		",\"latency_max_ns\":%" PRIu64 ",\"drain_sum_ns\":%" PRIu64
		",\"latency_mean_ns\":%" PRIu64 ",\"interval_latency_mean_ns\":%" PRIu64
		",\"items_per_s\":",
		r->o.named ? "true" : "false", (r->o.flags & VYRE_TM_OP_F_PURE) ? "true" : "false",
		r->o.c.batches, r->o.c.items, r->o.c.failed, r->o.c.deduped, r->o.c.latency_ns,
		r->o.c.max_ns, r->o.c.drain_ns, r->mean_all_ns, r->mean_ns);
	json_double(f, r->items_per_s);
	fputs(",\"failed_per_s\":", f);
	json_double(f, r->failed_per_s);
	fputc('}', f);
}

void top_print_json(FILE *f, const struct top_view *v, uint64_t wall_ns)
{
	const struct vyre_bpf_gauges *g = &v->gauges;
	fprintf(f, "{\"time_ns\":%" PRIu64 ",\"pid\":%d,\"workers\":[", wall_ns, (int)v->pid);
	for (uint32_t i = 0; i < v->n_workers; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)v->workers[i]);
	fputs("],\"exe\":", f);
	json_string(f, v->exe ? v->exe : "");
	fprintf(f, ",\"probes\":%u,\"probes_total\":%u,\"interval_s\":", v->probes,
		v->probes_total);
	json_double(f, v->interval_s);
	fputs(",\"backend\":", f);
	json_string(f, top_backend_name(g));
	fputs(",\"mode\":", f);
	json_string(f, top_mode_name(g));
	fputs(",\"totals\":{", f);
	for (size_t i = 0; i < TOP_N_COUNTERS; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", top_counter_names[i],
			top_counter(&v->total, i));
	fputs("},\"rates\":{", f);
	for (size_t i = 0; i < TOP_N_COUNTERS; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", top_counter_names[i]);
		json_double(f, v->rate[i]);
	}
	fputs("},\"dedupe_ratio\":", f);
	json_double(f, v->dedupe_ratio);
	fputs(",\"fusion_ratio\":", f);
	json_double(f, v->fusion_ratio);
	json_percentiles(f, "latency_ns", &v->latency, &v->latency_all);
	json_percentiles(f, "batch_items", &v->batch, &v->batch_all);
	json_percentiles(f, "plan_ns", &v->plan, &v->plan_all);
	json_percentiles(f, "dispatch_ns", &v->dispatch, &v->dispatch_all);
	if (g->have_arena)
		fprintf(f,
			",\"arena\":{\"used\":%" PRIu64 ",\"capacity\":%" PRIu64
			",\"high_water\":%" PRIu64 "}",
			g->arena_used, g->arena_capacity, g->arena_high_water);
	else
		fputs(",\"arena\":null", f);
	fprintf(f, ",\"queue\":{\"depth\":%u,\"max_fill_pct\":%u,\"max_client\":%u}",
		v->queue_depth, v->queue_max_fill, v->queue_max_client);
	fprintf(f, ",\"last_error\":%d,\"sort\":", (int)g->last_error);
	json_string(f, top_sort_name(v->sort));
	fputs(",\"clients\":[", f);
	for (uint32_t i = 0; i < v->n_rows; i++) {
		const struct top_client_row *r = &v->rows[i];
		fprintf(f,
			"%s{\"id\":%u,\"pid\":%u,\"uid\":%u,\"domain\":%u,\"connected\":%s,"
			"\"items\":%" PRIu64 ",\"items_per_s\":",
			i ? "," : "", r->c.id, r->c.pid, r->c.uid, r->c.domain_id,
			r->connected ? "true" : "false", r->c.items);
		json_double(f, r->items_per_s);
		fprintf(f,
			",\"drains\":%" PRIu64 ",\"sq_depth\":%u,\"sq_entries\":%u,\"cq_free\":%u,"
			"\"errors\":%" PRIu64 ",\"backpressure\":%" PRIu64,
			r->c.drains, r->c.sq_depth, r->c.sq_entries, r->c.cq_free, r->c.errors,
			r->c.backpressure);
		/* the GPU its domain runs on, when its connect was seen */
		if (r->c.flags & VYRE_BPF_CLIENT_CONNECTED)
			fprintf(f, ",\"gpu\":%u,\"class\":%u}", r->c.gpu, r->c.priority);
		else
			fputs(",\"gpu\":null,\"class\":null}", f);
	}
	fputs("],\"classes\":[", f);
	for (uint32_t i = 0; i < v->n_classes; i++) {
		const struct top_class_row *r = &v->classes[i];
		fprintf(f, "%s{\"class\":%u,\"clients\":%u,\"items\":%" PRIu64 ",\"items_per_s\":",
			i ? "," : "", r->cls, r->clients, r->items);
		json_double(f, r->items_per_s);
		fprintf(f,
			",\"latency_ns\":{\"count\":%" PRIu64 ",\"p50\":%" PRIu64
			",\"p99\":%" PRIu64 "}}",
			r->latency.count, r->latency.p50, r->latency.p99);
	}
	fputs("],\"ops\":[", f);
	for (uint32_t i = 0; i < v->n_ops; i++)
		json_op(f, &v->ops[i], i);
	fprintf(f, "],\"ops_dropped\":%u", v->ops_dropped);
	fputs(",\"gpus\":[", f);
	for (uint32_t i = 0; i < v->n_gpus; i++) {
		if (i)
			fputc(',', f);
		json_gpu(f, &v->gpus[i]);
	}
	fprintf(f, "],\"slow_events\":%" PRIu64 ",\"slow\":[", v->slow_events);
	for (uint32_t i = 0; i < v->n_slow; i++) {
		if (i)
			fputc(',', f);
		json_slow(f, &v->slow[i]);
	}
	fputs("]}\n", f);
}
