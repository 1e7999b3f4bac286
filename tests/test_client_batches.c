/* SPDX-License-Identifier: MIT */
/*
 * test_client_batches - one client with several batches in flight
 * (vyred --client-batches, docs/design.md 8.6), against a real vyred on the
 * CPU backend. A slow item is a DFA_SCAN over a large buffer (one thread
 * walks it byte by byte); the accept log tells when vyred dispatched it. A
 * CQE's complete_ns is when its batch completed, so a CQE that carries an
 * earlier complete_ns than a CQE before it in the CQ came from a batch that
 * finished first and was held.
 *
 *  - overlap and order: tiny independent items submitted behind a slow one
 *    run while it runs (their batch completes first, and the exit log says
 *    2 batches of one client were in flight at once), yet their CQEs come
 *    after its CQE, in submission order; --client-batches 1 (the control,
 *    so the checks can fail) runs them after it;
 *  - hazards between a client's own batches: RAW, WAR and WAW against its
 *    own slow scan wait for it (and so does every item after them), with
 *    the results of sequential execution;
 *  - FENCE: a FENCE item behind a client's batch in flight, and the items
 *    after it, wait for that batch; without the flag they do not;
 *  - CQ credit: with a CQ of 8 entries, 40 items behind a slow one, reaped
 *    slowly: every CQE arrives once, in order, none overwritten;
 *  - a deep window of random items on a few buffers, with slow scans and
 *    FENCE items among them, with --client-batches 2 and 4: every CQE and
 *    the final heap equal the sequential oracle's, and own hazards were
 *    held.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/backend.h"
#include "../gpu/ops.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define BIG_BYTES  (48u << 20)
#define HEAP_BYTES (64ull << 20)
#define WAIT_NS	   (120ll * 1000000000ll)
#define TINY	   16u /* tiny items behind a slow one */
#define TINY_BYTES 64u
#define SKIP_BYTE  0x5a /* the scan table counts the bytes that are not this */

static struct vyre_test_daemon daemon_;

struct fixture {
	struct vyre_client *c;
	uint32_t big, table, count;
	uint8_t *bigp;
	uint32_t *countp;
	uint32_t in[TINY], out[TINY];
	uint32_t counted; /* the scan's result over big as made */
};

static int start(const char *client_batches)
{
	const char *extra[] = {
	    "--backend",	"cpu",		"--inflight", "4", "--cpu-threads", "2",
	    "--client-batches", client_batches, NULL};

	return vyre_test_daemon_start(&daemon_, client_batches ? extra : NULL);
}

/* Stop vyred; its exit log's batches of one client at once and hazard holds. */
static int stop(unsigned *most_client, unsigned long long *holds)
{
	int rc = vyre_test_daemon_stop(&daemon_);
	char line[512];
	FILE *f;
	int found = 0;

	if (rc != 0) {
		vyre_test_daemon_dump_log(&daemon_);
		FAIL("vyred exit %d", rc);
	}
	f = fopen(daemon_.log, "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, "batches in flight at once");

		if (!strstr(line, "stopped after") || !at || !(at = strchr(at, ',')))
			continue;
		found = sscanf(at, ", %u of one client, %llu holds", most_client, holds) == 2;
	}
	if (f)
		fclose(f);
	if (!found) {
		vyre_test_daemon_dump_log(&daemon_);
		FAIL("no 'of one client' figure in vyred's exit log");
	}
	vyre_test_daemon_cleanup(&daemon_);
	return 0;
}

static int connect_to(struct vyre_client **c, uint32_t sq, uint32_t cq)
{
	struct vyre_connect_opts o = {.socket_path = daemon_.socket,
				      .heap_bytes = HEAP_BYTES,
				      .sq_entries = sq,
				      .cq_entries = cq};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	return 0;
}

static int alloc(struct vyre_client *c, uint32_t bytes, uint32_t *h, uint8_t **p)
{
	int rc = vyre_buffer_alloc(c, bytes, 0, h);

	if (rc != 0)
		FAIL("alloc %u bytes: %s", bytes, vyre_strerror(rc));
	*p = vyre_buffer_ptr(c, *h, NULL);
	if (!*p)
		FAIL("buffer_ptr");
	return 0;
}

/* A 2-state DFA that accepts after every byte but SKIP_BYTE. */
static void fill_table(uint32_t *w)
{
	w[0] = 2;
	w[1] = 0;
	w[2] = 2; /* state 1 accepts */
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t b = 0; b < 256; b++)
			w[3 + s * 256 + b] = b == SKIP_BYTE ? 0 : 1;
}

static int make_fixture(struct fixture *fx, uint32_t sq, uint32_t cq)
{
	uint8_t *p;

	memset(fx, 0, sizeof(*fx));
	if (connect_to(&fx->c, sq, cq) || alloc(fx->c, BIG_BYTES, &fx->big, &fx->bigp) ||
	    alloc(fx->c, (uint32_t)vyre_dfa_table_bytes(2), &fx->table, &p))
		return -1;
	fill_table((uint32_t *)p);
	for (uint32_t i = 0; i < BIG_BYTES; i++) {
		fx->bigp[i] = (uint8_t)(i * 7u + 1u);
		fx->counted += fx->bigp[i] != SKIP_BYTE;
	}
	if (alloc(fx->c, 4, &fx->count, &p))
		return -1;
	fx->countp = (uint32_t *)p;
	for (uint32_t t = 0; t < TINY; t++) {
		if (alloc(fx->c, TINY_BYTES, &fx->in[t], &p))
			return -1;
		for (uint32_t k = 0; k < TINY_BYTES / 4; k++)
			((uint32_t *)p)[k] = t * 1000u + k;
		if (alloc(fx->c, TINY_BYTES, &fx->out[t], &p))
			return -1;
	}
	return 0;
}

static int submit(struct vyre_client *c, uint32_t op, uint32_t in, uint32_t out, uint32_t param,
		  uint64_t user_data, uint32_t flags)
{
	struct vyre_work_item it = {op, in, out, param};
	int rc = vyre_submit(c, &it, user_data, flags);

	if (rc != 0)
		FAIL("submit %" PRIu64 ": %s", user_data, vyre_strerror(rc));
	return 0;
}

/* The next @n CQEs, which must carry user_data @first, @first + 1, ... in this order. */
static int wait_in_order(struct vyre_client *c, uint64_t first, uint32_t n, struct vyre_cqe *out)
{
	uint32_t got = 0;

	while (got < n) {
		int k = vyre_wait(c, out + got, n - got, WAIT_NS);

		if (k <= 0)
			FAIL("CQE %u of %u (user_data %" PRIu64 "): %s", got, n, first + got,
			     k < 0 ? vyre_strerror(k) : "timeout");
		for (int i = 0; i < k; i++, got++)
			if (out[got].user_data != first + got)
				FAIL("CQE %" PRIu64 " came where %" PRIu64 " was due",
				     out[got].user_data, first + got);
	}
	return 0;
}

/* The tiny item @t: out[t] = in[t] + t + 1, word by word. */
static int tiny_ok(const struct fixture *fx, uint32_t t, const struct vyre_cqe *cqe)
{
	const uint32_t *o = vyre_buffer_ptr(fx->c, fx->out[t], NULL);

	if (cqe->status != 0)
		FAIL("tiny item %u: %s", t, vyre_strerror(cqe->status));
	for (uint32_t k = 0; k < TINY_BYTES / 4; k++)
		if (o[k] != t * 1000u + k + t + 1u)
			FAIL("tiny item %u: word %u is %u", t, k, o[k]);
	return 0;
}

static int wait_dispatched(uint64_t user_data)
{
	return vyre_test_wait_dispatched(&daemon_, user_data, WAIT_NS);
}

/*
 * A slow scan, then TINY independent items (@flags on the first): their
 * CQEs in submission order and right. Returns 1 when the first tiny item's
 * batch completed before the scan's, 0 when after, -1 on failure.
 */
static int behind_slow(struct fixture *fx, uint64_t base, uint32_t flags)
{
	struct vyre_cqe cqe[TINY + 1];

	if (submit(fx->c, VYRE_OP_DFA_SCAN, fx->big, fx->count, fx->table, base, 0) ||
	    wait_dispatched(base))
		return -1;
	for (uint32_t t = 0; t < TINY; t++)
		if (submit(fx->c, VYRE_OP_ADD, fx->in[t], fx->out[t], t + 1, base + 1 + t,
			   t ? 0 : flags))
			return -1;
	if (wait_in_order(fx->c, base, TINY + 1, cqe))
		return -1;
	if (cqe[0].status != 0 || cqe[0].result != fx->counted)
		FAIL("slow scan: status %d result %" PRIu64 ", want %u", cqe[0].status,
		     cqe[0].result, fx->counted);
	for (uint32_t t = 0; t < TINY; t++)
		if (tiny_ok(fx, t, &cqe[1 + t]))
			return -1;
	/* every tiny item after a FENCE first waits with it */
	for (uint32_t t = 1; flags && t < TINY; t++)
		if (cqe[1 + t].complete_ns < cqe[0].complete_ns)
			FAIL("tiny item %u behind a FENCE finished before the slow scan", t);
	return cqe[1].complete_ns < cqe[0].complete_ns;
}

static int overlap_and_order(void)
{
	struct fixture fx;
	unsigned most = 0;
	unsigned long long holds = 0;
	int early;

	if (start("2") || make_fixture(&fx, 0, 0) || (early = behind_slow(&fx, 1, 0)) < 0)
		return -1;
	vyre_close(fx.c);
	if (stop(&most, &holds))
		return -1;
	if (!early || most < 2)
		FAIL("--client-batches 2: tiny items behind a slow one did not run beside it "
		     "(finished first %d, most batches of one client %u)",
		     early, most);
	printf("ok: --client-batches 2: a later batch finishes first, its CQEs still come after "
	       "the earlier one's, in order (%u batches of one client at once)\n",
	       most);
	if (start("1") || make_fixture(&fx, 0, 0) || (early = behind_slow(&fx, 1, 0)) < 0)
		return -1;
	vyre_close(fx.c);
	if (stop(&most, &holds))
		return -1;
	if (early || most != 1)
		FAIL("--client-batches 1: finished first %d, most batches of one client %u", early,
		     most);
	printf("ok: --client-batches 1 (control): the items wait for the slow one\n");
	return 0;
}

static int fence(void)
{
	struct fixture fx;
	unsigned most;
	unsigned long long holds;
	int early;

	if (start("2") || make_fixture(&fx, 0, 0))
		return -1;
	if ((early = behind_slow(&fx, 1, VYRE_SQE_FENCE)) < 0)
		return -1;
	if (early)
		FAIL("a FENCE item finished before its client's batch in flight");
	if ((early = behind_slow(&fx, 100, 0)) < 0)
		return -1;
	if (!early)
		FAIL("the same items without FENCE waited too: the check cannot fail");
	vyre_close(fx.c);
	if (stop(&most, &holds))
		return -1;
	printf("ok: a FENCE item, and those after it, wait for its client's batch in flight\n");
	return 0;
}

/*
 * Behind the slow scan @base, @op on the scan's buffers, then a tiny
 * independent item: both wait for the scan (own hazard; the tiny one since
 * a client's items from a held one on wait).
 */
static int own_hazard(struct fixture *fx, uint64_t base, uint32_t op, uint32_t in, uint32_t out,
		      uint32_t param, struct vyre_cqe *cqe)
{
	if (submit(fx->c, VYRE_OP_DFA_SCAN, fx->big, fx->count, fx->table, base, 0) ||
	    wait_dispatched(base) || submit(fx->c, op, in, out, param, base + 1, 0) ||
	    submit(fx->c, VYRE_OP_ADD, fx->in[0], fx->out[0], 1, base + 2, 0) ||
	    wait_in_order(fx->c, base, 3, cqe) || tiny_ok(fx, 0, &cqe[2]))
		return -1;
	if (cqe[1].status != 0)
		FAIL("item %" PRIu64 ": %s", base + 1, vyre_strerror(cqe[1].status));
	if (cqe[1].complete_ns < cqe[0].complete_ns || cqe[2].complete_ns < cqe[0].complete_ns)
		FAIL("an item with a hazard against its own client's batch, or one after it, "
		     "finished before that batch");
	return 0;
}

static int hazards(void)
{
	struct fixture fx;
	struct vyre_cqe cqe[3];
	uint32_t plus;
	uint32_t *plusp;
	unsigned most;
	unsigned long long holds = 0;

	if (start("2") || make_fixture(&fx, 0, 0) || alloc(fx.c, 4, &plus, (uint8_t **)&plusp))
		return -1;
	/* RAW: add 1 to the count the scan writes */
	if (own_hazard(&fx, 10, VYRE_OP_ADD, fx.count, plus, 1, cqe))
		return -1;
	if (cqe[0].result != fx.counted || *plusp != fx.counted + 1)
		FAIL("RAW: scan %" PRIu64 ", count + 1 = %u, want %u", cqe[0].result, *plusp,
		     fx.counted + 1);
	printf("ok: RAW against its own batch in flight waits for it\n");
	/* WAW: overwrite the count the scan writes */
	if (own_hazard(&fx, 20, VYRE_OP_FILL, 0, fx.count, 7, cqe))
		return -1;
	if (cqe[0].result != fx.counted || *fx.countp != 7)
		FAIL("WAW: scan %" PRIu64 ", count %u after the fill, want 7", cqe[0].result,
		     *fx.countp);
	printf("ok: WAW against its own batch in flight waits for it\n");
	/* WAR: overwrite the input the scan reads with the byte it does not count */
	if (own_hazard(&fx, 30, VYRE_OP_FILL, 0, fx.big, SKIP_BYTE * 0x01010101u, cqe))
		return -1;
	if (cqe[0].result != fx.counted || fx.bigp[BIG_BYTES - 1] != SKIP_BYTE)
		FAIL("WAR: the scan counted %" PRIu64 " of %u: it saw the fill", cqe[0].result,
		     fx.counted);
	printf("ok: WAR against its own batch in flight waits for it\n");
	vyre_close(fx.c);
	if (stop(&most, &holds))
		return -1;
	if (holds == 0)
		FAIL("vyred logged no hazard hold");
	return 0;
}

/* With a CQ of 8 entries: a slow scan and 40 tiny items, reaped one at a time, slowly. */
static int cq_credit(void)
{
	enum { N = 40 };
	struct fixture fx;
	unsigned most;
	unsigned long long holds;

	if (start("2") || make_fixture(&fx, 64, 8))
		return -1;
	if (submit(fx.c, VYRE_OP_DFA_SCAN, fx.big, fx.count, fx.table, 1, 0) || wait_dispatched(1))
		return -1;
	for (uint32_t i = 0; i < N; i++)
		if (submit(fx.c, VYRE_OP_ADD, fx.in[i % TINY], fx.out[i % TINY], i % TINY + 1,
			   2 + i, 0))
			return -1;
	for (uint32_t i = 0; i <= N; i++) {
		struct vyre_cqe cqe;

		if (wait_in_order(fx.c, 1 + i, 1, &cqe))
			return -1;
		if (cqe.status != 0 || (i == 0 && cqe.result != fx.counted))
			FAIL("item %u: status %d result %" PRIu64, i + 1, cqe.status, cqe.result);
		usleep(500);
	}
	for (uint32_t t = 0; t < TINY; t++) {
		const struct vyre_cqe ok = {0};

		if (tiny_ok(&fx, t, &ok))
			return -1;
	}
	struct vyre_cqe extra;

	if (vyre_reap(fx.c, &extra, 1) != 0)
		FAIL("a CQE beyond the %u submitted: %" PRIu64, N + 1, extra.user_data);
	vyre_close(fx.c);
	if (stop(&most, &holds))
		return -1;
	printf("ok: CQ of 8: %u items over batches in flight, every CQE once and in order\n",
	       N + 1);
	return 0;
}

/* ---- a deep window of random items against the sequential oracle ---- */

#define NB	  8u	     /* small buffers */
#define SB	  256u	     /* their bytes */
#define RBIG	  (4u << 20) /* the big buffer the random scans read */
#define WINDOW	  64u
#define RAND_BASE 1000000u
#define ROUND	  48u /* a slow scan starts each round of random items */

struct world {
	uint32_t h[NB + 2]; /* NB small buffers, the big one, the table */
	uint64_t off[NB + 2];
	uint32_t bytes[NB + 2];
	uint8_t *local; /* the oracle's heap: every buffer at off[] */
	uint64_t local_bytes;
};

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

static int make_world(struct vyre_client *c, struct world *w, uint64_t *seed)
{
	uint64_t at = 0;

	for (uint32_t b = 0; b < NB + 2; b++) {
		w->bytes[b] = b < NB ? SB : b == NB ? RBIG : (uint32_t)vyre_dfa_table_bytes(2);
		w->off[b] = at;
		at += (w->bytes[b] + 63u) & ~63u;
	}
	w->local_bytes = at;
	w->local = calloc(1, at);
	if (!w->local)
		FAIL("calloc");
	for (uint32_t b = 0; b < NB + 2; b++) {
		uint8_t *p;

		if (alloc(c, w->bytes[b], &w->h[b], &p))
			return -1;
		if (b == NB + 1)
			fill_table((uint32_t *)p);
		else
			for (uint32_t k = 0; k < w->bytes[b]; k++)
				p[k] = (uint8_t)rnd(seed);
		memcpy(w->local + w->off[b], p, w->bytes[b]);
	}
	return 0;
}

/* A random item: its SQE form in @it, the oracle's in @x. */
static void random_item(const struct world *w, uint64_t *seed, int scan, struct vyre_work_item *it,
			struct vyre_exec_item *x, uint32_t *flags)
{
	static const uint32_t ops[] = {VYRE_OP_FILL, VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,
				       VYRE_OP_MUL,  VYRE_OP_SUM,  VYRE_OP_MAX};
	const uint32_t r = rnd(seed) % 1000;
	uint32_t in = rnd(seed) % NB, out = rnd(seed) % NB;
	uint32_t op = ops[rnd(seed) % (sizeof(ops) / sizeof(ops[0]))];

	if (scan || r < 10) {
		op = VYRE_OP_DFA_SCAN; /* slow: the big buffer */
		in = NB;
	} else if (r < 18) {
		op = VYRE_OP_FILL; /* rewrites what the scans read */
		out = NB;
	}
	memset(x, 0, sizeof(*x));
	x->op = op;
	x->param = op == VYRE_OP_DFA_SCAN ? 0 : rnd(seed);
	x->out_off = w->off[out];
	x->out_bytes = w->bytes[out];
	if (op != VYRE_OP_FILL) {
		x->in_off = w->off[in];
		x->in_bytes = w->bytes[in];
	}
	if (op == VYRE_OP_DFA_SCAN) {
		x->table_off = w->off[NB + 1];
		x->table_bytes = w->bytes[NB + 1];
	}
	*it = (struct vyre_work_item){op, op == VYRE_OP_FILL ? 0 : w->h[in], w->h[out],
				      op == VYRE_OP_DFA_SCAN ? w->h[NB + 1] : x->param};
	*flags = rnd(seed) % 50 == 0 ? VYRE_SQE_FENCE : 0;
}

static int random_window(const char *client_batches, uint64_t seed)
{
	const uint32_t n = (uint32_t)(1500u * vyre_test_scale());
	struct vyre_work_item *its = calloc(n, sizeof(*its));
	struct vyre_exec_item *xs = calloc(n, sizeof(*xs));
	struct vyre_exec_result *want = calloc(n, sizeof(*want));
	uint32_t *flags = calloc(n, sizeof(*flags));
	struct vyre_client *c;
	struct world w = {0};
	uint32_t sent = 0, done = 0;
	unsigned most;
	unsigned long long holds = 0;

	if (!its || !xs || !want || !flags)
		FAIL("calloc");
	if (start(client_batches) || connect_to(&c, 0, 0) || make_world(c, &w, &seed))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		random_item(&w, &seed, i % ROUND == 0, &its[i], &xs[i], &flags[i]);
	struct vyre_heap_view view = {w.local, w.local_bytes};

	vyre_exec_sequential(&view, xs, n, want);
	/*
	 * One item at a time, reaping what is there between; each round's scan
	 * is dispatched before the round's other items are published, so they
	 * find it in flight (hazards held, or a batch of their own beside it).
	 */
	while (done < n) {
		struct vyre_cqe cqe[WINDOW];
		int k;

		if (sent < n && sent - done < WINDOW) {
			if (submit(c, its[sent].op_handle, its[sent].input_handle,
				   its[sent].output_handle, its[sent].param, RAND_BASE + sent,
				   flags[sent]))
				return -1;
			if (sent++ % ROUND == 0 && wait_dispatched(RAND_BASE + sent - 1))
				return -1;
			k = vyre_reap(c, cqe, WINDOW);
		} else {
			k = vyre_wait(c, cqe, WINDOW, WAIT_NS);
			if (k == 0)
				k = VYRE_E_TIMEDOUT;
		}
		if (k < 0)
			FAIL("random item %u: %s", done, vyre_strerror(k));
		for (int i = 0; i < k; i++, done++) {
			if (cqe[i].user_data != RAND_BASE + done)
				FAIL("random: CQE %" PRIu64 " where %u was due",
				     cqe[i].user_data - RAND_BASE, done);
			if (cqe[i].status != want[done].status ||
			    cqe[i].result != want[done].result)
				FAIL("random item %u (op %u): status %d result %" PRIu64
				     ", the oracle %d %" PRIu64,
				     done, xs[done].op, cqe[i].status, cqe[i].result,
				     want[done].status, want[done].result);
		}
	}
	for (uint32_t b = 0; b < NB + 1; b++)
		if (memcmp(vyre_buffer_ptr(c, w.h[b], NULL), w.local + w.off[b], w.bytes[b]) != 0)
			FAIL("random: buffer %u differs from the oracle's", b);
	vyre_close(c);
	if (stop(&most, &holds))
		return -1;
	printf("ok: --client-batches %s: %u random items in a window of %u equal the sequential "
	       "oracle (%u batches of the client at once, %llu hazard holds)\n",
	       client_batches, n, WINDOW, most, holds);
	if (holds == 0)
		FAIL("no hazard hold: the client's own hazards were never exercised");
	free(its);
	free(xs);
	free(want);
	free(flags);
	free(w.local);
	return 0;
}

int main(void)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = overlap_and_order();
	if (rc == 0)
		rc = fence();
	if (rc == 0)
		rc = hazards();
	if (rc == 0)
		rc = cq_credit();
	if (rc == 0)
		rc = random_window("2", 0x9e3779b97f4a7c15ull);
	if (rc == 0)
		rc = random_window("4", 0x2545f4914f6cdd1dull);
	if (rc != 0)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	if (rc == 0)
		printf("PASS\n");
	return rc == 0 ? 0 : 1;
}
