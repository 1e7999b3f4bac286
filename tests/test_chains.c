/* SPDX-License-Identifier: MIT */
/*
 * test_chains - chains and transient buffers (docs/design.md 6.3, 7.6)
 * through a live vyred on the CPU backend, with --max-batch 16 and
 * --min-share 4 so that chains meet every limit that cuts a take:
 *
 *  - four producers in one domain submit random chains (up to 12 items,
 *    some failing when they run, some statically, many through a transient
 *    buffer); statuses, results and buffers equal a local oracle that runs
 *    each producer's items in order with the chain rules, so a chain that
 *    ran out of order or split over batches would show (its items after a
 *    failure would run instead of being cancelled);
 *  - a failing item cancels the rest of its chain and changes nothing;
 *  - a chain longer than --max-batch, than the client's CQ or than its SQ
 *    fails as a whole, and the client goes on;
 *  - a chain whose last item is published late waits for it;
 *  - transient rules: read outside a chain or before a write, or as a table,
 *    is VYRE_E_INVAL; vyre_buffer_ptr gives NULL;
 *  - a writer -> reader pair of a transient buffer, kept on chip, leaves
 *    the buffer's heap bytes untouched (checked through the heap mapping of
 *    a freed buffer the transient was allocated in), while a chain that
 *    reads it again after the pair writes them: BYTEMAP -> DFA_SCAN_COUNTED
 *    on every backend, FILL -> SUM on the CPU backend (the CUDA backend
 *    keeps decoder and map links only).
 *
 * $VYRE_TEST_BACKEND=cuda (test_cuda_e2e) runs it against the vyred that
 * $VYRED names, on the GPU.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/ops.h"
#include "test_integration_daemon.h"
#include "test_rand.h"
#include "vyre/vyre.h"

#define WAIT_NS	     (60ll * 1000000000ll)
#define MAX_BATCH    16u
#define PRODUCERS    4u
#define CHAINS	     300u
#define CHAIN_MAX    12u
#define ITEMS_MAX    (CHAINS * CHAIN_MAX)
#define P_BUFS	     4u
#define P_BYTES	     64u
#define TABLE_STATES 2u

static struct vyre_test_daemon daemon_;

static int connect_to(const char *domain, uint32_t sq, uint32_t cq, uint64_t heap,
		      struct vyre_client **c)
{
	struct vyre_connect_opts o = {.socket_path = daemon_.socket,
				      .domain = domain,
				      .sq_entries = sq,
				      .cq_entries = cq,
				      .heap_bytes = heap};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	return 0;
}

static int alloc(struct vyre_client *c, uint32_t bytes, uint32_t flags, uint32_t *h, uint8_t **p)
{
	int rc = vyre_buffer_alloc(c, bytes, flags, h);

	if (rc != 0)
		FAIL("alloc %u bytes (flags %u): %s", bytes, flags, vyre_strerror(rc));
	*p = vyre_buffer_ptr(c, *h, NULL);
	if (!*p && !(flags & VYRE_BUF_TRANSIENT))
		FAIL("buffer_ptr");
	return 0;
}

/* A 2-state DFA over the low bit of each byte: state 1 (accepting) after an odd byte. */
static void write_table(uint8_t *t)
{
	uint32_t w[3] = {TABLE_STATES, 0, 2};

	memcpy(t, w, sizeof(w));
	for (uint32_t s = 0; s < TABLE_STATES; s++)
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t next = b & 1u;

			memcpy(t + 12 + 4 * (256 * s + b), &next, 4);
		}
}

/* Queue one item; on a full SQ, reap into @sink (may be NULL: discard) and retry. */
typedef void (*cqe_sink)(void *arg, const struct vyre_cqe *cqe);

static int submit(struct vyre_client *c, struct vyre_work_item it, uint64_t ud, uint32_t flags,
		  cqe_sink sink, void *arg)
{
	for (;;) {
		struct vyre_cqe cqes[32];
		int rc = vyre_submit(c, &it, ud, flags);

		if (rc == 0)
			return 0;
		if (rc != VYRE_E_AGAIN)
			FAIL("submit %" PRIu64 ": %s", ud, vyre_strerror(rc));
		int n = vyre_wait(c, cqes, 32, WAIT_NS);

		if (n < 0)
			FAIL("wait while the SQ is full: %s", vyre_strerror(n));
		for (int i = 0; i < n && sink; i++)
			sink(arg, &cqes[i]);
	}
}

/* Wait for the next @n CQEs, which must carry user_data @first, first + 1, ... */
static int expect_cqes(struct vyre_client *c, uint64_t first, uint32_t n, struct vyre_cqe *out)
{
	for (uint32_t got = 0; got < n;) {
		int k = vyre_wait(c, out + got, n - got, WAIT_NS);

		if (k <= 0)
			FAIL("CQE %" PRIu64 ": %s", first + got, k ? vyre_strerror(k) : "none");
		got += (uint32_t)k;
	}
	for (uint32_t i = 0; i < n; i++)
		if (out[i].user_data != first + i)
			FAIL("CQE %u carries %" PRIu64 ", %" PRIu64 " was due", i, out[i].user_data,
			     first + i);
	return 0;
}

static int expect_status(const struct vyre_cqe *cqe, int32_t status, const char *what)
{
	if (cqe->status != status)
		FAIL("%s: status %s, %s was due", what, vyre_strerror(cqe->status),
		     vyre_strerror(status));
	return 0;
}

static uint32_t word(const uint8_t *p, uint32_t i)
{
	uint32_t v;

	memcpy(&v, p + 4 * i, 4);
	return v;
}

/* ------------------------------------------------------------ random producers */

/* A producer's buffers, in vyred's heap and in its oracle's copy (local[]). */
enum { B_DATA = 0, B_TABLE = P_BUFS, B_BAD, B_T, B_COUNT };

struct item {
	struct vyre_work_item it;
	uint32_t flags;
	int32_t want_status;
	uint64_t want_result;
	int32_t got_status;
	uint64_t got_result;
	int got;
};

struct producer {
	uint32_t id;
	uint64_t rng;
	struct vyre_client *c;
	uint32_t handle[B_COUNT];
	uint8_t *ptr[B_COUNT];
	uint32_t bytes[B_COUNT];
	uint64_t off[B_COUNT]; /* in local[] */
	uint8_t local[8192];
	struct item items[ITEMS_MAX];
	uint32_t n;
	uint32_t seen;
	int rc;
};

static uint32_t pick(uint64_t *rng, uint32_t n)
{
	return (uint32_t)(splitmix64(rng) % n);
}

static uint32_t data(struct producer *p)
{
	return p->handle[B_DATA + pick(&p->rng, P_BUFS)];
}

/* One item of a chain: on the data buffers, the transient T, or failing. */
static struct vyre_work_item random_item(struct producer *p, int t_written)
{
	const uint32_t t = p->handle[B_T], param = (uint32_t)splitmix64(&p->rng) % 9;
	const uint32_t roll = pick(&p->rng, 100);
	static const uint32_t ops[] = {VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,	   VYRE_OP_MUL,
				       VYRE_OP_SUM,  VYRE_OP_MAX, VYRE_OP_DFA_SCAN};
	struct vyre_work_item it = {ops[pick(&p->rng, 7)], data(p), data(p), param};

	if (roll < 5) /* fails when it runs: the table is not a valid DFA */
		return (struct vyre_work_item){VYRE_OP_DFA_SCAN, data(p), data(p),
					       p->handle[B_BAD]};
	if (roll < 8) /* fails statically: COPY needs an input */
		return (struct vyre_work_item){VYRE_OP_COPY, 0, data(p), 0};
	if (roll < 10) /* a transient table: refused */
		return (struct vyre_work_item){VYRE_OP_DFA_SCAN, data(p), data(p), t};
	if (roll < 30 || (roll < 40 && !t_written)) /* writes all of T */
		return pick(&p->rng, 3)
			   ? (struct vyre_work_item){ops[pick(&p->rng, 4)], data(p), t, param}
			   : (struct vyre_work_item){VYRE_OP_FILL, 0, t, param};
	if (roll < 50) /* reads T (refused before a write of its chain) */
		it.input_handle = t;
	else if (roll < 58)
		return (struct vyre_work_item){VYRE_OP_FILL, 0, data(p), param};
	if (it.op_handle == VYRE_OP_DFA_SCAN)
		it.param = p->handle[B_TABLE];
	return it;
}

static uint32_t local_index(const struct producer *p, uint32_t handle)
{
	for (uint32_t b = 0; b < B_COUNT; b++)
		if (p->handle[b] == handle)
			return b;
	return B_COUNT;
}

/*
 * The oracle for one item of a chain: vyred's static checks (a handle
 * where one is needed, transient rules), then the item on the local heap.
 */
static int32_t oracle_one(struct producer *p, const struct vyre_work_item *it, int *t_written,
			  uint64_t *result)
{
	const int mask = vyre_op_operands(it->op_handle);
	const uint32_t t = p->handle[B_T];
	struct vyre_heap_view heap = {p->local, sizeof(p->local)};
	struct vyre_exec_item x = {.op = it->op_handle, .param = it->param};
	uint32_t in = local_index(p, it->input_handle), out = local_index(p, it->output_handle);

	*result = 0;
	if (((mask & VYRE_OPERAND_IN) && in == B_COUNT) ||
	    ((mask & VYRE_OPERAND_OUT) && out == B_COUNT))
		return VYRE_E_INVAL;
	if (((mask & VYRE_OPERAND_TABLE) && it->param == t) ||
	    ((mask & VYRE_OPERAND_IN) && it->input_handle == t && !*t_written))
		return VYRE_E_INVAL;
	if (mask & VYRE_OPERAND_IN) {
		x.in_off = p->off[in];
		x.in_bytes = p->bytes[in];
	}
	if (mask & VYRE_OPERAND_OUT) {
		x.out_off = p->off[out];
		x.out_bytes = p->bytes[out];
	}
	if (mask & VYRE_OPERAND_TABLE) {
		uint32_t tb = local_index(p, it->param);

		x.param = 0;
		x.table_off = p->off[tb];
		x.table_bytes = p->bytes[tb];
	}
	if ((mask & VYRE_OPERAND_OUT) && it->output_handle == t)
		*t_written = 1;
	return vyre_exec_one(&heap, &x, result);
}

static void generate(struct producer *p)
{
	p->n = 0;
	for (uint32_t ch = 0; ch < CHAINS; ch++) {
		const uint32_t len = 1 + pick(&p->rng, CHAIN_MAX);
		int failed = 0, t_written = 0;

		for (uint32_t k = 0; k < len; k++) {
			struct item *i = &p->items[p->n++];

			i->it = random_item(p, t_written);
			i->flags = k + 1 < len ? VYRE_SQE_CHAIN : 0;
			i->want_result = 0;
			if (failed)
				i->want_status = VYRE_E_CANCELED;
			else
				i->want_status = oracle_one(p, &i->it, &t_written, &i->want_result);
			failed |= i->want_status != 0;
		}
	}
}

static void take_cqe(void *arg, const struct vyre_cqe *cqe)
{
	struct producer *p = arg;

	if (cqe->user_data >= p->n || p->items[cqe->user_data].got) {
		p->rc = -1;
		return;
	}
	p->items[cqe->user_data].got = 1;
	p->items[cqe->user_data].got_status = cqe->status;
	p->items[cqe->user_data].got_result = cqe->result;
	p->seen++;
}

static int producer_setup(struct producer *p)
{
	char name[16];
	uint64_t off = 0;

	snprintf(name, sizeof(name), "chains");
	if (connect_to(name, 64, 32, 0, &p->c) != 0)
		return -1;
	for (uint32_t b = 0; b < B_COUNT; b++) {
		p->bytes[b] = b < B_TABLE ? P_BYTES
			      : b == B_T  ? P_BYTES
					  : (uint32_t)vyre_dfa_table_bytes(TABLE_STATES);
		if (alloc(p->c, p->bytes[b], b == B_T ? VYRE_BUF_TRANSIENT : 0, &p->handle[b],
			  &p->ptr[b]) != 0)
			return -1;
		p->off[b] = off;
		off += (p->bytes[b] + 63) & ~63u;
	}
	for (uint32_t b = 0; b < P_BUFS; b++)
		for (uint32_t i = 0; i < P_BYTES; i++)
			p->ptr[b][i] = (uint8_t)splitmix64(&p->rng);
	write_table(p->ptr[B_TABLE]);
	for (uint32_t b = 0; b < B_T; b++)
		memcpy(p->local + p->off[b], p->ptr[b], p->bytes[b]);
	return 0;
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;

	generate(p);
	for (uint32_t k = 0; k < p->n && p->rc == 0; k++)
		if (submit(p->c, p->items[k].it, k, p->items[k].flags, take_cqe, p) != 0)
			p->rc = -1;
	while (p->rc == 0 && p->seen < p->n) {
		struct vyre_cqe cqes[32];
		int n = vyre_wait(p->c, cqes, 32, WAIT_NS);

		if (n <= 0) {
			fprintf(stderr, "producer %u: %u of %u CQEs: %s\n", p->id, p->seen, p->n,
				n ? vyre_strerror(n) : "none");
			p->rc = -1;
		}
		for (int i = 0; i < n; i++)
			take_cqe(p, &cqes[i]);
	}
	return NULL;
}

static int producer_check(const struct producer *p)
{
	if (p->rc != 0)
		FAIL("producer %u failed", p->id);
	for (uint32_t k = 0; k < p->n; k++) {
		const struct item *i = &p->items[k];

		if (i->got_status != i->want_status || i->got_result != i->want_result)
			FAIL("producer %u item %u (op %u in %u out %u param %u, flags %u): status "
			     "%s "
			     "result %" PRIu64 ", the oracle's %s %" PRIu64,
			     p->id, k, i->it.op_handle, i->it.input_handle, i->it.output_handle,
			     i->it.param, i->flags, vyre_strerror(i->got_status), i->got_result,
			     vyre_strerror(i->want_status), i->want_result);
	}
	for (uint32_t b = 0; b < B_T; b++)
		if (memcmp(p->ptr[b], p->local + p->off[b], p->bytes[b]) != 0)
			FAIL("producer %u: buffer %u differs from the oracle's", p->id, b);
	return 0;
}

static int random_producers(void)
{
	static struct producer ps[PRODUCERS];
	pthread_t th[PRODUCERS];
	uint32_t items = 0, failed = 0, canceled = 0;
	int rc = 0;

	for (uint32_t i = 0; i < PRODUCERS; i++) {
		memset(&ps[i], 0, sizeof(ps[i]));
		ps[i].id = i;
		ps[i].rng = 0x636861696e73ull * (i + 1);
		if (producer_setup(&ps[i]) != 0)
			return -1;
	}
	for (uint32_t i = 0; i < PRODUCERS; i++)
		if (pthread_create(&th[i], NULL, producer_main, &ps[i]) != 0)
			FAIL("pthread_create");
	for (uint32_t i = 0; i < PRODUCERS; i++)
		pthread_join(th[i], NULL);
	for (uint32_t i = 0; i < PRODUCERS && rc == 0; i++) {
		rc = producer_check(&ps[i]);
		items += ps[i].n;
		for (uint32_t k = 0; k < ps[i].n; k++) {
			failed += ps[i].items[k].want_status == VYRE_E_INVAL;
			canceled += ps[i].items[k].want_status == VYRE_E_CANCELED;
		}
	}
	for (uint32_t i = 0; i < PRODUCERS; i++)
		vyre_close(ps[i].c);
	if (rc == 0)
		printf(
		    "ok: %u producers, %u items in chains of up to %u (%u failing, %u cancelled) "
		    "equal the oracle\n",
		    PRODUCERS, items, CHAIN_MAX, failed, canceled);
	return rc;
}

/* ------------------------------------------------------------ failures */

static int failing_items(void)
{
	struct vyre_client *c;
	uint32_t in, a, b, bad;
	uint8_t *pin, *pa, *pb, *pbad;
	struct vyre_cqe q[4];
	const uint32_t dfa = (uint32_t)vyre_dfa_table_bytes(TABLE_STATES);

	if (connect_to(NULL, 0, 0, 0, &c) || alloc(c, 64, 0, &in, &pin) ||
	    alloc(c, 64, 0, &a, &pa) || alloc(c, 64, 0, &b, &pb) || alloc(c, dfa, 0, &bad, &pbad))
		return -1;
	/* a scan whose table is no DFA fails when it runs: the fills after it never do */
	if (submit(c, (struct vyre_work_item){VYRE_OP_DFA_SCAN, in, a, bad}, 1, VYRE_SQE_CHAIN,
		   NULL, NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, a, 7}, 2, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, b, 9}, 3, 0, NULL, NULL) ||
	    expect_cqes(c, 1, 3, q) || expect_status(&q[0], VYRE_E_INVAL, "failing first item") ||
	    expect_status(&q[1], VYRE_E_CANCELED, "second") ||
	    expect_status(&q[2], VYRE_E_CANCELED, "third"))
		return -1;
	if (word(pa, 0) != 0 || word(pb, 0) != 0)
		FAIL("a cancelled item wrote its output");
	/* a static failure in the middle */
	if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, a, 5}, 4, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_COPY, 0, b, 0}, 5, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, b, 9}, 6, 0, NULL, NULL) ||
	    expect_cqes(c, 4, 3, q) || expect_status(&q[0], 0, "fill before a static failure") ||
	    expect_status(&q[1], VYRE_E_INVAL, "static failure") ||
	    expect_status(&q[2], VYRE_E_CANCELED, "after it"))
		return -1;
	if (word(pa, 15) != 5 || word(pb, 0) != 0)
		FAIL("a chain with a static failure: a %u, b %u", word(pa, 15), word(pb, 0));
	/* a static failure after one at run time is cancelled, as the chain in order gives */
	if (submit(c, (struct vyre_work_item){VYRE_OP_DFA_SCAN, in, a, bad}, 7, VYRE_SQE_CHAIN,
		   NULL, NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_COPY, 0, b, 0}, 8, 0, NULL, NULL) ||
	    expect_cqes(c, 7, 2, q) || expect_status(&q[0], VYRE_E_INVAL, "failing scan") ||
	    expect_status(&q[1], VYRE_E_CANCELED, "static failure after it"))
		return -1;
	/* the next chain is on its own */
	if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, b, 3}, 9, 0, NULL, NULL) ||
	    expect_cqes(c, 9, 1, q) || expect_status(&q[0], 0, "after the chains") ||
	    word(pb, 15) != 3)
		FAIL("the item after the failed chains did not run");
	vyre_close(c);
	printf("ok: a failing item (at run time or statically) cancels the rest of its chain\n");
	return 0;
}

/* Wait for more CQEs into q[*n ..]. */
static int collect(struct vyre_client *c, struct vyre_cqe *q, uint32_t cap, uint32_t *n,
		   const char *what)
{
	int k = vyre_wait(c, q + *n, cap - *n, WAIT_NS);

	if (k <= 0)
		FAIL("%s: %u CQEs, then %s", what, *n, k ? vyre_strerror(k) : "none");
	*n += (uint32_t)k;
	return 0;
}

/* A chain of @len fills, then one fill: the chain fails whole, the fill runs. */
static int oversize(uint32_t sq, uint32_t cq, uint32_t len, const char *what)
{
	struct vyre_cqe q[64];
	struct vyre_client *c;
	uint32_t h, got = 0;
	uint8_t *p;

	if (connect_to(NULL, sq, cq, 0, &c) || alloc(c, 64, 0, &h, &p))
		return -1;
	for (uint32_t k = 0; k <= len; k++) {
		struct vyre_work_item it = {VYRE_OP_FILL, 0, h, k == len ? 77 : k + 1};
		int rc;

		/* a small SQ fills up: its first pieces must fail before the rest fits */
		while ((rc = vyre_submit(c, &it, k, k + 1 < len ? VYRE_SQE_CHAIN : 0)) ==
		       VYRE_E_AGAIN)
			if (collect(c, q, 64, &got, what))
				return -1;
		if (rc != 0)
			FAIL("%s: submit: %s", what, vyre_strerror(rc));
	}
	while (got < len + 1)
		if (collect(c, q, 64, &got, what))
			return -1;
	for (uint32_t k = 0; k <= len; k++) {
		int32_t want = k == 0 ? VYRE_E_INVAL : k < len ? VYRE_E_CANCELED : 0;

		if (q[k].user_data != k || q[k].status != want)
			FAIL("%s: CQE %u: user_data %" PRIu64 " status %s, %s was due", what, k,
			     q[k].user_data, vyre_strerror(q[k].status), vyre_strerror(want));
	}
	if (word(p, 0) != 77)
		FAIL("%s: buffer holds %u: a cancelled fill ran", what, word(p, 0));
	vyre_close(c);
	printf("ok: %s\n", what);
	return 0;
}

static int oversize_chains(void)
{
	struct vyre_client *c;
	struct vyre_cqe q[MAX_BATCH];
	uint32_t h;
	uint8_t *p;

	if (oversize(0, 0, MAX_BATCH + 4, "a chain longer than --max-batch fails whole") ||
	    oversize(64, 8, 12, "a chain longer than the client's CQ fails whole, in pieces") ||
	    oversize(8, 64, 12, "a chain longer than the client's SQ fails whole, in pieces"))
		return -1;
	/* exactly --max-batch items is not too long */
	if (connect_to(NULL, 0, 0, 0, &c) || alloc(c, 64, 0, &h, &p))
		return -1;
	for (uint32_t k = 0; k < MAX_BATCH; k++)
		if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, h, k + 1}, k,
			   k + 1 < MAX_BATCH ? VYRE_SQE_CHAIN : 0, NULL, NULL))
			return -1;
	if (expect_cqes(c, 0, MAX_BATCH, q))
		return -1;
	for (uint32_t k = 0; k < MAX_BATCH; k++)
		if (expect_status(&q[k], 0, "a chain of --max-batch items"))
			return -1;
	if (word(p, 0) != MAX_BATCH)
		FAIL("a chain of --max-batch fills left %u", word(p, 0));
	vyre_close(c);
	printf("ok: a chain of exactly --max-batch items runs\n");
	return 0;
}

static int late_tail(void)
{
	struct vyre_client *c;
	struct vyre_cqe q[4];
	uint32_t h[4];
	uint8_t *p[4];

	if (connect_to(NULL, 0, 0, 0, &c))
		return -1;
	for (uint32_t k = 0; k < 4; k++)
		if (alloc(c, 64, 0, &h[k], &p[k]))
			return -1;
	for (uint32_t k = 0; k < 3; k++)
		if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, h[k], k + 1}, k,
			   VYRE_SQE_CHAIN, NULL, NULL))
			return -1;
	usleep(100 * 1000);
	int n = vyre_reap(c, q, 4);

	if (n != 0 || word(p[0], 0) != 0)
		FAIL("items of a chain without its last item ran (%d CQEs)", n);
	if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, h[3], 4}, 3, 0, NULL, NULL) ||
	    expect_cqes(c, 0, 4, q))
		return -1;
	for (uint32_t k = 0; k < 4; k++)
		if (expect_status(&q[k], 0, "late chain") || word(p[k], 15) != k + 1)
			FAIL("late chain: item %u", k);
	vyre_close(c);
	printf("ok: a chain waits for its last item\n");
	return 0;
}

/* ------------------------------------------------------------ transient buffers */

static int transient_rules(void)
{
	struct vyre_client *c;
	struct vyre_cqe q[4];
	uint32_t t, in, out, out2, h, bytes = 0;
	uint8_t *p, *pin, *pout, *pout2;
	const uint32_t dfa = (uint32_t)vyre_dfa_table_bytes(TABLE_STATES);

	if (connect_to(NULL, 0, 0, 0, &c) || alloc(c, dfa, VYRE_BUF_TRANSIENT, &t, &p) ||
	    alloc(c, 64, 0, &in, &pin) || alloc(c, 4, 0, &out, &pout) ||
	    alloc(c, 4, 0, &out2, &pout2))
		return -1;
	if (vyre_buffer_ptr(c, t, &bytes) != NULL || bytes != dfa)
		FAIL("vyre_buffer_ptr of a transient buffer: not NULL, or %u bytes", bytes);
	if (vyre_buffer_alloc(c, 64, VYRE_BUF_TRANSIENT | VYRE_BUF_DEVICE, &h) != VYRE_E_INVAL)
		FAIL("a transient device buffer was allocated");
	/* read outside a chain: a chain of one that never wrote it */
	if (submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, out, 0}, 1, 0, NULL, NULL) ||
	    expect_cqes(c, 1, 1, q) || expect_status(&q[0], VYRE_E_INVAL, "read outside a chain"))
		return -1;
	/* read before the write of its chain */
	if (submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, out, 0}, 2, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, t, 1}, 3, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, out2, 0}, 4, 0, NULL, NULL) ||
	    expect_cqes(c, 2, 3, q) || expect_status(&q[0], VYRE_E_INVAL, "read before a write") ||
	    expect_status(&q[1], VYRE_E_CANCELED, "write after it") ||
	    expect_status(&q[2], VYRE_E_CANCELED, "read after that"))
		return -1;
	/* written, then read: fine */
	if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, t, 2}, 5, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, out, 0}, 6, 0, NULL, NULL) ||
	    expect_cqes(c, 5, 2, q) || expect_status(&q[0], 0, "write") ||
	    expect_status(&q[1], 0, "read after the write") || q[1].result != 2ull * (dfa / 4))
		FAIL("write then read of a transient: result %" PRIu64, q[1].result);
	/* a write does not outlive its chain */
	if (submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, out, 0}, 7, 0, NULL, NULL) ||
	    expect_cqes(c, 7, 1, q) || expect_status(&q[0], VYRE_E_INVAL, "read in the next chain"))
		return -1;
	/* a transient table, even one its chain wrote */
	if (submit(c, (struct vyre_work_item){VYRE_OP_COPY, in, t, 0}, 8, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_DFA_SCAN, in, out, t}, 9, 0, NULL, NULL) ||
	    expect_cqes(c, 8, 2, q) || expect_status(&q[0], 0, "copy into the transient") ||
	    expect_status(&q[1], VYRE_E_INVAL, "transient table"))
		return -1;
	if (vyre_buffer_free(c, t) != 0)
		FAIL("free of a transient buffer");
	vyre_close(c);
	printf("ok: transient buffers: read only after a write of the chain, never a table, "
	       "never mapped\n");
	return 0;
}

#define SENTINEL 0xa5u
#define REGION	 (512u << 10)

/* 1 when every byte of the region is the sentinel. */
static int untouched(const uint8_t *r)
{
	for (uint32_t i = 0; i < REGION; i++)
		if (r[i] != SENTINEL)
			return 0;
	return 1;
}

/*
 * A transient of @bytes allocated where a freed buffer was, whose bytes the
 * test can still see through the heap mapping at @region: a FILL -> SUM
 * pair kept on chip leaves them as they were; with a MAX reading the
 * transient after the pair, the heap holds it and the FILL writes them.
 */
static int handoff_bytes_untouched(struct vyre_client *c, uint8_t *region, uint32_t bytes,
				   uint32_t out, uint32_t out2, const uint8_t *pout)
{
	struct vyre_cqe q[3];
	uint32_t t;
	uint8_t *p;
	const uint32_t v = 0x01010101u;
	const uint64_t sum = (uint32_t)(v * (bytes / 4));

	if (alloc(c, bytes, VYRE_BUF_TRANSIENT, &t, &p))
		return -1;
	/* the allocation zeroed the transient's part: the sentinel goes back over it */
	memset(region, SENTINEL, REGION);
	if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, t, v}, 1, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, out, 0}, 2, 0, NULL, NULL) ||
	    expect_cqes(c, 1, 2, q) || expect_status(&q[0], 0, "fill") ||
	    expect_status(&q[1], 0, "sum"))
		return -1;
	if (q[1].result != sum || word(pout, 0) != (uint32_t)sum)
		FAIL("%u-byte pair: sum %" PRIu64 " (buffer %u), %" PRIu64 " was due", bytes,
		     q[1].result, word(pout, 0), sum);
	if (!untouched(region))
		FAIL("%u-byte pair kept on chip: the transient's heap bytes were written", bytes);
	/* the control: read again after the pair, the transient goes through the heap */
	if (submit(c, (struct vyre_work_item){VYRE_OP_FILL, 0, t, v}, 3, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, out, 0}, 4, VYRE_SQE_CHAIN, NULL,
		   NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_MAX, t, out2, 0}, 5, 0, NULL, NULL) ||
	    expect_cqes(c, 3, 3, q))
		return -1;
	if (q[1].result != sum || q[2].result != v)
		FAIL("%u-byte control chain: sum %" PRIu64 " max %" PRIu64, bytes, q[1].result,
		     q[2].result);
	if (untouched(region))
		FAIL("control: the transient is not where the test looks for it");
	if (vyre_buffer_free(c, t) != 0)
		FAIL("free");
	printf("ok: a %u-byte transient handed from FILL to SUM on chip: its heap bytes untouched "
	       "(a chain that reads it again writes them)\n",
	       bytes);
	return 0;
}

/* The buffers a BYTEMAP -> DFA_SCAN_COUNTED pair reads and writes. */
struct map_scan {
	uint32_t in, map, dfa, out, out2;
	uint8_t *pin, *pout;
};

/*
 * handoff_bytes_untouched's check with a BYTEMAP of @bytes - 4 counted bytes
 * into the transient (every byte made odd) and a DFA_SCAN_COUNTED of it (the
 * 2-state table accepts after an odd byte: every position counts); the
 * control reads the transient again with a SUM.
 */
static int map_scan_untouched(struct vyre_client *c, uint8_t *region, uint32_t bytes,
			      const struct map_scan *m)
{
	struct vyre_cqe q[3];
	const uint32_t len = bytes - 4;
	uint32_t t;
	uint8_t *p;

	if (alloc(c, bytes, VYRE_BUF_TRANSIENT, &t, &p))
		return -1;
	memset(region, SENTINEL, REGION);
	memcpy(m->pin, &len, 4);
	for (uint32_t i = 0; i < len; i++)
		m->pin[4 + i] = (uint8_t)(i * 7);
	if (submit(c, (struct vyre_work_item){VYRE_OP_BYTEMAP, m->in, t, m->map}, 1, VYRE_SQE_CHAIN,
		   NULL, NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_DFA_SCAN_COUNTED, t, m->out, m->dfa}, 2, 0,
		   NULL, NULL) ||
	    expect_cqes(c, 1, 2, q) || expect_status(&q[0], 0, "map") ||
	    expect_status(&q[1], 0, "scan"))
		return -1;
	if (q[0].result != len || q[1].result != len || word(m->pout, 0) != len)
		FAIL("%u-byte map -> scan: map %" PRIu64 ", scan %" PRIu64
		     " (buffer %u), %u was due",
		     bytes, q[0].result, q[1].result, word(m->pout, 0), len);
	if (!untouched(region))
		FAIL("%u-byte map -> scan kept on chip: the transient's heap bytes were written",
		     bytes);
	if (submit(c, (struct vyre_work_item){VYRE_OP_BYTEMAP, m->in, t, m->map}, 3, VYRE_SQE_CHAIN,
		   NULL, NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_DFA_SCAN_COUNTED, t, m->out, m->dfa}, 4,
		   VYRE_SQE_CHAIN, NULL, NULL) ||
	    submit(c, (struct vyre_work_item){VYRE_OP_SUM, t, m->out2, 0}, 5, 0, NULL, NULL) ||
	    expect_cqes(c, 3, 3, q) || expect_status(&q[0], 0, "control map") ||
	    expect_status(&q[1], 0, "control scan") || expect_status(&q[2], 0, "control sum"))
		return -1;
	if (q[1].result != len)
		FAIL("%u-byte control chain: scan %" PRIu64, bytes, q[1].result);
	if (untouched(region))
		FAIL("control: the transient is not where the test looks for it");
	if (vyre_buffer_free(c, t) != 0)
		FAIL("free");
	printf("ok: a %u-byte transient handed from BYTEMAP to DFA_SCAN_COUNTED on chip: its "
	       "heap bytes untouched (a chain that reads it again writes them)\n",
	       bytes);
	return 0;
}

static int on_cuda(void)
{
	const char *b = getenv("VYRE_TEST_BACKEND");

	return b && strcmp(b, "cuda") == 0;
}

static int handoff_untouched(void)
{
	struct vyre_client *c;
	struct map_scan m;
	uint32_t x;
	uint8_t *region, *pout2, *pmap, *pdfa;

	/* the others first: everything allocated after the region's free lands in it */
	if (connect_to(NULL, 0, 0, 4u << 20, &c) || alloc(c, 4, 0, &m.out, &m.pout) ||
	    alloc(c, 4, 0, &m.out2, &pout2) || alloc(c, 256u << 10, 0, &m.in, &m.pin) ||
	    alloc(c, 256, 0, &m.map, &pmap) ||
	    alloc(c, 12 + 4 * 256 * TABLE_STATES, 0, &m.dfa, &pdfa) ||
	    alloc(c, REGION, 0, &x, &region))
		return -1;
	for (uint32_t b = 0; b < 256; b++)
		pmap[b] = (uint8_t)(b | 1u);
	write_table(pdfa);
	if (vyre_buffer_free(c, x) != 0)
		FAIL("free");
	/* inline on the loop's thread, then on a worker (the CPU backend) */
	if (map_scan_untouched(c, region, 4096, &m) ||
	    map_scan_untouched(c, region, 256u << 10, &m))
		return -1;
	if (!on_cuda() && (handoff_bytes_untouched(c, region, 4096, m.out, m.out2, m.pout) ||
			   handoff_bytes_untouched(c, region, 256u << 10, m.out, m.out2, m.pout)))
		return -1;
	vyre_close(c);
	return 0;
}

static int run(void)
{
	const char *cpu[] = {"--backend",  "cpu", "--max-batch",   "16", "--min-share", "4",
			     "--inflight", "3",	  "--cpu-threads", "2",	 NULL};
	/* $VYRED adds --backend cuda */
	const char *cuda[] = {"--max-batch", "16", "--min-share", "4", "--inflight", "3", NULL};

	if (on_cuda())
		printf("on the CUDA backend\n");
	if (vyre_test_daemon_start(&daemon_, on_cuda() ? cuda : cpu) != 0)
		return -1;
	if (random_producers() || failing_items() || oversize_chains() || late_tail() ||
	    transient_rules() || handoff_untouched())
		return -1;
	int rc = vyre_test_daemon_stop(&daemon_);

	if (rc != 0)
		FAIL("vyred exit %d", rc);
	return 0;
}

int main(void)
{
	int rc = run();

	if (rc != 0)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	if (rc == 0)
		printf("PASS\n");
	return rc == 0 ? 0 : 1;
}
