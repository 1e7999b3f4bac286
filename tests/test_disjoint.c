/* SPDX-License-Identifier: MIT */
/*
 * test_disjoint - batches whose items share no written buffer are planned
 * by vyred itself, without the planner (tools/vyred/disjoint.h), against a
 * real vyred. Three clients, two in one domain that share read-only inputs,
 * submit bursts of random elementwise and reduction items in one call each,
 * so vyred drains them into batches of many items:
 *
 *  - disjoint bursts: every item writes an output of its own and reads
 *    inputs no item writes, so the batches qualify;
 *  - clashing bursts: the same with one hazard put in (two items writing
 *    one output, an item reading what an earlier one wrote, or a later
 *    item writing what an earlier one read), so the batch must go to the
 *    planner and the order must hold.
 *
 * Every CQE's status and result and every buffer after each round equal
 * the items run one at a time in submission order (each client's outputs
 * are its own, so its order is the oracle's), and vyred's exit log says
 * how many batches took the path, which must be some. The CPU backend runs
 * each group's items backwards (VYRE_CPU_GROUP_ORDER=reverse), so a
 * clashing batch planned as one group gives wrong results.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/ops.h"
#include "test_integration_daemon.h"
#include "test_rand.h"
#include "vyre/vyre.h"

#define CLIENTS	   3u
#define OUTS	   96u /* output buffers of a client */
#define INS	   16u /* input buffers of a domain, never written in a disjoint burst */
#define WORDS	   16u /* words a buffer */
#define MAX_BURST  OUTS
#define ROUNDS	   60u
#define HEAP_BYTES (8ull << 20)
#define WAIT_NS	   (60ll * 1000000000ll)

static struct vyre_test_daemon daemon_;

struct client {
	struct vyre_client *c;
	uint32_t out[OUTS];
	uint32_t *outp[OUTS];
	uint32_t model[OUTS][WORDS]; /* what out[] must hold */
	const uint32_t *in;	     /* the domain's input handles */
	uint32_t *const *inp;
	uint32_t (*in_model)[WORDS];
};

struct domain_inputs {
	uint32_t in[INS];
	uint32_t *inp[INS];
	uint32_t model[INS][WORDS];
};

/* One item of a burst, and where its operands live in the model. */
struct planned {
	struct vyre_work_item it;
	uint32_t *src, *dst; /* model words, src NULL for FILL */
	uint64_t result;
};

static uint64_t apply(uint32_t op, uint32_t param, const uint32_t *src, uint32_t *dst)
{
	uint32_t v[WORDS];
	uint64_t acc = 0;

	if (src)
		memcpy(v, src, sizeof(v));
	switch (op) {
	case VYRE_OP_FILL:
		for (uint32_t i = 0; i < WORDS; i++)
			dst[i] = param;
		return 0;
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		for (uint32_t i = 0; i < WORDS; i++)
			dst[i] = op == VYRE_OP_COPY  ? v[i]
				 : op == VYRE_OP_ADD ? v[i] + param
				 : op == VYRE_OP_XOR ? v[i] ^ param
						     : v[i] * param;
		return 0;
	case VYRE_OP_SUM:
		for (uint32_t i = 0; i < WORDS; i++)
			acc = (uint32_t)(acc + v[i]);
		dst[0] = (uint32_t)acc;
		return acc;
	default: /* MAX */
		for (uint32_t i = 0; i < WORDS; i++)
			acc = v[i] > acc ? v[i] : acc;
		dst[0] = (uint32_t)acc;
		return acc;
	}
}

static int alloc(struct vyre_client *c, uint32_t *h, uint32_t **p)
{
	int rc = vyre_buffer_alloc(c, WORDS * 4, 0, h);

	if (rc != 0)
		FAIL("alloc: %s", vyre_strerror(rc));
	*p = vyre_buffer_ptr(c, *h, NULL);
	if (!*p)
		FAIL("buffer_ptr");
	return 0;
}

static int setup(struct client *cl, const char *domain, struct domain_inputs *di, int owner,
		 uint64_t *rng)
{
	struct vyre_connect_opts o = {.socket_path = daemon_.socket,
				      .domain = domain,
				      .heap_bytes = HEAP_BYTES,
				      .sq_entries = 1024,
				      .cq_entries = 1024};
	int rc = vyre_connect(&o, &cl->c);

	if (rc != 0)
		FAIL("connect %s: %s", domain, vyre_strerror(rc));
	for (uint32_t j = 0; owner && j < INS; j++) {
		if (alloc(cl->c, &di->in[j], &di->inp[j]))
			return -1;
		for (uint32_t w = 0; w < WORDS; w++)
			di->inp[j][w] = di->model[j][w] = (uint32_t)splitmix64(rng);
	}
	for (uint32_t j = 0; j < OUTS; j++) {
		if (alloc(cl->c, &cl->out[j], &cl->outp[j]))
			return -1;
		memset(cl->model[j], 0, sizeof(cl->model[j]));
	}
	cl->in = di->in;
	cl->inp = di->inp;
	cl->in_model = di->model;
	return 0;
}

/* A burst of @n items for @cl; with @clash, one hazard among them. */
static void make_burst(struct client *cl, struct planned *p, uint32_t n, int clash, uint64_t *rng)
{
	static const uint32_t ops[] = {VYRE_OP_FILL, VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,
				       VYRE_OP_MUL,  VYRE_OP_SUM,  VYRE_OP_MAX};
	uint32_t perm[OUTS];

	for (uint32_t j = 0; j < OUTS; j++)
		perm[j] = j;
	for (uint32_t j = OUTS - 1; j > 0; j--) {
		const uint32_t k = (uint32_t)(splitmix64(rng) % (j + 1));
		const uint32_t t = perm[j];

		perm[j] = perm[k];
		perm[k] = t;
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t op = ops[splitmix64(rng) % 7];
		const uint32_t in = (uint32_t)(splitmix64(rng) % INS);

		p[i].it = (struct vyre_work_item){op, op == VYRE_OP_FILL ? 0 : cl->in[in],
						  cl->out[perm[i]], (uint32_t)splitmix64(rng)};
		p[i].src = op == VYRE_OP_FILL ? NULL : cl->in_model[in];
		p[i].dst = cl->model[perm[i]];
	}
	if (!clash || n < 2)
		return;
	/* a later item b against an earlier a: WAW, RAW or WAR */
	const uint32_t a = (uint32_t)(splitmix64(rng) % (n - 1));
	const uint32_t b = a + 1 + (uint32_t)(splitmix64(rng) % (n - 1 - a));

	switch (splitmix64(rng) % 3) {
	case 0:
		p[b].it.output_handle = p[a].it.output_handle;
		p[b].dst = p[a].dst;
		break;
	case 1:
		if (p[b].it.op_handle == VYRE_OP_FILL)
			p[b].it.op_handle = VYRE_OP_ADD;
		p[b].it.input_handle = p[a].it.output_handle;
		p[b].src = p[a].dst;
		break;
	default:
		if (p[a].it.op_handle == VYRE_OP_FILL)
			p[a].it.op_handle = VYRE_OP_COPY;
		p[a].it.input_handle = p[b].it.output_handle;
		p[a].src = p[b].dst;
		break;
	}
}

static int submit_burst(struct client *cl, struct planned *p, uint32_t n)
{
	struct vyre_work_item its[MAX_BURST];
	uint64_t ud[MAX_BURST];

	for (uint32_t i = 0; i < n; i++) {
		its[i] = p[i].it;
		ud[i] = i;
		/* the model, in submission order */
		p[i].result = apply(p[i].it.op_handle, p[i].it.param, p[i].src, p[i].dst);
	}
	/* one call puts the burst in the SQ at once; a full SQ takes the rest as vyred drains it */
	for (uint32_t done = 0, tries = 0; done < n; tries++) {
		const int rc = vyre_submit_batch(cl->c, its + done, ud + done, n - done);

		if (rc < 0 || tries > 1000000)
			FAIL("submit_batch: %s after %u of %u",
			     rc < 0 ? vyre_strerror(rc) : "no room", done, n);
		done += (uint32_t)rc;
		if (done < n)
			sched_yield();
	}
	return 0;
}

static int reap_burst(struct client *cl, const struct planned *p, uint32_t n, uint32_t round)
{
	struct vyre_cqe cqe[MAX_BURST];
	uint32_t got = 0;

	while (got < n) {
		const int k = vyre_wait(cl->c, cqe, n - got, WAIT_NS);

		if (k < 0)
			FAIL("round %u: wait: %s", round, vyre_strerror(k));
		for (int j = 0; j < k; j++) {
			const struct vyre_cqe *q = &cqe[j];

			if (q->user_data >= n || q->status != 0 ||
			    q->result != p[q->user_data].result)
				FAIL("round %u item %" PRIu64 ": status %d result %" PRIu64
				     ", expected 0 and %" PRIu64,
				     round, q->user_data, q->status, q->result,
				     q->user_data < n ? p[q->user_data].result : 0);
		}
		got += (uint32_t)k;
	}
	for (uint32_t j = 0; j < OUTS; j++)
		if (memcmp(cl->outp[j], cl->model[j], sizeof(cl->model[j])) != 0)
			FAIL("round %u: output %u differs from the sequential oracle", round, j);
	return 0;
}

/* The count in vyred's exit log line on batches planned without the planner, 0: none. */
static unsigned long long disjoint_batches(void)
{
	char line[512];
	unsigned long long n = 0;
	FILE *f = fopen(daemon_.log, "r");

	while (f && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, "vyred: ");

		if (at && strstr(line, "planned without the planner"))
			sscanf(at, "vyred: %llu batches", &n);
	}
	if (f)
		fclose(f);
	return n;
}

int main(void)
{
	const char *extra[] = {"--backend", "cpu", "--loops", "1", NULL};
	static struct client cl[CLIENTS];
	static struct domain_inputs di[2];
	static struct planned p[CLIENTS][MAX_BURST];
	uint64_t rng = 0x5eed0d15ull;
	uint32_t n[CLIENTS];
	int rc = 0;

	/* a group's items run backwards: a hazard planned into one group shows */
	setenv("VYRE_CPU_GROUP_ORDER", "reverse", 1);
	if (vyre_test_daemon_start(&daemon_, extra) != 0) {
		fprintf(stderr, "cannot start vyred\n");
		return 1;
	}
	if (setup(&cl[0], "disjoint-a", &di[0], 1, &rng) ||
	    setup(&cl[1], "disjoint-a", &di[0], 0, &rng) ||
	    setup(&cl[2], "disjoint-b", &di[1], 1, &rng))
		rc = 1;
	for (uint32_t r = 0; r < ROUNDS * vyre_test_scale() && rc == 0; r++) {
		const int clash = r % 3 == 2;

		for (uint32_t c = 0; c < CLIENTS && rc == 0; c++) {
			n[c] = 9 + (uint32_t)(splitmix64(&rng) % (MAX_BURST - 8));
			make_burst(&cl[c], p[c], n[c], clash, &rng);
			rc = submit_burst(&cl[c], p[c], n[c]) ? 1 : 0;
		}
		for (uint32_t c = 0; c < CLIENTS && rc == 0; c++)
			rc = reap_burst(&cl[c], p[c], n[c], r) ? 1 : 0;
	}
	for (uint32_t c = 0; c < CLIENTS; c++)
		if (cl[c].c)
			vyre_close(cl[c].c);
	if (vyre_test_daemon_stop(&daemon_) != 0) {
		fprintf(stderr, "FAIL: vyred did not stop cleanly\n");
		rc = 1;
	}
	const unsigned long long taken = disjoint_batches();

	printf("%u rounds, a third with a hazard; %llu batches planned without the planner\n",
	       ROUNDS, taken);
	if (rc == 0 && taken == 0) {
		fprintf(stderr, "FAIL: no batch was planned without the planner\n");
		rc = 1;
	}
	if (rc)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	printf("%s\n", rc ? "FAIL" : "PASS");
	return rc;
}
