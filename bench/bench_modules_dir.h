/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_dir.h - the "modules" suite's ops directory (bench/
 * bench_modules_dir.c): the example modules copied from the build next to
 * vyre-bench into a temporary directory vyred --ops-dir accepts.
 */
#ifndef VYRE_BENCH_MODULES_DIR_H
#define VYRE_BENCH_MODULES_DIR_H

#include <stddef.h>

struct vyre_modules_dir {
	char path[64];
	char src[3840]; /* the examples it copied: DIR/examples/ops of vyre-bench's DIR */
	int stand_in; /* 1: a module had no PTX (a build without nvcc); a stand-in text is there */
};

/*
 * Copies each example's manifest, host object and PTX (mode 0644) from
 * examples/ops/NAME/ beside the vyre-bench binary (a build tree's
 * $(BUILD)/examples/ops, a GPU bundle's examples/ops) into a new
 * temporary directory (mode 0755). A missing PTX gets a stand-in text
 * when @ptx_optional (the cpu backend never reads it). 0, else -1 and why
 * (nothing is left behind).
 */
int vyre_modules_dir_stage(struct vyre_modules_dir *d, int ptx_optional, char *why, size_t why_len);

/* Removes the directory and its files. */
void vyre_modules_dir_remove(struct vyre_modules_dir *d);

#endif /* VYRE_BENCH_MODULES_DIR_H */
