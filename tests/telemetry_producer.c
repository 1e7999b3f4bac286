/* SPDX-License-Identifier: MIT */
/*
 * vyre-tm-producer - a vyred client whose load the telemetry tests can count
 * exactly from its own completions.
 *
 * usage: vyre-tm-producer --socket PATH [--pairs N] [--invalid N] [--readback N]
 *                         [--chains N] [--bad-tables N] [--bad-pairs N] [--hold]
 *
 * Each of N round trips submits two identical FILL items (out = buffer k %
 * 8, param k) in one vyre_submit_batch and waits for both CQEs: one or two
 * batches, one or two executions (the second item is DEDUPED when both were
 * drained together), and the CQE flags say which. Then --invalid round
 * trips of one item each name an op (odd k) or a buffer handle (even k)
 * that does not exist and complete with VYRE_E_INVAL. Then --readback round
 * trips of one COPY each from a device buffer of OUT_BYTES into a heap
 * buffer: OUT_BYTES of read-back each. Then --chains round trips of one
 * chain of two COPYs through a transient buffer of OUT_BYTES
 * (docs/design.md 6.3), which the CPU backend keeps on chip: OUT_BYTES of
 * bytes_avoided each. Then, with --bad-tables or --bad-pairs, one FILL
 * writes a DFA table malformed (every word ~0: n_states beyond the buffer)
 * and --bad-tables round trips of one DFA_SCAN each through it complete
 * with VYRE_E_INVAL: the planner lets them through, execution catches the
 * table. Then --bad-pairs round trips of two identical such DFA_SCANs, as
 * the FILL pairs: both VYRE_E_INVAL, the second DEDUPED (its source's
 * outcome) when both were drained together.
 * No round trip overlaps another, so every batch holds one round trip.
 *
 * Prints one JSON object: pid, items, deduped (CQEs flagged DEDUPED),
 * executed (items - deduped - rejected - exec_invalid: each item is one of
 * deduplicated, invalid or executed, docs/design.md 9), errors, rejected
 * (failed before planning), exec_invalid (failed at execution, not
 * DEDUPED), readback (bytes), avoided (bytes of transient buffers handed
 * off on chip), chains, and round_trips (the fewest batches the load can
 * have made; at most items). With --hold it then stays
 * connected until its stdin closes, so a watcher still sees a live client.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"

#define OUTS	    8u
#define OUT_BYTES   64u
#define WAIT_NS	    (10ll * 1000000000ll)
#define BAD_HANDLE  0x7fffffffu
#define TABLE_BYTES (4u * (2u + 1u + 256u)) /* a one-state DFA table's size */

struct tally {
	unsigned long items, deduped, errors, rejected, exec_invalid, round_trips, readback,
	    avoided, chains;
};

static int wait_all(struct vyre_client *c, uint32_t want, struct vyre_cqe *cqes)
{
	uint32_t got = 0;
	while (got < want) {
		int n = vyre_wait(c, cqes + got, want - got, WAIT_NS);
		if (n < 0)
			return n;
		got += (uint32_t)n;
	}
	return 0;
}

/*
 * One round trip of two identical items @it, both of status @want: a CQE
 * flagged DEDUPED counts as deduped, an unflagged failed one as exec_invalid.
 */
static int twice(struct vyre_client *c, const struct vyre_work_item *it, unsigned long k,
		 int32_t want, struct tally *t)
{
	const struct vyre_work_item its[2] = {*it, *it};
	const uint64_t ids[2] = {2 * k, 2 * k + 1};
	struct vyre_cqe cqes[2];
	/* one submission: both are published at once, so one drain mostly takes both */
	int rc = vyre_submit_batch(c, its, ids, 2);
	if (rc >= 0)
		rc = rc == 2 ? wait_all(c, 2, cqes) : VYRE_E_AGAIN;
	if (rc)
		return rc;
	for (int i = 0; i < 2; i++) {
		if (cqes[i].status != want)
			return VYRE_E_PROTO;
		if (cqes[i].flags & VYRE_CQE_DEDUPED)
			t->deduped++;
		else if (want != 0)
			t->exec_invalid++;
		t->errors += want != 0;
	}
	t->items += 2;
	t->round_trips++;
	return 0;
}

static int pair(struct vyre_client *c, const uint32_t *out, unsigned long k, struct tally *t)
{
	const struct vyre_work_item it = {VYRE_OP_FILL, 0, out[k % OUTS], (uint32_t)k};
	return twice(c, &it, k, 0, t);
}

/* Submits @it alone and waits for its CQE; VYRE_E_PROTO unless its status is @want. */
static int one_item(struct vyre_client *c, const struct vyre_work_item *it, unsigned long k,
		    int32_t want)
{
	struct vyre_cqe cqe;
	int rc = vyre_submit(c, it, k, 0);
	if (rc == 0)
		rc = wait_all(c, 1, &cqe);
	if (rc)
		return rc;
	return cqe.status == want ? 0 : VYRE_E_PROTO;
}

/* One round trip of @it, which must fail with VYRE_E_INVAL; @kind: where it is tallied. */
static int one_invalid(struct vyre_client *c, const struct vyre_work_item *it, unsigned long k,
		       struct tally *t, unsigned long *kind)
{
	int rc = one_item(c, it, k, VYRE_E_INVAL);
	if (rc)
		return rc;
	t->items++;
	t->errors++;
	(*kind)++;
	t->round_trips++;
	return 0;
}

/* An unknown op (odd @k) or a handle that does not exist (even @k). */
static int invalid(struct vyre_client *c, const uint32_t *out, unsigned long k, struct tally *t)
{
	const struct vyre_work_item bad_handle = {VYRE_OP_FILL, 0, BAD_HANDLE, 0};
	const struct vyre_work_item bad_op = {VYRE_OP_COUNT + 7u, 0, out[k % OUTS], 0};
	return one_invalid(c, k % 2 ? &bad_op : &bad_handle, k, t, &t->rejected);
}

/* A DFA_SCAN of out[0] through the malformed table @table: fails when it runs. */
static struct vyre_work_item bad_scan(uint32_t table, const uint32_t *out, unsigned long k)
{
	return (struct vyre_work_item){VYRE_OP_DFA_SCAN, out[0], out[1 + k % (OUTS - 1)], table};
}

static int bad_table_scan(struct vyre_client *c, uint32_t table, const uint32_t *out,
			  unsigned long k, struct tally *t)
{
	const struct vyre_work_item it = bad_scan(table, out, k);
	return one_invalid(c, &it, k, t, &t->exec_invalid);
}

static int readback(struct vyre_client *c, uint32_t dev, const uint32_t *out, unsigned long k,
		    struct tally *t)
{
	const struct vyre_work_item it = {VYRE_OP_COPY, dev, out[k % OUTS], 0};
	int rc = one_item(c, &it, k, 0);
	if (rc)
		return rc;
	t->items++;
	t->round_trips++;
	t->readback += OUT_BYTES;
	return 0;
}

/* COPY out[k % OUTS] -> @t, then COPY @t -> out[(k + 1) % OUTS], as one chain. */
static int chain(struct vyre_client *c, uint32_t t, const uint32_t *out, unsigned long k,
		 struct tally *tl)
{
	const struct vyre_work_item in = {VYRE_OP_COPY, out[k % OUTS], t, 0};
	const struct vyre_work_item back = {VYRE_OP_COPY, t, out[(k + 1) % OUTS], 0};
	struct vyre_cqe cqes[2];
	int rc = vyre_submit(c, &in, 2 * k, VYRE_SQE_CHAIN);

	if (rc == 0)
		rc = vyre_submit(c, &back, 2 * k + 1, 0);
	if (rc == 0)
		rc = wait_all(c, 2, cqes);
	if (rc)
		return rc;
	if (cqes[0].status != 0 || cqes[1].status != 0)
		return VYRE_E_PROTO;
	tl->items += 2;
	tl->round_trips++;
	tl->chains++;
	tl->avoided += OUT_BYTES;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"pairs", required_argument, NULL, 'p'},
	    {"invalid", required_argument, NULL, 'i'},
	    {"readback", required_argument, NULL, 'r'},
	    {"chains", required_argument, NULL, 'c'},
	    {"bad-tables", required_argument, NULL, 'T'},
	    {"bad-pairs", required_argument, NULL, 'P'},
	    {"hold", no_argument, NULL, 'H'},
	    {NULL, 0, NULL, 0},
	};
	struct vyre_connect_opts o = {0};
	unsigned long pairs = 100, bad = 0, reads = 0, chains = 0, bad_tables = 0, bad_pairs = 0;
	int hold = 0, ch;
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case 's':
			o.socket_path = optarg;
			break;
		case 'p':
			pairs = strtoul(optarg, NULL, 10);
			break;
		case 'i':
			bad = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			reads = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			chains = strtoul(optarg, NULL, 10);
			break;
		case 'T':
			bad_tables = strtoul(optarg, NULL, 10);
			break;
		case 'P':
			bad_pairs = strtoul(optarg, NULL, 10);
			break;
		case 'H':
			hold = 1;
			break;
		default:
			fprintf(stderr, "usage: vyre-tm-producer --socket PATH [--pairs N] "
					"[--invalid N] [--readback N] [--chains N] "
					"[--bad-tables N] [--bad-pairs N] [--hold]\n");
			return 2;
		}
	}
	struct vyre_client *c;
	int rc = vyre_connect(&o, &c);
	if (rc) {
		fprintf(stderr, "vyre-tm-producer: connect: %s\n", vyre_strerror(rc));
		return 1;
	}
	uint32_t out[OUTS];
	for (uint32_t i = 0; rc == 0 && i < OUTS; i++)
		rc = vyre_buffer_alloc(c, OUT_BYTES, 0, &out[i]);
	struct tally t = {0};
	for (unsigned long k = 0; rc == 0 && k < pairs; k++)
		rc = pair(c, out, k, &t);
	for (unsigned long k = 0; rc == 0 && k < bad; k++)
		rc = invalid(c, out, k, &t);
	uint32_t dev = 0;
	if (rc == 0 && reads)
		rc = vyre_buffer_alloc(c, OUT_BYTES, VYRE_BUF_DEVICE, &dev);
	for (unsigned long k = 0; rc == 0 && k < reads; k++)
		rc = readback(c, dev, out, k, &t);
	uint32_t transient = 0;
	if (rc == 0 && chains)
		rc = vyre_buffer_alloc(c, OUT_BYTES, VYRE_BUF_TRANSIENT, &transient);
	for (unsigned long k = 0; rc == 0 && k < chains; k++)
		rc = chain(c, transient, out, k, &t);
	uint32_t table = 0;
	if (rc == 0 && (bad_tables || bad_pairs)) {
		rc = vyre_buffer_alloc(c, TABLE_BYTES, 0, &table);
		const struct vyre_work_item fill = {VYRE_OP_FILL, 0, table, 0xffffffffu};
		if (rc == 0)
			rc = one_item(c, &fill, 0, 0);
		t.items++;
		t.round_trips++;
	}
	for (unsigned long k = 0; rc == 0 && k < bad_tables; k++)
		rc = bad_table_scan(c, table, out, k, &t);
	for (unsigned long k = 0; rc == 0 && k < bad_pairs; k++) {
		const struct vyre_work_item it = bad_scan(table, out, k);
		rc = twice(c, &it, k, VYRE_E_INVAL, &t);
	}
	if (rc) {
		fprintf(stderr, "vyre-tm-producer: %s\n", vyre_strerror(rc));
		vyre_close(c);
		return 1;
	}
	printf("{\"pid\":%d,\"items\":%lu,\"deduped\":%lu,\"executed\":%lu,\"errors\":%lu,"
	       "\"rejected\":%lu,\"exec_invalid\":%lu,\"readback\":%lu,\"avoided\":%lu,"
	       "\"chains\":%lu,\"round_trips\":%lu}\n",
	       (int)getpid(), t.items, t.deduped, t.items - t.deduped - t.rejected - t.exec_invalid,
	       t.errors, t.rejected, t.exec_invalid, t.readback, t.avoided, t.chains,
	       t.round_trips);
	fflush(stdout);
	if (hold) {
		char buf[64];
		while (fread(buf, 1, sizeof(buf), stdin) > 0)
			;
	}
	vyre_close(c);
	return 0;
}
