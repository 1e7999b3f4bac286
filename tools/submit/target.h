/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/target.h - where a vyre-submit program runs: a vyred
 * connection through libvyre, or the in-process sequential oracle (--local).
 * Both speak the client API's contract (include/vyre/vyre.h).
 */
#ifndef VYRE_TOOLS_SUBMIT_TARGET_H
#define VYRE_TOOLS_SUBMIT_TARGET_H

#include <stdint.h>

#include "vyre/vyre.h"

struct vyre_submit_target {
	void *impl;
	int (*alloc)(void *impl, uint32_t bytes, uint32_t flags, uint32_t *handle); /* VYRE_BUF_* */
	void *(*ptr)(void *impl, uint32_t handle, uint32_t *bytes);
	/*
	 * @range: the item's byte ranges when @flags has VYRE_SQE_RANGE, else NULL;
	 * @stream: a DFA_REPORT's stream buffer, 0 for none (vyre_submit_stream)
	 */
	int (*submit)(void *impl, const struct vyre_work_item *it,
		      const struct vyre_item_range *range, uint32_t stream, uint64_t user_data,
		      uint32_t flags);
	int (*wait)(void *impl, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns);
	void (*close)(void *impl);
	/* named buffers, as vyre_buffer_create, vyre_buffer_open and vyre_buffer_list */
	int (*create)(void *impl, const char *name, uint32_t bytes, uint32_t flags,
		      uint32_t *handle);
	int (*open)(void *impl, const char *name, uint32_t *handle, uint32_t *bytes,
		    uint32_t *flags);
	int (*list)(void *impl, struct vyre_buffer_info *out, uint32_t max);
	/* a module op's number, as vyre_op_lookup; NULL where there are no module ops */
	int (*op_lookup)(void *impl, const char *name, uint32_t *op);
};

/*
 * vyre_submit_target_local - the sequential oracle over a private heap of
 * @heap_bytes: each item runs at submit, its CQE is queued for wait. Device
 * buffers take heap space too but have no mapping, as with vyred; names
 * follow vyred's rules within the program's own (private) domain. Returns
 * 0 or VYRE_E_NOMEM.
 */
int vyre_submit_target_local(uint64_t heap_bytes, struct vyre_submit_target *t);

struct vyre_connect_opts;

/* vyre_submit_target_client - connect to vyred; errors as vyre_connect(). */
int vyre_submit_target_client(const struct vyre_connect_opts *o, struct vyre_submit_target *t);

#endif /* VYRE_TOOLS_SUBMIT_TARGET_H */
