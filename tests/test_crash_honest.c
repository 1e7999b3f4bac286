/* SPDX-License-Identifier: MIT */
/* The honest producer: a seeded item stream checked against the oracle. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "../gpu/ops.h"
#include "test_crash_honest.h"
#include "test_crash_proc.h"

#define N_DATA	   5u
#define TABLE	   N_DATA /* buffer index of the DFA table */
#define N_BUFS	   (N_DATA + 1)
#define WINDOW	   256u /* items in flight at most */
#define BAD_HANDLE 0xdeadbeefu

static const uint32_t data_bytes[N_DATA] = {16, 64, 128, 256, 256};

struct expect {
	int32_t status;
	uint64_t result;
	uint32_t fence;
	uint32_t done;
};

struct honest {
	const struct rel_honest_opts *o;
	struct rel_honest_result *r;
	struct vyre_client *c;
	uint32_t handle[N_BUFS];
	uint32_t bytes[N_BUFS];
	uint64_t off[N_BUFS];
	uint8_t *shadow;
	uint64_t shadow_bytes;
	struct expect win[WINDOW];
	uint64_t low; /* lowest item without a CQE */
	uint64_t rng;
	struct vyre_work_item last;
};

static int fail(struct honest *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct honest *h, const char *fmt, ...)
{
	if (h->r->why[0] == '\0') {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(h->r->why, sizeof(h->r->why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A 2-state DFA in its accepting state after each byte 'a'. */
static void write_table(uint8_t *t)
{
	uint32_t words[3] = {2, 0, 2};

	memcpy(t, words, sizeof(words));
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t ch = 0; ch < 256; ch++) {
			uint32_t next = ch == 'a';

			memcpy(t + 12 + 4 * (256 * s + ch), &next, 4);
		}
}

static int setup(struct honest *h)
{
	struct vyre_connect_opts co = {.socket_path = h->o->socket, .domain = h->o->domain};
	int rc = vyre_connect(&co, &h->c);
	uint64_t off = 0;

	if (rc != 0)
		return fail(h, "connect: %s", vyre_strerror(rc));
	for (uint32_t b = 0; b < N_BUFS; b++) {
		h->bytes[b] = b == TABLE ? (uint32_t)vyre_dfa_table_bytes(2) : data_bytes[b];
		h->off[b] = off;
		off += h->bytes[b];
		rc = vyre_buffer_alloc(h->c, h->bytes[b], 0, &h->handle[b]);
		if (rc != 0)
			return fail(h, "buffer_alloc: %s", vyre_strerror(rc));
	}
	h->shadow_bytes = off;
	h->shadow = calloc(1, off);
	if (!h->shadow)
		return fail(h, "out of memory");
	/* The client writes its table straight into the heap, as clients do. */
	uint8_t *table = vyre_buffer_ptr(h->c, h->handle[TABLE], NULL);

	if (!table)
		return fail(h, "buffer_ptr of the table");
	write_table(table);
	write_table(h->shadow + h->off[TABLE]);
	return 0;
}

static uint32_t pick(struct honest *h)
{
	return (uint32_t)(rel_rand(&h->rng) % N_DATA);
}

/* The next item, and the same item resolved against the shadow. */
static void next_item(struct honest *h, struct vyre_work_item *it, struct vyre_exec_item *ex,
		      int *valid, uint32_t *flags)
{
	uint64_t r = rel_rand(&h->rng);
	uint32_t op = VYRE_OP_FILL + (uint32_t)(r % 8), in = pick(h), out = pick(h);

	*flags = (r >> 8) % 8 == 0 ? VYRE_SQE_FENCE : 0;
	*flags |= (r >> 11) % 16 == 0 ? VYRE_SQE_NODEDUPE : 0;
	*valid = 1;
	if ((r >> 16) % 4 == 0 && h->last.op_handle) {
		*it = h->last; /* an exact repeat: what dedupe looks for */
	} else {
		/* now and then the table itself is overwritten: later scans must fail alike */
		if ((r >> 26) % 1024 == 0)
			out = TABLE;
		it->op_handle = op;
		it->input_handle = op == VYRE_OP_FILL ? 0 : h->handle[in];
		it->output_handle = h->handle[out];
		it->param = op == VYRE_OP_DFA_SCAN ? h->handle[TABLE] : (uint32_t)(r >> 32);
		if ((r >> 20) % 64 == 0)
			it->output_handle = BAD_HANDLE;
	}
	h->last = *it;
	memset(ex, 0, sizeof(*ex));
	ex->op = it->op_handle;
	ex->param = it->op_handle == VYRE_OP_DFA_SCAN ? 0 : it->param;
	for (uint32_t b = 0; b < N_BUFS; b++) {
		if (it->input_handle == h->handle[b]) {
			ex->in_off = h->off[b];
			ex->in_bytes = h->bytes[b];
		}
		if (it->output_handle == h->handle[b]) {
			ex->out_off = h->off[b];
			ex->out_bytes = h->bytes[b];
		}
	}
	if (it->op_handle == VYRE_OP_DFA_SCAN) {
		ex->table_off = h->off[TABLE];
		ex->table_bytes = h->bytes[TABLE];
	}
	if (it->output_handle == BAD_HANDLE)
		*valid = 0;
}

static int check_cqe(struct honest *h, const struct vyre_cqe *cqe)
{
	uint64_t seq = cqe->user_data;
	struct expect *e = &h->win[seq % WINDOW];

	if (seq < h->low || seq >= h->r->submitted || e->done)
		return fail(h, "CQE for item %" PRIu64 " that is not outstanding", seq);
	if (cqe->status != e->status || cqe->result != e->result)
		return fail(h, "item %" PRIu64 ": status %d result %" PRIu64 ", oracle %d %" PRIu64,
			    seq, cqe->status, cqe->result, e->status, e->result);
	if (e->fence && seq != h->low)
		return fail(h, "FENCE item %" PRIu64 " completed before item %" PRIu64, seq,
			    h->low);
	e->done = 1;
	h->r->completed++;
	h->r->deduped += (cqe->flags & VYRE_CQE_DEDUPED) != 0;
	while (h->low < h->r->submitted && h->win[h->low % WINDOW].done)
		h->low++;
	return 0;
}

/* Reaps at least one CQE (waiting up to the timeout) when @block, else what is ready. */
static int reap(struct honest *h, int block)
{
	struct vyre_cqe cqes[64];
	int n =
	    block ? vyre_wait(h->c, cqes, 64, h->o->wait_timeout_ns) : vyre_reap(h->c, cqes, 64);

	if (n == VYRE_E_TIMEDOUT)
		return fail(h, "no CQE within %" PRId64 " ms with %" PRIu64 " items outstanding",
			    h->o->wait_timeout_ns / 1000000, h->r->submitted - h->r->completed);
	if (n < 0)
		return fail(h, "reap: %s", vyre_strerror(n));
	for (int i = 0; i < n; i++)
		if (check_cqe(h, &cqes[i]) != 0)
			return -1;
	return 0;
}

static int submit_one(struct honest *h, const struct vyre_heap_view *shadow)
{
	struct vyre_work_item it;
	struct vyre_exec_item ex;
	uint32_t flags;
	int valid, rc;
	uint64_t seq = h->r->submitted;
	struct expect *e = &h->win[seq % WINDOW];

	while (seq - h->low >= WINDOW)
		if (reap(h, 1) != 0)
			return -1;
	next_item(h, &it, &ex, &valid, &flags);
	while ((rc = vyre_submit(h->c, &it, seq, flags)) == VYRE_E_AGAIN) {
		h->r->again++;
		if (reap(h, 1) != 0)
			return -1;
	}
	if (rc != 0)
		return fail(h, "submit: %s", vyre_strerror(rc));
	memset(e, 0, sizeof(*e));
	e->fence = (flags & VYRE_SQE_FENCE) != 0;
	e->status = valid ? vyre_exec_one(shadow, &ex, &e->result) : VYRE_E_INVAL;
	h->r->submitted++;
	return reap(h, 0);
}

static int compare_buffers(struct honest *h)
{
	for (uint32_t b = 0; b < N_BUFS; b++) {
		uint32_t bytes = 0;
		const uint8_t *p = vyre_buffer_ptr(h->c, h->handle[b], &bytes);

		if (!p || bytes != h->bytes[b])
			return fail(h, "buffer %u is gone", b);
		if (memcmp(p, h->shadow + h->off[b], bytes) != 0)
			return fail(h, "buffer %u differs from the oracle", b);
	}
	return 0;
}

int rel_honest_run(const struct rel_honest_opts *o, struct rel_honest_result *r)
{
	struct honest h;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&h, 0, sizeof(h));
	h.o = o;
	h.r = r;
	h.rng = o->seed;
	rc = setup(&h);
	if (rc == 0) {
		struct vyre_heap_view shadow = {h.shadow, h.shadow_bytes};

		while (rc == 0 && (o->items ? r->submitted < o->items : !*o->stop))
			rc = submit_one(&h, &shadow);
		while (rc == 0 && r->completed < r->submitted)
			rc = reap(&h, 1);
		if (rc == 0)
			rc = compare_buffers(&h);
	}
	vyre_close(h.c);
	free(h.shadow);
	return rc;
}

pid_t rel_honest_spawn(const char *socket, uint64_t seed, const volatile int *stop)
{
	fflush(stdout);
	pid_t pid = fork();

	if (pid == 0) {
		struct rel_honest_opts o = {
		    .socket = socket, .seed = seed, .stop = stop, .wait_timeout_ns = 20000000000ll};
		struct rel_honest_result r;
		int rc = rel_honest_run(&o, &r);

		printf("honest %d: %" PRIu64 " items: %s\n", (int)getpid(), r.submitted,
		       rc ? r.why : "oracle ok");
		fflush(stdout);
		_exit(rc ? 1 : 0);
	}
	return pid;
}
