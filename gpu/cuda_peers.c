/* SPDX-License-Identifier: MIT */
/* The baselines the CUDA backend is benchmarked against (see cuda_peers.h). */
#include "cuda_peers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_abi.h"
#include "cuda_device.h"
#include "cuda_lower.h"

#define PINGPONG_WAIT_NS 1000000000ll
#define CTRL_AT		 1024u /* vyre_cuda_peer_launch's control page, in the words page */
#define WATCHDOG_S	 10u

struct vyre_cuda_peers {
	struct vyre_cuda_device dv;
	CUstream stream;
	struct vyre_cuda_pinned heap, slab, words;
	CUdeviceptr devstate; /* vyre_cuda_peer_launch's, allocated at its first call */
	struct vyre_cuda_heap vheap;
	struct vyre_cuda_layout lay;
	uint32_t *cls, *order_slot;
	struct vyre_cuda_item_state *item_state;
	struct vyre_cuda_launch *launches;
	uint32_t max_items;
	char why[320];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cu(struct vyre_cuda_peers *p, const char *call, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return 0;
	vyre_cuda_error(p->dv.d, p->why, sizeof(p->why), call, r);
	return vyre_cuda_status(r);
}

void vyre_cuda_peers_close(struct vyre_cuda_peers *p)
{
	if (!p)
		return;
	if (p->dv.ctx) {
		if (p->stream) {
			p->dv.d->cuStreamSynchronize(p->stream);
			p->dv.d->cuStreamDestroy(p->stream);
		}
		if (p->devstate)
			p->dv.d->cuMemFree(p->devstate);
		vyre_cuda_pinned_free(&p->dv, &p->words);
		vyre_cuda_pinned_free(&p->dv, &p->slab);
		vyre_cuda_pinned_free(&p->dv, &p->heap);
	}
	vyre_cuda_device_close(&p->dv);
	free(p->cls);
	free(p->order_slot);
	free(p->item_state);
	free(p->launches);
	free(p);
}

int vyre_cuda_peers_open(struct vyre_cuda_peers **out, int device, uint64_t heap_bytes,
			 uint32_t max_items, char *why, uint32_t why_len)
{
	struct vyre_cuda_peers *p = calloc(1, sizeof(*p));
	uint64_t slab_bytes =
	    (uint64_t)max_items * (sizeof(struct vyre_mk_unit) * 2 + sizeof(struct vyre_mk_stage) +
				   sizeof(struct vyre_mk_result)) +
	    (1u << 16);
	int err;

	*out = NULL;
	if (!p)
		return VYRE_E_NOMEM;
	p->max_items = max_items;
	p->cls = calloc(max_items ? max_items : 1, sizeof(*p->cls));
	p->order_slot = calloc(max_items ? max_items : 1, sizeof(*p->order_slot));
	p->item_state = calloc(max_items ? max_items : 1, sizeof(*p->item_state));
	p->launches = calloc(max_items ? max_items : 1, sizeof(*p->launches));
	err = p->cls && p->order_slot && p->item_state && p->launches ? 0 : VYRE_E_NOMEM;
	if (!err)
		err = vyre_cuda_device_open(&p->dv, device, 0, p->why, sizeof(p->why));
	if (!err)
		err = cu(p, "cuStreamCreate",
			 p->dv.d->cuStreamCreate(&p->stream, CU_STREAM_NON_BLOCKING));
	if (!err)
		err = vyre_cuda_pinned_alloc(&p->dv, &p->heap, heap_bytes, p->why, sizeof(p->why));
	if (!err)
		err = vyre_cuda_pinned_alloc(&p->dv, &p->slab, slab_bytes, p->why, sizeof(p->why));
	if (!err)
		err = vyre_cuda_pinned_alloc(&p->dv, &p->words, 4096, p->why, sizeof(p->why));
	if (err) {
		if (why_len)
			snprintf(why, why_len, "%s",
				 err == VYRE_E_NOMEM && !p->why[0] ? "out of memory" : p->why);
		vyre_cuda_peers_close(p);
		return err;
	}
	p->vheap =
	    (struct vyre_cuda_heap){.dptr = p->heap.dev, .bytes = heap_bytes, .registered = 1};
	*out = p;
	return 0;
}

uint8_t *vyre_cuda_peers_heap(struct vyre_cuda_peers *p, uint64_t *bytes)
{
	*bytes = p->heap.bytes;
	return p->heap.host;
}

const char *vyre_cuda_peers_error(struct vyre_cuda_peers *p)
{
	return p->why;
}

int vyre_cuda_peer_empty(struct vyre_cuda_peers *p, uint64_t *ns)
{
	const uint64_t t0 = now_ns();
	int err =
	    cu(p, "cuLaunchKernel(vyre_mk_empty)",
	       p->dv.d->cuLaunchKernel(p->dv.empty, 1, 1, 1, 32, 1, 1, 0, p->stream, NULL, NULL));

	if (!err)
		err = cu(p, "cuStreamSynchronize", p->dv.d->cuStreamSynchronize(p->stream));
	*ns = now_ns() - t0;
	return err;
}

int vyre_cuda_peer_pingpong(struct vyre_cuda_peers *p, uint32_t rounds, uint64_t *ns)
{
	uint32_t *ping = p->words.host, *pong = ping + 16; /* separate cache lines */
	uint64_t ping_dev = p->words.dev, pong_dev = p->words.dev + 64;
	uint64_t timeout_cycles = 5000ull * p->dv.clock_khz;
	void *params[] = {&ping_dev, &pong_dev, &rounds, &timeout_cycles};
	int err;

	__atomic_store_n(ping, 0u, __ATOMIC_RELEASE);
	__atomic_store_n(pong, 0u, __ATOMIC_RELEASE);
	err = cu(
	    p, "cuLaunchKernel(vyre_mk_pingpong)",
	    p->dv.d->cuLaunchKernel(p->dv.pingpong, 1, 1, 1, 1, 1, 1, 0, p->stream, params, NULL));
	for (uint32_t r = 1; !err && r <= rounds; r++) {
		const uint64_t t0 = now_ns();

		__atomic_store_n(ping, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(pong, __ATOMIC_ACQUIRE) != r) {
			if (now_ns() - t0 > PINGPONG_WAIT_NS) {
				snprintf(p->why, sizeof(p->why), "no echo of round %u within 1 s",
					 r);
				err = VYRE_E_TIMEDOUT;
				break;
			}
		}
		ns[r - 1] = now_ns() - t0;
	}
	int sync = cu(p, "cuStreamSynchronize", p->dv.d->cuStreamSynchronize(p->stream));
	return err ? err : sync;
}

static int lower_on(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
		    const struct vyre_cuda_heap *heap, uint32_t n_heaps)
{
	int err;

	if (batch->plan.n_order > p->max_items || batch->n_items > p->max_items) {
		snprintf(p->why, sizeof(p->why), "batch of %u items, peers sized for %u",
			 batch->n_items, p->max_items);
		return VYRE_E_INVAL;
	}
	err = vyre_cuda_lower_measure(batch, heap, n_heaps, p->dv.grid, p->cls, p->item_state,
				      &p->lay);
	if (!err && p->lay.bytes > p->slab.bytes) {
		snprintf(p->why, sizeof(p->why), "batch needs a %llu-byte slab",
			 (unsigned long long)p->lay.bytes);
		err = VYRE_E_NOMEM;
	}
	if (!err)
		vyre_cuda_lower_fill(batch, heap, p->cls, p->item_state, &p->lay, p->slab.host,
				     p->dv.grid, p->order_slot, p->launches);
	return err;
}

static int lower(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch)
{
	return lower_on(p, batch, &p->vheap, 1);
}

/* Enqueue one vyre_mk_item launch per unit, stage by stage (the stream orders them). */
static int enqueue_units(struct vyre_cuda_peers *p)
{
	const struct vyre_mk_unit *units =
	    (const struct vyre_mk_unit *)((const uint8_t *)p->slab.host + p->lay.units_off);
	const struct vyre_mk_stage *stages =
	    (const struct vyre_mk_stage *)((const uint8_t *)p->slab.host + p->lay.stages_off);
	uint64_t results = p->slab.dev + p->lay.results_off;

	for (uint32_t l = 0; l < p->lay.n_launches; l++) {
		const struct vyre_cuda_launch *L = &p->launches[l];

		for (uint32_t s = 0; s < L->n_stages; s++) {
			const struct vyre_mk_stage *st = &stages[L->first_stage + s];
			const uint32_t n = st->n_block_units + st->n_warp_units;

			for (uint32_t i = 0; i < n; i++) {
				struct vyre_mk_unit u = units[L->first_unit + st->first_unit + i];
				uint32_t whole = i < st->n_block_units;
				void *params[] = {&u, &results, &whole};
				CUresult r = p->dv.d->cuLaunchKernel(
				    p->dv.item, 1, 1, 1, whole ? VYRE_MK_THREADS : 32, 1, 1,
				    p->dv.smem_dynamic, p->stream, params, NULL);

				if (r != CUDA_SUCCESS)
					return cu(p, "cuLaunchKernel(vyre_mk_item)", r);
			}
		}
	}
	return 0;
}

static void copy_results(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch)
{
	vyre_cuda_lower_results(
	    batch, p->order_slot,
	    (const struct vyre_mk_result *)((const uint8_t *)p->slab.host + p->lay.results_off));
}

int vyre_cuda_peer_per_item(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
			    uint64_t *ns)
{
	const uint64_t t0 = now_ns();
	int err = lower(p, batch);

	if (!err)
		err = enqueue_units(p);
	if (!err)
		err = cu(p, "cuStreamSynchronize", p->dv.d->cuStreamSynchronize(p->stream));
	*ns = now_ns() - t0;
	if (!err)
		copy_results(p, batch);
	return err;
}

int vyre_cuda_peer_graph(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
			 uint32_t replays, uint64_t *build_ns, uint64_t *run_ns,
			 uint64_t *replay_ns)
{
	const struct vyre_cuda_driver *d = p->dv.d;
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	uint64_t t0 = now_ns();
	int err = lower(p, batch);

	if (!err)
		err = cu(p, "cuStreamBeginCapture",
			 d->cuStreamBeginCapture(p->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	if (!err) {
		int enq = enqueue_units(p);

		/* end the capture even when enqueueing failed, or the stream stays capturing */
		err = cu(p, "cuStreamEndCapture", d->cuStreamEndCapture(p->stream, &graph));
		err = enq ? enq : err;
	}
	if (!err)
		err = cu(p, "cuGraphInstantiate", d->cuGraphInstantiate(&exec, graph, 0));
	*build_ns = now_ns() - t0;
	t0 = now_ns();
	if (!err)
		err = cu(p, "cuGraphLaunch", d->cuGraphLaunch(exec, p->stream));
	if (!err)
		err = cu(p, "cuStreamSynchronize", d->cuStreamSynchronize(p->stream));
	*run_ns = now_ns() - t0;
	if (!err)
		copy_results(p, batch);
	t0 = now_ns();
	for (uint32_t i = 0; !err && i < replays; i++)
		err = cu(p, "cuGraphLaunch", d->cuGraphLaunch(exec, p->stream));
	if (!err)
		err = cu(p, "cuStreamSynchronize", d->cuStreamSynchronize(p->stream));
	*replay_ns = now_ns() - t0;
	if (exec)
		d->cuGraphExecDestroy(exec);
	if (graph)
		d->cuGraphDestroy(graph);
	return err;
}

void vyre_cuda_peers_smem(struct vyre_cuda_peers *p, uint32_t *dflt, uint32_t *max)
{
	*dflt = p->dv.smem_dynamic;
	*max = p->dv.smem_dynamic_max;
}

/* Every DFA unit of the lowered batch skips its table's validation. */
static void trust_tables(struct vyre_cuda_peers *p)
{
	struct vyre_mk_unit *u =
	    (struct vyre_mk_unit *)((uint8_t *)p->slab.host + p->lay.units_off);

	for (uint32_t i = 0; i < p->lay.n_units; i++) {
		const uint32_t op = u[i].op & VYRE_MK_OP_MASK;
		if (op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED)
			u[i].op |= VYRE_MK_TABLE_TRUSTED;
	}
}

int vyre_cuda_peer_launch(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
			  uint64_t heap_dev, uint64_t heap_bytes, uint32_t smem_dynamic,
			  int trusted, uint64_t *ns)
{
	const struct vyre_cuda_heap heap = {heap_dev, heap_bytes, 1, 1};

	return vyre_cuda_peer_launch_heaps(p, batch, &heap, 1, smem_dynamic, trusted, ns);
}

int vyre_cuda_peer_launch_heaps(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
				const struct vyre_cuda_heap *heaps, uint32_t n_heaps,
				uint32_t smem_dynamic, int trusted, uint64_t *ns)
{
	const struct vyre_cuda_driver *d = p->dv.d;
	struct vyre_mk_ctrl *ctrl = (struct vyre_mk_ctrl *)((uint8_t *)p->words.host + CTRL_AT);
	const uint32_t smem =
	    smem_dynamic < p->dv.smem_dynamic_max ? smem_dynamic : p->dv.smem_dynamic_max;
	uint64_t t0;
	int err = lower_on(p, batch, heaps, n_heaps);

	*ns = 0;
	if (!err && !p->devstate)
		err = cu(p, "cuMemAlloc(devstate)",
			 d->cuMemAlloc(&p->devstate, sizeof(struct vyre_mk_devstate)));
	if (!err)
		err = cu(
		    p, "cuMemsetD8Async",
		    d->cuMemsetD8Async(p->devstate, 0, sizeof(struct vyre_mk_devstate), p->stream));
	if (!err)
		err = cu(p, "cuStreamSynchronize", d->cuStreamSynchronize(p->stream));
	if (err)
		return err;
	if (trusted)
		trust_tables(p);
	memset(ctrl, 0, sizeof(*ctrl));
	t0 = now_ns();
	for (uint32_t i = 0; i < p->lay.n_launches && !err; i++) {
		const struct vyre_cuda_launch *l = &p->launches[i];
		struct vyre_mk_launch_kargs a = {
		    .launch =
			{
			    .units = p->slab.dev + p->lay.units_off +
				     (uint64_t)l->first_unit * sizeof(struct vyre_mk_unit),
			    .stages = p->slab.dev + p->lay.stages_off +
				      (uint64_t)l->first_stage * sizeof(struct vyre_mk_stage),
			    .results = p->slab.dev + p->lay.results_off,
			    .n_stages = l->n_stages,
			    .n_units = l->n_units,
			    .n_blocks = l->n_blocks,
			    .flags = l->flags,
			},
		    .ctrl = p->words.dev + CTRL_AT,
		    .devstate = p->devstate,
		    .watchdog_cycles = (uint64_t)WATCHDOG_S * 1000 * p->dv.clock_khz,
		};
		void *params[] = {&a};

		/* a launch of several blocks meets at device-wide barriers: all resident */
		err = cu(p, "cuLaunchCooperativeKernel(vyre_mk_launch)",
			 d->cuLaunchCooperativeKernel(p->dv.launch, l->n_blocks, 1, 1,
						      VYRE_MK_THREADS, 1, 1, smem, p->stream,
						      params));
	}
	if (!err)
		err = cu(p, "cuStreamSynchronize", d->cuStreamSynchronize(p->stream));
	*ns = now_ns() - t0;
	if (!err && __atomic_load_n(&ctrl->state, __ATOMIC_ACQUIRE) == VYRE_MK_STATE_WATCHDOG) {
		snprintf(p->why, sizeof(p->why), "the watchdog stopped the launch (block %u)",
			 ctrl->detail);
		err = VYRE_E_TIMEDOUT;
	}
	if (!err)
		copy_results(p, batch);
	return err;
}
