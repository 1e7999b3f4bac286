/* SPDX-License-Identifier: MIT */
/* Region layout, and the client's mapping of a region received from vyred. */
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "region.h"

static uint64_t page_round(uint64_t bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) / page * page;
}

static int pow2_in_range(uint32_t n)
{
	return n >= 2 && n <= VYRE_MAX_RING_ENTRIES && (n & (n - 1)) == 0;
}

int vyre_region_layout(uint32_t sq_entries, uint32_t cq_entries, struct vyre_region_layout *out)
{
	if (!pow2_in_range(sq_entries) || !pow2_in_range(cq_entries))
		return VYRE_E_INVAL;
	/* Both counts are <= 2^20, so every sum below stays far under 2^32. */
	uint32_t sq_bytes = sq_entries * (uint32_t)sizeof(struct vyre_sqe);
	uint32_t cq_bytes = cq_entries * (uint32_t)sizeof(struct vyre_cqe);

	out->sq_entries = sq_entries;
	out->cq_entries = cq_entries;
	out->sq_offset = VYRE_REGION_HEADER_BYTES;
	out->cq_offset = VYRE_REGION_HEADER_BYTES + sq_bytes;
	out->bytes = page_round((uint64_t)out->cq_offset + cq_bytes);
	return 0;
}

static int header_ok(const struct vyre_region_header *h, uint64_t file_bytes,
		     struct vyre_region_layout *lay)
{
	if (h->magic != VYRE_REGION_MAGIC || h->abi_version != VYRE_ABI_VERSION)
		return 0;
	if (vyre_region_layout(h->sq_entries, h->cq_entries, lay) != 0)
		return 0;
	return h->sq_offset == lay->sq_offset && h->cq_offset == lay->cq_offset &&
	       h->region_bytes == lay->bytes && lay->bytes == file_bytes;
}

int vyre_region_map(int fd, struct vyre_region *out)
{
	struct stat st;
	struct vyre_region_layout lay;

	if (fstat(fd, &st) != 0 || st.st_size < (off_t)VYRE_REGION_HEADER_BYTES)
		return VYRE_E_PROTO;
	void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED)
		return VYRE_E_NOMEM;
	struct vyre_region_header *h = base;

	if (!header_ok(h, (uint64_t)st.st_size, &lay)) {
		munmap(base, (size_t)st.st_size);
		return VYRE_E_PROTO;
	}
	out->hdr = h;
	out->sq = (struct vyre_sqe *)(void *)((uint8_t *)base + lay.sq_offset);
	out->cq = (struct vyre_cqe *)(void *)((uint8_t *)base + lay.cq_offset);
	out->bytes = lay.bytes;
	out->sq_entries = lay.sq_entries;
	out->cq_entries = lay.cq_entries;
	out->fd = fd;
	return 0;
}

void vyre_region_unmap(struct vyre_region *r)
{
	if (r->hdr)
		munmap(r->hdr, (size_t)r->bytes);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}
