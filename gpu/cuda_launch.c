/* SPDX-License-Identifier: MIT */
/*
 * Launch mode of the CUDA backend: one cuLaunchKernel(vyre_mk_launch) per
 * launch of a batch, on its slot's own stream, then an event that reap asks
 * about with cuEventQuery. Each slot also has its own control page and
 * device state (barrier counters, the abort flag), so batches of different
 * slots run side by side and a watchdog trip fails only its slot.
 *
 * A launch of several blocks waits at device-wide barriers, which is safe
 * only while every block of it is resident. One launch alone always is (the
 * grid is sized from occupancy); two such launches on two streams could
 * each hold part of the GPU and wait for the rest forever. They therefore
 * go through cuLaunchCooperativeKernel, whose blocks the driver makes
 * co-resident.
 */
#include "cuda_launch.h"

/* A control page and device state per slot; a large batch may use the whole grid. */
static int plan(struct vyre_backend *b)
{
	b->n_ctrl = b->n_slots;
	b->split_blocks = b->dv.grid;
	return 0;
}

static int setup(struct vyre_backend *b)
{
	const struct vyre_cuda_driver *d = b->dv.d;
	int coop = 0;
	CUresult r =
	    d->cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, b->dv.dev);

	if (r != CUDA_SUCCESS)
		return vyre_cuda_cu_note(b, "cuDeviceGetAttribute(COOPERATIVE_LAUNCH)", r);
	b->coop = coop != 0;
	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct cuda_slot *s = &b->slots[i];

		r = d->cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING);
		if (r != CUDA_SUCCESS) {
			s->stream = NULL;
			return vyre_cuda_cu_note(b, "cuStreamCreate(slot)", r);
		}
		r = d->cuEventCreate(&s->event, CU_EVENT_DISABLE_TIMING);
		if (r != CUDA_SUCCESS) {
			s->event = NULL;
			return vyre_cuda_cu_note(b, "cuEventCreate(slot)", r);
		}
	}
	return 0;
}

static void teardown(struct vyre_backend *b)
{
	for (uint32_t i = 0; b->slots && i < b->n_slots; i++) {
		struct cuda_slot *s = &b->slots[i];

		if (s->event)
			b->dv.d->cuEventDestroy(s->event);
		if (s->stream)
			b->dv.d->cuStreamDestroy(s->stream);
		s->event = NULL;
		s->stream = NULL;
	}
}

static void drain(struct vyre_backend *b)
{
	for (uint32_t i = 0; i < b->n_slots; i++)
		if (b->slots[i].stream &&
		    vyre_cuda_wait_stream(b, b->slots[i].stream, vyre_cuda_stop_timeout_ns(b)))
			return;
}

static uint32_t place(struct vyre_backend *b, struct cuda_slot *s)
{
	(void)s;
	return b->dv.grid;
}

static int submit(struct vyre_backend *b, struct cuda_slot *s)
{
	const struct vyre_cuda_driver *d = b->dv.d;
	const uint32_t slot = (uint32_t)(s - b->slots);
	CUresult r;

	for (uint32_t i = 0; i < s->lay.n_launches; i++) {
		const struct vyre_cuda_launch *l = &s->launches[i];
		struct vyre_mk_launch_kargs a = {
		    .launch =
			{
			    .units = s->slab.dev + s->lay.units_off +
				     (uint64_t)l->first_unit * sizeof(struct vyre_mk_unit),
			    .stages = s->slab.dev + s->lay.stages_off +
				      (uint64_t)l->first_stage * sizeof(struct vyre_mk_stage),
			    .results = s->slab.dev + s->lay.results_off,
			    .n_stages = l->n_stages,
			    .n_units = l->n_units,
			    .n_blocks = l->n_blocks,
			    .flags = l->flags,
			},
		    .ctrl = vyre_cuda_ctrl_dev(b, slot),
		    .devstate = vyre_cuda_devstate_dev(b, slot),
		    .watchdog_cycles = b->watchdog_cycles,
		};
		void *params[] = {&a};

		if (l->n_blocks > 1 && b->coop)
			r = d->cuLaunchCooperativeKernel(b->dv.launch, l->n_blocks, 1, 1,
							 VYRE_MK_THREADS, 1, 1, b->dv.smem_dynamic,
							 s->stream, params);
		else
			r = d->cuLaunchKernel(b->dv.launch, l->n_blocks, 1, 1, VYRE_MK_THREADS, 1,
					      1, b->dv.smem_dynamic, s->stream, params, NULL);
		if (r != CUDA_SUCCESS) {
			vyre_cuda_cu_note(b, "cuLaunchKernel(vyre_mk_launch)", r);
			return vyre_cuda_device_fault(b);
		}
		b->stats.launches++;
		b->stats.bytes_to_device += sizeof(a);
	}
	b->stats.bytes_to_device += vyre_cuda_desc_bytes(s);
	r = d->cuEventRecord(s->event, s->stream);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_cu_note(b, "cuEventRecord(slot)", r);
		return vyre_cuda_device_fault(b);
	}
	return 0;
}

/* Slot @s's launches are over and its control page says the watchdog stopped them. */
static int watchdog_fault(struct vyre_backend *b, struct cuda_slot *s)
{
	const uint32_t slot = (uint32_t)(s - b->slots);
	struct vyre_mk_ctrl *ctrl = (struct vyre_mk_ctrl *)b->ctrl_mem.host + slot;
	int err;

	b->stats.watchdog_trips++;
	vyre_cuda_note(b,
		       "watchdog: a device-wide barrier saw no progress for %u ms (noticed by "
		       "block %u); the %u item(s) of slot %u complete with VYRE_E_DEVICE",
		       b->watchdog_ms, __atomic_load_n(&ctrl->detail, __ATOMIC_RELAXED),
		       s->batch->plan.n_order, slot);
	vyre_cuda_slot_finish(b, s, VYRE_E_TIMEDOUT);
	__atomic_store_n(&ctrl->state, VYRE_MK_STATE_RUNNING, __ATOMIC_RELAXED);
	/* the abort flag stays up until cleared; the slot's next launches queue behind this */
	err = vyre_cuda_clear_devstate(b, slot, 1, s->stream);
	return err ? vyre_cuda_device_fault(b) : 0;
}

static int poll(struct vyre_backend *b)
{
	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct cuda_slot *s = &b->slots[i];
		const struct vyre_mk_ctrl *ctrl = (const struct vyre_mk_ctrl *)b->ctrl_mem.host + i;
		CUresult r;

		if (s->state != SLOT_BUSY)
			continue;
		r = b->dv.d->cuEventQuery(s->event);
		if (r == CUDA_ERROR_NOT_READY)
			continue;
		if (r != CUDA_SUCCESS) {
			vyre_cuda_cu_note(b, "cuEventQuery(slot)", r);
			return vyre_cuda_device_fault(b);
		}
		if (__atomic_load_n(&ctrl->state, __ATOMIC_ACQUIRE) == VYRE_MK_STATE_WATCHDOG) {
			int err = watchdog_fault(b, s);
			if (err)
				return err;
			continue;
		}
		vyre_cuda_slot_finish(b, s, 0);
	}
	return 0;
}

/* Nothing stays resident: each launch ends by itself. */
static int stop(struct vyre_backend *b)
{
	(void)b;
	return 0;
}

const struct vyre_cuda_mode_ops vyre_cuda_launch_mode = {
    .name = "launch",
    .heartbeat = 0,
    .plan = plan,
    .setup = setup,
    .place = place,
    .submit = submit,
    .poll = poll,
    .stop = stop,
    .drain = drain,
    .teardown = teardown,
};
