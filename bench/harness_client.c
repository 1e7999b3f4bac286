/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_client.c - opens a producer's connection and its two
 * buffers, the setup every suite's producers begin with.
 */
#include "harness_client.h"

int vyre_bench_client_open(const struct vyre_connect_opts *o, uint32_t bytes,
			   struct vyre_client **c, uint32_t *in, uint32_t *out)
{
	int rc = vyre_connect(o, c);

	if (rc)
		return rc;
	rc = vyre_buffer_alloc(*c, bytes, 0, in);
	if (!rc)
		rc = vyre_buffer_alloc(*c, bytes, 0, out);
	if (rc)
		vyre_close(*c);
	return rc;
}
