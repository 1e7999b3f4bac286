/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_gpus_count.c - how many GPUs the gpus suite can give a vyred
 * (bench_gpus.h). Built with the CUDA backend (VYRE_HAVE_CUDA, set by
 * bench/build.mk when nvcc was found); without it there are none.
 */
#include "bench_gpus.h"

#include <stdio.h>

#ifdef VYRE_HAVE_CUDA
#include <unistd.h>

#include "cuda_driver.h"
#include "harness.h"

#define MAX_ORDINALS 16

struct count {
	int n;
	int ordinals[MAX_ORDINALS];
	char why[256];
};

static int attribute(const struct vyre_cuda_driver *d, CUdevice dev, CUdevice_attribute a)
{
	int v = 0;

	return d->cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS && v;
}

static void count_here(struct count *c)
{
	const struct vyre_cuda_driver *d = vyre_cuda_driver_load(c->why, sizeof(c->why));
	int devices = 0;
	CUresult r;

	c->n = -1;
	if (!d)
		return;
	r = d->cuDeviceGetCount(&devices);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, c->why, sizeof(c->why), "cuDeviceGetCount", r);
		return;
	}
	c->n = 0;
	for (int i = 0; i < devices; i++) {
		CUdevice dev;

		if (d->cuDeviceGet(&dev, i) != CUDA_SUCCESS ||
		    !attribute(d, dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) ||
		    !attribute(d, dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING))
			continue;
		if (c->n < MAX_ORDINALS)
			c->ordinals[c->n] = i;
		c->n++;
	}
	if (c->n == 0)
		snprintf(c->why, sizeof(c->why),
			 "the driver counts %d devices, none can map host memory with unified "
			 "addressing",
			 devices);
}

int vyre_bench_gpus_usable(int *ordinals, int max, char *why, size_t why_len)
{
	struct count *c = vyre_bench_shared_alloc(sizeof(*c));
	int n = -1;

	if (!c) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	snprintf(c->why, sizeof(c->why), "the process asking the driver died");
	if (vyre_bench_cuda_loaded()) {
		count_here(c);
	} else {
		fflush(NULL);
		const pid_t pid = fork();

		if (pid == 0) {
			count_here(c);
			_exit(0);
		}
		if (pid < 0 || vyre_bench_reap(pid) != 0)
			c->n = -1;
	}
	n = c->n;
	for (int i = 0; i < n && i < max && i < MAX_ORDINALS; i++)
		ordinals[i] = c->ordinals[i];
	snprintf(why, why_len, "%s", c->why);
	vyre_bench_shared_free(c, sizeof(*c));
	return n;
}
#else
int vyre_bench_gpus_usable(int *ordinals, int max, char *why, size_t why_len)
{
	(void)ordinals;
	(void)max;
	snprintf(why, why_len, "vyre-bench was built without the CUDA backend (no nvcc)");
	return -1;
}
#endif
