/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/producer.h - what the example op modules' C producers
 * (examples/ops/NAME/producer.c) share: connect to vyred, look an op up by
 * name (vyre_op_lookup: the number is this vyred's), a buffer filled from
 * bytes, one item submitted and its completion waited for. Each producer
 * is a main() over these; the module must be in vyred's ops directory
 * (vyre_op_module(7)).
 */
#ifndef VYRE_EXAMPLE_PRODUCER_H
#define VYRE_EXAMPLE_PRODUCER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"

/* What the producers hash, count and checksum: 44 bytes, a multiple of 4 as buffers are. */
#define PRODUCER_TEXT "The quick brown fox jumps over the lazy dog."

/*
 * Connects to the socket argv[1] names (else $VYRE_SOCKET or the default)
 * and looks up @name; exits when either fails.
 */
static struct vyre_client *producer_start(int argc, char **argv, const char *name, uint32_t *op)
{
	struct vyre_connect_opts o = {.socket_path = argc > 1 ? argv[1] : NULL};
	struct vyre_client *c = NULL;
	int rc = vyre_connect(&o, &c);

	if (rc != 0) {
		fprintf(stderr, "%s producer: connect: %s\n", name, vyre_strerror(rc));
		exit(1);
	}
	rc = vyre_op_lookup(c, name, op);
	if (rc != 0) {
		fprintf(stderr, "%s producer: op %s: %s%s\n", name, name, vyre_strerror(rc),
			rc == VYRE_E_NOENT ? " (is the module in vyred's ops directory?)" : "");
		vyre_close(c);
		exit(1);
	}
	printf("op %s is number %#x on this vyred\n", name, *op);
	return c;
}

/* A buffer of @bytes (a multiple of 4) holding @n bytes of @src, the rest 0; exits on failure. */
static uint32_t producer_buffer(struct vyre_client *c, uint32_t bytes, const void *src, size_t n)
{
	uint32_t h = 0;
	const int rc = vyre_buffer_alloc(c, bytes, 0, &h);
	uint8_t *p = rc == 0 ? vyre_buffer_ptr(c, h, NULL) : NULL;

	if (!p) {
		fprintf(stderr, "producer: a buffer of %u bytes: %s\n", bytes, vyre_strerror(rc));
		vyre_close(c);
		exit(1);
	}
	memset(p, 0, bytes);
	if (n)
		memcpy(p, src, n < bytes ? n : bytes);
	return h;
}

/* Runs one item and waits for its completion: its result, or exits on an error. */
static uint64_t producer_run(struct vyre_client *c, uint32_t op, uint32_t in, uint32_t out,
			     uint32_t param)
{
	const struct vyre_work_item it = {op, in, out, param};
	struct vyre_cqe cqe = {0};
	int rc = vyre_submit(c, &it, 1, 0);

	if (rc == 0)
		rc = vyre_wait(c, &cqe, 1, 10 * 1000000000ll); /* the one item in flight */
	if (rc == 1 && cqe.status == 0)
		return cqe.result;
	fprintf(stderr, "producer: item of op %#x: %s\n", op,
		vyre_strerror(rc == 1 ? cqe.status : rc));
	vyre_close(c);
	exit(1);
}

#endif /* VYRE_EXAMPLE_PRODUCER_H */
