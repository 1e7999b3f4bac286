/* SPDX-License-Identifier: MIT */
/* The GPU rows of a sample: each loop's latest gpu_state, summed per GPU. */
#include <string.h>

#include "top.h"

void top_gpu_counters_add(struct vyre_bpf_gpu *dst, const struct vyre_bpf_gpu *src)
{
	dst->batches += src->batches;
	dst->items += src->items;
	dst->errors += src->errors;
	dst->latency_ns += src->latency_ns;
	dst->dispatches += src->dispatches;
	dst->dispatch_ns += src->dispatch_ns;
	for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++)
		dst->latency.bucket[b] += src->latency.bucket[b];
}

/* The GPU-wide figures come from the newest record: its loops report the same GPU. */
static void take_newest(struct top_gpu *g, const struct vyre_bpf_loop *l)
{
	const struct vyre_tm_gpu *r = &l->state;

	g->updated_ns = l->updated_ns;
	g->loops_per_gpu = r->loops_per_gpu;
	g->ordinal = r->ordinal;
	g->backend = r->backend;
	g->mode = r->mode;
	g->device_bytes_used = r->device_bytes_used;
	g->device_bytes_max = r->device_bytes_max;
	memcpy(g->name, r->name, sizeof(g->name));
	g->name[sizeof(g->name) - 1] = '\0';
}

static void add_loop(struct top_gpu *g, const struct vyre_bpf_loop *l)
{
	const struct vyre_tm_gpu *r = &l->state;

	if (g->loops == 0 || l->updated_ns >= g->updated_ns)
		take_newest(g, l);
	g->loops++;
	g->lost |= r->lost != 0;
	g->slots += r->slots;
	g->running += r->running;
	g->domains += r->domains;
	g->clients += r->clients;
	g->batches_total += r->batches;
	g->items_total += r->items;
}

void top_gpus_merge(struct top_sample *s, const struct vyre_bpf_loop *loops, uint32_t n_loops,
		    const struct vyre_bpf_gpu *per_gpu)
{
	struct top_gpu all[VYRE_BPF_MAX_GPUS];

	memset(all, 0, sizeof(all));
	for (uint32_t l = 0; l < n_loops; l++) {
		const struct vyre_tm_gpu *r = &loops[l].state;
		if (r->bytes == sizeof(*r) && r->gpu < VYRE_BPF_MAX_GPUS)
			add_loop(&all[r->gpu], &loops[l]);
	}
	s->n_gpus = 0;
	for (uint32_t i = 0; i < VYRE_BPF_MAX_GPUS; i++) {
		all[i].gpu = i;
		all[i].c = per_gpu[i];
		if (all[i].loops == 0 && all[i].c.batches == 0 && all[i].c.dispatches == 0)
			continue;
		s->gpus[s->n_gpus++] = all[i];
	}
}
