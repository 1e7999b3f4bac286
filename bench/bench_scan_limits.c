/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_limits.c - the scan suite's "limit" rows, what the
 * hardware allows: pinned host to device copy and device to device copy
 * bandwidth on device 0. Built with the CUDA backend (VYRE_HAVE_CUDA, set by
 * bench/build.mk when nvcc was found); they are measured in a forked child
 * after every producer has gone, since CUDA does not survive fork.
 */
#include <stdio.h>

#include "bench_scan_job.h"
#include "bench_scan_limits.h"

#ifdef VYRE_HAVE_CUDA
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "cuda_driver.h"
#include "harness_procs.h"

#define SCAN_STR(x)  #x
#define SCAN_XSTR(x) SCAN_STR(x)

struct limits {
	double h2d, hbm; /* GB/s */
	int ok;
	char why[256];
};

/* The copies the driver table does not carry, from the library it loaded. */
struct copies {
	__typeof__(cuMemcpyHtoDAsync) *h2d;
	__typeof__(cuMemcpyDtoDAsync) *d2d;
};

static int load_copies(struct copies *cp, struct limits *l)
{
	void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *h2d = dl ? dlsym(dl, SCAN_XSTR(cuMemcpyHtoDAsync)) : NULL;
	void *d2d = dl ? dlsym(dl, SCAN_XSTR(cuMemcpyDtoDAsync)) : NULL;

	if (!h2d || !d2d) {
		snprintf(l->why, sizeof(l->why), "libcuda.so.1 lacks %s or %s",
			 SCAN_XSTR(cuMemcpyHtoDAsync), SCAN_XSTR(cuMemcpyDtoDAsync));
		return -1;
	}
	memcpy(&cp->h2d, &h2d, sizeof(h2d));
	memcpy(&cp->d2d, &d2d, sizeof(d2d));
	return 0;
}

enum copy_kind { COPY_H2D, COPY_D2D };

/*
 * GB/s of @bytes copies (@kind) on @st, after one untimed copy: batches of 4
 * until --seconds (at least 3 copies, at most ROW_CAP_NS); @moved is the
 * bytes a copy counts for. -1 on a CUDA error.
 */
static double copy_rate(const struct vyre_bench_ctx *ctx, const struct vyre_cuda_driver *d,
			const struct copies *cp, enum copy_kind kind, CUdeviceptr dst,
			CUdeviceptr src_dev, const void *src_host, size_t bytes, double moved,
			CUstream st, struct limits *l)
{
	uint64_t copies = 0, t0 = 0, t = 0;

	for (int warm = 1; warm || t - t0 < ctx->seconds * 1e9 || copies < 3; warm = 0) {
		const int batch = warm ? 1 : 4;
		CUresult r = CUDA_SUCCESS;

		for (int i = 0; i < batch && r == CUDA_SUCCESS; i++)
			r = kind == COPY_H2D ? cp->h2d(dst, src_host, bytes, st)
					     : cp->d2d(dst, src_dev, bytes, st);
		if (r == CUDA_SUCCESS)
			r = d->cuStreamSynchronize(st);
		if (r != CUDA_SUCCESS) {
			vyre_cuda_error(d, l->why, sizeof(l->why), "a copy", r);
			return -1;
		}
		t = vyre_bench_now_ns();
		if (warm)
			t0 = t;
		else
			copies += (uint64_t)batch;
		if (t - t0 > ROW_CAP_NS)
			break;
	}
	return moved * (double)copies / (double)(t - t0);
}

#define H2D_BYTES ((size_t)256 * MIB)
#define HBM_BYTES ((size_t)GIB)

static void limits_measure(const struct vyre_bench_ctx *ctx, struct limits *l)
{
	const struct vyre_cuda_driver *d = vyre_cuda_driver_load(l->why, sizeof(l->why));
	struct copies cp;
	CUdevice dev;
	CUcontext cx = NULL;
	CUstream st = NULL;
	CUdeviceptr a = 0, b = 0;
	void *host = NULL;
	CUresult r;

	if (!d || load_copies(&cp, l))
		return;
	if ((r = d->cuDeviceGet(&dev, 0)) != CUDA_SUCCESS ||
	    (r = d->cuDevicePrimaryCtxRetain(&cx, dev)) != CUDA_SUCCESS ||
	    (r = d->cuCtxSetCurrent(cx)) != CUDA_SUCCESS ||
	    (r = d->cuStreamCreate(&st, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS ||
	    (r = d->cuMemHostAlloc(&host, H2D_BYTES, 0)) != CUDA_SUCCESS ||
	    (r = d->cuMemAlloc(&a, HBM_BYTES)) != CUDA_SUCCESS ||
	    (r = d->cuMemAlloc(&b, HBM_BYTES)) != CUDA_SUCCESS) {
		vyre_cuda_error(d, l->why, sizeof(l->why), "setting up device 0", r);
	} else {
		memset(host, 0x5a, H2D_BYTES);
		l->h2d = copy_rate(ctx, d, &cp, COPY_H2D, a, 0, host, H2D_BYTES, (double)H2D_BYTES,
				   st, l);
		/* a device copy reads and writes every byte */
		l->hbm = l->h2d < 0 ? -1
				    : copy_rate(ctx, d, &cp, COPY_D2D, b, a, NULL, HBM_BYTES,
						2.0 * (double)HBM_BYTES, st, l);
		l->ok = l->h2d > 0 && l->hbm > 0;
	}
	if (b)
		d->cuMemFree(b);
	if (a)
		d->cuMemFree(a);
	if (host)
		d->cuMemFreeHost(host);
	if (st)
		d->cuStreamDestroy(st);
	if (cx)
		d->cuDevicePrimaryCtxRelease(dev);
}

int vyre_scan_limits_rows(struct vyre_bench_ctx *ctx)
{
	struct limits *l = vyre_bench_shared_alloc(sizeof(*l));

	if (!l)
		return -1;
	fflush(NULL);
	const pid_t pid = fork();

	if (pid == 0) {
		limits_measure(ctx, l);
		_exit(0);
	}
	if (pid > 0 && vyre_bench_reap(pid) == 0 && l->ok) {
		vyre_bench_report(ctx, SUITE, "limit h2d-copy", "GB/s", l->h2d, "GB/s");
		vyre_bench_report(ctx, SUITE, "limit hbm", "GB/s", l->hbm, "GB/s");
	} else {
		fprintf(stderr, "scan: limit rows skipped: %s\n",
			l->why[0] ? l->why : "the measuring process died");
	}
	vyre_bench_shared_free(l, sizeof(*l));
	return 0; /* the limits are context, not the suite's subject: their absence fails nothing */
}

#else

int vyre_scan_limits_rows(struct vyre_bench_ctx *ctx)
{
	(void)ctx;
	fprintf(stderr, "scan: limit rows skipped: vyre-bench was built without CUDA (no nvcc)\n");
	return 0;
}

#endif /* VYRE_HAVE_CUDA */
