/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_gpu.c - the "launch it yourself" peer of the peers suite
 * (see bench_peers_gpu.h). Built with the CUDA backend (VYRE_HAVE_CUDA, set by
 * bench/build.mk when nvcc was found); without it every call says so.
 *
 * The item runs as the CUDA backend's launch-per-item baseline runs one
 * (gpu/cuda_peers.c): one vyre_mk_unit by value to vyre_mk_item, one warp,
 * buffers in pinned host memory mapped into the device, as vyre's heaps are.
 */
#include "bench_peers_gpu.h"

#include <stdio.h>

#ifdef VYRE_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"
#include "cuda_device.h"
#include "vyre/abi.h"

#define IN_OFF	  0u
#define RES_OFF	  64u /* vyre_mk_item's result records: ADD writes none */
#define OUT_OFF	  128u
#define SLOT_SIZE 64u

struct vyre_peers_gpu {
	struct vyre_cuda_device dv;
	CUstream stream;
	struct vyre_cuda_pinned mem;
	uint32_t slots;
	char why[320];
};

static uint32_t *out_words(const struct vyre_peers_gpu *g, uint32_t slot)
{
	return (uint32_t *)((uint8_t *)g->mem.host + OUT_OFF + (uint64_t)SLOT_SIZE * slot);
}

static const uint32_t *in_words(const struct vyre_peers_gpu *g)
{
	return (const uint32_t *)((const uint8_t *)g->mem.host + IN_OFF);
}

static int cu(struct vyre_peers_gpu *g, const char *call, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return 0;
	vyre_cuda_error(g->dv.d, g->why, sizeof(g->why), call, r);
	return vyre_cuda_status(r);
}

int vyre_peers_gpu_probe(char *why, size_t why_len)
{
	struct vyre_cuda_device dv;

	if (vyre_cuda_device_open(&dv, 0, 0, why, (uint32_t)why_len) != 0)
		return -1;
	vyre_cuda_device_close(&dv);
	return 0;
}

void vyre_peers_gpu_close(struct vyre_peers_gpu *g)
{
	if (!g)
		return;
	if (g->dv.ctx) {
		if (g->stream) {
			g->dv.d->cuStreamSynchronize(g->stream);
			g->dv.d->cuStreamDestroy(g->stream);
		}
		vyre_cuda_pinned_free(&g->dv, &g->mem);
	}
	vyre_cuda_device_close(&g->dv);
	free(g);
}

int vyre_peers_gpu_open(struct vyre_peers_gpu **out, uint32_t slots, char *why, size_t why_len)
{
	struct vyre_peers_gpu *g = calloc(1, sizeof(*g));
	int err;

	*out = NULL;
	if (!g) {
		snprintf(why, why_len, "out of memory");
		return VYRE_E_NOMEM;
	}
	g->slots = slots;
	err = vyre_cuda_device_open(&g->dv, 0, 0, g->why, sizeof(g->why));
	if (!err)
		err = cu(g, "cuStreamCreate",
			 g->dv.d->cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING));
	if (!err)
		err = vyre_cuda_pinned_alloc(&g->dv, &g->mem, OUT_OFF + (uint64_t)SLOT_SIZE * slots,
					     g->why, sizeof(g->why));
	if (err) {
		snprintf(why, why_len, "%s", g->why);
		vyre_peers_gpu_close(g);
		return err;
	}
	for (uint32_t i = 0; i < VYRE_PEERS_WORDS; i++)
		((uint32_t *)((uint8_t *)g->mem.host + IN_OFF))[i] = i;
	*out = g;
	return 0;
}

const char *vyre_peers_gpu_error(const struct vyre_peers_gpu *g)
{
	return g->why;
}

int vyre_peers_gpu_launch(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param)
{
	struct vyre_mk_unit u = {
	    .op = VYRE_OP_ADD,
	    .param = param,
	    .count = VYRE_PEERS_WORDS,
	    .in = g->mem.dev + IN_OFF,
	    .out = g->mem.dev + OUT_OFF + (uint64_t)SLOT_SIZE * slot,
	};
	uint64_t results = g->mem.dev + RES_OFF;
	uint32_t whole_block = 0;
	void *params[] = {&u, &results, &whole_block};

	return cu(
	    g, "cuLaunchKernel(vyre_mk_item)",
	    g->dv.d->cuLaunchKernel(g->dv.item, 1, 1, 1, 32, 1, 1, 0, g->stream, params, NULL));
}

int vyre_peers_gpu_sync(struct vyre_peers_gpu *g)
{
	return cu(g, "cuStreamSynchronize", g->dv.d->cuStreamSynchronize(g->stream));
}

int vyre_peers_gpu_done(const struct vyre_peers_gpu *g, uint32_t slot, uint32_t param)
{
	const uint32_t *o = out_words(g, slot);
	const uint32_t last = VYRE_PEERS_WORDS - 1;

	return __atomic_load_n(&o[last], __ATOMIC_ACQUIRE) == in_words(g)[last] + param &&
	       __atomic_load_n(&o[0], __ATOMIC_ACQUIRE) == in_words(g)[0] + param;
}

int vyre_peers_gpu_check(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param)
{
	const uint32_t *o = out_words(g, slot);

	for (uint32_t i = 0; i < VYRE_PEERS_WORDS; i++) {
		const uint32_t got = __atomic_load_n(&o[i], __ATOMIC_ACQUIRE);

		if (got != in_words(g)[i] + param) {
			snprintf(g->why, sizeof(g->why), "slot %u word %u: %u, not %u", slot, i,
				 got, in_words(g)[i] + param);
			return VYRE_E_PROTO;
		}
	}
	return 0;
}
#else
static const char no_cuda[] = "vyre-bench was built without nvcc, so without CUDA";

int vyre_peers_gpu_probe(char *why, size_t why_len)
{
	snprintf(why, why_len, "%s", no_cuda);
	return -1;
}

int vyre_peers_gpu_open(struct vyre_peers_gpu **out, uint32_t slots, char *why, size_t why_len)
{
	(void)slots;
	*out = NULL;
	snprintf(why, why_len, "%s", no_cuda);
	return -1;
}

void vyre_peers_gpu_close(struct vyre_peers_gpu *g)
{
	(void)g;
}

const char *vyre_peers_gpu_error(const struct vyre_peers_gpu *g)
{
	(void)g;
	return no_cuda;
}

int vyre_peers_gpu_launch(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param)
{
	(void)g, (void)slot, (void)param;
	return -1;
}

int vyre_peers_gpu_sync(struct vyre_peers_gpu *g)
{
	(void)g;
	return -1;
}

int vyre_peers_gpu_done(const struct vyre_peers_gpu *g, uint32_t slot, uint32_t param)
{
	(void)g, (void)slot, (void)param;
	return 0;
}

int vyre_peers_gpu_check(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param)
{
	(void)g, (void)slot, (void)param;
	return -1;
}
#endif
