/* SPDX-License-Identifier: MIT */
/*
 * vyred's side of a resume (docs/design.md section 3): a region a client
 * kept from a vyred that died, checked like anything a client hands over,
 * and where its rings stand.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "region_adopt.h"

int vyre_region_adopt(int fd, uint32_t sq_max, uint32_t cq_max, struct vyre_region *out)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	/* without both seals the client could shrink the file under our mapping */
	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW) ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return VYRE_E_PROTO;
	int rc = vyre_region_map(fd, out);

	if (rc != 0)
		return rc;
	if (out->sq_entries > sq_max || out->cq_entries > cq_max) {
		out->fd = -1; /* still the caller's */
		vyre_region_unmap(out);
		return VYRE_E_PROTO;
	}
	return 0;
}

int vyre_ring_resume(const struct vyre_region *r, struct vyre_ring_resume *out)
{
	const struct vyre_region_header *h = r->hdr;
	/* each index read once: the client may change them while we look */
	uint32_t head = __atomic_load_n(&h->sq_head, __ATOMIC_ACQUIRE);
	uint32_t accepted = __atomic_load_n(&h->sq_accepted, __ATOMIC_ACQUIRE);
	uint32_t tail = __atomic_load_n(&h->sq_tail, __ATOMIC_ACQUIRE);
	uint32_t done = __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE);
	uint32_t reaped = __atomic_load_n(&h->cq_head, __ATOMIC_ACQUIRE);

	/* sq_head <= cq_tail <= sq_accepted <= sq_tail, a ring at most; the CQ holds them all */
	if (done - head > accepted - head || accepted - head > tail - head ||
	    tail - head > r->sq_entries || done - reaped > accepted - reaped ||
	    accepted - reaped > r->cq_entries)
		return VYRE_E_PROTO;
	out->done = done;
	out->accepted = accepted;
	out->reaped = reaped;
	return 0;
}
