/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cuda_dfa_model.h - a host model of the DFA units of
 * gpu/mk_dfa.cuh, step for step: chunks cut the same way, guesses from the
 * same warm-up bytes, the same rounds of checks and walks again, part
 * records and the join. test_cuda_lower runs lowered batches through it, so
 * the algorithm and the lowering are checked against the sequential oracle
 * without a GPU.
 */
#ifndef VYRE_TEST_CUDA_DFA_MODEL_H
#define VYRE_TEST_CUDA_DFA_MODEL_H

#include <stdint.h>

#include "cuda_abi.h"

/* How many rounds of checks the model's walks took, over every call (for tests that want some). */
extern uint64_t model_dfa_rounds;

/*
 * Run DFA unit @u (DFA_SCAN or DFA_SCAN_COUNTED: an item, a part or a join)
 * as the kernel does, on a block of VYRE_MK_THREADS threads when @block
 * (else one warp), against the host addresses in @u; results[] is the
 * batch's result records.
 */
void model_dfa_unit(const struct vyre_mk_unit *u, struct vyre_mk_result *results, int block);

#endif /* VYRE_TEST_CUDA_DFA_MODEL_H */
