/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend (docs/design.md section 8). A submitted batch is lowered into
 * one pinned, device-mapped slab (units, stages, result records; see
 * cuda_lower.h) and run either by the resident persistent kernel, one
 * doorbell per launch, or by one cuLaunchKernel per launch. Heaps are
 * registered with cuMemHostRegister, so the kernels work on them in place.
 *
 * Faults: a CUDA error while running (an illegal address, a lost context)
 * fails every in-flight item with VYRE_E_DEVICE and is logged with its
 * cause. Such errors are sticky: CUDA cannot recover them inside the process
 * (a primary context reset does not clear them), so the backend then stays
 * unusable and says so, every later submit fails at once with VYRE_E_DEVICE,
 * and vyred must exit and be restarted. A watchdog trip (a barrier without
 * progress) fails the batch the same way but is no CUDA error: the backend
 * recovers by itself. A persistent kernel that left because the heartbeat
 * stopped is restarted where it left off.
 *
 * Freeing or unregistering memory may wait for the device to go idle, which
 * a resident kernel never does: the persistent kernel is stopped first and
 * restarted by the next submit.
 */
#include "cuda_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_abi.h"
#include "cuda_device.h"
#include "cuda_immediate.h"
#include "cuda_lower.h"

#define BACKEND_MAGIC	  0x76637564u
#define SLAB_MIN_BYTES	  (256u << 10)
#define SLAB_INIT_MAX	  (64u << 20)
#define STOP_TIMEOUT_NS	  2000000000ll
#define CHECK_EVERY_NS	  50000	 /* between kernel health checks while polling */
#define CLOCK_EVERY	  32u	 /* polls between clock reads */
#define SPIN_NS		  200000 /* busy polling before poll() sleeps between checks */
#define POLL_SLEEP_NS	  20000l
#define HEARTBEAT_DEFAULT 1000u
#define WATCHDOG_DEFAULT  10000u

struct heap_slot {
	uint8_t *base;
	uint64_t bytes;
};

struct vyre_backend {
	uint32_t magic;
	struct vyre_backend_config cfg;
	struct vyre_cuda_device dv;
	uint32_t max_blocks;
	CUstream stream;
	struct vyre_cuda_pinned ctrl_mem, ring_mem, cpl_mem, slab;
	CUdeviceptr devstate;
	struct vyre_mk_ctrl *ctrl;
	uint64_t *ring;
	uint64_t *cpl; /* completion ring of IMMEDIATE launches */
	struct vyre_cuda_heap *heaps;
	struct heap_slot *host_heaps;
	uint32_t *cls, *order_slot;
	struct vyre_cuda_launch *launches;
	uint32_t heartbeat_ms, watchdog_ms;
	uint64_t heartbeat_cycles, watchdog_cycles;

	/* the batch in flight */
	const struct vyre_exec_batch *batch;
	struct vyre_cuda_layout lay;
	uint32_t next_post;    /* persistent: next launch to ring */
	uint32_t seq_end;      /* persistent: done value that completes the batch */
	int64_t next_check_ns; /* persistent: when poll next asks the driver about the kernel */
	uint32_t polls;
	int in_flight;
	int immediate; /* persistent: the batch is one IMMEDIATE launch */
	uint32_t imm_seq;
	struct vyre_cuda_immediate imm;
	int immediate_off; /* test hook: every batch takes the slab path */

	/* persistent kernel */
	int kernel_live;
	uint32_t seq; /* sequence number of the next doorbell */

	pthread_t hb_thread;
	pthread_mutex_t hb_lock;
	pthread_cond_t hb_cond;
	int hb_sync_ready, hb_running, hb_stop, hb_paused;

	uint32_t inject;
	int dead;
	struct vyre_cuda_stats stats;
	char why[320];
	char desc[256];
};

static void note(struct vyre_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records @fmt as the last error and logs it: vyred logs to stderr. */
static void note(struct vyre_backend *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->why, sizeof(b->why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "vyre-cuda: %s\n", b->why);
}

static int cu_note(struct vyre_backend *b, const char *call, CUresult r)
{
	char msg[256];

	vyre_cuda_error(b->dv.d, msg, sizeof(msg), call, r);
	note(b, "%s", msg);
	return vyre_cuda_status(r);
}

static int64_t now_ns(void)
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
static uint32_t env_inject(void)
{
	const char *s = getenv("VYRE_CUDA_INJECT");

	if (!s)
		return 0;
	if (strcmp(s, "fault") == 0)
		return VYRE_CUDA_INJECT_FAULT;
	if (strcmp(s, "stall") == 0)
		return VYRE_CUDA_INJECT_STALL;
	if (*s)
		fprintf(stderr, "vyre-cuda: VYRE_CUDA_INJECT=%s ignored: fault or stall\n", s);
	return 0;
}

/* ---- heartbeat ------------------------------------------------------------ */

static void *heartbeat_main(void *arg)
{
	struct vyre_backend *b = arg;
	const long period_ns = (long)(b->heartbeat_ms > 8 ? b->heartbeat_ms / 8 : 1) * 1000000l;
	struct timespec ts;

	pthread_mutex_lock(&b->hb_lock);
	while (!b->hb_stop) {
		if (!b->hb_paused)
			__atomic_fetch_add(&b->ctrl->heartbeat, 1u, __ATOMIC_RELAXED);
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
		note(b, "pthread_create(heartbeat) failed: %s", strerror(err));
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

/* ---- device resources --------------------------------------------------- */

/*
 * Every doorbell and completion slot holds the sequence number it had one lap
 * before b->seq, which no launch to come uses.
 */
static void reset_rings(struct vyre_backend *b)
{
	for (uint32_t i = 0; i < VYRE_MK_RING_SLOTS; i++) {
		const uint32_t seq = b->seq + i;
		const uint64_t at = (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
		const uint64_t stale = (uint64_t)(seq - VYRE_MK_RING_SLOTS) << 32;

		for (uint32_t j = 0; j < VYRE_MK_SLOT_WORDS; j++) {
			__atomic_store_n(&b->ring[at + j], stale, __ATOMIC_RELAXED);
			__atomic_store_n(&b->cpl[at + j], stale, __ATOMIC_RELAXED);
		}
	}
}

static int clear_devstate(struct vyre_backend *b)
{
	CUresult r =
	    b->dv.d->cuMemsetD8Async(b->devstate, 0, sizeof(struct vyre_mk_devstate), b->stream);

	if (r != CUDA_SUCCESS)
		return cu_note(b, "cuMemsetD8Async(devstate)", r);
	return 0;
}

static int setup(struct vyre_backend *b, uint64_t slab_bytes)
{
	const struct vyre_cuda_driver *d = b->dv.d;
	CUresult r = d->cuStreamCreate(&b->stream, CU_STREAM_NON_BLOCKING);
	int err;

	if (r != CUDA_SUCCESS) {
		b->stream = NULL;
		return cu_note(b, "cuStreamCreate", r);
	}
	err = vyre_cuda_pinned_alloc(&b->dv, &b->ctrl_mem, sizeof(struct vyre_mk_ctrl), b->why,
				     sizeof(b->why));
	if (!err)
		err = vyre_cuda_pinned_alloc(&b->dv, &b->ring_mem,
					     (uint64_t)VYRE_MK_RING_SLOTS * VYRE_MK_SLOT_WORDS * 8,
					     b->why, sizeof(b->why));
	if (!err)
		err = vyre_cuda_pinned_alloc(&b->dv, &b->cpl_mem,
					     (uint64_t)VYRE_MK_RING_SLOTS * VYRE_MK_SLOT_WORDS * 8,
					     b->why, sizeof(b->why));
	if (!err)
		err = vyre_cuda_pinned_alloc(&b->dv, &b->slab, slab_bytes, b->why, sizeof(b->why));
	if (err) {
		fprintf(stderr, "vyre-cuda: %s\n", b->why);
		return err;
	}
	r = d->cuMemAlloc(&b->devstate, sizeof(struct vyre_mk_devstate));
	if (r != CUDA_SUCCESS) {
		b->devstate = 0;
		return cu_note(b, "cuMemAlloc(devstate)", r);
	}
	b->ctrl = b->ctrl_mem.host;
	b->ring = b->ring_mem.host;
	b->cpl = b->cpl_mem.host;
	reset_rings(b);
	err = clear_devstate(b);
	if (err)
		return err;
	r = d->cuStreamSynchronize(b->stream);
	if (r != CUDA_SUCCESS)
		return cu_note(b, "cuStreamSynchronize", r);
	return 0;
}

static void teardown(struct vyre_backend *b)
{
	const struct vyre_cuda_driver *d = b->dv.d;

	if (b->devstate)
		d->cuMemFree(b->devstate);
	b->devstate = 0;
	vyre_cuda_pinned_free(&b->dv, &b->slab);
	vyre_cuda_pinned_free(&b->dv, &b->cpl_mem);
	vyre_cuda_pinned_free(&b->dv, &b->ring_mem);
	vyre_cuda_pinned_free(&b->dv, &b->ctrl_mem);
	if (b->stream)
		d->cuStreamDestroy(b->stream);
	b->stream = NULL;
	b->ctrl = NULL;
	b->ring = NULL;
	b->cpl = NULL;
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
		cu_note(b, "cuMemHostRegister(heap)", r);
		if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
			return VYRE_E_INVAL;
		return vyre_cuda_status(r);
	}
	r = d->cuMemHostGetDevicePointer(&p, hs->base, 0);
	if (r != CUDA_SUCCESS) {
		d->cuMemHostUnregister(hs->base);
		return cu_note(b, "cuMemHostGetDevicePointer(heap)", r);
	}
	b->heaps[heap].dptr = p;
	b->heaps[heap].bytes = hs->bytes;
	b->heaps[heap].registered = 1;
	return 0;
}

/* ---- the persistent kernel ---------------------------------------------- */

/* The first @words words of doorbell slot @seq; each word is current on its own. */
static void post_slot(struct vyre_backend *b, uint32_t seq, const uint32_t *data, uint32_t words)
{
	uint64_t *slot = b->ring + (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;

	for (uint32_t j = 0; j < words; j++)
		__atomic_store_n(&slot[j], (uint64_t)seq << 32 | data[j], __ATOMIC_RELEASE);
	b->stats.bytes_to_device += (uint64_t)words * 8;
}

static int start_kernel(struct vyre_backend *b, uint32_t start_seq)
{
	struct vyre_mk_persist_args a = {
	    .ctrl = b->ctrl_mem.dev,
	    .ring = b->ring_mem.dev,
	    .cpl = b->cpl_mem.dev,
	    .devstate = b->devstate,
	    .heartbeat_cycles = b->heartbeat_cycles,
	    .watchdog_cycles = b->watchdog_cycles,
	    .start_seq = start_seq,
	};
	void *params[] = {&a};
	CUresult r;
	int err;

	__atomic_store_n(&b->ctrl->state, VYRE_MK_STATE_RUNNING, __ATOMIC_RELAXED);
	__atomic_store_n(&b->ctrl->done, start_seq, __ATOMIC_RELEASE);
	err = clear_devstate(b);
	if (err)
		return err;
	r = b->dv.d->cuLaunchKernel(b->dv.persistent, b->dv.grid, 1, 1, VYRE_MK_THREADS, 1, 1, 0,
				    b->stream, params, NULL);
	if (r != CUDA_SUCCESS)
		return cu_note(b, "cuLaunchKernel(vyre_mk_persistent)", r);
	b->kernel_live = 1;
	b->stats.kernel_starts++;
	return 0;
}

/* 0 when the stream drained, VYRE_E_TIMEDOUT, or VYRE_E_DEVICE on a CUDA error. */
static int wait_stream(struct vyre_backend *b, int64_t timeout_ns)
{
	const int64_t deadline = now_ns() + timeout_ns;
	const struct timespec pause = {0, 50000};

	for (;;) {
		CUresult r = b->dv.d->cuStreamQuery(b->stream);

		if (r == CUDA_SUCCESS)
			return 0;
		if (r != CUDA_ERROR_NOT_READY) {
			cu_note(b, "cuStreamQuery", r);
			return VYRE_E_DEVICE;
		}
		if (now_ns() > deadline) {
			note(b, "the kernel did not finish within %lld ms",
			     (long long)(timeout_ns / 1000000));
			return VYRE_E_TIMEDOUT;
		}
		nanosleep(&pause, NULL);
	}
}

/* Ring the EXIT doorbell and wait for the grid to leave. */
static int stop_kernel(struct vyre_backend *b)
{
	uint32_t data[VYRE_MK_SLOT_WORDS] = {0};

	if (!b->kernel_live)
		return 0;
	data[6] = VYRE_MK_LAUNCH_EXIT << 16;
	post_slot(b, b->seq, data, VYRE_MK_HEADER_WORDS);
	b->seq++;
	b->kernel_live = 0;
	return wait_stream(b, STOP_TIMEOUT_NS);
}

/* Launches the persistent kernel has finished (the seq of the last one + 1). */
static uint32_t ring_done(struct vyre_backend *b)
{
	return __atomic_load_n(&b->ctrl->done, __ATOMIC_ACQUIRE);
}

/* Descriptor bytes the device reads from the slab. */
static uint64_t slab_bytes(const struct vyre_backend *b)
{
	return (uint64_t)b->lay.n_units * sizeof(struct vyre_mk_unit) +
	       (uint64_t)b->lay.n_stages * sizeof(struct vyre_mk_stage);
}

/* The batch is b->imm: its input goes inside the doorbell, the slab is not read. */
static void post_immediate(struct vyre_backend *b)
{
	uint32_t data[VYRE_MK_SLOT_WORDS];
	const uint32_t words =
	    vyre_cuda_immediate_doorbell(&b->imm, b->host_heaps[b->imm.heap].base, data);

	b->imm_seq = b->seq;
	post_slot(b, b->seq, data, words);
	b->seq++;
	b->next_post = 1;
	b->stats.launches++;
	b->stats.immediates++;
}

/*
 * Ring the doorbells of the launches not posted yet, as far as the ring has
 * room. A launch of one stage, one block and at most VYRE_MK_INLINE_UNITS
 * units travels inside its slot.
 */
static void post_launches(struct vyre_backend *b)
{
	const uint32_t done = ring_done(b);
	const uint8_t *slab = b->slab.host;
	const struct vyre_mk_unit *units = (const struct vyre_mk_unit *)(slab + b->lay.units_off);
	const struct vyre_mk_stage *stages =
	    (const struct vyre_mk_stage *)(slab + b->lay.stages_off);

	while (b->next_post < b->lay.n_launches && b->seq - done < VYRE_MK_RING_SLOTS) {
		const struct vyre_cuda_launch *l = &b->launches[b->next_post];
		uint32_t data[VYRE_MK_SLOT_WORDS] = {
		    (uint32_t)b->slab.dev,
		    (uint32_t)((uint64_t)b->slab.dev >> 32),
		    (uint32_t)(b->lay.units_off +
			       (uint64_t)l->first_unit * sizeof(struct vyre_mk_unit)),
		    (uint32_t)(b->lay.stages_off +
			       (uint64_t)l->first_stage * sizeof(struct vyre_mk_stage)),
		    (uint32_t)b->lay.results_off,
		    l->n_stages,
		    l->n_blocks | l->flags << 16,
		    l->n_units,
		};
		uint32_t words = VYRE_MK_HEADER_WORDS;

		if (l->n_stages == 1 && l->n_blocks == 1 && l->n_units <= VYRE_MK_INLINE_UNITS) {
			data[3] = stages[l->first_stage].n_block_units;
			data[6] |= VYRE_MK_LAUNCH_INLINE << 16;
			memcpy(&data[VYRE_MK_HEADER_WORDS], &units[l->first_unit],
			       l->n_units * sizeof(struct vyre_mk_unit));
			words += l->n_units * VYRE_MK_UNIT_WORDS;
		}
		post_slot(b, b->seq, data, words);
		b->seq++;
		b->next_post++;
		b->stats.launches++;
	}
}

/* ---- completion and faults ---------------------------------------------- */

static const struct vyre_mk_result *slab_records(const struct vyre_backend *b)
{
	return (const struct vyre_mk_result *)((const uint8_t *)b->slab.host + b->lay.results_off);
}

static void finish(struct vyre_backend *b)
{
	vyre_cuda_lower_results(b->batch, b->order_slot, slab_records(b));
	b->stats.bytes_from_device += (uint64_t)b->lay.n_results * sizeof(struct vyre_mk_result);
	b->in_flight = 0;
	b->batch = NULL;
}

static uint32_t fail_in_flight(struct vyre_backend *b)
{
	uint32_t n = 0;

	if (b->in_flight) {
		n = b->batch->plan.n_order;
		vyre_cuda_fail_results(b->batch, VYRE_E_DEVICE);
	}
	b->in_flight = 0;
	b->batch = NULL;
	return n;
}

/*
 * A CUDA error while running, or a kernel that will not stop: fail the batch,
 * log the cause, and stay unusable, because CUDA keeps such errors sticky for
 * the life of the process. Always returns VYRE_E_DEVICE.
 */
static int device_fault(struct vyre_backend *b)
{
	char cause[sizeof(b->why)];
	const uint32_t n = fail_in_flight(b);

	memcpy(cause, b->why, sizeof(cause));
	b->stats.faults++;
	b->dead = 1;
	b->kernel_live = 0;
	note(b,
	     "device fault: %.200s; %u in-flight item(s) complete with VYRE_E_DEVICE; CUDA "
	     "cannot recover this process, so the backend is unusable: restart vyred",
	     cause, n);
	return VYRE_E_DEVICE;
}

/* A barrier made no progress: the kernel aborted itself; no reset needed. */
static int watchdog_fault(struct vyre_backend *b)
{
	const uint32_t block = __atomic_load_n(&b->ctrl->detail, __ATOMIC_RELAXED);
	const uint32_t n = fail_in_flight(b);
	int err;

	b->stats.faults++;
	b->stats.watchdog_trips++;
	note(b,
	     "watchdog: a device-wide barrier saw no progress for %u ms (noticed by block %u); "
	     "%u in-flight item(s) complete with VYRE_E_DEVICE",
	     b->watchdog_ms, block, n);
	b->kernel_live = 0;
	err = wait_stream(b, STOP_TIMEOUT_NS);
	if (!err) {
		__atomic_store_n(&b->ctrl->state, VYRE_MK_STATE_RUNNING, __ATOMIC_RELAXED);
		err = clear_devstate(b);
	}
	if (err)
		return device_fault(b);
	return VYRE_E_DEVICE;
}

/* ---- backend ops ---------------------------------------------------------- */

static void destroy(struct vyre_backend *b)
{
	if (b->dv.ctx && !b->dead && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) == 0) {
		if (b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT)
			stop_kernel(b);
		else if (b->stream)
			wait_stream(b, STOP_TIMEOUT_NS);
	}
	stop_heartbeat(b);
	for (uint32_t h = 0; b->heaps && b->host_heaps && h < b->cfg.max_heaps; h++)
		if (b->heaps[h].registered && b->dv.ctx)
			b->dv.d->cuMemHostUnregister(b->host_heaps[h].base);
	if (b->dv.ctx)
		teardown(b);
	vyre_cuda_device_close(&b->dv);
	if (b->hb_sync_ready) {
		pthread_cond_destroy(&b->hb_cond);
		pthread_mutex_destroy(&b->hb_lock);
	}
	free(b->heaps);
	free(b->host_heaps);
	free(b->cls);
	free(b->order_slot);
	free(b->launches);
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
	return 0;
}

static void describe(struct vyre_backend *b)
{
	const struct vyre_cuda_device *dv = &b->dv;

	snprintf(b->desc, sizeof(b->desc),
		 "%s (sm_%u%u, %u SMs), grid %u x %u threads, driver %d.%d, %s mode, "
		 "heartbeat %u ms, watchdog %u ms",
		 dv->name, dv->cc_major, dv->cc_minor, dv->sm_count, dv->grid, VYRE_MK_THREADS,
		 dv->d->version / 1000, dv->d->version % 1000 / 10,
		 b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch",
		 b->heartbeat_ms, b->watchdog_ms);
}

static int cuda_init(struct vyre_backend **out, const struct vyre_backend_config *cfg, char *why,
		     uint32_t why_len)
{
	struct vyre_backend *b;
	int err;

	*out = NULL;
	if (cfg->max_heaps == 0 || cfg->max_items == 0 ||
	    (cfg->cuda_mode != VYRE_CUDA_PERSISTENT && cfg->cuda_mode != VYRE_CUDA_LAUNCH)) {
		if (why_len)
			snprintf(why, why_len,
				 "cuda backend: max_heaps and max_items must be > 0 "
				 "and the mode persistent or launch");
		return VYRE_E_INVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return VYRE_E_NOMEM;
	b->magic = BACKEND_MAGIC;
	b->cfg = *cfg;
	b->heaps = calloc(cfg->max_heaps, sizeof(*b->heaps));
	b->host_heaps = calloc(cfg->max_heaps, sizeof(*b->host_heaps));
	b->cls = calloc(cfg->max_items, sizeof(*b->cls));
	b->order_slot = calloc(cfg->max_items, sizeof(*b->order_slot));
	b->launches = calloc(cfg->max_items, sizeof(*b->launches));
	err = (b->heaps && b->host_heaps && b->cls && b->order_slot && b->launches) ? init_sync(b)
										    : VYRE_E_NOMEM;
	if (err) {
		if (why_len)
			snprintf(why, why_len, "cuda backend: out of host memory");
		destroy(b);
		return err;
	}
	b->heartbeat_ms = env_ms("VYRE_CUDA_HEARTBEAT_MS", HEARTBEAT_DEFAULT);
	b->watchdog_ms = env_ms("VYRE_CUDA_WATCHDOG_MS", WATCHDOG_DEFAULT);
	b->max_blocks = env_ms("VYRE_CUDA_MAX_BLOCKS", 0);
	b->inject = env_inject();
	err =
	    vyre_cuda_device_open(&b->dv, cfg->cuda_device, b->max_blocks, b->why, sizeof(b->why));
	if (!err) {
		b->heartbeat_cycles = (uint64_t)b->heartbeat_ms * b->dv.clock_khz;
		b->watchdog_cycles = (uint64_t)b->watchdog_ms * b->dv.clock_khz;
		/* a unit, a stage and a result per item covers batches of small items */
		uint64_t slab_bytes = (uint64_t)cfg->max_items * (sizeof(struct vyre_mk_unit) +
								  sizeof(struct vyre_mk_stage) +
								  sizeof(struct vyre_mk_result)) +
				      192;
		slab_bytes = slab_bytes < SLAB_MIN_BYTES ? SLAB_MIN_BYTES : slab_bytes;
		slab_bytes = slab_bytes > SLAB_INIT_MAX ? SLAB_INIT_MAX : slab_bytes;
		err = setup(b, slab_bytes);
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
	*out = b;
	return 0;
}

static int cuda_register_heap(struct vyre_backend *b, uint32_t heap, uint8_t *base, uint64_t bytes)
{
	int err;

	if (heap >= b->cfg.max_heaps || !base || bytes == 0 || b->host_heaps[heap].base ||
	    b->in_flight)
		return VYRE_E_INVAL;
	if (b->dead)
		return VYRE_E_DEVICE;
	err = vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why));
	if (err)
		return err;
	if (stop_kernel(b) != 0)
		return device_fault(b);
	b->host_heaps[heap].base = base;
	b->host_heaps[heap].bytes = bytes;
	err = register_one(b, heap);
	if (err)
		memset(&b->host_heaps[heap], 0, sizeof(b->host_heaps[heap]));
	return err;
}

static int cuda_unregister_heap(struct vyre_backend *b, uint32_t heap)
{
	if (heap >= b->cfg.max_heaps || !b->host_heaps[heap].base || b->in_flight)
		return VYRE_E_INVAL;
	if (!b->dead && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) == 0) {
		if (stop_kernel(b) != 0)
			device_fault(b);
		if (b->heaps[heap].registered) {
			CUresult r = b->dv.d->cuMemHostUnregister(b->host_heaps[heap].base);
			if (r != CUDA_SUCCESS)
				cu_note(b, "cuMemHostUnregister(heap)", r);
		}
	}
	memset(&b->host_heaps[heap], 0, sizeof(b->host_heaps[heap]));
	memset(&b->heaps[heap], 0, sizeof(b->heaps[heap]));
	return 0;
}

/* Make room for a batch that needs @need slab bytes; the old slab stays on failure. */
static int grow_slab(struct vyre_backend *b, uint64_t need)
{
	struct vyre_cuda_pinned fresh;
	uint64_t bytes = b->slab.bytes * 2 > need ? b->slab.bytes * 2 : need;
	int err;

	bytes = (bytes + 0xffff) & ~(uint64_t)0xffff;
	if (stop_kernel(b) != 0)
		return VYRE_E_DEVICE;
	err = vyre_cuda_pinned_alloc(&b->dv, &fresh, bytes, b->why, sizeof(b->why));
	if (err && bytes > need)
		err = vyre_cuda_pinned_alloc(&b->dv, &fresh, need, b->why, sizeof(b->why));
	if (err) {
		fprintf(stderr, "vyre-cuda: cannot grow the slab to %llu bytes: %s\n",
			(unsigned long long)need, b->why);
		return err;
	}
	vyre_cuda_pinned_free(&b->dv, &b->slab);
	b->slab = fresh;
	return 0;
}

static void apply_injection(struct vyre_backend *b)
{
	struct vyre_cuda_launch *l = &b->launches[0];

	if (!b->inject || b->lay.n_launches == 0)
		return;
	if (b->inject & VYRE_CUDA_INJECT_FAULT)
		l->flags |= VYRE_MK_LAUNCH_FAULT;
	if ((b->inject & VYRE_CUDA_INJECT_STALL) && b->dv.grid >= 2) {
		l->flags |= VYRE_MK_LAUNCH_STALL;
		l->n_blocks = l->n_blocks < 2 ? 2 : l->n_blocks;
	}
	b->inject = 0;
}

static int launch_all(struct vyre_backend *b)
{
	for (uint32_t i = 0; i < b->lay.n_launches; i++) {
		const struct vyre_cuda_launch *l = &b->launches[i];
		struct vyre_mk_launch_kargs a = {
		    .launch =
			{
			    .units = b->slab.dev + b->lay.units_off +
				     (uint64_t)l->first_unit * sizeof(struct vyre_mk_unit),
			    .stages = b->slab.dev + b->lay.stages_off +
				      (uint64_t)l->first_stage * sizeof(struct vyre_mk_stage),
			    .results = b->slab.dev + b->lay.results_off,
			    .n_stages = l->n_stages,
			    .n_units = l->n_units,
			    .n_blocks = l->n_blocks,
			    .flags = l->flags,
			},
		    .ctrl = b->ctrl_mem.dev,
		    .devstate = b->devstate,
		    .watchdog_cycles = b->watchdog_cycles,
		};
		void *params[] = {&a};
		CUresult r =
		    b->dv.d->cuLaunchKernel(b->dv.launch, l->n_blocks, 1, 1, VYRE_MK_THREADS, 1, 1,
					    0, b->stream, params, NULL);

		if (r != CUDA_SUCCESS) {
			cu_note(b, "cuLaunchKernel(vyre_mk_launch)", r);
			return device_fault(b);
		}
		b->stats.launches++;
		b->stats.bytes_to_device += sizeof(a);
	}
	return 0;
}

static int cuda_submit(struct vyre_backend *b, const struct vyre_exec_batch *batch)
{
	int err;

	if (b->in_flight) {
		note(b, "submit while the previous batch is still in flight");
		return VYRE_E_INVAL;
	}
	if (batch->n_items > b->cfg.max_items || batch->plan.n_order > b->cfg.max_items)
		return VYRE_E_INVAL;
	err = vyre_cuda_lower_measure(batch, b->heaps, b->cfg.max_heaps, b->cls, &b->lay);
	if (err)
		return err;
	if (b->dead) {
		vyre_cuda_fail_results(batch, VYRE_E_DEVICE);
		return VYRE_E_DEVICE;
	}
	err = vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why));
	if (err)
		return err;
	if (b->lay.bytes > b->slab.bytes) {
		err = grow_slab(b, b->lay.bytes);
		if (err == VYRE_E_DEVICE)
			return device_fault(b);
		if (err)
			return err;
	}
	vyre_cuda_lower_fill(batch, b->heaps, b->cls, &b->lay, b->slab.host, b->dv.grid,
			     b->order_slot, b->launches);
	b->immediate = b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT && !b->immediate_off &&
		       !b->inject && b->seq - ring_done(b) < VYRE_MK_RING_SLOTS &&
		       vyre_cuda_lower_immediate(batch, b->cls, &b->lay, &b->imm);
	apply_injection(b);
	b->batch = batch;
	b->in_flight = 1;
	b->next_post = 0;
	b->next_check_ns = now_ns() + CHECK_EVERY_NS;
	b->stats.batches++;
	if (b->lay.n_launches == 0) {
		finish(b);
		return 0;
	}
	if (b->cfg.cuda_mode == VYRE_CUDA_LAUNCH) {
		b->stats.bytes_to_device += slab_bytes(b);
		return launch_all(b);
	}
	if (!b->kernel_live && start_kernel(b, b->seq) != 0)
		return device_fault(b);
	b->seq_end = b->seq + b->lay.n_launches;
	if (b->immediate) {
		post_immediate(b);
		return 0;
	}
	b->stats.bytes_to_device += slab_bytes(b);
	post_launches(b);
	return 0;
}

/* The IMMEDIATE launch in flight is complete: its output is in the heap. */
static int immediate_done(struct vyre_backend *b)
{
	const uint64_t *slot =
	    b->cpl + (uint64_t)(b->imm_seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
	struct vyre_exec_result r;

	if (!vyre_cuda_immediate_complete(&b->imm, b->imm_seq, slot,
					  b->host_heaps[b->imm.heap].base, &r))
		return 0;
	b->stats.bytes_from_device +=
	    8ull * (VYRE_MK_CPL_HEADER_WORDS +
		    (b->imm.op == VYRE_OP_SUM || b->imm.op == VYRE_OP_MAX ? 0 : b->imm.count));
	/* the item's own record in the slab is stale: its outcome is r */
	vyre_cuda_lower_results(b->batch, b->order_slot, slab_records(b));
	b->batch->results[b->batch->plan.order[b->imm.order_pos]] = r;
	b->in_flight = 0;
	b->batch = NULL;
	return 1;
}

/* The batch in flight is complete, as far as the host can see without the driver. */
static int batch_done(struct vyre_backend *b)
{
	if (b->immediate)
		return immediate_done(b);
	if ((int32_t)(ring_done(b) - b->seq_end) < 0)
		return 0;
	finish(b);
	return 1;
}

static int poll_persistent(struct vyre_backend *b)
{
	uint32_t done, state;
	CUresult r;
	int64_t now;

	if (!b->immediate)
		post_launches(b);
	if (batch_done(b))
		return 1;
	/*
	 * The driver call costs about a microsecond, and even a clock read is
	 * worth skipping while the completion words are due any moment.
	 */
	if (++b->polls % CLOCK_EVERY)
		return 0;
	now = now_ns();
	if (now < b->next_check_ns)
		return 0;
	b->next_check_ns = now + CHECK_EVERY_NS;
	r = b->dv.d->cuStreamQuery(b->stream);
	if (r == CUDA_ERROR_NOT_READY)
		return 0;
	if (r != CUDA_SUCCESS) {
		cu_note(b, "cuStreamQuery(persistent kernel)", r);
		return device_fault(b);
	}
	/* the grid left: finished just before leaving, or stopped */
	b->kernel_live = 0;
	if (batch_done(b))
		return 1;
	done = ring_done(b);
	if ((int32_t)(done - b->seq_end) >= 0) {
		note(b, "the kernel counted launch %u done without posting its completion",
		     b->seq_end - 1);
		return device_fault(b);
	}
	state = __atomic_load_n(&b->ctrl->state, __ATOMIC_ACQUIRE);
	if (state == VYRE_MK_STATE_WATCHDOG)
		return watchdog_fault(b);
	if (state == VYRE_MK_STATE_HEARTBEAT) {
		b->stats.heartbeat_exits++;
		note(b,
		     "persistent kernel left: the host heartbeat was still for %u ms; "
		     "restarting it at doorbell %u",
		     b->heartbeat_ms, done);
	} else {
		note(b,
		     "persistent kernel left unexpectedly (state %u); restarting it at doorbell %u",
		     state, done);
	}
	if (start_kernel(b, done) != 0)
		return device_fault(b);
	return 0;
}

static int poll_launch(struct vyre_backend *b)
{
	CUresult r = b->dv.d->cuStreamQuery(b->stream);

	if (r == CUDA_ERROR_NOT_READY)
		return 0;
	if (r != CUDA_SUCCESS) {
		cu_note(b, "cuStreamQuery(launch)", r);
		return device_fault(b);
	}
	if (__atomic_load_n(&b->ctrl->state, __ATOMIC_ACQUIRE) == VYRE_MK_STATE_WATCHDOG)
		return watchdog_fault(b);
	finish(b);
	return 1;
}

static int cuda_poll(struct vyre_backend *b, int64_t timeout_ns)
{
	const int64_t start = now_ns();
	const struct timespec pause = {0, POLL_SLEEP_NS};
	uint32_t n = 0;

	if (!b->in_flight)
		return 1;
	if (vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) != 0)
		return device_fault(b);
	for (;;) {
		int r =
		    b->cfg.cuda_mode == VYRE_CUDA_PERSISTENT ? poll_persistent(b) : poll_launch(b);
		if (r)
			return r;
		if (++n % CLOCK_EVERY)
			continue;
		const int64_t now = now_ns();
		if (timeout_ns >= 0 && now - start >= timeout_ns)
			return 0;
		/* by time, not by count: a poll costs 10-50 ns depending on the path */
		if (now - start > SPIN_NS)
			nanosleep(&pause, NULL);
	}
}

static void cuda_shutdown(struct vyre_backend *b)
{
	if (b)
		destroy(b);
}

static const struct vyre_backend_ops cuda_ops = {
    .name = "cuda",
    .init = cuda_init,
    .register_heap = cuda_register_heap,
    .unregister_heap = cuda_unregister_heap,
    .submit = cuda_submit,
    .poll = cuda_poll,
    .usable = vyre_cuda_usable,
    .shutdown = cuda_shutdown,
};

const struct vyre_backend_ops *const vyre_cuda_backend = &cuda_ops;
const char vyre_cuda_unavailable[] = "";

/* ---- cuda_backend.h ------------------------------------------------------- */

static int is_cuda(const struct vyre_backend *b)
{
	return b && b->magic == BACKEND_MAGIC;
}

int vyre_cuda_get_stats(struct vyre_backend *b, struct vyre_cuda_stats *out)
{
	if (!is_cuda(b))
		return VYRE_E_INVAL;
	*out = b->stats;
	return 0;
}

const char *vyre_cuda_describe(struct vyre_backend *b)
{
	return is_cuda(b) ? b->desc : "not a CUDA backend";
}

int vyre_cuda_usable(struct vyre_backend *b)
{
	return is_cuda(b) && !b->dead;
}

const char *vyre_cuda_last_error(struct vyre_backend *b)
{
	return is_cuda(b) ? b->why : "not a CUDA backend";
}

int vyre_cuda_inject(struct vyre_backend *b, uint32_t what)
{
	if (!is_cuda(b) || (what & ~(VYRE_CUDA_INJECT_FAULT | VYRE_CUDA_INJECT_STALL)))
		return VYRE_E_INVAL;
	b->inject = what;
	return 0;
}

int vyre_cuda_set_immediate(struct vyre_backend *b, int on)
{
	if (!is_cuda(b))
		return VYRE_E_INVAL;
	b->immediate_off = !on;
	return 0;
}

int vyre_cuda_pause_heartbeat(struct vyre_backend *b, int paused)
{
	if (!is_cuda(b))
		return VYRE_E_INVAL;
	pthread_mutex_lock(&b->hb_lock);
	b->hb_paused = paused != 0;
	pthread_mutex_unlock(&b->hb_lock);
	return 0;
}
