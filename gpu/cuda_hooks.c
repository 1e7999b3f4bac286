/* SPDX-License-Identifier: MIT */
/*
 * What gpu/cuda_backend.h offers beyond the ops table: counters, the log
 * line, the last-error query, and the test hooks. Apart from the backend
 * proper because none of it is on a batch's path; above it, as it only
 * reads and sets the state of a backend the ops table made.
 */
#include "cuda_backend.h"

#include "cuda_core.h"

int vyre_cuda_get_stats(struct vyre_backend *b, struct vyre_cuda_stats *out)
{
	if (!vyre_cuda_is_mine(b))
		return VYRE_E_INVAL;
	*out = b->stats;
	return 0;
}

const char *vyre_cuda_describe(struct vyre_backend *b)
{
	return vyre_cuda_is_mine(b) ? b->desc : "not a CUDA backend";
}

const char *vyre_cuda_last_error(struct vyre_backend *b)
{
	return vyre_cuda_is_mine(b) ? b->why : "not a CUDA backend";
}

int vyre_cuda_inject(struct vyre_backend *b, uint32_t what)
{
	if (!vyre_cuda_is_mine(b) || (what & ~(VYRE_CUDA_INJECT_FAULT | VYRE_CUDA_INJECT_STALL)))
		return VYRE_E_INVAL;
	b->inject = what;
	return 0;
}

int vyre_cuda_set_immediate(struct vyre_backend *b, int on)
{
	if (!vyre_cuda_is_mine(b))
		return VYRE_E_INVAL;
	b->immediate_off = !on;
	return 0;
}

int vyre_cuda_pause_heartbeat(struct vyre_backend *b, int paused)
{
	if (!vyre_cuda_is_mine(b))
		return VYRE_E_INVAL;
	pthread_mutex_lock(&b->hb_lock);
	b->hb_paused = paused != 0;
	pthread_mutex_unlock(&b->hb_lock);
	return 0;
}
