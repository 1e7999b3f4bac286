/* SPDX-License-Identifier: MIT */
/*
 * Goldens of the planner's building blocks: every test vector of the seeds
 * (launch_fusion.rs, megakernel_frontier.rs, whole_megakernel_opt.rs) and of
 * docs/design.md 7.3, plus the hazard rules of docs/design.md 7.1 the seeds lack,
 * and how the batch planner orders chains (docs/design.md 6.3, 7.2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../gpu/backend.h"
#include "../planner/planner.h"
#include "../planner/track.h"

#define ARENA_BYTES (64u << 20)
static struct vyre_arena arena;

static int setup(void **state)
{
	(void)state;
	return vyre_arena_init(&arena, ARENA_BYTES);
}

static int teardown(void **state)
{
	(void)state;
	vyre_arena_fini(&arena);
	return 0;
}

static void fresh(void)
{
	vyre_arena_reset(&arena);
	vyre_arena_fail_nth(&arena, 0, 0);
}

static void assert_message_has(const struct vyre_plan_error *e, const char *needle)
{
	char msg[512];

	vyre_plan_error_format(e, msg, sizeof(msg));
	if (!strstr(msg, needle))
		fail_msg("message \"%s\" lacks \"%s\"", msg, needle);
	if (!strstr(msg, "Fix: "))
		fail_msg("message \"%s\" says no fix", msg);
}

/* Group g of a barrier plan as a list, for comparisons. */
static void assert_group(const struct vyre_barrier_plan *p, uint32_t g, const uint32_t *waves,
			 uint32_t n)
{
	uint32_t start = g ? p->group_end[g - 1] : 0;

	assert_true(g < p->n_groups);
	assert_int_equal(p->group_end[g] - start, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(p->order[start + i], waves[i]);
}

/* ------------------------------------------------------------ docs/design.md 7.3 */

static void test_barrier_goldens(void **state)
{
	struct vyre_barrier_plan p;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	assert_int_equal(vyre_barrier_plan(&arena, 4, NULL, 0, &p, &e), 0);
	assert_int_equal(p.n_groups, 1);
	assert_group(&p, 0, (uint32_t[]){0, 1, 2, 3}, 4);
	assert_int_equal(p.global_barriers, 0);

	const struct vyre_wave_dep chain[] = {{0, 1}, {1, 2}, {2, 3}};
	assert_int_equal(vyre_barrier_plan(&arena, 4, chain, 3, &p, &e), 0);
	assert_int_equal(p.global_barriers, 3);
	assert_int_equal(p.n_groups, 4);
	for (uint32_t g = 0; g < 4; g++)
		assert_group(&p, g, &g, 1);

	const struct vyre_wave_dep diamond[] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
	assert_int_equal(vyre_barrier_plan(&arena, 4, diamond, 4, &p, &e), 0);
	assert_int_equal(p.n_groups, 3);
	assert_group(&p, 0, (uint32_t[]){0}, 1);
	assert_group(&p, 1, (uint32_t[]){1, 2}, 2);
	assert_group(&p, 2, (uint32_t[]){3}, 1);
	assert_int_equal(p.global_barriers, 2);
	assert_int_equal(p.max_group_width, 2);

	const struct vyre_wave_dep invalid[] = {{0, 2}};
	assert_int_equal(vyre_barrier_plan(&arena, 2, invalid, 1, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_INVALID_WAVE);
	assert_int_equal(e.index, 2);
	assert_int_equal(e.count, 2);
	assert_message_has(&e, "dependency on wave 2 but only 2 wave(s) exist");

	const struct vyre_wave_dep self[] = {{1, 1}};
	assert_int_equal(vyre_barrier_plan(&arena, 2, self, 1, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_SELF_DEPENDENCY);
	assert_int_equal(e.index, 1);
	assert_message_has(&e, "self dependency on wave 1");

	const struct vyre_wave_dep cycle[] = {{0, 1}, {1, 0}};
	assert_int_equal(vyre_barrier_plan(&arena, 2, cycle, 2, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_CYCLE);
	assert_int_equal(e.count, 2);
	assert_message_has(&e, "2 wave(s) could not be scheduled");

	static struct vyre_wave_dep fan[1024];
	for (uint32_t i = 0; i < 1024; i++)
		fan[i] = (struct vyre_wave_dep){0, i + 1};
	assert_int_equal(vyre_barrier_plan(&arena, 1025, fan, 1024, &p, &e), 0);
	assert_int_equal(p.n_groups, 2);
	assert_int_equal(p.group_end[1] - p.group_end[0], 1024);
	assert_int_equal(p.max_group_width, 1024);
	assert_int_equal(p.global_barriers, 1);
}

static void test_barrier_order_and_errors(void **state)
{
	struct vyre_barrier_plan p;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	/* Later layers follow each wave's outgoing edges in input order. */
	const struct vyre_wave_dep rev[] = {{0, 3}, {0, 1}, {0, 2}};
	assert_int_equal(vyre_barrier_plan(&arena, 4, rev, 3, &p, &e), 0);
	assert_group(&p, 1, (uint32_t[]){3, 1, 2}, 3);
	/* A wave joins the layer after its latest predecessor. */
	const struct vyre_wave_dep late[] = {{2, 0}, {1, 2}, {3, 0}};
	assert_int_equal(vyre_barrier_plan(&arena, 4, late, 3, &p, &e), 0);
	assert_group(&p, 0, (uint32_t[]){1, 3}, 2);
	assert_group(&p, 1, (uint32_t[]){2}, 1);
	assert_group(&p, 2, (uint32_t[]){0}, 1);

	assert_int_equal(vyre_barrier_plan(&arena, 0, NULL, 0, &p, &e), 0);
	assert_int_equal(p.n_groups, 0);
	assert_int_equal(p.global_barriers, 0);

	assert_int_equal(vyre_barrier_plan(&arena, UINT32_MAX, NULL, 0, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_OVERFLOW);
	assert_message_has(&e, "overflowed while computing wave count + 1");

	/* A cycle behind a valid prefix counts only the unscheduled waves. */
	const struct vyre_wave_dep tail[] = {{0, 1}, {1, 2}, {2, 3}, {3, 2}};
	assert_int_equal(vyre_barrier_plan(&arena, 4, tail, 4, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.count, 2);

	for (uint64_t nth = 1; nth <= 5; nth++) {
		fresh();
		vyre_arena_fail_nth(&arena, nth, 0);
		assert_int_equal(vyre_barrier_plan(&arena, 4, rev, 3, &p, &e), VYRE_E_NOMEM);
		assert_int_equal(e.kind, VYRE_PLAN_ERR_RESERVE);
		assert_message_has(&e, "could not reserve");
	}
	fresh();
	size_t before = arena.used;
	assert_int_equal(vyre_barrier_plan(&arena, 4, rev, 3, &p, &e), 0);
	assert_true(arena.used - before <= vyre_barrier_arena_bytes(4, 3));
}

/* ------------------------------------------------------------ megakernel_frontier.rs */

static struct vyre_frontier_wave fw(uint64_t frontier, uint64_t scratch, uint64_t output)
{
	return (struct vyre_frontier_wave){frontier, scratch, output};
}

static void test_frontier_uses_peak_barrier_group_memory(void **state)
{
	struct vyre_frontier_plan p;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	const struct vyre_frontier_wave waves[] = {fw(1024, 512, 256), fw(2048, 1024, 512),
						   fw(4096, 2048, 1024), fw(8192, 4096, 2048)};
	const struct vyre_wave_dep deps[] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
	assert_int_equal(
	    vyre_frontier_plan(&arena, waves, 4, deps, 4, 16000, 128 * 1024, 1 << 20, &p, &e), 0);
	assert_int_equal(p.barriers.global_barriers, 2);
	assert_group(&p.barriers, 1, (uint32_t[]){1, 2}, 2);
	assert_int_equal(p.peak_frontier_bytes, 8192);
	assert_int_equal(p.peak_scratch_bytes, 4096);
	assert_int_equal(p.peak_output_bytes, 2048);
	assert_int_equal(p.amortized_readback_bytes, 1 << 20);
	assert_int_equal(p.max_group_width, 2);
}

static void test_frontier_amortizes_readback_with_static_output(void **state)
{
	struct vyre_frontier_plan p;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	const struct vyre_frontier_wave waves[] = {fw(1024, 512, 3072), fw(1024, 512, 3072)};
	assert_int_equal(
	    vyre_frontier_plan(&arena, waves, 2, NULL, 0, 16000, 128 * 1024, 0, &p, &e), 0);
	assert_int_equal(p.peak_output_bytes, 6144);
	assert_int_equal(p.amortized_readback_bytes, 6144);
}

static void test_frontier_splits_independent_layers(void **state)
{
	struct vyre_frontier_plan p;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	const struct vyre_frontier_wave waves[] = {fw(10, 10, 10), fw(10, 10, 10), fw(10, 10, 10)};
	assert_int_equal(vyre_frontier_plan(&arena, waves, 3, NULL, 0, 0, 100, 4096, &p, &e), 0);
	assert_int_equal(p.barriers.n_groups, 3);
	assert_int_equal(p.barriers.global_barriers, 2);
	assert_int_equal(p.max_group_width, 1);
	assert_int_equal(p.peak_frontier_bytes, 10);
	assert_int_equal(p.peak_scratch_bytes, 10);
	assert_int_equal(p.peak_output_bytes, 10);
}

static void test_frontier_rejects_graph_and_single_wave_over_budget(void **state)
{
	struct vyre_frontier_plan p;
	struct vyre_plan_error e;
	char msg[512];
	(void)state;

	fresh();
	const struct vyre_frontier_wave one[] = {fw(1, 1, 1)};
	assert_int_equal(vyre_frontier_plan(&arena, one, 1, NULL, 0, 1600, 1000, 0, &p, &e),
			 VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_GROUP_OVER_BUDGET);
	assert_int_equal(e.required, 1600);
	assert_int_equal(e.budget, 1000);
	assert_string_equal(e.field, "resident graph bytes");
	vyre_plan_error_format(&e, msg, sizeof(msg));
	assert_string_equal(msg, "megakernel frontier memory planner requires 1600 bytes for "
				 "resident graph bytes but budget allows 1000. Fix: shard the "
				 "graph/frontier waves or raise the explicit megakernel budget.");

	const struct vyre_frontier_wave big[] = {fw(100, 100, 100)};
	assert_int_equal(vyre_frontier_plan(&arena, big, 1, NULL, 0, 0, 500, 0, &p, &e),
			 VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_GROUP_OVER_BUDGET);
	assert_int_equal(e.required, 600);
	assert_int_equal(e.budget, 500);
	assert_string_equal(e.field, "single fused frontier wave bytes");
}

static void test_frontier_fails_loudly_on_wave_byte_overflow(void **state)
{
	struct vyre_frontier_plan p;
	struct vyre_plan_error e;
	char msg[512];
	(void)state;

	fresh();
	const struct vyre_frontier_wave waves[] = {fw(UINT64_MAX, 1, 1), fw(1, 1, 1)};
	assert_int_equal(vyre_frontier_plan(&arena, waves, 2, NULL, 0, 2, UINT64_MAX, 0, &p, &e),
			 VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_OVERFLOW);
	assert_string_equal(e.field, "fused wave bytes");
	vyre_plan_error_format(&e, msg, sizeof(msg));
	assert_string_equal(msg, "megakernel frontier memory planner overflowed while accumulating "
				 "fused wave bytes. Fix: shard the frontier wave group or split "
				 "the fused phase.");
	const struct vyre_frontier_wave scratchy[] = {fw(0, UINT64_MAX / 2, 0)};
	assert_int_equal(vyre_frontier_plan(&arena, scratchy, 1, NULL, 0, 0, 10, 0, &p, &e),
			 VYRE_E_INVAL);
	assert_string_equal(e.field, "fused wave scratch bytes");
}

static void test_frontier_generated_1024_shapes(void **state)
{
	static struct vyre_frontier_wave waves[32 * 32];
	static struct vyre_wave_dep deps[32 * 32];
	(void)state;

	for (uint64_t width = 1; width <= 32; width++) {
		for (uint64_t depth = 1; depth <= 32; depth++) {
			uint32_t n = 0, d = 0;
			struct vyre_frontier_plan p;
			struct vyre_plan_error e;

			for (uint64_t layer = 0; layer < depth; layer++)
				for (uint64_t slot = 0; slot < width; slot++) {
					waves[n++] = fw(width, slot + 1, layer + 1);
					if (layer + 1 < depth)
						deps[d++] = (struct vyre_wave_dep){
						    (uint32_t)(layer * width + slot),
						    (uint32_t)((layer + 1) * width + slot)};
				}
			fresh();
			assert_int_equal(vyre_frontier_plan(&arena, waves, n, deps, d, 256,
							    UINT64_MAX / 2, 7, &p, &e),
					 0);
			assert_int_equal(p.barriers.n_groups, depth);
			assert_int_equal(p.max_group_width, width);
			assert_int_equal(p.peak_frontier_bytes, width * width);
			assert_int_equal(p.peak_scratch_bytes, width * (width + 1) / 2);
			assert_int_equal(p.peak_output_bytes, width * depth);
			assert_int_equal(p.amortized_readback_bytes,
					 7 > width * depth ? 7 : width * depth);
		}
	}
}

static void test_frontier_split_clamps_oversized_waves(void **state)
{
	struct vyre_barrier_plan layers, split;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	const struct vyre_frontier_wave first[] = {fw(900, 0, 0), fw(10, 0, 0), fw(10, 0, 0),
						   fw(0, 0, 0)};
	assert_int_equal(vyre_barrier_plan(&arena, 4, NULL, 0, &layers, &e), 0);
	assert_int_equal(vyre_frontier_split(&arena, first, &layers, 100, 0, &split, &e),
			 VYRE_E_INVAL);
	assert_string_equal(e.field, "single fused frontier wave bytes");
	/* Clamped, the oversized wave runs alone and the rest fill the next group. */
	assert_int_equal(vyre_frontier_split(&arena, first, &layers, 100, 1, &split, &e), 0);
	assert_int_equal(split.n_groups, 2);
	assert_group(&split, 0, (uint32_t[]){0}, 1);
	assert_group(&split, 1, (uint32_t[]){1, 2, 3}, 3);

	/* As in the seed, only a wave that opens a group is checked against the budget. */
	const struct vyre_frontier_wave middle[] = {fw(10, 0, 0), fw(900, 0, 0), fw(10, 0, 0),
						    fw(0, 0, 0)};
	for (int clamp = 0; clamp < 2; clamp++) {
		assert_int_equal(
		    vyre_frontier_split(&arena, middle, &layers, 100, clamp, &split, &e), 0);
		assert_int_equal(split.n_groups, 3);
		assert_group(&split, 0, (uint32_t[]){0}, 1);
		assert_group(&split, 1, (uint32_t[]){1}, 1);
		assert_group(&split, 2, (uint32_t[]){2, 3}, 2);
	}
	fresh();
	vyre_arena_fail_nth(&arena, 1, 0);
	assert_int_equal(vyre_frontier_split(&arena, first, &layers, 100, 1, &split, &e),
			 VYRE_E_NOMEM);
	assert_message_has(&e, "could not reserve 4 split barrier groups entries");
}

/* ------------------------------------------------------------ launch_fusion.rs */

static struct vyre_fusion_stage stage(uint32_t id, uint64_t layout, uint64_t in, uint64_t out,
				      uint64_t scratch, int host)
{
	return (struct vyre_fusion_stage){.id = id,
					  .layout_hash = layout,
					  .input_bytes = in,
					  .output_bytes = out,
					  .scratch_bytes = scratch,
					  .requires_host_materialization = (uint32_t)host};
}

static void assert_launch(const struct vyre_fusion_plan *p, const struct vyre_fusion_stage *s,
			  uint32_t l, const uint32_t *ids, uint32_t n)
{
	uint32_t start = l ? p->launch_end[l - 1] : 0;

	assert_int_equal(p->launch_end[l] - start, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(s[start + i].id, ids[i]);
}

static void test_fusion_groups_adjacent_compatible_stages(void **state)
{
	struct vyre_fusion_plan p;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	const struct vyre_fusion_stage s[] = {stage(1, 7, 64, 32, 8, 0), stage(2, 7, 32, 48, 8, 0),
					      stage(3, 7, 48, 16, 8, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, s, 3, 256, &p, &e), 0);
	assert_int_equal(p.launch_count, 1);
	assert_int_equal(p.avoided_launches, 2);
	assert_launch(&p, s, 0, (uint32_t[]){1, 2, 3}, 3);
	assert_int_equal(p.avoided_intermediate_bytes, 80);
	assert_int_equal(p.required_bytes[0], 64 + 32 + 8 + 8 + 48 + 8 + 16);
}

static void test_fusion_splits_on_layout_host_boundary_and_budget(void **state)
{
	struct vyre_fusion_plan p;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	const struct vyre_fusion_stage s[] = {stage(1, 7, 64, 32, 8, 0), stage(2, 8, 32, 48, 8, 0),
					      stage(3, 8, 48, 16, 8, 1), stage(4, 9, 16, 16, 8, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, s, 4, 128, &p, &e), 0);
	assert_int_equal(p.launch_count, 4);
	assert_int_equal(p.avoided_launches, 0);
	for (uint32_t l = 0; l < 4; l++)
		assert_launch(&p, s, l, (uint32_t[]){l + 1}, 1);
	/* The budget alone splits too. */
	const struct vyre_fusion_stage b[] = {stage(1, 7, 64, 32, 8, 0), stage(2, 7, 32, 48, 8, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, b, 2, 104 + 55, &p, &e), 0);
	assert_int_equal(p.launch_count, 2);
	assert_int_equal(vyre_fusion_plan(&arena, b, 2, 104 + 56, &p, &e), 0);
	assert_int_equal(p.launch_count, 1);
}

static void test_fusion_rejects_invalid_inputs(void **state)
{
	struct vyre_fusion_plan p;
	struct vyre_plan_error e;
	char msg[512];
	(void)state;

	fresh();
	const struct vyre_fusion_stage one[] = {stage(1, 7, 1, 1, 1, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, one, 1, 0, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_ZERO_BUDGET);
	vyre_plan_error_format(&e, msg, sizeof(msg));
	assert_string_equal(msg, "Launch fusion received a zero byte budget. Fix: pass an explicit "
				 "device-memory budget before planning fusion.");

	const struct vyre_fusion_stage dup[] = {stage(1, 7, 1, 1, 1, 0), stage(1, 7, 1, 1, 1, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, dup, 2, 128, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_DUPLICATE_STAGE);
	assert_int_equal(e.index, 1);
	vyre_plan_error_format(&e, msg, sizeof(msg));
	assert_string_equal(msg, "Launch fusion received duplicate stage id 1. Fix: emit unique "
				 "stage ids before fusion planning.");

	const struct vyre_fusion_stage over[] = {stage(9, 7, 64, 32, 64, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, over, 1, 128, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_STAGE_OVER_BUDGET);
	assert_int_equal(e.index, 9);
	assert_int_equal(e.required, 160);
	assert_int_equal(e.budget, 128);
	vyre_plan_error_format(&e, msg, sizeof(msg));
	assert_string_equal(msg, "Launch fusion stage 9 requires 160 bytes but budget allows 128. "
				 "Fix: shard the stage or raise the explicit fusion budget.");

	/* Duplicates among many stages go through the hash set. */
	static struct vyre_fusion_stage many[40];
	for (uint32_t i = 0; i < 40; i++)
		many[i] = stage(i * 3, 7, 1, 1, 1, 0);
	many[33].id = many[20].id;
	assert_int_equal(vyre_fusion_plan(&arena, many, 40, 1024, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.index, 60);

	const struct vyre_fusion_stage wrap[] = {stage(1, 7, UINT64_MAX, 1, 0, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, wrap, 1, 128, &p, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_OVERFLOW);
	assert_string_equal(e.field, "stage io bytes");
	const struct vyre_fusion_stage wrap2[] = {stage(1, 7, 1, 1, 0, 0),
						  stage(2, 7, 1, UINT64_MAX, 0, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, wrap2, 2, UINT64_MAX, &p, &e), VYRE_E_INVAL);
	assert_string_equal(e.field, "fused output bytes");
	const struct vyre_fusion_stage wrap3[] = {stage(1, 7, 1, 1, 0, 0),
						  stage(2, 7, 0, 0, UINT64_MAX, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, wrap3, 2, UINT64_MAX, &p, &e), VYRE_E_INVAL);
	assert_string_equal(e.field, "fused scratch bytes");

	assert_int_equal(vyre_fusion_plan(&arena, NULL, 0, 1, &p, &e), 0);
	assert_int_equal(p.launch_count, 0);
	assert_int_equal(p.avoided_launches, 0);
}

static uint64_t next_u64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static uint32_t generated_stages(uint64_t seed, struct vyre_fusion_stage *out)
{
	uint32_t count = 1 + (uint32_t)(seed % 24);
	uint64_t st = seed ^ 0xF0511A4A7E570001ull;

	for (uint32_t i = 0; i < count; i++) {
		uint64_t layout = next_u64(&st) % 5;
		uint64_t in = 1 + next_u64(&st) % 48;
		uint64_t outb = 1 + next_u64(&st) % 48;
		uint64_t scratch = next_u64(&st) % 24;
		int host = next_u64(&st) % 11 == 0;

		out[i] = stage(i, layout, in, outb, scratch, host);
	}
	return count;
}

static void test_fusion_generated_4096_seeds(void **state)
{
	struct vyre_fusion_stage s[24];
	uint32_t planned = 0;
	(void)state;

	for (uint64_t seed = 0; seed < 4096; seed++) {
		uint32_t n = generated_stages(seed, s), pos = 0;
		uint64_t budget = 96 + seed % 512;
		struct vyre_fusion_plan p;
		struct vyre_plan_error e;
		int rc;

		fresh();
		rc = vyre_fusion_plan(&arena, s, n, budget, &p, &e);
		if (rc != 0) {
			if (e.kind != VYRE_PLAN_ERR_STAGE_OVER_BUDGET)
				fail_msg("seed %llu: unexpected error %d", (unsigned long long)seed,
					 e.kind);
			continue;
		}
		planned++;
		/* Launches partition the stages in their original order. */
		for (uint32_t l = 0; l < p.launch_count; l++) {
			assert_true(p.launch_end[l] > pos);
			if (p.required_bytes[l] > budget)
				fail_msg("seed %llu: launch over budget", (unsigned long long)seed);
			for (uint32_t i = pos + 1; i < p.launch_end[l]; i++) {
				assert_int_equal(s[i].layout_hash, s[pos].layout_hash);
				assert_false(s[i].requires_host_materialization);
			}
			/* Greedy: the next stage could not have joined this launch. */
			if (p.launch_end[l] < n) {
				const struct vyre_fusion_stage *next = &s[p.launch_end[l]];

				assert_true(next->requires_host_materialization ||
					    next->layout_hash != s[pos].layout_hash ||
					    p.required_bytes[l] + next->scratch_bytes +
						    next->output_bytes >
						budget);
			}
			pos = p.launch_end[l];
		}
		assert_int_equal(pos, n);
		assert_int_equal(p.avoided_launches, n - p.launch_count);
	}
	assert_true(planned > 1000);
}

static void test_fusion_reuses_arena_scratch(void **state)
{
	static struct vyre_fusion_stage wide[64];
	struct vyre_fusion_plan p;
	struct vyre_plan_error e;
	(void)state;

	for (uint32_t i = 0; i < 64; i++)
		wide[i] = stage(i, 7, 16, 16, 4, 0);
	fresh();
	assert_int_equal(vyre_fusion_plan(&arena, wide, 64, 8192, &p, &e), 0);
	assert_int_equal(p.launch_count, 1);
	assert_int_equal(p.avoided_launches, 63);
	size_t used = arena.used;
	assert_true(used <= vyre_fusion_arena_bytes(64));

	fresh();
	const struct vyre_fusion_stage two[] = {stage(10, 7, 64, 32, 8, 0),
						stage(11, 8, 32, 48, 8, 0)};
	assert_int_equal(vyre_fusion_plan(&arena, two, 2, 512, &p, &e), 0);
	assert_int_equal(p.launch_count, 2);
	assert_true(arena.used <= used);
}

static void test_fusion_reserves_fallibly(void **state)
{
	static struct vyre_fusion_stage wide[64];
	struct vyre_fusion_plan p;
	struct vyre_plan_error e;
	(void)state;

	for (uint32_t i = 0; i < 64; i++)
		wide[i] = stage(i, 7, 16, 16, 4, 0);
	for (uint64_t nth = 1; nth <= 4; nth++) {
		fresh();
		vyre_arena_fail_nth(&arena, nth, 0);
		assert_int_equal(vyre_fusion_plan(&arena, wide, 64, 8192, &p, &e), VYRE_E_NOMEM);
		assert_int_equal(e.kind, VYRE_PLAN_ERR_RESERVE);
		assert_message_has(&e, "Launch fusion could not reserve");
	}
}

/* ------------------------------------------------------------ whole_megakernel_opt.rs */

static struct vyre_work_item wi(uint32_t op, uint32_t in, uint32_t out)
{
	return (struct vyre_work_item){op, in, out, 0};
}

static struct vyre_redundancy detect(const struct vyre_work_item *const *arms, const uint32_t *lens,
				     uint32_t n_arms)
{
	static struct vyre_work_item flat[64];
	uint32_t end[16], total = 0;
	struct vyre_redundancy r;
	struct vyre_plan_error e;

	for (uint32_t a = 0; a < n_arms; a++) {
		memcpy(flat + total, arms[a], lens[a] * sizeof(*flat));
		total += lens[a];
		end[a] = total;
	}
	fresh();
	assert_int_equal(vyre_cross_arm_detect(&arena, flat, NULL, end, n_arms, NULL, &r, &e), 0);
	assert_int_equal(r.total_redundant_ops, r.n_pairs);
	return r;
}

static void assert_pairs(const struct vyre_redundancy *r, const uint32_t (*want)[3], uint32_t n)
{
	assert_int_equal(r->n_pairs, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(r->pairs[i].early, want[i][0]);
		assert_int_equal(r->pairs[i].late, want[i][1]);
		assert_int_equal(r->pairs[i].op_index, want[i][2]);
	}
}

static void test_cross_arm_goldens(void **state)
{
	struct vyre_redundancy r;
	(void)state;

	r = detect(NULL, NULL, 0);
	assert_int_equal(r.n_pairs, 0);

	const struct vyre_work_item rep[] = {wi(1, 0, 5), wi(1, 0, 5), wi(2, 5, 6)};
	r = detect((const struct vyre_work_item *[]){rep}, (uint32_t[]){3}, 1);
	assert_int_equal(r.total_redundant_ops, 0);

	const struct vyre_work_item a[] = {wi(1, 0, 5), wi(2, 5, 6)};
	r = detect((const struct vyre_work_item *[]){a, a}, (uint32_t[]){2, 2}, 2);
	assert_pairs(&r, (const uint32_t[][3]){{0, 1, 0}, {0, 1, 1}}, 2);

	const struct vyre_work_item d1[] = {wi(1, 0, 5)}, d2[] = {wi(2, 7, 8)};
	r = detect((const struct vyre_work_item *[]){d1, d2}, (uint32_t[]){1, 1}, 2);
	assert_int_equal(r.n_pairs, 0);

	const struct vyre_work_item x[] = {wi(1, 0, 5)}, y[] = {wi(99, 0, 0)};
	r = detect((const struct vyre_work_item *[]){x, y, x, x}, (uint32_t[]){1, 1, 1, 1}, 4);
	assert_pairs(&r, (const uint32_t[][3]){{0, 2, 0}, {0, 3, 0}}, 2);

	const struct vyre_work_item p7[] = {{1, 0, 5, 7}}, p99[] = {{1, 0, 5, 99}};
	r = detect((const struct vyre_work_item *[]){p7, p99}, (uint32_t[]){1, 1}, 2);
	assert_int_equal(r.total_redundant_ops, 1);

	const struct vyre_work_item in1[] = {wi(1, 1, 5)};
	r = detect((const struct vyre_work_item *[]){x, in1}, (uint32_t[]){1, 1}, 2);
	assert_int_equal(r.n_pairs, 0);
	const struct vyre_work_item out6[] = {wi(1, 0, 6)};
	r = detect((const struct vyre_work_item *[]){x, out6}, (uint32_t[]){1, 1}, 2);
	assert_int_equal(r.n_pairs, 0);

	const struct vyre_work_item late[] = {wi(99, 0, 0), wi(1, 0, 5), wi(42, 0, 0)};
	r = detect((const struct vyre_work_item *[]){x, late}, (uint32_t[]){1, 3}, 2);
	assert_pairs(&r, (const uint32_t[][3]){{0, 1, 1}}, 1);
}

static void test_cross_arm_domains_do_not_mix(void **state)
{
	const struct vyre_work_item items[] = {wi(1, 0, 5), wi(1, 0, 5), wi(1, 0, 5)};
	const uint32_t end[] = {1, 2, 3}, dom[] = {4, 9, 4};
	struct vyre_redundancy r;
	struct vyre_plan_error e;
	(void)state;

	fresh();
	assert_int_equal(vyre_cross_arm_detect(&arena, items, NULL, end, 3, dom, &r, &e), 0);
	assert_pairs(&r, (const uint32_t[][3]){{0, 2, 0}}, 1);
}

static uint32_t prune(const struct vyre_work_item *items, uint32_t n, struct vyre_work_item *out,
		      struct vyre_redundancy *r)
{
	struct vyre_plan_error e;
	uint32_t n_out = 99;

	fresh();
	assert_int_equal(vyre_dedupe_prune(&arena, items, n, out, &n_out, r, &e), 0);
	assert_int_equal(r->total_redundant_ops, r->n_pairs);
	return n_out;
}

static void assert_items(const struct vyre_work_item *got, uint32_t n_got,
			 const struct vyre_work_item *want, uint32_t n_want)
{
	assert_int_equal(n_got, n_want);
	assert_memory_equal(got, want, n_want * sizeof(*want));
}

static void test_prune_goldens(void **state)
{
	struct vyre_work_item out[16];
	struct vyre_redundancy r;
	uint32_t n;
	(void)state;

	const struct vyre_work_item drops[] = {wi(1, 0, 5), wi(2, 5, 6), wi(1, 0, 5), wi(3, 6, 7),
					       wi(2, 5, 6)};
	n = prune(drops, 5, out, &r);
	assert_items(out, n, (const struct vyre_work_item[]){wi(1, 0, 5), wi(2, 5, 6), wi(3, 6, 7)},
		     3);
	assert_pairs(&r, (const uint32_t[][3]){{0, 2, 0}, {1, 4, 0}}, 2);

	/* Planning twice from a reset arena gives the same answer in the same space. */
	const struct vyre_work_item again[] = {wi(1, 0, 5), wi(2, 5, 6), wi(1, 0, 5), wi(3, 6, 7)};
	n = prune(again, 4, out, &r);
	size_t used = arena.used;
	uint32_t n2 = prune(again, 4, out, &r);
	assert_int_equal(n, n2);
	assert_int_equal(arena.used, used);
	assert_items(out, n, (const struct vyre_work_item[]){wi(1, 0, 5), wi(2, 5, 6), wi(3, 6, 7)},
		     3);

	n = prune(NULL, 0, out, &r);
	assert_int_equal(n, 0);
	assert_int_equal(r.n_pairs, 0);

	const struct vyre_work_item all[] = {wi(1, 0, 5), wi(1, 0, 5), wi(1, 0, 5)};
	n = prune(all, 3, out, &r);
	assert_items(out, n, (const struct vyre_work_item[]){wi(1, 0, 5)}, 1);
	assert_pairs(&r, (const uint32_t[][3]){{0, 1, 0}, {0, 2, 0}}, 2);

	const struct vyre_work_item order[] = {wi(1, 0, 5), wi(2, 5, 6), wi(1, 0, 5), wi(3, 6, 7),
					       wi(4, 7, 8)};
	n = prune(order, 5, out, &r);
	assert_items(
	    out, n,
	    (const struct vyre_work_item[]){wi(1, 0, 5), wi(2, 5, 6), wi(3, 6, 7), wi(4, 7, 8)}, 4);
	assert_pairs(&r, (const uint32_t[][3]){{0, 2, 0}}, 1);

	const struct vyre_work_item single[] = {wi(1, 0, 5)};
	n = prune(single, 1, out, &r);
	assert_int_equal(n, 0);
	assert_int_equal(r.n_pairs, 0);

	const struct vyre_work_item params[] = {{1, 0, 5, 7}, {1, 0, 5, 99}};
	n = prune(params, 2, out, &r);
	assert_int_equal(n, 0);
	assert_int_equal(r.n_pairs, 0);

	const struct vyre_work_item dense[] = {wi(1, 0, 5), wi(1, 0, 6), wi(1, 0, 7)};
	assert_true(vyre_output_handles_dense_unique(dense, 3));
	const struct vyre_work_item repeated[] = {wi(1, 0, 5), wi(2, 0, 5)};
	assert_false(vyre_output_handles_dense_unique(repeated, 2));
	const struct vyre_work_item spread[] = {wi(1, 0, 5), wi(1, 0, 5000)};
	assert_false(vyre_output_handles_dense_unique(spread, 2));

	const struct vyre_work_item catches[] = {wi(1, 0, 5), wi(2, 0, 6), wi(1, 0, 5)};
	n = prune(catches, 3, out, &r);
	assert_int_equal(r.total_redundant_ops, 1);
	assert_items(out, n, (const struct vyre_work_item[]){wi(1, 0, 5), wi(2, 0, 6)}, 2);
}

/* Where the seed's prune would drop an item, docs/design.md 7.1 says it must run. */
static void test_prune_hazards(void **state)
{
	struct vyre_work_item out[16];
	struct vyre_redundancy r;
	uint32_t n;
	(void)state;

	/* The input is rewritten between the two copies. */
	const struct vyre_work_item in_written[] = {wi(VYRE_OP_COPY, 1, 2),
						    (struct vyre_work_item){VYRE_OP_FILL, 0, 1, 3},
						    wi(VYRE_OP_COPY, 1, 2)};
	n = prune(in_written, 3, out, &r);
	assert_int_equal(n, 0);
	assert_int_equal(r.n_pairs, 0);
	/* The output is rewritten between them: the second copy restores it. */
	const struct vyre_work_item out_written[] = {
	    wi(VYRE_OP_COPY, 1, 2), (struct vyre_work_item){VYRE_OP_FILL, 0, 2, 3},
	    wi(VYRE_OP_COPY, 1, 2), wi(VYRE_OP_COPY, 1, 2)};
	n = prune(out_written, 4, out, &r);
	assert_pairs(&r, (const uint32_t[][3]){{2, 3, 0}}, 1);
	assert_int_equal(n, 3);
	/* The DFA table is rewritten between two scans. */
	const struct vyre_work_item table_written[] = {
	    {VYRE_OP_DFA_SCAN, 1, 2, 9}, wi(VYRE_OP_COPY, 8, 9), {VYRE_OP_DFA_SCAN, 1, 2, 9}};
	n = prune(table_written, 3, out, &r);
	assert_int_equal(r.n_pairs, 0);
	assert_int_equal(n, 0);
	/* Reading the output or the input in between changes nothing. */
	const struct vyre_work_item reads[] = {{VYRE_OP_DFA_SCAN, 1, 2, 9},
					       wi(VYRE_OP_COPY, 2, 3),
					       wi(VYRE_OP_SUM, 9, 4),
					       {VYRE_OP_DFA_SCAN, 1, 2, 9}};
	n = prune(reads, 4, out, &r);
	assert_pairs(&r, (const uint32_t[][3]){{0, 3, 0}}, 1);
	assert_items(out, n, reads, 3);
	/* In-place accumulation is never idempotent. */
	const struct vyre_work_item in_place[] = {
	    {VYRE_OP_ADD, 1, 1, 1}, {VYRE_OP_ADD, 1, 1, 1},	 wi(VYRE_OP_SUM, 2, 2),
	    wi(VYRE_OP_SUM, 2, 2),  {VYRE_OP_DFA_SCAN, 3, 4, 4}, {VYRE_OP_DFA_SCAN, 3, 4, 4}};
	n = prune(in_place, 6, out, &r);
	assert_int_equal(r.n_pairs, 0);
	assert_int_equal(n, 0);
	/* A deduplicated item does not count as a writer: the third still matches the first. */
	const struct vyre_work_item chain[] = {wi(VYRE_OP_COPY, 1, 2), wi(VYRE_OP_COPY, 1, 2),
					       wi(VYRE_OP_COPY, 1, 2)};
	n = prune(chain, 3, out, &r);
	assert_pairs(&r, (const uint32_t[][3]){{0, 1, 0}, {0, 2, 0}}, 2);
	assert_items(out, n, chain, 1);
	/* A write to an unrelated buffer between them does not matter. */
	const struct vyre_work_item unrelated[] = {wi(VYRE_OP_COPY, 1, 2),
						   (struct vyre_work_item){VYRE_OP_FILL, 0, 7, 3},
						   wi(VYRE_OP_COPY, 1, 2)};
	n = prune(unrelated, 3, out, &r);
	assert_pairs(&r, (const uint32_t[][3]){{0, 2, 0}}, 1);
	assert_items(out, n, unrelated, 2);

	for (uint64_t nth = 1; nth <= 5; nth++) {
		struct vyre_plan_error e;
		uint32_t n_out;

		fresh();
		vyre_arena_fail_nth(&arena, nth, 0);
		assert_int_equal(vyre_dedupe_prune(&arena, chain, 3, out, &n_out, &r, &e),
				 VYRE_E_NOMEM);
		assert_message_has(&e, "reservation failed");
	}
}

/*
 * The byte ops of docs/design.md 6.1: a decoder in place (in == out) reads
 * what it wrote, so its repeat must run; a BYTEMAP or DFA_SCAN_COUNTED table
 * is a read, so a write to it between two copies breaks the match, and a
 * table that is the output makes the item read its own write.
 */
static void test_prune_byte_ops(void **state)
{
	struct vyre_work_item out[16];
	struct vyre_redundancy r;
	uint32_t n;
	(void)state;

	const struct vyre_work_item in_place[] = {
	    wi(VYRE_OP_BASE64_DECODE, 1, 1),	 wi(VYRE_OP_BASE64_DECODE, 1, 1),
	    wi(VYRE_OP_HEX_DECODE, 2, 2),	 wi(VYRE_OP_HEX_DECODE, 2, 2),
	    {VYRE_OP_BYTEMAP, 3, 3, 9},		 {VYRE_OP_BYTEMAP, 3, 3, 9},
	    {VYRE_OP_BYTEMAP, 4, 5, 5},		 {VYRE_OP_BYTEMAP, 4, 5, 5},
	    {VYRE_OP_DFA_SCAN_COUNTED, 6, 6, 8}, {VYRE_OP_DFA_SCAN_COUNTED, 6, 6, 8},
	    {VYRE_OP_DFA_SCAN_COUNTED, 7, 8, 8}, {VYRE_OP_DFA_SCAN_COUNTED, 7, 8, 8}};
	n = prune(in_place, 12, out, &r);
	assert_int_equal(r.n_pairs, 0);
	assert_int_equal(n, 0);

	/* out of place, with nothing written in between, the repeats are redundant */
	const struct vyre_work_item apart[] = {
	    wi(VYRE_OP_BASE64_DECODE, 1, 2), wi(VYRE_OP_HEX_DECODE, 3, 4),
	    {VYRE_OP_BYTEMAP, 2, 5, 9},	     wi(VYRE_OP_BASE64_DECODE, 1, 2),
	    {VYRE_OP_BYTEMAP, 2, 5, 9},	     wi(VYRE_OP_HEX_DECODE, 3, 4)};
	n = prune(apart, 6, out, &r);
	assert_pairs(&r, (const uint32_t[][3]){{0, 3, 0}, {2, 4, 0}, {1, 5, 0}}, 3);
	assert_items(out, n, apart, 3);

	/* the table rewritten between two maps and two counted scans */
	const struct vyre_work_item table_written[] = {
	    {VYRE_OP_BYTEMAP, 1, 2, 9},	  wi(VYRE_OP_COPY, 8, 9),
	    {VYRE_OP_BYTEMAP, 1, 2, 9},	  {VYRE_OP_DFA_SCAN_COUNTED, 3, 4, 7},
	    wi(VYRE_OP_HEX_DECODE, 6, 7), {VYRE_OP_DFA_SCAN_COUNTED, 3, 4, 7}};
	n = prune(table_written, 6, out, &r);
	assert_int_equal(r.n_pairs, 0);
	assert_int_equal(n, 0);

	/* a decoder's input rewritten by the decoder before it: the repeat must run */
	const struct vyre_work_item chain[] = {wi(VYRE_OP_BASE64_DECODE, 1, 2),
					       wi(VYRE_OP_HEX_DECODE, 2, 1),
					       wi(VYRE_OP_BASE64_DECODE, 1, 2)};
	n = prune(chain, 3, out, &r);
	assert_int_equal(r.n_pairs, 0);
	assert_int_equal(n, 0);
}

/* ------------------------------------------------------------ arena */

static void test_arena(void **state)
{
	struct vyre_arena a, m;
	void *p, *q;
	(void)state;

	assert_int_equal(vyre_arena_init(&a, 200), 0);
	assert_int_equal(a.bytes, 256);
	assert_int_equal(vyre_arena_reserve(&a, 3, 4, &p), 0);
	assert_int_equal((uintptr_t)p % 64, 0);
	assert_int_equal(vyre_arena_reserve(&a, 1, 1, &q), 0);
	assert_ptr_equal((uint8_t *)q, (uint8_t *)p + 64);
	assert_int_equal(vyre_arena_reserve(&a, 129, 1, &q), VYRE_E_NOMEM);
	assert_null(q);
	assert_int_equal(vyre_arena_reserve(&a, 128, 1, &q), 0);
	assert_int_equal(a.high_water, 256);
	assert_int_equal(vyre_arena_reserve(&a, SIZE_MAX / 2, 4, &q), VYRE_E_NOMEM);
	vyre_arena_reset(&a);
	assert_int_equal(a.used, 0);
	vyre_arena_fail_nth(&a, 2, 0);
	assert_int_equal(vyre_arena_reserve(&a, 1, 1, &q), 0);
	assert_int_equal(vyre_arena_reserve(&a, 1, 1, &q), VYRE_E_NOMEM);
	assert_int_equal(vyre_arena_reserve(&a, 1, 1, &q), 0);
	vyre_arena_fail_nth(&a, 1, 1);
	assert_int_equal(vyre_arena_reserve(&a, 1, 1, &q), VYRE_E_NOMEM);
	assert_int_equal(vyre_arena_reserve(&a, 1, 1, &q), VYRE_E_NOMEM);
	vyre_arena_fail_nth(&a, 0, 0);
	assert_int_equal(vyre_arena_reserve(&a, 1, 1, &q), 0);
	vyre_arena_fini(&a);

	vyre_arena_init_measure(&m);
	assert_int_equal(vyre_arena_reserve(&m, 3, 4, &p), 0);
	assert_null(p);
	assert_int_equal(vyre_arena_reserve(&m, 65, 1, &p), 0);
	assert_int_equal(m.used, 64 + 128);
	assert_int_equal(vyre_arena_round(SIZE_MAX, 2), SIZE_MAX);
	vyre_arena_fini(&m);
}

/* White box: a wrapped generation clears the stamps instead of reviving old entries. */
static void test_generation_wrap(void **state)
{
	struct id_map m;
	struct dedupe_table t;
	int added;
	(void)state;

	fresh();
	assert_int_equal(id_map_reserve(&arena, 64, &m, VYRE_PLAN_IN_BATCH, "test", NULL), 0);
	id_map_begin(&m, 64);
	assert_int_equal(id_map_get(&m, 42, &added), 0);
	assert_true(added);
	assert_int_equal(id_map_get(&m, 42, &added), 0);
	assert_false(added);
	m.gen = UINT32_MAX;
	id_map_begin(&m, 64);
	assert_int_equal(m.gen, 1);
	assert_int_equal(id_map_get(&m, 42, &added), 0);
	assert_true(added);
	/* Growing keeps every key and its id. */
	for (uint64_t key = 100; key < 163; key++)
		assert_int_equal(id_map_get(&m, key, &added), key - 99);
	assert_int_equal(id_map_get(&m, 9999, &added), VYRE_PLAN_NONE);
	for (uint64_t key = 100; key < 163; key++)
		assert_int_equal(id_map_get(&m, key, &added), key - 99);

	assert_int_equal(dedupe_table_reserve(&arena, 16, &t, VYRE_PLAN_IN_BATCH, NULL), 0);
	dedupe_table_begin(&t, 16);
	t.slots[3] = (struct dedupe_slot){.source = 7, .gen = 1};
	t.gen = UINT32_MAX;
	dedupe_table_begin(&t, 16);
	assert_int_equal(t.gen, 1);
	assert_int_equal(t.slots[3].gen, 0);
}

/* ------------------------------------------------------------ chains (docs/design.md 6.3, 7.2) */

#define CHAIN_MAX 8u

struct chain_batch {
	uint32_t n;
	struct vyre_work_item items[CHAIN_MAX];
	struct vyre_exec_item exec[CHAIN_MAX];
	uint32_t domain[CHAIN_MAX], client[CHAIN_MAX], flags[CHAIN_MAX];
};

/*
 * Append an item on 64-byte buffers (a DFA table is @param), chained to the
 * item before it when @link says so; @flags adds VYRE_PLAN_F_* markers.
 */
static void chain_add(struct chain_batch *cb, uint32_t op, uint32_t in, uint32_t out,
		      uint32_t param, int link, uint32_t flags)
{
	uint32_t k = cb->n++;

	cb->items[k] = (struct vyre_work_item){op, in, out, param};
	cb->exec[k] = (struct vyre_exec_item){.op = op,
					      .param = param,
					      .in_bytes = in ? 64 : 0,
					      .out_bytes = out ? 64 : 0,
					      .table_bytes = op == VYRE_OP_DFA_SCAN ? 64 : 0};
	cb->domain[k] = 1;
	cb->client[k] = 1;
	cb->flags[k] |= flags;
	if (link) {
		cb->flags[k - 1] |= VYRE_PLAN_F_CHAIN;
		cb->flags[k] |= VYRE_PLAN_F_CHAIN | VYRE_PLAN_F_AFTER_PREV;
	}
}

/* Append FILL(@out, @param), chained to the item before it when @link says so. */
static void chain_fill(struct chain_batch *cb, uint32_t out, uint32_t param, int link)
{
	chain_add(cb, VYRE_OP_FILL, 0, out, param, link, 0);
}

static uint64_t handoff_budget = 0;
static uint32_t handoff_writers = 0, handoff_readers = 0;
static uint32_t handoff_marks[CHAIN_MAX];

static struct vyre_plan chain_plan(const struct chain_batch *cb, uint32_t max_groups)
{
	struct vyre_plan_batch v = {cb->n,	cb->items, cb->exec, cb->domain,
				    cb->client, cb->flags, NULL};
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	struct vyre_plan plan;

	vyre_planner_config_default(&cfg);
	cfg.max_items = CHAIN_MAX;
	cfg.max_groups = max_groups;
	cfg.handoff_bytes = handoff_budget;
	cfg.handoff_writers = handoff_writers;
	cfg.handoff_readers = handoff_readers;
	assert_int_equal(vyre_planner_create(&cfg, &p, NULL), 0);
	assert_int_equal(vyre_planner_plan(p, &v, &plan, NULL), 0);
	for (uint32_t k = 0; k < plan.accepted; k++)
		handoff_marks[k] = plan.exec_flags ? plan.exec_flags[k] : 0;
	/* the plan lives in the planner's arena: keep what the checks need */
	static uint32_t order[CHAIN_MAX], ends[CHAIN_MAX], dedup[CHAIN_MAX];

	memcpy(order, plan.exec.order, plan.exec.n_order * sizeof(*order));
	memcpy(ends, plan.exec.group_end, plan.exec.n_groups * sizeof(*ends));
	memcpy(dedup, plan.dedup_from, plan.accepted * sizeof(*dedup));
	plan.exec.order = order;
	plan.exec.group_end = ends;
	plan.dedup_from = dedup;
	vyre_planner_destroy(p);
	return plan;
}

static void assert_plan_group(const struct vyre_plan *p, uint32_t g, const uint32_t *items,
			      uint32_t n)
{
	uint32_t start = g ? p->exec.group_end[g - 1] : 0;

	assert_true(g < p->exec.n_groups);
	assert_int_equal(p->exec.group_end[g] - start, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(p->exec.order[start + i], items[i]);
}

static void test_chain_goldens(void **state)
{
	struct chain_batch cb;
	struct vyre_plan p;
	(void)state;

	/* Four independent fills: one group; chained, a sequence of four groups. */
	memset(&cb, 0, sizeof(cb));
	for (uint32_t i = 0; i < 4; i++)
		chain_fill(&cb, 10 + i, i, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_int_equal(p.exec.n_groups, 1);
	assert_plan_group(&p, 0, (const uint32_t[]){0, 1, 2, 3}, 4);
	memset(&cb, 0, sizeof(cb));
	for (uint32_t i = 0; i < 4; i++)
		chain_fill(&cb, 10 + i, i, i > 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_int_equal(p.accepted, 4);
	assert_int_equal(p.exec.n_groups, 4);
	assert_int_equal(p.stats.barriers, 3);
	assert_int_equal(p.stats.dependencies, 3);
	for (uint32_t g = 0; g < 4; g++)
		assert_plan_group(&p, g, (const uint32_t[]){g}, 1);

	/* Two chains side by side: each in order, the chains beside each other. */
	memset(&cb, 0, sizeof(cb));
	chain_fill(&cb, 10, 0, 0);
	chain_fill(&cb, 11, 1, 1);
	chain_fill(&cb, 12, 2, 0);
	chain_fill(&cb, 13, 3, 1);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_int_equal(p.exec.n_groups, 2);
	assert_plan_group(&p, 0, (const uint32_t[]){0, 2}, 2);
	assert_plan_group(&p, 1, (const uint32_t[]){1, 3}, 2);

	/* Identical fills: the later ones are deduplicated... */
	memset(&cb, 0, sizeof(cb));
	for (uint32_t i = 0; i < 3; i++)
		chain_fill(&cb, 10, 7, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_int_equal(p.stats.deduped, 2);
	assert_int_equal(p.dedup_from[1], 0);
	assert_int_equal(p.dedup_from[2], 0);
	/* ...but chained ones all run, and none is a source for the item after the chain. */
	memset(&cb, 0, sizeof(cb));
	chain_fill(&cb, 10, 7, 0);
	chain_fill(&cb, 10, 7, 1);
	chain_fill(&cb, 10, 7, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_int_equal(p.stats.deduped, 0);
	assert_int_equal(p.stats.executed, 3);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(p.dedup_from[i], VYRE_PLAN_NONE);
	assert_int_equal(p.exec.n_groups, 3);

	/* A group limit that cuts a chain: the prefix ends before that chain. */
	memset(&cb, 0, sizeof(cb));
	chain_fill(&cb, 10, 0, 0);
	chain_fill(&cb, 11, 1, 0);
	chain_fill(&cb, 12, 2, 1);
	chain_fill(&cb, 13, 3, 1);
	p = chain_plan(&cb, 2);
	assert_int_equal(p.accepted, 1);
	/* When the first chain itself does not fit, the prefix ends inside it (vyred runs it). */
	memset(&cb, 0, sizeof(cb));
	chain_fill(&cb, 11, 1, 0);
	chain_fill(&cb, 12, 2, 1);
	chain_fill(&cb, 13, 3, 1);
	p = chain_plan(&cb, 2);
	assert_int_equal(p.accepted, 2);
}

static void assert_marks(const uint32_t *want, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(handoff_marks[k], want[k]);
}

/* docs/design.md 7.6: which chained writer -> reader links keep their transient on chip. */
static void test_handoff_goldens(void **state)
{
	const uint32_t T = VYRE_PLAN_F_OUT_TRANSIENT, O = VYRE_EXEC_HANDOFF_OUT,
		       I = VYRE_EXEC_HANDOFF_IN;
	struct chain_batch cb;
	struct vyre_plan p;
	(void)state;

	handoff_budget = 1u << 20;
	/* FILL a transient, SUM it: one link, its 64 bytes kept on chip */
	memset(&cb, 0, sizeof(cb));
	chain_add(&cb, VYRE_OP_FILL, 0, 10, 3, 0, T);
	chain_add(&cb, VYRE_OP_SUM, 10, 11, 0, 1, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_marks((const uint32_t[]){O, I}, 2);
	assert_int_equal(p.stats.bytes_avoided, 64);
	assert_int_equal(p.exec.n_groups, 2);
	/* not transient, not chained, or larger than the budget: none */
	cb.flags[0] &= ~T;
	p = chain_plan(&cb, CHAIN_MAX);
	assert_null(p.exec_flags);
	assert_int_equal(p.stats.bytes_avoided, 0);
	memset(&cb, 0, sizeof(cb));
	chain_add(&cb, VYRE_OP_FILL, 0, 10, 3, 0, T);
	chain_add(&cb, VYRE_OP_SUM, 10, 11, 0, 0, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_null(p.exec_flags);
	memset(&cb, 0, sizeof(cb));
	chain_add(&cb, VYRE_OP_FILL, 0, 10, 3, 0, T);
	chain_add(&cb, VYRE_OP_SUM, 10, 11, 0, 1, 0);
	handoff_budget = 32;
	p = chain_plan(&cb, CHAIN_MAX);
	assert_null(p.exec_flags);
	handoff_budget = 1u << 20;
	/* read again after the link: the heap must hold it */
	chain_add(&cb, VYRE_OP_COPY, 10, 12, 0, 0, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_null(p.exec_flags);
	/* inexact: the SUM writes word 0 only, the COPY reads all 16 words */
	memset(&cb, 0, sizeof(cb));
	chain_add(&cb, VYRE_OP_SUM, 9, 10, 0, 0, T);
	chain_add(&cb, VYRE_OP_COPY, 10, 11, 0, 1, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_null(p.exec_flags);

	/* the reader also waits for an item in the writer's group (WAR on 12): none */
	memset(&cb, 0, sizeof(cb));
	chain_add(&cb, VYRE_OP_COPY, 12, 13, 0, 0, 0);
	chain_add(&cb, VYRE_OP_FILL, 0, 10, 3, 0, T);
	chain_add(&cb, VYRE_OP_SUM, 10, 12, 0, 1, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_null(p.exec_flags);
	/* the same with no such item: marked */
	cb.items[0].input_handle = 14;
	p = chain_plan(&cb, CHAIN_MAX);
	assert_marks((const uint32_t[]){0, O, I}, 3);

	/* FILL -> COPY -> SUM over two transients: one unit of three */
	memset(&cb, 0, sizeof(cb));
	chain_add(&cb, VYRE_OP_FILL, 0, 10, 3, 0, T);
	chain_add(&cb, VYRE_OP_COPY, 10, 11, 0, 1, T);
	chain_add(&cb, VYRE_OP_SUM, 11, 12, 0, 1, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_marks((const uint32_t[]){O, O | I, I}, 3);
	assert_int_equal(p.stats.bytes_avoided, 128);

	/* a backend that keeps only decoder/map -> map/scan links (the CUDA backend's) */
	handoff_writers = VYRE_CUDA_HANDOFF_WRITERS;
	handoff_readers = VYRE_CUDA_HANDOFF_READERS;
	p = chain_plan(&cb, CHAIN_MAX);
	assert_null(p.exec_flags);
	assert_int_equal(p.stats.bytes_avoided, 0);
	/* BASE64_DECODE -> BYTEMAP -> DFA_SCAN_COUNTED: one unit of three */
	memset(&cb, 0, sizeof(cb));
	chain_add(&cb, VYRE_OP_BASE64_DECODE, 9, 10, 0, 0, T);
	chain_add(&cb, VYRE_OP_BYTEMAP, 10, 11, 20, 1, T);
	chain_add(&cb, VYRE_OP_DFA_SCAN_COUNTED, 11, 12, 21, 1, 0);
	p = chain_plan(&cb, CHAIN_MAX);
	assert_marks((const uint32_t[]){O, O | I, I}, 3);
	assert_int_equal(p.stats.bytes_avoided, 128);
	/* ... but not on to a HEX_DECODE */
	cb.items[2].op_handle = cb.exec[2].op = VYRE_OP_HEX_DECODE;
	p = chain_plan(&cb, CHAIN_MAX);
	assert_marks((const uint32_t[]){O, I, 0}, 3);
	assert_int_equal(p.stats.bytes_avoided, 64);
	handoff_writers = handoff_readers = 0;
	handoff_budget = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arena),
	    cmocka_unit_test(test_barrier_goldens),
	    cmocka_unit_test(test_barrier_order_and_errors),
	    cmocka_unit_test(test_frontier_uses_peak_barrier_group_memory),
	    cmocka_unit_test(test_frontier_amortizes_readback_with_static_output),
	    cmocka_unit_test(test_frontier_splits_independent_layers),
	    cmocka_unit_test(test_frontier_rejects_graph_and_single_wave_over_budget),
	    cmocka_unit_test(test_frontier_fails_loudly_on_wave_byte_overflow),
	    cmocka_unit_test(test_frontier_generated_1024_shapes),
	    cmocka_unit_test(test_frontier_split_clamps_oversized_waves),
	    cmocka_unit_test(test_fusion_groups_adjacent_compatible_stages),
	    cmocka_unit_test(test_fusion_splits_on_layout_host_boundary_and_budget),
	    cmocka_unit_test(test_fusion_rejects_invalid_inputs),
	    cmocka_unit_test(test_fusion_generated_4096_seeds),
	    cmocka_unit_test(test_fusion_reuses_arena_scratch),
	    cmocka_unit_test(test_fusion_reserves_fallibly),
	    cmocka_unit_test(test_cross_arm_goldens),
	    cmocka_unit_test(test_cross_arm_domains_do_not_mix),
	    cmocka_unit_test(test_prune_goldens),
	    cmocka_unit_test(test_prune_hazards),
	    cmocka_unit_test(test_prune_byte_ops),
	    cmocka_unit_test(test_generation_wrap),
	    cmocka_unit_test(test_chain_goldens),
	    cmocka_unit_test(test_handoff_goldens),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
