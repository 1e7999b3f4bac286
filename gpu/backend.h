/* SPDX-License-Identifier: MIT */
/*
 * gpu/backend.h - the execution backend interface (docs/design.md section 8).
 *
 * vyred hands a backend planned batches: resolved items plus the plan's
 * execution order. Items inside one group are independent (no RAW, WAR or
 * WAW hazard between them) and may run in any order or in parallel; groups
 * run in order. Launches fuse consecutive groups into one device submission
 * (a device-wide barrier separates the groups inside it).
 *
 * Up to cfg.max_inflight batches run at once, each in its own slot
 * (0 .. max_inflight - 1). The caller guarantees that batches in different
 * slots have no hazard between them (docs/design.md section 8), so a
 * backend may run them side by side in any order; it never orders one slot
 * after another.
 *
 * Flow: init -> register_heap* / alloc_device* -> (submit(slot) ... reap)*
 * -> shutdown. A heap is unregistered, and a device buffer freed, only while
 * no slot's batch uses it; shutdown frees the device buffers left. A
 * backend owns no handles and never sees the rings.
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

/*
 * The most a config's max_heaps may be: exec items carry 16-bit heap
 * indices (VYRE_EXEC_MAX_HEAPS, gpu/ops.h), and the CPU backend numbers its
 * threads' scratch buffers after max_heaps (gpu/cpu_unit.h).
 */
#define VYRE_BACKEND_MAX_HEAPS (VYRE_EXEC_MAX_HEAPS - 256u)

struct vyre_backend_config {
	uint32_t max_heaps;   /* highest heap index + 1: domain heaps and device buffers */
	uint32_t max_items;   /* largest batch */
	uint32_t cpu_threads; /* cpu: worker threads, 0 = online CPUs */
	uint32_t cpu_parallel_min_bytes; /* cpu: smaller groups run on one thread; 0 = 64 KiB */
	uint32_t cpu_handoff_all;	 /* cpu, for tests: even small batches go to a worker */
	uint32_t max_inflight;		 /* slots: batches running at once; 0 = 1 */
	/* cpu: each of a thread's two on-chip handoff buffers (docs/design.md 7.6); 0 = 1 MiB */
	uint32_t cpu_scratch_bytes;
	enum vyre_cuda_mode cuda_mode;
	/* the device ordinal (devices() lists them); the CPU backend only labels itself with it */
	int device;
	/*
	 * cuda: backends sharing the device (one per vyred event loop); each
	 * takes this fraction of the resident grid. 0 = 1.
	 */
	uint32_t cuda_grid_parts;
};

/* One finished slot, as reap reports it. */
struct vyre_slot_done {
	uint32_t slot;
	/*
	 * 0: every result of the batch is written. Negative (VYRE_E_DEVICE after
	 * a device fault, VYRE_E_TIMEDOUT after the watchdog stopped the batch):
	 * the batch failed as a whole and its results are undefined; the caller
	 * completes every executed item with VYRE_E_DEVICE.
	 */
	int32_t status;
};

struct vyre_backend;

/* A usable device, as devices() lists it. */
#define VYRE_DEVICE_NAME_MAX 48u
struct vyre_device_info {
	uint32_t ordinal;
	char name[VYRE_DEVICE_NAME_MAX];
};

struct vyre_backend_ops {
	const char *name;
	/*
	 * Needs no instance: the usable devices (docs/design.md 8.8), at most
	 * @max of them written to @out, in ordinal order. Returns how many are
	 * usable (may exceed @max), or VYRE_E_DEVICE with @why when none can be
	 * counted. @why also names devices left out as unusable ("" if none).
	 */
	int (*devices)(struct vyre_device_info *out, uint32_t max, char *why, uint32_t why_len);
	/* Allocate everything the backend will need; errors leave nothing allocated. */
	int (*init)(struct vyre_backend **out, const struct vyre_backend_config *cfg, char *why,
		    uint32_t why_len);
	int (*register_heap)(struct vyre_backend *b, uint32_t heap, uint8_t *base, uint64_t bytes);
	int (*unregister_heap)(struct vyre_backend *b, uint32_t heap);
	/*
	 * Make heap index @heap (unused) a device buffer of @bytes zero bytes
	 * (docs/design.md section 6.2): GPU memory on CUDA, private host memory
	 * on the CPU backend; items then name it like any heap. Returns 0,
	 * VYRE_E_NOMEM with @why when the device has no room, VYRE_E_INVAL for an
	 * index out of range or in use, VYRE_E_DEVICE when the device cannot
	 * take work. free_device releases it; only while no slot's batch uses it.
	 */
	int (*alloc_device)(struct vyre_backend *b, uint32_t heap, uint64_t bytes, char *why,
			    uint32_t why_len);
	int (*free_device)(struct vyre_backend *b, uint32_t heap);
	/*
	 * Bytes of device memory free now (CUDA: cuMemGetInfo), for vyred's
	 * --device-bytes-max default; 0 or a NULL entry: the backend's device
	 * memory is host memory.
	 */
	uint64_t (*device_free_bytes)(struct vyre_backend *b);
	/*
	 * Start executing @batch in @slot, which must be idle (never submitted, or
	 * reported by reap since). The batch, its arrays and its results stay
	 * valid until reap reports the slot. Returns 0, VYRE_E_INVAL for a bad
	 * slot, a busy slot or a malformed plan (nothing started, the slot stays
	 * idle), or VYRE_E_DEVICE when the device cannot take work.
	 */
	int (*submit)(struct vyre_backend *b, uint32_t slot, const struct vyre_exec_batch *batch);
	/*
	 * Writes up to @max finished slots to @done, each slot once per submit,
	 * and returns how many. When none has finished it waits up to
	 * @timeout_ns for one (0: only looks; negative: no limit). Never blocks
	 * longer than that, whatever the device does. After a device fault every
	 * busy slot is reported with VYRE_E_DEVICE.
	 */
	int (*reap)(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max,
		    int64_t timeout_ns);
	/*
	 * A descriptor that becomes readable when reap may find a finished slot
	 * (an eventfd: the owner reads it, then reaps with timeout 0), so an
	 * event loop can sleep on it. A batch may also finish inside submit;
	 * that one is not signalled here, so the owner reaps once after its
	 * submits before it sleeps. -1 (or NULL): none; the owner calls reap
	 * while slots are busy.
	 */
	int (*completion_fd)(struct vyre_backend *b);
	/*
	 * 1 while the backend can run work; 0 after a fault it cannot recover
	 * from inside this process (the owner should exit and be restarted).
	 * NULL: always 1.
	 */
	int (*usable)(struct vyre_backend *b);
	void (*shutdown)(struct vyre_backend *b);
	/*
	 * Whether the device code of module ops @e (docs/design.md 6.7) links on
	 * device @device, tried before any backend opens so that vyred can leave
	 * an optional module out: 0, or a negative VYRE_E_* with the module, the
	 * op and the linker's log in @why. NULL: every module runs (host code).
	 */
	int (*link_modules)(int device, const struct vyre_op_module_entry *e, uint32_t n, char *why,
			    uint32_t why_len);
};

extern const struct vyre_backend_ops vyre_cpu_backend;
/* NULL when vyred was built without nvcc; vyre_cuda_unavailable says why. */
extern const struct vyre_backend_ops *const vyre_cuda_backend;
extern const char vyre_cuda_unavailable[];

/*
 * The fault test hooks of docs/design.md 8.8. inject_here: 1 when
 * VYRE_INJECT_DEVICE is unset or names @device. inject_fault: 1 when also
 * environment variable @var is "fault".
 */
int vyre_backend_inject_here(int device);
int vyre_backend_inject_fault(const char *var, int device);
/*
 * VYRE_INJECT_AFTER=N: the hooked fault comes in the backend's batch N + 1,
 * so that a test can fault a GPU while its batches run (default 0: the
 * first).
 */
uint32_t vyre_backend_inject_after(void);

/*
 * The on-chip handoffs (docs/design.md 7.6) the CUDA backend keeps, for the
 * planner (gpu/cuda_lower_chain.c, gpu/mk_fuse.cuh): links from a decoder or
 * BYTEMAP (bit op of WRITERS) to a BYTEMAP, DFA_SCAN_COUNTED or
 * DFA_REPORT_COUNTED (READERS).
 * Tiles stream through shared memory, so a transient of any size would do;
 * the budget stops at what one block scans unsplit anyway (cuda_abi.h,
 * VYRE_MK_DFA_BLOCK_BYTES): a larger scan runs faster split over the grid.
 */
#define VYRE_CUDA_HANDOFF_BYTES ((512u << 10) + 4u)
#define VYRE_CUDA_HANDOFF_WRITERS                                                                  \
	((1u << VYRE_OP_BASE64_DECODE) | (1u << VYRE_OP_HEX_DECODE) | (1u << VYRE_OP_BYTEMAP))
#define VYRE_CUDA_HANDOFF_READERS                                                                  \
	((1u << VYRE_OP_BYTEMAP) | (1u << VYRE_OP_DFA_SCAN_COUNTED) |                              \
	 (1u << VYRE_OP_DFA_REPORT_COUNTED))

/*
 * Whether @op is one of the handoff ops of @mask (bit op; 0: every op). A
 * module op whose manifest says `stream yes` and `in counted` reads its
 * input as DFA_SCAN_COUNTED does (design.md 6.7), so a mask that keeps
 * DFA_SCAN_COUNTED readers keeps it as a run's last member.
 */
static inline int vyre_handoff_kept(uint32_t mask, uint32_t op)
{
	const struct vyre_op_module_entry *m;

	if (mask == 0)
		return 1;
	if (op < 32)
		return (mask >> op & 1u) != 0;
	m = (op & VYRE_OP_MODULE_BIT) ? vyre_op_module(op) : NULL;
	return m && m->stream && (m->mask & VYRE_OPERAND_COUNTED) &&
	       (mask >> VYRE_OP_DFA_SCAN_COUNTED & 1u);
}

/*
 * VYRE_EXEC_AFTER_PREV: 1 when item @it must not run because the item it
 * follows failed (or names no item of the @n_items that ran before it).
 */
static inline int vyre_exec_canceled(const struct vyre_exec_item *it,
				     const struct vyre_exec_result *results, uint32_t n_items)
{
	return (it->flags & VYRE_EXEC_AFTER_PREV) &&
	       (it->prev >= n_items || results[it->prev].status != 0);
}

/*
 * The sequential oracle over a whole batch, in plain item order, ignoring any
 * plan: the reference every other executor is compared with. It honours
 * VYRE_EXEC_AFTER_PREV (the chain rules of docs/design.md section 6.3) and
 * runs every other item through the heaps, whatever its marks.
 */
void vyre_exec_sequential(const struct vyre_heap_view *heaps, const struct vyre_exec_item *items,
			  uint32_t n, struct vyre_exec_result *results);

#endif /* VYRE_GPU_BACKEND_H */
