/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend (docs/design.md section 8): context and memory lifecycle, the
 * heartbeat thread, heap registration, the ops table, and the slot
 * bookkeeping both modes share (submit lowers a batch into its slot's slab;
 * reap reports finished slots). The modes themselves live in
 * cuda_persistent.c and cuda_launch.c; see cuda_backend_internal.h for how
 * slots and lanes relate.
 *
 * Faults: a CUDA error while running (an illegal address, a lost context)
 * fails every busy slot with VYRE_E_DEVICE and is logged with its cause.
 * Such errors are sticky: CUDA cannot recover them inside the process (a
 * primary context reset does not clear them), so the backend then stays
 * unusable and says so, every later submit fails at once with
 * VYRE_E_DEVICE, and vyred must exit and be restarted. A watchdog trip (a
 * barrier without progress) fails only the slot whose launch tripped it and
 * is no CUDA error: the backend recovers by itself.
 *
 * Unregistering memory waits for the device to go idle, which a resident
 * kernel never does: the persistent kernel is stopped first and restarted
 * by the next poll that finds work.
 */
#include "cuda_backend_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLAB_MIN_BYTES	  (256u << 10)
#define SLAB_INIT_MAX	  (64u << 20)
#define SPIN_NS		  200000 /* busy polling before reap sleeps between checks */
#define POLL_SLEEP_NS	  20000l
#define HEARTBEAT_DEFAULT 1000u
#define WATCHDOG_DEFAULT  10000u
#define MAX_SLOTS	  1024u

void vyre_cuda_note(struct vyre_backend *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->why, sizeof(b->why), fmt, ap);
	va_end(ap);
	/* vyred logs to stderr */
	fprintf(stderr, "vyre-cuda: %s\n", b->why);
}

int vyre_cuda_cu_note(struct vyre_backend *b, const char *call, CUresult r)
{
	char msg[256];

	vyre_cuda_error(b->dv.d, msg, sizeof(msg), call, r);
	vyre_cuda_note(b, "%s", msg);
	return vyre_cuda_status(r);
}

int64_t vyre_cuda_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint32_t env_ms(const char *name, uint32_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 3600000ul)
		return def;
	return (uint32_t)v;
}

/* VYRE_CUDA_INJECT: a test hook for processes the test cannot call into (vyred). */
static uint32_t env_inject(int device)
{
	const char *s = getenv("VYRE_CUDA_INJECT");

	if (!s || !vyre_backend_inject_here(device))
		return 0;
	if (strcmp(s, "fault") == 0)
		return VYRE_CUDA_INJECT_FAULT;
	if (strcmp(s, "stall") == 0)
		return VYRE_CUDA_INJECT_STALL;
	if (*s)
		fprintf(stderr, "vyre-cuda: VYRE_CUDA_INJECT=%s ignored: fault or stall\n", s);
	return 0;
}

uint64_t vyre_cuda_ctrl_dev(const struct vyre_backend *b, uint32_t i)
{
	return b->ctrl_mem.dev + (uint64_t)i * sizeof(struct vyre_mk_ctrl);
}

CUdeviceptr vyre_cuda_devstate_dev(const struct vyre_backend *b, uint32_t i)
{
	return b->devstate + (CUdeviceptr)i * sizeof(struct vyre_mk_devstate);
}

int vyre_cuda_clear_devstate(struct vyre_backend *b, uint32_t i, uint32_t n, CUstream stream)
{
	CUresult r = b->dv.d->cuMemsetD8Async(vyre_cuda_devstate_dev(b, i), 0,
					      (size_t)n * sizeof(struct vyre_mk_devstate), stream);

	if (r != CUDA_SUCCESS)
		return vyre_cuda_cu_note(b, "cuMemsetD8Async(devstate)", r);
	return 0;
}

int vyre_cuda_wait_stream(struct vyre_backend *b, CUstream stream, int64_t timeout_ns)
{
	const int64_t deadline = vyre_cuda_now_ns() + timeout_ns;
	const struct timespec pause = {0, 50000};

	for (;;) {
		CUresult r = b->dv.d->cuStreamQuery(stream);

		if (r == CUDA_SUCCESS)
			return 0;
		if (r != CUDA_ERROR_NOT_READY) {
			vyre_cuda_cu_note(b, "cuStreamQuery", r);
			return VYRE_E_DEVICE;
		}
		if (vyre_cuda_now_ns() > deadline) {
			vyre_cuda_note(b, "the kernel did not finish within %lld ms",
				       (long long)(timeout_ns / 1000000));
			return VYRE_E_TIMEDOUT;
		}
		nanosleep(&pause, NULL);
	}
}

int64_t vyre_cuda_stop_timeout_ns(const struct vyre_backend *b)
{
	/* a launch in flight may run until its watchdog gives up on it */
	return (int64_t)b->watchdog_ms * 1000000 + STOP_EXTRA_NS;
}

/* ---- slots ------------------------------------------------------------------ */

void vyre_cuda_slot_finish(struct vyre_backend *b, struct cuda_slot *s, int32_t status)
{
	if (status == 0) {
		vyre_cuda_lower_results(s->batch, s->order_slot, vyre_cuda_slot_records(s));
		b->stats.bytes_from_device +=
		    (uint64_t)s->lay.n_results * sizeof(struct vyre_mk_result);
	} else {
		vyre_cuda_fail_results(s->batch, VYRE_E_DEVICE);
		b->stats.faults++;
	}
	if (b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT && s->lane < b->n_lanes)
		b->lanes[s->lane].busy--;
	s->lane = NO_SLOT;
	s->state = SLOT_FINISHED;
	s->status = status;
}

int vyre_cuda_device_fault(struct vyre_backend *b)
{
	char cause[sizeof(b->why)];
	uint32_t items = 0, slots = 0;

	memcpy(cause, b->why, sizeof(cause));
	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct cuda_slot *s = &b->slots[i];

		if (s->state != SLOT_BUSY)
			continue;
		items += s->batch->plan.n_order;
		slots++;
		vyre_cuda_slot_finish(b, s, VYRE_E_DEVICE);
	}
	b->dead = 1;
	b->kernel_live = 0;
	vyre_cuda_note(b,
		       "device fault: %.200s; %u in-flight item(s) of %u batch(es) complete with "
		       "VYRE_E_DEVICE; CUDA cannot recover this process, so the backend is "
		       "unusable: restart vyred",
		       cause, items, slots);
	return VYRE_E_DEVICE;
}

static int any_busy(const struct vyre_backend *b)
{
	for (uint32_t i = 0; i < b->n_slots; i++)
		if (b->slots[i].state == SLOT_BUSY)
			return 1;
	return 0;
}

/* ---- heartbeat ---------------------------------------------------------------- */

static void *heartbeat_main(void *arg)
{
	struct vyre_backend *b = arg;
	const long period_ns = (long)(b->heartbeat_ms > 8 ? b->heartbeat_ms / 8 : 1) * 1000000l;
	struct timespec ts;

	pthread_mutex_lock(&b->hb_lock);
	while (!b->hb_stop) {
		if (!b->hb_paused)
			for (uint32_t l = 0; l < b->n_lanes; l++)
				__atomic_fetch_add(&b->lanes[l].ctrl->heartbeat, 1u,
						   __ATOMIC_RELAXED);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += period_ns;
		ts.tv_sec += ts.tv_nsec / 1000000000l;
		ts.tv_nsec %= 1000000000l;
		pthread_cond_timedwait(&b->hb_cond, &b->hb_lock, &ts);
	}
	pthread_mutex_unlock(&b->hb_lock);
	return NULL;
}

static int start_heartbeat(struct vyre_backend *b)
{
	int err;

	if (b->cfg.cuda_mode != VYRE_CUDA_PERSISTENT || b->hb_running)
		return 0;
	b->hb_stop = 0;
	err = pthread_create(&b->hb_thread, NULL, heartbeat_main, b);
	if (err) {
		vyre_cuda_note(b, "pthread_create(heartbeat) failed: %s", strerror(err));
		return VYRE_E_NOMEM;
	}
	b->hb_running = 1;
	return 0;
}

static void stop_heartbeat(struct vyre_backend *b)
{
	if (!b->hb_running)
		return;
	pthread_mutex_lock(&b->hb_lock);
	b->hb_stop = 1;
	pthread_cond_signal(&b->hb_cond);
	pthread_mutex_unlock(&b->hb_lock);
	pthread_join(b->hb_thread, NULL);
	b->hb_running = 0;
}

/* ---- device resources --------------------------------------------------------- */

static int alloc_slot_arrays(struct vyre_backend *b)
{
	const uint32_t n = b->cfg.max_items;

	b->slots = calloc(b->n_slots, sizeof(*b->slots));
	if (!b->slots)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct cuda_slot *s = &b->slots[i];

		s->lane = NO_SLOT;
		s->cls = calloc(n, sizeof(*s->cls));
		s->order_slot = calloc(n, sizeof(*s->order_slot));
		s->item_state = calloc(n, sizeof(*s->item_state));
		s->launches = calloc(n, sizeof(*s->launches));
		if (!s->cls || !s->order_slot || !s->item_state || !s->launches)
			return VYRE_E_NOMEM;
	}
	return 0;
}

static void free_slot_arrays(struct vyre_backend *b)
{
	for (uint32_t i = 0; b->slots && i < b->n_slots; i++) {
		free(b->slots[i].cls);
		free(b->slots[i].order_slot);
		free(b->slots[i].item_state);
		free(b->slots[i].launches);
	}
	free(b->slots);
	b->slots = NULL;
}

static int setup(struct vyre_backend *b, uint64_t slab_bytes)
{
	const struct vyre_cuda_driver *d = b->dv.d;
	CUresult r = d->cuStreamCreate(&b->stream, CU_STREAM_NON_BLOCKING);
	uint64_t devstate_bytes;
	int err;

	if (r != CUDA_SUCCESS) {
		b->stream = NULL;
		return vyre_cuda_cu_note(b, "cuStreamCreate", r);
	}
	/* a control page and device state per lane (persistent) or per slot (launch) */
	if (b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT) {
		err = vyre_cuda_persist_plan(b);
		if (err)
			return err;
		b->n_ctrl = b->n_lanes;
	} else {
		b->n_ctrl = b->n_slots;
	}
	devstate_bytes = (uint64_t)(b->n_ctrl + 1) * sizeof(struct vyre_mk_devstate);
	err = vyre_cuda_pinned_alloc(&b->dv, &b->ctrl_mem,
				     (uint64_t)b->n_ctrl * sizeof(struct vyre_mk_ctrl), b->why,
				     sizeof(b->why));
	for (uint32_t i = 0; !err && i < b->n_slots; i++)
		err = vyre_cuda_pinned_alloc(&b->dv, &b->slots[i].slab, slab_bytes, b->why,
					     sizeof(b->why));
	if (err) {
		fprintf(stderr, "vyre-cuda: %s\n", b->why);
		return err;
	}
	/* one more than the pages: the grid-wide state of the persistent kernel */
	r = d->cuMemAlloc(&b->devstate, devstate_bytes);
	if (r != CUDA_SUCCESS) {
		b->devstate = 0;
		return vyre_cuda_cu_note(b, "cuMemAlloc(devstate)", r);
	}
	err = vyre_cuda_clear_devstate(b, 0, b->n_ctrl + 1, b->stream);
	if (!err)
		err = b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT ? vyre_cuda_persist_setup(b)
							       : vyre_cuda_launch_setup(b);
	if (err)
		return err;
	r = d->cuStreamSynchronize(b->stream);
	if (r != CUDA_SUCCESS)
		return vyre_cuda_cu_note(b, "cuStreamSynchronize", r);
	return 0;
}

static void teardown(struct vyre_backend *b)
{
	const struct vyre_cuda_driver *d = b->dv.d;

	vyre_cuda_launch_teardown(b);
	if (b->devstate)
		d->cuMemFree(b->devstate);
	b->devstate = 0;
	for (uint32_t i = 0; b->slots && i < b->n_slots; i++)
		vyre_cuda_pinned_free(&b->dv, &b->slots[i].slab);
	vyre_cuda_pinned_free(&b->dv, &b->cpl_mem);
	vyre_cuda_pinned_free(&b->dv, &b->ring_mem);
	vyre_cuda_pinned_free(&b->dv, &b->ctrl_mem);
	if (b->stream)
		d->cuStreamDestroy(b->stream);
	b->stream = NULL;
}

static int register_one(struct vyre_backend *b, uint32_t heap)
{
	const struct vyre_cuda_driver *d = b->dv.d;
	const struct heap_slot *hs = &b->host_heaps[heap];
	CUdeviceptr p;
	CUresult r =
	    d->cuMemHostRegister(hs->base, (size_t)hs->bytes,
				 CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);

	if (r != CUDA_SUCCESS) {
		vyre_cuda_cu_note(b, "cuMemHostRegister(heap)", r);
		if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
			return VYRE_E_INVAL;
		return vyre_cuda_status(r);
	}
	r = d->cuMemHostGetDevicePointer(&p, hs->base, 0);
	if (r != CUDA_SUCCESS) {
		d->cuMemHostUnregister(hs->base);
		return vyre_cuda_cu_note(b, "cuMemHostGetDevicePointer(heap)", r);
	}
	b->heaps[heap].dptr = p;
	b->heaps[heap].bytes = hs->bytes;
	b->heaps[heap].registered = 1;
	return 0;
}

int vyre_cuda_quiesce(struct vyre_backend *b)
{
	if (b->cfg.cuda_mode != VYRE_CUDA_PERSISTENT)
		return 0;
	if (vyre_cuda_persist_stop(b) == 0)
		return 0;
	return b->dead ? VYRE_E_DEVICE : vyre_cuda_device_fault(b);
}

/* ---- backend ops -------------------------------------------------------------- */

/* What destroy does on the device; exclusive when other backends share it. */
static int release_device(struct vyre_backend *b, void *unused)
{
	(void)unused;
	if (b->dv.ctx && !b->dead && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) == 0) {
		if (b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT)
			vyre_cuda_persist_stop(b);
		else
			vyre_cuda_launch_drain(b);
	}
	stop_heartbeat(b);
	for (uint32_t h = 0; b->heaps && b->host_heaps && h < b->cfg.max_heaps; h++) {
		if (!b->heaps[h].registered || !b->dv.ctx)
			continue;
		if (b->heaps[h].device)
			vyre_cuda_free_device_now(b, h);
		else
			b->dv.d->cuMemHostUnregister(b->host_heaps[h].base);
	}
	if (b->dv.ctx)
		teardown(b);
	return 0;
}

static void destroy(struct vyre_backend *b)
{
	if (b->in_group)
		vyre_cuda_group_exclusive(b, release_device, NULL, 1);
	else
		release_device(b, NULL);
	vyre_cuda_device_close(&b->dv);
	if (b->op_lock_ready)
		pthread_mutex_destroy(&b->op_lock);
	if (b->hb_sync_ready) {
		pthread_cond_destroy(&b->hb_cond);
		pthread_mutex_destroy(&b->hb_lock);
	}
	free(b->heaps);
	free(b->host_heaps);
	free(b->lanes);
	free_slot_arrays(b);
	free(b);
}

static int init_sync(struct vyre_backend *b)
{
	pthread_condattr_t attr;
	int err = pthread_condattr_init(&attr);

	if (err)
		return VYRE_E_NOMEM;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&b->hb_cond, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		return VYRE_E_NOMEM;
	if (pthread_mutex_init(&b->hb_lock, NULL) != 0) {
		pthread_cond_destroy(&b->hb_cond);
		return VYRE_E_NOMEM;
	}
	b->hb_sync_ready = 1;
	if (pthread_mutex_init(&b->op_lock, NULL) != 0)
		return VYRE_E_NOMEM;
	b->op_lock_ready = 1;
	return 0;
}

static void describe(struct vyre_backend *b)
{
	const struct vyre_cuda_device *dv = &b->dv;
	char lanes[96] = "";

	if (b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT) {
		int n = snprintf(lanes, sizeof(lanes), ", lanes %u", b->lanes[0].n_blocks);
		for (uint32_t l = 1; l < b->n_lanes && n > 0 && (size_t)n < sizeof(lanes); l++)
			n += snprintf(lanes + n, sizeof(lanes) - (size_t)n, "+%u",
				      b->lanes[l].n_blocks);
	}
	snprintf(b->desc, sizeof(b->desc),
		 "%s (sm_%u%u, %u SMs), grid %u x %u threads, driver %d.%d, %s mode, "
		 "%u slot(s)%s, heartbeat %u ms, watchdog %u ms",
		 dv->name, dv->cc_major, dv->cc_minor, dv->sm_count, dv->grid, VYRE_MK_THREADS,
		 dv->d->version / 1000, dv->d->version % 1000 / 10,
		 b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch", b->n_slots,
		 lanes, b->heartbeat_ms, b->watchdog_ms);
}

static uint64_t initial_slab_bytes(const struct vyre_backend_config *cfg)
{
	/* a unit, a stage and a result per item covers batches of small items */
	uint64_t bytes =
	    (uint64_t)cfg->max_items * (sizeof(struct vyre_mk_unit) + sizeof(struct vyre_mk_stage) +
					sizeof(struct vyre_mk_result)) +
	    192;

	bytes = bytes < SLAB_MIN_BYTES ? SLAB_MIN_BYTES : bytes;
	return bytes > SLAB_INIT_MAX ? SLAB_INIT_MAX : bytes;
}

static int cuda_init(struct vyre_backend **out, const struct vyre_backend_config *cfg, char *why,
		     uint32_t why_len)
{
	struct vyre_backend *b;
	int err;

	*out = NULL;
	if (cfg->max_heaps == 0 || cfg->max_items == 0 || cfg->max_inflight > MAX_SLOTS ||
	    (cfg->cuda_mode != VYRE_CUDA_PERSISTENT && cfg->cuda_mode != VYRE_CUDA_LAUNCH)) {
		if (why_len)
			snprintf(why, why_len,
				 "cuda backend: max_heaps and max_items must be > 0, max_inflight "
				 "at most %u and the mode persistent or launch",
				 MAX_SLOTS);
		return VYRE_E_INVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return VYRE_E_NOMEM;
	b->magic = BACKEND_MAGIC;
	b->cfg = *cfg;
	b->n_slots = cfg->max_inflight ? cfg->max_inflight : 1;
	b->heaps = calloc(cfg->max_heaps, sizeof(*b->heaps));
	b->host_heaps = calloc(cfg->max_heaps, sizeof(*b->host_heaps));
	err = b->heaps && b->host_heaps ? alloc_slot_arrays(b) : VYRE_E_NOMEM;
	if (!err)
		err = init_sync(b);
	if (err) {
		if (why_len)
			snprintf(why, why_len, "cuda backend: out of host memory");
		destroy(b);
		return err;
	}
	b->heartbeat_ms = env_ms("VYRE_CUDA_HEARTBEAT_MS", HEARTBEAT_DEFAULT);
	b->watchdog_ms = env_ms("VYRE_CUDA_WATCHDOG_MS", WATCHDOG_DEFAULT);
	b->max_blocks = env_ms("VYRE_CUDA_MAX_BLOCKS", 0);
	b->inject = env_inject(cfg->device);
	b->inject_after = vyre_backend_inject_after();
	err = vyre_cuda_device_open(&b->dv, cfg->device, b->max_blocks, b->why, sizeof(b->why));
	if (!err && cfg->cuda_grid_parts > 1)
		b->dv.grid =
		    b->dv.grid / cfg->cuda_grid_parts ? b->dv.grid / cfg->cuda_grid_parts : 1;
	if (!err) {
		b->heartbeat_cycles = (uint64_t)b->heartbeat_ms * b->dv.clock_khz;
		b->watchdog_cycles = (uint64_t)b->watchdog_ms * b->dv.clock_khz;
		err = setup(b, initial_slab_bytes(cfg));
	}
	if (!err)
		err = start_heartbeat(b);
	if (err) {
		if (why_len)
			snprintf(why, why_len, "cuda backend: %s", b->why);
		destroy(b);
		return err;
	}
	describe(b);
	b->stats.grid_blocks = b->dv.grid;
	b->stats.block_threads = VYRE_MK_THREADS;
	b->stats.slots = b->n_slots;
	b->stats.lanes = b->n_lanes;
	vyre_cuda_group_join(b);
	*out = b;
	return 0;
}

/*
 * Heap (un)registration waits until nothing runs in the context: it runs
 * exclusive (cuda_group.c), with this and every other resident grid on the
 * device stopped.
 */
static int register_exclusive(struct vyre_backend *b, void *arg)
{
	const uint32_t heap = *(const uint32_t *)arg;
	int err;

	if (vyre_cuda_quiesce(b) != 0)
		return VYRE_E_DEVICE;
	err = register_one(b, heap);
	if (err)
		memset(&b->host_heaps[heap], 0, sizeof(b->host_heaps[heap]));
	return err;
}

static int cuda_register_heap(struct vyre_backend *b, uint32_t heap, uint8_t *base, uint64_t bytes)
{
	int err;

	if (heap >= b->cfg.max_heaps || !base || bytes == 0 || b->host_heaps[heap].base ||
	    b->heaps[heap].device)
		return VYRE_E_INVAL;
	if (b->dead)
		return VYRE_E_DEVICE;
	err = vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why));
	if (err)
		return err;
	b->host_heaps[heap].base = base;
	b->host_heaps[heap].bytes = bytes;
	return vyre_cuda_group_exclusive(b, register_exclusive, &heap, 0);
}

static int unregister_exclusive(struct vyre_backend *b, void *arg)
{
	const uint32_t heap = *(const uint32_t *)arg;

	vyre_cuda_quiesce(b);
	if (!b->dead && b->heaps[heap].registered) {
		CUresult r = b->dv.d->cuMemHostUnregister(b->host_heaps[heap].base);
		if (r != CUDA_SUCCESS)
			vyre_cuda_cu_note(b, "cuMemHostUnregister(heap)", r);
	}
	return 0;
}

static int cuda_unregister_heap(struct vyre_backend *b, uint32_t heap)
{
	if (heap >= b->cfg.max_heaps || !b->host_heaps[heap].base)
		return VYRE_E_INVAL;
	if (!b->dead && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) == 0)
		vyre_cuda_group_exclusive(b, unregister_exclusive, &heap, 0);
	memset(&b->host_heaps[heap], 0, sizeof(b->host_heaps[heap]));
	memset(&b->heaps[heap], 0, sizeof(b->heaps[heap]));
	return 0;
}

/* Make room in @s's slab for @need bytes; the old slab stays on failure. */
static int grow_slab(struct vyre_backend *b, struct cuda_slot *s, uint64_t need)
{
	struct vyre_cuda_pinned fresh;
	uint64_t bytes = s->slab.bytes * 2 > need ? s->slab.bytes * 2 : need;
	int err;

	if (bytes > UINT64_MAX - 0xffff)
		return VYRE_E_NOMEM;
	bytes = (bytes + 0xffff) & ~(uint64_t)0xffff;
	err = vyre_cuda_pinned_alloc(&b->dv, &fresh, bytes, b->why, sizeof(b->why));
	if (err && bytes > need)
		err = vyre_cuda_pinned_alloc(&b->dv, &fresh, need, b->why, sizeof(b->why));
	if (err) {
		fprintf(stderr, "vyre-cuda: cannot grow the slab to %llu bytes: %s\n",
			(unsigned long long)need, b->why);
		return err;
	}
	/* the slot is idle: nothing on the device reads the old slab */
	vyre_cuda_pinned_free(&b->dv, &s->slab);
	s->slab = fresh;
	return 0;
}

static int submit_locked(struct vyre_backend *b, uint32_t slot, const struct vyre_exec_batch *batch)
{
	struct cuda_slot *s;
	uint32_t grid_max = b->dv.grid;
	int err;

	if (slot >= b->n_slots || b->slots[slot].state != SLOT_IDLE) {
		vyre_cuda_note(b, "submit to slot %u, which is %s", slot,
			       slot >= b->n_slots ? "out of range" : "not idle");
		return VYRE_E_INVAL;
	}
	s = &b->slots[slot];
	if (batch->n_items > b->cfg.max_items || batch->plan.n_order > b->cfg.max_items)
		return VYRE_E_INVAL;
	/* large DFA items are split for the big lane, where large batches go when it is idle */
	err = vyre_cuda_lower_measure(
	    batch, b->heaps, b->cfg.max_heaps,
	    b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT ? b->lanes[0].n_blocks : b->dv.grid, s->cls,
	    s->item_state, &s->lay);
	if (err)
		return err;
	if (b->dead) {
		vyre_cuda_fail_results(batch, VYRE_E_DEVICE);
		return VYRE_E_DEVICE;
	}
	err = vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why));
	if (err)
		return err;
	if (s->lay.bytes > s->slab.bytes) {
		err = grow_slab(b, s, s->lay.bytes);
		if (err)
			return err;
	}
	s->batch = batch;
	s->lane = NO_SLOT;
	if (b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT) {
		s->lane = vyre_cuda_persist_pick_lane(b, s);
		grid_max = b->lanes[s->lane].n_blocks;
	}
	vyre_cuda_lower_fill(batch, b->heaps, s->cls, s->item_state, &s->lay, s->slab.host,
			     grid_max, s->order_slot, s->launches);
	if (b->inject && s->lay.n_launches > 0 && b->inject_after) {
		b->inject_after--;
	} else if (b->inject && s->lay.n_launches > 0) {
		struct vyre_cuda_launch *l = &s->launches[0];

		if (b->inject & VYRE_CUDA_INJECT_FAULT)
			l->flags |= VYRE_MK_LAUNCH_FAULT;
		if ((b->inject & VYRE_CUDA_INJECT_STALL) && grid_max >= 2) {
			l->flags |= VYRE_MK_LAUNCH_STALL;
			l->n_blocks = l->n_blocks < 2 ? 2 : l->n_blocks;
		}
		b->inject = 0;
	}
	s->state = SLOT_BUSY;
	s->status = 0;
	b->stats.batches++;
	if (s->lay.n_launches == 0) {
		s->lane = NO_SLOT;
		vyre_cuda_slot_finish(b, s, 0);
		return 0;
	}
	if (b->cfg.cuda_mode == VYRE_CUDA_LAUNCH) {
		err = vyre_cuda_launch_submit(b, s);
	} else {
		b->lanes[s->lane].busy++;
		err = vyre_cuda_persist_submit(b, s);
	}
	if (err) {
		/* nothing runs for this slot: its results say why and it stays idle */
		if (s->state == SLOT_BUSY)
			vyre_cuda_slot_finish(b, s, err);
		s->state = SLOT_IDLE;
		s->batch = NULL;
	}
	return err;
}

/* Report up to @max finished slots, starting after the last one reported. */
static uint32_t collect(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < b->n_slots && n < max; k++) {
		const uint32_t i = (b->reap_next + k) % b->n_slots;
		struct cuda_slot *s = &b->slots[i];

		if (s->state != SLOT_FINISHED)
			continue;
		done[n].slot = i;
		done[n].status = s->status;
		n++;
		s->state = SLOT_IDLE;
		s->batch = NULL;
		b->reap_next = (i + 1) % b->n_slots;
	}
	return n;
}

static int cuda_submit(struct vyre_backend *b, uint32_t slot, const struct vyre_exec_batch *batch)
{
	pthread_mutex_lock(&b->op_lock);
	const int err = submit_locked(b, slot, batch);
	pthread_mutex_unlock(&b->op_lock);
	return err;
}

/* One look at the device; *busy: slots still run. */
static uint32_t reap_once(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max,
			  int *busy)
{
	uint32_t n;

	pthread_mutex_lock(&b->op_lock);
	if (!b->dead && any_busy(b) && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)))
		vyre_cuda_device_fault(b);
	if (!b->dead) {
		if (b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT)
			vyre_cuda_persist_poll(b);
		else
			vyre_cuda_launch_poll(b);
	}
	n = collect(b, done, max);
	*busy = any_busy(b);
	pthread_mutex_unlock(&b->op_lock);
	return n;
}

static int cuda_reap(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max,
		     int64_t timeout_ns)
{
	const struct timespec pause = {0, POLL_SLEEP_NS};
	int64_t start = 0;
	uint32_t polls = 0;

	if (max == 0)
		return 0;
	for (;;) {
		int busy;
		const uint32_t n = reap_once(b, done, max, &busy);
		/*
		 * timeout 0 is the event loop's look between its other work: one
		 * poll, and no clock read (a tenth of the loop's time once)
		 */
		if (n || !busy || timeout_ns == 0)
			return (int)n;
		if (!start)
			start = vyre_cuda_now_ns();
		if (++polls % CLOCK_EVERY)
			continue;
		const int64_t now = vyre_cuda_now_ns();
		if (timeout_ns >= 0 && now - start >= timeout_ns)
			return 0;
		/* by time, not by count: a poll costs 10-50 ns depending on the path */
		if (now - start > SPIN_NS)
			nanosleep(&pause, NULL);
	}
}

static int cuda_completion_fd(struct vyre_backend *b)
{
	/* the device signals through mapped memory only: the owner polls reap */
	(void)b;
	return -1;
}

static void cuda_shutdown(struct vyre_backend *b)
{
	if (b)
		destroy(b);
}

static const struct vyre_backend_ops cuda_ops = {
    .name = "cuda",
    .devices = vyre_cuda_device_list,
    .init = cuda_init,
    .register_heap = cuda_register_heap,
    .unregister_heap = cuda_unregister_heap,
    .alloc_device = vyre_cuda_alloc_device,
    .free_device = vyre_cuda_free_device,
    .device_free_bytes = vyre_cuda_device_free_bytes,
    .submit = cuda_submit,
    .reap = cuda_reap,
    .completion_fd = cuda_completion_fd,
    .usable = vyre_cuda_usable,
    .shutdown = cuda_shutdown,
};

const struct vyre_backend_ops *const vyre_cuda_backend = &cuda_ops;
const char vyre_cuda_unavailable[] = "";
