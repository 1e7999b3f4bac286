/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend: executes a planned batch group by group, in plan order.
 * Items of one group are independent (the planner guarantees no RAW, WAR or
 * WAW hazard between them), so a group large enough to pay for the hand-off
 * is shared between the submitting thread and helper threads, which claim
 * items from a shared cursor; the group ends when every helper that joined
 * it is done (one that wakes after the last claim does not join), and only
 * then does the next group start.
 *
 * submit() runs the whole batch before returning (the submitting thread
 * works too, so a batch costs no thread hand-off when its groups are small);
 * poll() then reports it done. Nothing is allocated after init.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

#define CPU_MAX_THREADS		   64u
#define CPU_DEFAULT_PARALLEL_BYTES (64u * 1024u)
/* Claims per thread per group: small enough to balance uneven items. */
#define CPU_CLAIMS_PER_THREAD 4u

struct vyre_backend {
	struct vyre_backend_config cfg;
	struct vyre_heap_view *heaps;
	pthread_t *helpers;
	uint32_t n_helpers;
	uint32_t parallel_min_bytes;
	atomic_int done; /* poll may run on another thread than submit */

	pthread_mutex_t lock;
	pthread_cond_t work_cv; /* helpers wait here for the next group */
	pthread_cond_t idle_cv; /* the submitter waits here for joined helpers */
	uint64_t generation;	/* bumped per shared group; guarded by lock */
	int open;		/* the current group still takes helpers; guarded by lock */
	uint32_t joined;	/* helpers working on the current group; guarded by lock */
	int stop;		/* guarded by lock */

	/* The current shared group, written under lock before the generation bump. */
	const struct vyre_exec_batch *batch;
	uint32_t group_end;
	uint32_t chunk;
	atomic_uint cursor; /* next position of plan.order to claim */
};

static void run_item(struct vyre_backend *b, const struct vyre_exec_batch *batch, uint32_t i)
{
	const struct vyre_exec_item *it = &batch->items[i];
	struct vyre_exec_result *r = &batch->results[i];

	r->reserved = 0;
	if (it->heap >= b->cfg.max_heaps || !b->heaps[it->heap].base) {
		r->status = VYRE_E_INVAL;
		r->result = 0;
		return;
	}
	r->status = vyre_exec_one(b->heaps, it, &r->result);
}

static void run_range(struct vyre_backend *b, const struct vyre_exec_batch *batch, uint32_t from,
		      uint32_t to)
{
	for (uint32_t pos = from; pos < to; pos++)
		run_item(b, batch, batch->plan.order[pos]);
}

/* Claim chunks of the shared group until none is left. */
static void run_claims(struct vyre_backend *b, const struct vyre_exec_batch *batch,
		       uint32_t group_end, uint32_t chunk)
{
	for (;;) {
		uint32_t from = atomic_fetch_add_explicit(&b->cursor, chunk, memory_order_relaxed);

		if (from >= group_end)
			return;
		run_range(b, batch, from, group_end - from < chunk ? group_end : from + chunk);
	}
}

static void *helper_main(void *arg)
{
	struct vyre_backend *b = arg;
	uint64_t seen = 0;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->stop && b->generation == seen)
			pthread_cond_wait(&b->work_cv, &b->lock);
		if (b->stop)
			break;
		seen = b->generation;
		if (!b->open)
			continue;
		const struct vyre_exec_batch *batch = b->batch;
		uint32_t group_end = b->group_end, chunk = b->chunk;

		b->joined++;
		pthread_mutex_unlock(&b->lock);
		run_claims(b, batch, group_end, chunk);
		pthread_mutex_lock(&b->lock);
		if (--b->joined == 0)
			pthread_cond_signal(&b->idle_cv);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static void run_shared(struct vyre_backend *b, const struct vyre_exec_batch *batch, uint32_t from,
		       uint32_t to)
{
	uint32_t claims = (b->n_helpers + 1) * CPU_CLAIMS_PER_THREAD;
	uint32_t chunk = (to - from) / claims;

	if (chunk == 0)
		chunk = 1;

	pthread_mutex_lock(&b->lock);
	b->batch = batch;
	b->group_end = to;
	b->chunk = chunk;
	atomic_store_explicit(&b->cursor, from, memory_order_relaxed);
	b->open = 1;
	b->generation++;
	pthread_cond_broadcast(&b->work_cv);
	pthread_mutex_unlock(&b->lock);

	run_claims(b, batch, to, chunk);

	/* Every item is claimed: helpers that have not joined yet need not. */
	pthread_mutex_lock(&b->lock);
	b->open = 0;
	while (b->joined > 0)
		pthread_cond_wait(&b->idle_cv, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

static uint64_t group_bytes(const struct vyre_exec_batch *batch, uint32_t from, uint32_t to)
{
	uint64_t bytes = 0;

	for (uint32_t pos = from; pos < to; pos++) {
		const struct vyre_exec_item *it = &batch->items[batch->plan.order[pos]];

		bytes += (uint64_t)it->in_bytes + it->out_bytes + it->table_bytes;
	}
	return bytes;
}

/* Every index in range and groups covering order[] exactly: else nothing runs. */
static int plan_ok(const struct vyre_exec_batch *batch)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint32_t prev = 0;

	/* Claims past a group's end must not wrap the shared cursor. */
	if (p->n_order > UINT32_MAX / 2)
		return 0;
	if (p->n_order && (!p->order || !p->group_end || p->n_groups == 0))
		return 0;
	for (uint32_t k = 0; k < p->n_order; k++)
		if (p->order[k] >= batch->n_items)
			return 0;
	for (uint32_t g = 0; g < p->n_groups; g++) {
		if (p->group_end[g] < prev || p->group_end[g] > p->n_order)
			return 0;
		prev = p->group_end[g];
	}
	return prev == p->n_order;
}

static int cpu_submit(struct vyre_backend *b, const struct vyre_exec_batch *batch)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint32_t from = 0;

	if (!plan_ok(batch))
		return VYRE_E_INVAL;
	for (uint32_t g = 0; g < p->n_groups; g++) {
		uint32_t to = p->group_end[g];

		if (b->n_helpers && to - from >= 2 &&
		    group_bytes(batch, from, to) >= b->parallel_min_bytes)
			run_shared(b, batch, from, to);
		else
			run_range(b, batch, from, to);
		from = to;
	}
	atomic_store_explicit(&b->done, 1, memory_order_release);
	return 0;
}

static int cpu_poll(struct vyre_backend *b, int64_t timeout_ns)
{
	(void)timeout_ns;
	return atomic_load_explicit(&b->done, memory_order_acquire);
}

static void stop_helpers(struct vyre_backend *b, uint32_t started)
{
	pthread_mutex_lock(&b->lock);
	b->stop = 1;
	pthread_cond_broadcast(&b->work_cv);
	pthread_mutex_unlock(&b->lock);
	for (uint32_t t = 0; t < started; t++)
		pthread_join(b->helpers[t], NULL);
}

static void free_backend(struct vyre_backend *b)
{
	pthread_cond_destroy(&b->idle_cv);
	pthread_cond_destroy(&b->work_cv);
	pthread_mutex_destroy(&b->lock);
	free(b->helpers);
	free(b->heaps);
	free(b);
}

static uint32_t thread_count(const struct vyre_backend_config *cfg)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = cfg->cpu_threads ? cfg->cpu_threads : online > 0 ? (uint32_t)online : 1;

	return n > CPU_MAX_THREADS ? CPU_MAX_THREADS : n;
}

static int cpu_init(struct vyre_backend **out, const struct vyre_backend_config *cfg, char *why,
		    uint32_t why_len)
{
	struct vyre_backend *b;
	uint32_t started = 0;

	*out = NULL;
	if (cfg->max_heaps == 0) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: max_heaps is 0");
		return VYRE_E_INVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return VYRE_E_NOMEM;
	b->cfg = *cfg;
	atomic_init(&b->done, 1);
	b->n_helpers = thread_count(cfg) - 1;
	b->parallel_min_bytes =
	    cfg->cpu_parallel_min_bytes ? cfg->cpu_parallel_min_bytes : CPU_DEFAULT_PARALLEL_BYTES;
	atomic_init(&b->cursor, 0);
	if (pthread_mutex_init(&b->lock, NULL) || pthread_cond_init(&b->work_cv, NULL) ||
	    pthread_cond_init(&b->idle_cv, NULL)) {
		free(b);
		return VYRE_E_NOMEM;
	}
	b->heaps = calloc(cfg->max_heaps, sizeof(*b->heaps));
	b->helpers = calloc(b->n_helpers ? b->n_helpers : 1, sizeof(*b->helpers));
	if (!b->heaps || !b->helpers) {
		free_backend(b);
		return VYRE_E_NOMEM;
	}
	for (; started < b->n_helpers; started++)
		if (pthread_create(&b->helpers[started], NULL, helper_main, b))
			break;
	if (started < b->n_helpers) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: started %u of %u worker threads",
				 started, b->n_helpers);
		stop_helpers(b, started);
		free_backend(b);
		return VYRE_E_NOMEM;
	}
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

static void cpu_shutdown(struct vyre_backend *b)
{
	if (!b)
		return;
	stop_helpers(b, b->n_helpers);
	free_backend(b);
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
