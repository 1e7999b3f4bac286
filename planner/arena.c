/* SPDX-License-Identifier: MIT */
/*
 * The planner's bump arena. Reservations are 64-byte aligned and rounded,
 * so the bytes a plan needs follow from its reservation sizes alone and
 * planner structures never share a cache line.
 */
#include <stdlib.h>

#include "planner.h"

size_t vyre_arena_round(size_t count, size_t size)
{
	if (size != 0 && count > SIZE_MAX / size)
		return SIZE_MAX;
	size_t bytes = count * size;

	if (bytes > SIZE_MAX - (VYRE_ARENA_ALIGN - 1))
		return SIZE_MAX;
	return (bytes + VYRE_ARENA_ALIGN - 1) & ~(size_t)(VYRE_ARENA_ALIGN - 1);
}

int vyre_arena_init(struct vyre_arena *a, size_t bytes)
{
	*a = (struct vyre_arena){0};
	bytes = vyre_arena_round(bytes, 1);
	if (bytes == SIZE_MAX)
		return VYRE_E_NOMEM;
	if (bytes) {
		a->base = aligned_alloc(VYRE_ARENA_ALIGN, bytes);
		if (!a->base)
			return VYRE_E_NOMEM;
	}
	a->bytes = bytes;
	return 0;
}

void vyre_arena_init_measure(struct vyre_arena *a)
{
	*a = (struct vyre_arena){0};
	a->bytes = SIZE_MAX;
	a->measuring = 1;
}

void vyre_arena_fini(struct vyre_arena *a)
{
	if (!a->measuring)
		free(a->base);
	*a = (struct vyre_arena){0};
}

void vyre_arena_reset(struct vyre_arena *a)
{
	a->used = a->floor;
}

void vyre_arena_keep(struct vyre_arena *a)
{
	a->floor = a->used;
}

void vyre_arena_fail_nth(struct vyre_arena *a, uint64_t nth, int sticky)
{
	a->fail_at = nth ? a->reservations + nth : 0;
	a->fail_sticky = nth ? sticky : 0;
}

static int injected_failure(struct vyre_arena *a)
{
	if (a->fail_at == 0 || a->reservations < a->fail_at)
		return 0;
	if (!a->fail_sticky)
		a->fail_at = 0;
	return 1;
}

int vyre_arena_reserve(struct vyre_arena *a, size_t count, size_t size, void **out)
{
	size_t bytes = vyre_arena_round(count, size);

	*out = NULL;
	a->reservations++;
	if (injected_failure(a))
		return VYRE_E_NOMEM;
	if (bytes == SIZE_MAX || bytes > a->bytes - a->used) {
		if (a->measuring)
			a->used = SIZE_MAX;
		return VYRE_E_NOMEM;
	}
	if (!a->measuring && a->base)
		*out = a->base + a->used;
	a->used += bytes;
	if (a->used > a->high_water)
		a->high_water = a->used;
	return 0;
}
