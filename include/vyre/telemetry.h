/* SPDX-License-Identifier: MIT */
/*
 * vyre/telemetry.h - what vyred's USDT probes carry (docs/design.md section 9).
 *
 * vyred fires probes of provider "vyre" once per batch, never per item: an
 * attached uprobe costs about half a microsecond a hit, and an unattached one
 * costs a semaphore load. A probe's arguments are plain integers or one
 * pointer to a struct of this file (libbpf 1.1 cannot decode scaled-index
 * argument locations, so vyred passes registers and constants only).
 *
 * The structs are read out of vyred's memory by another process (the BPF
 * program, bpftrace, vyre-top), so their layouts are pinned below, and the
 * same assertions run again when bpf/vyre.bpf.c includes this header for the
 * BPF target. Each struct starts with its own size: a reader built against
 * another layout sees a different size and ignores the event (vyre-top
 * counts it as a layout error) instead of misreading fields.
 *
 * One batch fires, in this order:
 *
 *   probe              arguments
 *   batch_drained      const struct vyre_tm_drain *     once per client whose
 *                                                       SQ gave items to the batch
 *   dedupe             u64 batch_id, u32 items, u32 deduped
 *   plan               const struct vyre_tm_plan *
 *   arena              const struct vyre_tm_arena *
 *   dispatch_begin     u64 batch_id, u32 launches, u32 backend, u32 mode,
 *                      u32 gpu
 *   dispatch_end       u64 batch_id, s32 status, u32 executed, u64 dispatch_ns,
 *                      u32 backend, u32 mode, u32 gpu
 *   complete           const struct vyre_tm_complete *
 *   ops                const struct vyre_tm_ops *   the batch's items per op;
 *                                                   more than one for a batch
 *                                                   of more than
 *                                                   VYRE_TM_OPS_MAX ops
 *   error              u32 client_id, u32 pid, s32 code, u32 count
 *                      (per client with failed CQEs in the batch; client 0
 *                      and count 1 for a daemon-side fault)
 *
 * and outside batches:
 *
 *   backpressure       u32 client_id, u32 pid, u32 reason, u32 depth
 *   client_connect     u32 client_id, u32 pid, u32 uid, u32 domain_id, u32 gpu,
 *                      u32 priority (its class, docs/design.md 8.9)
 *   client_disconnect  u32 client_id, u32 pid, s32 reason (0 or a VYRE_E_*)
 *   gpu_state          const struct vyre_tm_gpu *   each loop once a second,
 *                                                   and when its GPU is lost
 *   op_info            const struct vyre_tm_op_info *  once a second (each
 *                                                   process's loop 0), one per
 *                                                   op vyred runs: built-in
 *                                                   ops, then module ops
 *
 * gpu is the GPU's index in vyred's --gpus list (docs/design.md 8.8).
 *
 * batch_id counts batches from 1 in one vyred process. pid is the client's
 * process id as SO_PEERCRED reported it at connect. dispatch_ns is vyred's
 * own measure of the backend's run (submit to the last poll), and
 * dispatch_end repeats what dedupe and dispatch_begin say in plan's struct
 * and its own arguments, so a tracer that wants fewer uprobe hits per batch
 * can leave those two out (vyre-top does).
 */
#ifndef VYRE_TELEMETRY_H
#define VYRE_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/abi.h"

#define VYRE_TM_PROVIDER "vyre"

/* dispatch_begin, dispatch_end: backend */
#define VYRE_TM_BACKEND_CPU  0u
#define VYRE_TM_BACKEND_CUDA 1u

/* dispatch_begin, dispatch_end: mode (CUDA modes as in docs/design.md section 8; CPU has none) */
#define VYRE_TM_MODE_PERSISTENT 0u
#define VYRE_TM_MODE_LAUNCH	1u
#define VYRE_TM_MODE_NONE	2u

/* backpressure: reason, and what depth means for it */
#define VYRE_TM_BP_SQ_FULL                                                                         \
	1u /* the client's SQ was full at drain (it sees VYRE_E_AGAIN); depth = SQEs */
#define VYRE_TM_BP_CQ_FULL 2u /* no CQ room: its SQEs wait in the ring; depth = SQEs waiting */
#define VYRE_TM_BP_ARENA   3u /* planner arena exhausted: a smaller batch; depth = items left */

/*
 * Log2 latency buckets: bucket 0 holds 0 ns, bucket b (1..63) holds
 * [2^(b-1), 2^b) ns; the last bucket also takes everything longer.
 */
#define VYRE_TM_LAT_BUCKETS 64u

/* batch_drained: one client's share of a batch. */
struct vyre_tm_drain {
	uint32_t bytes; /* sizeof(struct vyre_tm_drain) */
	uint32_t client_id;
	uint32_t pid;
	uint32_t domain_id;
	uint64_t batch_id;
	uint32_t items;	     /* SQEs moved from this client's SQ into the batch */
	uint32_t sq_depth;   /* SQEs still waiting in its SQ after the drain */
	uint32_t sq_entries; /* its SQ capacity */
	uint32_t cq_free;    /* free CQ slots when the batch was drained */
};

/* plan: what the planner did with the batch (docs/design.md section 7). */
struct vyre_tm_plan {
	uint32_t bytes; /* sizeof(struct vyre_tm_plan) */
	uint32_t items; /* items in the batch */
	uint64_t batch_id;
	uint32_t executed;	   /* items left after dedupe and validation */
	uint32_t deduped;	   /* items satisfied by an identical earlier item */
	uint32_t invalid;	   /* items rejected before planning (VYRE_E_INVAL) */
	uint32_t groups;	   /* barrier groups after frontier splitting */
	uint32_t barriers;	   /* global barriers: groups - 1, or 0 */
	uint32_t launches;	   /* device submissions after fusion */
	uint32_t launches_avoided; /* stages fused away (groups - launches) */
	uint32_t frontier_splits;  /* extra groups made to fit the memory budget */
	uint64_t bytes_avoided;	   /* transient bytes on-chip handoffs kept off the heap */
	uint64_t plan_ns;	   /* time in the planner for this batch */
	/*
	 * Bytes that items reading a device buffer (input or table) may write
	 * into heap buffers: the read-back crossing to host memory
	 * (docs/design.md section 6.2). Deduplicated and invalid items count 0.
	 */
	uint64_t readback_bytes;
};

/* arena: planner scratch use after planning the batch. */
struct vyre_tm_arena {
	uint32_t bytes;	 /* sizeof(struct vyre_tm_arena) */
	uint32_t shrunk; /* 1 when the arena ran out and the batch was made smaller */
	uint64_t batch_id;
	uint64_t used;	     /* bytes used by this batch's plan */
	uint64_t capacity;   /* bytes reserved at start-up */
	uint64_t high_water; /* most bytes any batch has used */
};

/* complete: the batch's CQEs are posted. */
struct vyre_tm_complete {
	uint32_t bytes; /* sizeof(struct vyre_tm_complete) */
	uint32_t items; /* CQEs posted for the batch */
	uint64_t batch_id;
	uint32_t errors;		   /* CQEs with a negative status */
	uint32_t deduped;		   /* CQEs with VYRE_CQE_DEDUPED */
	uint64_t max_ns;		   /* slowest submit -> complete in the batch */
	uint64_t sum_ns;		   /* sum of submit -> complete over the batch */
	uint32_t lat[VYRE_TM_LAT_BUCKETS]; /* items per log2 latency bucket */
	uint32_t gpu;			   /* the GPU's index in --gpus (docs/design.md 8.8) */
	uint32_t loop;			   /* the event loop that ran the batch */
	/*
	 * CQEs with VYRE_E_INVAL of items the planner let through, not
	 * deduplicated: caught when the item ran, as a DFA table an earlier
	 * item wrote malformed. plan's invalid counts the others. These items
	 * are among plan's executed; a reader counts them invalid instead
	 * (docs/design.md 9), and a DEDUPED CQE stays deduplicated.
	 */
	uint32_t exec_invalid;
	uint32_t priority; /* the priority class of its items: a batch holds one (8.9) */
};

/* gpu_state: one loop's view of its GPU, once a second and when the GPU is lost. */
#define VYRE_TM_GPU_NAME_MAX 48u

struct vyre_tm_gpu {
	uint32_t bytes;	  /* sizeof(struct vyre_tm_gpu) */
	uint32_t gpu;	  /* index in --gpus */
	uint32_t ordinal; /* the driver's device number (CPU backend: the --gpus entry) */
	uint32_t loop;	  /* this loop's number; a GPU has loops_per_gpu of them */
	uint32_t loops_per_gpu;
	uint32_t backend;		 /* VYRE_TM_BACKEND_* */
	uint32_t mode;			 /* VYRE_TM_MODE_* */
	uint32_t lost;			 /* 1 once the GPU is out of service (docs/design.md 8.8) */
	uint32_t slots;			 /* this loop's batch slots (--inflight) */
	uint32_t running;		 /* of them, batches in flight now */
	uint32_t domains;		 /* live domains of this loop */
	uint32_t clients;		 /* connected clients of this loop */
	uint64_t batches;		 /* completed by this loop so far */
	uint64_t items;			 /* CQEs this loop posted so far */
	uint64_t device_bytes_used;	 /* the GPU's device buffers, all its loops */
	uint64_t device_bytes_max;	 /* the GPU's --device-bytes-max */
	uint64_t time_ns;		 /* CLOCK_MONOTONIC when the record was made */
	char name[VYRE_TM_GPU_NAME_MAX]; /* the device's name, NUL-terminated */
};

/*
 * ops: one batch's CQEs per op (docs/design.md 6.7: built-in and module
 * ops alike), in the order the ops first appear in the batch. A batch of
 * more than VYRE_TM_OPS_MAX distinct ops fires ops again for the rest
 * (part 1, 2, ...), so every CQE is in exactly one entry (an op whose
 * entry went out in an earlier part gets a new one: readers sum entries
 * by op number). Only while a
 * tracer is attached to ops does vyred build it.
 *
 * latency: submit -> complete of each CQE, as complete's sum_ns and lat[]
 * count it (the client's submit stamp, not trusted: 0 or a stamp later
 * than the completion counts 0 ns), so the entries' sum_ns add up to
 * complete's. drain_sum_ns is vyred's own clock only: from the moment the
 * drain found the batch's first ready client to the CQE (the same for
 * every item of a batch), so it holds whatever the client's stamp claims.
 * Neither is an op's device time: a batch's ops run together.
 */
#define VYRE_TM_OPS_MAX 16u
/* An op number no op of vyred has (an SQE's own op_handle is not trusted). */
#define VYRE_TM_OP_UNKNOWN 0xffffffffu

struct vyre_tm_op_count {
	uint32_t op;	       /* VYRE_OP_*, VYRE_OP_MODULE_BIT | hash, or VYRE_TM_OP_UNKNOWN */
	uint32_t items;	       /* CQEs posted for items of the op */
	uint32_t failed;       /* of them, with a negative status */
	uint32_t deduped;      /* of them, with VYRE_CQE_DEDUPED */
	uint64_t sum_ns;       /* sum of submit -> complete */
	uint64_t max_ns;       /* slowest submit -> complete */
	uint64_t drain_sum_ns; /* sum of drain -> complete (vyred's clock) */
};

struct vyre_tm_ops {
	uint32_t bytes; /* sizeof(struct vyre_tm_ops) */
	uint32_t n_ops; /* entries of op[] in use, 1 to VYRE_TM_OPS_MAX */
	uint64_t batch_id;
	uint32_t part; /* 0, then 1, 2, ... for a batch of more ops than op[] holds */
	uint32_t gpu;  /* the GPU's index in --gpus, as complete's */
	uint32_t loop; /* the event loop, as complete's */
	uint32_t pad;
	struct vyre_tm_op_count op[VYRE_TM_OPS_MAX];
};

/*
 * op_info: one op vyred runs, so that a tracer can name the op numbers of
 * ops (a module op's number is a hash: it names no op by itself). Fired
 * once a second by each process's loop 0, built-in ops in number order,
 * then module ops in vyre_op_modules_all() order; index/count say where
 * in that listing it is.
 */
#define VYRE_TM_OP_NAME_MAX 32u

#define VYRE_TM_OP_F_MODULE 1u /* a module op (docs/design.md 6.7) */
#define VYRE_TM_OP_F_PURE   2u /* may be deduplicated */

struct vyre_tm_op_info {
	uint32_t bytes; /* sizeof(struct vyre_tm_op_info) */
	uint32_t op;	/* its number */
	uint32_t index; /* in this listing */
	uint32_t count; /* ops in the listing */
	uint32_t flags; /* VYRE_TM_OP_F_* */
	uint32_t pad;
	char name[VYRE_TM_OP_NAME_MAX];	  /* "add", "crc32c": NUL-terminated */
	char module[VYRE_TM_OP_NAME_MAX]; /* the module's name; "" for a built-in op */
};

_Static_assert(sizeof(struct vyre_tm_drain) == 40, "vyre_tm_drain layout");
_Static_assert(offsetof(struct vyre_tm_drain, batch_id) == 16, "vyre_tm_drain.batch_id");
_Static_assert(offsetof(struct vyre_tm_drain, items) == 24, "vyre_tm_drain.items");
_Static_assert(offsetof(struct vyre_tm_drain, cq_free) == 36, "vyre_tm_drain.cq_free");

_Static_assert(sizeof(struct vyre_tm_plan) == 72, "vyre_tm_plan layout");
_Static_assert(offsetof(struct vyre_tm_plan, batch_id) == 8, "vyre_tm_plan.batch_id");
_Static_assert(offsetof(struct vyre_tm_plan, executed) == 16, "vyre_tm_plan.executed");
_Static_assert(offsetof(struct vyre_tm_plan, groups) == 28, "vyre_tm_plan.groups");
_Static_assert(offsetof(struct vyre_tm_plan, launches) == 36, "vyre_tm_plan.launches");
_Static_assert(offsetof(struct vyre_tm_plan, bytes_avoided) == 48, "vyre_tm_plan.bytes_avoided");
_Static_assert(offsetof(struct vyre_tm_plan, plan_ns) == 56, "vyre_tm_plan.plan_ns");
_Static_assert(offsetof(struct vyre_tm_plan, readback_bytes) == 64, "vyre_tm_plan.readback_bytes");

_Static_assert(sizeof(struct vyre_tm_arena) == 40, "vyre_tm_arena layout");
_Static_assert(offsetof(struct vyre_tm_arena, used) == 16, "vyre_tm_arena.used");
_Static_assert(offsetof(struct vyre_tm_arena, high_water) == 32, "vyre_tm_arena.high_water");

_Static_assert(sizeof(struct vyre_tm_complete) == 56 + 4 * VYRE_TM_LAT_BUCKETS,
	       "vyre_tm_complete layout");
_Static_assert(offsetof(struct vyre_tm_complete, gpu) == 40 + 4 * VYRE_TM_LAT_BUCKETS,
	       "vyre_tm_complete.gpu");
_Static_assert(offsetof(struct vyre_tm_complete, exec_invalid) == 48 + 4 * VYRE_TM_LAT_BUCKETS,
	       "vyre_tm_complete.exec_invalid");
_Static_assert(offsetof(struct vyre_tm_complete, errors) == 16, "vyre_tm_complete.errors");
_Static_assert(offsetof(struct vyre_tm_complete, max_ns) == 24, "vyre_tm_complete.max_ns");
_Static_assert(offsetof(struct vyre_tm_complete, sum_ns) == 32, "vyre_tm_complete.sum_ns");
_Static_assert(offsetof(struct vyre_tm_complete, lat) == 40, "vyre_tm_complete.lat");

_Static_assert(sizeof(struct vyre_tm_gpu) == 136, "vyre_tm_gpu layout");
_Static_assert(offsetof(struct vyre_tm_gpu, batches) == 48, "vyre_tm_gpu.batches");
_Static_assert(offsetof(struct vyre_tm_gpu, device_bytes_used) == 64,
	       "vyre_tm_gpu.device_bytes_used");
_Static_assert(offsetof(struct vyre_tm_gpu, time_ns) == 80, "vyre_tm_gpu.time_ns");
_Static_assert(offsetof(struct vyre_tm_gpu, name) == 88, "vyre_tm_gpu.name");

_Static_assert(sizeof(struct vyre_tm_op_count) == 40, "vyre_tm_op_count layout");
_Static_assert(offsetof(struct vyre_tm_op_count, sum_ns) == 16, "vyre_tm_op_count.sum_ns");
_Static_assert(offsetof(struct vyre_tm_op_count, drain_sum_ns) == 32,
	       "vyre_tm_op_count.drain_sum_ns");
_Static_assert(sizeof(struct vyre_tm_ops) == 32 + 40 * VYRE_TM_OPS_MAX, "vyre_tm_ops layout");
_Static_assert(offsetof(struct vyre_tm_ops, part) == 16, "vyre_tm_ops.part");
_Static_assert(offsetof(struct vyre_tm_ops, op) == 32, "vyre_tm_ops.op");

_Static_assert(sizeof(struct vyre_tm_op_info) == 24 + 2 * VYRE_TM_OP_NAME_MAX,
	       "vyre_tm_op_info layout");
_Static_assert(offsetof(struct vyre_tm_op_info, flags) == 16, "vyre_tm_op_info.flags");
_Static_assert(offsetof(struct vyre_tm_op_info, name) == 24, "vyre_tm_op_info.name");
_Static_assert(offsetof(struct vyre_tm_op_info, module) == 24 + VYRE_TM_OP_NAME_MAX,
	       "vyre_tm_op_info.module");

/* The latency bucket of @ns (see VYRE_TM_LAT_BUCKETS). */
static inline uint32_t vyre_tm_lat_bucket(uint64_t ns)
{
	if (ns == 0)
		return 0;
	uint32_t bits = 64u - (uint32_t)__builtin_clzll(ns);
	return bits < VYRE_TM_LAT_BUCKETS ? bits : VYRE_TM_LAT_BUCKETS - 1u;
}

/*
 * Account one posted CQE in @c (items, errors, deduped and latency). The
 * submit stamp comes from the client's SQE and is not trusted: 0 or a stamp
 * later than the completion counts as 0 ns.
 */
static inline void vyre_tm_complete_add(struct vyre_tm_complete *c, uint64_t submit_ns,
					const struct vyre_cqe *cqe)
{
	uint64_t done = cqe->complete_ns;
	uint64_t ns = submit_ns != 0 && done > submit_ns ? done - submit_ns : 0;
	c->items++;
	if (cqe->status < 0)
		c->errors++;
	if (cqe->flags & VYRE_CQE_DEDUPED)
		c->deduped++;
	c->lat[vyre_tm_lat_bucket(ns)]++;
	if (ns > c->max_ns)
		c->max_ns = ns;
	c->sum_ns = ns > UINT64_MAX - c->sum_ns ? UINT64_MAX : c->sum_ns + ns;
}

/*
 * Account one posted CQE of entry @e's op, with the same untrusted-stamp
 * rule as vyre_tm_complete_add; @drain_ns is vyred's own drain time.
 */
static inline void vyre_tm_op_add(struct vyre_tm_op_count *e, uint64_t submit_ns, uint64_t drain_ns,
				  const struct vyre_cqe *cqe)
{
	uint64_t done = cqe->complete_ns;
	uint64_t ns = submit_ns != 0 && done > submit_ns ? done - submit_ns : 0;
	uint64_t own = done > drain_ns ? done - drain_ns : 0;
	e->items++;
	e->failed += cqe->status < 0;
	e->deduped += (cqe->flags & VYRE_CQE_DEDUPED) != 0;
	if (ns > e->max_ns)
		e->max_ns = ns;
	e->sum_ns = ns > UINT64_MAX - e->sum_ns ? UINT64_MAX : e->sum_ns + ns;
	e->drain_sum_ns = own > UINT64_MAX - e->drain_sum_ns ? UINT64_MAX : e->drain_sum_ns + own;
}

#endif /* VYRE_TELEMETRY_H */
