/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/batch.h - a batch's state as it goes through the stages
 * (pipeline.h), its figures, and the planner's totals. Types only.
 */
#ifndef VYRED_BATCH_H
#define VYRED_BATCH_H

#include <stdint.h>

#include "../../gpu/backend.h"
#include "vyre/abi.h"

#define VYRE_LATENCY_BUCKETS 64u

/*
 * Per-batch figures, for telemetry (USDT probes read this struct). Times
 * are CLOCK_MONOTONIC nanoseconds spent in each stage.
 */
struct vyre_batch_stats {
	uint64_t seq;	   /* batch number, from 1 */
	uint32_t items_in; /* drained */
	uint32_t accepted; /* the plan stage's prefix */
	uint32_t errors;   /* CQEs with a non-zero status */
	/* of them, VYRE_E_INVAL of items it ran, not deduplicated: invalid (docs/design.md 9) */
	uint32_t exec_invalid;
	uint32_t executed; /* items the backend ran */
	uint32_t deduped;
	uint32_t clients; /* clients with items in the batch */
	uint32_t groups;
	uint32_t launches;
	uint32_t frontier_splits; /* groups the memory budget added */
	uint64_t bytes_avoided;	  /* transient bytes on-chip handoffs kept off the heap */
	uint64_t readback_bytes;  /* bytes items read from device buffers into heap buffers */
	uint64_t drain_ns;
	uint64_t resolve_ns;
	uint64_t plan_ns;
	uint64_t execute_ns;
	uint64_t complete_ns;
	/* log2 buckets of submit -> complete latency: bucket b counts [2^(b-1), 2^b) ns */
	uint32_t latency_log2[VYRE_LATENCY_BUCKETS];
};

/*
 * The planner's work summed over batches (the exit log; docs/design.md 10,
 * vyre-demo). Each item is one of deduped, invalid and executed (9).
 */
struct vyre_plan_totals {
	uint64_t items;	   /* accepted */
	uint64_t invalid;  /* refused before planning, or VYRE_E_INVAL when it ran */
	uint64_t executed; /* run by the backend, less the invalid ones */
	uint64_t deduped;
	uint64_t groups;
	uint64_t barriers;
	uint64_t launches;
	uint64_t bytes_deduped; /* input, output and table bytes deduplicated items did not move */
};

/*
 * What an item's CQE takes from its SQE, copied when it is drained: by the
 * time the batch completes the 64-byte SQE copies have left the caches, and
 * reading one a CQE cost a miss an item.
 */
struct vyre_cqe_src {
	uint64_t user_data;
	uint64_t submit_ns;
};

struct vyre_batch {
	uint32_t slot;	       /* the backend slot this batch runs in */
	int running;	       /* dispatched, not yet completed */
	uint64_t drain_ns;     /* when the drain found a ready client */
	uint64_t dispatch_ns;  /* when the backend took it */
	uint32_t cap;	       /* --max-batch */
	uint32_t n;	       /* items drained */
	struct vyre_sqe *sqes; /* the copies taken from the rings */
	struct vyre_cqe_src *cqe_src;
	struct vyre_work_item *items;
	struct vyre_exec_item *exec;
	struct vyre_exec_result *results;
	int32_t *status;     /* drain, resolve: 0, or the static error that completes the item */
	uint32_t *domain;    /* heap index (domain slot) of each item */
	uint32_t *flags;     /* VYRE_SQE_* of each item; resolve adds VYRE_PLAN_F_OUT_TRANSIENT */
	uint32_t *conn;	     /* connection slot of each item */
	uint32_t *dedup_of;  /* plan: index of the item that satisfies it, or VYRE_PLAN_NO_DEDUPE */
	uint64_t *table_gen; /* a DFA scan of a device table: its write generation (devbufs.h) */
	uint32_t *aux;	     /* a DFA_REPORT's stream handle (vyre_sqe_aux), else 0 */
	uint32_t *group_of;  /* plan check: the group each item runs in */
	uint32_t *touched;   /* connection slots with items in this batch, in batch order */
	/* per touched client: its items [first, first + count), their first CQ position */
	uint32_t *first;
	uint32_t *count;
	uint32_t *cq_pos;
	/* the in-flight hazard counts it holds while it runs (hazards.h), VYRE_HAZARD_ENTRIES an
	 * item */
	uint32_t *hz_taken;
	uint32_t n_hz_taken;
	uint32_t n_touched;
	uint32_t n_accepted;
	uint32_t priority;		   /* the class of its items: a batch holds one (drain.c) */
	int released;			   /* vyre_stage_release ran for this batch */
	struct vyre_exec_batch exec_batch; /* what the backend holds while the batch runs */
	/* over the arrays below: the planner's own are reused by the next batch */
	struct vyre_exec_plan plan;
	uint32_t *plan_order;
	uint32_t *plan_group_end;
	uint32_t *plan_launch_end;
	uint32_t *seq_order; /* the sequential plan used when the plan stage fails */
	uint32_t *seq_ends;
	struct vyre_batch_stats stats;
};

#endif /* VYRED_BATCH_H */
