/* SPDX-License-Identifier: MIT */
/*
 * test_inflight - what several batches in flight promise, against a real
 * vyred on the CPU backend. A "slow" item is a DFA_SCAN over a large buffer
 * (one thread walks it byte by byte); the accept log tells when vyred has
 * dispatched it, so nothing here depends on timing except that the slow
 * item outlasts a small one.
 *
 *  - independent clients do not wait: with --inflight 4 a tiny item of
 *    another client completes while the slow item still runs; with
 *    --inflight 1 (the control, so the check can fail) it completes after;
 *  - hazards across batches in one shared domain: an item that reads what
 *    the slow item writes (RAW) and one that overwrites what it reads (WAR)
 *    wait for it, and see (and leave) exactly what sequential execution
 *    gives;
 *  - a buffer freed by another client while the slow item reads it is freed
 *    only after that item's CQE is posted;
 *  - a client that disconnects while its slow item runs: vyred keeps its
 *    heap until the item ends, serves others meanwhile and stops cleanly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/ops.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define BIG_BYTES  (48u << 20)
#define HEAP_BYTES (64ull << 20)
#define WAIT_NS	   (120ll * 1000000000ll)

static struct vyre_test_daemon daemon_;

static int connect_to(const char *domain, struct vyre_client **c)
{
	struct vyre_connect_opts o = {
	    .socket_path = daemon_.socket, .domain = domain, .heap_bytes = HEAP_BYTES};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect (domain %s): %s", domain ? domain : "private", vyre_strerror(rc));
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

/* A one-state DFA that accepts after every byte: the scan's result is the input length. */
static int make_count_table(struct vyre_client *c, uint32_t *h)
{
	uint8_t *p;
	uint32_t bytes = (uint32_t)vyre_dfa_table_bytes(1);

	if (alloc(c, bytes, h, &p) != 0)
		return -1;
	uint32_t *w = (uint32_t *)p;

	w[0] = 1;
	w[1] = 0;
	w[2] = 1;
	return 0;
}

/* The big input: bytes that are not all equal, so a half-overwritten input would show. */
static int make_big(struct vyre_client *c, uint32_t *h)
{
	uint8_t *p;

	if (alloc(c, BIG_BYTES, h, &p) != 0)
		return -1;
	for (uint32_t i = 0; i < BIG_BYTES; i++)
		p[i] = (uint8_t)(i * 7u + 1u);
	return 0;
}

static int submit(struct vyre_client *c, uint32_t op, uint32_t in, uint32_t out, uint32_t param,
		  uint64_t user_data)
{
	struct vyre_work_item it = {op, in, out, param};
	int rc = vyre_submit(c, &it, user_data, 0);

	if (rc != 0)
		FAIL("submit %" PRIu64 ": %s", user_data, vyre_strerror(rc));
	return 0;
}

static int wait_one(struct vyre_client *c, uint64_t user_data, struct vyre_cqe *cqe)
{
	int n = vyre_wait(c, cqe, 1, WAIT_NS);

	if (n != 1)
		FAIL("no CQE for %" PRIu64 ": %s", user_data, n < 0 ? vyre_strerror(n) : "timeout");
	if (cqe->user_data != user_data)
		FAIL("CQE for %" PRIu64 " where %" PRIu64 " was due", cqe->user_data, user_data);
	return 0;
}

static int wait_dispatched(uint64_t user_data)
{
	return vyre_test_wait_dispatched(&daemon_, user_data, WAIT_NS);
}

static int start(const char *inflight)
{
	const char *extra[] = {"--backend",	"cpu", "--inflight", inflight,
			       "--cpu-threads", "2",   NULL};

	return vyre_test_daemon_start(&daemon_, extra);
}

static int stop(void)
{
	int rc = vyre_test_daemon_stop(&daemon_);

	if (rc != 0) {
		vyre_test_daemon_dump_log(&daemon_);
		FAIL("vyred exit %d", rc);
	}
	vyre_test_daemon_cleanup(&daemon_);
	return 0;
}

/* 1: the small item finished first; 0: after the slow one; -1: failure. */
static int small_beside_slow(void)
{
	struct vyre_client *a, *b;
	uint32_t big, table, out, small_in, small_out;
	uint8_t *p;
	struct vyre_cqe cqe;
	int first;

	if (connect_to(NULL, &a) || connect_to(NULL, &b) || make_big(a, &big) ||
	    make_count_table(a, &table) || alloc(a, 4, &out, &p) || alloc(b, 64, &small_in, &p) ||
	    alloc(b, 64, &small_out, &p))
		return -1;
	if (submit(a, VYRE_OP_DFA_SCAN, big, out, table, 1) || wait_dispatched(1) ||
	    submit(b, VYRE_OP_ADD, small_in, small_out, 5, 2) || wait_one(b, 2, &cqe))
		return -1;
	if (cqe.status != 0)
		FAIL("small item: %s", vyre_strerror(cqe.status));
	first = vyre_reap(a, &cqe, 1) == 0;
	if (!first && (cqe.user_data != 1 || cqe.status != 0 || cqe.result != BIG_BYTES))
		FAIL("slow item: status %d result %" PRIu64, cqe.status, cqe.result);
	if (first && (wait_one(a, 1, &cqe) || cqe.result != BIG_BYTES))
		FAIL("slow item: status %d result %" PRIu64, cqe.status, cqe.result);
	vyre_close(a);
	vyre_close(b);
	return first;
}

static int independent(void)
{
	int first;

	if (start("4") != 0)
		return -1;
	first = small_beside_slow();
	if (stop() != 0 || first < 0)
		return -1;
	if (!first)
		FAIL("--inflight 4: another client's small item waited for the slow one");
	printf("ok: --inflight 4, a small item of another client completes beside a slow one\n");
	if (start("1") != 0)
		return -1;
	first = small_beside_slow();
	if (stop() != 0 || first < 0)
		return -1;
	if (first)
		FAIL("--inflight 1: a small item completed while the only slot was busy");
	printf("ok: --inflight 1 (control), it waits\n");
	return 0;
}

static int hazards(void)
{
	struct vyre_client *a, *b;
	uint32_t big, table, count, plus;
	uint8_t *p, *bigp, *plusp;
	struct vyre_cqe cqe;

	if (start("4") != 0 || connect_to("shared", &a) || connect_to("shared", &b) ||
	    make_big(a, &big) || make_count_table(a, &table) || alloc(a, 4, &count, &p) ||
	    alloc(a, 4, &plus, &plusp))
		return -1;
	bigp = vyre_buffer_ptr(a, big, NULL);
	/* RAW: b adds 1 to the count the slow scan writes */
	if (submit(a, VYRE_OP_DFA_SCAN, big, count, table, 10) || wait_dispatched(10) ||
	    submit(b, VYRE_OP_ADD, count, plus, 1, 11) || wait_one(a, 10, &cqe))
		return -1;
	if (cqe.status != 0 || cqe.result != BIG_BYTES)
		FAIL("scan: status %d result %" PRIu64, cqe.status, cqe.result);
	if (wait_one(b, 11, &cqe) || cqe.status != 0)
		return -1;
	if (*(uint32_t *)plusp != BIG_BYTES + 1)
		FAIL("RAW across batches: read %u, the scan wrote %u", *(uint32_t *)plusp,
		     BIG_BYTES);
	printf("ok: an item reading what an in-flight item writes waits for it (RAW)\n");
	/* WAR: b overwrites the input the slow scan reads */
	if (submit(a, VYRE_OP_DFA_SCAN, big, count, table, 20) || wait_dispatched(20) ||
	    submit(b, VYRE_OP_FILL, 0, big, 0x5a5a5a5a, 21) || wait_one(b, 21, &cqe))
		return -1;
	if (cqe.status != 0)
		FAIL("fill: %s", vyre_strerror(cqe.status));
	if (vyre_reap(a, &cqe, 1) != 1 || cqe.user_data != 20)
		FAIL(
		    "WAR across batches: the fill completed before the scan that reads its output");
	if (cqe.result != BIG_BYTES || bigp[BIG_BYTES - 1] != 0x5a)
		FAIL("WAR: scan %" PRIu64 ", last byte %#x", cqe.result, bigp[BIG_BYTES - 1]);
	printf("ok: an item overwriting what an in-flight item reads waits for it (WAR)\n");
	/* a free by another client waits for the in-flight reader */
	if (submit(a, VYRE_OP_DFA_SCAN, big, count, table, 30) || wait_dispatched(30))
		return -1;
	int rc = vyre_buffer_free(b, big);

	if (rc != 0)
		FAIL("free: %s", vyre_strerror(rc));
	if (vyre_reap(a, &cqe, 1) != 1 || cqe.user_data != 30 || cqe.result != BIG_BYTES)
		FAIL("a buffer was freed while an in-flight item read it");
	printf("ok: a free waits for the in-flight item that reads the buffer\n");
	vyre_close(a);
	vyre_close(b);
	return stop();
}

static int leave_while_running(void)
{
	struct vyre_client *a, *c;
	uint32_t big, table, out, h;
	uint8_t *p;
	struct vyre_cqe cqe;

	if (start("4") != 0 || connect_to(NULL, &a) || make_big(a, &big) ||
	    make_count_table(a, &table) || alloc(a, 4, &out, &p))
		return -1;
	if (submit(a, VYRE_OP_DFA_SCAN, big, out, table, 40) || wait_dispatched(40))
		return -1;
	vyre_close(a);
	if (connect_to(NULL, &c) || alloc(c, 64, &h, &p) || submit(c, VYRE_OP_FILL, 0, h, 7, 41) ||
	    wait_one(c, 41, &cqe) || cqe.status != 0)
		return -1;
	if (((uint32_t *)p)[15] != 7)
		FAIL("fill beside a departed client's batch");
	vyre_close(c);
	printf("ok: a client that leaves while its batch runs: vyred serves on\n");
	return stop();
}

int main(void)
{
	int rc = independent();

	if (rc == 0)
		rc = hazards();
	if (rc == 0)
		rc = leave_while_running();
	if (rc != 0)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	if (rc == 0)
		printf("PASS\n");
	return rc == 0 ? 0 : 1;
}
