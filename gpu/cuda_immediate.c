/* SPDX-License-Identifier: MIT */
/* The host half of IMMEDIATE launches (see cuda_immediate.h). */
#include "cuda_immediate.h"

#include <string.h>

static int is_reduction(uint32_t op)
{
	return op == VYRE_OP_SUM || op == VYRE_OP_MAX;
}

uint32_t vyre_cuda_immediate_doorbell(const struct vyre_cuda_immediate *imm,
				      const uint8_t *const *item_base, uint32_t *data)
{
	memset(data, 0, VYRE_MK_HEADER_WORDS * sizeof(uint32_t));
	data[4] = imm->data_words;
	data[5] = 1; /* n_stages */
	data[6] = 1u | VYRE_MK_LAUNCH_IMMEDIATE << 16;
	data[7] = imm->n_items;
	for (uint32_t j = 0; j < imm->n_items; j++) {
		const struct vyre_cuda_imm_item *it = &imm->item[j];
		uint32_t *desc = &data[VYRE_MK_HEADER_WORDS + VYRE_MK_IMM_DESC_WORDS * j];

		desc[0] = VYRE_MK_IMM_DESC(it->op, it->count, it->in_at, it->cpl_at);
		desc[1] = it->param;
		/* heap words may be unaligned to nothing but 4 bytes: memcpy, never a cast */
		memcpy(&data[it->in_at], item_base[j] + it->in_off, (size_t)it->in_words * 4);
	}
	return VYRE_MK_HEADER_WORDS + imm->data_words;
}

int vyre_cuda_immediate_complete(const struct vyre_cuda_immediate *imm, uint32_t seq,
				 const uint64_t *cpl, uint8_t *const *item_base,
				 struct vyre_exec_result *out)
{
	uint32_t words[VYRE_MK_SLOT_WORDS];

	for (uint32_t w = 0; w < imm->cpl_words; w++) {
		const uint64_t v = __atomic_load_n(&cpl[w], __ATOMIC_ACQUIRE);

		if ((uint32_t)(v >> 32) != seq)
			return 0;
		words[w] = (uint32_t)v;
	}
	for (uint32_t j = 0; j < imm->n_items; j++) {
		const struct vyre_cuda_imm_item *it = &imm->item[j];
		const uint32_t *w = &words[it->cpl_at];

		out[j] = (struct vyre_exec_result){.status = (int32_t)w[0]};
		if (w[0] != 0)
			continue;
		if (is_reduction(it->op)) {
			/* SUM and MAX store their value in the output's first word too */
			memcpy(item_base[j] + it->out_off, &w[1], 4);
			out[j].result = w[1];
		} else {
			memcpy(item_base[j] + it->out_off, &w[VYRE_MK_CPL_HEADER_WORDS],
			       (size_t)it->count * 4);
		}
	}
	return 1;
}
