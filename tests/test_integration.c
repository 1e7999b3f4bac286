/* SPDX-License-Identifier: MIT */
/*
 * Multi-process integration: a real vyred, 8 producer processes each with a
 * private domain and a connection to one shared domain, random items over
 * both (including invalid ones: unknown op, unknown handle, another
 * domain's handle, short output, malformed DFA tables written by earlier
 * items, byte ops over valid and malformed counted buffers, decode -> map ->
 * counted scan chains). Checks: every CQE arrives exactly once, FENCE CQEs follow every
 * earlier CQE of their client, vyred's acceptance order keeps each client's
 * submission order, and every status, result and final buffer equals
 * vyre_exec_sequential run in this process over the same items in the order
 * of vyred's accept log. A quarter of the items name byte ranges of their
 * buffers (VYRE_SQE_RANGE, docs/design.md 6.6), some of them bad.
 *
 * Every domain also has device buffers (VYRE_BUF_DEVICE, docs/design.md
 * section 6.2): two data buffers and a DFA table that items copy host
 * tables into, read, write and scan with; the oracle keeps them like any
 * other buffer. At the end each producer copies its private device buffers
 * into heap buffers (items like the others), which are compared too.
 *
 * It runs four times: with vyred's defaults, with many small batches in
 * flight at once (--inflight 8 --max-batch 24 --min-share 2), where items
 * of one domain meet hazards against batches that still run, and where
 * the CPU backend runs each group's items backwards
 * (VYRE_CPU_GROUP_ORDER=reverse: a plan with a hazard inside a group then
 * gives a wrong result instead of the right one by luck of order), with three
 * event loops, and over two GPUs of two loops each, the domains placed on
 * both: --gpus $VYRE_TEST_GPUS (default 0,1), CPU backend instances
 * labelled as GPUs (docs/design.md 8.8) unless $VYRE_TEST_BACKEND is cuda
 * (tests/test_cuda_e2e runs it so, with 0,0 on a one-GPU host).
 *
 * 8 x 100000 items (the size); VYRE_TEST_SCALE=N multiplies them.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gpu/backend.h"
#include "test_counted.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define PRODUCERS     8u
#define BASE_ITEMS    100000u
#define N_DATA	      8u
#define N_TABLES      2u
#define N_DEV	      3u /* device buffers: two data buffers, then a DFA table */
#define DEV0	      (N_DATA + N_TABLES)
#define DEV_TABLE     (DEV0 + N_DEV - 1)
#define MIRROR0	      (DEV0 + N_DEV) /* heap buffers the device buffers are copied into */
#define N_BUFS	      (MIRROR0 + N_DEV)
#define WAIT_NS	      (60ll * 1000000000ll)
#define CHILD_LIMIT_S 900u
#define ORACLE_ALIGN  256u

static const uint32_t data_sizes[N_DATA] = {0, 4, 12, 64, 256, 512, 1024, 4096};

struct buf {
	uint32_t handle;
	uint32_t bytes;
};

/* One domain's buffers as the test knows them: data buffers, then DFA tables. */
struct domain_bufs {
	struct buf b[N_BUFS];
	uint8_t *initial[N_BUFS];
};

struct rec {
	struct vyre_work_item item;
	struct vyre_item_range range; /* with VYRE_SQE_RANGE in flags */
	uint32_t flags;
	uint32_t received;
	struct vyre_cqe cqe;
};

static struct domain_bufs shared_bufs;
static struct vyre_test_daemon daemon_;

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint32_t table_states(uint32_t i)
{
	return 1 + i % 4; /* 1..4 states */
}

/* A random but valid DFA table of @n states. */
static void make_table(uint8_t *t, uint32_t n, uint64_t *rng)
{
	uint32_t words = (uint32_t)(vyre_dfa_table_bytes(n) / 4);
	uint32_t *w = calloc(words, 4);
	uint32_t accept_words = (n + 31) / 32;

	w[0] = n;
	w[1] = (uint32_t)(rng_next(rng) % n);
	w[2] = (uint32_t)rng_next(rng) & ((1u << n) - 1);
	for (uint32_t i = 0; i < 256 * n; i++)
		w[2 + accept_words + i] = (uint32_t)(rng_next(rng) % n);
	memcpy(t, w, (size_t)words * 4);
	free(w);
}

static const uint32_t dev_sizes[N_DEV - 1] = {256, 4096};

static int is_device(uint32_t i)
{
	return i >= DEV0 && i < MIRROR0;
}

static uint32_t buf_bytes(uint32_t i)
{
	if (i >= MIRROR0)
		i -= N_DEV;
	if (i == DEV_TABLE) /* the larger host table fits: either may be copied in */
		return (uint32_t)vyre_dfa_table_bytes(table_states(N_DATA + N_TABLES - 1));
	if (i >= DEV0)
		return dev_sizes[i - DEV0];
	return i < N_DATA ? data_sizes[i] : (uint32_t)vyre_dfa_table_bytes(table_states(i));
}

/* Allocate and fill a domain's buffers; the initial contents are kept for the oracle. */
static int make_buffers(struct vyre_client *c, struct domain_bufs *db, uint64_t seed)
{
	uint64_t rng = seed;

	for (uint32_t i = 0; i < N_BUFS; i++) {
		uint32_t bytes = buf_bytes(i);
		int rc = vyre_buffer_alloc(c, bytes, is_device(i) ? VYRE_BUF_DEVICE : 0,
					   &db->b[i].handle);
		uint32_t got = 0;

		if (rc != 0)
			FAIL("alloc %u bytes: %s", bytes, vyre_strerror(rc));
		db->b[i].bytes = bytes;
		uint8_t *p = vyre_buffer_ptr(c, db->b[i].handle, &got);

		db->initial[i] = calloc(1, bytes ? bytes : 1);
		if (is_device(i)) {
			/* zero-filled and not mappable: only items see it */
			if (p || got != bytes)
				FAIL("buffer_ptr of a device buffer: %p, %u bytes", (void *)p, got);
			continue;
		}

		if (!p || got != bytes)
			FAIL("buffer_ptr of a fresh buffer");
		for (uint32_t j = 0; j < bytes; j++)
			if (p[j] != 0)
				FAIL("new buffer not zero-filled");
		if (i < N_DATA) {
			for (uint32_t j = 0; j < bytes; j++)
				p[j] = (uint8_t)(rng_next(&rng) % 7 == 0 ? 'a' : rng_next(&rng));
			/* counted bytes for the byte ops, valid or malformed */
			if (bytes >= 4 && rng_next(&rng) % 2)
				test_counted_fill(p, bytes, rng_next(&rng));
		} else if (i < DEV0)
			make_table(p, table_states(i), &rng);
		memcpy(db->initial[i], p, bytes);
	}
	return 0;
}

/* A data buffer: in the heap, or one of the device data buffers. */
static uint32_t pick_data(uint64_t *rng, const struct domain_bufs *db)
{
	uint32_t i = (uint32_t)(rng_next(rng) % (N_DATA + N_DEV - 1));

	return db->b[i < N_DATA ? i : DEV0 + i - N_DATA].handle;
}

/* A DFA table: one of the heap tables or the device table. */
static uint32_t pick_table(uint64_t *rng, const struct domain_bufs *db)
{
	uint32_t i = (uint32_t)(rng_next(rng) % (N_TABLES + 1));

	return db->b[i < N_TABLES ? N_DATA + i : DEV_TABLE].handle;
}

/* A random item for a connection whose domain is @own (@other is another domain). */
/* Bytes of @own's buffer @handle; 64 for a handle it does not have (the item fails anyway). */
static uint32_t bytes_of(const struct domain_bufs *own, uint32_t handle)
{
	for (uint32_t i = 0; i < N_BUFS; i++)
		if (own->b[i].handle == handle)
			return own->b[i].bytes;
	return 64;
}

/* A byte range of a buffer of @bytes (docs/design.md 6.6); one in 32 is out of bounds. */
static void random_range(uint64_t *rng, uint32_t bytes, uint64_t *off, uint32_t *len)
{
	const uint32_t words = bytes / 4, first = (uint32_t)(rng_next(rng) % (words + 1));

	*off = 4 * (uint64_t)first;
	*len = 4 * (uint32_t)(rng_next(rng) % (words - first + 1));
	if (rng_next(rng) % 32 == 0)
		*len += 4;
}

/* Make @r an item on byte ranges of its buffers: the same range in place now and then. */
static void random_ranges(uint64_t *rng, const struct domain_bufs *own, struct rec *r)
{
	const struct vyre_work_item *it = &r->item;
	const int mask = vyre_op_operands(it->op_handle);

	r->flags |= VYRE_SQE_RANGE;
	r->range = (struct vyre_item_range){0};
	if (mask <= 0)
		return;
	if (mask & VYRE_OPERAND_IN)
		random_range(rng, bytes_of(own, it->input_handle), &r->range.in_offset,
			     &r->range.in_length);
	if (mask & VYRE_OPERAND_OUT)
		random_range(rng, bytes_of(own, it->output_handle), &r->range.out_offset,
			     &r->range.out_length);
	if ((mask & VYRE_OPERAND_IN) && it->input_handle == it->output_handle &&
	    rng_next(rng) % 2) {
		r->range.out_offset = r->range.in_offset;
		r->range.out_length = r->range.in_length;
	}
}

static void random_item(uint64_t *rng, const struct domain_bufs *own,
			const struct domain_bufs *other, struct rec *r)
{
	uint32_t kind = (uint32_t)(rng_next(rng) % 1000);
	struct vyre_work_item *it = &r->item;
	uint32_t x = (uint32_t)rng_next(rng);

	memset(r, 0, sizeof(*r));
	r->flags = x % 8 == 0 ? VYRE_SQE_FENCE : (x % 8 == 1 ? VYRE_SQE_NODEDUPE : 0);
	it->op_handle = 1 + (uint32_t)(rng_next(rng) % (VYRE_OP_COUNT - 1));
	it->input_handle = pick_data(rng, own);
	it->output_handle = pick_data(rng, own);
	it->param = rng_next(rng) % 2 ? (uint32_t)(rng_next(rng) % 16) : (uint32_t)rng_next(rng);
	if (kind < 10) {
		it->op_handle = VYRE_OP_COUNT + (uint32_t)(rng_next(rng) % 100); /* unknown op */
	} else if (kind < 20) {
		it->input_handle = 0x7ff00000u | (uint32_t)(rng_next(rng) % 4096); /* unknown */
		it->op_handle = VYRE_OP_COPY;
	} else if (kind < 30) {
		it->input_handle = pick_data(rng, other); /* another domain's handle */
		it->op_handle = VYRE_OP_XOR;
	} else if (kind < 40) {
		it->op_handle = VYRE_OP_SUM;
		it->output_handle = own->b[0].handle; /* 0 bytes: too short */
	} else if (kind < 50) {
		it->op_handle = VYRE_OP_NOP;
		it->input_handle = it->output_handle = 0;
	} else if (kind < 55) {
		/* Scribble over a table: later scans with it fail at execution. */
		it->output_handle = pick_table(rng, own);
	} else if (kind < 75) {
		/* A host table into the device table: it becomes valid (again). */
		it->op_handle = VYRE_OP_COPY;
		it->input_handle = own->b[N_DATA + rng_next(rng) % N_TABLES].handle;
		it->output_handle = own->b[DEV_TABLE].handle;
	} else if (kind < 150) {
		it->output_handle = it->input_handle; /* in place */
	}
	if (it->op_handle == VYRE_OP_FILL)
		it->input_handle = 0;
	if (it->op_handle == VYRE_OP_DFA_SCAN || it->op_handle == VYRE_OP_DFA_SCAN_COUNTED)
		it->param = pick_table(rng, own);
	if (it->op_handle == VYRE_OP_BYTEMAP)
		it->param = pick_data(rng, own); /* a table of 256 bytes or more, or too short */
	if (rng_next(rng) % 4 == 0)
		random_ranges(rng, own, r);
}

/* decode -> map -> counted scan: three items of one connection in a row. */
static void random_chain(uint64_t *rng, const struct domain_bufs *own, struct rec *r)
{
	const uint32_t a = pick_data(rng, own), b = pick_data(rng, own), c = pick_data(rng, own);

	memset(r, 0, 3 * sizeof(*r));
	r[0].item = (struct vyre_work_item){
	    rng_next(rng) % 3 ? VYRE_OP_BASE64_DECODE : VYRE_OP_HEX_DECODE, a, b, 0};
	r[1].item = (struct vyre_work_item){VYRE_OP_BYTEMAP, b, rng_next(rng) % 3 ? c : b,
					    pick_data(rng, own)};
	r[2].item = (struct vyre_work_item){VYRE_OP_DFA_SCAN_COUNTED, r[1].item.output_handle,
					    pick_data(rng, own), pick_table(rng, own)};
}

/* ---- the producer process ---- */

struct producer {
	uint32_t p;
	struct vyre_client *conn[2]; /* 0: private domain, 1: the shared domain */
	struct domain_bufs priv;
	struct rec *recs[2];
	uint32_t count[2];
	uint32_t next[2];
	uint32_t low[2]; /* every seq below this has its CQE (FENCE check) */
	uint32_t got[2]; /* CQEs received per connection */
	uint64_t received;
};

static uint64_t user_data(uint32_t p, uint32_t k, uint32_t seq)
{
	return ((uint64_t)p << 40) | ((uint64_t)k << 32) | seq;
}

static int take_cqes(struct producer *pr, uint32_t k, const struct vyre_cqe *c, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t ud = c[i].user_data;
		uint32_t seq = (uint32_t)ud;

		if (ud >> 32 != (((uint64_t)pr->p << 8) | k) || seq >= pr->next[k])
			FAIL("producer %u: CQE with foreign user_data %" PRIx64, pr->p, ud);
		struct rec *r = &pr->recs[k][seq];

		if (r->received++)
			FAIL("producer %u conn %u: CQE for item %u arrived twice", pr->p, k, seq);
		r->cqe = c[i];
		pr->got[k]++;
		if (r->flags & VYRE_SQE_FENCE) {
			while (pr->low[k] < seq && pr->recs[k][pr->low[k]].received)
				pr->low[k]++;
			if (pr->low[k] < seq)
				FAIL("producer %u: FENCE item %u completed before item %u", pr->p,
				     seq, pr->low[k]);
		}
		pr->received++;
	}
	return 0;
}

static int reap(struct producer *pr, uint32_t k, int64_t wait_ns)
{
	struct vyre_cqe c[64];
	int n = wait_ns ? vyre_wait(pr->conn[k], c, 64, wait_ns) : vyre_reap(pr->conn[k], c, 64);

	if (n < 0)
		FAIL("producer %u conn %u: %s: %s", pr->p, k, wait_ns ? "wait" : "reap",
		     vyre_strerror(n));
	return take_cqes(pr, k, c, n) == 0 ? n : -1;
}

/* Queue a burst on connection @k; returns how many were queued, or -1. */
static int submit_burst(struct producer *pr, uint32_t k, uint64_t *rng)
{
	uint32_t left = pr->count[k] - pr->next[k];
	uint32_t n = 1 + (uint32_t)(rng_next(rng) % 32);
	struct vyre_work_item its[32];
	struct vyre_item_range ranges[32];
	uint64_t ud[32];
	int got;

	if (n > left)
		n = left;
	if (rng_next(rng) % 3 == 0) {
		/* One at a time, with the item's flags. */
		const struct rec *r = &pr->recs[k][pr->next[k]];
		const uint64_t one = user_data(pr->p, k, pr->next[k]);

		got = (r->flags & VYRE_SQE_RANGE)
			  ? vyre_submit_range(pr->conn[k], &r->item, &r->range, one,
					      r->flags & ~VYRE_SQE_RANGE)
			  : vyre_submit(pr->conn[k], &r->item, one, r->flags);
		if (got == VYRE_E_AGAIN)
			return 0;
		if (got != 0)
			FAIL("submit: %s", vyre_strerror(got));
		pr->next[k]++;
		return 1;
	}
	/*
	 * Batches carry no flags but VYRE_SQE_RANGE, on all of them or none: a
	 * batch is the run of items ranged like the first, and the records say
	 * what was submitted.
	 */
	const uint32_t ranged = pr->recs[k][pr->next[k]].flags & VYRE_SQE_RANGE;

	for (uint32_t i = 0; i < n; i++) {
		struct rec *r = &pr->recs[k][pr->next[k] + i];

		if ((r->flags & VYRE_SQE_RANGE) != ranged) {
			n = i;
			break;
		}
		r->flags = ranged;
		its[i] = r->item;
		ranges[i] = r->range;
		ud[i] = user_data(pr->p, k, pr->next[k] + i);
	}
	got = ranged ? vyre_submit_batch_range(pr->conn[k], its, ranges, ud, n)
		     : vyre_submit_batch(pr->conn[k], its, ud, n);
	if (got < 0)
		FAIL("submit_batch: %s", vyre_strerror(got));
	pr->next[k] += (uint32_t)got;
	return got;
}

static int run_items(struct producer *pr, uint64_t *rng)
{
	uint64_t total = (uint64_t)pr->count[0] + pr->count[1];

	while (pr->received < total) {
		int progress = 0;

		for (uint32_t k = 0; k < 2; k++) {
			int n;

			if (pr->next[k] < pr->count[k] && rng_next(rng) % 2) {
				n = submit_burst(pr, k, rng);
				if (n < 0)
					return -1;
				progress += n;
			}
			n = reap(pr, k, 0);
			if (n < 0)
				return -1;
			progress += n;
		}
		if (progress)
			continue;
		/* Nothing moved: sleep on a connection with items in flight, if any. */
		uint32_t k = (uint32_t)(rng_next(rng) % 2);

		if (pr->next[k] == pr->got[k])
			k ^= 1;
		if (pr->next[k] != pr->got[k] && reap(pr, k, WAIT_NS) < 0)
			return -1;
	}
	return 0;
}

static int write_results(struct producer *pr, const char *path)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		FAIL("open %s: %s", path, strerror(errno));
	fwrite(pr->priv.b, sizeof(pr->priv.b), 1, f);
	for (uint32_t i = 0; i < N_BUFS; i++) {
		uint8_t *now = vyre_buffer_ptr(pr->conn[0], pr->priv.b[i].handle, NULL);

		fwrite(pr->priv.initial[i], 1, pr->priv.b[i].bytes, f);
		/* a device buffer is compared through its mirror */
		fwrite(now ? now : pr->priv.initial[i], 1, pr->priv.b[i].bytes, f);
	}
	for (uint32_t k = 0; k < 2; k++) {
		fwrite(&pr->count[k], sizeof(pr->count[k]), 1, f);
		fwrite(pr->recs[k], sizeof(struct rec), pr->count[k], f);
	}
	return fclose(f) == 0 ? 0 : -1;
}

static int producer_main(uint32_t p, uint32_t items, const char *out)
{
	struct producer pr;
	struct vyre_connect_opts priv = {.socket_path = daemon_.socket, .heap_bytes = 1u << 20};
	struct vyre_connect_opts shr = {.socket_path = daemon_.socket,
					.domain = "shared",
					.sq_entries = 64 << (p % 4),
					.cq_entries = 64};
	uint64_t rng = 0x9e3779b97f4a7c15ull * (p + 1);
	int rc;

	memset(&pr, 0, sizeof(pr));
	pr.p = p;
	if ((rc = vyre_connect(&priv, &pr.conn[0])) != 0 ||
	    (rc = vyre_connect(&shr, &pr.conn[1])) != 0)
		FAIL("producer %u: connect: %s", p, vyre_strerror(rc));
	if (make_buffers(pr.conn[0], &pr.priv, rng) != 0)
		return -1;
	for (uint32_t k = 0; k < 2; k++)
		pr.recs[k] = calloc(items + N_DEV, sizeof(struct rec));
	for (uint32_t i = 0; i < items;) {
		uint32_t k = (uint32_t)(rng_next(&rng) % 5 < 3 ? 0 : 1);
		const struct domain_bufs *own = k ? &shared_bufs : &pr.priv;
		const struct domain_bufs *other = k ? &pr.priv : &shared_bufs;

		if (i + 3 <= items && rng_next(&rng) % 50 == 0) {
			random_chain(&rng, own, &pr.recs[k][pr.count[k]]);
			pr.count[k] += 3;
			i += 3;
		} else {
			random_item(&rng, own, other, &pr.recs[k][pr.count[k]++]);
			i++;
		}
	}
	if (run_items(&pr, &rng) != 0)
		return -1;
	/* The private device buffers' final contents, through items the oracle runs too. */
	for (uint32_t j = 0; j < N_DEV; j++) {
		struct rec *r = &pr.recs[0][pr.count[0]++];

		memset(r, 0, sizeof(*r));
		r->item = (struct vyre_work_item){VYRE_OP_COPY, pr.priv.b[DEV0 + j].handle,
						  pr.priv.b[MIRROR0 + j].handle, 0};
	}
	if (run_items(&pr, &rng) != 0 || write_results(&pr, out) != 0)
		return -1;
	vyre_close(pr.conn[0]);
	vyre_close(pr.conn[1]);
	return 0;
}

/* ---- the oracle ---- */

struct oracle_domain {
	struct buf b[N_BUFS];
	uint64_t off[N_BUFS];
	uint8_t *heap;
	uint64_t bytes;
	uint8_t *final_expected[N_BUFS]; /* private domains: the producer's final contents */
};

struct loaded {
	struct rec *recs[2];
	uint32_t count[2];
	uint32_t accepted[2]; /* seqs seen in the accept log so far */
};

static void oracle_layout(struct oracle_domain *od, const struct buf *b, uint8_t *const *init)
{
	uint64_t off = 0;

	for (uint32_t i = 0; i < N_BUFS; i++) {
		od->b[i] = b[i];
		od->off[i] = off;
		off += (b[i].bytes + ORACLE_ALIGN - 1) / ORACLE_ALIGN * ORACLE_ALIGN;
	}
	od->bytes = off ? off : ORACLE_ALIGN;
	od->heap = calloc(1, od->bytes);
	for (uint32_t i = 0; i < N_BUFS; i++)
		memcpy(od->heap + od->off[i], init[i], b[i].bytes);
}

static int oracle_lookup(const struct oracle_domain *od, uint32_t handle, uint64_t *off,
			 uint32_t *bytes)
{
	for (uint32_t i = 0; i < N_BUFS; i++) {
		if (handle != 0 && od->b[i].handle == handle) {
			*off = od->off[i];
			*bytes = od->b[i].bytes;
			return 0;
		}
	}
	return -1;
}

/*
 * docs/design.md 6.6, the oracle's reading: each operand narrowed to its
 * range, checked; -1 for a bad range.
 */
static int oracle_range(int mask, const struct vyre_work_item *it, const struct vyre_item_range *r,
			uint64_t *in_o, uint32_t *in_b, uint64_t *out_o, uint32_t *out_b)
{
	const int in = mask > 0 && (mask & VYRE_OPERAND_IN),
		  out = mask > 0 && (mask & VYRE_OPERAND_OUT);

	if ((!in && (r->in_offset || r->in_length)) || (!out && (r->out_offset || r->out_length)))
		return -1;
	if ((r->in_offset | r->in_length | r->out_offset | r->out_length) % 4 ||
	    r->in_offset > *in_b || r->in_length > *in_b - r->in_offset || r->out_offset > *out_b ||
	    r->out_length > *out_b - r->out_offset)
		return -1;
	/* in place or apart */
	if (in && out && it->input_handle == it->output_handle && r->in_length && r->out_length &&
	    !(r->in_offset == r->out_offset && r->in_length == r->out_length) &&
	    r->in_offset < r->out_offset + r->out_length &&
	    r->out_offset < r->in_offset + r->in_length)
		return -1;
	if (vyre_op_check_lengths(it->op_handle, it, r->in_length, r->out_length))
		return -1;
	*in_o += r->in_offset;
	*in_b = r->in_length;
	*out_o += r->out_offset;
	*out_b = r->out_length;
	return 0;
}

/* The oracle's own resolve: an unknown op id marks an item that must fail. */
static void oracle_resolve(const struct oracle_domain *od, uint32_t heap, const struct rec *r,
			   struct vyre_exec_item *x)
{
	const struct vyre_work_item *it = &r->item;
	int mask = vyre_op_operands(it->op_handle);
	uint32_t in_b = 0, out_b = 0, t_b = 0;
	uint64_t in_o = 0, out_o = 0, t_o = 0;

	memset(x, 0, sizeof(*x));
	x->in_heap = x->out_heap = x->table_heap = heap;
	x->op = UINT32_MAX;
	if (mask < 0 || (r->flags & ~VYRE_SQE_VALID_FLAGS))
		return;
	if ((mask & VYRE_OPERAND_IN) && oracle_lookup(od, it->input_handle, &in_o, &in_b))
		return;
	if ((mask & VYRE_OPERAND_OUT) && oracle_lookup(od, it->output_handle, &out_o, &out_b))
		return;
	if ((mask & VYRE_OPERAND_TABLE) && oracle_lookup(od, it->param, &t_o, &t_b))
		return;
	if (vyre_op_check_lengths(it->op_handle, it, in_b, out_b))
		return;
	if ((r->flags & VYRE_SQE_RANGE) &&
	    oracle_range(mask, it, &r->range, &in_o, &in_b, &out_o, &out_b))
		return;
	*x = (struct vyre_exec_item){.op = it->op_handle,
				     .param = (mask & VYRE_OPERAND_TABLE) ? 0 : it->param,
				     .in_heap = heap,
				     .out_heap = heap,
				     .table_heap = heap,
				     .in_bytes = in_b,
				     .out_bytes = out_b,
				     .table_bytes = t_b,
				     .in_off = in_o,
				     .out_off = out_o,
				     .table_off = t_o};
}

static int load_producer(uint32_t p, const char *path, struct oracle_domain *od, struct loaded *ld)
{
	FILE *f = fopen(path, "rb");
	struct buf b[N_BUFS];
	uint8_t *init[N_BUFS];
	int ok;

	if (!f)
		FAIL("producer %u left no results", p);
	ok = fread(b, sizeof(b), 1, f) == 1;
	for (uint32_t i = 0; ok && i < N_BUFS; i++) {
		init[i] = malloc(b[i].bytes + 1);
		od->final_expected[i] = malloc(b[i].bytes + 1);
		ok = fread(init[i], 1, b[i].bytes, f) == b[i].bytes &&
		     fread(od->final_expected[i], 1, b[i].bytes, f) == b[i].bytes;
	}
	for (uint32_t k = 0; ok && k < 2; k++) {
		ok = fread(&ld->count[k], sizeof(ld->count[k]), 1, f) == 1;
		ld->recs[k] = calloc(ld->count[k] + 1, sizeof(struct rec));
		ok = ok && fread(ld->recs[k], sizeof(struct rec), ld->count[k], f) == ld->count[k];
	}
	fclose(f);
	if (!ok)
		FAIL("producer %u: short results file", p);
	oracle_layout(od, b, init);
	for (uint32_t i = 0; i < N_BUFS; i++)
		free(init[i]);
	return 0;
}

struct accepted_item {
	uint32_t p, k, seq;
};

/* Reads the accept log; checks each client's items appear once each, in submission order. */
static int read_accept_log(struct loaded *ld, struct accepted_item **out, uint64_t *n_out)
{
	FILE *f = fopen(daemon_.accept_log, "r");
	unsigned long long ud;
	unsigned cid;
	uint64_t n = 0, cap = 1024;
	struct accepted_item *a = malloc(cap * sizeof(*a));
	uint32_t client_of[PRODUCERS][2] = {{0}};

	if (!f)
		FAIL("no accept log");
	while (fscanf(f, "%u %llu", &cid, &ud) == 2) {
		uint32_t p = (uint32_t)(ud >> 40), k = (uint32_t)(ud >> 32) & 0xff;
		uint32_t seq = (uint32_t)ud;

		if (p >= PRODUCERS || k > 1)
			FAIL("accept log: unknown user_data %llu", ud);
		if (seq != ld[p].accepted[k])
			FAIL("accept log: producer %u conn %u item %u accepted where %u was due", p,
			     k, seq, ld[p].accepted[k]);
		if (client_of[p][k] && client_of[p][k] != cid)
			FAIL("accept log: one connection under two client ids");
		client_of[p][k] = cid;
		ld[p].accepted[k]++;
		if (n == cap) {
			struct accepted_item *grown = realloc(a, (cap *= 2) * sizeof(*a));

			if (!grown)
				FAIL("out of memory");
			a = grown;
		}
		a[n++] = (struct accepted_item){p, k, seq};
	}
	fclose(f);
	for (uint32_t p = 0; p < PRODUCERS; p++)
		for (uint32_t k = 0; k < 2; k++)
			if (ld[p].accepted[k] != ld[p].count[k])
				FAIL("producer %u conn %u: %u items accepted of %u", p, k,
				     ld[p].accepted[k], ld[p].count[k]);
	*out = a;
	*n_out = n;
	return 0;
}

static int compare_buffers(const char *what, const struct oracle_domain *od, uint32_t i,
			   const uint8_t *actual)
{
	if (memcmp(od->heap + od->off[i], actual, od->b[i].bytes) != 0)
		FAIL("%s buffer %u (%u bytes) differs from the sequential oracle", what, i,
		     od->b[i].bytes);
	return 0;
}

static int verify(struct vyre_client *shared_conn)
{
	static struct oracle_domain od[PRODUCERS + 1];
	static struct loaded ld[PRODUCERS];
	struct vyre_heap_view views[PRODUCERS + 1];
	struct accepted_item *acc;
	uint64_t n, errors = 0;
	char path[256];

	/* what a previous run left */
	for (uint32_t h = 0; h <= PRODUCERS; h++) {
		free(od[h].heap);
		for (uint32_t i = 0; i < N_BUFS; i++)
			free(od[h].final_expected[i]);
	}
	for (uint32_t p = 0; p < PRODUCERS; p++)
		for (uint32_t k = 0; k < 2; k++)
			free(ld[p].recs[k]);
	memset(od, 0, sizeof(od));
	memset(ld, 0, sizeof(ld));
	oracle_layout(&od[0], shared_bufs.b, shared_bufs.initial);
	for (uint32_t p = 0; p < PRODUCERS; p++) {
		snprintf(path, sizeof(path), "%s/producer-%u.bin", daemon_.dir, p);
		if (load_producer(p, path, &od[p + 1], &ld[p]) != 0)
			return -1;
		unlink(path);
	}
	if (read_accept_log(ld, &acc, &n) != 0)
		return -1;
	struct vyre_exec_item *x = calloc(n + 1, sizeof(*x));
	struct vyre_exec_result *res = calloc(n + 1, sizeof(*res));

	for (uint64_t i = 0; i < n; i++) {
		uint32_t heap = acc[i].k ? 0 : acc[i].p + 1;

		oracle_resolve(&od[heap], heap, &ld[acc[i].p].recs[acc[i].k][acc[i].seq], &x[i]);
	}
	for (uint32_t h = 0; h <= PRODUCERS; h++)
		views[h] = (struct vyre_heap_view){od[h].heap, od[h].bytes};
	vyre_exec_sequential(views, x, (uint32_t)n, res);
	for (uint64_t i = 0; i < n; i++) {
		const struct rec *r = &ld[acc[i].p].recs[acc[i].k][acc[i].seq];

		if (r->received != 1)
			FAIL("item %u/%u/%u: %u CQEs", acc[i].p, acc[i].k, acc[i].seq, r->received);
		if (r->cqe.status != res[i].status || r->cqe.result != res[i].result)
			FAIL("item %u/%u/%u (op %u): CQE status %d result %" PRIu64
			     ", oracle %d %" PRIu64,
			     acc[i].p, acc[i].k, acc[i].seq, r->item.op_handle, r->cqe.status,
			     r->cqe.result, res[i].status, res[i].result);
		errors += res[i].status != 0;
	}
	for (uint32_t i = 0; i < N_BUFS; i++)
		if (!is_device(i) &&
		    compare_buffers("shared", &od[0], i,
				    vyre_buffer_ptr(shared_conn, shared_bufs.b[i].handle, NULL)))
			return -1;
	for (uint32_t p = 0; p < PRODUCERS; p++)
		for (uint32_t i = 0; i < N_BUFS; i++)
			if (!is_device(i) &&
			    compare_buffers("private", &od[p + 1], i, od[p + 1].final_expected[i]))
				return -1;
	printf("%" PRIu64 " items checked against the oracle (%" PRIu64 " errors by design)\n", n,
	       errors);
	free(x);
	free(res);
	free(acc);
	if (errors == 0 || errors == n)
		FAIL("the workload should mix valid and invalid items");
	return 0;
}

/*
 * From the exit log: some vyred process (one, or a GPU worker of several)
 * had several batches in flight at once and held items for hazards
 * against them.
 */
static int overlapped(void)
{
	char line[512];
	int yes = 0;
	FILE *f = fopen(daemon_.log, "r");

	while (f && !yes && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, "at most ");
		const char *holds = strstr(line, " holds for hazards");
		unsigned most = 0;
		unsigned long long n = 0;

		if (!strstr(line, "stopped after") || !at || !holds)
			continue;
		while (holds > line && holds[-1] >= '0' && holds[-1] <= '9')
			holds--;
		yes = sscanf(at, "at most %u batches", &most) == 1 &&
		      sscanf(holds, "%llu", &n) == 1 && most > 1 && n > 0;
	}
	if (f)
		fclose(f);
	return yes;
}

static int run(const char *const *extra, int require_overlap)
{
	uint32_t items = (uint32_t)(BASE_ITEMS * vyre_test_scale());
	struct vyre_connect_opts o = {.domain = "shared", .heap_bytes = 1u << 20};
	struct vyre_client *shared_conn;
	pid_t kids[PRODUCERS];
	int rc, failed = 0;

	for (uint32_t i = 0; i < N_BUFS; i++)
		free(shared_bufs.initial[i]);
	memset(&shared_bufs, 0, sizeof(shared_bufs));
	if (vyre_test_daemon_start(&daemon_, extra) != 0)
		return -1;
	o.socket_path = daemon_.socket;
	if ((rc = vyre_connect(&o, &shared_conn)) != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	if (make_buffers(shared_conn, &shared_bufs, 42) != 0)
		return -1;
	for (uint32_t p = 0; p < PRODUCERS; p++) {
		fflush(NULL); /* the child must not repeat buffered output */
		kids[p] = fork();
		if (kids[p] == 0) {
			char out[256];

			alarm(CHILD_LIMIT_S);
			snprintf(out, sizeof(out), "%s/producer-%u.bin", daemon_.dir, p);
			_exit(producer_main(p, items, out) == 0 ? 0 : 1);
		}
	}
	for (uint32_t p = 0; p < PRODUCERS; p++) {
		int st;

		waitpid(kids[p], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "producer %u failed (status 0x%x)\n", p, st);
			failed = 1;
		}
	}
	rc = vyre_test_daemon_stop(&daemon_);
	if (rc != 0 || failed) {
		vyre_test_daemon_dump_log(&daemon_);
		FAIL("vyred exit %d, producers %s", rc, failed ? "failed" : "ok");
	}
	printf("%u producers x %u items, vyred exited 0\n", PRODUCERS, items);
	/* device tables were copied in and scanned again and again: some scans skip the check */
	if (!vyre_test_log_has(daemon_.log, "DFA scans trusted a device table") ||
	    vyre_test_log_has(daemon_.log, "; 0 DFA scans trusted")) {
		vyre_test_daemon_dump_log(&daemon_);
		FAIL("no DFA scan trusted a device table checked at its last write");
	}
	if (require_overlap && !overlapped()) {
		vyre_test_daemon_dump_log(&daemon_);
		FAIL("batches never overlapped, or never met a hazard across batches");
	}
	rc = verify(shared_conn);
	vyre_close(shared_conn);
	return rc;
}

/* 1 when vyred ran a worker process a device (docs/design.md 8.8). */
static int workers(void)
{
	return vyre_test_log_has(daemon_.log, "2 GPUs, 2 worker processes");
}

/*
 * GPU G ran a batch (from the exit log): in one process loops 2G and 2G + 1
 * serve it; with a worker a device, loops 0 and 1 of "vyred[gpu G]".
 */
static int gpu_ran(uint32_t g)
{
	char want[64];

	for (uint32_t l = 0; l < 2; l++) {
		if (workers())
			snprintf(want, sizeof(want), "vyred[gpu %u]: loop %u: 0 batches", g, l);
		else
			snprintf(want, sizeof(want), "loop %u: 0 batches", 2 * g + l);
		if (!vyre_test_log_has(daemon_.log, want))
			return 1;
	}
	return 0;
}

int main(void)
{
	static const char *const small_batches[] = {"--inflight",  "8", "--max-batch", "24",
						    "--min-share", "2", NULL};
	static const char *const three_loops[] = {"--loops", "3", "--inflight", "2", NULL};
	const char *gpus = getenv("VYRE_TEST_GPUS");
	const char *backend = getenv("VYRE_TEST_BACKEND");
	const char *const two_gpus[] = {"--gpus",
					gpus ? gpus : "0,1",
					"--loops",
					"2",
					"--inflight",
					"2",
					backend && !strcmp(backend, "cuda") ? NULL : "--backend",
					"cpu",
					NULL};
	int rc = run(NULL, 0);

	vyre_test_daemon_cleanup(&daemon_);
	if (rc == 0) {
		printf(
		    "again with many small batches in flight, each group's items run backwards\n");
		setenv("VYRE_CPU_GROUP_ORDER", "reverse", 1);
		rc = run(small_batches, 1);
		unsetenv("VYRE_CPU_GROUP_ORDER");
		vyre_test_daemon_cleanup(&daemon_);
	}
	if (rc == 0) {
		printf("again with three event loops: domains spread over them\n");
		rc = run(three_loops, 0);
		if (rc == 0 && !vyre_test_log_has(daemon_.log, "loop 2: ")) {
			vyre_test_daemon_dump_log(&daemon_);
			FAIL("vyred did not run three loops");
		}
		vyre_test_daemon_cleanup(&daemon_);
	}
	if (rc == 0) {
		printf("again over two GPUs: domains placed on both\n");
		rc = run(two_gpus, 0);
		const int two =
		    vyre_test_log_has(daemon_.log, "2 GPUs, 4 event loops") ||
		    (workers() && vyre_test_log_count(daemon_.log, "1 GPU, 2 event loops") == 2);

		if (rc == 0 && (!two || !gpu_ran(0) || !gpu_ran(1))) {
			vyre_test_daemon_dump_log(&daemon_);
			FAIL("vyred did not run batches on both GPUs");
		}
		vyre_test_daemon_cleanup(&daemon_);
	}
	if (rc == 0)
		printf("PASS\n");
	return rc == 0 ? 0 : 1;
}
