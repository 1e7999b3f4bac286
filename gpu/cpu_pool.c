/* SPDX-License-Identifier: MIT */
/*
 * The worker pool of the CPU backend (see cpu_pool.h): how a batch runs,
 * group by group, on its owner and the idle workers that join a large
 * group, and what a worker does between batches.
 */
#include "cpu_pool.h"

#include <sched.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

void vyre_cpu_spin_while(const atomic_uint *seq, unsigned seen, uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	for (uint32_t i = 1;; i++) {
		if (atomic_load_explicit(seq, memory_order_relaxed) != seen)
			return;
		if (i < CPU_SPIN_BUSY) {
			cpu_relax();
			continue;
		}
		sched_yield();
		if (now_ns() >= end)
			return;
	}
}

/*
 * Items at plan positions [from, to) on thread @t (cpu_unit.h: its scratch).
 * The items of a group may run in any order (backend.h); a test that sets
 * VYRE_CPU_GROUP_ORDER=reverse runs each range backwards, so that a plan
 * putting two items with a hazard in one group gives a wrong result instead
 * of the right one by luck of the order.
 */
static void run_range(struct vyre_backend *b, const struct vyre_exec_batch *batch, uint32_t from,
		      uint32_t to, uint32_t t)
{
	/* a predecessor ran in an earlier group, whose end this thread has seen */
	if (b->reverse) {
		for (uint32_t pos = to; pos-- > from;)
			vyre_cpu_run_item(&b->exec, batch, batch->plan.order[pos], t);
		return;
	}
	for (uint32_t pos = from; pos < to; pos++)
		vyre_cpu_run_item(&b->exec, batch, batch->plan.order[pos], t);
}

/* Claim chunks of a slot's open group until none is left. */
static void run_claims(struct vyre_backend *b, struct cpu_slot *s,
		       const struct vyre_exec_batch *batch, uint32_t group_end, uint32_t chunk,
		       uint32_t t)
{
	for (;;) {
		uint32_t from = atomic_fetch_add_explicit(&s->cursor, chunk, memory_order_relaxed);

		if (from >= group_end)
			return;
		run_range(b, batch, from, group_end - from < chunk ? group_end : from + chunk, t);
	}
}

/* Called with lock held, once every item of the group is claimed: no one else need join. */
static void close_group(struct vyre_backend *b, struct cpu_slot *s)
{
	uint32_t last;

	if (!s->open)
		return;
	last = b->open[--b->n_open];
	b->open[s->open_pos] = last;
	b->slots[last].open_pos = s->open_pos;
	s->open = 0;
}

/* Called and returns with lock held: join @s's open group and claim until it is all taken. */
static void help(struct vyre_backend *b, struct cpu_slot *s, uint32_t t)
{
	const struct vyre_exec_batch *batch = s->batch;
	uint32_t group_end = s->group_end, chunk = s->chunk;

	s->joined++;
	pthread_mutex_unlock(&b->lock);
	run_claims(b, s, batch, group_end, chunk, t);
	pthread_mutex_lock(&b->lock);
	close_group(b, s);
	if (--s->joined == 0)
		pthread_cond_signal(&s->idle_cv);
}

/* The owner of @s shares positions [from, to) with idle workers and returns when all ran. */
static void run_shared(struct vyre_backend *b, struct cpu_slot *s,
		       const struct vyre_exec_batch *batch, uint32_t from, uint32_t to, uint32_t t)
{
	uint32_t chunk = (to - from) / (b->n_workers * CPU_CLAIMS_PER_THREAD);

	if (chunk == 0)
		chunk = 1;

	pthread_mutex_lock(&b->lock);
	s->group_end = to;
	s->chunk = chunk;
	atomic_store_explicit(&s->cursor, from, memory_order_relaxed);
	s->open = 1;
	s->open_pos = b->n_open;
	b->open[b->n_open++] = (uint32_t)(s - b->slots);
	pthread_cond_broadcast(&b->work_cv);
	pthread_mutex_unlock(&b->lock);
	atomic_fetch_add_explicit(&b->work_seq, 1, memory_order_relaxed);

	run_claims(b, s, batch, to, chunk, t);

	pthread_mutex_lock(&b->lock);
	close_group(b, s);
	while (s->joined > 0)
		pthread_cond_wait(&s->idle_cv, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

void vyre_cpu_run_batch(struct vyre_backend *b, struct cpu_slot *s,
			const struct vyre_exec_batch *batch, uint32_t t)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint32_t from = 0;

	for (uint32_t g = 0; g < p->n_groups; g++) {
		uint32_t to = p->group_end[g];

		if (b->n_workers > 1 && to - from >= 2 &&
		    vyre_cpu_group_bytes(batch, from, to) >= b->parallel_min_bytes)
			run_shared(b, s, batch, from, to, t);
		else
			run_range(b, batch, from, to, t);
		from = to;
	}
}

/*
 * Out of work, a worker polls for more before it sleeps, unless another
 * worker polls already (one is enough to catch the next submit, and on a
 * small machine more would take cores from the busy ones).
 */
void *vyre_cpu_worker_main(void *arg)
{
	const struct cpu_worker *self = arg;
	struct vyre_backend *b = self->b;
	const uint32_t t = self->index;
	int spun = 0;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		if (b->run.len) {
			struct cpu_slot *s = &b->slots[vyre_cpu_fifo_pop(&b->run, b->n_slots)];
			const struct vyre_exec_batch *batch = s->batch;

			pthread_mutex_unlock(&b->lock);
			vyre_cpu_run_batch(b, s, batch, t);
			pthread_mutex_lock(&b->lock);
			vyre_cpu_finish_slot(b, s);
			b->returning++;
			pthread_mutex_unlock(&b->lock);
			vyre_cpu_signal_completion(b);
			pthread_mutex_lock(&b->lock);
			b->returning--;
			spun = 0;
		} else if (b->n_open) {
			help(b, &b->slots[b->open[0]], t);
			spun = 0;
		} else if (b->stop) {
			break;
		} else if (!spun && !b->spinner) {
			unsigned seen = atomic_load_explicit(&b->work_seq, memory_order_relaxed);

			b->spinner = 1;
			pthread_mutex_unlock(&b->lock);
			vyre_cpu_spin_while(&b->work_seq, seen, CPU_SPIN_NS);
			pthread_mutex_lock(&b->lock);
			b->spinner = 0;
			spun = 1;
		} else {
			pthread_cond_wait(&b->work_cv, &b->lock);
		}
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}
