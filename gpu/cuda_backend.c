/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend (docs/design.md section 8) as gpu/backend.h sees it: the
 * ops table, init (which picks the mode's table once) and destroy, the
 * heartbeat thread, and heap registration. The batch path is cuda_slots.c,
 * the modes cuda_persistent.c and cuda_launch.c, the shared state and
 * services cuda_core.c (see cuda_core.h for the parts and how slots and
 * lanes relate).
 *
 * Unregistering memory waits for the device to go idle, which a resident
 * kernel never does: the persistent kernel is stopped first and restarted
 * by the next poll that finds work.
 */
#include "cuda_backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_core.h"
#include "cuda_devmem.h"
#include "cuda_group.h"
#include "cuda_launch.h"
#include "cuda_persistent.h"
#include "cuda_slots.h"

#define SLAB_MIN_BYTES	  (256u << 10)
#define SLAB_INIT_MAX	  (64u << 20)
#define HEARTBEAT_DEFAULT 1000u
#define WATCHDOG_DEFAULT  10000u
#define MAX_SLOTS	  1024u

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

	if (!b->mode->heartbeat || b->hb_running)
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
	err = b->mode->plan(b);
	if (err)
		return err;
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
		err = b->mode->setup(b);
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

	b->mode->teardown(b);
	if (b->devstate)
		d->cuMemFree(b->devstate);
	b->devstate = 0;
	for (uint32_t i = 0; b->slots && i < b->n_slots; i++)
		vyre_cuda_pinned_free(&b->dv, &b->slots[i].slab);
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

/* What destroy does on the device; exclusive when other backends share it. */
static int release_device(struct vyre_backend *b, void *unused)
{
	(void)unused;
	if (b->dv.ctx && !b->dead && vyre_cuda_device_bind(&b->dv, b->why, sizeof(b->why)) == 0) {
		b->mode->drain(b);
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

/*
 * Where a slab batch's time went, for vyred's log (bench/RESULTS.md quotes
 * it): host first doorbell -> seen done, and of the pool's launches the
 * device's handed -> begun -> ended -> done posted; the one-block launches
 * the pollers' own blocks ran (VYRE_MK_POOL_SELF) have no such times, and
 * of those the module batches that rode in their doorbells
 * (VYRE_CUDA_MODULE_IMM) took no slab path at all.
 */
static void log_timing(const struct vyre_backend *b)
{
	const struct vyre_cuda_stats *st = &b->stats;
	const double n = st->pool_launches ? (double)st->pool_launches : 1.0;
	const double slab = st->slab_batches ? (double)st->slab_batches : 1.0;

	if (!st->slab_batches && !st->module_imm)
		return;
	fprintf(stderr,
		"vyre-cuda: pool timing: %llu slab batches, %.1f us doorbell to done; %llu "
		"launches on teams, mean us handed->begun %.1f, begun->ended %.1f, ended->done "
		"%.1f; %llu on the pollers' own blocks, %llu of them module batches in the "
		"doorbell\n",
		(unsigned long long)st->slab_batches, (double)st->slab_ns / 1000.0 / slab,
		(unsigned long long)st->pool_launches, (double)st->pool_ns[0] / 1000.0 / n,
		(double)st->pool_ns[1] / 1000.0 / n, (double)st->pool_ns[2] / 1000.0 / n,
		(unsigned long long)st->pool_self, (unsigned long long)st->module_imm);
}

static void destroy(struct vyre_backend *b)
{
	if (b->in_group)
		vyre_cuda_group_exclusive(b, release_device, NULL, 1);
	else
		release_device(b, NULL);
	log_timing(b);
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

	if (b->n_lanes) {
		int n = snprintf(lanes, sizeof(lanes), ", lanes %u", b->lanes[0].n_blocks);
		for (uint32_t l = 1; l < b->n_lanes && n > 0 && (size_t)n < sizeof(lanes); l++)
			n += snprintf(lanes + n, sizeof(lanes) - (size_t)n, "+%u",
				      b->lanes[l].n_blocks);
	}
	snprintf(b->desc, sizeof(b->desc),
		 "%s (sm_%u%u, %u SMs), grid %u x %u threads, driver %d.%d, %s mode, "
		 "%u slot(s)%s, heartbeat %u ms, watchdog %u ms",
		 dv->name, dv->cc_major, dv->cc_minor, dv->sm_count, dv->grid, VYRE_MK_THREADS,
		 dv->d->version / 1000, dv->d->version % 1000 / 10, b->mode->name, b->n_slots,
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
	if (cfg->max_heaps == 0 || cfg->max_heaps > VYRE_BACKEND_MAX_HEAPS || cfg->max_items == 0 ||
	    cfg->max_inflight > MAX_SLOTS ||
	    (cfg->cuda_mode != VYRE_CUDA_PERSISTENT && cfg->cuda_mode != VYRE_CUDA_LAUNCH)) {
		if (why_len)
			snprintf(why, why_len,
				 "cuda backend: max_heaps must be 1 to %u, max_items > 0, "
				 "max_inflight at most %u and the mode persistent or launch",
				 VYRE_BACKEND_MAX_HEAPS, MAX_SLOTS);
		return VYRE_E_INVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return VYRE_E_NOMEM;
	b->magic = BACKEND_MAGIC;
	b->cfg = *cfg;
	b->mode = cfg->cuda_mode == VYRE_CUDA_PERSISTENT ? &vyre_cuda_persistent_mode
							 : &vyre_cuda_launch_mode;
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
	if (!err && cfg->cuda_grid_parts > 1) {
		const uint32_t part = b->dv.grid / cfg->cuda_grid_parts;

		b->dv.grid = part ? part : 1;
	}
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

int vyre_cuda_usable(struct vyre_backend *b)
{
	return vyre_cuda_is_mine(b) && !b->dead;
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
    .link_modules = vyre_cuda_device_link_modules,
    .init = cuda_init,
    .register_heap = cuda_register_heap,
    .unregister_heap = cuda_unregister_heap,
    .alloc_device = vyre_cuda_alloc_device,
    .free_device = vyre_cuda_free_device,
    .device_free_bytes = vyre_cuda_device_free_bytes,
    .submit = vyre_cuda_submit,
    .reap = vyre_cuda_reap,
    .completion_fd = cuda_completion_fd,
    .usable = vyre_cuda_usable,
    .shutdown = cuda_shutdown,
};

const struct vyre_backend_ops *const vyre_cuda_backend = &cuda_ops;

const char vyre_cuda_unavailable[] = "";
