/* SPDX-License-Identifier: MIT */
/*
 * vyred's side of regions: sealed memfds sized once, so a client can never
 * shrink the file under the daemon's mapping and make it fault.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "region_create.h"

int vyre_sealed_memfd(const char *name, uint64_t bytes)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return VYRE_E_NOMEM;
	if (bytes > (uint64_t)INT64_MAX || ftruncate(fd, (off_t)bytes) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		close(fd);
		return VYRE_E_NOMEM;
	}
	return fd;
}

int vyre_region_create(uint32_t sq_entries, uint32_t cq_entries, uint32_t client_id,
		       uint32_t domain_id, struct vyre_region *out)
{
	struct vyre_region_layout lay;
	int rc = vyre_region_layout(sq_entries, cq_entries, &lay);

	if (rc != 0)
		return rc;
	int fd = vyre_sealed_memfd("vyre-region", lay.bytes);

	if (fd < 0)
		return fd;
	void *base = mmap(NULL, (size_t)lay.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED) {
		close(fd);
		return VYRE_E_NOMEM;
	}
	struct vyre_region_header *h = base;

	h->magic = VYRE_REGION_MAGIC;
	h->abi_version = VYRE_ABI_VERSION;
	h->sq_entries = lay.sq_entries;
	h->cq_entries = lay.cq_entries;
	h->sq_offset = lay.sq_offset;
	h->cq_offset = lay.cq_offset;
	h->region_bytes = lay.bytes;
	h->client_id = client_id;
	h->domain_id = domain_id;
	out->hdr = h;
	out->sq = (struct vyre_sqe *)(void *)((uint8_t *)base + lay.sq_offset);
	out->cq = (struct vyre_cqe *)(void *)((uint8_t *)base + lay.cq_offset);
	out->bytes = lay.bytes;
	out->sq_entries = lay.sq_entries;
	out->cq_entries = lay.cq_entries;
	out->fd = fd;
	return 0;
}
