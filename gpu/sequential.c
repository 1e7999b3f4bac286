/* SPDX-License-Identifier: MIT */
/* The sequential oracle over a batch: items in order, one at a time. */
#include "backend.h"

void vyre_exec_sequential(const struct vyre_heap_view *heaps, const struct vyre_exec_item *items,
			  uint32_t n, struct vyre_exec_result *results)
{
	for (uint32_t i = 0; i < n; i++) {
		results[i].reserved = 0;
		if (vyre_exec_canceled(&items[i], results, i))
			results[i] = (struct vyre_exec_result){.status = VYRE_E_CANCELED};
		else
			results[i].status = vyre_exec_one(heaps, &items[i], &results[i].result);
	}
}
