/* SPDX-License-Identifier: MIT */
/*
 * The real BPF program against real probes: this process fires the known
 * batches of telemetry_pattern.h through vyred's probe macros, vyre-top's
 * session code attaches bpf/vyre.bpf.c to this very process, and every
 * counter, histogram, client row, gauge, slow-batch event and GPU row (its
 * loops' gpu_state records summed, its batches from complete's gpu) must
 * come back exactly. Also: semaphores rise on attach and fall on detach, and a struct
 * whose size field is not the BPF program's is counted, never misread.
 * Needs root (CAP_BPF + CAP_PERFMON) and a kernel with uprobes: else 77.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../tools/top/top.h"
#include "../tools/vyred/probes.h"
#include "telemetry_pattern.h"

#define BATCHES 12u

#define SEMAPHORE_VALUE(name) vyre_##name##_semaphore,
static unsigned short semaphore(size_t i)
{
	const unsigned short values[] = {VYRE_PROBE_NAMES(SEMAPHORE_VALUE)};
	return values[i];
}
#define PROBE_NAME(name) #name,
static const char *probe_name(size_t i)
{
	static const char *const names[] = {VYRE_PROBE_NAMES(PROBE_NAME)};
	return names[i];
}
#define COUNT_PROBE(name) +1
#define N_PROBES	  (0 VYRE_PROBE_NAMES(COUNT_PROBE))
/* vyre-top leaves out dedupe and dispatch_begin (plan and dispatch_end carry their figures). */
#define N_ATTACHED (N_PROBES - 2)

static struct top_session *attach_self(void)
{
	char why[512];
	struct top_session *s = NULL;
	int err = top_session_open(&s, getpid(), 10000000u, why, sizeof(why));
	if (err)
		fail_msg("attach: %s", why);
	return s;
}

static const struct top_client *client(const struct top_sample *s, uint32_t id)
{
	for (uint32_t i = 0; i < s->n_clients; i++)
		if (s->clients[i].id == id)
			return &s->clients[i];
	fail_msg("client %u missing", id);
	return NULL;
}

static void test_semaphores_follow_attach(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_PROBES; i++)
		assert_int_equal(semaphore(i), 0);
	struct top_session *s = attach_self();
	uint32_t total = 0;
	assert_int_equal(top_session_probes(s, &total), N_ATTACHED);
	assert_int_equal(total, N_ATTACHED);
	for (size_t i = 0; i < N_PROBES; i++) {
		int attached = strcmp(probe_name(i), "dedupe") != 0 &&
			       strcmp(probe_name(i), "dispatch_begin") != 0;
		assert_int_equal(semaphore(i) > 0, attached);
	}
	top_session_close(s);
	for (size_t i = 0; i < N_PROBES; i++)
		assert_int_equal(semaphore(i), 0);
}

static void check_counters(const struct vyre_bpf_counters *c)
{
	uint64_t n = BATCHES;
	assert_int_equal(c->batches, n);
	assert_int_equal(c->items, n * (TM_ITEMS1 + TM_ITEMS2));
	assert_int_equal(c->completed, n * (TM_ITEMS1 + TM_ITEMS2));
	assert_int_equal(c->failed, n);
	assert_int_equal(c->deduped, n * TM_DEDUPED);
	assert_int_equal(c->executed, n * TM_EXECUTED);
	assert_int_equal(c->invalid, n * TM_INVALID);
	assert_int_equal(c->groups, n * TM_GROUPS);
	assert_int_equal(c->barriers, n * TM_BARRIERS);
	assert_int_equal(c->launches, n * TM_LAUNCHES);
	assert_int_equal(c->launches_avoided, n * TM_AVOIDED);
	assert_int_equal(c->frontier_splits, n * TM_SPLITS);
	assert_int_equal(c->bytes_avoided, n * TM_BYTES_AVOIDED);
	assert_int_equal(c->readback_bytes, n * TM_READBACK);
	assert_int_equal(c->plan_ns, n * TM_PLAN_NS);
	assert_int_equal(c->dispatches, n);
	assert_int_equal(c->dispatch_ns, n * TM_DISPATCH_NS);
	assert_int_equal(c->dispatch_errors, 0);
	assert_int_equal(c->latency_ns,
			 n * (4 * 1500 + 3 * 20000) + n / 2 * TM_SLOW_NS + n / 2 * TM_FAST_MAX_NS);
	assert_int_equal(c->errors, n);
	assert_int_equal(c->backpressure, n);
	assert_int_equal(c->arena_shrinks, n / 4);
	assert_int_equal(c->connects, 2);
	assert_int_equal(c->disconnects, 0);
	assert_int_equal(c->slow_batches, n / 2);
	assert_int_equal(c->slow_dropped, 0);
	assert_int_equal(c->layout_errors, 0);
	assert_int_equal(c->gpu_states, 3);
}

static const struct top_gpu *gpu_row(const struct top_sample *s, uint32_t gpu)
{
	for (uint32_t i = 0; i < s->n_gpus; i++)
		if (s->gpus[i].gpu == gpu)
			return &s->gpus[i];
	fail_msg("GPU %u missing", gpu);
	return NULL;
}

/* Even batches ran on GPU 0 with the slow item, odd ones on GPU 1. */
static void check_gpu_batches(const struct top_gpu *g, uint32_t slow_bucket)
{
	const struct vyre_bpf_gpu *c = &g->c;
	uint64_t n = BATCHES / 2;
	assert_int_equal(c->batches, n);
	assert_int_equal(c->items, n * (TM_ITEMS1 + TM_ITEMS2));
	assert_int_equal(c->errors, n);
	assert_int_equal(c->dispatches, n);
	assert_int_equal(c->dispatch_ns, n * TM_DISPATCH_NS);
	assert_int_equal(c->latency.bucket[11], 4 * n);
	assert_int_equal(c->latency.bucket[slow_bucket], slow_bucket == 15 ? 4 * n : n);
}

static void check_gpus(const struct top_sample *s)
{
	assert_int_equal(s->n_gpus, 2);
	const struct top_gpu *g0 = gpu_row(s, 0), *g1 = gpu_row(s, 1);
	check_gpu_batches(g0, 25);
	check_gpu_batches(g1, 15);
	assert_int_equal(g0->c.latency_ns, BATCHES / 2 * (4 * 1500 + 3 * 20000 + TM_SLOW_NS));
	/* per class, as per GPU: even batches class 0, odd ones class 2 */
	for (uint32_t k = 0; k < VYRE_BPF_CLASSES; k++) {
		const struct vyre_bpf_class *c = &s->classes[k];
		const uint64_t n = k == 0 || k == TM_CLASS2 ? BATCHES / 2 : 0;

		assert_int_equal(c->batches, n);
		assert_int_equal(c->items, n * (TM_ITEMS1 + TM_ITEMS2));
		assert_int_equal(c->latency.bucket[11], 4 * n);
		assert_int_equal(c->latency.bucket[25], k == 0 ? n : 0);
	}
	/* two loops of GPU 0 summed; GPU-wide figures once */
	assert_int_equal(g0->loops, 2);
	assert_int_equal(g0->loops_per_gpu, 2);
	assert_int_equal(g0->ordinal, TM_GPU0_ORDINAL);
	assert_string_equal(g0->name, TM_GPU0_NAME);
	assert_int_equal(g0->backend, VYRE_TM_BACKEND_CUDA);
	assert_int_equal(g0->mode, VYRE_TM_MODE_PERSISTENT);
	assert_int_equal(g0->lost, 0);
	assert_int_equal(g0->slots, 8);
	assert_int_equal(g0->running, 3);
	assert_int_equal(g0->domains, 3);
	assert_int_equal(g0->clients, 4);
	assert_int_equal(g0->batches_total, 150);
	assert_int_equal(g0->items_total, 1200);
	assert_int_equal(g0->device_bytes_used, TM_GPU0_DEV_USED);
	assert_int_equal(g0->device_bytes_max, TM_GPU0_DEV_MAX);
	assert_int_equal(g1->loops, 1);
	assert_int_equal(g1->ordinal, TM_GPU1_ORDINAL);
	assert_string_equal(g1->name, TM_GPU1_NAME);
	assert_int_equal(g1->lost, 1);
	assert_int_equal(g1->slots, 8);
	assert_int_equal(g1->running, 0);
	assert_int_equal(g1->items_total, 56);
	assert_int_equal(g1->device_bytes_used, 0);
	assert_int_equal(g1->device_bytes_max, TM_GPU1_DEV_MAX);
}

static void check_hists(const struct top_sample *s)
{
	const struct vyre_bpf_hist *lat = &s->h[VYRE_BPF_HIST_LATENCY];
	assert_int_equal(lat->bucket[11], 4 * BATCHES);
	assert_int_equal(lat->bucket[15], 3 * BATCHES + BATCHES / 2);
	assert_int_equal(lat->bucket[25], BATCHES / 2);
	struct top_percentiles p;
	top_hist_percentiles(lat, &p);
	assert_int_equal(p.count, 8 * BATCHES);
	assert_int_equal(p.p50, (1u << 11) - 1);
	assert_int_equal(p.p99, (1u << 25) - 1);
	/* 8 items per batch: bit length 4; 3000 ns: bit length 12 */
	assert_int_equal(s->h[VYRE_BPF_HIST_BATCH].bucket[4], BATCHES);
	assert_int_equal(s->h[VYRE_BPF_HIST_PLAN].bucket[12], BATCHES);
	/* 5000 ns: bit length 13 */
	assert_int_equal(s->h[VYRE_BPF_HIST_DISPATCH].bucket[13], BATCHES);
}

static void check_clients(const struct top_sample *s)
{
	assert_int_equal(s->n_clients, 2);
	const struct top_client *c1 = client(s, 1), *c2 = client(s, 2);
	assert_int_equal(c1->pid, TM_PID1);
	assert_int_equal(c1->items, BATCHES * TM_ITEMS1);
	assert_int_equal(c1->drains, BATCHES);
	assert_int_equal(c1->errors, BATCHES);
	assert_int_equal(c1->backpressure, 0);
	assert_int_equal(c1->sq_depth, TM_DEPTH1);
	assert_int_equal(c1->sq_entries, TM_SQ_ENTRIES);
	assert_int_equal(c1->cq_free, 100);
	assert_int_equal(c1->uid, 1000);
	assert_int_equal(c1->domain_id, 1);
	assert_int_equal(c1->flags, VYRE_BPF_CLIENT_CONNECTED);
	assert_int_equal(c1->gpu, 0);
	assert_int_equal(c2->gpu, 1);
	assert_int_equal(c1->priority, 0);
	assert_int_equal(c2->priority, TM_CLASS2);
	assert_int_equal(c2->pid, TM_PID2);
	assert_int_equal(c2->items, BATCHES * TM_ITEMS2);
	assert_int_equal(c2->errors, 0);
	assert_int_equal(c2->backpressure, BATCHES);
	assert_int_equal(c2->sq_depth, TM_DEPTH2);
	assert_int_equal(c2->domain_id, 2);
}

static void check_gauges_and_slow(const struct top_sample *s)
{
	assert_int_equal(s->g.have_backend, 1);
	assert_int_equal(s->g.backend, VYRE_TM_BACKEND_CPU);
	assert_int_equal(s->g.mode, VYRE_TM_MODE_NONE);
	assert_int_equal(s->g.have_arena, 1);
	assert_int_equal(s->g.arena_used, (1u << 20) + BATCHES);
	assert_int_equal(s->g.arena_capacity, TM_ARENA_CAP);
	assert_int_equal(s->g.arena_high_water, TM_ARENA_HIGH);
	assert_int_equal(s->g.last_batch_id, BATCHES);
	assert_int_equal(s->g.last_error, VYRE_E_INVAL);
	assert_int_equal(s->slow_events, BATCHES / 2);
	assert_int_equal(s->n_slow, BATCHES / 2);
	for (uint32_t i = 0; i < s->n_slow; i++) {
		const struct vyre_bpf_slow_batch *e = &s->slow[i];
		assert_int_equal(e->batch_id, 2 * (i + 1));
		assert_int_equal(e->max_ns, TM_SLOW_NS);
		assert_int_equal(e->items, TM_ITEMS1 + TM_ITEMS2);
		assert_int_equal(e->errors, 1);
		assert_int_equal(e->deduped, TM_DEDUPED);
		assert_int_equal(e->have_plan, 1);
		assert_int_equal(e->executed, TM_EXECUTED);
		assert_int_equal(e->groups, TM_GROUPS);
		assert_int_equal(e->barriers, TM_BARRIERS);
		assert_int_equal(e->launches, TM_LAUNCHES);
		assert_int_equal(e->launches_avoided, TM_AVOIDED);
		assert_int_equal(e->frontier_splits, TM_SPLITS);
		assert_int_equal(e->bytes_avoided, TM_BYTES_AVOIDED);
		assert_int_equal(e->plan_ns, TM_PLAN_NS);
		assert_int_equal(e->dispatch_ns, TM_DISPATCH_NS);
	}
}

/* Per op: ADD and the module op of every batch, named by op_info. */
static void check_ops(const struct top_sample *s)
{
	char buf[24];

	assert_int_equal(s->n_ops, 2);
	assert_int_equal(s->ops_dropped, 0);
	const struct top_op *add = &s->ops[0], *mod = &s->ops[1]; /* by number */
	assert_int_equal(add->op, VYRE_OP_ADD);
	assert_int_equal(mod->op, TM_MOD_OP);
	assert_int_equal(add->c.batches, BATCHES);
	assert_int_equal(add->c.items, BATCHES * TM_ADD_ITEMS);
	assert_int_equal(add->c.failed, BATCHES);
	assert_int_equal(add->c.deduped, BATCHES * TM_DEDUPED);
	assert_int_equal(add->c.latency_ns,
			 BATCHES * 4 * 1500 + BATCHES / 2 * (TM_SLOW_NS + TM_FAST_MAX_NS));
	assert_int_equal(add->c.max_ns, TM_SLOW_NS);
	assert_int_equal(add->c.drain_ns, BATCHES * TM_ADD_ITEMS * TM_DRAIN_NS);
	assert_int_equal(mod->c.items, BATCHES * TM_MOD_ITEMS);
	assert_int_equal(mod->c.failed, 0);
	assert_int_equal(mod->c.latency_ns, BATCHES * TM_MOD_ITEMS * TM_MOD_NS);
	assert_int_equal(mod->c.max_ns, TM_MOD_NS);
	/* every CQE is in one op entry: the ops add up to complete's figures */
	assert_int_equal(add->c.items + mod->c.items, s->c.completed);
	assert_int_equal(add->c.failed + mod->c.failed, s->c.failed);
	assert_int_equal(add->c.latency_ns + mod->c.latency_ns, s->c.latency_ns);
	assert_true(add->named && mod->named);
	assert_string_equal(top_op_name(add, buf, sizeof(buf)), "add");
	assert_string_equal(add->module, "");
	assert_int_equal(add->flags, VYRE_TM_OP_F_PURE);
	assert_string_equal(top_op_name(mod, buf, sizeof(buf)), "crc32c");
	assert_string_equal(mod->module, "checksums");
	assert_int_equal(mod->flags, VYRE_TM_OP_F_MODULE | VYRE_TM_OP_F_PURE);
}

static void test_exact_aggregates(void **state)
{
	(void)state;
	struct top_session *s = attach_self();
	struct top_sample before = {0}, after = {0};
	assert_int_equal(top_session_sample(s, &before), 0);
	assert_int_equal(before.c.items, 0);
	assert_int_equal(before.n_clients, 0);
	assert_int_equal(before.n_gpus, 0);
	tm_fire_connect();
	tm_fire_gpu_state();
	for (uint64_t k = 1; k <= BATCHES; k++)
		tm_fire_batch(k);
	assert_int_equal(top_session_sample(s, &after), 0);
	check_counters(&after.c);
	check_hists(&after);
	check_clients(&after);
	check_gauges_and_slow(&after);
	check_gpus(&after);
	check_ops(&after);

	/* The view over the two samples agrees with the raw maps. */
	struct top_client_row rows[2];
	struct top_view v = {0};
	after.t_ns = before.t_ns + 2000000000u;
	top_view_build(&v, &before, &after, rows, TOP_SORT_ITEMS);
	assert_int_equal(v.n_rows, 2);
	assert_int_equal(v.rows[0].c.id, 2); /* more items */
	assert_true(v.rows[0].items_per_s == BATCHES * TM_ITEMS2 / 2.0);
	assert_true(v.dedupe_ratio == (double)TM_DEDUPED / (TM_ITEMS1 + TM_ITEMS2));
	assert_int_equal(v.queue_max_client, 2);
	assert_int_equal(v.queue_max_fill, TM_DEPTH2 * 100 / TM_SQ_ENTRIES);
	assert_int_equal(v.n_gpus, 2);
	assert_true(v.gpus[1].items_per_s == BATCHES / 2 * (TM_ITEMS1 + TM_ITEMS2) / 2.0);
	assert_int_equal(v.gpus[0].latency.p99, (1u << 25) - 1);
	assert_int_equal(v.gpus[1].latency.p99, (1u << 15) - 1);
	/* op rows: most items first, rates and means over the interval */
	assert_int_equal(v.n_ops, 2);
	assert_int_equal(v.ops[0].o.op, VYRE_OP_ADD);
	assert_true(v.ops[0].items_per_s == BATCHES * TM_ADD_ITEMS / 2.0);
	assert_true(v.ops[0].failed_per_s == BATCHES / 2.0);
	assert_int_equal(v.ops[1].mean_ns, TM_MOD_NS);
	assert_int_equal(v.ops[1].drain_mean_ns, TM_DRAIN_NS);

	/* Disconnects mark the rows; a third sample drains no new slow events. */
	tm_fire_disconnect();
	assert_int_equal(top_session_sample(s, &before), 0);
	assert_int_equal(before.c.disconnects, 2);
	assert_int_equal(before.n_slow, 0);
	for (uint32_t i = 0; i < before.n_clients; i++)
		assert_true(before.clients[i].flags & VYRE_BPF_CLIENT_DISCONNECTED);
	top_sample_free(&before);
	top_sample_free(&after);
	top_session_close(s);
}

static void test_layout_mismatch_is_ignored(void **state)
{
	(void)state;
	struct top_session *s = attach_self();
	struct top_sample smp = {0};
	tm_fire_bad_layout();
	assert_int_equal(top_session_sample(s, &smp), 0);
	assert_int_equal(smp.c.layout_errors, 6);
	assert_int_equal(smp.n_ops, 0);
	assert_int_equal(smp.c.gpu_states, 0);
	assert_int_equal(smp.n_gpus, 0);
	assert_int_equal(smp.c.batches, 0);
	assert_int_equal(smp.c.launches, 0);
	assert_int_equal(smp.c.arena_shrinks, 0);
	assert_int_equal(smp.g.have_arena, 0);
	top_sample_free(&smp);
	top_session_close(s);
}

int main(void)
{
	char why[512];
	if (geteuid() != 0) {
		printf("needs root to load BPF and attach uprobes\n");
		return 77;
	}
	if (top_check_privilege(why, sizeof(why)) != 0) {
		printf("BPF unavailable: %s\n", why);
		return 77;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_semaphores_follow_attach),
	    cmocka_unit_test(test_exact_aggregates),
	    cmocka_unit_test(test_layout_mismatch_is_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
