/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: SQE validation and planning, as vyred runs them.
 *
 * The input is a batch of SQEs from four clients in two domains. Each item
 * goes through vyred's resolve step (flag check, then vyre_resolve against a
 * real handle table holding live, freed and foreign handles) and the batch
 * twice through planning until every item is accepted: once through the
 * daemon's plan stage (tools/vyred/plan_stage.h), once through the planner
 * library (planner/planner.h: dedupe, dependencies, barrier layering,
 * frontier splitting, fusion) under a configuration the input picks, small
 * arenas and budgets included. Every plan must be well formed (what
 * plan_wrap.c's check demands, and more: each valid accepted item runs once
 * or is deduplicated from an executed earlier item, never a NODEDUPE one),
 * and executing it - each group's items in reverse order, which independent
 * items must tolerate - and completing deduplicated and invalid items must
 * give exactly the statuses, results and buffers of the sequential oracle.
 *
 * Input: u32 heap seed, u8 max batch, u8 x 3 planner configuration, then
 * 8-byte SQEs: op, input, output, param selectors, flags, client, u16
 * immediate.
 */
#include <stdlib.h>
#include <string.h>

#include "../../planner/planner.h"
#include "../../ring/handles.h"
#include "../../ring/resolve.h"
#include "../../tools/vyred/plan_stage.h"
#include "fuzz.h"

#define DOMAINS	   2u
#define CLIENTS	   4u
#define HEAP_BYTES 16384u
#define MAX_ITEMS  256u
#define RECORD	   8u

/* Buffer sizes per domain; the last one holds a DFA table. */
static const uint32_t buffer_bytes[] = {0, 4, 16, 64, 256, 1024, 2060};
#define N_BUFFERS   (sizeof(buffer_bytes) / sizeof(buffer_bytes[0]))
#define TABLE_INDEX (N_BUFFERS - 1)

struct world {
	struct vyre_handle_table handles;
	uint32_t handle[DOMAINS][N_BUFFERS];
	uint64_t offset[N_BUFFERS];
	uint32_t freed; /* a handle of domain 0 that was removed */
	uint8_t *initial_mem[DOMAINS];
	uint8_t *oracle_mem[DOMAINS];
	uint8_t *planned_mem[DOMAINS];
};

struct batch {
	uint32_t n;
	struct vyre_work_item items[MAX_ITEMS];
	struct vyre_exec_item exec[MAX_ITEMS];
	int32_t status[MAX_ITEMS];
	uint32_t domain[MAX_ITEMS];
	uint32_t flags[MAX_ITEMS];
	uint32_t client[MAX_ITEMS];
	struct vyre_exec_result oracle[MAX_ITEMS];
	struct vyre_exec_result planned[MAX_ITEMS];
	uint32_t dedup_of[MAX_ITEMS];
	uint32_t plan_flags[MAX_ITEMS]; /* flags plus VYRE_PLAN_F_INVALID, for the planner */
};

static uint32_t domain_id(uint32_t d)
{
	return d + 1; /* handle tags; 0 is never a domain */
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A 2-state DFA that is in its accepting state after each byte 'a'. */
static void write_table(uint8_t *t)
{
	uint32_t words[3] = {2, 0, 2};

	memcpy(t, words, sizeof(words));
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t c = 0; c < 256; c++) {
			uint32_t next = c == 'a';

			memcpy(t + 12 + 4 * (256 * s + c), &next, 4);
		}
}

static int world_init(struct world *w, uint64_t seed)
{
	uint64_t off = 0;

	memset(w, 0, sizeof(*w));
	if (vyre_handles_init(&w->handles, 64) != 0)
		return -1;
	for (uint32_t b = 0; b < N_BUFFERS; b++) {
		w->offset[b] = off;
		off += (buffer_bytes[b] + 255u) & ~255u;
	}
	for (uint32_t d = 0; d < DOMAINS; d++) {
		w->initial_mem[d] = malloc(HEAP_BYTES);
		w->oracle_mem[d] = malloc(HEAP_BYTES);
		w->planned_mem[d] = malloc(HEAP_BYTES);
		if (!w->initial_mem[d] || !w->oracle_mem[d] || !w->planned_mem[d])
			return -1;
		for (uint32_t i = 0; i < HEAP_BYTES; i += 8) {
			uint64_t v = splitmix(&seed);

			memcpy(w->oracle_mem[d] + i, &v, 8);
		}
		write_table(w->oracle_mem[d] + w->offset[TABLE_INDEX]);
		memcpy(w->planned_mem[d], w->oracle_mem[d], HEAP_BYTES);
		memcpy(w->initial_mem[d], w->oracle_mem[d], HEAP_BYTES);
		for (uint32_t b = 0; b < N_BUFFERS; b++) {
			struct vyre_buffer_ref ref = {w->offset[b], buffer_bytes[b], domain_id(d),
						      0, 0};

			if (vyre_handles_add(&w->handles, &ref, &w->handle[d][b]) != 0)
				return -1;
		}
	}
	struct vyre_buffer_ref gone = {0, 64, domain_id(0), 0, 0}, out;

	if (vyre_handles_add(&w->handles, &gone, &w->freed) != 0 ||
	    vyre_handles_remove(&w->handles, w->freed, domain_id(0), &out) != 0)
		return -1;
	return 0;
}

static void world_fini(struct world *w)
{
	for (uint32_t d = 0; d < DOMAINS; d++) {
		free(w->initial_mem[d]);
		free(w->oracle_mem[d]);
		free(w->planned_mem[d]);
	}
	vyre_handles_fini(&w->handles);
}

/* A handle operand: 0, one of the domain's buffers, a foreign, freed or made-up one. */
static uint32_t pick_handle(const struct world *w, uint32_t dom, uint8_t sel)
{
	uint32_t k = sel % 16u;

	if (k == 0)
		return 0;
	if (k <= 9)
		return w->handle[dom][(k - 1 + (sel >> 4)) % N_BUFFERS];
	if (k <= 12)
		return w->handle[1 - dom][(k + (sel >> 4)) % N_BUFFERS];
	if (k == 13)
		return w->freed;
	if (k == 14)
		return w->handle[dom][TABLE_INDEX];
	return 0xdead0000u | sel;
}

/* vyred's resolve stage (tools/vyred/resolve_stage.c) for one item. */
static int32_t resolve(const struct world *w, const struct batch *b, uint32_t i,
		       struct vyre_exec_item *out)
{
	memset(out, 0, sizeof(*out));
	if (b->flags[i] & ~VYRE_SQE_VALID_FLAGS)
		return VYRE_E_INVAL;
	return vyre_resolve(&w->handles, domain_id(b->domain[i]), b->domain[i], &b->items[i], out);
}

static void build_batch(const struct world *w, const uint8_t *rec, uint32_t n, struct batch *b)
{
	b->n = 0;
	/* vyred drains client by client: one client's items are contiguous, in order */
	for (uint32_t c = 0; c < CLIENTS; c++)
		for (uint32_t r = 0; r < n; r++) {
			const uint8_t *p = rec + RECORD * r;

			if (p[5] % CLIENTS != c)
				continue;
			uint32_t i = b->n++, dom = c % DOMAINS;
			struct vyre_work_item *it = &b->items[i];

			it->op_handle = p[0] % 10u; /* 9: an unknown op */
			it->input_handle = pick_handle(w, dom, p[1]);
			it->output_handle = pick_handle(w, dom, p[2]);
			it->param = it->op_handle == VYRE_OP_DFA_SCAN
					? pick_handle(w, dom, p[3])
					: (uint32_t)fuzz_le16(p + 6) | (uint32_t)p[3] << 16;
			b->flags[i] = p[4] & 0x80u ? p[4] : p[4] & VYRE_SQE_VALID_FLAGS;
			b->client[i] = c;
			b->domain[i] = dom;
			b->status[i] = resolve(w, b, i, &b->exec[i]);
		}
}

static void heaps_of(uint8_t *const mem[DOMAINS], struct vyre_heap_view *views)
{
	for (uint32_t d = 0; d < DOMAINS; d++)
		views[d] = (struct vyre_heap_view){mem[d], HEAP_BYTES};
}

static void run_oracle(struct world *w, struct batch *b)
{
	struct vyre_heap_view views[DOMAINS];

	heaps_of(w->oracle_mem, views);
	for (uint32_t i = 0; i < b->n; i++) {
		b->oracle[i].status = b->status[i];
		b->oracle[i].result = 0;
		if (b->status[i] == 0)
			b->oracle[i].status =
			    vyre_exec_one(views, &b->exec[i], &b->oracle[i].result);
	}
}

/* Structure of one plan over items [first, first + accepted). */
static void check_plan(const struct batch *b, uint32_t first, const struct vyre_exec_plan *p,
		       uint32_t accepted, const uint32_t *dedup, uint32_t n)
{
	uint8_t seen[MAX_ITEMS] = {0};

	FUZZ_CHECK(accepted >= 1 && accepted <= n);
	FUZZ_CHECK(p->n_order <= accepted);
	for (uint32_t k = 0; k < p->n_order; k++) {
		uint32_t i = p->order[k];

		FUZZ_CHECK(i < accepted);
		FUZZ_CHECK(b->status[first + i] == 0);
		FUZZ_CHECK(!seen[i]);
		seen[i] = 1;
	}
	for (uint32_t g = 0; g < p->n_groups; g++)
		FUZZ_CHECK(p->group_end[g] <= p->n_order &&
			   (g == 0 || p->group_end[g - 1] <= p->group_end[g]));
	FUZZ_CHECK(p->n_groups ? p->group_end[p->n_groups - 1] == p->n_order : p->n_order == 0);
	for (uint32_t l = 0; l < p->n_launches; l++)
		FUZZ_CHECK(p->launch_end[l] <= p->n_groups &&
			   (l == 0 || p->launch_end[l - 1] <= p->launch_end[l]));
	FUZZ_CHECK(p->n_launches ? p->launch_end[p->n_launches - 1] == p->n_groups
				 : p->n_groups == 0);
	for (uint32_t i = 0; i < accepted; i++) {
		uint32_t j = dedup[i];

		if (j == UINT32_MAX) {
			FUZZ_CHECK(b->status[first + i] != 0 || seen[i]);
			continue;
		}
		FUZZ_CHECK(j < i && seen[j] && !seen[i]);
		FUZZ_CHECK(b->status[first + i] == 0);
		FUZZ_CHECK(!(b->flags[first + i] & VYRE_SQE_NODEDUPE));
	}
}

/* Executes a plan on the planned heaps: groups in order, each group's items in reverse. */
static void execute(struct world *w, struct batch *b, uint32_t first,
		    const struct vyre_exec_plan *p)
{
	struct vyre_heap_view views[DOMAINS];
	uint32_t start = 0;

	heaps_of(w->planned_mem, views);
	for (uint32_t g = 0; g < p->n_groups; g++) {
		for (uint32_t k = p->group_end[g]; k > start; k--) {
			uint32_t i = first + p->order[k - 1];

			b->planned[i].status =
			    vyre_exec_one(views, &b->exec[i], &b->planned[i].result);
		}
		start = p->group_end[g];
	}
}

/* vyred's plan stage (tools/vyred/plan_stage.h), with plan_wrap.c's completion. */
static int run_stage(struct world *w, struct batch *b, uint32_t max_items)
{
	struct vyre_plan_stage_config cfg = {.max_items = max_items, .max_domains = DOMAINS};
	struct vyre_plan_stage *ps;
	uint32_t done = 0;

	if (vyre_plan_stage_create(&cfg, &ps) != 0)
		return -1;
	while (done < b->n) {
		uint32_t n = b->n - done < max_items ? b->n - done : max_items, deduped = 0;
		struct vyre_plan_input in = {
		    .n = n,
		    .items = b->items + done,
		    .exec = b->exec + done,
		    .status = b->status + done,
		    .domain = b->domain + done,
		    .flags = b->flags + done,
		    .client = b->client + done,
		};
		struct vyre_plan_output out = {.dedup_of = b->dedup_of + done};

		FUZZ_CHECK(vyre_plan_stage_run(ps, &in, &out) == 0);
		check_plan(b, done, &out.plan, out.n_accepted, out.dedup_of, n);
		execute(w, b, done, &out.plan);
		for (uint32_t i = done; i < done + out.n_accepted; i++) {
			uint32_t j = out.dedup_of[i - done];

			if (b->status[i] != 0)
				b->planned[i] = (struct vyre_exec_result){.status = b->status[i]};
			else if (j != VYRE_PLAN_NO_DEDUPE)
				b->planned[i] = b->planned[done + j];
			deduped += j != VYRE_PLAN_NO_DEDUPE;
		}
		FUZZ_CHECK(deduped == out.n_deduped);
		done += out.n_accepted;
	}
	vyre_plan_stage_destroy(ps);
	return 0;
}

/* The planner library (planner/planner.h) with a configuration from the input header. */
static int run_planner(struct world *w, struct batch *b, const uint8_t *hdr)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	struct vyre_plan_error err;
	uint32_t done = 0;

	vyre_planner_config_default(&cfg);
	cfg.max_items = 1 + hdr[4] % 64u;
	cfg.max_clients = 1 + hdr[5] % CLIENTS;
	cfg.max_groups = 1 + hdr[6] % 16u;
	cfg.max_stages = 1 + hdr[7] % 32u;
	cfg.budget_bytes = hdr[5] & 0x80 ? 4096u + 512u * (hdr[6] >> 4) : cfg.budget_bytes;
	cfg.resident_bytes = hdr[7] & 0x80 ? 1024 : 0;
	cfg.cross_arm_report = (hdr[6] & 0x08) != 0;
	if (vyre_planner_create(&cfg, &p, &err) != 0)
		return -1;
	for (uint32_t i = 0; i < b->n; i++)
		b->plan_flags[i] = b->flags[i] | (b->status[i] ? VYRE_PLAN_F_INVALID : 0);
	while (done < b->n) {
		struct vyre_plan_batch pb = {
		    .n = b->n - done,
		    .items = b->items + done,
		    .exec = b->exec + done,
		    .domain = b->domain + done,
		    .client = b->client + done,
		    .flags = b->plan_flags + done,
		};
		struct vyre_plan plan;

		FUZZ_CHECK(vyre_planner_plan(p, &pb, &plan, &err) == 0);
		check_plan(b, done, &plan.exec, plan.accepted, plan.dedup_from, pb.n);
		execute(w, b, done, &plan.exec);
		vyre_plan_complete(&plan, &pb, b->planned + done);
		done += plan.accepted;
	}
	vyre_planner_destroy(p);
	return 0;
}

static void compare(const struct world *w, const struct batch *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		FUZZ_CHECK(b->planned[i].status == b->oracle[i].status);
		FUZZ_CHECK(b->planned[i].result == b->oracle[i].result);
	}
	for (uint32_t d = 0; d < DOMAINS; d++)
		FUZZ_CHECK(memcmp(w->oracle_mem[d], w->planned_mem[d], HEAP_BYTES) == 0);
}

static void reset_planned(struct world *w, struct batch *b)
{
	for (uint32_t d = 0; d < DOMAINS; d++)
		memcpy(w->planned_mem[d], w->initial_mem[d], HEAP_BYTES);
	for (uint32_t i = 0; i < b->n; i++)
		b->planned[i] = (struct vyre_exec_result){.status = 1, .result = 0xbad};
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	static struct batch b;
	struct world w;

	if (size < 8)
		return 0;
	uint32_t n = (uint32_t)((size - 8) / RECORD);

	if (n > MAX_ITEMS)
		n = MAX_ITEMS;
	if (world_init(&w, fuzz_le32(data)) != 0) {
		world_fini(&w);
		return 0;
	}
	build_batch(&w, data + 8, n, &b);
	run_oracle(&w, &b);
	reset_planned(&w, &b);
	if (run_stage(&w, &b, 1 + data[4] % 64u) == 0)
		compare(&w, &b);
	reset_planned(&w, &b);
	if (run_planner(&w, &b, data) == 0)
		compare(&w, &b);
	world_fini(&w);
	return 0;
}
