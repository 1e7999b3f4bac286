/* SPDX-License-Identifier: MIT */
/*
 * Device buffers of the CUDA backend (docs/design.md sections 6.2 and 8.1):
 * a heap index whose bytes are GPU memory from cuMemAlloc, zeroed with
 * cuMemsetD8. Lowering then uses the device pointer as the operand's base
 * (cuda_lower.c), and IMMEDIATE launches leave such items alone, since their
 * bytes are not in host memory.
 *
 * cuMemAlloc and cuMemFree may synchronize the primary context, which a
 * resident grid never lets go idle, so both run exclusive (cuda_group.c)
 * like heap registration: every grid on the device stopped, each started
 * again by its backend's next submit.
 */
#include "cuda_devmem.h"

#include <stdio.h>
#include <string.h>

#include "cuda_group.h"

struct devmem_req {
	uint32_t heap;
	uint64_t bytes;
	char *why;
	uint32_t why_len;
};

static int alloc_exclusive(struct vyre_backend *b, void *arg)
{
	struct devmem_req *q = arg;
	const struct vyre_cuda_driver *d = b->dv.d;
	/* cuMemAlloc refuses 0 bytes; an empty buffer still gets an address of its own */
	const size_t bytes = q->bytes ? (size_t)q->bytes : 4;
	CUdeviceptr p;
	CUresult r;

	if (vyre_cuda_quiesce(b) != 0)
		return VYRE_E_DEVICE;
	r = d->cuMemAlloc(&p, bytes);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, q->why, q->why_len, "cuMemAlloc(device buffer)", r);
		return vyre_cuda_status(r);
	}
	r = d->cuMemsetD8(p, 0, bytes);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, q->why, q->why_len, "cuMemsetD8(device buffer)", r);
		d->cuMemFree(p);
		return vyre_cuda_status(r);
	}
	b->heaps[q->heap] =
	    (struct vyre_cuda_heap){.dptr = p, .bytes = q->bytes, .registered = 1, .device = 1};
	return 0;
}

int vyre_cuda_alloc_device(struct vyre_backend *b, uint32_t heap, uint64_t bytes, char *why,
			   uint32_t why_len)
{
	struct devmem_req q = {heap, bytes, why, why_len};
	int err;

	if (why_len)
		why[0] = '\0';
	if (heap >= b->cfg.max_heaps || b->heaps[heap].registered || b->host_heaps[heap].base ||
	    bytes > SIZE_MAX)
		return VYRE_E_INVAL;
	if (b->dead)
		return VYRE_E_DEVICE;
	err = vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why));
	if (err)
		return err;
	err = vyre_cuda_group_exclusive(b, alloc_exclusive, &q, 0);
	if (err && why_len && !why[0])
		snprintf(why, why_len, "%s", b->why);
	return err;
}

static int free_exclusive(struct vyre_backend *b, void *arg)
{
	const uint32_t heap = *(const uint32_t *)arg;

	vyre_cuda_quiesce(b);
	vyre_cuda_free_device_now(b, heap);
	return 0;
}

void vyre_cuda_free_device_now(struct vyre_backend *b, uint32_t heap)
{
	if (!b->dead) {
		CUresult r = b->dv.d->cuMemFree(b->heaps[heap].dptr);

		if (r != CUDA_SUCCESS)
			vyre_cuda_cu_note(b, "cuMemFree(device buffer)", r);
	}
	memset(&b->heaps[heap], 0, sizeof(b->heaps[heap]));
}

int vyre_cuda_free_device(struct vyre_backend *b, uint32_t heap)
{
	if (heap >= b->cfg.max_heaps || !b->heaps[heap].device)
		return VYRE_E_INVAL;
	/* a dead context takes its memory with it; only the record is cleared then */
	if (!b->dead && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) == 0)
		vyre_cuda_group_exclusive(b, free_exclusive, &heap, 0);
	else
		memset(&b->heaps[heap], 0, sizeof(b->heaps[heap]));
	return 0;
}

uint64_t vyre_cuda_device_free_bytes(struct vyre_backend *b)
{
	size_t free_bytes = 0, total = 0;

	if (b->dead || vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) != 0 ||
	    b->dv.d->cuMemGetInfo(&free_bytes, &total) != CUDA_SUCCESS)
		return 0;
	return free_bytes;
}
