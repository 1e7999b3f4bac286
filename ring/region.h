/* SPDX-License-Identifier: MIT */
/*
 * ring/region.h - a client region (header, SQ, CQ in one memfd): its
 * layout, and mapping one that vyred sent.
 */
#ifndef VYRE_RING_REGION_H
#define VYRE_RING_REGION_H

#include <stdint.h>

#include "vyre/abi.h"
#include "vyre/vyre.h"

struct vyre_region_layout {
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t sq_offset;
	uint32_t cq_offset;
	uint64_t bytes; /* whole region, a multiple of the page size */
};

/*
 * vyre_region_layout - offsets and size of a region with these rings. Both
 * counts must be powers of two in [2, VYRE_MAX_RING_ENTRIES]; else
 * VYRE_E_INVAL.
 */
int vyre_region_layout(uint32_t sq_entries, uint32_t cq_entries, struct vyre_region_layout *out);

/* A region mapped into this process. */
struct vyre_region {
	struct vyre_region_header *hdr;
	struct vyre_sqe *sq;
	struct vyre_cqe *cq;
	uint64_t bytes;
	uint32_t sq_entries; /* private copies: never re-read from the shared header */
	uint32_t cq_entries;
	int fd; /* the memfd, or -1 */
};

/*
 * vyre_region_map - (client) map a region received from vyred and check its
 * header: magic, ABI version, ring sizes and offsets consistent with the
 * file size. Takes ownership of @fd on success only. Errors: VYRE_E_PROTO
 * (bad header or version), VYRE_E_NOMEM.
 */
int vyre_region_map(int fd, struct vyre_region *out);

/* vyre_region_unmap - unmap and close the memfd; safe on a zeroed struct. */
void vyre_region_unmap(struct vyre_region *r);

#endif /* VYRE_RING_REGION_H */
