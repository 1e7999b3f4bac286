/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_gpu.c - the "modules" suite's own-kernel side (see
 * bench_modules_gpu.h). Built with the CUDA backend (VYRE_HAVE_CUDA, set by
 * bench/build.mk when nvcc was found); without it both calls say so.
 *
 * Memory, one pinned allocation: the input, the table, then a slot an
 * outstanding item: its output and its record (bench_modules_abi.h). The
 * stream runs the launches in order, so the oldest outstanding item is the
 * next to finish, seen in its record; the closed loop (one slot) waits
 * with cuStreamSynchronize instead, as a user's launch-and-wait would.
 */
#include "bench_modules_gpu.h"

#include <stdio.h>

#include "bench_modules_side.h"

#ifdef VYRE_HAVE_CUDA
#include <sched.h>
#include <stdlib.h>

#include "bench.h"
#include "bench_modules_abi.h"
#include "cuda_device.h"
#include "vyre/op_module.h"

/* bench/bench_modules_peer.cu as built by gpu/cuda.mk */
extern const unsigned char vyre_bench_modules_fatbin[];
extern const uint64_t vyre_bench_modules_fatbin_bytes;

#define ALIGN	   256u
#define RECORD_OFF VYRE_MODULES_OUT_MAX
#define SLOT_SIZE  (VYRE_MODULES_OUT_MAX + ALIGN) /* the largest output, then the record */

struct gpu {
	struct vyre_modules_side s;
	struct vyre_cuda_device dv;
	CUmodule mod;
	CUfunction fn;
	CUstream stream;
	struct vyre_cuda_pinned mem;
	uint64_t table_off, slots_off;
	uint32_t slots, head, count, order[VYRE_MODULES_SLOTS]; /* slots in launch order */
};

/* 0 for CUDA_SUCCESS, else -1 with why. */
static int cu(struct gpu *g, const char *call, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return 0;
	vyre_cuda_error(g->dv.d, g->s.why, sizeof(g->s.why), call, r);
	return -1;
}

static uint64_t slot_off(const struct gpu *g, uint32_t slot)
{
	return g->slots_off + (uint64_t)SLOT_SIZE * slot;
}

static int gpu_submit(struct vyre_modules_side *s, uint32_t slot, uint32_t param, uint32_t seq)
{
	struct gpu *g = (struct gpu *)s;
	const CUdeviceptr base = g->mem.dev;
	/* an op without a table gets none, as the megakernel passes it */
	struct vyre_bench_modules_item it = {base,
					     s->bytes,
					     base + slot_off(g, slot),
					     s->op->out_bytes,
					     s->op->table ? base + g->table_off : 0,
					     s->op->table ? s->bytes : 0,
					     base + slot_off(g, slot) + RECORD_OFF,
					     param,
					     seq};
	void *params[] = {&it};

	s->seq[slot] = seq;
	g->order[(g->head + g->count++) % VYRE_MODULES_SLOTS] = slot;
	return cu(g, "cuLaunchKernel(the modules peer)",
		  g->dv.d->cuLaunchKernel(g->fn, 1, 1, 1, VYRE_BENCH_MODULES_THREADS, 1, 1,
					  VYRE_OP_DEV_SCRATCH_MIN, g->stream, params, NULL));
}

/* The oldest outstanding item into @d, when its record says it is done: 1, else 0. */
static int take(struct gpu *g, struct vyre_modules_done *d)
{
	const uint32_t slot = g->order[g->head];
	const volatile struct vyre_bench_modules_record *r =
	    (const volatile void *)((const char *)g->mem.host + slot_off(g, slot) + RECORD_OFF);

	if (!g->count || __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != g->s.seq[slot])
		return 0;
	*d = (struct vyre_modules_done){slot, r->rc, r->result};
	g->head = (g->head + 1) % VYRE_MODULES_SLOTS;
	g->count--;
	return 1;
}

/*
 * One slot (the closed loop): cuStreamSynchronize, then the record. Else
 * poll the records in launch order until @timeout_ns, leaving the CPU
 * between polls when every slot is in flight (nothing else to do).
 */
static int gpu_reap(struct vyre_modules_side *s, struct vyre_modules_done *d, uint32_t max,
		    int64_t timeout_ns)
{
	struct gpu *g = (struct gpu *)s;
	const uint64_t until = vyre_bench_now_ns() + (uint64_t)(timeout_ns > 0 ? timeout_ns : 0);
	uint32_t n = 0;

	if (g->slots == 1 && g->count == 1) {
		if (cu(g, "cuStreamSynchronize", g->dv.d->cuStreamSynchronize(g->stream)))
			return -1;
		if (take(g, d))
			return 1;
		snprintf(s->why, sizeof(s->why), "item %u: no record after the stream's end",
			 s->seq[g->order[g->head]]);
		return -1;
	}
	for (;;) {
		while (n < max && take(g, &d[n]))
			n++;
		if (n || !g->count || vyre_bench_now_ns() >= until)
			return (int)n;
		if (g->count == g->slots)
			sched_yield();
	}
}

static void gpu_close(struct vyre_modules_side *s)
{
	struct gpu *g = (struct gpu *)s;

	if (g->dv.ctx && g->stream) {
		g->dv.d->cuStreamSynchronize(g->stream);
		g->dv.d->cuStreamDestroy(g->stream);
	}
	if (g->dv.ctx && g->mod)
		g->dv.d->cuModuleUnload(g->mod);
	vyre_cuda_pinned_free(&g->dv, &g->mem);
	vyre_cuda_device_close(&g->dv);
	free(g);
}

static const struct vyre_modules_side_ops gpu_ops = {gpu_submit, gpu_reap, gpu_close};

/* The context, the kernel, the stream and the memory; 0, else -1 with why. */
static int gpu_setup(struct gpu *g, uint32_t slots, uint64_t seed)
{
	char fn[64];

	g->slots = slots;
	g->table_off = (g->s.bytes + ALIGN - 1) / ALIGN * ALIGN;
	g->slots_off = 2 * g->table_off;
	snprintf(fn, sizeof(fn), "vyre_bench_modules_%s", g->s.op->name);
	if (vyre_cuda_device_open(&g->dv, 0, 0, g->s.why, sizeof(g->s.why)) ||
	    cu(g, "cuModuleLoadData(the modules peer)",
	       g->dv.d->cuModuleLoadData(&g->mod, vyre_bench_modules_fatbin)) ||
	    cu(g, "cuModuleGetFunction", g->dv.d->cuModuleGetFunction(&g->fn, g->mod, fn)) ||
	    cu(g, "cuStreamCreate", g->dv.d->cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING)) ||
	    vyre_cuda_pinned_alloc(&g->dv, &g->mem, slot_off(g, slots), g->s.why, sizeof(g->s.why)))
		return -1;
	g->s.in = g->mem.host;
	g->s.table = (char *)g->mem.host + g->table_off;
	for (uint32_t i = 0; i < slots; i++)
		g->s.out[i] = (char *)g->mem.host + slot_off(g, i);
	vyre_modules_fill(g->s.op, g->mem.host, (char *)g->mem.host + g->table_off, g->s.bytes,
			  seed);
	return 0;
}

int vyre_modules_gpu_open(struct vyre_modules_side **out, const struct vyre_modules_load *l,
			  uint32_t slots, uint64_t seed, char *why, size_t why_len)
{
	struct gpu *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	vyre_modules_side_init(&g->s, &gpu_ops, l);
	if (slots > VYRE_MODULES_SLOTS || gpu_setup(g, slots, seed)) {
		snprintf(why, why_len, "%s", g->s.why[0] ? g->s.why : "too many slots");
		gpu_close(&g->s);
		return -1;
	}
	*out = &g->s;
	return 0;
}

#else
static const char no_cuda[] = "vyre-bench was built without nvcc, so without CUDA";

int vyre_modules_gpu_open(struct vyre_modules_side **out, const struct vyre_modules_load *l,
			  uint32_t slots, uint64_t seed, char *why, size_t why_len)
{
	(void)l, (void)slots, (void)seed;
	*out = NULL;
	snprintf(why, why_len, "%s", no_cuda);
	return -1;
}
#endif

int vyre_modules_gpu_probe(char *why, size_t why_len)
{
	const struct vyre_modules_load l = {0, 4, 1};
	struct vyre_modules_side *s;

	if (vyre_modules_gpu_open(&s, &l, 1, 1, why, why_len))
		return -1;
	s->ops->close(s);
	return 0;
}
