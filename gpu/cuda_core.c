/* SPDX-License-Identifier: MIT */
/*
 * The services every part of the CUDA backend shares (cuda_core.h): the
 * cause of an error, the clock, the control pages and device state, the
 * end of a slot's batch, a device fault, and stopping what runs. Below the
 * modes, which call these and are reached from here only through
 * b->mode.
 *
 * Faults: a CUDA error while running (an illegal address, a lost context)
 * fails every busy slot with VYRE_E_DEVICE and is logged with its cause.
 * Such errors are sticky: CUDA cannot recover them inside the process (a
 * primary context reset does not clear them), so the backend then stays
 * unusable and says so, every later submit fails at once with
 * VYRE_E_DEVICE, and vyred must exit and be restarted. A watchdog trip (a
 * barrier without progress) fails only the slot whose launch tripped it and
 * is no CUDA error: the backend recovers by itself.
 */
#include "cuda_core.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void vyre_cuda_note(struct vyre_backend *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->why, sizeof(b->why), fmt, ap);
	va_end(ap);
	/* vyred logs to stderr */
	fprintf(stderr, "vyre-cuda: %s\n", b->why);
}

int vyre_cuda_cu_note(struct vyre_backend *b, const char *call, CUresult r)
{
	char msg[256];

	vyre_cuda_error(b->dv.d, msg, sizeof(msg), call, r);
	vyre_cuda_note(b, "%s", msg);
	return vyre_cuda_status(r);
}

int64_t vyre_cuda_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t vyre_cuda_ctrl_dev(const struct vyre_backend *b, uint32_t i)
{
	return b->ctrl_mem.dev + (uint64_t)i * sizeof(struct vyre_mk_ctrl);
}

CUdeviceptr vyre_cuda_devstate_dev(const struct vyre_backend *b, uint32_t i)
{
	return b->devstate + (CUdeviceptr)i * sizeof(struct vyre_mk_devstate);
}

int vyre_cuda_clear_devstate(struct vyre_backend *b, uint32_t i, uint32_t n, CUstream stream)
{
	CUresult r = b->dv.d->cuMemsetD8Async(vyre_cuda_devstate_dev(b, i), 0,
					      (size_t)n * sizeof(struct vyre_mk_devstate), stream);

	if (r != CUDA_SUCCESS)
		return vyre_cuda_cu_note(b, "cuMemsetD8Async(devstate)", r);
	return 0;
}

int vyre_cuda_wait_stream(struct vyre_backend *b, CUstream stream, int64_t timeout_ns)
{
	const int64_t deadline = vyre_cuda_now_ns() + timeout_ns;
	const struct timespec pause = {0, 50000};

	for (;;) {
		CUresult r = b->dv.d->cuStreamQuery(stream);

		if (r == CUDA_SUCCESS)
			return 0;
		if (r != CUDA_ERROR_NOT_READY) {
			vyre_cuda_cu_note(b, "cuStreamQuery", r);
			return VYRE_E_DEVICE;
		}
		if (vyre_cuda_now_ns() > deadline) {
			vyre_cuda_note(b, "the kernel did not finish within %lld ms",
				       (long long)(timeout_ns / 1000000));
			return VYRE_E_TIMEDOUT;
		}
		nanosleep(&pause, NULL);
	}
}

int64_t vyre_cuda_stop_timeout_ns(const struct vyre_backend *b)
{
	/* a launch in flight may run until its watchdog gives up on it */
	return (int64_t)b->watchdog_ms * 1000000 + STOP_EXTRA_NS;
}

void vyre_cuda_slot_finish(struct vyre_backend *b, struct cuda_slot *s, int32_t status)
{
	if (status == 0) {
		vyre_cuda_lower_results(s->batch, s->order_slot, vyre_cuda_slot_records(s));
		b->stats.bytes_from_device +=
		    (uint64_t)s->lay.n_results * sizeof(struct vyre_mk_result);
	} else {
		vyre_cuda_fail_results(s->batch, VYRE_E_DEVICE);
		b->stats.faults++;
	}
	/* launch mode has no lanes */
	if (s->lane < b->n_lanes)
		b->lanes[s->lane].busy--;
	s->lane = NO_SLOT;
	s->state = SLOT_FINISHED;
	s->status = status;
}

int vyre_cuda_device_fault(struct vyre_backend *b)
{
	char cause[sizeof(b->why)];
	uint32_t items = 0, slots = 0;

	memcpy(cause, b->why, sizeof(cause));
	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct cuda_slot *s = &b->slots[i];

		if (s->state != SLOT_BUSY)
			continue;
		items += s->batch->plan.n_order;
		slots++;
		vyre_cuda_slot_finish(b, s, VYRE_E_DEVICE);
	}
	b->dead = 1;
	b->kernel_live = 0;
	vyre_cuda_note(b,
		       "device fault: %.200s; %u in-flight item(s) of %u batch(es) complete with "
		       "VYRE_E_DEVICE; CUDA cannot recover this process, so the backend is "
		       "unusable: restart vyred",
		       cause, items, slots);
	return VYRE_E_DEVICE;
}

int vyre_cuda_quiesce(struct vyre_backend *b)
{
	if (b->mode->stop(b) == 0)
		return 0;
	return b->dead ? VYRE_E_DEVICE : vyre_cuda_device_fault(b);
}
