/* SPDX-License-Identifier: MIT */
/*
 * Execute: hand the plan to the backend and wait for it. The backend's own
 * watchdog bounds a device; a device error turns every executed item into
 * VYRE_E_DEVICE, which completes normally. A fault the backend cannot
 * recover from in this process (CUDA keeps such errors for the life of the
 * context) stops vyred: it completes what it holds with VYRE_E_DEVICE,
 * disconnects its clients and exits 1 for a supervisor to restart it, rather
 * than fail every later item.
 */
#include "daemon.h"
#include "trace.h"

#define POLL_SLICE_NS 1000000000ll

static void fail_all(struct vyre_batch *b, int status)
{
	for (uint32_t k = 0; k < b->plan.n_order; k++) {
		b->results[b->plan.order[k]].status = status;
		b->results[b->plan.order[k]].result = 0;
	}
}

void vyre_stage_execute(struct vyre_daemon *d, struct vyre_batch *b, uint64_t start)
{
	struct vyre_exec_batch eb = {
	    .items = b->exec,
	    .n_items = b->n_accepted,
	    .plan = b->plan,
	    .results = b->results,
	};

	if (b->plan.n_order == 0)
		return;
	vyre_trace_dispatch_begin(d, b);
	int rc = d->backend_ops->submit(d->backend, &eb);

	if (rc != 0) {
		vyre_log("backend %s: submit failed: %s", d->backend_ops->name, vyre_strerror(rc));
		vyre_trace_error(0, 0, rc);
		fail_all(b, VYRE_E_DEVICE);
	} else {
		vyre_stage_release(d, b);
		while ((rc = d->backend_ops->poll(d->backend, POLL_SLICE_NS)) == 0)
			;
		if (rc < 0) {
			vyre_log("backend %s: device error: %s", d->backend_ops->name,
				 vyre_strerror(rc));
			vyre_trace_error(0, 0, rc);
			fail_all(b, VYRE_E_DEVICE);
		}
	}
	if (rc < 0 && !d->device_lost && d->backend_ops->usable &&
	    !d->backend_ops->usable(d->backend)) {
		vyre_log("backend %s cannot recover from this device fault inside the process: "
			 "stopping (exit status 1) so that vyred can be restarted",
			 d->backend_ops->name);
		d->device_lost = 1;
		d->stopping = 1;
	}
	vyre_trace_dispatch_end(d, b, rc < 0 ? rc : 0, start);
}
