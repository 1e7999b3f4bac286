/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/plan_stage.h - the plan stage of vyred's pipeline.
 *
 * The planner receives one drained batch and decides, for a prefix of it,
 * what runs, in which groups and launches, and which items are satisfied by
 * an identical earlier one. It owns its scratch (allocated at create time,
 * none on the steady-state path) and never touches rings, sockets or devices.
 *
 * Input (struct vyre_plan_input), n items in acceptance order:
 *	items[i]   the work item as submitted (handles; hazards come from
 *		   vyre_op_access; handles are unique across domains, so items
 *		   of different domains never conflict)
 *	exec[i]    the resolved item; meaningful only where status[i] == 0
 *	status[i]  0, or the static error that already completes item i: such
 *		   an item is never executed nor used to satisfy another
 *	domain[i]  heap index of the item's domain
 *	flags[i]   VYRE_SQE_FENCE, VYRE_SQE_NODEDUPE (a NODEDUPE item is never
 *		   satisfied from another; a FENCE needs nothing from the plan:
 *		   vyred posts each client's CQEs in acceptance order),
 *		   VYRE_SQE_CHAIN (item i and the next item of its client are
 *		   one chain: they run in order, neither is deduplicated nor a
 *		   source, and the accepted prefix ends where a chain ends
 *		   unless the first chain cannot be planned whole),
 *		   VYRE_PLAN_F_OUT_TRANSIENT (the output is a transient buffer),
 *		   VYRE_SQE_RANGE (exec[i]'s operands are byte ranges of their
 *		   buffers, docs/design.md 6.6: hazards and dedupe per range)
 *	client[i]  connection slot; one client's items are contiguous and in
 *		   submission order
 *
 * Output (struct vyre_plan_output):
 *	n_accepted  the prefix [0, n_accepted) this batch completes; the rest
 *		    stays in the rings for a later batch. Must be >= 1 when
 *		    n >= 1 (the daemon relies on progress).
 *	plan        struct vyre_exec_plan over accepted items with status 0
 *		    that are not deduplicated; arrays owned by the plan stage,
 *		    valid until its next run
 *	dedup_of[i] (array provided by the caller, n entries) j < i whose
 *		    result item i takes, with j executed in the plan, or
 *		    VYRE_PLAN_NO_DEDUPE
 *	n_deduped   how many items have dedup_of != VYRE_PLAN_NO_DEDUPE
 *	exec_flags  NULL, or per accepted item the VYRE_EXEC_HANDOFF_* marks of
 *		    the on-chip handoff (docs/design.md 7.6) that vyred adds to
 *		    its exec item
 *	stats       the planner's per-batch figures (struct vyre_plan_stats:
 *		    layers, barriers, launches avoided, bytes avoided, arena
 *		    use, retries...), for telemetry
 *
 * The semantic contract (docs/design.md section 6): executing the plan and
 * copying results for deduplicated items must give exactly what
 * vyre_exec_sequential gives over the accepted prefix.
 *
 * vyre_plan_stage_run returns 0 or a negative VYRE_E_*; on error vyred logs
 * it and runs the batch sequentially instead.
 */
#ifndef VYRED_PLAN_STAGE_H
#define VYRED_PLAN_STAGE_H

#include <stdint.h>

#include "../../gpu/backend.h"
#include "vyre/abi.h"

#define VYRE_PLAN_NO_DEDUPE UINT32_MAX

struct vyre_plan_stage_config {
	uint32_t max_items;   /* the largest batch (--max-batch) */
	uint32_t max_domains; /* heap indices are < max_domains */
	/* The planner's limits (planner/planner.h, vyred flags); 0 picks the default. */
	uint32_t max_clients;	 /* (domain, client) pairs per plan (--max-clients) */
	uint32_t max_groups;	 /* dependency layers per plan (--max-groups) */
	uint32_t max_stages;	 /* groups after memory splitting (--max-stages) */
	uint64_t budget_bytes;	 /* device bytes one fused launch may touch */
	uint64_t resident_bytes; /* of the budget, bytes resident on the device */
	uint64_t arena_bytes;	 /* the planner's arena (default: what max_items needs) */
	uint64_t handoff_bytes;	 /* largest transient an on-chip handoff keeps; 0: none */
	/* the links the backend keeps (planner.h): bit op of writer and reader; 0: every op */
	uint32_t handoff_writers, handoff_readers;
	uint32_t direct_handles; /* handle indices the planner looks up directly (planner.h) */
};

struct vyre_plan_input {
	uint32_t n;
	const struct vyre_work_item *items;
	const struct vyre_exec_item *exec;
	const int32_t *status;
	const uint32_t *domain;
	const uint32_t *flags;
	const uint32_t *client;
	const uint32_t *aux; /* NULL, or per item its stream (vyre_plan_batch.aux) */
};

struct vyre_plan_stats;

struct vyre_plan_output {
	struct vyre_exec_plan plan;
	uint32_t *dedup_of;
	/* [n_accepted]: VYRE_EXEC_HANDOFF_* for each exec item, or NULL (docs/design.md 7.6) */
	const uint32_t *exec_flags;
	uint32_t n_accepted;
	uint32_t n_deduped;
	/* The planner's figures for this batch (planner/planner.h), valid until the next run. */
	const struct vyre_plan_stats *stats;
};

struct vyre_plan_stage;

int vyre_plan_stage_create(const struct vyre_plan_stage_config *cfg, struct vyre_plan_stage **out);
void vyre_plan_stage_destroy(struct vyre_plan_stage *ps);
int vyre_plan_stage_run(struct vyre_plan_stage *ps, const struct vyre_plan_input *in,
			struct vyre_plan_output *out);

#endif /* VYRED_PLAN_STAGE_H */
