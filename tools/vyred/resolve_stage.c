/* SPDX-License-Identifier: MIT */
/*
 * Resolve: handles of each drained item -> heap ranges of its client's
 * domain, narrowed to the item's byte ranges with VYRE_SQE_RANGE
 * (docs/design.md 6.6). An item that fails here, or that the drain already
 * failed, makes the later items of its chain VYRE_E_CANCELED
 * (docs/design.md section 6.3): they are never planned. The others of a
 * chain run after their predecessor (VYRE_EXEC_AFTER_PREV), and are
 * cancelled by the backend if it fails. Transient buffers are read only
 * after a write of the same chain and never as tables (transient.h); an
 * item that writes one is marked for the planner's on-chip handoff
 * (VYRE_PLAN_F_OUT_TRANSIENT). Each valid item is also added to the
 * check of whether the batch's items share a written buffer (disjoint.h),
 * while its fields are at hand.
 */
#include "../../planner/planner.h"
#include "../../ring/resolve.h"
#include "chains.h"
#include "daemon.h"
#include "disjoint.h"
#include "resolve_stage.h"
#include "transient.h"

static int32_t resolve_one(struct vyre_daemon *d, struct vyre_batch *b, uint32_t i)
{
	const struct vyre_domain *dom = &d->domains[b->domain[i]];
	int out_transient;

	if (b->flags[i] & ~VYRE_SQE_VALID_FLAGS)
		return VYRE_E_INVAL;
	int rc = vyre_resolve(&d->handles, dom->id, dom->slot, &b->items[i], &b->exec[i]);

	/* byte ranges (docs/design.md 6.6): the operands narrowed, the table whole */
	if (rc == 0 && (b->flags[i] & VYRE_SQE_RANGE))
		rc = vyre_resolve_range(&b->sqes[i], &b->exec[i]);
	/* a DFA_REPORT's stream (docs/design.md 6.8): always its whole buffer; b->aux is the
	 * drain's vyre_sqe_aux, 0 for every other item */
	if (rc == 0 && b->aux[i])
		rc = vyre_resolve_aux(&d->handles, dom->id, dom->slot, &b->sqes[i], &b->exec[i]);
	if (rc != 0 || dom->n_transient == 0)
		return rc;
	rc = vyre_transients_check(&d->transients, &d->handles, dom->id, &b->items[i],
				   &out_transient);
	if (rc == 0 && out_transient)
		b->flags[i] |= VYRE_PLAN_F_OUT_TRANSIENT;
	return rc;
}

/* Items ahead whose handle slots and disjoint marks are loaded while the current one resolves. */
#define RESOLVE_AHEAD 8u

void vyre_stage_resolve(struct vyre_daemon *d, struct vyre_batch *b)
{
	int failed = 0; /* an earlier item of the current chain failed */

	/* whether the batch's items share a written buffer, checked as they resolve (disjoint.h) */
	vyre_disjoint_begin(&d->disjoint, b->seq_order);
	for (uint32_t i = 0; i < b->n; i++) {
		if (i + RESOLVE_AHEAD < b->n) {
			const struct vyre_work_item *ahead = &b->items[i + RESOLVE_AHEAD];

			vyre_handles_prefetch(&d->handles, ahead->input_handle);
			vyre_handles_prefetch(&d->handles, ahead->output_handle);
			vyre_disjoint_prefetch(&d->disjoint, ahead->input_handle);
			vyre_disjoint_prefetch(&d->disjoint, ahead->output_handle);
		}
		const int continues = vyre_chain_continues(b, i);

		if (!continues) {
			failed = 0;
			vyre_transients_chain(&d->transients);
		}
		/* the drain's verdict (a chain that can never be taken whole) stands */
		if (b->status[i] == 0)
			b->status[i] = failed ? VYRE_E_CANCELED : resolve_one(d, b, i);
		failed |= b->status[i] != 0;
		if (b->status[i] == 0)
			/* b->aux is not 0 exactly when the item resolved a stream (aux_bytes) */
			vyre_disjoint_add(&d->disjoint, i, &b->items[i], &b->exec[i], b->flags[i],
					  b->aux[i]);
		/* its predecessor runs: the backend cancels it if that one fails */
		if (!failed && continues) {
			b->exec[i].flags |= VYRE_EXEC_AFTER_PREV;
			b->exec[i].prev = i - 1;
		}
	}
}
