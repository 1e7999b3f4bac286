/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_modules.h - op modules on a GPU (docs/design.md 6.7): the
 * megakernel, built relocatable, linked at start with the registered
 * module ops' device code and a dispatch function written here as PTX, so
 * that a module op runs inside the resident grid and in launch mode alike.
 */
#ifndef VYRE_GPU_CUDA_MODULES_H
#define VYRE_GPU_CUDA_MODULES_H

#include <stdint.h>

#include "cuda_driver.h"
#include "op_modules.h"

/*
 * PTX text of `vyre_module_dispatch(index, args, result)`, which calls
 * e[index].device_fn (gpu/megakernel.cu calls it with the op's index in
 * vyre_op_modules_all()) and returns VYRE_E_INVAL for an index past @n.
 * *ptx is malloc'ed and NUL-terminated. 0, VYRE_E_INVAL (an op without a
 * device function, or a symbol that is not an identifier of at most 127
 * bytes) or VYRE_E_NOMEM, with why.
 */
int vyre_cuda_modules_dispatch_ptx(const struct vyre_op_module_entry *e, uint32_t n, char **ptx,
				   char *why, uint32_t why_len);

/*
 * The megakernel with every registered module op linked in, for the
 * current context's device, loaded as *mod (cuLinkCreate, the relocatable
 * megakernel, the dispatch PTX, each module's cubin or PTX once,
 * cuLinkComplete, cuModuleLoadData). 0, or VYRE_E_INVAL / VYRE_E_DEVICE /
 * VYRE_E_NOMEM with @why naming the module and op and quoting the linker's
 * log.
 */
int vyre_cuda_modules_load(const struct vyre_cuda_driver *d, CUmodule *mod, char *why,
			   uint32_t why_len);

/*
 * The same for the @n module ops of @e instead of the registry's, in the
 * current context, the image unloaded again: whether they link (0), or why
 * not.
 */
int vyre_cuda_modules_try(const struct vyre_cuda_driver *d, const struct vyre_op_module_entry *e,
			  uint32_t n, char *why, uint32_t why_len);

#endif /* VYRE_GPU_CUDA_MODULES_H */
