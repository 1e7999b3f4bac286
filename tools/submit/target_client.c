/* SPDX-License-Identifier: MIT */
/* The vyred target: a thin adapter over libvyre. */
#include "target.h"

#include "vyre/vyre.h"

static int client_alloc(void *impl, uint32_t bytes, uint32_t flags, uint32_t *handle)
{
	return vyre_buffer_alloc(impl, bytes, flags, handle);
}

static void *client_ptr(void *impl, uint32_t handle, uint32_t *bytes)
{
	return vyre_buffer_ptr(impl, handle, bytes);
}

static int client_submit(void *impl, const struct vyre_work_item *it,
			 const struct vyre_item_range *range, uint32_t stream, uint64_t user_data,
			 uint32_t flags)
{
	if (stream)
		return vyre_submit_stream(impl, it, stream, (flags & VYRE_SQE_RANGE) ? range : NULL,
					  user_data, flags & ~VYRE_SQE_RANGE);
	if (flags & VYRE_SQE_RANGE)
		return vyre_submit_range(impl, it, range, user_data, flags & ~VYRE_SQE_RANGE);
	return vyre_submit(impl, it, user_data, flags);
}

static int client_wait(void *impl, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns)
{
	return vyre_wait(impl, out, max, timeout_ns);
}

static void client_close(void *impl)
{
	vyre_close(impl);
}

static int client_create(void *impl, const char *name, uint32_t bytes, uint32_t flags,
			 uint32_t *handle)
{
	return vyre_buffer_create(impl, name, bytes, flags, handle);
}

static int client_open(void *impl, const char *name, uint32_t *handle, uint32_t *bytes,
		       uint32_t *flags)
{
	return vyre_buffer_open(impl, name, handle, bytes, flags);
}

static int client_list(void *impl, struct vyre_buffer_info *out, uint32_t max)
{
	return vyre_buffer_list(impl, out, max);
}

static int client_op_lookup(void *impl, const char *name, uint32_t *op)
{
	return vyre_op_lookup(impl, name, op);
}

int vyre_submit_target_client(const struct vyre_connect_opts *o, struct vyre_submit_target *t)
{
	struct vyre_client *c;
	int rc = vyre_connect(o, &c);

	if (rc)
		return rc;
	*t = (struct vyre_submit_target){.impl = c,
					 .alloc = client_alloc,
					 .ptr = client_ptr,
					 .submit = client_submit,
					 .wait = client_wait,
					 .close = client_close,
					 .create = client_create,
					 .open = client_open,
					 .list = client_list,
					 .op_lookup = client_op_lookup};
	return 0;
}
