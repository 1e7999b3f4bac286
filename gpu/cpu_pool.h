/* SPDX-License-Identifier: MIT */
/*
 * gpu/cpu_pool.h - the state of a CPU backend and its worker pool
 * (cpu_pool.c), which cpu_backend.c (the ops table) drives.
 *
 * Up to max_inflight batches run at once on a pool of worker threads. A
 * batch goes on a FIFO run queue; the first free worker takes it and becomes
 * its owner, running the batch group by group in plan order. Items of one
 * group are independent (the planner guarantees no RAW, WAR or WAW hazard
 * between them), so a group large enough to pay for the hand-off is opened
 * to idle workers, which claim items from the slot's cursor; the group ends
 * when every worker that joined it is done (one that comes after the last
 * claim does not join), and only then does the owner start the next group.
 * Several slots may have a group open at once: slots never share buffers
 * (the caller guarantees it), so their groups need no order. A free worker
 * takes a queued slot before it helps with an open group, so queued slots
 * start in FIFO order as soon as any worker is free.
 *
 * A finished slot goes on the done queue that reap drains, then one is
 * added to the eventfd's counter. A worker out of work, and reap before it
 * sleeps, poll for a short while first: most batches are shorter than a
 * futex wake-up.
 */
#ifndef VYRE_GPU_CPU_POOL_H
#define VYRE_GPU_CPU_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "backend.h"
#include "cpu_unit.h"

/* Claims per thread per group: small enough to balance uneven items. */
#define CPU_CLAIMS_PER_THREAD 4u
/*
 * How long a thread that would sleep polls first: a futex wake costs tens of
 * microseconds on a loaded or virtual machine, more than a small batch runs.
 */
#define CPU_SPIN_NS 50000
/* Looks before the poll starts yielding: about a microsecond. */
#define CPU_SPIN_BUSY 256u

struct cpu_slot {
	const struct vyre_exec_batch *batch; /* guarded by lock */
	int busy;	   /* submitted and not reported by reap yet; guarded by lock */
	int32_t status;	   /* what reap reports: 0, or VYRE_E_DEVICE after an injected fault */
	int open;	   /* listed in b->open; guarded by lock */
	uint32_t open_pos; /* its index in b->open while open */
	uint32_t joined;   /* helpers in the open group; guarded by lock */
	/* The open group, written under lock before it is listed. */
	uint32_t group_end;
	uint32_t chunk;
	atomic_uint cursor;	/* next position of plan.order to claim */
	pthread_cond_t idle_cv; /* the owner waits here for the helpers that joined */
};

/* A FIFO of slot indices; each slot is on it at most once, so n_slots entries suffice. */
struct slot_fifo {
	uint32_t *v;
	uint32_t head;
	uint32_t len;
};

/* What a worker thread is started with: its index picks its scratch (cpu_unit.h). */
struct cpu_worker {
	struct vyre_backend *b;
	uint32_t index;
};

struct vyre_backend {
	struct vyre_backend_config cfg;
	/* cfg.max_heaps heaps, then each thread's two scratch buffers (cpu_unit.h) */
	struct vyre_heap_view *heaps;
	struct vyre_cpu_exec exec;
	uint8_t *scratch; /* every scratch buffer, one private mapping */
	size_t scratch_map;
	struct cpu_worker *args;
	uint8_t *device; /* per heap: 1 when it is a device buffer this backend mapped */
	pthread_t *workers;
	uint32_t n_workers;
	uint32_t n_slots;
	uint32_t parallel_min_bytes;
	int efd;
	struct cpu_slot *slots;
	uint32_t n_slot_cvs;   /* slot condvars initialised, for teardown after a failed init */
	int sync_ok;	       /* lock, work_cv and done_cv initialised */
	int inject;	       /* VYRE_CPU_INJECT=fault: the next batch faults the backend */
	int reverse;	       /* VYRE_CPU_GROUP_ORDER=reverse: a test hook, below */
	uint32_t inject_after; /* VYRE_INJECT_AFTER: batches to run before that one */
	atomic_int dead;       /* after an injected fault: unusable, as after a CUDA fault */

	pthread_mutex_t lock;
	pthread_cond_t work_cv; /* workers wait here for a queued slot or an open group */
	pthread_cond_t done_cv; /* reap and shutdown wait here for a finished slot */
	/* Guarded by lock: */
	struct slot_fifo run;  /* queued slots */
	struct slot_fifo done; /* finished slots that reap has not reported */
	uint32_t *open;	       /* slots whose current group takes helpers */
	uint32_t n_open;
	uint32_t active;    /* slots queued or running */
	int spinner;	    /* a worker polls work_seq instead of waiting on work_cv */
	uint32_t returning; /* workers signalling a finish, to look at the queue next */
	int stop;
	/*
	 * Polled without the lock by spinning threads, which then take the lock
	 * to look. Each moves after the lock is released on the change it
	 * announces, so that the poller does not find the lock still held.
	 */
	atomic_uint work_seq; /* a slot was queued or a group opened */
	atomic_uint done_seq; /* a slot finished */
};

/*
 * Poll @seq for up to @ns nanoseconds; returns early once it moves from
 * @seen. After a short busy poll it yields the CPU between looks: when
 * threads outnumber cores, the thread it waits for may need this one's.
 */
void vyre_cpu_spin_while(const atomic_uint *seq, unsigned seen, uint64_t ns);

/* Run @batch of slot @s group by group on thread @t, sharing large groups with idle workers. */
void vyre_cpu_run_batch(struct vyre_backend *b, struct cpu_slot *s,
			const struct vyre_exec_batch *batch, uint32_t t);

/* A worker thread (@arg: its struct cpu_worker), until b->stop with nothing queued. */
void *vyre_cpu_worker_main(void *arg);

/* Small helpers of submit, reap and the workers: inline, as the build has no LTO. */
static inline void vyre_cpu_fifo_push(struct slot_fifo *q, uint32_t cap, uint32_t slot)
{
	q->v[(q->head + q->len) % cap] = slot;
	q->len++;
}

static inline uint32_t vyre_cpu_fifo_pop(struct slot_fifo *q, uint32_t cap)
{
	uint32_t slot = q->v[q->head];

	q->head = (q->head + 1) % cap;
	q->len--;
	return slot;
}

static inline uint64_t vyre_cpu_group_bytes(const struct vyre_exec_batch *batch, uint32_t from,
					    uint32_t to)
{
	uint64_t bytes = 0;

	for (uint32_t pos = from; pos < to; pos++) {
		const struct vyre_exec_item *it = &batch->items[batch->plan.order[pos]];

		bytes += (uint64_t)it->in_bytes + it->out_bytes + it->table_bytes;
	}
	return bytes;
}

/* Called with lock held: @s's results are all written. */
static inline void vyre_cpu_finish_slot(struct vyre_backend *b, const struct cpu_slot *s)
{
	vyre_cpu_fifo_push(&b->done, b->n_slots, (uint32_t)(s - b->slots));
	b->active--;
	pthread_cond_broadcast(&b->done_cv);
}

/* Called after vyre_cpu_finish_slot, without the lock: the slot is already on the done queue. */
static inline void vyre_cpu_signal_completion(struct vyre_backend *b)
{
	uint64_t one = 1;

	atomic_fetch_add_explicit(&b->done_seq, 1, memory_order_relaxed);
	/*
	 * EAGAIN means the counter is near overflow, so the descriptor is
	 * readable already; there is no other failure for a valid eventfd.
	 */
	ssize_t n = write(b->efd, &one, sizeof(one));

	(void)n;
}

#endif /* VYRE_GPU_CPU_POOL_H */
