/* SPDX-License-Identifier: MIT */
/*
 * What gpu/cuda_backend.h offers beyond the ops table: counters, the log
 * line, the usable and last-error queries, and the test hooks. Apart from
 * the backend proper because none of it is on a batch's path.
 */
#include "cuda_backend_internal.h"

static int is_cuda(const struct vyre_backend *b)
{
	return b && b->magic == BACKEND_MAGIC;
}

int vyre_cuda_get_stats(struct vyre_backend *b, struct vyre_cuda_stats *out)
{
	if (!is_cuda(b))
		return VYRE_E_INVAL;
	*out = b->stats;
	return 0;
}

const char *vyre_cuda_describe(struct vyre_backend *b)
{
	return is_cuda(b) ? b->desc : "not a CUDA backend";
}

int vyre_cuda_usable(struct vyre_backend *b)
{
	return is_cuda(b) && !b->dead;
}

const char *vyre_cuda_last_error(struct vyre_backend *b)
{
	return is_cuda(b) ? b->why : "not a CUDA backend";
}

int vyre_cuda_inject(struct vyre_backend *b, uint32_t what)
{
	if (!is_cuda(b) || (what & ~(VYRE_CUDA_INJECT_FAULT | VYRE_CUDA_INJECT_STALL)))
		return VYRE_E_INVAL;
	b->inject = what;
	return 0;
}

int vyre_cuda_set_immediate(struct vyre_backend *b, int on)
{
	if (!is_cuda(b))
		return VYRE_E_INVAL;
	b->immediate_off = !on;
	return 0;
}

int vyre_cuda_pause_heartbeat(struct vyre_backend *b, int paused)
{
	if (!is_cuda(b))
		return VYRE_E_INVAL;
	pthread_mutex_lock(&b->hb_lock);
	b->hb_paused = paused != 0;
	pthread_mutex_unlock(&b->hb_lock);
	return 0;
}
