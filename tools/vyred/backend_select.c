/* SPDX-License-Identifier: MIT */
/*
 * --backend auto|cpu|cuda. auto takes CUDA when this build has it and it
 * initializes (a usable GPU, the embedded megakernel loads), else the CPU
 * backend, and logs which and why. Each event loop has an instance of its
 * own.
 */
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* The CPU backend's workers of one loop: --cpu-threads, or the online CPUs shared out. */
static uint32_t cpu_threads(const struct vyre_daemon *d)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = d->sh->n_loops;

	if (d->cfg.cpu_threads || n == 1)
		return d->cfg.cpu_threads;
	return online > (long)n ? (uint32_t)(online / (long)n) : 1;
}

static int init(struct vyre_daemon *d, const struct vyre_backend_ops *ops, char *why,
		uint32_t why_len)
{
	struct vyre_backend_config bc = {
	    .max_heaps = d->cfg.max_domains + d->cfg.max_device_buffers, /* devbufs.h */
	    .max_items = d->cfg.max_batch,
	    .cpu_threads = cpu_threads(d),
	    .max_inflight = d->n_slots,
	    .cuda_mode = d->cfg.mode,
	    .cuda_device = 0,
	    .cuda_grid_parts = d->sh->n_loops,
	    .cpu_scratch_bytes = VYRED_HANDOFF_BYTES,
	};

	why[0] = '\0';
	int rc = ops->init(&d->backend, &bc, why, why_len);

	if (rc == 0) {
		d->backend_ops = ops;
		/* the CPU backend keeps any link in its scratch, CUDA some in shared memory */
		const int cpu = ops == &vyre_cpu_backend;

		d->handoff_bytes = cpu ? VYRED_HANDOFF_BYTES : VYRE_CUDA_HANDOFF_BYTES;
		d->handoff_writers = cpu ? 0 : VYRE_CUDA_HANDOFF_WRITERS;
		d->handoff_readers = cpu ? 0 : VYRE_CUDA_HANDOFF_READERS;
		d->spread = ops != vyre_cuda_backend || d->cfg.mode != VYRE_CUDA_LAUNCH;
	} else if (!why[0])
		strncpy(why, vyre_strerror(rc), why_len - 1);
	return rc;
}

static int select_backend(struct vyre_daemon *d)
{
	char why[256];
	const char *mode = d->cfg.mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";

	memset(why, 0, sizeof(why));
	if (d->cfg.backend == VYRE_BACKEND_CHOICE_CUDA) {
		if (!vyre_cuda_backend) {
			vyre_log("--backend cuda: %s", vyre_cuda_unavailable);
			return -1;
		}
		if (init(d, vyre_cuda_backend, why, sizeof(why)) != 0) {
			vyre_log("--backend cuda: cannot initialize: %s", why);
			return -1;
		}
		vyre_log("backend: cuda (%s mode)%s%s", mode, why[0] ? ": " : "", why);
		return 0;
	}
	if (d->cfg.backend == VYRE_BACKEND_CHOICE_AUTO) {
		if (!vyre_cuda_backend) {
			vyre_log("backend auto: cpu, because %s", vyre_cuda_unavailable);
		} else if (init(d, vyre_cuda_backend, why, sizeof(why)) == 0) {
			vyre_log("backend auto: cuda (%s mode), a usable GPU was found%s%s", mode,
				 why[0] ? ": " : "", why);
			return 0;
		} else {
			vyre_log("backend auto: cpu, because cuda is unusable: %s", why);
		}
	}
	/* --loops auto: more loops were meant for a GPU, not for the CPU backend */
	if (!d->cfg.loops)
		d->sh->n_loops = 1;
	if (init(d, &vyre_cpu_backend, why, sizeof(why)) != 0) {
		vyre_log("cpu backend: cannot initialize: %s", why);
		return -1;
	}
	if (d->cfg.backend == VYRE_BACKEND_CHOICE_CPU)
		vyre_log("backend: cpu (--backend cpu)");
	return 0;
}

/*
 * Loop 0 chooses and says why; every other loop gets a backend of the same
 * kind (its own instance: its own slots, and on CUDA its share of the grid).
 */
/*
 * --device-bytes-max, for every loop together: the flag, else 3/4 of the
 * device memory free now, else (the CPU backend's device is host memory)
 * 1 GiB.
 */
static void device_limit(struct vyre_daemon *d)
{
	const uint64_t free_bytes =
	    d->backend_ops->device_free_bytes ? d->backend_ops->device_free_bytes(d->backend) : 0;

	if (d->cfg.device_bytes_set)
		d->sh->device_bytes_max = d->cfg.device_bytes_max;
	else
		d->sh->device_bytes_max = free_bytes ? free_bytes / 4 * 3 : 1ull << 30;
	vyre_log("device buffers: up to %llu bytes over all loops (--device-bytes-max%s), %u per "
		 "loop (--max-device-buffers)",
		 (unsigned long long)d->sh->device_bytes_max,
		 d->cfg.device_bytes_set ? ""
		 : free_bytes		 ? ": 3/4 of the free GPU memory"
					 : "",
		 d->cfg.max_device_buffers);
}

int vyre_backend_select(struct vyre_daemon *d)
{
	char why[256];

	if (d->loop_index == 0) {
		int rc = select_backend(d);

		if (rc == 0)
			device_limit(d);
		return rc;
	}
	why[0] = '\0';
	if (init(d, d->sh->loops[0].backend_ops, why, sizeof(why)) == 0)
		return 0;
	vyre_log("loop %u: backend %s: cannot initialize: %s", d->loop_index,
		 d->sh->loops[0].backend_ops->name, why);
	return -1;
}
