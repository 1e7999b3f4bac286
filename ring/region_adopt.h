/* SPDX-License-Identifier: MIT */
/*
 * ring/region_adopt.h - (vyred) a region kept from a vyred that died, and
 * where its rings stood (docs/design.md section 3).
 */
#ifndef VYRE_RING_REGION_ADOPT_H
#define VYRE_RING_REGION_ADOPT_H

#include <stdint.h>

#include "region.h"

/*
 * vyre_region_adopt - map the region memfd @fd that a client kept from a
 * vyred that died: sealed against shrinking and growing, its header
 * consistent with its size, rings no larger than @sq_max and @cq_max. On
 * success the region owns @fd. Errors: VYRE_E_PROTO, VYRE_E_NOMEM.
 */
int vyre_region_adopt(int fd, uint32_t sq_max, uint32_t cq_max, struct vyre_region *out);

/* Where an adopted region's rings stood when its vyred died. */
struct vyre_ring_resume {
	uint32_t done;	   /* cq_tail: SQ positions before it have their CQE */
	uint32_t accepted; /* sq_accepted: [done, accepted) may have run, no CQE */
	uint32_t reaped;   /* cq_head */
};

/*
 * vyre_ring_resume - read the indexes once and check that an honest vyred
 * could have left them: sq_head <= cq_tail <= sq_accepted <= sq_tail within
 * a ring, and room in the CQ for every accepted item. VYRE_E_PROTO if not.
 */
int vyre_ring_resume(const struct vyre_region *r, struct vyre_ring_resume *out);

#endif /* VYRE_RING_REGION_ADOPT_H */
