/* SPDX-License-Identifier: MIT */
/*
 * Dispatch: hand the plan to the backend in the batch's slot and count its
 * items' buffers as in flight; finish: release them when the backend
 * reports the slot. The backend's own watchdog bounds a device; a failed
 * batch turns every executed item into VYRE_E_DEVICE, which completes
 * normally. A fault the backend cannot recover from in this process (CUDA
 * keeps such errors for the life of the context) loses the loop's GPU
 * (gpus.h): its loops complete what they hold and disconnect their clients,
 * rather than fail every later item, and the other GPUs serve on.
 */
#include "complete.h"
#include "daemon.h"
#include "devbufs.h"
#include "dispatch.h"
#include "gpus.h"
#include "hazards.h"
#include "log.h"
#include "trace.h"

static void fail_all(struct vyre_batch *b, int status)
{
	for (uint32_t k = 0; k < b->plan.n_order; k++) {
		b->results[b->plan.order[k]].status = status;
		b->results[b->plan.order[k]].result = 0;
	}
}

/*
 * Accepted items that run (deduplicated ones too: their source runs) hold
 * their buffers' counts until the batch finishes; the batch keeps what it
 * took, and gives back exactly that.
 */
static void take_counts(struct vyre_daemon *d, struct vyre_batch *b)
{
	b->n_hz_taken = vyre_hazards_take_batch(&d->hazards, b->items, b->flags, b->sqes, b->status,
						b->n_accepted, b->hz_taken);
}

static void give_counts(struct vyre_daemon *d, struct vyre_batch *b)
{
	vyre_hazards_give_back(&d->hazards, b->hz_taken, b->n_hz_taken);
	b->n_hz_taken = 0;
}

static void check_usable(struct vyre_daemon *d)
{
	if (d->gpu_down || !d->backend_ops->usable || d->backend_ops->usable(d->backend))
		return;
	d->gpu_down = 1;
	vyre_gpus_lost(d, "the backend cannot recover from its device fault inside the process");
}

int vyre_stage_dispatch(struct vyre_daemon *d, struct vyre_batch *b)
{
	b->exec_batch = (struct vyre_exec_batch){
	    .items = b->exec,
	    .n_items = b->n_accepted,
	    .plan = b->plan,
	    .results = b->results,
	};
	/*
	 * Before anything runs, and also when nothing does: a batch of failed
	 * items completes at once, and its CQEs must not pass sq_accepted.
	 */
	vyre_stage_accept(d, b);
	if (b->plan.n_order == 0) {
		vyre_stage_release(d, b);
		return 0;
	}
	vyre_trace_dispatch_begin(d, b);
	int rc = d->backend_ops->submit(d->backend, b->slot, &b->exec_batch);

	if (rc != 0) {
		vyre_log("backend %s: submit failed: %s", d->backend_ops->name, vyre_strerror(rc));
		vyre_trace_error(0, 0, rc);
		fail_all(b, VYRE_E_DEVICE);
		vyre_stage_release(d, b);
		check_usable(d);
		vyre_trace_dispatch_end(d, b, rc, b->dispatch_ns);
		return 0;
	}
	take_counts(d, b);
	vyre_stage_release(d, b);
	return 1;
}

void vyre_stage_finish(struct vyre_daemon *d, struct vyre_batch *b, int status)
{
	if (status < 0) {
		vyre_log("backend %s: batch %llu failed: %s", d->backend_ops->name,
			 (unsigned long long)b->stats.seq, vyre_strerror(status));
		vyre_trace_error(0, 0, status);
		fail_all(b, VYRE_E_DEVICE);
		check_usable(d);
	}
	vyre_devbufs_finish(d, b, status);
	give_counts(d, b);
	vyre_trace_dispatch_end(d, b, status < 0 ? status : 0, b->dispatch_ns);
}
