/* SPDX-License-Identifier: MIT */
/* Transient buffers at resolve time: read only after a write of the same chain (transient.h). */
#include <stdlib.h>
#include <string.h>

#include "../../gpu/ops.h"
#include "transient.h"

int vyre_transients_init(struct vyre_transients *t, uint32_t max_buffers)
{
	t->n_slots = max_buffers > VYRE_HANDLES_MAX ? VYRE_HANDLES_MAX + 1 : max_buffers + 1;
	t->written = calloc(t->n_slots, sizeof(*t->written));
	t->chain = 1;
	return t->written ? 0 : VYRE_E_NOMEM;
}

void vyre_transients_fini(struct vyre_transients *t)
{
	free(t->written);
	t->written = NULL;
	t->n_slots = 0;
}

void vyre_transients_wrap(struct vyre_transients *t)
{
	/* after 2^32 chains the stamps come round again: forget them all */
	memset(t->written, 0, (size_t)t->n_slots * sizeof(*t->written));
	t->chain = 1;
}

static uint32_t *stamp_of(struct vyre_transients *t, uint32_t handle)
{
	uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	return s < t->n_slots ? &t->written[s] : NULL;
}

/* 1 when @handle (resolved in @domain) is a transient buffer. */
static int transient(const struct vyre_handle_table *h, uint32_t domain, uint32_t handle)
{
	struct vyre_buffer_ref ref;

	return vyre_handles_get(h, handle, domain, &ref) == 0 && (ref.flags & VYRE_BUF_TRANSIENT);
}

int vyre_transients_check(struct vyre_transients *t, const struct vyre_handle_table *h,
			  uint32_t domain, const struct vyre_work_item *it, int *out_transient)
{
	const int mask = vyre_op_operands(it->op_handle);
	uint32_t *stamp;

	*out_transient = 0;
	if (mask <= 0)
		return 0;
	if ((mask & VYRE_OPERAND_TABLE) && transient(h, domain, it->param))
		return VYRE_E_INVAL;
	/* a slot past the table cannot be recorded: such a read is refused, never let through */
	if ((mask & VYRE_OPERAND_IN) && transient(h, domain, it->input_handle) &&
	    (!(stamp = stamp_of(t, it->input_handle)) || *stamp != t->chain))
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_OUT) && transient(h, domain, it->output_handle)) {
		*out_transient = 1;
		if ((stamp = stamp_of(t, it->output_handle)))
			*stamp = t->chain;
	}
	return 0;
}
