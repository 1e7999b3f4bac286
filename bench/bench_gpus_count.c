/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_gpus_count.c - how many GPUs the gpus suite can give a vyred
 * (bench_gpus_count.h). Built with the CUDA backend (VYRE_HAVE_CUDA, set by
 * bench/build.mk when nvcc was found); without it there are none.
 */
#include "bench_gpus_count.h"

#include <stdio.h>

#ifdef VYRE_HAVE_CUDA
#include <unistd.h>

#include "cuda_device.h"
#include "harness_procs.h"

#define MAX_ORDINALS 16

struct count {
	int n;
	int ordinals[MAX_ORDINALS];
	char why[320];
};

/* What vyred's --gpus all takes: the CUDA backend's own list. */
static void count_here(struct count *c)
{
	struct vyre_device_info info[MAX_ORDINALS];
	const int n = vyre_cuda_device_list(info, MAX_ORDINALS, c->why, sizeof(c->why));

	c->n = n < 0 ? -1 : n;
	for (int i = 0; i < n && i < MAX_ORDINALS; i++)
		c->ordinals[i] = (int)info[i].ordinal;
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
