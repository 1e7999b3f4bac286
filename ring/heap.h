/* SPDX-License-Identifier: MIT */
/*
 * ring/heap.h - a domain's heap: one sealed memfd mapped by vyred and every
 * client of the domain, carved into buffers by a first-fit free list.
 *
 * The allocator's bookkeeping lives in vyred's private memory only; clients
 * can rewrite buffer contents but never the allocator. Allocations are
 * VYRE_HEAP_ALIGN-aligned and zero-filled; a 0-byte allocation takes no
 * space and gets offset 0. vyre_heap_free never fails: the free list is
 * grown while allocating, so it always has room for one more extent.
 */
#ifndef VYRE_RING_HEAP_H
#define VYRE_RING_HEAP_H

#include <stdint.h>

#define VYRE_HEAP_ALIGN 256u

struct vyre_heap_extent {
	uint64_t off;
	uint64_t bytes;
};

struct vyre_heap {
	int fd;
	uint8_t *base;
	uint64_t bytes;
	uint64_t used;		       /* bytes in live allocations, after alignment */
	struct vyre_heap_extent *free; /* sorted by offset, never adjacent */
	uint32_t n_free;
	uint32_t cap_free;
	uint32_t n_allocs;
};

/*
 * vyre_heap_create - a sealed memfd of @bytes rounded up to the page size,
 * mapped shared. Errors: VYRE_E_INVAL (0 bytes), VYRE_E_NOMEM.
 */
int vyre_heap_create(uint64_t bytes, struct vyre_heap *h);

/*
 * vyre_heap_adopt - map the heap memfd @fd of @bytes that a client handed
 * over after a restart (the caller checked its seals and size), whose live
 * buffers are @used: sorted by offset, sizes already aligned, none
 * overlapping. On success the heap owns @fd. Errors: VYRE_E_INVAL (@used is
 * not as said), VYRE_E_NOMEM.
 */
int vyre_heap_adopt(int fd, uint64_t bytes, const struct vyre_heap_extent *used, uint32_t n_used,
		    struct vyre_heap *h);

/* vyre_heap_destroy - unmap, close, free the list; safe on a zeroed heap. */
void vyre_heap_destroy(struct vyre_heap *h);

/*
 * vyre_heap_alloc - reserve @bytes (any value; rounded up to the alignment),
 * zero them and store the offset. Errors: VYRE_E_NOMEM when nothing fits.
 */
int vyre_heap_alloc(struct vyre_heap *h, uint32_t bytes, uint64_t *off);

/* vyre_heap_free - give back an allocation made with the same @bytes. */
void vyre_heap_free(struct vyre_heap *h, uint64_t off, uint32_t bytes);

#endif /* VYRE_RING_HEAP_H */
