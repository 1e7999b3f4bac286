/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_gpu.h - the "modules" suite's GPU side (bench/
 * bench_modules_gpu.c): a producer process with its own CUDA context that
 * launches each item of an example op as one block of 1024 threads of its
 * own kernel (bench/bench_modules_peer.cu, embedded as a fatbin), operands
 * in pinned host memory mapped into the device, as vyre's heaps are. Both
 * calls initialize CUDA: only forked children of the suite make them (CUDA
 * does not survive fork()).
 */
#ifndef VYRE_BENCH_MODULES_GPU_H
#define VYRE_BENCH_MODULES_GPU_H

#include <stddef.h>
#include <stdint.h>

struct vyre_modules_side;
struct vyre_modules_load;

/* 0 when device 0 opens and the peer's kernels load; else -1 and why. */
int vyre_modules_gpu_probe(char *why, size_t why_len);

/*
 * This process's context on device 0, a stream, the kernel of @l's op, and
 * pinned mapped memory for an input and a table of @l->bytes (filled from
 * @seed) and @slots outputs, each with its record. 0, else -1 and why.
 */
int vyre_modules_gpu_open(struct vyre_modules_side **out, const struct vyre_modules_load *l,
			  uint32_t slots, uint64_t seed, char *why, size_t why_len);

#endif /* VYRE_BENCH_MODULES_GPU_H */
