/* SPDX-License-Identifier: MIT */
/* The host half of IMMEDIATE launches (see cuda_immediate.h). */
#include "cuda_immediate.h"

#include <string.h>

static int is_reduction(uint32_t op)
{
	return op == VYRE_OP_SUM || op == VYRE_OP_MAX;
}

uint32_t vyre_cuda_immediate_doorbell(const struct vyre_cuda_immediate *imm,
				      const uint8_t *heap_base, uint32_t *data)
{
	const uint32_t desc = VYRE_MK_HEADER_WORDS;
	const uint32_t in0 = desc + VYRE_MK_IMM_DESC_WORDS;

	memset(data, 0, (size_t)in0 * sizeof(uint32_t));
	data[4] = imm->in_words;
	data[5] = 1; /* n_stages */
	data[6] = 1u | VYRE_MK_LAUNCH_IMMEDIATE << 16;
	data[7] = 1; /* n_units */
	data[desc] = imm->op;
	data[desc + 1] = imm->param;
	data[desc + 2] = imm->count;
	/* heap words may be unaligned to nothing but 4 bytes: memcpy, never a cast */
	memcpy(&data[in0], heap_base + imm->in_off, (size_t)imm->in_words * 4);
	return in0 + imm->in_words;
}

/* The data of word @w of @cpl when it belongs to launch @seq. */
static int current(const uint64_t *cpl, uint32_t w, uint32_t seq, uint32_t *data)
{
	const uint64_t v = __atomic_load_n(&cpl[w], __ATOMIC_ACQUIRE);

	*data = (uint32_t)v;
	return (uint32_t)(v >> 32) == seq;
}

int vyre_cuda_immediate_complete(const struct vyre_cuda_immediate *imm, uint32_t seq,
				 const uint64_t *cpl, uint8_t *heap_base,
				 struct vyre_exec_result *out)
{
	uint32_t status, result, words[VYRE_MK_IMM_OUT_WORDS];
	const uint32_t n = is_reduction(imm->op) ? 0 : imm->count;

	if (!current(cpl, 0, seq, &status) || !current(cpl, 1, seq, &result))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (!current(cpl, VYRE_MK_CPL_HEADER_WORDS + i, seq, &words[i]))
			return 0;
	out->status = (int32_t)status;
	out->reserved = 0;
	out->result = 0;
	if (status != 0)
		return 1;
	if (is_reduction(imm->op)) {
		/* SUM and MAX store their value in the output's first word too */
		memcpy(heap_base + imm->out_off, &result, 4);
		out->result = result;
	} else {
		memcpy(heap_base + imm->out_off, words, (size_t)n * 4);
	}
	return 1;
}
