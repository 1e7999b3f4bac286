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

/* Which operands an op uses (vyre_op_operands). */
#define VYRE_OPERAND_IN	     (1u << 0)
#define VYRE_OPERAND_OUT     (1u << 1)
#define VYRE_OPERAND_TABLE   (1u << 2) /* param is a buffer handle */
#define VYRE_OPERAND_WORD0   (1u << 3) /* writes out[0]: needs an output of at least 4 bytes */
#define VYRE_OPERAND_COUNTED (1u << 4) /* counted bytes (design.md 6.1): in, out >= 4 bytes */

/*
 * A module op (docs/design.md 6.7, docs/opmods.md): its number, operand
 * mask (VYRE_OPERAND_*), whether its items may be deduplicated, and its
 * host function, which vyre_exec_one calls.
 */
struct vyre_op_module_entry {
	uint32_t number; /* VYRE_OP_MODULE_BIT | ... */
	uint8_t mask;
	uint8_t pure;
	vyre_op_host_fn *host;
};

/*
 * Makes @n module ops known to every vyre_op_* call of the process,
 * replacing any before: 0, VYRE_E_INVAL (a number without
 * VYRE_OP_MODULE_BIT, twice, a mask without IN or OUT, no host function),
 * VYRE_E_NOMEM. Call it before any thread that asks; @n 0 forgets them.
 */
int vyre_op_modules_register(const struct vyre_op_module_entry *e, uint32_t n);

/* The registered module op numbered @op, or NULL. */
const struct vyre_op_module_entry *vyre_op_module(uint32_t op);

#endif /* VYRE_GPU_OP_MODULES_H */
