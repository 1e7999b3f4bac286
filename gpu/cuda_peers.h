/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_peers.h - what the CUDA backend is measured against (bench/
 * bench_cuda.c): the bare launch floor, the mapped-memory doorbell floor,
 * one cuLaunchKernel per item, and one CUDA graph per batch. The peers own a
 * pinned, device-mapped heap of their own; batches for them name heap 0.
 * They hold the GPU's primary context: open them while no persistent
 * backend kernel is resident, or their kernels wait behind it.
 */
#ifndef VYRE_GPU_CUDA_PEERS_H
#define VYRE_GPU_CUDA_PEERS_H

#include <stdint.h>

#include "backend.h"
#include "cuda_lower.h"

struct vyre_cuda_peers;

/* Open device @device with a zeroed heap of @heap_bytes for batches of up to @max_items. */
int vyre_cuda_peers_open(struct vyre_cuda_peers **out, int device, uint64_t heap_bytes,
			 uint32_t max_items, char *why, uint32_t why_len);
void vyre_cuda_peers_close(struct vyre_cuda_peers *p);

/* The peers' heap (host address) and its size. */
uint8_t *vyre_cuda_peers_heap(struct vyre_cuda_peers *p, uint64_t *bytes);

/* The last error message. */
const char *vyre_cuda_peers_error(struct vyre_cuda_peers *p);

/* One launch of an empty kernel and cuStreamSynchronize; *ns is the wall time. */
int vyre_cuda_peer_empty(struct vyre_cuda_peers *p, uint64_t *ns);

/*
 * @rounds round trips through mapped memory with a resident one-thread
 * kernel: the host writes round r to a ping word, the kernel echoes it to a
 * pong word. ns[r] is each round's wall time.
 */
int vyre_cuda_peer_pingpong(struct vyre_cuda_peers *p, uint32_t rounds, uint64_t *ns);

/* @batch as one cuLaunchKernel per unit (an item, or a chunk of a big one), then sync. */
int vyre_cuda_peer_per_item(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
			    uint64_t *ns);

/*
 * @batch as one CUDA graph: the per-unit launches captured and instantiated
 * (*build_ns), launched and synchronized (*run_ns), then launched @replays
 * more times (*replay_ns in all).
 */
int vyre_cuda_peer_graph(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
			 uint32_t replays, uint64_t *build_ns, uint64_t *run_ns,
			 uint64_t *replay_ns);

/*
 * @batch over a heap at device address @heap_dev of @heap_bytes (device
 * memory the caller allocated in this context; items name heap 0), as the
 * launch mode runs it: vyre_mk_launch per launch, @smem_dynamic bytes of
 * dynamic shared memory (at most what the device allows), DFA units marked
 * VYRE_MK_TABLE_TRUSTED when @trusted. *ns: the launches and the
 * synchronize, lowering excluded. Results are written to @batch.
 */
int vyre_cuda_peer_launch(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
			  uint64_t heap_dev, uint64_t heap_bytes, uint32_t smem_dynamic,
			  int trusted, uint64_t *ns);

/*
 * vyre_cuda_peer_launch over @n_heaps heaps that the caller registered or
 * allocated in this context (items name them by index; a heap with `device`
 * 0 is host memory the kernels read over PCIe).
 */
int vyre_cuda_peer_launch_heaps(struct vyre_cuda_peers *p, const struct vyre_exec_batch *batch,
				const struct vyre_cuda_heap *heaps, uint32_t n_heaps,
				uint32_t smem_dynamic, int trusted, uint64_t *ns);

/* The dynamic shared memory the backend passes each launch, and the most a launch may. */
void vyre_cuda_peers_smem(struct vyre_cuda_peers *p, uint32_t *dflt, uint32_t *max);

#endif /* VYRE_GPU_CUDA_PEERS_H */
