/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_client.h - a producer's connection to the vyred under test
 * with its input and output buffer, as most suites open it
 * (bench/harness_client.c).
 */
#ifndef VYRE_BENCH_HARNESS_CLIENT_H
#define VYRE_BENCH_HARNESS_CLIENT_H

#include <stdint.h>

#include "vyre/vyre.h"

/*
 * Connects with @o and allocates an input and an output buffer of @bytes
 * each: 0 with *@c, *@in and *@out set, or the error, with nothing left open.
 */
int vyre_bench_client_open(const struct vyre_connect_opts *o, uint32_t bytes,
			   struct vyre_client **c, uint32_t *in, uint32_t *out);

#endif /* VYRE_BENCH_HARNESS_CLIENT_H */
