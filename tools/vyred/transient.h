/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/transient.h - the resolve stage's rules for transient buffers
 * (docs/design.md section 6.3).
 *
 * An item that reads a transient buffer as its input must come after an
 * item of its own chain that writes it (an item outside a chain is a chain
 * of one); a transient buffer as a table (DFA_SCAN, DFA_SCAN_COUNTED,
 * BYTEMAP) is never allowed. The resolve stage walks a batch in order and
 * calls vyre_transients_chain where each chain starts, then
 * vyre_transients_check for each item that resolved; an item that fails
 * cancels the rest of its chain, so only writes of items that will run are
 * recorded.
 *
 * Writes are recorded per handle slot, stamped with the chain's number:
 * starting a chain forgets the last one's without touching memory. One array
 * of --max-buffers + 1 stamps, allocated at start-up.
 */
#ifndef VYRED_TRANSIENT_H
#define VYRED_TRANSIENT_H

#include <stdint.h>

#include "../../ring/handles.h"

struct vyre_transients {
	uint32_t *written; /* handle slot -> stamp of the chain that wrote it */
	uint32_t n_slots;
	uint32_t chain; /* stamp of the chain being resolved, from 1 */
};

int vyre_transients_init(struct vyre_transients *t, uint32_t max_buffers);
void vyre_transients_fini(struct vyre_transients *t);

/* The chain stamps came round: every slot forgotten, the next chain is 1. */
void vyre_transients_wrap(struct vyre_transients *t);

/* A new chain starts: nothing of it is written yet. Inline: resolve calls it an item. */
static inline void vyre_transients_chain(struct vyre_transients *t)
{
	if (__builtin_expect(++t->chain == 0, 0))
		vyre_transients_wrap(t);
}

/*
 * The rules for @it, whose handles resolved in @domain: 0 (then its
 * transient output, if any, counts as written for the rest of the chain,
 * and *out_transient says whether it has one) or VYRE_E_INVAL.
 */
int vyre_transients_check(struct vyre_transients *t, const struct vyre_handle_table *h,
			  uint32_t domain, const struct vyre_work_item *it, int *out_transient);

#endif /* VYRED_TRANSIENT_H */
