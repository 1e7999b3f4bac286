/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_side.h - one producer of the "modules" suite as its
 * loops (bench/bench_modules_loop.c) drive it, whatever runs the items: a
 * client of vyred (bench/bench_modules_client.h), or the producer's own
 * kernel in its own CUDA context (bench/bench_modules_gpu.h). Slots are
 * the items it may have outstanding (at most 32), each with its own
 * output. Types only.
 */
#ifndef VYRE_BENCH_MODULES_SIDE_H
#define VYRE_BENCH_MODULES_SIDE_H

#include <stddef.h>
#include <stdint.h>

#include "bench_modules_ops.h"

#define VYRE_MODULES_SLOTS 32u /* OPEN_SLOTS of bench_peers_board.h */

struct vyre_modules_side;

/* A completed item: its slot, rc and result. */
struct vyre_modules_done {
	uint32_t slot;
	int rc;
	uint64_t result;
};

struct vyre_modules_side_ops {
	/* start item @seq (its param word @param) into @slot; 0, else the side's error */
	int (*submit)(struct vyre_modules_side *s, uint32_t slot, uint32_t param, uint32_t seq);
	/*
	 * Completed items, at most @max, waiting up to @timeout_ns for the
	 * first: how many (0: none by then), or < 0 after setting why.
	 */
	int (*reap)(struct vyre_modules_side *s, struct vyre_modules_done *d, uint32_t max,
		    int64_t timeout_ns);
	void (*close)(struct vyre_modules_side *s);
};

struct vyre_modules_side {
	const struct vyre_modules_side_ops *ops;
	const struct vyre_modules_op *op;
	uint32_t bytes;			  /* of the input and of the table */
	const void *in, *table;		  /* host views */
	void *out[VYRE_MODULES_SLOTS];	  /* host views of each slot's output */
	uint32_t seq[VYRE_MODULES_SLOTS]; /* the item each slot holds */
	char why[192];
};

/* What a producer of the suite runs (vyre_peers_load.arg). */
struct vyre_modules_load {
	unsigned op;	/* index into vyre_modules_ops */
	uint32_t bytes; /* input bytes */
	int gpu;	/* 1: its own kernel, 0: through vyred */
};

/* What @s is before its side opens it: @ops, @l's op and size, no why. */
static inline void vyre_modules_side_init(struct vyre_modules_side *s,
					  const struct vyre_modules_side_ops *ops,
					  const struct vyre_modules_load *l)
{
	s->ops = ops;
	s->op = &vyre_modules_ops[l->op];
	s->bytes = l->bytes;
	s->why[0] = '\0';
}

#endif /* VYRE_BENCH_MODULES_SIDE_H */
