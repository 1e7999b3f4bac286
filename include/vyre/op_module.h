/* SPDX-License-Identifier: MIT */
/*
 * include/vyre/op_module.h - what an op module implements (docs/design.md
 * 6.7): the host function the CPU backend calls for an item of a module
 * op, and the device function the megakernel calls. Module authors include
 * this header in both; vyred's own code uses it to call them. C and CUDA
 * C++ alike.
 */
#ifndef VYRE_OP_MODULE_H
#define VYRE_OP_MODULE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI a manifest's `abi` key names; vyred refuses every other. */
#define VYRE_OP_MODULE_ABI 1u
/* Set in every module op's number, never in a built-in op's. */
#define VYRE_OP_MODULE_BIT (1u << 31)
/* An op or module name: 1 to this many bytes of [a-z0-9_], a letter first. */
#define VYRE_OP_NAME_MAX 31u
/* Ops of one module. */
#define VYRE_OP_MODULE_MAX_OPS 64u
/* Words a stream op carries from one tile to the next. */
#define VYRE_OP_STATE_WORDS 8u

/*
 * An item's operands on the host. An operand the op does not have is NULL
 * with 0 bytes. For an `in counted` op, in and in_bytes are the counted
 * bytes after the length word (design.md 6.1); out is the whole output
 * buffer (or range). in and out may be the same memory.
 */
struct vyre_op_host_args {
	const void *in;
	uint64_t in_bytes;
	void *out;
	uint64_t out_bytes;
	const void *table; /* `param table`: the buffer the param names, whole */
	uint64_t table_bytes;
	uint32_t param; /* `param word`: the item's param; else 0 */
	uint32_t abi;	/* VYRE_OP_MODULE_ABI */
};

/*
 * 0, or VYRE_E_INVAL for operands the op cannot take; writes only the
 * output and *result. Called from several threads at once; keeps no state.
 */
typedef int vyre_op_host_fn(const struct vyre_op_host_args *a, uint64_t *result);

/*
 * An item's operands on the device, as device addresses, plus the block
 * that runs it. Every thread of the block calls the device function with
 * the same operands and its own `thread`; thread 0's return value and
 * result are the item's.
 */
struct vyre_op_dev_args {
	const void *in;
	uint64_t in_bytes;
	void *out;
	uint64_t out_bytes;
	const void *table;
	uint64_t table_bytes;
	uint32_t param;
	uint32_t abi;
	uint32_t thread;  /* this thread's index in the block */
	uint32_t threads; /* the block's threads */
	void *scratch;	  /* shared memory the op may use */
	uint32_t scratch_bytes;
	/*
	 * `stream yes` ops: the call is for tile `tile` of the input (in and
	 * in_bytes are the tile), the last one when `last_tile`; `state` is
	 * VYRE_OP_STATE_WORDS words that start 0 and carry from tile to tile.
	 */
	uint32_t tile;
	uint32_t last_tile;
	uint32_t *state;
};

/* Shared memory a device function may use through scratch, at least. */
#define VYRE_OP_DEV_SCRATCH_MIN 8192u

/*
 * The device function, in CUDA C++ (or PTX of the same signature):
 *
 *   extern "C" __device__ int vyre_op_NAME_device(
 *           const struct vyre_op_dev_args *a, unsigned long long *result);
 *
 * One block runs an item: every thread of it calls the function with the
 * same operands (its own `thread`), so the function may use
 * __syncthreads(), and every thread must return (none may exit). It
 * returns 0, or VYRE_E_INVAL (-1; any other value is taken as it) for
 * operands it cannot take; thread 0's return value and *result are the
 * item's, and must equal the host function's for the same operands. It
 * gets at most 64 registers a thread (the linker compiles PTX so; a cubin
 * must be built with -maxrregcount=64). It may not keep state between
 * calls, trap on purpose, or touch memory other than its operands and
 * scratch: a fault is contained as any device fault is (the launch and its
 * batch fail with VYRE_E_DEVICE), but it is a fault of vyred's context.
 */

#ifdef __cplusplus
}
#endif

#endif /* VYRE_OP_MODULE_H */
