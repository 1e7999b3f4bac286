/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_vyre.c - the scan suite's vyre peer: a vyred of the
 * suite's own, producer processes each with its own domain holding a copy of
 * the DFA table and its share of the items, and the single long DFA_SCAN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench_scan.h"
#include "harness.h"

#define PROCS	    16u
#define QUICK_PROCS 2u
/* what one producer keeps in flight: 32 items of 4 KiB, 4 of 64 KiB, 1 of 1 MiB */
#define INFLIGHT_BYTES (256u * KIB)
#define MAX_DEPTH      32u
#define PREFIX_MIN     MIB

void scan_vyred_stop(struct vyred *d)
{
	vyre_bench_vyred_stop(&d->run, SUITE, NULL);
}

/* Names the peer after the backend vyred says it chose (backend_select.c's log line). */
static void vyred_backend(struct vyred *d)
{
	char line[512];
	FILE *fp = fopen(d->run.log, "r");

	snprintf(d->peer, sizeof(d->peer), "vyre-cpu");
	while (fp && fgets(line, sizeof(line), fp))
		if (strstr(line, "backend auto: cuda") || strstr(line, "backend: cuda")) {
			snprintf(d->peer, sizeof(d->peer), "vyre-cuda");
			fprintf(stderr, "scan: vyred: %s", strstr(line, "backend"));
		} else if (strstr(line, "backend auto: cpu") || strstr(line, "backend: cpu")) {
			fprintf(stderr, "scan: vyred: %s", strstr(line, "backend"));
		}
	if (fp)
		fclose(fp);
}

int scan_vyred_start(struct vyred *d, const char *bin, int cpu_only)
{
	/* without --backend cpu, vyred's default: auto */
	static const char *const cpu[] = {"--backend", "cpu", NULL};

	if (vyre_bench_vyred_start(&d->run, SUITE, bin, cpu_only ? cpu : NULL) != 0)
		return -1;
	vyred_backend(d);
	return 0;
}

/* Heap for a table and @n buffers of @bytes, with room for the allocator's alignment. */
static uint64_t heap_for(uint32_t table_bytes, uint64_t n, uint64_t bytes)
{
	const uint64_t need = table_bytes + n * (bytes + 256) + MIB;

	return (need + MIB - 1) / MIB * MIB;
}

/* Connects and copies the table in; 0, or fails @me and returns -1. */
static int vyre_open(const struct job *j, uint64_t heap, struct worker *me, struct vyre_client **c,
		     uint32_t *table)
{
	const struct vyre_connect_opts o = {.socket_path = j->socket, .heap_bytes = heap};
	int rc = vyre_connect(&o, c);

	if (rc) {
		scan_fail(me, "vyre_connect: %s", vyre_strerror(rc));
		return -1;
	}
	rc = vyre_buffer_alloc(*c, j->table_bytes, 0, table);
	void *p = rc ? NULL : vyre_buffer_ptr(*c, *table, NULL);

	if (!p) {
		scan_fail(me, "table: %s", vyre_strerror(rc ? rc : VYRE_E_PROTO));
		vyre_close(*c);
		return -1;
	}
	memcpy(p, j->table, j->table_bytes);
	return 0;
}

/* Allocates one buffer per item of @me's share and copies the items in. */
static int vyre_items(const struct job *j, struct vyre_client *c, uint32_t first, uint32_t n,
		      uint32_t *in, struct worker *me)
{
	for (uint32_t i = 0; i < n; i++) {
		const int rc = vyre_buffer_alloc(c, j->item_bytes, 0, &in[i]);
		void *p = rc ? NULL : vyre_buffer_ptr(c, in[i], NULL);

		if (!p) {
			scan_fail(me, "item buffer: %s", vyre_strerror(rc ? rc : VYRE_E_PROTO));
			return -1;
		}
		memcpy(p, j->data + (uint64_t)(first + i) * j->item_bytes, j->item_bytes);
	}
	return 0;
}

/*
 * A producer: walks its share cyclically with up to j->depth items in
 * flight, each with its own output buffer (items writing one output would
 * wait for each other) and NODEDUPE (a repeated item must run, not be
 * satisfied from its twin).
 */
static int vyre_producer(const struct job *j, unsigned id)
{
	struct worker *me = &j->b->w[id];
	struct vyre_client *c;
	struct vyre_cqe cqes[MAX_DEPTH];
	uint32_t first, n, table, out[MAX_DEPTH], free_slots[MAX_DEPTH], n_free = 0;
	uint64_t next = 0;

	scan_share(j, id, &first, &n);
	uint32_t *in = calloc(n ? n : 1, sizeof(*in));

	if (!in) {
		scan_fail(me, "out of memory");
		return 1;
	}
	if (vyre_open(j, heap_for(j->table_bytes, n + j->depth, j->item_bytes), me, &c, &table)) {
		free(in);
		return 1;
	}
	int rc = vyre_items(j, c, first, n, in, me);

	for (uint32_t s = 0; s < j->depth && !rc; s++) {
		rc = vyre_buffer_alloc(c, 4, 0, &out[s]);
		free_slots[n_free++] = s;
		if (rc)
			scan_fail(me, "output buffer: %s", vyre_strerror(rc));
	}
	if (n == 0)
		__atomic_store_n(&me->pass_done, 1, __ATOMIC_RELEASE);
	if (rc || scan_ready_then_go(j->b, me) || n == 0)
		goto out;
	for (;;) {
		const int stop = scan_stopping(j->b);

		while (!stop && n_free > 0) {
			const uint32_t s = free_slots[n_free - 1];
			const struct vyre_work_item it = {VYRE_OP_DFA_SCAN, in[next % n], out[s],
							  table};

			rc = vyre_submit(c, &it, next << 8 | s, VYRE_SQE_NODEDUPE);
			if (rc == VYRE_E_AGAIN)
				break;
			if (rc) {
				scan_fail(me, "vyre_submit: %s", vyre_strerror(rc));
				goto out;
			}
			n_free--;
			next++;
		}
		if (n_free == j->depth) {
			if (stop)
				break;
			continue;
		}
		const int got = vyre_wait(c, cqes, MAX_DEPTH, (int64_t)ROW_CAP_NS);

		if (got < 0) {
			scan_fail(me, "vyre_wait: %s", vyre_strerror(got));
			goto out;
		}
		for (int i = 0; i < got; i++) {
			if (cqes[i].status != 0 || (cqes[i].flags & VYRE_CQE_DEDUPED)) {
				scan_fail(me, "DFA_SCAN: %s",
					  cqes[i].status ? vyre_strerror(cqes[i].status)
							 : "deduplicated");
				goto out;
			}
			scan_item_done(me, cqes[i].user_data >> 8, n, j->item_bytes,
				       cqes[i].result);
			free_slots[n_free++] = (uint32_t)(cqes[i].user_data & 0xff);
		}
	}
out:
	vyre_close(c);
	free(in);
	return me->failed;
}

int scan_vyre_row(const struct vyre_bench_ctx *ctx, struct job *j, const char *row,
		  struct figures *f)
{
	pid_t pids[PROCS];
	struct figures got;
	unsigned spawned = 0;
	int rc = -1;

	j->workers = ctx->quick ? QUICK_PROCS : PROCS;
	j->depth = INFLIGHT_BYTES / j->item_bytes;
	j->depth = j->depth < 1 ? 1 : j->depth > MAX_DEPTH ? MAX_DEPTH : j->depth;
	j->b = vyre_bench_shared_alloc(sizeof(*j->b));
	if (!j->b)
		return -1;
	fflush(NULL); /* a child must never write out the parent's buffered output again */
	for (; spawned < j->workers; spawned++) {
		pids[spawned] = fork();
		if (pids[spawned] == 0)
			_exit(vyre_producer(j, spawned));
		if (pids[spawned] < 0)
			break;
	}
	if (spawned == j->workers)
		rc = scan_run_window(ctx, j->b, j->workers, row, &got);
	__atomic_store_n(&j->b->stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < spawned; i++)
		if (vyre_bench_reap(pids[i]) != 0 && !j->b->w[i].failed) {
			fprintf(stderr, "scan: %s: producer %u died\n", row, i);
			rc = -1;
		}
	if (scan_report_failed(j->b, spawned, row) || spawned < j->workers)
		rc = -1;
	if (rc == 0)
		*f = got;
	vyre_bench_shared_free(j->b, sizeof(*j->b));
	j->b = NULL;
	return rc;
}

/*
 * In a child: scans prefixes of the data as one DFA_SCAN item each, 1 MiB
 * first, doubling while the last scan took under half of --seconds (so all
 * of them take about twice that) and the next fits @max.
 */
static int vyre_single(const struct vyre_bench_ctx *ctx, const struct job *j,
		       const struct corpus *corp, uint32_t max, struct single *s)
{
	struct vyre_client *c;
	struct vyre_cqe cqe;
	uint32_t table, out, buf = 0;

	if (vyre_open(j, heap_for(j->table_bytes, 2, max), &s->w, &c, &table))
		return 1;
	int rc = vyre_buffer_alloc(c, 4, 0, &out);

	for (uint64_t bytes = PREFIX_MIN; rc == 0 && bytes <= max; bytes *= 2) {
		rc = vyre_buffer_alloc(c, (uint32_t)bytes, 0, &buf);
		uint8_t *p = rc ? NULL : vyre_buffer_ptr(c, buf, NULL);

		if (!p) {
			rc = rc ? rc : VYRE_E_PROTO;
			break;
		}
		scan_tile(corp, p, bytes);
		const struct vyre_work_item it = {VYRE_OP_DFA_SCAN, buf, out, table};
		const uint64_t t0 = vyre_bench_now_ns();

		rc = vyre_submit(c, &it, 0, VYRE_SQE_NODEDUPE);
		const int got = rc ? rc : vyre_wait(c, &cqe, 1, (int64_t)ROW_CAP_NS);

		rc = got == 1 ? cqe.status : got < 0 ? got : VYRE_E_PROTO;
		if (rc == 0) {
			s->bytes = bytes;
			s->ns = vyre_bench_now_ns() - t0;
			s->matches = cqe.result;
		}
		if (rc == 0 && (double)s->ns * 2 > ctx->seconds * 1e9)
			break;
		rc = rc ? rc : vyre_buffer_free(c, buf);
	}
	if (rc)
		scan_fail(&s->w, "single DFA_SCAN: %s", vyre_strerror(rc));
	vyre_close(c);
	return s->w.failed;
}

/* vyre_single in a forked child; 0 with *@s filled, else -1. */
int scan_vyre_single_row(const struct vyre_bench_ctx *ctx, const struct job *j,
			 const struct corpus *corp, uint32_t max, struct single *out)
{
	struct single *s = vyre_bench_shared_alloc(sizeof(*s));
	int rc = -1;

	if (!s)
		return -1;
	fflush(NULL);
	const pid_t pid = fork();

	if (pid == 0)
		_exit(vyre_single(ctx, j, corp, max, s));
	if (pid > 0 && vyre_bench_reap(pid) == 0 && s->bytes > 0) {
		*out = *s;
		rc = 0;
	} else {
		fprintf(stderr, "scan: single vyre scan: %s\n",
			s->w.failed ? s->w.why : "the child died");
	}
	vyre_bench_shared_free(s, sizeof(*s));
	return rc;
}
