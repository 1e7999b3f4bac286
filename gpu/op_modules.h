/* SPDX-License-Identifier: MIT */
/*
 * gpu/op_modules.h - which operands an op uses (the bits every stage asks
 * through vyre_op_operands, gpu/ops.h), and the module ops a process knows
 * (docs/design.md 6.7): a registry filled once at start, below ops.h so
 * that the inline op queries can ask it.
 */
#ifndef VYRE_GPU_OP_MODULES_H
#define VYRE_GPU_OP_MODULES_H

#include <stdint.h>

#include "vyre/abi.h"
#include "vyre/op_module.h"

/* Module ops a process may register: 64 modules of 64 ops (the device index has 14 bits). */
#define VYRE_OP_MODULES_MAX 4096u

/* Which operands an op uses (vyre_op_operands). */
#define VYRE_OPERAND_IN	     (1u << 0)
#define VYRE_OPERAND_OUT     (1u << 1)
#define VYRE_OPERAND_TABLE   (1u << 2) /* param is a buffer handle */
#define VYRE_OPERAND_WORD0   (1u << 3) /* writes out[0]: needs an output of at least 4 bytes */
#define VYRE_OPERAND_COUNTED (1u << 4) /* counted bytes (design.md 6.1): in, out >= 4 bytes */
/* the SQE's aux_handle may name a stream (design.md 6.8), read and written; built-in ops only */
#define VYRE_OPERAND_AUX (1u << 5)

/*
 * A module op (docs/design.md 6.7, docs/opmods.md): its number, operand
 * mask (VYRE_OPERAND_*), whether its items may be deduplicated, and its
 * host function, which vyre_exec_one calls. The names and device code are
 * for the CUDA backend's linker (gpu/cuda_modules.c) and for reports; the
 * registry borrows them: they must outlive it (vyred keeps its loaded
 * modules for its whole run). A module's ops share its code pointers.
 */
struct vyre_op_module_entry {
	uint32_t number; /* VYRE_OP_MODULE_BIT | ... */
	uint8_t mask;
	uint8_t pure;
	uint8_t stream; /* `stream yes` */
	vyre_op_host_fn *host;
	const char *name;      /* the op's name */
	const char *module;    /* its module's name */
	const char *device_fn; /* the device function's symbol, or NULL */
	const uint8_t *ptx;    /* the module's PTX (NUL-terminated or not), or NULL */
	uint64_t ptx_bytes;
	const uint8_t *cubin; /* the module's sm_90 cubin or fatbin, or NULL */
	uint64_t cubin_bytes;
};

/*
 * Makes @n module ops known to every vyre_op_* call of the process,
 * replacing any before: 0, VYRE_E_INVAL (a number without
 * VYRE_OP_MODULE_BIT, twice, a mask without IN or OUT, no host function,
 * more than VYRE_OP_MODULES_MAX),
 * VYRE_E_NOMEM. Call it before any thread that asks; @n 0 forgets them.
 */
int vyre_op_modules_register(const struct vyre_op_module_entry *e, uint32_t n);

/* The registered module op numbered @op, or NULL. */
const struct vyre_op_module_entry *vyre_op_module(uint32_t op);

/*
 * Every registered module op, sorted by number, and their count in *@n.
 * An op's index in it is its index on the device (vyre_op_module_index).
 */
const struct vyre_op_module_entry *vyre_op_modules_all(uint32_t *n);

/* The index of the module op numbered @op in vyre_op_modules_all(), or -1. */
int32_t vyre_op_module_index(uint32_t op);

#endif /* VYRE_GPU_OP_MODULES_H */
