/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_client.h - the "modules" suite's vyre side (bench/
 * bench_modules_client.c): a client of the vyred under test.
 */
#ifndef VYRE_BENCH_MODULES_CLIENT_H
#define VYRE_BENCH_MODULES_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct vyre_modules_side;
struct vyre_modules_load;
struct vyre_peers_producer;

/*
 * A client of @p's vyred in @p's domain: the op of @l looked up by name
 * (vyre_op_lookup), an input (and a table) of @l->bytes filled from @seed
 * and @slots outputs, buffers of its domain. 0, else -1 and why.
 */
int vyre_modules_client_open(struct vyre_modules_side **out, const struct vyre_peers_producer *p,
			     const struct vyre_modules_load *l, uint32_t slots, uint64_t seed,
			     char *why, size_t why_len);

#endif /* VYRE_BENCH_MODULES_CLIENT_H */
