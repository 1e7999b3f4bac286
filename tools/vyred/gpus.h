/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/gpus.h - the GPUs one vyred drives (docs/design.md 8.8):
 * which they are, which loops serve each, where a new domain goes, device
 * memory per GPU, and what a lost GPU costs.
 *
 * The GPU list is fixed before any loop starts (vyre_gpus_choose); a loop
 * serves one GPU for its life. Placement runs under the shared lock in
 * loop 0 (loops.c); a GPU's loss is published with an atomic flag that
 * every loop looks at between pipeline steps.
 */
#ifndef VYRED_GPUS_H
#define VYRED_GPUS_H

#include <stdint.h>

#include "../../gpu/backend.h"

struct vyre_daemon;
struct vyre_daemon_config;
struct vyre_shared;

#define VYRED_NO_GPU UINT32_MAX

/*
 * The backend to try and its GPUs, from --backend and --gpus: CUDA when
 * the build has it, the flag allows it and the driver lists a usable
 * device, else the CPU backend (or an error for --backend cuda). Fills
 * sh->gpus and sh->n_gpus and logs the choice. Returns 0, or -1 (logged)
 * when vyred cannot start.
 */
int vyre_gpus_choose(struct vyre_shared *sh, const struct vyre_daemon_config *cfg,
		     const struct vyre_backend_ops **ops);

/*
 * Loops per GPU (--loops, or auto for @ops and @n_gpus GPUs), never more
 * than VYRED_MAX_LOOPS in all.
 */
uint32_t vyre_gpus_loops_per_gpu(const struct vyre_daemon_config *cfg,
				 const struct vyre_backend_ops *ops, uint32_t n_gpus);

/* Give loops [0, per_gpu x n_gpus) to the GPUs in turn: sets n_loops and each loop's gpu. */
void vyre_gpus_assign(struct vyre_shared *sh, uint32_t per_gpu);

/* The loops sharing @d's device (its ordinal): its share of the CUDA grid. */
uint32_t vyre_gpus_loops_on_device(const struct vyre_daemon *d);

/* After @d's backend started: its GPU's --device-bytes-max, once per GPU (logged). */
void vyre_gpus_device_limit(struct vyre_daemon *d);

/*
 * Placement, under the shared lock: the GPU for a new domain named @name
 * ("" for a private one): its pin, else the usable GPU of least load.
 * VYRED_NO_GPU when its pin or every GPU is lost.
 */
uint32_t vyre_gpus_place(const struct vyre_daemon *d, const char *name);
/*
 * The loop of @gpu for a new domain whose first client has priority class
 * @cls, under the shared lock (docs/design.md 8.8, 8.9): the fewest clients
 * of other classes, then the fewest clients. Where --priority-max or a
 * --priority rule allows a class above 0 and @gpu has several loops, its
 * last loop is kept for those classes: class 0 never goes there, and a
 * higher class takes it on a tie. Without classes: the fewest clients.
 */
uint32_t vyre_gpus_loop_of(const struct vyre_daemon *d, uint32_t gpu, uint32_t cls);

/*
 * @d's backend can run no more work (@why, for the log): its GPU (and every GPU of the same
 * device) is lost. Logged once; every loop of those GPUs is woken to
 * disconnect its clients; with no usable GPU left every loop stops.
 */
void vyre_gpus_lost(struct vyre_daemon *d, const char *why);
/*
 * Between pipeline steps: when @d's GPU is lost, @d takes no new batch
 * (d->gpu_down); returns 1 once its in-flight batches completed, when the
 * loop disconnects its clients.
 */
int vyre_gpus_check(struct vyre_daemon *d);
/* 1 when no GPU is left to serve (vyred exits 1). */
int vyre_gpus_none_left(const struct vyre_shared *sh);

#endif /* VYRED_GPUS_H */
