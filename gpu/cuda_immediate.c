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

uint32_t vyre_cuda_module_doorbell(const struct vyre_cuda_immediate *imm,
				   const struct vyre_cuda_layout *lay, uint64_t slab_dev,
				   const struct vyre_mk_unit *units, uint32_t *data)
{
	const uint32_t n = imm->n_items;

	/* the slab stays named, as any launch's, though the device reads nothing there */
	data[0] = (uint32_t)slab_dev;
	data[1] = (uint32_t)(slab_dev >> 32);
	data[2] = (uint32_t)lay->units_off;
	data[3] = n; /* an INLINE launch: its block units, here all of them */
	data[4] = (uint32_t)lay->results_off;
	data[5] = 1; /* n_stages */
	data[6] = 1u | (VYRE_MK_LAUNCH_INLINE | VYRE_MK_LAUNCH_CPL) << 16;
	data[7] = n;
	for (uint32_t j = 0; j < n; j++) {
		struct vyre_mk_unit u = units[j];

		/* the device puts unit j's record at j whatever this says; say the same */
		u.slot = j;
		memcpy(&data[VYRE_MK_HEADER_WORDS + VYRE_MK_UNIT_WORDS * j], &u, sizeof(u));
	}
	return VYRE_MK_HEADER_WORDS + n * VYRE_MK_UNIT_WORDS;
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
		/* a module item's outcome is all there is: its heap bytes are in place */
		if (imm->modules) {
			out[j].result = (uint64_t)w[1] | (uint64_t)w[2] << 32;
			continue;
		}
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
