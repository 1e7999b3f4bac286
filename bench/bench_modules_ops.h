/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_ops.h - the example op modules the "modules" suite
 * runs (examples/ops/NAME): their operands, the random bytes a producer
 * fills them with, and each item's check against the module's own host
 * function (bench/bench_modules_ops.c, linked with the examples' host
 * objects).
 */
#ifndef VYRE_BENCH_MODULES_OPS_H
#define VYRE_BENCH_MODULES_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/op_module.h"

struct vyre_modules_op {
	const char *name;   /* the module's and its op's name */
	uint32_t out_bytes; /* the output an item writes */
	int table;	    /* 1: `param table`, a second vector of the input's size (dot) */
	int param_word;	    /* 1: `param word`, the item's param varies (crc32c, hash64) */
	vyre_op_host_fn *host;
};

#define VYRE_MODULES_OPS     4u
#define VYRE_MODULES_OUT_MAX 1024u /* histogram's 256 counts */

extern const struct vyre_modules_op vyre_modules_ops[VYRE_MODULES_OPS];

/* @bytes of input (and of the table for a table op) of random bytes from @seed; dot: floats in [-1,
 * 1). */
void vyre_modules_fill(const struct vyre_modules_op *op, void *in, void *table, uint32_t bytes,
		       uint64_t seed);

/* The param word of item @seq (0 for an op without one; a table op's is its table's handle). */
uint32_t vyre_modules_param(const struct vyre_modules_op *op, uint32_t seq);

/* 1 when item @seq's output and result are checked: the first 16, then one in 64. */
int vyre_modules_sampled(uint32_t seq);

/*
 * 0 when @rc is 0 and @out (op->out_bytes) and @result are what the host
 * function gives for @in and @table (@bytes each) and @param; else -1 and why.
 */
int vyre_modules_check(const struct vyre_modules_op *op, const void *in, const void *table,
		       uint32_t bytes, uint32_t param, int rc, const void *out, uint64_t result,
		       char *why, size_t why_len);

#endif /* VYRE_BENCH_MODULES_OPS_H */
