/* SPDX-License-Identifier: MIT */
/*
 * Per-op figures (docs/telemetry.md, "Ops"): the ops map's counters with
 * the names op_info gave, and a view's op rows from two samples. Pure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

void top_op_counters_add(struct vyre_bpf_op *dst, const struct vyre_bpf_op *src)
{
	dst->batches += src->batches;
	dst->items += src->items;
	dst->failed += src->failed;
	dst->deduped += src->deduped;
	dst->latency_ns += src->latency_ns;
	dst->drain_ns += src->drain_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	if (src->updated_ns > dst->updated_ns)
		dst->updated_ns = src->updated_ns;
}

void top_ops_put(struct top_sample *s, uint32_t op, const struct vyre_bpf_op *c,
		 const struct vyre_tm_op_info *info)
{
	uint32_t at = 0;

	if (s->n_ops == TOP_OPS_MAX) {
		s->ops_dropped++;
		return;
	}
	while (at < s->n_ops && s->ops[at].op < op)
		at++;
	memmove(&s->ops[at + 1], &s->ops[at], (s->n_ops - at) * sizeof(s->ops[0]));
	s->n_ops++;
	struct top_op *o = &s->ops[at];
	memset(o, 0, sizeof(*o));
	o->op = op;
	o->c = *c;
	if (info && info->bytes == sizeof(*info) && info->op == op) {
		o->named = 1;
		o->flags = info->flags;
		memcpy(o->name, info->name, sizeof(o->name));
		memcpy(o->module, info->module, sizeof(o->module));
		o->name[sizeof(o->name) - 1] = '\0';
		o->module[sizeof(o->module) - 1] = '\0';
	}
}

const char *top_op_name(const struct top_op *o, char *buf, size_t len)
{
	if (o->named && o->name[0])
		return o->name;
	if (o->op == VYRE_TM_OP_UNKNOWN)
		return "unknown";
	snprintf(buf, len, "op_0x%08x", o->op);
	return buf;
}

static const struct top_op *find_op(const struct top_sample *s, uint32_t op)
{
	for (uint32_t i = 0; i < s->n_ops; i++)
		if (s->ops[i].op == op)
			return &s->ops[i];
	return NULL;
}

static int row_cmp(const void *a, const void *b)
{
	const struct top_op_row *x = a, *y = b;

	if (x->o.c.items != y->o.c.items)
		return x->o.c.items < y->o.c.items ? 1 : -1;
	return (x->o.op > y->o.op) - (x->o.op < y->o.op);
}

void top_ops_build(struct top_view *v, const struct top_sample *prev, const struct top_sample *cur)
{
	v->n_ops = 0;
	v->ops_dropped = cur->ops_dropped;
	for (uint32_t i = 0; i < cur->n_ops; i++) {
		const struct top_op *o = &cur->ops[i];
		const struct top_op *p = find_op(prev, o->op);
		struct top_op_row *r = &v->ops[v->n_ops];
		uint64_t d_items, d_failed, d_lat;

		if (o->c.items == 0)
			continue;
		memset(r, 0, sizeof(*r));
		r->o = *o;
		d_items = o->c.items - (p && p->c.items <= o->c.items ? p->c.items : 0);
		d_failed = o->c.failed - (p && p->c.failed <= o->c.failed ? p->c.failed : 0);
		d_lat = o->c.latency_ns -
			(p && p->c.latency_ns <= o->c.latency_ns ? p->c.latency_ns : 0);
		if (v->interval_s > 0) {
			r->items_per_s = (double)d_items / v->interval_s;
			r->failed_per_s = (double)d_failed / v->interval_s;
		}
		r->mean_ns = d_items ? d_lat / d_items : 0;
		r->mean_all_ns = o->c.latency_ns / o->c.items;
		r->drain_mean_ns = o->c.drain_ns / o->c.items;
		v->n_ops++;
	}
	if (v->n_ops > 1)
		qsort(v->ops, v->n_ops, sizeof(v->ops[0]), row_cmp);
}
