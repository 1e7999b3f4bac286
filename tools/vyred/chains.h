/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/chains.h - where a batch's chains (docs/design.md section 6.3)
 * begin and end.
 *
 * A chain is a run of one client's items in which every item but the last
 * carries VYRE_SQE_CHAIN. The drain takes chains whole, so inside a batch a
 * chain is a run of consecutive items of one connection. The only exception
 * is the tail of an oversize chain, taken in pieces already failed: its
 * first item continues nothing in the batch, and its last may carry
 * VYRE_SQE_CHAIN with no successor.
 */
#ifndef VYRED_CHAINS_H
#define VYRED_CHAINS_H

#include <stdint.h>

#include "batch.h"

/* 1 when item @i of @b continues the chain of item i - 1. */
static inline int vyre_chain_continues(const struct vyre_batch *b, uint32_t i)
{
	return i > 0 && (b->flags[i - 1] & VYRE_SQE_CHAIN) && b->conn[i - 1] == b->conn[i];
}

/* The first item of the chain that item @i belongs to. */
static inline uint32_t vyre_chain_start(const struct vyre_batch *b, uint32_t i)
{
	while (vyre_chain_continues(b, i))
		i--;
	return i;
}

/* The item after the chain that item @i belongs to (b->n at the end). */
static inline uint32_t vyre_chain_end(const struct vyre_batch *b, uint32_t i)
{
	i++;
	while (i < b->n && vyre_chain_continues(b, i))
		i++;
	return i;
}

#endif /* VYRED_CHAINS_H */
