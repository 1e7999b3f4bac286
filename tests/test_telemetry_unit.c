/* SPDX-License-Identifier: MIT */
/*
 * The pure parts of telemetry: the latency bucket rule vyred uses, how a CQE
 * is accounted (with untrusted submit stamps), vyre-top's percentiles, rates,
 * client ordering, the GPU rows (loops summed per GPU, newest record wins
 * for GPU-wide figures), the op rows (per-op CQE accounting, names and
 * their fallbacks, rates, text, JSON and metrics), number formats, JSON
 * escaping and /proc/net/unix parsing.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../tools/top/top.h"
#include "vyre/op_module.h"

static void test_lat_bucket(void **state)
{
	(void)state;
	assert_int_equal(vyre_tm_lat_bucket(0), 0);
	assert_int_equal(vyre_tm_lat_bucket(1), 1);
	assert_int_equal(vyre_tm_lat_bucket(2), 2);
	assert_int_equal(vyre_tm_lat_bucket(3), 2);
	assert_int_equal(vyre_tm_lat_bucket(1023), 10);
	assert_int_equal(vyre_tm_lat_bucket(1024), 11);
	assert_int_equal(vyre_tm_lat_bucket(1ull << 62), 63);
	assert_int_equal(vyre_tm_lat_bucket(UINT64_MAX), 63);
}

static void test_complete_add(void **state)
{
	(void)state;
	struct vyre_tm_complete c;
	memset(&c, 0, sizeof(c));
	struct vyre_cqe ok = {.status = 0, .flags = 0, .complete_ns = 10000};
	struct vyre_cqe dup = {.status = 0, .flags = VYRE_CQE_DEDUPED, .complete_ns = 10000};
	struct vyre_cqe bad = {.status = VYRE_E_INVAL, .complete_ns = 10000};
	vyre_tm_complete_add(&c, 10000 - 1500, &ok); /* 1500 ns: bucket 11 */
	vyre_tm_complete_add(&c, 0, &dup);	     /* no stamp: 0 ns */
	vyre_tm_complete_add(&c, 20000, &bad);	     /* stamp from the future: 0 ns */
	assert_int_equal(c.items, 3);
	assert_int_equal(c.errors, 1);
	assert_int_equal(c.deduped, 1);
	assert_int_equal(c.lat[11], 1);
	assert_int_equal(c.lat[0], 2);
	assert_int_equal(c.max_ns, 1500);
	assert_int_equal(c.sum_ns, 1500);
	struct vyre_cqe late = {.complete_ns = UINT64_MAX};
	vyre_tm_complete_add(&c, 1, &late);
	vyre_tm_complete_add(&c, 1, &late);
	assert_int_equal(c.sum_ns, UINT64_MAX); /* saturates */
	assert_int_equal(c.lat[63], 2);
}

static void test_quantiles(void **state)
{
	(void)state;
	struct vyre_bpf_hist h;
	memset(&h, 0, sizeof(h));
	assert_int_equal(top_hist_quantile(&h, 0.5), 0);
	h.bucket[0] = 10;
	assert_int_equal(top_hist_quantile(&h, 0.99), 0);
	memset(&h, 0, sizeof(h));
	h.bucket[3] = 50; /* [4, 8) */
	h.bucket[10] = 49;
	h.bucket[20] = 1;
	struct top_percentiles p;
	top_hist_percentiles(&h, &p);
	assert_int_equal(p.count, 100);
	assert_int_equal(p.p50, 7);		  /* rank 50 is the last of bucket 3 */
	assert_int_equal(p.p99, 1023);		  /* rank 99 */
	assert_int_equal(p.p999, (1u << 20) - 1); /* rank 100 */
	h.bucket[3] = 51;
	assert_int_equal(top_hist_quantile(&h, 0.5), 7);
	memset(&h, 0, sizeof(h));
	h.bucket[63] = 1;
	assert_true(top_hist_quantile(&h, 0.5) == UINT64_MAX);
}

static struct top_client mk_client(uint32_t id, uint32_t pid, uint64_t items, uint32_t depth,
				   uint64_t errors, uint32_t flags)
{
	struct top_client c = {.id = id,
			       .pid = pid,
			       .items = items,
			       .sq_depth = depth,
			       .sq_entries = 100,
			       .errors = errors,
			       .flags = flags};
	return c;
}

static void test_view(void **state)
{
	(void)state;
	struct top_client prev_c[2] = {mk_client(1, 300, 100, 0, 0, 1),
				       mk_client(2, 200, 0, 0, 0, 1)};
	struct top_client cur_c[3] = {
	    mk_client(1, 300, 1100, 10, 0, 1),
	    mk_client(2, 200, 600, 90, 7, 1),
	    mk_client(3, 100, 5000, 0, 0, VYRE_BPF_CLIENT_CONNECTED | VYRE_BPF_CLIENT_DISCONNECTED),
	};
	struct top_sample prev = {0}, cur = {0};
	prev.t_ns = 1000000000u;
	cur.t_ns = 3000000000u; /* 2 s later */
	prev.clients = prev_c;
	prev.n_clients = 2;
	cur.clients = cur_c;
	cur.n_clients = 3;
	prev.c.items = 1000;
	cur.c.items = 5000;
	cur.c.deduped = 1250;
	cur.c.launches = 30;
	cur.c.launches_avoided = 10;
	prev.c.batches = 50; /* larger than now: a reloaded program counts from 0 */
	cur.c.batches = 8;
	cur.h[VYRE_BPF_HIST_LATENCY].bucket[12] = 4;
	prev.h[VYRE_BPF_HIST_LATENCY].bucket[12] = 3;
	struct top_client_row rows[3];
	struct top_view v = {0};
	top_view_build(&v, &prev, &cur, rows, TOP_SORT_RATE);
	assert_true(v.interval_s == 2.0);
	assert_true(v.rate[1] == 2000.0); /* items */
	assert_true(v.rate[0] == 4.0);	  /* batches after a reset */
	assert_true(v.dedupe_ratio == 0.25);
	assert_true(v.fusion_ratio == 0.25);
	assert_int_equal(v.latency.count, 1);
	assert_int_equal(v.latency_all.count, 4);
	assert_int_equal(v.n_rows, 3);
	/* items/s: client 1 = 500/s, client 2 = 300/s; the gone client last */
	assert_int_equal(v.rows[0].c.id, 1);
	assert_int_equal(v.rows[1].c.id, 2);
	assert_int_equal(v.rows[2].c.id, 3);
	assert_false(v.rows[2].connected);
	assert_true(v.rows[0].items_per_s == 500.0);
	assert_int_equal(v.queue_depth, 100);
	assert_int_equal(v.queue_max_fill, 90);
	assert_int_equal(v.queue_max_client, 2);
	top_view_build(&v, &prev, &cur, rows, TOP_SORT_ERRORS);
	assert_int_equal(v.rows[0].c.id, 2);
	top_view_build(&v, &prev, &cur, rows, TOP_SORT_PID);
	assert_int_equal(v.rows[0].c.id, 2); /* pid 200 < 300; pid 100 is gone */
	top_view_build(&v, &prev, &cur, rows, TOP_SORT_QUEUE);
	assert_int_equal(v.rows[0].c.id, 2);
	top_view_build(&v, &prev, &cur, rows, TOP_SORT_ITEMS);
	assert_int_equal(v.rows[0].c.id, 1);
	/* A zero interval gives zero rates, never a division by zero. */
	top_view_build(&v, &cur, &cur, rows, TOP_SORT_RATE);
	assert_true(v.rate[1] == 0.0);
}

static struct vyre_bpf_loop mk_loop(uint32_t gpu, uint32_t loop, uint64_t updated, uint32_t running,
				    uint64_t items, uint64_t dev_used)
{
	struct vyre_bpf_loop l;
	memset(&l, 0, sizeof(l));
	l.state.bytes = sizeof(l.state);
	l.state.gpu = gpu;
	l.state.loop = loop;
	l.state.ordinal = 10 + gpu;
	l.state.loops_per_gpu = 2;
	l.state.backend = VYRE_TM_BACKEND_CUDA;
	l.state.mode = VYRE_TM_MODE_LAUNCH;
	l.state.slots = 4;
	l.state.running = running;
	l.state.domains = 1;
	l.state.clients = 2;
	l.state.batches = items / 8;
	l.state.items = items;
	l.state.device_bytes_used = dev_used;
	l.state.device_bytes_max = 1u << 30;
	snprintf(l.state.name, sizeof(l.state.name), "dev %u", gpu);
	l.updated_ns = updated;
	return l;
}

/* @v printed as text (0), one JSON object (1) or OpenMetrics (2), in a string to free. */
static char *render(const struct top_view *v, int as)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	if (as == 0)
		top_print_text(f, v);
	else if (as == 1)
		top_print_json(f, v, 7);
	else
		top_print_metrics(f, v, 1);
	fclose(f);
	return text;
}

static void test_gpu_rows(void **state)
{
	(void)state;
	struct vyre_bpf_loop loops[VYRE_BPF_MAX_LOOPS];
	struct vyre_bpf_gpu per_gpu[VYRE_BPF_MAX_GPUS];
	memset(loops, 0, sizeof(loops));
	memset(per_gpu, 0, sizeof(per_gpu));
	loops[0] = mk_loop(0, 0, 200, 1, 800, 4096); /* newest of GPU 0: its memory figure */
	loops[1] = mk_loop(0, 1, 100, 2, 400, 1024);
	loops[2] = mk_loop(2, 2, 100, 0, 16, 0);
	loops[2].state.lost = 1;
	loops[3] = mk_loop(1, 3, 100, 3, 8, 0);
	loops[3].state.bytes = 8;			      /* another layout: ignored */
	loops[4] = mk_loop(VYRE_BPF_MAX_GPUS, 4, 1, 1, 8, 0); /* no such GPU: ignored */
	per_gpu[0].items = 3000;
	per_gpu[0].batches = 30;
	per_gpu[0].latency.bucket[12] = 3000;
	per_gpu[5].items = 50; /* completions alone, no gpu_state yet */
	per_gpu[5].batches = 1;
	struct vyre_bpf_gpu one = per_gpu[0], sum;
	memset(&sum, 0, sizeof(sum));
	top_gpu_counters_add(&sum, &one);
	top_gpu_counters_add(&sum, &one);
	assert_int_equal(sum.items, 6000);
	assert_int_equal(sum.latency.bucket[12], 6000);

	struct top_sample prev = {0}, cur = {0};
	top_gpus_merge(&cur, loops, VYRE_BPF_MAX_LOOPS, per_gpu);
	assert_int_equal(cur.n_gpus, 3);
	const struct top_gpu *g0 = &cur.gpus[0], *g2 = &cur.gpus[1], *g5 = &cur.gpus[2];
	assert_int_equal(g0->gpu, 0);
	assert_int_equal(g0->loops, 2);
	assert_int_equal(g0->running, 3);
	assert_int_equal(g0->slots, 8);
	assert_int_equal(g0->domains, 2);
	assert_int_equal(g0->clients, 4);
	assert_int_equal(g0->items_total, 1200);
	assert_int_equal(g0->batches_total, 150);
	assert_int_equal(g0->device_bytes_used, 4096);
	assert_int_equal(g0->ordinal, 10);
	assert_string_equal(g0->name, "dev 0");
	assert_int_equal(g0->lost, 0);
	assert_int_equal(g0->c.items, 3000);
	assert_int_equal(g2->gpu, 2);
	assert_int_equal(g2->lost, 1);
	assert_int_equal(g5->gpu, 5);
	assert_int_equal(g5->loops, 0);

	/* Rates per GPU over the interval; latency of the interval only. */
	prev.t_ns = 1000000000u;
	cur.t_ns = 3000000000u;
	per_gpu[0].items = 1000;
	per_gpu[0].latency.bucket[12] = 1000;
	memset(&per_gpu[5], 0, sizeof(per_gpu[5]));
	top_gpus_merge(&prev, loops, VYRE_BPF_MAX_LOOPS, per_gpu);
	struct top_view v = {0};
	top_view_build(&v, &prev, &cur, NULL, TOP_SORT_RATE);
	assert_int_equal(v.n_gpus, 3);
	assert_true(v.gpus[0].items_per_s == 1000.0);
	assert_int_equal(v.gpus[0].latency.count, 2000);
	assert_int_equal(v.gpus[0].latency.p50, 4095);
	assert_true(v.gpus[2].items_per_s == 25.0); /* not in prev: counted from 0 */

	char *text = render(&v, 0);
	assert_non_null(strstr(text, "\n     GPU  ORD "));
	assert_non_null(
	    strstr(text, "       0   10     1.00k       3000    4.1us       3/8       2       4  "
			 "cuda/launch        4.0KiB/1.0GiB  ok    dev 0\n"));
	assert_non_null(strstr(text, "  LOST  dev 2\n"));
	assert_non_null(strstr(text, "\n       5    -        25         50        -         -  "));
	free(text);
	text = render(&v, 1);
	assert_non_null(strstr(text, ",\"gpus\":[{\"gpu\":0,\"have_state\":true,\"ordinal\":10,"
				     "\"name\":\"dev 0\",\"backend\":\"cuda\",\"mode\":\"launch\","
				     "\"state\":\"ok\",\"lost\":false,\"loops\":2,"));
	assert_non_null(strstr(text, "\"state\":\"LOST\",\"lost\":true"));
	assert_non_null(strstr(text, "{\"gpu\":5,\"have_state\":false,"));
	free(text);
}

static struct vyre_tm_op_info op_info(uint32_t op, const char *name, const char *module,
				      uint32_t flags)
{
	struct vyre_tm_op_info r;
	memset(&r, 0, sizeof(r));
	r.bytes = sizeof(r);
	r.op = op;
	r.flags = flags;
	snprintf(r.name, sizeof(r.name), "%s", name);
	snprintf(r.module, sizeof(r.module), "%s", module);
	return r;
}

/* Per op: the CQE rule, sorted samples, names and fallbacks, rows, text, JSON, metrics. */
static void test_op_rows(void **state)
{
	(void)state;
	struct vyre_tm_op_count e;
	memset(&e, 0, sizeof(e));
	struct vyre_cqe ok = {.complete_ns = 10000};
	struct vyre_cqe bad = {
	    .status = VYRE_E_INVAL, .flags = VYRE_CQE_DEDUPED, .complete_ns = 10000};
	vyre_tm_op_add(&e, 10000 - 1500, 9000, &ok);
	vyre_tm_op_add(&e, 20000, 12000, &bad); /* stamps from the future: 0 ns */
	assert_int_equal(e.items, 2);
	assert_int_equal(e.failed, 1);
	assert_int_equal(e.deduped, 1);
	assert_int_equal(e.sum_ns, 1500);
	assert_int_equal(e.max_ns, 1500);
	assert_int_equal(e.drain_sum_ns, 1000);

	struct vyre_bpf_op a = {.batches = 1,
				.items = 10,
				.failed = 1,
				.latency_ns = 1000,
				.max_ns = 300,
				.drain_ns = 500};
	struct vyre_bpf_op b = a, sum;
	b.max_ns = 700;
	memset(&sum, 0, sizeof(sum));
	top_op_counters_add(&sum, &a);
	top_op_counters_add(&sum, &b);
	assert_int_equal(sum.items, 20);
	assert_int_equal(sum.max_ns, 700); /* the larger, not the sum */

	struct top_sample prev = {0}, cur = {0};
	const uint32_t crc = VYRE_OP_MODULE_BIT | 0x1c4eu;
	struct vyre_tm_op_info crc_info =
	    op_info(crc, "crc32c", "checksums", VYRE_TM_OP_F_MODULE | VYRE_TM_OP_F_PURE);
	struct vyre_tm_op_info add_info = op_info(VYRE_OP_ADD, "add", "", VYRE_TM_OP_F_PURE);
	struct vyre_tm_op_info foreign = op_info(7, "max", "", 0);
	foreign.bytes = 8;
	struct vyre_bpf_op c_crc = {.batches = 4,
				    .items = 400,
				    .failed = 4,
				    .latency_ns = 4000000,
				    .max_ns = 90000,
				    .drain_ns = 2000000};
	struct vyre_bpf_op c_add = {
	    .batches = 2, .items = 100, .latency_ns = 300000, .max_ns = 5000, .drain_ns = 100000};
	struct vyre_bpf_op c_zero = {0};
	top_ops_put(&cur, crc, &c_crc, &crc_info);
	top_ops_put(&cur, VYRE_TM_OP_UNKNOWN, &c_add, NULL);
	top_ops_put(&cur, VYRE_OP_ADD, &c_add, &add_info);
	top_ops_put(&cur, 7, &c_add, &foreign); /* a record of another layout names nothing */
	top_ops_put(&cur, 9, &c_zero, NULL);	/* no items: no row */
	assert_int_equal(cur.n_ops, 5);
	assert_int_equal(cur.ops[0].op, VYRE_OP_ADD); /* by number */
	assert_int_equal(cur.ops[4].op, VYRE_TM_OP_UNKNOWN);
	char buf[24];
	assert_string_equal(top_op_name(&cur.ops[1], buf, sizeof(buf)), "op_0x00000007");
	assert_string_equal(top_op_name(&cur.ops[4], buf, sizeof(buf)), "unknown");
	assert_string_equal(top_op_name(&cur.ops[3], buf, sizeof(buf)), "crc32c");

	/* prev: crc32c had 200 items of 2000000 ns two seconds before */
	struct vyre_bpf_op p_crc = c_crc;
	p_crc.items = 200;
	p_crc.failed = 0;
	p_crc.latency_ns = 2000000;
	top_ops_put(&prev, crc, &p_crc, &crc_info);
	prev.t_ns = 1000000000u;
	cur.t_ns = 3000000000u;
	struct top_view v = {0};
	top_view_build(&v, &prev, &cur, NULL, TOP_SORT_RATE);
	assert_int_equal(v.n_ops, 4);
	assert_int_equal(v.ops[0].o.op, crc); /* most items first, then by number */
	assert_int_equal(v.ops[1].o.op, VYRE_OP_ADD);
	assert_int_equal(v.ops[3].o.op, VYRE_TM_OP_UNKNOWN);
	assert_true(v.ops[0].items_per_s == 100.0);
	assert_true(v.ops[0].failed_per_s == 2.0);
	assert_int_equal(v.ops[0].mean_ns, 10000);
	assert_int_equal(v.ops[0].mean_all_ns, 10000);
	assert_int_equal(v.ops[0].drain_mean_ns, 5000);
	assert_true(v.ops[1].items_per_s == 50.0); /* not in prev: counted from 0 */

	char *text = render(&v, 0);
	assert_non_null(
	    strstr(text, "\nOP               MODULE         ITEMS/S      ITEMS   FAILED"));
	assert_non_null(strstr(text, "\ncrc32c           checksums          100        400        4"
				     "        2    10.0us    10.0us    90.0us\n"));
	assert_non_null(
	    strstr(text, "\nadd              -                   50        100        0"));
	free(text);
	text = render(&v, 1);
	assert_non_null(strstr(text, ",\"ops\":[{\"op\":2147490894,\"name\":\"crc32c\","
				     "\"module\":\"checksums\",\"named\":true,\"pure\":true,"
				     "\"batches\":4,\"items\":400,\"failed\":4,"));
	assert_non_null(strstr(text, "{\"op\":3,\"name\":\"add\",\"module\":null,"));
	assert_non_null(strstr(text, "\"name\":\"unknown\",\"module\":null,\"named\":false,"));
	assert_non_null(strstr(text, "],\"ops_dropped\":0,\"gpus\":["));
	free(text);
	text = render(&v, 2);
	assert_non_null(strstr(text, "\nvyre_op_info{op=\"crc32c\",module=\"checksums\","
				     "number=\"0x80001c4e\",pure=\"1\"} 1\n"));
	assert_non_null(
	    strstr(text, "\nvyre_op_items_total{op=\"crc32c\",module=\"checksums\"} 400\n"));
	assert_non_null(strstr(text, "\nvyre_op_items_total{op=\"unknown\",module=\"\"} 100\n"));
	assert_non_null(strstr(text, "\nvyre_op_item_latency_seconds_total{op=\"crc32c\","
				     "module=\"checksums\"} 0.004\n"));
	assert_non_null(strstr(text, "\nvyre_op_item_latency_max_seconds{op=\"add\",module=\"\"} "
				     "0.000005\n"));
	free(text);

	/* past TOP_OPS_MAX ops a sample counts, and keeps none */
	struct top_sample *big = calloc(1, sizeof(*big));
	assert_non_null(big);
	for (uint32_t op = 0; op < TOP_OPS_MAX + 3; op++)
		top_ops_put(big, op, &c_add, NULL);
	assert_int_equal(big->n_ops, TOP_OPS_MAX);
	assert_int_equal(big->ops_dropped, 3);
	free(big);
}

static void test_formats(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(top_fmt_count(b, sizeof(b), 999), "999");
	assert_string_equal(top_fmt_count(b, sizeof(b), 1500), "1.50k");
	assert_string_equal(top_fmt_count(b, sizeof(b), 2.5e6), "2.50M");
	assert_string_equal(top_fmt_count(b, sizeof(b), 12.5), "12.50");
	assert_string_equal(top_fmt_ns(b, sizeof(b), 850), "850ns");
	assert_string_equal(top_fmt_ns(b, sizeof(b), 12000), "12.0us");
	assert_string_equal(top_fmt_ns(b, sizeof(b), 3200000), "3.20ms");
	assert_string_equal(top_fmt_ns(b, sizeof(b), UINT64_MAX), "inf");
	assert_string_equal(top_fmt_bytes(b, sizeof(b), 512), "512B");
	assert_string_equal(top_fmt_bytes(b, sizeof(b), 3u << 19), "1.5MiB");
	for (int s = 0; s < TOP_SORT_COUNT; s++)
		assert_string_not_equal(top_sort_name((enum top_sort)s), "?");
	struct vyre_bpf_gauges g = {0};
	assert_string_equal(top_backend_name(&g), "-");
	g.have_backend = 1;
	g.backend = VYRE_TM_BACKEND_CUDA;
	g.mode = VYRE_TM_MODE_PERSISTENT;
	assert_string_equal(top_backend_name(&g), "cuda");
	assert_string_equal(top_mode_name(&g), "persistent");
}

static void test_json_escapes_and_has_no_nan(void **state)
{
	(void)state;
	struct top_view v = {0};
	v.pid = 42;
	v.exe = "/tmp/a \"quoted\"\\path\n";
	v.rate[0] = NAN;
	char *text = render(&v, 1);
	size_t len = strlen(text);
	assert_non_null(strstr(text, "\"exe\":\"/tmp/a \\\"quoted\\\"\\\\path\\u000a\""));
	assert_null(strstr(text, "nan"));
	assert_non_null(strstr(text, "\"arena\":null"));
	assert_int_equal(text[0], '{');
	assert_int_equal(text[len - 2], '}');
	assert_int_equal(text[len - 1], '\n');
	assert_null(memchr(text, '\n', len - 1)); /* one object, one line */
	free(text);
}

static void test_net_unix_parse(void **state)
{
	(void)state;
	static const char table[] =
	    "Num       RefCount Protocol Flags    Type St Inode Path\n"
	    "0000000000000000: 00000002 00000000 00000000 0001 03 111 /run/vyre/vyre.sock\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 222 /run/other.sock\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 333 /run/vyre/vyre.sock\n"
	    "0000000000000000: 00000003 00000000 00000000 0001 03 444\n";
	unsigned long inode = 0;
	FILE *f = fmemopen((void *)table, sizeof(table) - 1, "r");
	assert_int_equal(top_unix_listener_inode(f, "/run/vyre/vyre.sock", &inode), 0);
	assert_int_equal(inode, 333); /* the listening one, not the accepted one */
	fclose(f);
	f = fmemopen((void *)table, sizeof(table) - 1, "r");
	assert_int_equal(top_unix_listener_inode(f, "/run/none.sock", &inode), -ENOENT);
	fclose(f);
}

static void test_pick_owner(void **state)
{
	(void)state;
	/* socket activation: systemd (pid 1) and the vyred it started */
	const struct top_owner activated[] = {{1, "systemd"}, {812, "vyred"}};
	assert_int_equal(top_pick_owner(activated, 2), 1);
	/* vyred named beats a lower pid that also holds it (a forked helper) */
	const struct top_owner named[] = {{300, "sh"}, {900, "vyred"}, {700, "vyred"}};
	assert_int_equal(top_pick_owner(named, 3), 2);
	/* a renamed daemon: the lowest pid that is not 1 */
	const struct top_owner renamed[] = {{1, "systemd"}, {900, "vyred-test"}, {500, "vyred2"}};
	assert_int_equal(top_pick_owner(renamed, 3), 2);
	/* only systemd: vyred has not been started yet */
	const struct top_owner waiting[] = {{1, "systemd"}};
	assert_int_equal(top_pick_owner(waiting, 1), -1);
	assert_int_equal(top_pick_owner(NULL, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lat_bucket),
	    cmocka_unit_test(test_complete_add),
	    cmocka_unit_test(test_quantiles),
	    cmocka_unit_test(test_view),
	    cmocka_unit_test(test_gpu_rows),
	    cmocka_unit_test(test_op_rows),
	    cmocka_unit_test(test_formats),
	    cmocka_unit_test(test_json_escapes_and_has_no_nan),
	    cmocka_unit_test(test_net_unix_parse),
	    cmocka_unit_test(test_pick_owner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
