/* SPDX-License-Identifier: MIT */
/* The GPUs one vyred drives: see gpus.h and docs/design.md 8.8. */
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon.h"
#include "gpus.h"
#include "inbox.h"
#include "log.h"
#include "priority.h"
#include "trace.h"
#include "worker_link.h"

/* --gpus LIST against the usable devices; the CPU backend takes any ordinal as a label. */
static int take_list(struct vyre_shared *sh, const struct vyre_daemon_config *cfg,
		     const struct vyre_device_info *dev, uint32_t n_dev, int cpu)
{
	for (uint32_t g = 0; g < cfg->n_gpus; g++) {
		const struct vyre_device_info *found = NULL;

		for (uint32_t k = 0; k < n_dev && !found; k++)
			if (dev[k].ordinal == cfg->gpus[g])
				found = &dev[k];
		if (!found && !cpu) {
			vyre_log("--gpus: device %u is not a usable CUDA device here (%u usable)",
				 cfg->gpus[g], n_dev);
			return -1;
		}
		sh->gpus[g].ordinal = cfg->gpus[g];
		snprintf(sh->gpus[g].name, sizeof(sh->gpus[g].name), "%s",
			 found ? found->name : "cpu");
	}
	sh->n_gpus = cfg->n_gpus;
	return 0;
}

/* Returns 0, -1 (logged), or VYRE_E_DEVICE with @why when no device can be counted. */
static int take_devices(struct vyre_shared *sh, const struct vyre_daemon_config *cfg,
			const struct vyre_backend_ops *ops, char *why, uint32_t why_len)
{
	struct vyre_device_info dev[VYRED_MAX_GPUS];
	int n = ops->devices(dev, VYRED_MAX_GPUS, why, why_len);

	if (n < 0)
		return VYRE_E_DEVICE;
	if (why[0])
		vyre_log("GPUs: %s", why);
	if (n > (int)VYRED_MAX_GPUS) {
		vyre_log("GPUs: %d usable, the first %u are used", n, VYRED_MAX_GPUS);
		n = (int)VYRED_MAX_GPUS;
	}
	if (cfg->n_gpus)
		return take_list(sh, cfg, dev, (uint32_t)n, ops == &vyre_cpu_backend);
	for (int g = 0; g < n; g++) {
		sh->gpus[g].ordinal = dev[g].ordinal;
		memcpy(sh->gpus[g].name, dev[g].name, sizeof(sh->gpus[g].name));
	}
	sh->n_gpus = (uint32_t)n;
	return 0;
}

static int check_pins(const struct vyre_shared *sh, const struct vyre_daemon_config *cfg)
{
	for (uint32_t p = 0; p < cfg->n_pins; p++) {
		if (cfg->pins[p].gpu >= sh->n_gpus) {
			vyre_log("--domain-gpu %s=%u: there %s %u GPU%s", cfg->pins[p].name,
				 cfg->pins[p].gpu, sh->n_gpus == 1 ? "is" : "are", sh->n_gpus,
				 sh->n_gpus == 1 ? "" : "s");
			return -1;
		}
	}
	return 0;
}

int vyre_gpus_choose(struct vyre_shared *sh, const struct vyre_daemon_config *cfg,
		     const struct vyre_backend_ops **ops)
{
	char why[512];

	*ops = &vyre_cpu_backend;
	why[0] = '\0';
	if (cfg->backend != VYRE_BACKEND_CHOICE_CPU && vyre_cuda_backend) {
		int rc = take_devices(sh, cfg, vyre_cuda_backend, why, sizeof(why));

		if (rc == 0) {
			*ops = vyre_cuda_backend;
			return check_pins(sh, cfg);
		}
		if (rc != VYRE_E_DEVICE)
			return -1;
	} else if (!vyre_cuda_backend) {
		snprintf(why, sizeof(why), "%s", vyre_cuda_unavailable);
	}
	if (cfg->backend == VYRE_BACKEND_CHOICE_CUDA) {
		vyre_log("--backend cuda: %s", why);
		return -1;
	}
	if (cfg->backend == VYRE_BACKEND_CHOICE_AUTO)
		vyre_log("backend auto: cpu, because %s", why);
	if (take_devices(sh, cfg, &vyre_cpu_backend, why, sizeof(why)) != 0)
		return -1;
	return check_pins(sh, cfg);
}

uint32_t vyre_gpus_loops_per_gpu(const struct vyre_daemon_config *cfg,
				 const struct vyre_backend_ops *ops, uint32_t n_gpus)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t per = cfg->loops;

	if (n_gpus == 0)
		return 1;
	/* a GPU worker shares the host's CPUs with the supervisor's other workers */
	const uint32_t sharing = cfg->gpus_total ? cfg->gpus_total : n_gpus;

	if (!per) {
		/*
		 * Measured on a 16-CPU H100 host (bench/RESULTS.md): persistent
		 * mode scales to 4 loops a GPU; launch mode does worse with more
		 * than one.
		 */
		const long cpus_each = online / 4 / (long)sharing;

		per = ops == &vyre_cpu_backend || cfg->mode != VYRE_CUDA_PERSISTENT ? 1
		      : cpus_each >= 4						    ? 4
		      : cpus_each >= 1 ? (uint32_t)cpus_each
				       : 1;
	}
	if (per * n_gpus > VYRED_MAX_LOOPS)
		per = VYRED_MAX_LOOPS / n_gpus;
	return per;
}

void vyre_gpus_assign(struct vyre_shared *sh, uint32_t per_gpu)
{
	sh->loops_per_gpu = per_gpu;
	sh->n_loops = per_gpu * sh->n_gpus;
	for (uint32_t g = 0; g < sh->n_gpus; g++) {
		sh->gpus[g].first_loop = g * per_gpu;
		sh->gpus[g].n_loops = per_gpu;
		for (uint32_t l = 0; l < per_gpu; l++)
			sh->loops[g * per_gpu + l].gpu = g;
	}
}

static uint32_t gpus_on_device(const struct vyre_shared *sh, uint32_t ordinal)
{
	uint32_t n = 0;

	for (uint32_t g = 0; g < sh->n_gpus; g++)
		n += sh->gpus[g].ordinal == ordinal;
	return n;
}

uint32_t vyre_gpus_loops_on_device(const struct vyre_daemon *d)
{
	const struct vyre_shared *sh = d->sh;

	return sh->loops_per_gpu * gpus_on_device(sh, sh->gpus[d->gpu].ordinal);
}

void vyre_gpus_device_limit(struct vyre_daemon *d)
{
	struct vyre_shared *sh = d->sh;
	struct vyre_gpu *gpu = &sh->gpus[d->gpu];
	uint64_t free_bytes = 0;

	if (d->loop_index != gpu->first_loop)
		return;
	for (uint32_t g = 0; g < d->gpu; g++) {
		/* another GPU of the same device measured it before this one took memory */
		if (sh->gpus[g].ordinal == gpu->ordinal && !d->cfg.device_bytes_set) {
			gpu->device_bytes_max = sh->gpus[g].device_bytes_max;
			return;
		}
	}
	/* every GPU naming this ordinal, this one included */
	const uint32_t on_device = gpus_on_device(sh, gpu->ordinal);
	const uint32_t sharing = on_device ? on_device : 1;

	if (d->backend_ops->device_free_bytes)
		free_bytes = d->backend_ops->device_free_bytes(d->backend);
	if (d->cfg.device_bytes_set)
		gpu->device_bytes_max = d->cfg.device_bytes_max;
	else if (free_bytes)
		gpu->device_bytes_max = free_bytes / 4 * 3 / sharing;
	else
		gpu->device_bytes_max = 1ull << 30;
	vyre_log("GPU %u (ordinal %u, %s): loops %u-%u, device buffers up to %llu bytes "
		 "(--device-bytes-max%s), %u per loop (--max-device-buffers)",
		 d->gpu + d->cfg.worker_first, gpu->ordinal, gpu->name, gpu->first_loop,
		 gpu->first_loop + gpu->n_loops - 1, (unsigned long long)gpu->device_bytes_max,
		 d->cfg.device_bytes_set ? ""
		 : free_bytes		 ? ": 3/4 of the free GPU memory"
					 : "",
		 d->cfg.max_device_buffers);
}

static int lost(const struct vyre_gpu *gpu)
{
	return __atomic_load_n(&gpu->lost, __ATOMIC_ACQUIRE);
}

/*
 * Items in flight on the GPU's loops, plus --max-batch for each domain
 * placed there and in proportion to its device buffer bytes.
 */
static double load(const struct vyre_shared *sh, uint32_t g, uint32_t max_batch)
{
	const struct vyre_gpu *gpu = &sh->gpus[g];
	uint64_t inflight = 0;
	const uint64_t used = __atomic_load_n(&gpu->device_bytes_used, __ATOMIC_RELAXED);

	for (uint32_t l = gpu->first_loop; l < gpu->first_loop + gpu->n_loops; l++)
		inflight += __atomic_load_n(&sh->loops[l].inflight_items, __ATOMIC_RELAXED);
	return (double)inflight +
	       (double)max_batch *
		   (gpu->domains +
		    (gpu->device_bytes_max ? (double)used / (double)gpu->device_bytes_max : 0.0));
}

uint32_t vyre_gpus_place(const struct vyre_daemon *d, const char *name)
{
	struct vyre_shared *sh = d->sh;
	uint32_t best = VYRED_NO_GPU;
	double best_load = 0;

	for (uint32_t p = 0; name[0] && p < d->cfg.n_pins; p++)
		if (!strcmp(d->cfg.pins[p].name, name))
			return lost(&sh->gpus[d->cfg.pins[p].gpu]) ? VYRED_NO_GPU
								   : d->cfg.pins[p].gpu;
	/* ties go to the GPU after the last one chosen, so idle GPUs take turns */
	for (uint32_t k = 0; k < sh->n_gpus; k++) {
		const uint32_t g = (sh->place_next + k) % sh->n_gpus;

		if (lost(&sh->gpus[g]))
			continue;
		const double l = load(sh, g, d->cfg.max_batch);

		if (best == VYRED_NO_GPU || l < best_load) {
			best = g;
			best_load = l;
		}
	}
	if (best != VYRED_NO_GPU)
		sh->place_next = (best + 1) % sh->n_gpus;
	return best;
}

/*
 * A higher class beside a flood of a lower one in the same loop waits for
 * the loop's time on the lower batches, which drain cannot preempt
 * (docs/design.md 8.9): classes are kept apart where the loops allow.
 */
uint32_t vyre_gpus_loop_of(const struct vyre_daemon *d, uint32_t gpu, uint32_t cls)
{
	const struct vyre_shared *sh = d->sh;
	const struct vyre_gpu *g = &sh->gpus[gpu];
	const uint32_t last = g->first_loop + g->n_loops - 1;
	/* placement keeps no loop when no class above 0 may connect */
	const int keep = g->n_loops > 1 && vyre_priority_allowed(&d->cfg);
	uint32_t best = VYRED_MAX_LOOPS, best_other = 0;

	for (uint32_t k = 0; k < g->n_loops; k++) {
		/* ties go to the first loop; for a higher class to the last, the one kept */
		const uint32_t l = cls ? last - k : g->first_loop + k;
		const uint32_t other = sh->load[l] - sh->load_class[l][cls];

		if (keep && cls == 0 && l == last)
			continue;
		if (best == VYRED_MAX_LOOPS || other < best_other ||
		    (other == best_other && sh->load[l] < sh->load[best])) {
			best = l;
			best_other = other;
		}
	}
	return best;
}

int vyre_gpus_none_left(const struct vyre_shared *sh)
{
	for (uint32_t g = 0; g < sh->n_gpus; g++)
		if (!lost(&sh->gpus[g]))
			return 0;
	return 1;
}

void vyre_gpus_lost(struct vyre_daemon *d, const char *why)
{
	struct vyre_shared *sh = d->sh;
	const uint32_t ordinal = sh->gpus[d->gpu].ordinal;
	uint32_t newly = 0, left = 0;

	for (uint32_t g = 0; g < sh->n_gpus; g++) {
		struct vyre_gpu *gpu = &sh->gpus[g];

		if (gpu->ordinal != ordinal)
			continue;
		if (!__atomic_exchange_n(&gpu->lost, 1, __ATOMIC_ACQ_REL))
			newly++;
		for (uint32_t l = gpu->first_loop; l < gpu->first_loop + gpu->n_loops; l++)
			if (l != d->loop_index && sh->loops[l].inbox_fd >= 0)
				eventfd_write(sh->loops[l].inbox_fd, 1);
	}
	vyre_trace_gpu_state(d);
	if (!newly)
		return;
	/* the supervisor routes no new client here from now on */
	vyre_link_lost();
	for (uint32_t g = 0; g < sh->n_gpus; g++)
		left += !lost(&sh->gpus[g]);
	vyre_log("GPU %u (ordinal %u, %s): device lost: %s; its in-flight items fail with "
		 "VYRE_E_DEVICE and its clients are disconnected; %u of %u GPUs still serve",
		 d->gpu + d->cfg.worker_first, ordinal, sh->gpus[d->gpu].name, why, left,
		 sh->n_gpus);
	if (left == 0 && vyre_link_active()) {
		vyre_log("this GPU worker stops (exit status 1) once its clients are gone; the "
			 "supervisor starts a new one");
		vyre_loops_stop(d);
	} else if (left == 0) {
		vyre_log("no usable GPU is left: stopping (exit status 1) so that vyred can be "
			 "restarted");
		vyre_loops_stop(d);
	}
}

int vyre_gpus_check(struct vyre_daemon *d)
{
	if (!d->gpu_down) {
		if (!lost(&d->sh->gpus[d->gpu]))
			return 0;
		d->gpu_down = 1;
		vyre_trace_gpu_state(d);
	}
	return !d->n_running;
}
