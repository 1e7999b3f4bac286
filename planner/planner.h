/* SPDX-License-Identifier: MIT */
/*
 * planner/planner.h - the vyre planner (docs/design.md section 7).
 *
 * Pure: arrays and arenas in, plans out. Nothing here does I/O, touches
 * shared memory or CUDA, or allocates after vyre_planner_create(): every
 * structure is carved from a preallocated arena through reservation calls
 * that fail with VYRE_E_NOMEM, and an exhausted arena makes the batch planner
 * accept a shorter prefix of the batch instead of failing.
 *
 * Layers, lowest first (each usable on its own, each ported from the vyre
 * seeds with their error cases):
 *   arena     - bump reservations with a fault-injection hook
 *   barrier   - Kahn layering of a wave dependency graph (docs/design.md 7.3)
 *   frontier  - splitting barrier groups under a memory budget
 *               (megakernel_frontier.rs)
 *   fusion    - fusing adjacent stages into launches (launch_fusion.rs)
 *   dedupe    - hazard-correct removal of redundant items and the
 *               cross-arm redundancy report (whole_megakernel_opt.rs)
 *   handoff   - chained items that keep a transient buffer on chip (decode_scan_fuse.rs)
 *   planner   - the daemon-facing batch planner composing all of the above
 *
 * Every fallible function returns 0 or a negative VYRE_E_* code and, when
 * given a struct vyre_plan_error, fills it; vyre_plan_error_format() turns it
 * into a message that ends with what to do ("... Fix: ...").
 */
#ifndef VYRE_PLANNER_H
#define VYRE_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/abi.h"
#include "../gpu/backend.h"

/* "No item": dedupe sources, wave indices and similar per-item links. */
#define VYRE_PLAN_NONE UINT32_MAX

/* ------------------------------------------------------------------ errors */

enum vyre_plan_component {
	VYRE_PLAN_IN_ARENA = 0,
	VYRE_PLAN_IN_BARRIER,
	VYRE_PLAN_IN_FRONTIER,
	VYRE_PLAN_IN_FUSION,
	VYRE_PLAN_IN_DEDUPE,
	VYRE_PLAN_IN_CROSS_ARM,
	VYRE_PLAN_IN_BATCH,
};

enum vyre_plan_err {
	VYRE_PLAN_ERR_NONE = 0,
	VYRE_PLAN_ERR_INVALID_WAVE,	 /* index: the wave, count: waves that exist */
	VYRE_PLAN_ERR_SELF_DEPENDENCY,	 /* index: the wave */
	VYRE_PLAN_ERR_CYCLE,		 /* count: waves left unscheduled */
	VYRE_PLAN_ERR_OVERFLOW,		 /* field */
	VYRE_PLAN_ERR_RESERVE,		 /* field, count: entries requested */
	VYRE_PLAN_ERR_GROUP_OVER_BUDGET, /* field, required, budget */
	VYRE_PLAN_ERR_ZERO_BUDGET,
	VYRE_PLAN_ERR_DUPLICATE_STAGE,	 /* index: the stage id */
	VYRE_PLAN_ERR_STAGE_OVER_BUDGET, /* index: the stage id, required, budget */
	VYRE_PLAN_ERR_CAPACITY,		 /* field, required: needed, budget: the limit */
	VYRE_PLAN_ERR_CONFIG,		 /* field, required, budget */
	VYRE_PLAN_ERR_ARGUMENT,		 /* field */
};

struct vyre_plan_error {
	enum vyre_plan_err kind;
	enum vyre_plan_component where;
	const char *field; /* static string naming what failed, or NULL */
	uint64_t index;
	uint64_t count;
	uint64_t required;
	uint64_t budget;
};

/*
 * Write the message of @e into @buf (always NUL-terminated when len > 0).
 * Returns the length snprintf would have written.
 */
int vyre_plan_error_format(const struct vyre_plan_error *e, char *buf, size_t len);

/* ------------------------------------------------------------------ arena */

/*
 * A bump arena. Every reservation is aligned to and rounded up to 64 bytes,
 * so the bytes a sequence of reservations uses are known from their sizes
 * alone (vyre_arena_round). A measuring arena (base NULL, unbounded) counts
 * bytes without storing anything; sizing functions run the real reservation
 * code against one.
 */
struct vyre_arena {
	uint8_t *base;
	size_t bytes;
	size_t used;
	size_t floor; /* reservations below it survive vyre_arena_reset */
	size_t high_water;
	uint64_t reservations; /* reservation calls since init */
	uint64_t fail_at;      /* fault injection: this call number fails (0: off) */
	int fail_sticky;       /* and every later one */
	int measuring;
};

#define VYRE_ARENA_ALIGN 64u

/* Allocate @bytes of backing store (start-up only). */
int vyre_arena_init(struct vyre_arena *a, size_t bytes);
/* A measuring arena: reservations succeed with NULL and only count bytes. */
void vyre_arena_init_measure(struct vyre_arena *a);
void vyre_arena_fini(struct vyre_arena *a);
/* Forget every reservation since the last vyre_arena_keep (keeps counters and the hook). */
void vyre_arena_reset(struct vyre_arena *a);
/* Make every reservation so far permanent: resets no longer forget them. */
void vyre_arena_keep(struct vyre_arena *a);
/*
 * Reserve @count elements of @size bytes, 64-byte aligned. *out is set to
 * the storage (NULL when measuring). VYRE_E_NOMEM when the arena is full, the
 * size overflows, or fault injection says so.
 */
int vyre_arena_reserve(struct vyre_arena *a, size_t count, size_t size, void **out);
/* Bytes one reservation of @count x @size uses, or SIZE_MAX on overflow. */
size_t vyre_arena_round(size_t count, size_t size);
/*
 * Fault injection for tests: the @nth reservation from now fails (1: the
 * next one); with @sticky every reservation after it fails too. 0 disarms.
 */
void vyre_arena_fail_nth(struct vyre_arena *a, uint64_t nth, int sticky);

/* ------------------------------------------------------------------ barrier */

struct vyre_wave_dep {
	uint32_t before;
	uint32_t after;
};

/*
 * Waves in groups: group g is order[group_end[g-1] .. group_end[g]) with
 * group_end[-1] = 0. Waves inside a group have no path between them.
 */
struct vyre_barrier_plan {
	uint32_t *order;
	uint32_t *group_end;
	uint32_t n_waves;
	uint32_t n_groups;
	uint32_t global_barriers; /* n_groups - 1, or 0 without groups */
	uint32_t max_group_width;
};

/*
 * Kahn layering (docs/design.md 7.3): group 0 holds every wave without an incoming
 * edge in ascending index; each later group is found by walking the previous
 * group in order and each wave's outgoing edges in input order. Errors:
 * INVALID_WAVE, SELF_DEPENDENCY, CYCLE, OVERFLOW, RESERVE.
 */
int vyre_barrier_plan(struct vyre_arena *a, uint32_t n_waves, const struct vyre_wave_dep *deps,
		      uint32_t n_deps, struct vyre_barrier_plan *out, struct vyre_plan_error *err);
/* Arena bytes vyre_barrier_plan reserves at most. */
size_t vyre_barrier_arena_bytes(uint32_t n_waves, uint32_t n_deps);

/* ------------------------------------------------------------------ frontier */

struct vyre_frontier_wave {
	uint64_t frontier_bytes; /* resident frontier bytes the wave touches */
	uint64_t scratch_bytes;	 /* temporary bytes before topology scaling */
	uint64_t output_bytes;
};

struct vyre_frontier_plan {
	struct vyre_barrier_plan barriers; /* after memory-budget splitting */
	uint64_t peak_frontier_bytes;
	uint64_t peak_scratch_bytes;
	uint64_t peak_output_bytes;
	uint64_t amortized_readback_bytes; /* max(readback, peak output) */
	uint32_t max_group_width;
};

/*
 * megakernel_frontier.rs: barrier-plan the waves, then split each group in
 * order so that frontier + 4 * scratch + output of a group fits
 * @budget_bytes - @resident_bytes. Errors: the barrier planner's, OVERFLOW,
 * GROUP_OVER_BUDGET ("resident graph bytes", "single fused frontier wave
 * bytes"), RESERVE.
 */
int vyre_frontier_plan(struct vyre_arena *a, const struct vyre_frontier_wave *waves,
		       uint32_t n_waves, const struct vyre_wave_dep *deps, uint32_t n_deps,
		       uint64_t resident_bytes, uint64_t budget_bytes, uint64_t readback_bytes,
		       struct vyre_frontier_plan *out, struct vyre_plan_error *err);

/*
 * The splitting step alone, over an existing barrier plan (the order array
 * is shared, group ends are new). With @clamp a single wave larger than the
 * group budget is not an error: it is planned alone (the batch planner's
 * policy, so an oversized item still runs, in its own group).
 */
int vyre_frontier_split(struct vyre_arena *a, const struct vyre_frontier_wave *waves,
			const struct vyre_barrier_plan *in, uint64_t group_budget_bytes, int clamp,
			struct vyre_barrier_plan *out, struct vyre_plan_error *err);

/* Peak bytes of @plan's groups (the tail of vyre_frontier_plan). */
int vyre_frontier_peaks(const struct vyre_frontier_wave *waves,
			const struct vyre_barrier_plan *groups, uint64_t readback_bytes,
			struct vyre_frontier_plan *out, struct vyre_plan_error *err);

size_t vyre_frontier_split_arena_bytes(uint32_t n_waves);

/* ------------------------------------------------------------------ fusion */

struct vyre_fusion_stage {
	uint32_t id;
	uint32_t requires_host_materialization; /* boundary before it needs the host */
	uint64_t layout_hash;
	uint64_t input_bytes;
	uint64_t output_bytes;
	uint64_t scratch_bytes;
};

/*
 * Launch l fuses stages [launch_end[l-1], launch_end[l]) (launch_end[-1] = 0),
 * in the original stage order.
 */
struct vyre_fusion_plan {
	uint32_t *launch_end;
	uint64_t *required_bytes; /* per launch: peak bytes of the fused group */
	uint64_t *avoided_bytes;  /* per launch: intermediate bytes not materialized */
	uint32_t launch_count;
	uint32_t avoided_launches;
	uint64_t avoided_intermediate_bytes;
};

/*
 * launch_fusion.rs: adjacent stages with the same layout hash and no host
 * materialization boundary fuse while required bytes (first stage's input +
 * output + scratch, plus scratch + output of each appended stage) fit
 * @max_group_bytes. Errors: ZERO_BUDGET, DUPLICATE_STAGE, STAGE_OVER_BUDGET,
 * OVERFLOW, RESERVE.
 */
int vyre_fusion_plan(struct vyre_arena *a, const struct vyre_fusion_stage *stages,
		     uint32_t n_stages, uint64_t max_group_bytes, struct vyre_fusion_plan *out,
		     struct vyre_plan_error *err);
size_t vyre_fusion_arena_bytes(uint32_t n_stages);

/* ------------------------------------------------------------------ dedupe */

/* (early, late, op index in the late arm); for a prune, (early, late, 0). */
struct vyre_redundant_pair {
	uint32_t early;
	uint32_t late;
	uint32_t op_index;
};

struct vyre_redundancy {
	struct vyre_redundant_pair *pairs;
	uint32_t n_pairs;
	uint32_t total_redundant_ops;
};

/*
 * True when every output handle is distinct and they span at most 4096
 * values: no two items can then be identical, so dedupe has nothing to find.
 */
int vyre_output_handles_dense_unique(const struct vyre_work_item *items, uint32_t n);

/*
 * The seed's prune with docs/design.md 7.1's hazard rules, over one domain: copy
 * the items that must run into @out (capacity n) in order, report every
 * dropped item as (source, late, 0). Like the seed, *n_out is 0 when nothing
 * was dropped so the caller keeps its original array.
 */
int vyre_dedupe_prune(struct vyre_arena *a, const struct vyre_work_item *items, uint32_t n,
		      struct vyre_work_item *out, uint32_t *n_out, struct vyre_redundancy *report,
		      struct vyre_plan_error *err);

/*
 * Cross-arm structural redundancy (whole_megakernel_opt.rs): arms are
 * walked in order; an item whose (op, input, output) triple - param
 * ignored - first appeared in an earlier arm of the same domain is reported
 * as (first arm, this arm, index in this arm). Arm k holds
 * items[arm_items[arm_end[k-1] .. arm_end[k])]; @arm_domain may be NULL (one
 * domain). Pairs are reserved for every item.
 */
int vyre_cross_arm_detect(struct vyre_arena *a, const struct vyre_work_item *items,
			  const uint32_t *arm_items, const uint32_t *arm_end, uint32_t n_arms,
			  const uint32_t *arm_domain, struct vyre_redundancy *report,
			  struct vyre_plan_error *err);

size_t vyre_cross_arm_arena_bytes(uint32_t n_items);

/* ------------------------------------------------------------------ batch planner */

/* vyre_plan_batch.flags: the SQE flags plus the daemon's own markers. */
#define VYRE_PLAN_F_INVALID (1u << 31) /* statically invalid: the daemon completes it */
/* Part of a chain (docs/design.md 6.3): never deduplicated, never a dedupe source. */
#define VYRE_PLAN_F_CHAIN (1u << 30)
/*
 * Continues the chain of item i - 1: runs after it (a dependency edge when
 * both execute, docs/design.md 7.2), and an accepted prefix never ends
 * between them unless the batch's first chain cannot be planned whole.
 */
#define VYRE_PLAN_F_AFTER_PREV (1u << 29)
/* Its output is a transient buffer (docs/design.md 6.3): an on-chip handoff candidate (7.6). */
#define VYRE_PLAN_F_OUT_TRANSIENT (1u << 28)

struct vyre_planner_config {
	uint32_t max_items;	 /* most items planned at once (longer batches: a prefix) */
	uint32_t max_clients;	 /* distinct (domain, client) pairs per plan */
	uint32_t max_groups;	 /* barrier groups (dependency layers) per plan */
	uint32_t max_stages;	 /* stages after memory splitting per plan */
	uint64_t budget_bytes;	 /* device bytes one fused launch may touch */
	uint64_t resident_bytes; /* bytes resident on the device, out of the budget */
	uint64_t arena_bytes;	 /* 0: exactly what max_items needs */
	int cross_arm_report;	 /* also build the cross-client redundancy report */
	/*
	 * Largest transient buffer an on-chip handoff keeps (docs/design.md
	 * 7.6): the backend's per-unit budget; 0 marks no handoff.
	 */
	uint64_t handoff_bytes;
	/*
	 * The links the backend keeps on chip: bit op of handoff_writers for the
	 * writer's op, of handoff_readers for the reader's; 0: every op.
	 */
	uint32_t handoff_writers, handoff_readers;
	/*
	 * Handles whose index (the handle's low bits, below the smallest power
	 * of two >= this) is below this are looked up in a table by that index,
	 * in the order a batch names them, instead of hashed: for a caller
	 * whose handles are dense slots (vyred: --max-buffers + 1). Any handle
	 * may still come; an index holds one buffer for each value of the
	 * domain's two low bits, and one that finds its place taken in a batch
	 * is hashed. 0: every handle is hashed. Costs 16 bytes an index.
	 */
	uint32_t direct_handles;
	/*
	 * Measure each plan's stats.plan_ns: two clock reads a plan, about 45 ns
	 * on a VM, 3 ns an item of a batch of 16. 0: plan_ns is 0 (vyred times
	 * its plan stage itself).
	 */
	int time_plans;
};

/* Defaults for vyred: 4096 items, 1024 clients, 1 GiB budget. */
void vyre_planner_config_default(struct vyre_planner_config *cfg);

/*
 * One drained batch, in acceptance order. exec[i] is items[i] resolved by
 * the daemon (sizes feed the memory budget); domain[i] scopes handles, so
 * items of different domains never conflict or dedupe; client[i] (NULL: all
 * 0) scopes fences and names arms; flags[i] (NULL: all 0) carries
 * VYRE_SQE_FENCE, VYRE_SQE_NODEDUPE and the VYRE_PLAN_F_* markers, and
 * VYRE_SQE_RANGE on an item whose exec operands are byte ranges of its
 * buffers (docs/design.md 6.6) rather than the whole buffers: an item whose
 * exec names part of a buffer must carry it. When one item of the batch
 * does, hazards are per run of overlapping ranges (7.2) and dedupe compares
 * ranges (7.1); a batch without one is planned per buffer, as before.
 */
struct vyre_plan_batch {
	uint32_t n;
	const struct vyre_work_item *items;
	const struct vyre_exec_item *exec;
	const uint32_t *domain;
	const uint32_t *client;
	const uint32_t *flags;
	/*
	 * aux[i] (NULL: all 0): the stream of a DFA_REPORT item (its SQE's
	 * aux_handle, docs/design.md 6.8), a buffer the item reads and writes;
	 * 0 for none and ignored for ops without one. An item with a stream is
	 * never deduplicated nor a dedupe source.
	 */
	const uint32_t *aux;
};

/* A cross-arm pair of the batch, named by clients. */
struct vyre_cross_arm_pair {
	uint32_t domain;
	uint32_t early_client;
	uint32_t late_client;
	uint32_t late_op_index; /* position among the late client's items in this plan */
};

/* Per-batch figures, for telemetry. */
struct vyre_plan_stats {
	uint32_t items_in;	   /* offered */
	uint32_t accepted;	   /* planned prefix (the rest stays in the rings) */
	uint32_t invalid;	   /* statically invalid, completed by the daemon */
	uint32_t deduped;	   /* satisfied by an earlier identical item */
	uint32_t executed;	   /* items the backend runs */
	uint32_t dependencies;	   /* RAW/WAR/WAW/fence edges */
	uint32_t layers;	   /* barrier groups before memory splitting */
	uint32_t groups;	   /* groups the backend runs (after splitting) */
	uint32_t barriers;	   /* groups - 1 */
	uint32_t launches;	   /* after fusion */
	uint32_t launches_avoided; /* groups - launches */
	uint32_t oversized;	   /* items larger than the budget, planned alone */
	uint32_t cross_arm_redundant;
	uint32_t retries;	/* replans of a shorter prefix */
	uint64_t bytes_avoided; /* transient bytes on-chip handoffs keep off the heap (7.6) */
	uint64_t peak_group_bytes;
	uint64_t plan_ns;	   /* with cfg.time_plans, else 0 */
	uint64_t arena_used;	   /* bytes this plan used (start-up tables included) */
	uint64_t arena_bytes;	   /* the arena's size */
	uint64_t arena_high_water; /* most bytes any plan has used */
};

/*
 * The plan of batch items [0, accepted). Storage lives in the planner's
 * arena until its next vyre_planner_plan().
 */
struct vyre_plan {
	struct vyre_exec_plan exec; /* order / group_end / launch_end for the backend */
	uint32_t accepted;
	const uint32_t *dedup_from; /* [accepted]: source item, or VYRE_PLAN_NONE */
	/* [accepted]: VYRE_EXEC_HANDOFF_* of each item (docs/design.md 7.6), or NULL: none */
	const uint32_t *exec_flags;
	const struct vyre_cross_arm_pair *cross_arm;
	uint32_t n_cross_arm;
	struct vyre_plan_stats stats;
};

struct vyre_planner;

/* Validate @cfg and preallocate everything. */
int vyre_planner_create(const struct vyre_planner_config *cfg, struct vyre_planner **out,
			struct vyre_plan_error *err);
void vyre_planner_destroy(struct vyre_planner *p);

/* Arena bytes a planner with @cfg needs for a batch of cfg->max_items, or SIZE_MAX. */
size_t vyre_planner_arena_bytes(const struct vyre_planner_config *cfg);

/*
 * Plan the longest prefix of @batch that fits, ending where a chain ends
 * (VYRE_PLAN_F_AFTER_PREV) when any such prefix fits. Never accepts 0 items
 * of a non-empty batch: when even one item cannot be carved from the arena
 * the item gets a plan of its own from storage reserved at creation (the
 * caller then sees a prefix that ends inside the first chain). Errors only
 * for bad arguments (VYRE_E_INVAL).
 */
int vyre_planner_plan(struct vyre_planner *p, const struct vyre_plan_batch *batch,
		      struct vyre_plan *out, struct vyre_plan_error *err);

/*
 * After the backend ran @plan: give every deduplicated item its source's
 * status and result and every invalid item VYRE_E_INVAL.
 */
void vyre_plan_complete(const struct vyre_plan *plan, const struct vyre_plan_batch *batch,
			struct vyre_exec_result *results);

/* Test hook: fail the @nth arena reservation from now (see vyre_arena_fail_nth). */
void vyre_planner_fail_reservation(struct vyre_planner *p, uint64_t nth, int sticky);
const struct vyre_arena *vyre_planner_arena(const struct vyre_planner *p);

#endif /* VYRE_PLANNER_H */
