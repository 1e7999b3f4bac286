/* SPDX-License-Identifier: MIT */
/* planner/batch.h - the batch planner's context and scratch (planner-internal). */
#ifndef VYRE_PLANNER_BATCH_H
#define VYRE_PLANNER_BATCH_H

#include "track.h"

/* Largest batch a planner can be configured for: keeps every count below 2^32 / 8. */
#define VYRE_PLANNER_MAX_ITEMS (1u << 24)

/*
 * Dependency edges per item at most, over a batch: 2 RAW + 2 WAW (the
 * output and a stream) + 2 WAR (one per reader node, and an item pushes one
 * per read) + 1 fence (one per pending node, an item pushes one) + 1 chain.
 * So the edge and node arrays never overflow.
 */
#define EDGES_PER_ITEM 8u

/* Buffers an item names at most: input, table, output and a stream (docs/design.md 6.8). */
#define OPERANDS_PER_ITEM 4u

/* Every stage runs through the one megakernel over the same heap table. */
#define VYRE_PLAN_LAYOUT_MEGAKERNEL 0x7679726500000001ull

/* Tables reserved once, for the largest batch, and emptied by generation. */
struct plan_tables {
	struct buffer_map buffers;
	struct dedupe_table dedupe;
	struct id_map arms;   /* (domain << 32) | client -> arm */
	uint32_t *arm_domain; /* [arms] */
	uint32_t *arm_client;
	uint32_t *arm_pending; /* waves not yet ordered before a fence of the arm (node list) */
	uint32_t *arm_count;   /* valid items of the arm */
	struct cross_arm_table cross_arm;
	uint8_t op_mask[VYRE_OP_COUNT]; /* vyre_op_operands of each op (none: 0) */
};

/* @op's operand mask: the built-in ops' from @op_mask, a module op's from the registry; 0: none. */
static inline int plan_op_mask(const uint8_t *op_mask, uint32_t op)
{
	if (op < VYRE_OP_COUNT)
		return op_mask[op];
	const int mask = vyre_op_operands(op);

	return mask > 0 ? mask : 0;
}

/*
 * A wave's bytes for the memory budget (docs/design.md 7.4): a read-only
 * operand (a byte range of a buffer the wave does not write) is a shared
 * range, counted once per group; every other byte is the wave's own.
 */
struct wave_cost {
	uint64_t reads;	    /* read bytes charged to this wave alone */
	uint32_t out;	    /* output bytes */
	uint32_t shared[2]; /* its shared ranges (buffer_map.ranges), or NONE */
	uint32_t fence;	    /* the item is a VYRE_SQE_FENCE: its group starts a launch */
};

/* A node of a wave list: the reader lists of buffers and the pending lists of arms. */
struct plan_node {
	uint32_t wave;
	uint32_t next;
};

/* An operand of a batch with byte ranges (ranges.c): [off, end) of buffer slot buf. */
struct range_opnd {
	uint64_t off;
	uint64_t end;
	uint32_t buf; /* the (domain, handle) map's id */
	uint32_t at;  /* 4 * item + 0 (input), 1 (table), 2 (output) or 3 (stream) */
};

/*
 * Per-batch arrays, carved anew for every plan from one reservation (sizes
 * follow from the item count alone).
 */
struct batch_scratch {
	struct plan_tables *t;
	struct plan_node *nodes; /* [3n]: two reads and one pending entry per item */
	uint32_t *dedup_from;	 /* [n] */
	uint32_t *wave_of;	 /* item -> wave, NONE when not executed */
	uint32_t *wave_item;	 /* wave -> item */
	struct wave_cost *cost;	 /* [waves] */
	/* dependency edges [7n] by their earlier wave, in order of their later one */
	uint32_t *dep_before;
	uint32_t *in_start;		   /* [waves + 1]: a wave's first edge */
	uint32_t *layer;		   /* [waves]: 1 + its predecessors' highest layer */
	uint32_t *top;			   /* [waves]: its highest predecessor in the layer below */
	uint32_t *pos, *key, *count, *tmp; /* [n]: barrier_layers' scratch */
	uint32_t *layer_order, *layer_end; /* barrier layering */
	uint32_t *group_end;		   /* [waves]: after memory splitting */
	struct vyre_fusion_stage *stages;
	uint32_t *launch_end;
	uint32_t *order;
	/* the cross-arm report, only when cfg.cross_arm_report is set */
	uint32_t *arm_of;    /* [n] */
	uint32_t *out_of;    /* [n]: the output slot, or NONE */
	uint32_t *arm_items; /* [n]: items by arm, CROSS_ARM_SKIP marking those in no pair */
	uint32_t *arm_end;   /* [arms] */
	struct vyre_redundant_pair *pairs;
	struct vyre_cross_arm_pair *xpairs;
	/* on-chip handoff (handoff.c), only when cfg.handoff_bytes is set */
	uint32_t *handoff;	/* [n]: VYRE_EXEC_HANDOFF_* of each item */
	uint32_t *wave_group;	/* [n]: wave -> its group */
	uint32_t *wave_maxdep;	/* [n]: wave -> latest group of a dependency but its predecessor */
	uint32_t *group_launch; /* [n]: group -> its launch */
	uint32_t *slot_read;	/* [4n]: buffer slot -> its last executed reader */
	/* byte ranges (ranges.c): reserved only for a batch with a VYRE_SQE_RANGE item */
	struct range_opnd *opnd, *opnd_tmp; /* [4n] each */
	uint32_t *run_of;		    /* [4n]: operand 4k + i -> its run's buffer slot */
	uint32_t *buf_start;		    /* [4n + 1]: the operands by buffer */
	uint64_t last_arm_key;		    /* one client's items come in runs: skip the lookup */
	uint32_t last_arm;
	uint32_t n_nodes;
	uint32_t n_deps;
	uint32_t n_layers;
	uint32_t no_output_arm; /* the first arm of an item of no output slot */
	int cross_arms;		/* the cross-arm report may have a pair */
	int transient;		/* an item writes a transient buffer: handoffs may exist */
};

/* The layout of the last batch size's arrays, which repeats while the arena's base does. */
struct scratch_cache {
	uint32_t n; /* items it was laid out for, 0: none */
	size_t bytes;
	void *base;
	struct batch_scratch s;
};

struct vyre_planner {
	struct vyre_planner_config cfg;
	struct vyre_arena arena;
	struct plan_tables tables;
	struct scratch_cache layout;
	uint64_t group_budget;		   /* budget_bytes - resident_bytes */
	struct vyre_plan_error last_error; /* why the last plan shrank */
	/* The plan of a lone item when not even that can be carved from the arena. */
	uint32_t solo_order[1];
	uint32_t solo_group_end[1];
	uint32_t solo_launch_end[1];
	uint32_t solo_dedup_from[1];
};

/* Arms a batch of @n items may name. */
static inline uint32_t batch_arms_cap(const struct vyre_planner_config *cfg, uint32_t n)
{
	return n < cfg->max_clients ? n : cfg->max_clients;
}

/*
 * docs/design.md 7.6 over the planned prefix of @n items: the marks of the
 * links that keep their transient on chip (*marks, NULL when none) and the
 * bytes they keep.
 */
uint64_t plan_handoff(const struct vyre_planner *p, struct batch_scratch *s,
		      const struct vyre_plan_batch *b, uint32_t n,
		      const struct vyre_barrier_plan *g, const struct vyre_fusion_plan *f,
		      const uint32_t **marks);

/*
 * The arrays of byte ranges for a batch of @n items (s->opnd ...), after
 * its other arrays: only a batch with a ranged item takes them, so the
 * others lie as they would without. 0 or VYRE_E_NOMEM.
 */
int batch_range_reserve(struct vyre_arena *a, uint32_t n, struct batch_scratch *s,
			struct vyre_plan_error *err);

/*
 * docs/design.md 7.2 with byte ranges, over items [0, n) of a ranged batch:
 * each operand's run of overlapping ranges of its buffer becomes a buffer
 * slot of @m (s->run_of, NONE where the item has no such operand or is
 * invalid), its state fresh. Returns the runs; m->full when a buffer found
 * no id.
 */
uint32_t batch_range_runs(struct batch_scratch *s, struct buffer_map *m,
			  const struct vyre_plan_batch *b, uint32_t n);

int plan_tables_reserve(struct vyre_arena *a, const struct vyre_planner_config *cfg,
			struct plan_tables *t, struct vyre_plan_error *err);
/* One reservation for every per-batch array of a batch of @n items (@cache may be NULL). */
int batch_scratch_reserve(struct vyre_arena *a, const struct vyre_planner_config *cfg, uint32_t n,
			  struct scratch_cache *cache, struct batch_scratch *s,
			  struct vyre_plan_error *err);

#endif /* VYRE_PLANNER_BATCH_H */
