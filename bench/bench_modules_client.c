/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_client.c - the "modules" suite's vyre side (see
 * bench_modules_client.h): submits the op by the number vyre_op_lookup
 * gave, each slot's output a buffer of its own; a CQE's user_data is the
 * slot.
 */
#include "bench_modules_client.h"

#include <stdio.h>
#include <stdlib.h>

#include "vyre/vyre.h"
#include "bench_modules_side.h"
#include "bench_peers_board.h"

#define HEAP_BYTES (1u << 20) /* each producer's private domain: 64 KiB x 2 and the outputs */

struct client {
	struct vyre_modules_side s;
	struct vyre_client *c;
	uint32_t op, in, table, out[VYRE_MODULES_SLOTS];
};

static int client_submit(struct vyre_modules_side *s, uint32_t slot, uint32_t param, uint32_t seq)
{
	struct client *v = (struct client *)s;
	const struct vyre_work_item it = {v->op, v->in, v->out[slot],
					  s->op->table ? v->table : param};
	const int rc = vyre_submit(v->c, &it, slot, 0);

	s->seq[slot] = seq;
	if (rc)
		snprintf(s->why, sizeof(s->why), "vyre_submit: %s", vyre_strerror(rc));
	return rc;
}

static int client_reap(struct vyre_modules_side *s, struct vyre_modules_done *d, uint32_t max,
		       int64_t timeout_ns)
{
	struct client *v = (struct client *)s;
	struct vyre_cqe cqes[VYRE_MODULES_SLOTS];
	const int n =
	    vyre_wait(v->c, cqes, max < VYRE_MODULES_SLOTS ? max : VYRE_MODULES_SLOTS, timeout_ns);

	if (n == VYRE_E_TIMEDOUT)
		return 0;
	if (n < 0)
		snprintf(s->why, sizeof(s->why), "vyre_wait: %s", vyre_strerror(n));
	for (int i = 0; i < n; i++)
		d[i] = (struct vyre_modules_done){(uint32_t)cqes[i].user_data, cqes[i].status,
						  cqes[i].result};
	return n;
}

static void client_close(struct vyre_modules_side *s)
{
	vyre_close(((struct client *)s)->c);
	free(s);
}

static const struct vyre_modules_side_ops client_ops = {client_submit, client_reap, client_close};

/* A buffer of @bytes in @v's domain and its host view; NULL after setting why. */
static void *buffer(struct client *v, uint32_t bytes, uint32_t *h)
{
	const int rc = vyre_buffer_alloc(v->c, (bytes + 3) & ~3u, 0, h);
	void *p = rc ? NULL : vyre_buffer_ptr(v->c, *h, NULL);

	if (!p)
		snprintf(v->s.why, sizeof(v->s.why), "vyre_buffer_alloc(%u): %s", bytes,
			 vyre_strerror(rc ? rc : VYRE_E_PROTO));
	return p;
}

/* Connects, looks the op up, allocates and fills; 0, else -1 with why in v->s. */
static int client_setup(struct client *v, const struct vyre_peers_producer *p, uint32_t slots,
			uint64_t seed)
{
	const struct vyre_connect_opts o = {
	    .socket_path = p->pe->l.socket, .domain = peers_domain(p), .heap_bytes = HEAP_BYTES};
	const char *name = v->s.op->name;
	int rc = vyre_connect(&o, &v->c);
	void *in = NULL, *table = NULL;

	if (!rc && (rc = vyre_op_lookup(v->c, name, &v->op)) != 0) {
		snprintf(v->s.why, sizeof(v->s.why), "vyre_op_lookup(%s): %s", name,
			 vyre_strerror(rc));
		return -1;
	}
	if (rc) {
		snprintf(v->s.why, sizeof(v->s.why), "vyre_connect: %s", vyre_strerror(rc));
		return -1;
	}
	in = buffer(v, v->s.bytes, &v->in);
	if (in && v->s.op->table)
		table = buffer(v, v->s.bytes, &v->table);
	if (!in || (v->s.op->table && !table))
		return -1;
	for (uint32_t i = 0; i < slots; i++)
		if (!(v->s.out[i] = buffer(v, v->s.op->out_bytes, &v->out[i])))
			return -1;
	vyre_modules_fill(v->s.op, in, table, v->s.bytes, seed);
	v->s.in = in;
	v->s.table = table;
	return 0;
}

int vyre_modules_client_open(struct vyre_modules_side **out, const struct vyre_peers_producer *p,
			     const struct vyre_modules_load *l, uint32_t slots, uint64_t seed,
			     char *why, size_t why_len)
{
	struct client *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	vyre_modules_side_init(&v->s, &client_ops, l);
	if (slots > VYRE_MODULES_SLOTS || client_setup(v, p, slots, seed)) {
		snprintf(why, why_len, "%s", v->s.why[0] ? v->s.why : "too many slots");
		client_close(&v->s);
		return -1;
	}
	*out = &v->s;
	return 0;
}
