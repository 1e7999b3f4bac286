/* SPDX-License-Identifier: MIT */
/*
 * gpu/backend.h - the execution backend interface (DESIGN.md section 8).
 *
 * vyred hands a backend one planned batch at a time: resolved items plus the
 * plan's execution order. Items inside one group are independent (no RAW,
 * WAR or WAW hazard between them) and may run in any order or in parallel;
 * groups run in order. Launches fuse consecutive groups into one device
 * submission (a device-wide barrier separates the groups inside it).
 *
 * Flow: init -> register_heap* -> (submit -> poll until done)* -> shutdown.
 * A backend owns no handles and never sees the rings.
 */
#ifndef VYRE_GPU_BACKEND_H
#define VYRE_GPU_BACKEND_H

#include <stdint.h>

#include "ops.h"

/* Per-item outcome, indexed like the batch's items. */
struct vyre_exec_result {
	int32_t status;
	uint32_t reserved;
	uint64_t result;
};

/*
 * A view of a plan. order[] lists the items to execute (deduplicated items
 * are absent). Group g is order[group_end[g-1] .. group_end[g]) with
 * group_end[-1] = 0; launch l is groups [launch_end[l-1] .. launch_end[l]).
 */
struct vyre_exec_plan {
	const uint32_t *order;
	uint32_t n_order;
	const uint32_t *group_end;
	uint32_t n_groups;
	const uint32_t *launch_end;
	uint32_t n_launches;
};

struct vyre_exec_batch {
	const struct vyre_exec_item *items;
	uint32_t n_items;
	struct vyre_exec_plan plan;
	struct vyre_exec_result *results; /* n_items entries, written by the backend */
};

enum vyre_backend_kind {
	VYRE_BACKEND_CPU = 0,
	VYRE_BACKEND_CUDA = 1,
};

enum vyre_cuda_mode {
	VYRE_CUDA_PERSISTENT = 0,
	VYRE_CUDA_LAUNCH = 1,
};

struct vyre_backend_config {
	uint32_t max_heaps;		 /* highest heap index + 1 */
	uint32_t max_items;		 /* largest batch */
	uint32_t cpu_threads;		 /* cpu: worker threads, 0 = online CPUs */
	uint32_t cpu_parallel_min_bytes; /* cpu: smaller groups run on one thread; 0 = 64 KiB */
	enum vyre_cuda_mode cuda_mode;
	int cuda_device; /* cuda: device ordinal */
};

struct vyre_backend;

struct vyre_backend_ops {
	const char *name;
	/* Allocate everything the backend will need; errors leave nothing allocated. */
	int (*init)(struct vyre_backend **out, const struct vyre_backend_config *cfg, char *why,
		    uint32_t why_len);
	int (*register_heap)(struct vyre_backend *b, uint32_t heap, uint8_t *base, uint64_t bytes);
	int (*unregister_heap)(struct vyre_backend *b, uint32_t heap);
	/* Start executing @batch; it (and its results array) stay valid until poll says done. */
	int (*submit)(struct vyre_backend *b, const struct vyre_exec_batch *batch);
	/*
	 * Returns 1 when the submitted batch is complete (results written), 0 when
	 * still running after waiting up to @timeout_ns, or VYRE_E_DEVICE after a
	 * device fault (every result is then VYRE_E_DEVICE).
	 */
	int (*poll)(struct vyre_backend *b, int64_t timeout_ns);
	/*
	 * 1 while the backend can run work; 0 after a fault it cannot recover
	 * from inside this process (the owner should exit and be restarted).
	 * NULL: always 1.
	 */
	int (*usable)(struct vyre_backend *b);
	void (*shutdown)(struct vyre_backend *b);
};

extern const struct vyre_backend_ops vyre_cpu_backend;
/* NULL when vyred was built without nvcc; vyre_cuda_unavailable says why. */
extern const struct vyre_backend_ops *const vyre_cuda_backend;
extern const char vyre_cuda_unavailable[];

/*
 * The sequential oracle over a whole batch, in plain item order, ignoring any
 * plan: the reference every other executor is compared with.
 */
void vyre_exec_sequential(const struct vyre_heap_view *heaps, const struct vyre_exec_item *items,
			  uint32_t n, struct vyre_exec_result *results);

#endif /* VYRE_GPU_BACKEND_H */
