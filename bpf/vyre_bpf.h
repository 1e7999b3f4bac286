/* SPDX-License-Identifier: MIT */
/*
 * bpf/vyre_bpf.h - what bpf/vyre.bpf.c aggregates, as vyre-top reads it.
 *
 * The BPF program attaches to vyred's USDT probes (include/vyre/telemetry.h)
 * and keeps:
 *   counters  per-CPU array, one struct vyre_bpf_counters: sum over CPUs
 *   hists     per-CPU array, VYRE_BPF_HIST_COUNT log2 histograms: sum over CPUs
 *   gauges    array, one struct vyre_bpf_gauges: the latest values
 *   clients   LRU per-CPU hash, client id -> struct vyre_bpf_client: sum the
 *             counters over CPUs; the gauges of the CPU with the newest
 *             updated_ns win
 *   slow      ring buffer of struct vyre_bpf_slow_batch, for batches whose
 *             slowest item took at least the slow_batch_ns the program was
 *             loaded with
 *   gpus      per-CPU array, one struct vyre_bpf_gpu per GPU index (the gpu
 *             of complete and dispatch_end): sum over CPUs
 *   classes   per-CPU array, one struct vyre_bpf_class per priority class
 *             (complete's priority): sum over CPUs
 *   loops     array, one struct vyre_bpf_loop per event loop: the latest
 *             gpu_state record of that loop; readers sum a GPU's loops
 *   ops       per-CPU hash, op number -> struct vyre_bpf_op (from ops):
 *             sum the counters over CPUs, the largest max_ns
 *   op_names  hash, op number -> the latest struct vyre_tm_op_info (op_info)
 *   workers   hash, pid -> struct vyre_bpf_worker, written by the reader
 *             for each GPU worker process of a supervisor it attaches to
 *             (docs/design.md 8.8 and 9)
 * Counting starts when the program is attached, not when vyred started.
 * The program may be attached to several processes (a supervisor's GPU
 * workers): every map then sums them all.
 */
#ifndef VYRE_BPF_H
#define VYRE_BPF_H

#include <stdint.h>

#include "vyre/telemetry.h"

#define VYRE_BPF_HIST_BUCKETS 64u
#define VYRE_BPF_MAX_CLIENTS  4096u
/* batches between plan and complete: --inflight (at most 64) a loop, at most 64 loops */
#define VYRE_BPF_MAX_INFLIGHT 4096u
#define VYRE_BPF_SLOW_RING    (256u * 1024u)
#define VYRE_BPF_MAX_GPUS     16u /* vyred's --gpus takes at most 16 */
#define VYRE_BPF_MAX_LOOPS    64u /* and at most 64 loops in all */
#define VYRE_BPF_CLASSES      4u  /* priority classes 0 to VYRE_PRIORITY_MAX */
#define VYRE_BPF_MAX_WORKERS  64u /* GPU worker processes followed at once */
/* ops known at once: 4096 module ops (gpu/op_modules.h) + 13 built-in + unknown, rounded up */
#define VYRE_BPF_MAX_OPS 4160u

enum vyre_bpf_hist_id {
	VYRE_BPF_HIST_LATENCY = 0,  /* submit -> complete ns, per item */
	VYRE_BPF_HIST_BATCH = 1,    /* items per batch */
	VYRE_BPF_HIST_PLAN = 2,	    /* plan ns per batch */
	VYRE_BPF_HIST_DISPATCH = 3, /* dispatch ns per batch (dispatch_end) */
	VYRE_BPF_HIST_COUNT = 4,
};

/* Buckets as VYRE_TM_LAT_BUCKETS: b = bit length of the value, clamped. */
struct vyre_bpf_hist {
	uint64_t bucket[VYRE_BPF_HIST_BUCKETS];
};

struct vyre_bpf_counters {
	uint64_t batches;	   /* complete */
	uint64_t items;		   /* batch_drained: SQEs drained */
	uint64_t completed;	   /* complete: CQEs posted */
	uint64_t failed;	   /* complete: CQEs with a negative status */
	uint64_t deduped;	   /* plan */
	uint64_t executed;	   /* complete: plan's executed less exec_invalid */
	uint64_t invalid;	   /* plan (rejected) + complete (exec_invalid) */
	uint64_t groups;	   /* plan */
	uint64_t barriers;	   /* plan */
	uint64_t launches;	   /* plan */
	uint64_t launches_avoided; /* plan */
	uint64_t frontier_splits;  /* plan */
	uint64_t bytes_avoided;	   /* plan */
	uint64_t plan_ns;	   /* plan */
	uint64_t dispatches;	   /* dispatch_end */
	uint64_t dispatch_ns;	   /* dispatch_end */
	uint64_t dispatch_errors;  /* dispatch_end with a negative status */
	uint64_t latency_ns;	   /* complete: sum of submit -> complete */
	uint64_t errors;	   /* error: sum of counts */
	uint64_t backpressure;	   /* backpressure events */
	uint64_t arena_shrinks;	   /* arena with shrunk set */
	uint64_t connects;	   /* client_connect */
	uint64_t disconnects;	   /* client_disconnect */
	uint64_t slow_batches;	   /* batches at or over the slow threshold */
	uint64_t slow_dropped;	   /* slow-batch events lost to a full ring buffer */
	uint64_t layout_errors;	   /* struct arguments whose size was not ours */
	uint64_t readback_bytes;   /* plan: device-buffer bytes items wrote into heap buffers */
	uint64_t gpu_states;	   /* gpu_state records */
};

struct vyre_bpf_gauges {
	uint64_t updated_ns; /* bpf_ktime_get_ns() of the last write */
	uint32_t backend; /* VYRE_TM_BACKEND_* of the last dispatch_end, valid when have_backend */
	uint32_t mode;	  /* VYRE_TM_MODE_* */
	uint32_t have_backend;
	uint32_t have_arena;
	uint64_t arena_used;
	uint64_t arena_capacity;
	uint64_t arena_high_water;
	uint64_t last_batch_id;
	int32_t last_error; /* code of the last error probe */
	uint32_t pad;
};

#define VYRE_BPF_CLIENT_CONNECTED    (1u << 0) /* client_connect seen */
#define VYRE_BPF_CLIENT_DISCONNECTED (1u << 1) /* client_disconnect seen */

struct vyre_bpf_client {
	uint64_t items;	       /* batch_drained */
	uint64_t drains;       /* batches it contributed to */
	uint64_t errors;       /* error counts */
	uint64_t backpressure; /* backpressure events */
	uint64_t updated_ns;   /* when this CPU last wrote the gauges below */
	uint32_t pid;
	uint32_t uid;
	uint32_t domain_id;
	uint32_t flags; /* VYRE_BPF_CLIENT_* */
	uint32_t sq_depth;
	uint32_t sq_entries;
	uint32_t cq_free;
	uint32_t gpu;	   /* client_connect: the GPU of its domain */
	uint32_t priority; /* client_connect: its priority class */
	uint32_t worker;   /* the vyred process that serves it (its tgid) */
};

struct vyre_bpf_slow_batch {
	uint64_t batch_id;
	uint64_t max_ns; /* slowest item */
	uint64_t sum_ns;
	uint64_t plan_ns;
	uint64_t dispatch_ns;
	uint64_t bytes_avoided;
	uint32_t items;
	uint32_t errors;
	uint32_t executed;
	uint32_t deduped;
	uint32_t groups;
	uint32_t barriers;
	uint32_t launches;
	uint32_t launches_avoided;
	uint32_t frontier_splits;
	uint32_t have_plan; /* 0 when the plan probe was not seen for this batch */
};

/* One GPU's batches since attach, from the gpu index of complete and dispatch_end. */
struct vyre_bpf_gpu {
	uint64_t batches;	      /* complete */
	uint64_t items;		      /* complete: CQEs posted */
	uint64_t errors;	      /* complete: CQEs with a negative status */
	uint64_t latency_ns;	      /* complete: sum of submit -> complete */
	uint64_t dispatches;	      /* dispatch_end */
	uint64_t dispatch_ns;	      /* dispatch_end */
	struct vyre_bpf_hist latency; /* complete: items per log2 bucket */
};

/* Per priority class (docs/design.md 8.9), from complete: a batch holds one class. */
struct vyre_bpf_class {
	uint64_t batches;
	uint64_t items;	     /* CQEs posted */
	uint64_t latency_ns; /* sum of submit -> complete */
	uint64_t pad;
	struct vyre_bpf_hist latency; /* items per log2 bucket */
};

/* One op's CQEs since attach, from ops records (struct vyre_tm_op_count). */
struct vyre_bpf_op {
	uint64_t batches;    /* ops entries: batches with items of the op */
	uint64_t items;	     /* CQEs posted */
	uint64_t failed;     /* with a negative status */
	uint64_t deduped;    /* with VYRE_CQE_DEDUPED */
	uint64_t latency_ns; /* sum of submit -> complete */
	uint64_t max_ns;     /* slowest submit -> complete (per CPU: readers take the max) */
	uint64_t drain_ns;   /* sum of drain -> complete, vyred's clock */
	uint64_t updated_ns; /* bpf_ktime_get_ns() of the last record */
};

/* One loop's latest gpu_state; state.bytes is 0 until the loop sent one. */
struct vyre_bpf_loop {
	struct vyre_tm_gpu state;
	uint64_t updated_ns; /* bpf_ktime_get_ns() when it arrived */
};

/*
 * A GPU worker of a supervisor (vyred --gpus naming several devices) fires
 * its probes with its own GPU numbering: local index 0 up to n_gpus - 1 for
 * the GPUs of its device. gpu[] turns one into the GPU's index in the
 * supervisor's --gpus, which every map is keyed by; a process without an
 * entry (a one-process vyred) keeps its numbers. A local index at or above
 * n_gpus is kept too, so a worker that fires --gpus indexes itself is
 * mapped right wherever its device has one GPU.
 */
struct vyre_bpf_worker {
	uint32_t n_gpus;
	uint32_t pad;
	uint32_t gpu[VYRE_BPF_MAX_GPUS];
};

/* The inflight map's key: a batch id is its process's own. */
struct vyre_bpf_batch_key {
	uint64_t batch_id;
	uint32_t tgid; /* the vyred process */
	uint32_t pad;
};

_Static_assert(sizeof(struct vyre_bpf_counters) == 28 * 8, "counters are u64s only");
_Static_assert(sizeof(struct vyre_bpf_gpu) == (6 + VYRE_BPF_HIST_BUCKETS) * 8,
	       "vyre_bpf_gpu layout");
_Static_assert(sizeof(struct vyre_bpf_loop) == 144, "vyre_bpf_loop layout");
_Static_assert(sizeof(struct vyre_bpf_gauges) == 64, "vyre_bpf_gauges layout");
_Static_assert(sizeof(struct vyre_bpf_client) == 80, "vyre_bpf_client layout");
_Static_assert(sizeof(struct vyre_bpf_class) == (4 + VYRE_BPF_HIST_BUCKETS) * 8,
	       "vyre_bpf_class layout");
_Static_assert(sizeof(struct vyre_bpf_slow_batch) == 88, "vyre_bpf_slow_batch layout");
_Static_assert(sizeof(struct vyre_bpf_op) == 64, "vyre_bpf_op layout");
_Static_assert(sizeof(struct vyre_bpf_worker) == (2 + VYRE_BPF_MAX_GPUS) * 4,
	       "vyre_bpf_worker layout");

#endif /* VYRE_BPF_H */
