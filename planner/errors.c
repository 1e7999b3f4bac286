/* SPDX-License-Identifier: MIT */
/*
 * Planner error messages. Each says what went wrong with the numbers that
 * matter and ends with "Fix: ...", the seeds' convention; the texts of the
 * frontier and fusion planners are the seeds' own.
 */
#include <stdio.h>

#include "planner.h"

typedef unsigned long long ull;

static const char *field_of(const struct vyre_plan_error *e)
{
	return e->field ? e->field : "(unnamed)";
}

static int format_barrier(const struct vyre_plan_error *e, char *buf, size_t len)
{
	switch (e->kind) {
	case VYRE_PLAN_ERR_INVALID_WAVE:
		return snprintf(buf, len,
				"megakernel barrier planner received a dependency on wave %llu but "
				"only %llu wave(s) exist. Fix: emit dependencies only between "
				"waves of this plan.",
				(ull)e->index, (ull)e->count);
	case VYRE_PLAN_ERR_SELF_DEPENDENCY:
		return snprintf(buf, len,
				"megakernel barrier planner received a self dependency on wave "
				"%llu. Fix: drop self edges before barrier planning.",
				(ull)e->index);
	case VYRE_PLAN_ERR_CYCLE:
		return snprintf(buf, len,
				"megakernel barrier planner found a dependency cycle: %llu wave(s) "
				"could not be scheduled. Fix: break the cycle in the wave "
				"dependencies before barrier planning.",
				(ull)e->count);
	case VYRE_PLAN_ERR_OVERFLOW:
		return snprintf(buf, len,
				"megakernel barrier planner overflowed while computing %s. Fix: "
				"shard the wave graph before barrier planning.",
				field_of(e));
	case VYRE_PLAN_ERR_RESERVE:
		return snprintf(buf, len,
				"megakernel barrier planner could not reserve %llu %s entries: "
				"planner arena exhausted. Fix: shard the wave graph before barrier "
				"planning or raise the planner arena.",
				(ull)e->count, field_of(e));
	default:
		return -1;
	}
}

static int format_frontier(const struct vyre_plan_error *e, char *buf, size_t len)
{
	switch (e->kind) {
	case VYRE_PLAN_ERR_OVERFLOW:
		return snprintf(buf, len,
				"megakernel frontier memory planner overflowed while accumulating "
				"%s. Fix: shard the frontier wave group or split the fused phase.",
				field_of(e));
	case VYRE_PLAN_ERR_GROUP_OVER_BUDGET:
		return snprintf(buf, len,
				"megakernel frontier memory planner requires %llu bytes for %s but "
				"budget allows %llu. Fix: shard the graph/frontier waves or raise "
				"the explicit megakernel budget.",
				(ull)e->required, field_of(e), (ull)e->budget);
	case VYRE_PLAN_ERR_RESERVE:
		return snprintf(buf, len,
				"megakernel frontier memory planner could not reserve %llu %s "
				"entries: planner arena exhausted. Fix: shard the frontier waves "
				"before planning.",
				(ull)e->count, field_of(e));
	default:
		return -1;
	}
}

static int format_fusion(const struct vyre_plan_error *e, char *buf, size_t len)
{
	switch (e->kind) {
	case VYRE_PLAN_ERR_DUPLICATE_STAGE:
		return snprintf(buf, len,
				"Launch fusion received duplicate stage id %llu. Fix: emit unique "
				"stage ids before fusion planning.",
				(ull)e->index);
	case VYRE_PLAN_ERR_ZERO_BUDGET:
		return snprintf(buf, len,
				"Launch fusion received a zero byte budget. Fix: pass an explicit "
				"device-memory budget before planning fusion.");
	case VYRE_PLAN_ERR_OVERFLOW:
		return snprintf(buf, len,
				"Launch fusion overflowed while computing %s. Fix: shard adjacent "
				"stages before launch fusion planning.",
				field_of(e));
	case VYRE_PLAN_ERR_STAGE_OVER_BUDGET:
		return snprintf(buf, len,
				"Launch fusion stage %llu requires %llu bytes but budget allows "
				"%llu. Fix: shard the stage or raise the explicit fusion budget.",
				(ull)e->index, (ull)e->required, (ull)e->budget);
	case VYRE_PLAN_ERR_RESERVE:
		return snprintf(buf, len,
				"Launch fusion could not reserve %llu %s entries: planner arena "
				"exhausted. Fix: shard adjacent stages before fusion planning.",
				(ull)e->count, field_of(e));
	default:
		return -1;
	}
}

static int format_dedupe(const struct vyre_plan_error *e, char *buf, size_t len)
{
	if (e->kind != VYRE_PLAN_ERR_RESERVE)
		return -1;
	return snprintf(buf, len,
			"megakernel %s reservation failed for %llu additional entry slot(s): "
			"planner arena exhausted. Fix: shard the work batch before "
			"whole-megakernel optimization.",
			field_of(e), (ull)e->count);
}

static int format_batch(const struct vyre_plan_error *e, char *buf, size_t len)
{
	switch (e->kind) {
	case VYRE_PLAN_ERR_RESERVE:
		return snprintf(
		    buf, len,
		    "vyre planner could not reserve %llu %s entries: planner arena "
		    "exhausted. Fix: plan a shorter prefix of the batch (vyred does) or "
		    "raise the arena (vyred --arena-bytes).",
		    (ull)e->count, field_of(e));
	case VYRE_PLAN_ERR_CAPACITY:
		return snprintf(buf, len,
				"vyre planner needs %llu %s but is configured for %llu. Fix: plan "
				"a shorter prefix of the batch (vyred does) or raise the limit.",
				(ull)e->required, field_of(e), (ull)e->budget);
	case VYRE_PLAN_ERR_CONFIG:
		return snprintf(buf, len,
				"vyre planner config %s = %llu is outside %llu..%llu. Fix: pass a "
				"value in that range.",
				field_of(e), (ull)e->required, (ull)e->count, (ull)e->budget);
	case VYRE_PLAN_ERR_ARGUMENT:
		return snprintf(buf, len,
				"vyre planner was called without %s. Fix: pass every array the "
				"batch needs.",
				field_of(e));
	default:
		return -1;
	}
}

static int format_arena(const struct vyre_plan_error *e, char *buf, size_t len)
{
	if (e->kind != VYRE_PLAN_ERR_RESERVE)
		return -1;
	return snprintf(buf, len,
			"vyre planner could not allocate its %llu-byte arena. Fix: lower "
			"max_items or arena_bytes (vyred --max-batch, --arena-bytes).",
			(ull)e->count);
}

int vyre_plan_error_format(const struct vyre_plan_error *e, char *buf, size_t len)
{
	int n = -1;

	if (e->kind == VYRE_PLAN_ERR_NONE)
		return snprintf(buf, len, "no error");
	switch (e->where) {
	case VYRE_PLAN_IN_ARENA:
		n = format_arena(e, buf, len);
		break;
	case VYRE_PLAN_IN_BARRIER:
		n = format_barrier(e, buf, len);
		break;
	case VYRE_PLAN_IN_FRONTIER:
		n = format_frontier(e, buf, len);
		break;
	case VYRE_PLAN_IN_FUSION:
		n = format_fusion(e, buf, len);
		break;
	case VYRE_PLAN_IN_DEDUPE:
	case VYRE_PLAN_IN_CROSS_ARM:
		n = format_dedupe(e, buf, len);
		break;
	case VYRE_PLAN_IN_BATCH:
		n = format_batch(e, buf, len);
		break;
	}
	if (n < 0)
		n = snprintf(buf, len,
			     "vyre planner error %d in component %d (%s). Fix: report this "
			     "combination; it has no message.",
			     (int)e->kind, (int)e->where, field_of(e));
	return n;
}
