/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_core.h - the state of a CUDA backend and the services every part
 * of it shares (cuda_core.c): logging a cause, finishing a slot, failing
 * the device, stopping what runs. The parts, bottom to top: this core; the
 * two modes (cuda_persistent.c, cuda_launch.c), each a table of
 * struct vyre_cuda_mode_ops that init picks once; the batch path
 * (cuda_slots.c); backends sharing a device (cuda_group.c); device buffers
 * (cuda_devmem.c); the ops table, init and heartbeat (cuda_backend.c); and
 * counters and test hooks (cuda_hooks.c). A part calls only the parts
 * below it; the core reaches the mode through the table.
 * Nothing outside gpu/cuda_*.c includes this.
 *
 * Slots and lanes: vyred runs up to cfg.max_inflight batches at once, each
 * in a slot with its own lowering arrays and slab, so a slot's descriptors
 * never move while another slot is lowered. Launch mode gives each slot a
 * stream, an event, a control page and device state. Persistent mode splits
 * the resident grid into lanes (a run of blocks with its own doorbell ring,
 * completion ring, control page and barrier state); a busy slot posts its
 * launches to one lane, and a lane may hold several slots' doorbells, which
 * it runs in ring order.
 */
#ifndef VYRE_GPU_CUDA_CORE_H
#define VYRE_GPU_CUDA_CORE_H

#include <pthread.h>
#include <stdint.h>

#include "cuda_abi.h"
#include "cuda_device.h"
#include "cuda_lower.h"
#include "cuda_types.h"

#define CLOCK_EVERY    32u	    /* polls between clock reads */
#define CHECK_EVERY_NS 50000	    /* between kernel health checks while polling */
#define STOP_EXTRA_NS  2000000000ll /* a stop waits this long beyond the watchdog */
#define NO_SLOT	       0xffffffffu

struct heap_slot {
	uint8_t *base;
	uint64_t bytes;
};

enum slot_state {
	SLOT_IDLE = 0,
	SLOT_BUSY,     /* submitted, running */
	SLOT_FINISHED, /* results written (or failed); reap reports it next */
};

struct cuda_slot {
	enum slot_state state;
	int32_t status; /* SLOT_FINISHED: what reap reports */
	const struct vyre_exec_batch *batch;
	struct vyre_cuda_layout lay;
	uint32_t *cls, *order_slot;
	struct vyre_cuda_item_state *item_state; /* max_items: the lowering's per item */
	struct vyre_cuda_launch *launches;
	struct vyre_cuda_pinned slab;

	/* persistent mode */
	uint32_t lane;
	uint32_t next_post; /* next launch to ring */
	uint32_t last_seq;  /* the lane's seq of the last launch posted */
	int64_t posted_ns;  /* when its first doorbell went out */
	int immediate;	    /* the batch is one IMMEDIATE launch */
	struct vyre_cuda_immediate imm;

	/* launch mode */
	CUstream stream;
	CUevent event;
};

struct cuda_lane {
	uint64_t *ring, *cpl;	   /* this lane's doorbell and completion rings */
	struct vyre_mk_ctrl *ctrl; /* this lane's control page */
	uint32_t seq;		   /* sequence number of the next doorbell */
	uint32_t first_block, n_blocks;
	uint32_t busy;			    /* slots posting here */
	uint32_t owner[VYRE_MK_RING_SLOTS]; /* slot of each doorbell in the ring */
};

struct vyre_backend;

/*
 * What differs between the modes (backend.h's enum vyre_cuda_mode), chosen
 * once at init: the backend calls through this table instead of testing
 * the mode.
 */
struct vyre_cuda_mode_ops {
	const char *name; /* for the log line */
	int heartbeat;	  /* the device watches the host's heartbeat */
	/* Before the shared memory: b->n_ctrl, b->split_blocks (and the lanes). */
	int (*plan)(struct vyre_backend *b);
	/* After it: rings (persistent) or streams and events (launch). */
	int (*setup)(struct vyre_backend *b);
	/* The blocks @s's launches may use (persistent: its lane's, which this picks). */
	uint32_t (*place)(struct vyre_backend *b, struct cuda_slot *s);
	/* Start @s's launches (lowered into its slab); an error fails the slot. */
	int (*submit)(struct vyre_backend *b, struct cuda_slot *s);
	/* Finish the slots the device is done with. */
	int (*poll)(struct vyre_backend *b);
	/* Nothing stays resident on the device (heap registration waits for that). */
	int (*stop)(struct vyre_backend *b);
	/* At destroy: let what runs finish. */
	void (*drain)(struct vyre_backend *b);
	/* Free what setup made (the device memory the core shares is freed by its caller). */
	void (*teardown)(struct vyre_backend *b);
};

struct vyre_backend {
	uint32_t magic;
	struct vyre_backend_config cfg;
	const struct vyre_cuda_mode_ops *mode;
	struct vyre_cuda_device dv;
	uint32_t max_blocks;
	uint32_t n_slots, n_lanes, n_ctrl;
	uint32_t split_blocks; /* a large DFA item is split for these: the big lane, or the grid */
	CUstream stream;       /* persistent kernel, devstate clears */
	struct vyre_cuda_pinned ctrl_mem, ring_mem, cpl_mem;
	CUdeviceptr devstate; /* n_ctrl x struct vyre_mk_devstate, then the grid state */
	CUdeviceptr pool;     /* persistent: the pool's teams (VYRE_MK_POOL_BYTES), or 0 */
	struct cuda_slot *slots;
	struct cuda_lane *lanes;
	struct vyre_cuda_heap *heaps;
	struct heap_slot *host_heaps;
	uint32_t heartbeat_ms, watchdog_ms;
	uint64_t heartbeat_cycles, watchdog_cycles;
	uint32_t reap_next; /* where reap starts looking, so no slot starves */
	uint32_t polls;
	int64_t next_check_ns;
	int immediate_off; /* test hook: every batch takes the slab path */
	int module_imm;	   /* small module batches in the doorbell (VYRE_CUDA_MODULE_IMM) */
	int kernel_live;
	int coop; /* launch mode: cuLaunchCooperativeKernel is available */

	pthread_t hb_thread;
	pthread_mutex_t hb_lock;
	pthread_cond_t hb_cond;
	int hb_sync_ready, hb_running, hb_stop, hb_paused;

	/* held by submit, reap and heap (un)registration: see cuda_group.c */
	pthread_mutex_t op_lock;
	int op_lock_ready;
	struct vyre_backend *group_next; /* the process's backends, cuda_group.c */
	int in_group;

	uint32_t inject;
	uint32_t inject_after; /* batches to run before the injected one */
	int dead;
	struct vyre_cuda_stats stats;
	char why[320];
	char desc[320];
};

#define BACKEND_MAGIC 0x76637564u

/* @b is a backend of this file's kind, not of another backend's ops table. */
static inline int vyre_cuda_is_mine(const struct vyre_backend *b)
{
	return b && b->magic == BACKEND_MAGIC;
}

void vyre_cuda_note(struct vyre_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int vyre_cuda_cu_note(struct vyre_backend *b, const char *call, CUresult r);
int64_t vyre_cuda_now_ns(void);

/* Device address of control page / device state @i. */
uint64_t vyre_cuda_ctrl_dev(const struct vyre_backend *b, uint32_t i);
CUdeviceptr vyre_cuda_devstate_dev(const struct vyre_backend *b, uint32_t i);
/* Zero device state @i (n of them) on @stream. */
int vyre_cuda_clear_devstate(struct vyre_backend *b, uint32_t i, uint32_t n, CUstream stream);
/* 0 when @stream drained within @timeout_ns, VYRE_E_TIMEDOUT, or VYRE_E_DEVICE. */
int vyre_cuda_wait_stream(struct vyre_backend *b, CUstream stream, int64_t timeout_ns);
/* How long a stop may wait for a kernel to leave. */
int64_t vyre_cuda_stop_timeout_ns(const struct vyre_backend *b);

/* Slot @s's batch is over: results written from its slab (status 0) or failed. */
void vyre_cuda_slot_finish(struct vyre_backend *b, struct cuda_slot *s, int32_t status);
/*
 * A CUDA error while running, or a kernel that will not stop: every busy
 * slot fails with VYRE_E_DEVICE, the cause is logged, and the backend stays
 * unusable. Always returns VYRE_E_DEVICE.
 */
int vyre_cuda_device_fault(struct vyre_backend *b);
/* Stop what runs resident on the device (b->mode->stop); a failure is a device fault. */
int vyre_cuda_quiesce(struct vyre_backend *b);

/* Descriptor bytes the device reads from a slot's slab. */
static inline uint64_t vyre_cuda_desc_bytes(const struct cuda_slot *s)
{
	return (uint64_t)s->lay.n_units * sizeof(struct vyre_mk_unit) +
	       (uint64_t)s->lay.n_stages * sizeof(struct vyre_mk_stage);
}

static inline const struct vyre_mk_result *vyre_cuda_slot_records(const struct cuda_slot *s)
{
	return (const struct vyre_mk_result *)((const uint8_t *)s->slab.host + s->lay.results_off);
}

#endif /* VYRE_GPU_CUDA_CORE_H */
