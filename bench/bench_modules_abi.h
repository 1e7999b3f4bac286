/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_abi.h - what the "modules" suite's GPU peer passes
 * its kernels (bench/bench_modules_peer.cu) and what they write back:
 * one item's operands by value, device addresses as 64-bit words, and the
 * record thread 0 writes when the block is done. C and CUDA C++ alike.
 */
#ifndef VYRE_BENCH_MODULES_ABI_H
#define VYRE_BENCH_MODULES_ABI_H

#include <stdint.h>

/* Kernel "vyre_bench_modules_NAME" runs example op NAME on one block for one item. */
struct vyre_bench_modules_item {
	uint64_t in, in_bytes, out, out_bytes, table, table_bytes;
	uint64_t record; /* a struct vyre_bench_modules_record */
	uint32_t param, seq;
};

/* Written after the block's writes are visible to the host: rc and result first, then seq. */
struct vyre_bench_modules_record {
	uint32_t seq;
	int32_t rc;
	uint64_t result;
};

/* Threads of the block an item runs on, as the megakernel runs a module op. */
#define VYRE_BENCH_MODULES_THREADS 1024u

#endif /* VYRE_BENCH_MODULES_ABI_H */
