/* SPDX-License-Identifier: MIT */
/*
 * ring/region_create.h - (vyred) sealed memfds, and a new region in one.
 */
#ifndef VYRE_RING_REGION_CREATE_H
#define VYRE_RING_REGION_CREATE_H

#include <stdint.h>

#include "region.h"

/*
 * vyre_region_create - (vyred) a memfd sized for @sq_entries/@cq_entries,
 * sealed with F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL, mapped shared, header
 * written. On error nothing stays allocated. Errors: VYRE_E_INVAL (sizes),
 * VYRE_E_NOMEM (memfd, truncate, seal or mmap failed).
 */
int vyre_region_create(uint32_t sq_entries, uint32_t cq_entries, uint32_t client_id,
		       uint32_t domain_id, struct vyre_region *out);

/*
 * vyre_sealed_memfd - a MFD_CLOEXEC memfd of @bytes bytes (rounded up to the
 * page size by the caller), sealed against growing, shrinking and further
 * sealing. Returns the fd or VYRE_E_NOMEM.
 */
int vyre_sealed_memfd(const char *name, uint64_t bytes);

#endif /* VYRE_RING_REGION_CREATE_H */
