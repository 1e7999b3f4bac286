/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend as gpu/backend.h sees it: the ops table, init and
 * shutdown, heaps and device buffers, submit and reap. The worker pool that
 * runs the batches is cpu_pool.c (see cpu_pool.h for how).
 *
 * submit() runs a small batch itself (CPU_INLINE_BYTES: less work than a
 * hand-off costs), reported by the next reap without an eventfd write (the
 * caller is awake: it just submitted); any other batch goes on the pool's
 * run queue. Nothing is allocated after init.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cpu_pool.h"

#define CPU_MAX_THREADS		   64u
#define CPU_DEFAULT_PARALLEL_BYTES (64u * 1024u)
/* Each of a thread's two on-chip handoff buffers (cpu_unit.h). */
#define CPU_DEFAULT_SCRATCH_BYTES (1u << 20)
/* reap returns a count of slots as an int. */
#define CPU_MAX_SLOTS 65536u

/* a scratch buffer's heap index (cpu_unit.h) fits an exec item's 16 bits */
_Static_assert(VYRE_BACKEND_MAX_HEAPS + 2 * (CPU_MAX_THREADS + 1) <= VYRE_EXEC_MAX_HEAPS,
	       "scratch heaps fit an exec item");
/* A batch that touches at most this many bytes runs inside submit. */
#define CPU_INLINE_BYTES (16u * 1024u)

/* Every index in range and groups covering order[] exactly: else nothing runs. */
static int plan_ok(const struct vyre_exec_batch *batch)
{
	const struct vyre_exec_plan *p = &batch->plan;
	uint32_t prev = 0;

	/* Claims past a group's end must not wrap the shared cursor. */
	if (p->n_order > UINT32_MAX / 2)
		return 0;
	if (p->n_order &&
	    (!p->order || !p->group_end || p->n_groups == 0 || !batch->items || !batch->results))
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

static int cpu_submit(struct vyre_backend *b, uint32_t slot, const struct vyre_exec_batch *batch)
{
	struct cpu_slot *s;

	if (slot >= b->n_slots || !batch || !plan_ok(batch))
		return VYRE_E_INVAL;
	if (atomic_load(&b->dead))
		return VYRE_E_DEVICE;
	s = &b->slots[slot];
	pthread_mutex_lock(&b->lock);
	if (s->busy) {
		pthread_mutex_unlock(&b->lock);
		return VYRE_E_INVAL;
	}
	s->batch = batch;
	s->busy = 1;
	s->status = 0;
	b->active++;
	if (b->inject && batch->plan.n_order > 0 && b->inject_after) {
		b->inject_after--;
	} else if (b->inject && batch->plan.n_order > 0) {
		/* the test hook of docs/design.md 8.8: this batch fails as after a device fault */
		b->inject = 0;
		atomic_store(&b->dead, 1);
		s->status = VYRE_E_DEVICE;
		vyre_cpu_finish_slot(b, s);
		pthread_mutex_unlock(&b->lock);
		vyre_cpu_signal_completion(b);
		return 0;
	}
	if (batch->plan.n_order == 0) {
		/* Nothing to run: done at once, without a hand-off. */
		vyre_cpu_finish_slot(b, s);
		pthread_mutex_unlock(&b->lock);
		vyre_cpu_signal_completion(b);
		return 0;
	}
	if (!b->cfg.cpu_handoff_all &&
	    vyre_cpu_group_bytes(batch, 0, batch->plan.n_order) <= CPU_INLINE_BYTES) {
		/*
		 * Small enough to run here in less time than a hand-off to a
		 * worker takes (a wake-up, or a core shared with the submitter on
		 * a small machine): no hazard with the other slots' batches.
		 */
		pthread_mutex_unlock(&b->lock);
		/* the submitting thread's scratch comes after the workers' */
		vyre_cpu_run_batch(b, s, batch, b->n_workers);
		pthread_mutex_lock(&b->lock);
		vyre_cpu_finish_slot(b, s);
		pthread_mutex_unlock(&b->lock);
		atomic_fetch_add_explicit(&b->done_seq, 1, memory_order_relaxed);
		return 0;
	}
	vyre_cpu_fifo_push(&b->run, b->n_slots, slot);
	/*
	 * The polling worker and those returning from a finish look at the
	 * queue under the lock before they sleep, and each takes a queued slot
	 * if there is one: wake a waiting worker only for the slots they leave.
	 */
	if (b->run.len > b->returning + (b->spinner ? 1u : 0u))
		pthread_cond_signal(&b->work_cv);
	pthread_mutex_unlock(&b->lock);
	atomic_fetch_add_explicit(&b->work_seq, 1, memory_order_relaxed);
	return 0;
}

static void deadline_after(struct timespec *ts, int64_t ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ns / 1000000000);
	ts->tv_nsec += (long)(ns % 1000000000);
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/*
 * The done queue, not the eventfd, says which slots finished: reap reports
 * a finished slot whether or not anyone read the eventfd, and reading or
 * clearing the eventfd is the caller's job (it counts finishes; a read
 * returns that count and resets it). A read that finds slots reaped already
 * leads to a reap that returns 0, which is harmless. With no slot queued,
 * running or unreported, nothing can finish, so reap returns 0 at once
 * whatever the timeout.
 */
static int cpu_reap(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max,
		    int64_t timeout_ns)
{
	struct timespec deadline;
	uint32_t n = 0;

	if (max == 0)
		return 0;
	if (!done)
		return VYRE_E_INVAL;
	if (timeout_ns > 0)
		deadline_after(&deadline, timeout_ns);
	pthread_mutex_lock(&b->lock);
	if (b->done.len == 0 && b->active > 0 && timeout_ns != 0) {
		unsigned seen = atomic_load_explicit(&b->done_seq, memory_order_relaxed);

		pthread_mutex_unlock(&b->lock);
		vyre_cpu_spin_while(&b->done_seq, seen,
				    timeout_ns > 0 && timeout_ns < CPU_SPIN_NS
					? (uint64_t)timeout_ns
					: CPU_SPIN_NS);
		pthread_mutex_lock(&b->lock);
	}
	while (b->done.len == 0 && b->active > 0 && timeout_ns != 0) {
		if (timeout_ns < 0)
			pthread_cond_wait(&b->done_cv, &b->lock);
		else if (pthread_cond_timedwait(&b->done_cv, &b->lock, &deadline) == ETIMEDOUT)
			break;
	}
	while (n < max && b->done.len) {
		uint32_t slot = vyre_cpu_fifo_pop(&b->done, b->n_slots);

		b->slots[slot].busy = 0;
		b->slots[slot].batch = NULL;
		done[n++] = (struct vyre_slot_done){.slot = slot, .status = b->slots[slot].status};
	}
	pthread_mutex_unlock(&b->lock);
	return (int)n;
}

static int cpu_completion_fd(struct vyre_backend *b)
{
	return b->efd;
}

/* Stop the first @started workers once no slot is queued or running. */
static void stop_workers(struct vyre_backend *b, uint32_t started)
{
	pthread_mutex_lock(&b->lock);
	while (b->active > 0)
		pthread_cond_wait(&b->done_cv, &b->lock);
	b->stop = 1;
	pthread_cond_broadcast(&b->work_cv);
	pthread_mutex_unlock(&b->lock);
	for (uint32_t t = 0; t < started; t++)
		pthread_join(b->workers[t], NULL);
}

/* A device buffer's mapping: whole pages, at least one, so even 0 bytes have a base. */
static size_t device_map_bytes(uint64_t bytes)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (size_t)(bytes ? (bytes + page - 1) / page * page : page);
}

static void free_backend(struct vyre_backend *b)
{
	for (uint32_t i = 0; i < b->n_slot_cvs; i++)
		pthread_cond_destroy(&b->slots[i].idle_cv);
	if (b->sync_ok) {
		pthread_cond_destroy(&b->done_cv);
		pthread_cond_destroy(&b->work_cv);
		pthread_mutex_destroy(&b->lock);
	}
	if (b->efd >= 0)
		close(b->efd);
	free(b->open);
	free(b->done.v);
	free(b->run.v);
	free(b->slots);
	free(b->workers);
	free(b->args);
	if (b->scratch)
		munmap(b->scratch, b->scratch_map);
	for (uint32_t h = 0; b->device && h < b->cfg.max_heaps; h++)
		if (b->device[h])
			munmap(b->heaps[h].base, device_map_bytes(b->heaps[h].bytes));
	free(b->device);
	free(b->heaps);
	free(b);
}

static uint32_t thread_count(const struct vyre_backend_config *cfg)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = cfg->cpu_threads ? cfg->cpu_threads : online > 0 ? (uint32_t)online : 1;

	return n > CPU_MAX_THREADS ? CPU_MAX_THREADS : n;
}

/* reap's timed wait measures CLOCK_MONOTONIC, which wall-clock steps do not move. */
static int init_sync(struct vyre_backend *b)
{
	pthread_condattr_t attr;
	int rc = -1;

	if (pthread_condattr_init(&attr))
		return -1;
	if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
	    pthread_mutex_init(&b->lock, NULL) == 0) {
		if (pthread_cond_init(&b->work_cv, NULL) == 0) {
			rc = pthread_cond_init(&b->done_cv, &attr);
			if (rc)
				pthread_cond_destroy(&b->work_cv);
		}
		if (rc)
			pthread_mutex_destroy(&b->lock);
	}
	pthread_condattr_destroy(&attr);
	if (rc)
		return -1;
	b->sync_ok = 1;
	for (; b->n_slot_cvs < b->n_slots; b->n_slot_cvs++) {
		struct cpu_slot *s = &b->slots[b->n_slot_cvs];

		atomic_init(&s->cursor, 0);
		if (pthread_cond_init(&s->idle_cv, NULL))
			return -1;
	}
	return 0;
}

/*
 * Two scratch buffers for each worker and for the submitting thread, in one
 * private mapping: pages are only made when a handoff first touches them.
 */
static int init_scratch(struct vyre_backend *b, char *why, uint32_t why_len)
{
	const uint64_t each =
	    b->cfg.cpu_scratch_bytes ? b->cfg.cpu_scratch_bytes : CPU_DEFAULT_SCRATCH_BYTES;
	const uint32_t n = 2 * (b->n_workers + 1);

	if (each > (uint64_t)SIZE_MAX / 4 / n) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: %llu scratch bytes per thread",
				 (unsigned long long)each);
		return -1;
	}
	b->scratch_map = device_map_bytes(each * n);
	void *p =
	    mmap(NULL, b->scratch_map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: mmap of %zu scratch bytes: %s",
				 b->scratch_map, strerror(errno));
		return -1;
	}
	b->scratch = p;
	b->exec = (struct vyre_cpu_exec){b->heaps, b->cfg.max_heaps, each};
	for (uint32_t k = 0; k < n; k++)
		b->heaps[b->cfg.max_heaps + k] =
		    (struct vyre_heap_view){b->scratch + (size_t)k * each, each};
	return 0;
}

static int cpu_init(struct vyre_backend **out, const struct vyre_backend_config *cfg, char *why,
		    uint32_t why_len)
{
	struct vyre_backend *b;
	uint32_t started = 0;

	*out = NULL;
	if (cfg->max_heaps == 0 || cfg->max_heaps > VYRE_BACKEND_MAX_HEAPS) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: max_heaps %u is not 1 to %u",
				 cfg->max_heaps, VYRE_BACKEND_MAX_HEAPS);
		return VYRE_E_INVAL;
	}
	if (cfg->max_inflight > CPU_MAX_SLOTS) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: max_inflight %u is above %u",
				 cfg->max_inflight, CPU_MAX_SLOTS);
		return VYRE_E_INVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return VYRE_E_NOMEM;
	b->cfg = *cfg;
	b->efd = -1;
	b->inject = vyre_backend_inject_fault("VYRE_CPU_INJECT", cfg->device);
	const char *order = getenv("VYRE_CPU_GROUP_ORDER");

	b->reverse = order && strcmp(order, "reverse") == 0;
	b->inject_after = vyre_backend_inject_after();
	atomic_init(&b->dead, 0);
	atomic_init(&b->work_seq, 0);
	atomic_init(&b->done_seq, 0);
	b->n_workers = thread_count(cfg);
	b->n_slots = cfg->max_inflight ? cfg->max_inflight : 1;
	b->parallel_min_bytes =
	    cfg->cpu_parallel_min_bytes ? cfg->cpu_parallel_min_bytes : CPU_DEFAULT_PARALLEL_BYTES;
	b->heaps =
	    calloc((size_t)cfg->max_heaps + 2 * ((size_t)b->n_workers + 1), sizeof(*b->heaps));
	b->device = calloc(cfg->max_heaps, 1);
	b->workers = calloc(b->n_workers, sizeof(*b->workers));
	b->args = calloc(b->n_workers, sizeof(*b->args));
	b->slots = calloc(b->n_slots, sizeof(*b->slots));
	b->run.v = calloc(b->n_slots, sizeof(*b->run.v));
	b->done.v = calloc(b->n_slots, sizeof(*b->done.v));
	b->open = calloc(b->n_slots, sizeof(*b->open));
	if (!b->heaps || !b->device || !b->workers || !b->args || !b->slots || !b->run.v ||
	    !b->done.v || !b->open || init_sync(b)) {
		free_backend(b);
		return VYRE_E_NOMEM;
	}
	if (init_scratch(b, why, why_len) != 0) {
		free_backend(b);
		return VYRE_E_NOMEM;
	}
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: eventfd: %s", strerror(errno));
		free_backend(b);
		return VYRE_E_NOMEM;
	}
	for (; started < b->n_workers; started++) {
		b->args[started] = (struct cpu_worker){b, started};
		if (pthread_create(&b->workers[started], NULL, vyre_cpu_worker_main,
				   &b->args[started]))
			break;
	}
	if (started < b->n_workers) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: started %u of %u worker threads",
				 started, b->n_workers);
		stop_workers(b, started);
		free_backend(b);
		return VYRE_E_NOMEM;
	}
	*out = b;
	return 0;
}

static int cpu_register_heap(struct vyre_backend *b, uint32_t heap, uint8_t *base, uint64_t bytes)
{
	if (heap >= b->cfg.max_heaps || b->device[heap])
		return VYRE_E_INVAL;
	b->heaps[heap].base = base;
	b->heaps[heap].bytes = bytes;
	return 0;
}

static int cpu_unregister_heap(struct vyre_backend *b, uint32_t heap)
{
	if (heap >= b->cfg.max_heaps || b->device[heap])
		return VYRE_E_INVAL;
	b->heaps[heap].base = NULL;
	b->heaps[heap].bytes = 0;
	return 0;
}

/*
 * The CPU backend's "device" is host memory that only this process maps:
 * anonymous and private, so it starts zero-filled and no client can touch
 * it. Workers see the new heap through the lock a later submit takes.
 */
static int cpu_alloc_device(struct vyre_backend *b, uint32_t heap, uint64_t bytes, char *why,
			    uint32_t why_len)
{
	if (heap >= b->cfg.max_heaps || b->heaps[heap].base || bytes > (uint64_t)SIZE_MAX / 2)
		return VYRE_E_INVAL;
	void *p = mmap(NULL, device_map_bytes(bytes), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		if (why_len)
			snprintf(why, why_len, "cpu backend: mmap of %llu bytes: %s",
				 (unsigned long long)bytes, strerror(errno));
		return VYRE_E_NOMEM;
	}
	b->heaps[heap].base = p;
	b->heaps[heap].bytes = bytes;
	b->device[heap] = 1;
	return 0;
}

static int cpu_free_device(struct vyre_backend *b, uint32_t heap)
{
	if (heap >= b->cfg.max_heaps || !b->device[heap])
		return VYRE_E_INVAL;
	munmap(b->heaps[heap].base, device_map_bytes(b->heaps[heap].bytes));
	b->heaps[heap].base = NULL;
	b->heaps[heap].bytes = 0;
	b->device[heap] = 0;
	return 0;
}

/* Slots still queued or running finish first; unreported ones are dropped. */
static void cpu_shutdown(struct vyre_backend *b)
{
	if (!b)
		return;
	stop_workers(b, b->n_workers);
	free_backend(b);
}

static int cpu_usable(struct vyre_backend *b)
{
	return !atomic_load(&b->dead);
}

/* The CPU is one device, ordinal 0; vyred may still run several instances (8.8). */
static int cpu_devices(struct vyre_device_info *out, uint32_t max, char *why, uint32_t why_len)
{
	if (why_len)
		why[0] = '\0';
	if (max > 0) {
		out[0].ordinal = 0;
		snprintf(out[0].name, sizeof(out[0].name), "cpu");
	}
	return 1;
}

const struct vyre_backend_ops vyre_cpu_backend = {
    .name = "cpu",
    .devices = cpu_devices,
    .init = cpu_init,
    .register_heap = cpu_register_heap,
    .unregister_heap = cpu_unregister_heap,
    .alloc_device = cpu_alloc_device,
    .free_device = cpu_free_device,
    .submit = cpu_submit,
    .reap = cpu_reap,
    .completion_fd = cpu_completion_fd,
    .usable = cpu_usable,
    .shutdown = cpu_shutdown,
};
