/* SPDX-License-Identifier: MIT */
/*
 * --backend auto|cpu|cuda. gpus.c chose the backend to try and its GPUs;
 * here each loop gets an instance of its own for its GPU (its own slots,
 * and on CUDA its share of its GPU's grid). Loop 0 starts first: under
 * auto, a CUDA backend that does not initialize (the embedded megakernel
 * does not load, say) falls back to the CPU backend, logged with why.
 */
#include <string.h>
#include <unistd.h>

#include "backend_select.h"
#include "daemon.h"
#include "gpus.h"
#include "log.h"

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
	    .device = (int)d->sh->gpus[d->gpu].ordinal,
	    .cuda_grid_parts = vyre_gpus_loops_on_device(d),
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

/*
 * Auto, and CUDA would not start: the CPU backend, on the --gpus given
 * (as labels) or one, with one loop each unless --loops says otherwise.
 */
static void fall_back_to_cpu(struct vyre_daemon *d)
{
	struct vyre_shared *sh = d->sh;

	sh->backend_ops = &vyre_cpu_backend;
	if (!d->cfg.n_gpus) {
		sh->n_gpus = 1;
		sh->gpus[0].ordinal = 0;
	}
	for (uint32_t g = 0; g < sh->n_gpus; g++)
		strcpy(sh->gpus[g].name, "cpu");
	vyre_gpus_assign(sh, vyre_gpus_loops_per_gpu(&d->cfg, sh->backend_ops, sh->n_gpus));
}

static int select_first(struct vyre_daemon *d)
{
	const struct vyre_backend_ops *ops = d->sh->backend_ops;
	const char *mode = d->cfg.mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	char why[256];

	if (ops == vyre_cuda_backend) {
		if (init(d, ops, why, sizeof(why)) == 0) {
			vyre_log("backend%s: cuda (%s mode) on %u GPU%s%s%s",
				 d->cfg.backend == VYRE_BACKEND_CHOICE_AUTO ? " auto" : "", mode,
				 d->sh->n_gpus, d->sh->n_gpus > 1 ? "s" : "", why[0] ? ": " : "",
				 why);
			return 0;
		}
		if (d->cfg.backend == VYRE_BACKEND_CHOICE_CUDA) {
			vyre_log("--backend cuda: cannot initialize: %s", why);
			return -1;
		}
		vyre_log("backend auto: cpu, because cuda is unusable: %s", why);
		fall_back_to_cpu(d);
	}
	if (init(d, &vyre_cpu_backend, why, sizeof(why)) != 0) {
		vyre_log("cpu backend: cannot initialize: %s", why);
		return -1;
	}
	if (d->cfg.backend == VYRE_BACKEND_CHOICE_CPU)
		vyre_log("backend: cpu (--backend cpu)%s",
			 d->sh->n_gpus > 1 ? ", one per --gpus" : "");
	return 0;
}

int vyre_backend_select(struct vyre_daemon *d)
{
	char why[256];
	int rc = 0;

	if (d->loop_index == 0) {
		rc = select_first(d);
	} else if (init(d, d->sh->backend_ops, why, sizeof(why)) != 0) {
		vyre_log("loop %u (GPU %u): backend %s: cannot initialize: %s", d->loop_index,
			 d->gpu, d->sh->backend_ops->name, why);
		rc = -1;
	}
	if (rc == 0)
		vyre_gpus_device_limit(d);
	return rc;
}
