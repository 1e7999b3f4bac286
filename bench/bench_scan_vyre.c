/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_vyre.c - the scan suite's vyre peer: a vyred of the
 * suite's own, producer processes each with its own domain holding the DFA
 * table in a device buffer (uploaded once, as a user would) and its share of
 * the items (in the heap, or uploaded once into device buffers), and the
 * single long DFA_SCAN. Base64 rows decode each item first: two items, or
 * one chain through a transient buffer that the backend may keep on chip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench_scan_data.h"
#include "bench_scan_run.h"
#include "bench_scan_vyre.h"
#include "harness_cpu.h"
#include "harness_procs.h"
#include "harness_vyred.h"

#define PROCS	    16u
#define QUICK_PROCS 2u
/*
 * What one producer keeps in flight by default: 64 items of 4 KiB, 4 of 64
 * KiB, 1 of 1 MiB (issue 23); VYRE_BENCH_SCAN_INFLIGHT_KIB sets it, up to
 * MAX_DEPTH items.
 */
#define INFLIGHT_BYTES (256u * KIB)
#define MAX_DEPTH      1024u
/* user_data: the item's walk index, then whether it is the decode, then its slot */
#define UD_DECODE	   0x800u
#define UD_SLOT		   0x3ffu
#define UD_KEEP(k, s, dec) ((uint64_t)(k) << 12 | ((dec) ? UD_DECODE : 0) | (s))
/*
 * vyred flags for the suite: a 1 GiB item and its table in the heap and on
 * the device; and every producer's 4 KiB items as device buffers in one loop
 * (the CPU backend runs one): 4096 items and 16 tables, past the default 4096
 */
static const char *const big_args[] = {"--heap-bytes-max",
				       "3221225472",
				       "--device-bytes-max",
				       "3221225472",
				       "--max-device-buffers",
				       "8192",
				       NULL};

void vyre_scan_vyred_stop(struct vyred *d)
{
	/* what the fused rows kept on chip, and vyred's own cost */
	static const char *const show[] = {"on-chip handoffs", "mean ns per batch", "CPU: user",
					   "pool timing", NULL};

	vyre_bench_vyred_stop(&d->run, SUITE, show);
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

int vyre_scan_vyred_start(struct vyred *d, const struct vyre_bench_ctx *ctx, const char *bin,
			  int one_loop)
{
	/* without --backend cpu, vyred's default: auto */
	const char *args[12 + VYRE_BENCH_MAX_VYRED_ARGS] = {0};
	unsigned n = 0;

	if (ctx->cpu_only) {
		args[n++] = "--backend";
		args[n++] = "cpu";
	}
	if (one_loop) {
		args[n++] = "--loops";
		args[n++] = "1";
	}
	for (unsigned i = 0; big_args[i]; i++)
		args[n++] = big_args[i];
	/* --vyred-arg, last, so that it can override what comes before */
	for (unsigned i = 0; i < ctx->n_vyred_args; i++)
		args[n++] = ctx->vyred_args[i];
	if (vyre_bench_vyred_start(&d->run, SUITE, bin, args) != 0)
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

/* A heap buffer holding @bytes of @src; 0, or an error. */
static int host_copy_of(struct vyre_client *c, const void *src, uint32_t bytes, uint32_t *h)
{
	int rc = vyre_buffer_alloc(c, bytes, 0, h);
	void *p = rc ? NULL : vyre_buffer_ptr(c, *h, NULL);

	if (!p)
		return rc ? rc : VYRE_E_PROTO;
	memcpy(p, src, bytes);
	return 0;
}

/*
 * Uploads heap buffers @host[0..n) into new device buffers @dev[0..n) of
 * @bytes each, one COPY item each with up to MAX_DEPTH in flight, then frees
 * the heap buffers; 0, or an error.
 */
static int upload(struct vyre_client *c, const uint32_t *host, uint32_t *dev, uint32_t n,
		  uint32_t bytes)
{
	struct vyre_cqe cqe[MAX_DEPTH];
	uint32_t sent = 0, done = 0;
	int rc = 0;

	while (rc == 0 && done < n) {
		while (rc == 0 && sent < n && sent - done < MAX_DEPTH) {
			rc = vyre_buffer_alloc(c, bytes, VYRE_BUF_DEVICE, &dev[sent]);
			const struct vyre_work_item copy = {VYRE_OP_COPY, host[sent],
							    rc ? 0 : dev[sent], 0};

			rc = rc ? rc : vyre_submit(c, &copy, sent, 0);
			sent += rc == 0;
		}
		const int got = rc ? rc : vyre_wait(c, cqe, MAX_DEPTH, (int64_t)ROW_CAP_NS);

		for (int i = 0; i < got; i++)
			rc = rc ? rc : cqe[i].status;
		done += got > 0 ? (uint32_t)got : 0;
		rc = rc ? rc : got < 0 ? got : 0;
	}
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		rc = vyre_buffer_free(c, host[i]);
	return rc;
}

/* Connects and puts the table in a device buffer; 0, or fails @me and returns -1. */
static int vyre_open(const struct job *j, uint64_t heap, struct worker *me, struct vyre_client **c,
		     uint32_t *table)
{
	const struct vyre_connect_opts o = {.socket_path = j->socket, .heap_bytes = heap};
	uint32_t staged;
	int rc = vyre_connect(&o, c);

	if (rc) {
		vyre_scan_fail(me, "vyre_connect: %s", vyre_strerror(rc));
		return -1;
	}
	rc = host_copy_of(*c, j->table, j->table_bytes, &staged);
	rc = rc ? rc : upload(*c, &staged, table, 1, j->table_bytes);
	if (rc) {
		vyre_scan_fail(me, "table: %s", vyre_strerror(rc));
		vyre_close(*c);
		return -1;
	}
	return 0;
}

/* Bytes of one of @j's input buffers: the item, or its counted base64. */
static uint32_t input_bytes(const struct job *j)
{
	return j->mode & SCAN_B64 ? j->enc_stride : j->item_bytes;
}

/* Allocates one buffer per item of @me's share, copies the items in, and uploads them if asked. */
static int vyre_items(const struct job *j, struct vyre_client *c, uint32_t first, uint32_t n,
		      uint32_t *in, struct worker *me)
{
	const uint32_t bytes = input_bytes(j);
	const uint8_t *src = j->mode & SCAN_B64 ? j->enc : j->data;
	int rc = 0;

	for (uint32_t i = 0; rc == 0 && i < n; i++)
		rc = host_copy_of(c, src + (uint64_t)(first + i) * bytes, bytes, &in[i]);
	if (rc == 0 && (j->mode & SCAN_ITEMS_DEVICE)) {
		uint32_t *host = malloc((n ? n : 1) * sizeof(*host));

		rc = host ? 0 : VYRE_E_NOMEM;
		if (host) {
			memcpy(host, in, n * sizeof(*in));
			rc = upload(c, host, in, n, bytes);
			free(host);
		}
	}
	if (rc)
		vyre_scan_fail(me, "item buffers: %s", vyre_strerror(rc));
	return rc ? -1 : 0;
}

/*
 * SCAN_REPORT: an item's report holds a record per 8 bytes, past the
 * densest set's one match per 24 bytes; a row whose report overflows fails.
 */
static uint32_t report_bytes(const struct job *j)
{
	return (uint32_t)sizeof(struct vyre_report_header) +
	       j->item_bytes / 8u * (uint32_t)sizeof(struct vyre_report_record);
}

/* Bytes of one output buffer: a count, or a report. */
static uint32_t output_bytes(const struct job *j)
{
	return (j->mode & SCAN_REPORT) ? report_bytes(j) : 4;
}

/*
 * Reads the report of a finished item as its user would (every record's
 * id and end, summed into *@sink); its total, or -1 when it overflowed.
 */
static int64_t read_report(struct vyre_client *c, uint32_t out, uint64_t *sink)
{
	const uint8_t *p = vyre_buffer_ptr(c, out, NULL);
	struct vyre_report_header h;

	memcpy(&h, p, sizeof(h));
	if (h.flags & VYRE_REPORT_OVERFLOW)
		return -1;
	for (uint32_t i = 0; i < h.kept; i++) {
		struct vyre_report_record r;

		memcpy(&r, p + sizeof(h) + (size_t)i * sizeof(r), sizeof(r));
		*sink += r.id + r.end;
	}
	return (int64_t)h.total;
}

/* Submits @it, retrying while the SQ is full (at most 2 * MAX_DEPTH items are ever queued). */
static int submit_one(struct vyre_client *c, const struct vyre_work_item *it, uint64_t ud,
		      uint32_t flags)
{
	int rc;

	while ((rc = vyre_submit(c, it, ud, flags)) == VYRE_E_AGAIN)
		;
	return rc;
}

/* Queues walk item @k in slot @s: a DFA_SCAN, or a decode and a DFA_SCAN_COUNTED. */
static int submit_item(const struct job *j, struct vyre_client *c, uint64_t k, uint32_t s,
		       uint32_t in, uint32_t mid, uint32_t out, uint32_t table)
{
	if (!(j->mode & SCAN_B64)) {
		const uint32_t op = (j->mode & SCAN_REPORT) ? VYRE_OP_DFA_REPORT : VYRE_OP_DFA_SCAN;
		const struct vyre_work_item it = {op, in, out, table};

		return vyre_submit(c, &it, UD_KEEP(k, s, 0), VYRE_SQE_NODEDUPE);
	}
	const struct vyre_work_item dec = {VYRE_OP_BASE64_DECODE, in, mid, 0};
	const struct vyre_work_item scan = {VYRE_OP_DFA_SCAN_COUNTED, mid, out, table};
	const uint32_t chain = j->mode & SCAN_FUSED ? VYRE_SQE_CHAIN : 0;
	int rc = vyre_submit(c, &dec, UD_KEEP(k, s, 1), VYRE_SQE_NODEDUPE | chain);

	return rc ? rc : submit_one(c, &scan, UD_KEEP(k, s, 0), VYRE_SQE_NODEDUPE);
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
	struct vyre_cqe cqes[2 * MAX_DEPTH];
	uint32_t first, n, table, out[MAX_DEPTH], mid[MAX_DEPTH], free_slots[MAX_DEPTH], n_free = 0;
	uint8_t pending[MAX_DEPTH] = {0};
	const uint8_t per_item = j->mode & SCAN_B64 ? 2 : 1;
	const uint32_t mid_bytes = 4 + (j->item_bytes + 3) / 4 * 4;
	const uint32_t mid_flags = j->mode & SCAN_FUSED ? VYRE_BUF_TRANSIENT : 0;
	uint64_t next = 0, sink = 0;

	vyre_scan_share(j, id, &first, &n);
	uint32_t *in = calloc(n ? n : 1, sizeof(*in));

	if (!in) {
		vyre_scan_fail(me, "out of memory");
		return 1;
	}
	const uint64_t heap = heap_for(j->table_bytes, n + 2 * j->depth, input_bytes(j)) +
			      (uint64_t)j->depth * output_bytes(j);

	if (vyre_open(j, heap, me, &c, &table)) {
		free(in);
		return 1;
	}
	int rc = vyre_items(j, c, first, n, in, me);

	for (uint32_t s = 0; s < j->depth && !rc; s++) {
		rc = vyre_buffer_alloc(c, output_bytes(j), 0, &out[s]);
		if (rc == 0 && (j->mode & SCAN_B64))
			rc = vyre_buffer_alloc(c, mid_bytes, mid_flags, &mid[s]);
		free_slots[n_free++] = s;
		if (rc)
			vyre_scan_fail(me, "output buffer: %s", vyre_strerror(rc));
	}
	if (n == 0)
		__atomic_store_n(&me->pass_done, 1, __ATOMIC_RELEASE);
	if (rc || vyre_scan_ready_then_go(j->b, me) || n == 0)
		goto out;
	for (;;) {
		const int stop = vyre_scan_stopping(j->b);

		while (!stop && n_free > 0) {
			const uint32_t s = free_slots[n_free - 1];

			rc = submit_item(j, c, next, s, in[next % n], mid[s], out[s], table);
			if (rc == VYRE_E_AGAIN)
				break;
			if (rc) {
				vyre_scan_fail(me, "vyre_submit: %s", vyre_strerror(rc));
				goto out;
			}
			pending[s] = per_item;
			n_free--;
			next++;
		}
		if (n_free == j->depth) {
			if (stop)
				break;
			continue;
		}
		const int got = vyre_wait(c, cqes, 2 * MAX_DEPTH, (int64_t)ROW_CAP_NS);

		if (got < 0) {
			vyre_scan_fail(me, "vyre_wait: %s", vyre_strerror(got));
			goto out;
		}
		for (int i = 0; i < got; i++) {
			const uint64_t ud = cqes[i].user_data;
			const uint32_t s = (uint32_t)(ud & UD_SLOT);

			if (cqes[i].status != 0 || (cqes[i].flags & VYRE_CQE_DEDUPED)) {
				vyre_scan_fail(me, "%s: %s",
					       ud & UD_DECODE ? "BASE64_DECODE" : "DFA_SCAN",
					       cqes[i].status ? vyre_strerror(cqes[i].status)
							      : "deduplicated");
				goto out;
			}
			const int64_t records =
			    (j->mode & SCAN_REPORT) ? read_report(c, out[s], &sink) : 0;

			if (records < 0 ||
			    (uint64_t)records != ((j->mode & SCAN_REPORT) ? cqes[i].result : 0)) {
				vyre_scan_fail(me, "DFA_REPORT: %s",
					       records < 0 ? "the report overflowed"
							   : "its total is not its result");
				goto out;
			}
			if (!(ud & UD_DECODE))
				vyre_scan_item_done(me, ud >> 12, n, j->item_bytes, cqes[i].result);
			if (--pending[s] == 0)
				free_slots[n_free++] = s;
		}
	}
out:
	/* what the records added up to: kept, so that reading them is not optimized away */
	__atomic_store_n(&me->sink, sink, __ATOMIC_RELAXED);
	vyre_close(c);
	free(in);
	return me->failed;
}

/* Bytes one producer keeps in flight: VYRE_BENCH_SCAN_INFLIGHT_KIB, else INFLIGHT_BYTES; 0: bad. */
static uint64_t inflight_bytes(void)
{
	const char *e = getenv("VYRE_BENCH_SCAN_INFLIGHT_KIB");
	char *end = NULL;
	const unsigned long long kib = e ? strtoull(e, &end, 10) : 0;

	if (!e)
		return INFLIGHT_BYTES;
	if (end == e || *end || kib == 0 || kib > (1ull << 30)) {
		fprintf(stderr,
			"scan: VYRE_BENCH_SCAN_INFLIGHT_KIB=%s: not a size in KiB (1 to 2^30)\n",
			e);
		return 0;
	}
	return kib * KIB;
}

int vyre_scan_vyre_row(const struct vyre_bench_ctx *ctx, struct job *j, const char *row,
		       struct figures *f)
{
	pid_t pids[PROCS];
	struct figures got;
	unsigned spawned = 0;
	int rc = -1;

	j->workers = ctx->quick ? QUICK_PROCS : PROCS;
	const uint64_t window = inflight_bytes();

	if (window == 0)
		return -1;
	j->depth =
	    (uint32_t)(window / j->item_bytes > MAX_DEPTH ? MAX_DEPTH : window / j->item_bytes);
	j->depth = j->depth < 1 ? 1 : j->depth;
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
		rc = vyre_scan_run_window(ctx, j->b, j->workers, row, j->vyred, &got);
	__atomic_store_n(&j->b->stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < spawned; i++)
		if (vyre_bench_reap(pids[i]) != 0 && !j->b->w[i].failed) {
			fprintf(stderr, "scan: %s: producer %u died\n", row, i);
			rc = -1;
		}
	if (vyre_scan_report_failed(j->b, spawned, row) || spawned < j->workers)
		rc = -1;
	/* vyred runs a base64 item as two work items, the decode and the scan */
	if (rc == 0 && (j->mode & SCAN_B64) && got.vyred_cpu > 0)
		got.vyred_cpu /= 2;
	if (rc == 0)
		*f = got;
	vyre_bench_shared_free(j->b, sizeof(*j->b));
	j->b = NULL;
	return rc;
}

/*
 * In a child: one buffer of @s->bytes of the corpus (in the heap, or
 * uploaded into a device buffer when @device), scanned by one DFA_SCAN at a
 * time for --seconds (at least once).
 */
static int vyre_single(const struct vyre_bench_ctx *ctx, const struct job *j,
		       const struct corpus *corp, int device, struct single *s)
{
	struct vyre_client *c;
	struct vyre_cqe cqe;
	uint32_t table, out, host, buf = 0;
	const uint32_t bytes = (uint32_t)s->bytes;

	if (vyre_open(j, heap_for(j->table_bytes, 1, bytes), &s->w, &c, &table))
		return 1;
	int rc = vyre_buffer_alloc(c, 4, 0, &out);

	rc = rc ? rc : vyre_buffer_alloc(c, bytes, 0, &host);
	uint8_t *p = rc ? NULL : vyre_buffer_ptr(c, host, NULL);

	if (p) {
		vyre_scan_tile(corp, p, bytes);
		buf = host;
		if (device)
			rc = upload(c, &host, &buf, 1, bytes);
	} else {
		rc = rc ? rc : VYRE_E_PROTO;
	}
	const struct vyre_work_item it = {VYRE_OP_DFA_SCAN, buf, out, table};
	struct vyre_bench_cpu cpu;

	vyre_bench_cpu_start(&cpu, j->vyred);
	const uint64_t t0 = vyre_bench_now_ns();
	uint64_t t = t0;

	while (rc == 0 && (s->scans == 0 || (t - t0 < ctx->seconds * 1e9 && t - t0 < ROW_CAP_NS))) {
		rc = vyre_submit(c, &it, 0, VYRE_SQE_NODEDUPE);
		const int got = rc ? rc : vyre_wait(c, &cqe, 1, (int64_t)ROW_CAP_NS);

		rc = got == 1 ? cqe.status : got < 0 ? got : VYRE_E_PROTO;
		t = vyre_bench_now_ns();
		if (rc == 0) {
			s->scans++;
			s->ns = t - t0;
			s->matches = cqe.result;
		}
	}
	s->vyred_cpu = vyre_bench_cpu_per_item(vyre_bench_cpu_ns(&cpu), s->scans);
	if (rc)
		vyre_scan_fail(&s->w, "single DFA_SCAN: %s", vyre_strerror(rc));
	vyre_close(c);
	return s->w.failed;
}

/* vyre_single in a forked child; 0 with *@s filled, else -1. */
int vyre_scan_vyre_single_row(const struct vyre_bench_ctx *ctx, const struct job *j,
			      const struct corpus *corp, uint32_t bytes, int device,
			      struct single *out)
{
	struct single *s = vyre_bench_shared_alloc(sizeof(*s));
	int rc = -1;

	if (!s)
		return -1;
	s->bytes = bytes;
	fflush(NULL);
	const pid_t pid = fork();

	if (pid == 0)
		_exit(vyre_single(ctx, j, corp, device, s));
	if (pid > 0 && vyre_bench_reap(pid) == 0 && s->scans > 0) {
		*out = *s;
		rc = 0;
	} else {
		fprintf(stderr, "scan: single vyre scan: %s\n",
			s->w.failed ? s->w.why : "the child died");
	}
	vyre_bench_shared_free(s, sizeof(*s));
	return rc;
}
