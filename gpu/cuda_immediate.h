/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_immediate.h - the host half of IMMEDIATE launches (cuda_abi.h):
 * a batch of small items whose input travels inside its doorbell slot and
 * whose output comes back inside a completion slot. Pure: no CUDA, so
 * tested without a GPU against the oracle.
 */
#ifndef VYRE_GPU_CUDA_IMMEDIATE_H
#define VYRE_GPU_CUDA_IMMEDIATE_H

#include <stdint.h>

#include "backend.h"
#include "cuda_lower.h"

/*
 * The data of doorbell slot words 0.. for @imm (the low halves; the caller
 * adds the sequence number), item j's input read from the heap at
 * @item_base[j]. Returns the number of words, at most VYRE_MK_SLOT_WORDS.
 */
uint32_t vyre_cuda_immediate_doorbell(const struct vyre_cuda_immediate *imm,
				      const uint8_t *const *item_base, uint32_t *data);

/*
 * The data of doorbell slot words 0.. for the module batch @imm
 * (vyre_cuda_lower_module_imm) lowered into @lay of the slab at device
 * address @slab_dev: an INLINE launch with VYRE_MK_LAUNCH_CPL, @units its
 * units (the slab's), each unit j's slot field j. Returns the number of
 * words, at most VYRE_MK_SLOT_WORDS.
 */
uint32_t vyre_cuda_module_doorbell(const struct vyre_cuda_immediate *imm,
				   const struct vyre_cuda_layout *lay, uint64_t slab_dev,
				   const struct vyre_mk_unit *units, uint32_t *data);

/*
 * Completion slot @cpl of launch @seq: 0 while any word @imm needs is not yet
 * current; else 1, with every item's output stored into its heap at
 * @item_base[j] and its outcome in @out[j]. The slot's words may arrive in
 * any order; nothing is stored before all of them are current. A module
 * batch (@imm->modules) stores nothing (the device wrote its heaps) and
 * reads no @item_base.
 */
int vyre_cuda_immediate_complete(const struct vyre_cuda_immediate *imm, uint32_t seq,
				 const uint64_t *cpl, uint8_t *const *item_base,
				 struct vyre_exec_result *out);

#endif /* VYRE_GPU_CUDA_IMMEDIATE_H */
