/* SPDX-License-Identifier: MIT */
/* A domain heap: sealed memfd plus a sorted, coalescing first-fit free list. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap.h"
#include "region_create.h"

static uint64_t aligned_size(uint32_t bytes)
{
	return ((uint64_t)bytes + VYRE_HEAP_ALIGN - 1) & ~(uint64_t)(VYRE_HEAP_ALIGN - 1);
}

int vyre_heap_create(uint64_t bytes, struct vyre_heap *h)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	if (bytes == 0 || bytes > UINT64_MAX - page || bytes > (uint64_t)SIZE_MAX - page)
		return VYRE_E_INVAL;
	bytes = (bytes + page - 1) / page * page;
	h->free = malloc(4 * sizeof(*h->free));
	if (!h->free)
		return VYRE_E_NOMEM;
	h->cap_free = 4;
	h->fd = vyre_sealed_memfd("vyre-heap", bytes);
	if (h->fd < 0) {
		vyre_heap_destroy(h);
		return VYRE_E_NOMEM;
	}
	void *base = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd, 0);

	if (base == MAP_FAILED) {
		vyre_heap_destroy(h);
		return VYRE_E_NOMEM;
	}
	h->base = base;
	h->bytes = bytes;
	h->free[0].off = 0;
	h->free[0].bytes = bytes;
	h->n_free = 1;
	return 0;
}

void vyre_heap_destroy(struct vyre_heap *h)
{
	if (h->base)
		munmap(h->base, (size_t)h->bytes);
	if (h->fd >= 0)
		close(h->fd);
	free(h->free);
	memset(h, 0, sizeof(*h));
	h->fd = -1;
}

/* Every live allocation can split one extent, so n_allocs + 2 slots always suffice. */
static int reserve_extents(struct vyre_heap *h)
{
	uint64_t need = (uint64_t)h->n_allocs + 2;

	if (need <= h->cap_free)
		return 0;
	uint64_t cap = (uint64_t)h->cap_free * 2;

	if (cap > UINT32_MAX || cap > SIZE_MAX / sizeof(*h->free))
		return VYRE_E_NOMEM;
	struct vyre_heap_extent *grown = realloc(h->free, (size_t)cap * sizeof(*grown));

	if (!grown)
		return VYRE_E_NOMEM;
	h->free = grown;
	h->cap_free = (uint32_t)cap;
	return 0;
}

int vyre_heap_alloc(struct vyre_heap *h, uint32_t bytes, uint64_t *off)
{
	uint64_t size = aligned_size(bytes);

	if (size == 0) {
		*off = 0;
		return 0;
	}
	if (h->n_allocs == UINT32_MAX - 2 || reserve_extents(h) != 0)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < h->n_free; i++) {
		struct vyre_heap_extent *e = &h->free[i];

		if (e->bytes < size)
			continue;
		*off = e->off;
		e->off += size;
		e->bytes -= size;
		if (e->bytes == 0) {
			memmove(e, e + 1, (size_t)(h->n_free - i - 1) * sizeof(*e));
			h->n_free--;
		}
		h->n_allocs++;
		h->used += size;
		memset(h->base + *off, 0, size);
		return 0;
	}
	return VYRE_E_NOMEM;
}

void vyre_heap_free(struct vyre_heap *h, uint64_t off, uint32_t bytes)
{
	uint64_t size = aligned_size(bytes);
	uint32_t i = 0;

	if (size == 0)
		return;
	while (i < h->n_free && h->free[i].off < off)
		i++;
	int joins_prev = i > 0 && h->free[i - 1].off + h->free[i - 1].bytes == off;
	int joins_next = i < h->n_free && off + size == h->free[i].off;

	if (joins_prev && joins_next) {
		h->free[i - 1].bytes += size + h->free[i].bytes;
		memmove(&h->free[i], &h->free[i + 1],
			(size_t)(h->n_free - i - 1) * sizeof(h->free[0]));
		h->n_free--;
	} else if (joins_prev) {
		h->free[i - 1].bytes += size;
	} else if (joins_next) {
		h->free[i].off = off;
		h->free[i].bytes += size;
	} else {
		memmove(&h->free[i + 1], &h->free[i], (size_t)(h->n_free - i) * sizeof(h->free[0]));
		h->free[i].off = off;
		h->free[i].bytes = size;
		h->n_free++;
	}
	h->n_allocs--;
	h->used -= size;
}

int vyre_heap_adopt(int fd, uint64_t bytes, const struct vyre_heap_extent *used, uint32_t n_used,
		    struct vyre_heap *h)
{
	uint64_t at = 0;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	if (bytes == 0 || bytes > SIZE_MAX || n_used > UINT32_MAX - 4)
		return VYRE_E_INVAL;
	h->cap_free = n_used + 4;
	h->free = malloc((size_t)h->cap_free * sizeof(*h->free));
	if (!h->free)
		return VYRE_E_NOMEM;
	/* the free list is what lies between the live buffers */
	for (uint32_t i = 0; i <= n_used; i++) {
		uint64_t end = i < n_used ? used[i].off : bytes;

		if (i < n_used && (used[i].off < at || used[i].off > bytes ||
				   used[i].bytes > bytes - used[i].off)) {
			vyre_heap_destroy(h);
			return VYRE_E_INVAL;
		}
		if (end > at)
			h->free[h->n_free++] =
			    (struct vyre_heap_extent){.off = at, .bytes = end - at};
		if (i < n_used) {
			at = used[i].off + used[i].bytes;
			h->used += used[i].bytes;
			h->n_allocs += used[i].bytes != 0;
		}
	}
	void *base = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED) {
		vyre_heap_destroy(h);
		return VYRE_E_NOMEM;
	}
	h->base = base;
	h->bytes = bytes;
	h->fd = fd;
	return 0;
}
