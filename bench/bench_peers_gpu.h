/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_gpu.h - the "peers" suite's GPU peers (bench/
 * bench_peers_gpu.c): a producer process that launches each item itself, in
 * its own CUDA context, as one cuLaunchKernel of the megakernel's
 * vyre_mk_item over a one-warp ADD of 16 words. Every vyre_peers_gpu call
 * initializes or uses CUDA, so only the forked children of the suite make
 * them, never the process that forks them: CUDA state does not survive
 * fork().
 */
#ifndef VYRE_BENCH_PEERS_GPU_H
#define VYRE_BENCH_PEERS_GPU_H

#include <stddef.h>
#include <stdint.h>

/* Words of an item's input and output: the suite's tiny ADD. */
#define VYRE_PEERS_WORDS 16u

struct vyre_peers_gpu;

/* 0 when device 0 can be opened and the megakernel loads; else -1 and why. */
int vyre_peers_gpu_probe(char *why, size_t why_len);

/*
 * This process's own context on device 0, a stream, and pinned, device-mapped
 * memory with one input (words 0..15) and @slots outputs.
 */
int vyre_peers_gpu_open(struct vyre_peers_gpu **out, uint32_t slots, char *why, size_t why_len);
void vyre_peers_gpu_close(struct vyre_peers_gpu *g);
const char *vyre_peers_gpu_error(const struct vyre_peers_gpu *g);

/* Enqueue out[slot][i] = in[i] + @param (i < 16) as one launch; does not wait. */
int vyre_peers_gpu_launch(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param);

/* cuStreamSynchronize: every launch so far has finished. */
int vyre_peers_gpu_sync(struct vyre_peers_gpu *g);

/*
 * 1 when the output of the launch of @param into @slot is visible in host
 * memory (its first and last word), else 0. Params must differ between
 * successive launches into one slot.
 */
int vyre_peers_gpu_done(const struct vyre_peers_gpu *g, uint32_t slot, uint32_t param);

/* 0 when every word of @slot holds in[i] + @param; else an error and why. */
int vyre_peers_gpu_check(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param);

#endif /* VYRE_BENCH_PEERS_GPU_H */
