/* SPDX-License-Identifier: MIT */
/*
 * tests/test_planner_world.h - a stand-in for vyred's data for planner tests:
 * two domains with heaps, buffers, DFA tables and a transient buffer, seeded
 * random batches with heavy hazards and chains, the sequential oracle with
 * the chain rules (docs/design.md 6.3), and the daemon's plan/execute/replan
 * loop with every plan checked against the planner's promises.
 */
#ifndef VYRE_TEST_PLANNER_WORLD_H
#define VYRE_TEST_PLANNER_WORLD_H

#include <stdint.h>

#include "../planner/planner.h"
#include "test_rand.h"

#define WORLD_DOMAINS	  2u
#define WORLD_MAX_BUFFERS 16u
#define WORLD_MAX_ITEMS	  65536u

struct world_buffer {
	uint64_t off;
	uint32_t bytes;
};

struct world {
	uint32_t domain_id[WORLD_DOMAINS];
	uint8_t *heap[WORLD_DOMAINS];	/* the pristine contents */
	uint8_t *oracle[WORLD_DOMAINS]; /* what the oracle made of them */
	uint8_t *run[WORLD_DOMAINS];	/* what a planned run made of them */
	uint64_t heap_bytes;
	uint32_t n_plain;   /* plain buffers: handles 1..n_plain, some holding counted bytes */
	uint32_t n_buffers; /* plus two DFA tables, a spare table and a BYTEMAP table */
	uint32_t transient; /* handle n_buffers + 1: a VYRE_BUF_TRANSIENT buffer */
	/* then DFA_REPORT's (docs/design.md 6.8): a table with a report section, streams, a report
	 */
	uint32_t report_table, stream[2], report_out;
	struct world_buffer buf[WORLD_DOMAINS][WORLD_MAX_BUFFERS + 1];
};

/* How hard a generated batch leans on the hazards. */
struct batch_mix {
	uint32_t dup_pct;      /* repeats an earlier item */
	uint32_t in_place_pct; /* in == out */
	uint32_t fence_pct;
	uint32_t nodedupe_pct;
	uint32_t invalid_pct;
	uint32_t rewrite_pct;	/* rewrites a DFA table */
	uint32_t bytes_pct;	/* a byte op (docs/design.md 6.1) */
	uint32_t bytes_run_pct; /* starts a run of three items: decode -> map -> counted scan */
	uint32_t clients;	/* per domain */
	uint32_t chain_pct;	/* continues the chain of the item before it */
	uint32_t transient_pct; /* writes or reads the transient buffer */
	uint32_t table_pct;	/* scans or maps through a DFA table or the byte map */
	uint32_t range_pct;	/* names byte ranges of its buffers (VYRE_SQE_RANGE) */
	uint32_t report_pct; /* a DFA_REPORT item, often on a stream, or a stream reset or read */
};

struct batch {
	uint32_t n;
	struct vyre_work_item *items;
	struct vyre_exec_item *exec;
	uint32_t *domain;
	uint32_t *client;
	uint32_t *flags;
	uint32_t *aux;			  /* a DFA_REPORT's stream handle, or 0 */
	struct vyre_exec_result *results; /* planned */
	struct vyre_exec_result *expect;  /* the oracle's */
};

extern const struct batch_mix mix_heavy;
extern const struct batch_mix mix_light;
extern const struct batch_mix mix_chains;
extern const struct batch_mix mix_tables;

/* A world whose layout and contents follow from @seed. */
void world_init(struct world *w, uint64_t seed);
void world_fini(struct world *w);
int batch_alloc(struct batch *b, uint32_t max_items);
void batch_free(struct batch *b);
/* @n items following @mix, resolved and marked as vyred would. */
void batch_generate(struct batch *b, const struct world *w, uint64_t seed, uint32_t n,
		    const struct batch_mix *mix);

/* The oracle: every item in order on fresh copies of the heaps, into b->expect. */
void world_run_oracle(struct world *w, struct batch *b);

/* Statistics of one planned run, summed over its plans. */
struct planned_run {
	uint32_t plans;
	uint32_t deduped;
	uint32_t groups;
	uint32_t launches;
	uint32_t retries;
	uint32_t shrunk;   /* plans that accepted less than offered */
	uint32_t parallel; /* groups of two items or more */
	uint32_t handoffs; /* links kept on chip (VYRE_EXEC_HANDOFF_OUT marks) */
	uint32_t serial;   /* first chains too long for the planner, run one by one */
	uint32_t shared;   /* groups within the budget only by counting shared operands once */
};

/*
 * The daemon's loop on fresh copies of the heaps: plan, check the plan,
 * execute it on @backend, complete deduplicated and invalid items, replan
 * what was left. Each group must touch no more bytes (each distinct range
 * once) than the plan's peak group bytes and, unless it holds an item
 * larger than the budget, than @group_budget (the planner's budget_bytes -
 * resident_bytes; 0: not checked). Returns 0, or -1 after printing what
 * broke (prefixed by @what).
 */
int world_run_planned(struct world *w, struct batch *b, struct vyre_planner *p,
		      uint64_t group_budget, const struct vyre_backend_ops *ops,
		      struct vyre_backend *backend, struct planned_run *stats, const char *what);

/* Compare the planned run with the oracle's (not the transient's bytes); prints the first
 * difference. */
int world_compare(const struct world *w, const struct batch *b, const char *what);

/* VYRE_TEST_SCALE (default 1): multiplies iteration counts. */
uint32_t test_scale(void);

#endif /* VYRE_TEST_PLANNER_WORLD_H */
