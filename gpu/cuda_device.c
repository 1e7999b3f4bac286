/* SPDX-License-Identifier: MIT */
/* Opening a GPU: context, embedded module, kernels, occupancy. */
#include "cuda_device.h"

#include <stdio.h>
#include <string.h>

#include "cuda_abi.h"
#include "cuda_modules.h"
#include "vyre/abi.h"

int vyre_cuda_status(CUresult r)
{
	return r == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_E_NOMEM : VYRE_E_DEVICE;
}

static int attribute(const struct vyre_cuda_device *dv, CUdevice_attribute a, uint32_t *out,
		     char *why, uint32_t why_len)
{
	int v = 0;
	CUresult r = dv->d->cuDeviceGetAttribute(&v, a, dv->dev);

	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(dv->d, why, why_len, "cuDeviceGetAttribute", r);
		return VYRE_E_DEVICE;
	}
	*out = v < 0 ? 0 : (uint32_t)v;
	return 0;
}

static int query(struct vyre_cuda_device *dv, char *why, uint32_t why_len)
{
	const struct vyre_cuda_driver *d = dv->d;
	uint32_t can_map = 0, unified = 0;
	int count = 0;
	CUresult r = d->cuDeviceGetCount(&count);

	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, why, why_len, "cuDeviceGetCount", r);
		return VYRE_E_DEVICE;
	}
	if (dv->ordinal < 0 || dv->ordinal >= count) {
		snprintf(why, why_len, "no CUDA device %d: the driver sees %d", dv->ordinal, count);
		return VYRE_E_DEVICE;
	}
	r = d->cuDeviceGet(&dv->dev, dv->ordinal);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, why, why_len, "cuDeviceGet", r);
		return VYRE_E_DEVICE;
	}
	r = d->cuDeviceGetName(dv->name, (int)sizeof(dv->name), dv->dev);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, why, why_len, "cuDeviceGetName", r);
		return VYRE_E_DEVICE;
	}
	if (attribute(dv, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &dv->sm_count, why, why_len) ||
	    attribute(dv, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &dv->clock_khz, why, why_len) ||
	    attribute(dv, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &dv->cc_major, why,
		      why_len) ||
	    attribute(dv, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &dv->cc_minor, why,
		      why_len) ||
	    attribute(dv, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, &can_map, why, why_len) ||
	    attribute(dv, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, &unified, why, why_len))
		return VYRE_E_DEVICE;
	if (!can_map || !unified) {
		snprintf(why, why_len,
			 "%s cannot map host memory with unified addressing, which vyre needs",
			 dv->name);
		return VYRE_E_DEVICE;
	}
	if (dv->clock_khz == 0)
		dv->clock_khz = 1000000; /* the watchdog only needs an order of magnitude */
	return 0;
}

/*
 * Let the kernels that run units take dynamic shared memory beyond the
 * static 48 KiB (DFA tables, gpu/mk_dfa.cuh): up to the device's opt-in limit
 * less their static use, and VYRE_MK_DFA_SHARED_BYTES of it by default. A
 * device or driver that refuses gets none: DFA tables are then read from
 * global memory, which is only slower.
 */
static void dynamic_smem(struct vyre_cuda_device *dv)
{
	const struct vyre_cuda_driver *d = dv->d;
	CUfunction fns[] = {dv->persistent, dv->launch, dv->item};
	int optin = 0, used = 0, most = 0;

	dv->smem_dynamic = dv->smem_dynamic_max = 0;
	if (d->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
				    dv->dev) != CUDA_SUCCESS)
		return;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		if (d->cuFuncGetAttribute(&used, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fns[i]) !=
		    CUDA_SUCCESS)
			return;
		most = used > most ? used : most;
	}
	if (optin <= most)
		return;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (d->cuFuncSetAttribute(fns[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					  optin - most) != CUDA_SUCCESS)
			return;
	dv->smem_dynamic_max = (uint32_t)(optin - most);
	dv->smem_dynamic = dv->smem_dynamic_max < VYRE_MK_DFA_SHARED_BYTES
			       ? dv->smem_dynamic_max
			       : VYRE_MK_DFA_SHARED_BYTES;
}

static int load_module(struct vyre_cuda_device *dv, uint32_t max_blocks, char *why,
		       uint32_t why_len)
{
	const struct vyre_cuda_driver *d = dv->d;
	static const char *const names[] = {"vyre_mk_persistent", "vyre_mk_launch", "vyre_mk_item",
					    "vyre_mk_empty", "vyre_mk_pingpong"};
	CUfunction *fns[] = {&dv->persistent, &dv->launch, &dv->item, &dv->empty, &dv->pingpong};
	int per_sm = 0;
	uint32_t n_modules = 0;
	CUresult r;

	/* op modules (docs/design.md 6.7): the relocatable megakernel linked with their code */
	(void)vyre_op_modules_all(&n_modules);
	if (n_modules) {
		int err = vyre_cuda_modules_load(d, &dv->mod, why, why_len);

		if (err)
			return err;
	} else {
		r = d->cuModuleLoadData(&dv->mod, vyre_megakernel_fatbin);
		if (r != CUDA_SUCCESS) {
			dv->mod = NULL;
			vyre_cuda_error(d, why, why_len, "cuModuleLoadData(megakernel)", r);
			return VYRE_E_DEVICE;
		}
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		r = d->cuModuleGetFunction(fns[i], dv->mod, names[i]);
		if (r != CUDA_SUCCESS) {
			vyre_cuda_error(d, why, why_len, "cuModuleGetFunction", r);
			return VYRE_E_DEVICE;
		}
	}
	dynamic_smem(dv);
	if (n_modules && dv->smem_dynamic < VYRE_MK_MODULE_SMEM_MIN) {
		snprintf(why, why_len,
			 "%s grants the megakernel %u bytes of dynamic shared memory: op modules "
			 "need %u",
			 dv->name, dv->smem_dynamic, VYRE_MK_MODULE_SMEM_MIN);
		return VYRE_E_DEVICE;
	}
	/* the persistent and launch kernels share one body, so one occupancy serves both */
	r = d->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dv->persistent,
							   (int)VYRE_MK_THREADS, dv->smem_dynamic);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, why, why_len, "cuOccupancyMaxActiveBlocksPerMultiprocessor", r);
		return VYRE_E_DEVICE;
	}
	if (per_sm <= 0) {
		snprintf(why, why_len, "the megakernel cannot run %u threads per block on %s",
			 VYRE_MK_THREADS, dv->name);
		return VYRE_E_DEVICE;
	}
	dv->grid = (uint32_t)per_sm * dv->sm_count;
	if (max_blocks && dv->grid > max_blocks)
		dv->grid = max_blocks;
	return 0;
}

/*
 * Which open (struct vyre_cuda_device.opened) this thread last made current.
 * Binding happens twice a batch on the latency path and the driver call
 * costs more than the check; nothing else in a process that uses this
 * backend changes a thread's current context behind it. Keyed on the open,
 * not the context handle, which a later retain may reuse.
 */
static uint64_t opens;
static _Thread_local uint64_t bound_open;

int vyre_cuda_device_bind(const struct vyre_cuda_device *dv, char *why, uint32_t why_len)
{
	if (dv->ctx && bound_open == dv->opened)
		return 0;
	CUresult r = dv->d->cuCtxSetCurrent(dv->ctx);

	if (r != CUDA_SUCCESS) {
		bound_open = 0;
		vyre_cuda_error(dv->d, why, why_len, "cuCtxSetCurrent", r);
		return VYRE_E_DEVICE;
	}
	bound_open = dv->opened;
	return 0;
}

/*
 * Device @ordinal checked, its primary context retained and made current,
 * nothing loaded; on error nothing is held.
 */
static int attach(struct vyre_cuda_device *dv, int ordinal, char *why, uint32_t why_len)
{
	CUresult r;
	int err;

	memset(dv, 0, sizeof(*dv));
	dv->ordinal = ordinal;
	dv->opened = __atomic_add_fetch(&opens, 1, __ATOMIC_RELAXED);
	dv->d = vyre_cuda_driver_load(why, why_len);
	if (!dv->d)
		return VYRE_E_DEVICE;
	err = query(dv, why, why_len);
	if (err)
		return err;
	r = dv->d->cuDevicePrimaryCtxRetain(&dv->ctx, dv->dev);
	if (r != CUDA_SUCCESS) {
		dv->ctx = NULL;
		vyre_cuda_error(dv->d, why, why_len, "cuDevicePrimaryCtxRetain", r);
		return VYRE_E_DEVICE;
	}
	err = vyre_cuda_device_bind(dv, why, why_len);
	if (err)
		vyre_cuda_device_close(dv);
	return err;
}

int vyre_cuda_device_open(struct vyre_cuda_device *dv, int ordinal, uint32_t max_blocks, char *why,
			  uint32_t why_len)
{
	int err = attach(dv, ordinal, why, why_len);

	if (err)
		return err;
	err = load_module(dv, max_blocks, why, why_len);
	if (err)
		vyre_cuda_device_close(dv);
	return err;
}

int vyre_cuda_device_link_modules(int ordinal, const struct vyre_op_module_entry *e, uint32_t n,
				  char *why, uint32_t why_len)
{
	struct vyre_cuda_device dv;
	int err = attach(&dv, ordinal, why, why_len);

	if (err)
		return err;
	err = vyre_cuda_modules_try(dv.d, e, n, why, why_len);
	vyre_cuda_device_close(&dv);
	return err;
}

int vyre_cuda_device_list(struct vyre_device_info *out, uint32_t max, char *why, uint32_t why_len)
{
	const struct vyre_cuda_driver *d = vyre_cuda_driver_load(why, why_len);
	int count = 0, usable = 0;
	size_t said = 0;

	if (!d)
		return VYRE_E_DEVICE;
	CUresult r = d->cuDeviceGetCount(&count);

	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, why, why_len, "cuDeviceGetCount", r);
		return VYRE_E_DEVICE;
	}
	if (why_len)
		why[0] = '\0';
	for (int o = 0; o < count; o++) {
		struct vyre_cuda_device dv;
		char left[160];

		memset(&dv, 0, sizeof(dv));
		dv.d = d;
		dv.ordinal = o;
		if (query(&dv, left, sizeof(left)) != 0) {
			/* a device left out is named in @why, the rest still serve */
			if (why_len > said + 1) {
				int n =
				    snprintf(why + said, why_len - said, "%sdevice %d left out: %s",
					     said ? "; " : "", o, left);

				said = n < 0			    ? said
				       : said + (size_t)n < why_len ? said + (size_t)n
								    : why_len - 1;
			}
			continue;
		}
		if ((uint32_t)usable < max) {
			out[usable].ordinal = (uint32_t)o;
			/* a long marketing name is cut, not an error */
			snprintf(out[usable].name, sizeof(out[usable].name), "%.*s",
				 (int)sizeof(out[usable].name) - 1, dv.name);
		}
		usable++;
	}
	if (usable == 0 && why_len && !why[0])
		snprintf(why, why_len, "the driver sees no CUDA device");
	return usable ? usable : VYRE_E_DEVICE;
}

void vyre_cuda_device_close(struct vyre_cuda_device *dv)
{
	if (dv->mod)
		dv->d->cuModuleUnload(dv->mod);
	dv->mod = NULL;
	if (dv->ctx)
		dv->d->cuDevicePrimaryCtxRelease(dv->dev);
	dv->ctx = NULL;
}

int vyre_cuda_pinned_alloc(const struct vyre_cuda_device *dv, struct vyre_cuda_pinned *p,
			   uint64_t bytes, char *why, uint32_t why_len)
{
	CUresult r;

	memset(p, 0, sizeof(*p));
	if (bytes == 0 || bytes > SIZE_MAX) {
		snprintf(why, why_len, "pinned allocation of %llu bytes",
			 (unsigned long long)bytes);
		return VYRE_E_INVAL;
	}
	r = dv->d->cuMemHostAlloc(&p->host, (size_t)bytes,
				  CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
	if (r != CUDA_SUCCESS) {
		p->host = NULL;
		vyre_cuda_error(dv->d, why, why_len, "cuMemHostAlloc", r);
		return vyre_cuda_status(r);
	}
	r = dv->d->cuMemHostGetDevicePointer(&p->dev, p->host, 0);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(dv->d, why, why_len, "cuMemHostGetDevicePointer", r);
		dv->d->cuMemFreeHost(p->host);
		memset(p, 0, sizeof(*p));
		return VYRE_E_DEVICE;
	}
	p->bytes = bytes;
	memset(p->host, 0, (size_t)bytes);
	return 0;
}

void vyre_cuda_pinned_free(const struct vyre_cuda_device *dv, struct vyre_cuda_pinned *p)
{
	if (p->host && dv->ctx)
		dv->d->cuMemFreeHost(p->host);
	memset(p, 0, sizeof(*p));
}
