/* SPDX-License-Identifier: MIT */
/*
 * Execute: hand the plan to the backend and wait for it. The backend's own
 * watchdog bounds a device; a device error turns every executed item into
 * VYRE_E_DEVICE, which completes normally.
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

void vyre_stage_execute(struct vyre_daemon *d, struct vyre_batch *b)
{
	uint64_t t0 = vyre_now_ns();
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
		while ((rc = d->backend_ops->poll(d->backend, POLL_SLICE_NS)) == 0)
			;
		if (rc < 0) {
			vyre_log("backend %s: device error: %s", d->backend_ops->name,
				 vyre_strerror(rc));
			vyre_trace_error(0, 0, rc);
			fail_all(b, VYRE_E_DEVICE);
		}
	}
	b->stats.execute_ns = vyre_now_ns() - t0;
	vyre_trace_dispatch_end(d, b, rc < 0 ? rc : 0);
}
