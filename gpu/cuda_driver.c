/* SPDX-License-Identifier: MIT */
/* Loads the CUDA driver with dlopen once per process. */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define VYRE_STR(x)  #x
#define VYRE_XSTR(x) VYRE_STR(x)

static struct vyre_cuda_driver driver;
static const struct vyre_cuda_driver *loaded;
static char load_why[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static int load_symbols(void *dl)
{
	void *sym;

	/* VYRE_XSTR expands cuda.h's version macro first: "cuMemAlloc_v2". */
#define VYRE_CUDA_DRIVER_LOAD(f)                                                                   \
	sym = dlsym(dl, VYRE_XSTR(f));                                                             \
	if (!sym) {                                                                                \
		snprintf(load_why, sizeof(load_why),                                               \
			 "libcuda.so.1 lacks %s: the NVIDIA driver is older than CUDA 12",         \
			 VYRE_XSTR(f));                                                            \
		return -1;                                                                         \
	}                                                                                          \
	memcpy(&driver.f, &sym, sizeof(sym));
	VYRE_CUDA_DRIVER_FUNCS(VYRE_CUDA_DRIVER_LOAD)
#undef VYRE_CUDA_DRIVER_LOAD
	return 0;
}

static void load_driver(void)
{
	void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUresult r;

	if (!dl) {
		const char *e = dlerror();
		snprintf(load_why, sizeof(load_why),
			 "no NVIDIA driver: dlopen(libcuda.so.1) failed: %s", e ? e : "unknown");
		return;
	}
	if (load_symbols(dl) != 0)
		return;
	r = driver.cuInit(0);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(&driver, load_why, sizeof(load_why), "cuInit", r);
		return;
	}
	r = driver.cuDriverGetVersion(&driver.version);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(&driver, load_why, sizeof(load_why), "cuDriverGetVersion", r);
		return;
	}
	loaded = &driver;
}

const struct vyre_cuda_driver *vyre_cuda_driver_load(char *why, uint32_t why_len)
{
	pthread_once(&load_once, load_driver);
	if (!loaded && why_len)
		snprintf(why, why_len, "%s", load_why);
	return loaded;
}

void vyre_cuda_error(const struct vyre_cuda_driver *d, char *why, uint32_t why_len,
		     const char *call, CUresult r)
{
	const char *name = NULL, *text = NULL;

	if (!why_len)
		return;
	if (d && d->cuGetErrorName && d->cuGetErrorName(r, &name) != CUDA_SUCCESS)
		name = NULL;
	if (d && d->cuGetErrorString && d->cuGetErrorString(r, &text) != CUDA_SUCCESS)
		text = NULL;
	snprintf(why, why_len, "%s failed: %s (%s)", call, name ? name : "CUDA_ERROR_UNKNOWN",
		 text ? text : "no description");
	if (why_len > 1)
		why[why_len - 1] = '\0';
}
