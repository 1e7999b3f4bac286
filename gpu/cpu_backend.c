/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend: executes a planned batch on the calling thread, group by
 * group, in plan order. Synchronous: submit() finishes the batch and poll()
 * reports it done.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

struct vyre_backend {
	struct vyre_backend_config cfg;
	struct vyre_heap_view *heaps;
	int done;
};

static int cpu_init(struct vyre_backend **out, const struct vyre_backend_config *cfg, char *why,
		    uint32_t why_len)
{
	struct vyre_backend *b;

	if (cfg->max_heaps == 0) {
		if (why_len)
			strncpy(why, "cpu backend: max_heaps is 0", why_len - 1);
		return VYRE_E_INVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return VYRE_E_NOMEM;
	b->heaps = calloc(cfg->max_heaps, sizeof(*b->heaps));
	if (!b->heaps) {
		free(b);
		return VYRE_E_NOMEM;
	}
	b->cfg = *cfg;
	b->done = 1;
	*out = b;
	return 0;
}

static int cpu_register_heap(struct vyre_backend *b, uint32_t heap, uint8_t *base, uint64_t bytes)
{
	if (heap >= b->cfg.max_heaps)
		return VYRE_E_INVAL;
	b->heaps[heap].base = base;
	b->heaps[heap].bytes = bytes;
	return 0;
}

static int cpu_unregister_heap(struct vyre_backend *b, uint32_t heap)
{
	if (heap >= b->cfg.max_heaps)
		return VYRE_E_INVAL;
	b->heaps[heap].base = NULL;
	b->heaps[heap].bytes = 0;
	return 0;
}

static int cpu_submit(struct vyre_backend *b, const struct vyre_exec_batch *batch)
{
	const struct vyre_exec_plan *p = &batch->plan;

	for (uint32_t k = 0; k < p->n_order; k++) {
		uint32_t i = p->order[k];

		if (i >= batch->n_items)
			return VYRE_E_INVAL;
		const struct vyre_exec_item *it = &batch->items[i];

		if (it->heap >= b->cfg.max_heaps || !b->heaps[it->heap].base) {
			batch->results[i].status = VYRE_E_INVAL;
			batch->results[i].result = 0;
			continue;
		}
		batch->results[i].status = vyre_exec_one(b->heaps, it, &batch->results[i].result);
	}
	b->done = 1;
	return 0;
}

static int cpu_poll(struct vyre_backend *b, int64_t timeout_ns)
{
	(void)timeout_ns;
	return b->done;
}

static void cpu_shutdown(struct vyre_backend *b)
{
	if (!b)
		return;
	free(b->heaps);
	free(b);
}

const struct vyre_backend_ops vyre_cpu_backend = {
	.name = "cpu",
	.init = cpu_init,
	.register_heap = cpu_register_heap,
	.unregister_heap = cpu_unregister_heap,
	.submit = cpu_submit,
	.poll = cpu_poll,
	.shutdown = cpu_shutdown,
};
