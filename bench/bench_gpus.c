/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_gpus.c - suite "gpus": one vyred driving two GPUs against one
 * driving one (issue 12; docs/design.md 8.8 and 11), both in the same run:
 * `vyred --gpus A` and `vyred --gpus A,B`, A and B the first two usable
 * devices the CUDA driver counts. Against each, one after the other:
 *
 *   trivial  producers in 4 named domains ("gpus0".."gpus3", two each;
 *            --quick: one) each keep two batches of FILLs of one word in
 *            flight, every item to its own buffer, batches of 65536
 *            (--quick: 4096), vyred's --max-batch its default: items/s
 *   closed   the peers suite's closed loop (bench_peers_measure.h), one ADD over 16
 *            words at a time, 16 and 32 producers (--quick: 4 and 8),
 *            producer i in domain "gpus<i % 4>": items/s, p50, p99, p999
 *   trivial 1dom  (the one-GPU side) the trivial producers all in one domain:
 *            what one domain alone gets, and its ratio to the four domains
 *
 * Each also has a row "vyred cpu": the ns of CPU that vyred (supervisor and
 * GPU workers together) spent an item over the window (harness_cpu.h). Then ratio
 * rows "2gpu:1gpu" (items/s, and p50 for the closed loop). On a
 * host of four or more GPUs also `vyred --gpus A,B,C,D` ("4gpu", 8 domains:
 * 2 a GPU as with two, the same trivial producers and closed-loop
 * producers shared among them) and rows "4gpu:1gpu".
 *
 * With one usable GPU the second vyred is `--gpus A,A` (two GPUs of one
 * device, design.md 8.8), its rows "2lanes", and the suite says that the
 * two-GPU rows were not made. With --backend cpu, or no GPU at all, both
 * vyreds run on the CPU backend (`--gpus 0` and `--gpus 0,1`: CPU backend
 * instances labelled as GPUs), a smoke test of the same code. A vyred whose
 * --help does not list --gpus is older than the multi-GPU core: the suite
 * says so and skips.
 *
 * Unless --loops is given the vyreds get --loops 2: a domain lives in one
 * loop and a loop has a fixed share of its GPU's grid (design.md 8.7), so
 * with 4 domains over 2 GPUs any more loops than 2 a GPU would sit idle,
 * their share of the GPU with them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "bench_gpus_count.h"
#include "bench_peers_measure.h"
#include "harness_cpu.h"
#include "harness_vyred.h"

#define SUITE	      "gpus"
#define DOMAINS	      4u
#define DOMAIN_PREFIX "gpus"
#define DEFAULT_LOOPS "2"
#define HEAP_ALIGN    256u  /* vyred's heap gives every buffer 256 bytes at least (ring/heap.h) */
#define CHUNK	      1024u /* items per vyre_submit_batch, CQEs per vyre_wait */
#define WAIT_NS	      (5ll * 1000000000ll)
#define MAX_BUFFERS   ((1u << 20) - 1) /* vyred's --max-buffers limit */

static const unsigned closed_procs[] = {16, 32};
static const unsigned quick_procs[] = {4, 8};
#define N_CLOSED (sizeof(closed_procs) / sizeof(closed_procs[0]))

/* ---- the trivial workload --------------------------------------------------- */

struct trivial {
	uint32_t batch;	     /* items a batch, and buffers a producer */
	uint64_t heap_bytes; /* a domain's heap: every producer's buffers */
};

/* What buffer @j holds after items 0 .. @items-1, item s a FILL of s into buffer s % @n. */
static uint32_t last_fill(uint64_t items, uint32_t n, uint32_t j)
{
	if (j >= items)
		return 0;
	return (uint32_t)(j + (uint64_t)n * ((items - 1 - j) / n));
}

/* Reaps up to CHUNK CQEs (waiting for the first), checks and counts them; the count or -1. */
static int reap(struct vyre_peers_producer *p, struct vyre_client *c)
{
	struct vyre_cqe cqes[CHUNK];
	const int n = vyre_wait(c, cqes, CHUNK, WAIT_NS);

	if (n < 0) {
		vyre_peers_fail(p, "vyre_wait: %s", vyre_strerror(n));
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (cqes[i].status != 0 || (cqes[i].flags & VYRE_CQE_DEDUPED)) {
			vyre_peers_fail(p, "item %llu: %s", (unsigned long long)cqes[i].user_data,
					cqes[i].status ? vyre_strerror(cqes[i].status)
						       : "deduped, not run");
			return -1;
		}
	vyre_peers_done(p, (uint64_t)n);
	return n;
}

/*
 * Item s is a FILL of s into buffer s % batch: any batch consecutive items
 * of one producer write distinct buffers, so no batch of at most --max-batch
 * items has a hazard, and buffer j ends holding the last s that wrote it.
 */
static int trivial_loop(struct vyre_peers_producer *p, struct vyre_client *c, const uint32_t *bufs,
			uint32_t n, uint64_t *submitted)
{
	struct vyre_work_item its[CHUNK];
	uint64_t uds[CHUNK], seq = 0, done = 0;

	while (!vyre_peers_stopping(p)) {
		while (seq - done < 2ull * n) {
			const uint64_t room = 2ull * n - (seq - done);
			const uint32_t k = room < CHUNK ? (uint32_t)room : CHUNK;

			for (uint32_t i = 0; i < k; i++) {
				its[i] = (struct vyre_work_item){
				    VYRE_OP_FILL, 0, bufs[(seq + i) % n], (uint32_t)(seq + i)};
				uds[i] = seq + i;
			}
			const int rc = vyre_submit_batch(c, its, uds, k);

			if (rc < 0)
				return vyre_peers_fail(p, "vyre_submit_batch: %s",
						       vyre_strerror(rc));
			seq += (uint64_t)rc;
			if ((uint32_t)rc < k)
				break;
		}
		const int got = reap(p, c);

		if (got < 0)
			return 1;
		done += (uint64_t)got;
	}
	while (done < seq) {
		const int got = reap(p, c);

		if (got < 0)
			return 1;
		done += (uint64_t)got;
	}
	*submitted = seq;
	return 0;
}

static int trivial_run(struct vyre_peers_producer *p, const void *arg)
{
	const struct trivial *t = arg;
	const uint32_t n = t->batch;
	const struct vyre_connect_opts o = {.socket_path = vyre_peers_socket(p),
					    .domain = vyre_peers_domain(p),
					    .sq_entries = 2 * n,
					    .cq_entries = 2 * n,
					    .heap_bytes = t->heap_bytes};
	uint32_t *bufs = calloc(n, sizeof(*bufs));
	struct vyre_client *c = NULL;
	uint64_t items = 0;
	int rc = bufs ? vyre_connect(&o, &c) : VYRE_E_NOMEM;

	if (rc) {
		free(bufs);
		vyre_peers_fail(p, "vyre_connect: %s", vyre_strerror(rc));
		vyre_peers_go(p);
		return 1;
	}
	for (uint32_t j = 0; j < n && !rc; j++)
		rc = vyre_buffer_alloc(c, 4, 0, &bufs[j]);
	if (rc)
		vyre_peers_fail(p, "vyre_buffer_alloc: %s", vyre_strerror(rc));
	if (vyre_peers_go(p) || rc) {
		vyre_close(c);
		free(bufs);
		return rc != 0;
	}
	rc = trivial_loop(p, c, bufs, n, &items);
	for (uint32_t j = 0; j < n && !rc; j++) {
		const uint32_t *w = vyre_buffer_ptr(c, bufs[j], NULL);

		if (!w || *w != last_fill(items, n, j))
			rc = vyre_peers_fail(p, "buffer %u holds %u, not %u after %llu items", j,
					     w ? *w : 0, last_fill(items, n, j),
					     (unsigned long long)items);
	}
	vyre_close(c);
	free(bufs);
	return rc;
}

/* ---- one vyred and what runs against it ------------------------------------- */

struct plan {
	const char *bin;
	const char *backend; /* "cpu" or "cuda" */
	const char *system;  /* "vyre-cpu" or "vyre" */
	uint32_t batch;
	unsigned per_domain; /* trivial producers a domain */
	const unsigned *procs;
	struct vyre_bench_vyred_opts va;
};

struct side {
	const char *label; /* "1gpu", "2gpu", "2lanes", "4gpu" */
	char gpus[32];	   /* --gpus */
	unsigned spread;   /* domains = DOMAINS x spread, the trivial producers staying as many */
	int one_domain;	   /* also the trivial producers all in one domain (issue 23) */
	int trivial_ran, closed_ran[N_CLOSED];
	struct vyre_peers_figures trivial, closed[N_CLOSED];
};

static int start(struct vyre_bench_vyred *d, const struct plan *pl, const struct side *s)
{
	const char *args[12 + VYRE_BENCH_VYRED_OPTS_ARGS];
	char buffers[16];
	/* twice: the one-domain row's loop may still hold a closing domain's buffers */
	const uint64_t need = 2ull * DOMAINS * pl->per_domain * (pl->batch + 1u) + 1024u;
	/* 4gpu: 2 domains a GPU, as 2gpu has */
	unsigned n = 0;

	snprintf(buffers, sizeof(buffers), "%u", need < MAX_BUFFERS ? (unsigned)need : MAX_BUFFERS);
	args[n++] = "--backend";
	args[n++] = pl->backend;
	args[n++] = "--gpus";
	args[n++] = s->gpus;
	/*
	 * vyred's own --max-batch, as a user runs it: the producers' batches of
	 * 65536 are drained in batches of its default (4096), which the H100
	 * measured faster than --max-batch 65536 (bench/RESULTS.md, issue 23)
	 */
	/* a loop may hold every trivial producer's buffers */
	args[n++] = "--max-buffers";
	args[n++] = buffers;
	if (!pl->va.loops) {
		args[n++] = "--loops";
		args[n++] = DEFAULT_LOOPS;
	}
	n = vyre_bench_vyred_opts_args(&pl->va, args, n);
	args[n] = NULL;
	fprintf(stderr, "gpus: %s: vyred --backend %s --gpus %s --max-buffers %s%s\n", s->label,
		pl->backend, s->gpus, buffers, pl->va.loops ? "" : " --loops " DEFAULT_LOOPS);
	return vyre_bench_vyred_start(d, SUITE, pl->bin, args);
}

/* vyred's account of the run: batches, items and each loop's share */
static const char *const summary_lines[] = {"stopped after", ": loop ",		  "GPU ",
					    "CPU: user",     "mean ns per batch", NULL};

/*
 * VYRE_BENCH_GPUS_ONLY, for short runs on a GPU lease: "1gpu" runs the
 * one-GPU side alone, "trivial" its trivial rows alone.
 */
static const char *only_mode(void)
{
	const char *only = getenv("VYRE_BENCH_GPUS_ONLY");

	return only ? only : "";
}

static int only_one_side(void)
{
	return strcmp(only_mode(), "1gpu") == 0 || strcmp(only_mode(), "trivial") == 0;
}

/*
 * The same trivial producers all in one domain, so in one of vyred's loops:
 * what one domain alone gets of the GPU (issue 23 asks for >= 80 % of the
 * four domains' figure), and the ratio row "1dom:4dom".
 */
static int one_domain_row(struct vyre_bench_ctx *ctx, const struct plan *pl, const struct side *s,
			  const struct vyre_bench_vyred *d, const char *system, unsigned producers)
{
	const struct trivial t = {pl->batch,
				  (uint64_t)producers * pl->batch * HEAP_ALIGN + (1u << 20)};
	struct vyre_peers_figures f;
	char name[128];

	snprintf(name, sizeof(name), "trivial %u %s 1dom", pl->batch, system);
	const struct vyre_peers_load one = {SUITE, name,	d->sock, DOMAIN_PREFIX "1dom",
					    1,	   trivial_run, &t,	 d->pid};

	if (vyre_peers_measure(ctx, &one, producers, &f) != 0)
		return -1;
	vyre_bench_report(ctx, SUITE, name, "items/s", f.items, "items/s");
	vyre_bench_report_vyred_cpu(ctx, SUITE, name, f.vyred_cpu);
	if (s->trivial.items > 0) {
		snprintf(name, sizeof(name), "trivial %u %s 1dom:%udom", pl->batch, system,
			 DOMAINS * (s->spread ? s->spread : 1));
		vyre_bench_report(ctx, SUITE, name, "items/s", f.items / s->trivial.items, "x");
	}
	return 0;
}

static int run_side(struct vyre_bench_ctx *ctx, const struct plan *pl, struct side *s)
{
	struct vyre_bench_vyred d = {0};
	const unsigned spread = s->spread ? s->spread : 1;
	const unsigned domains = DOMAINS * spread;
	/* as many trivial producers on every side: the domains share them */
	const unsigned per_domain = pl->per_domain > spread ? pl->per_domain / spread : 1;
	const struct trivial t = {pl->batch,
				  (uint64_t)per_domain * pl->batch * HEAP_ALIGN + (1u << 20)};
	char system[64], name[128];
	int rc = 0;

	if (start(&d, pl, s))
		return -1;
	snprintf(system, sizeof(system), "%s %s%s", pl->system, s->label, pl->va.tag);
	snprintf(name, sizeof(name), "trivial %u %s", pl->batch, system);
	const struct vyre_peers_load trivial = {SUITE,	 name,	      d.sock, DOMAIN_PREFIX,
						domains, trivial_run, &t,     d.pid};

	if (vyre_peers_measure(ctx, &trivial, domains * per_domain, &s->trivial) == 0) {
		s->trivial_ran = 1;
		vyre_bench_report(ctx, SUITE, name, "items/s", s->trivial.items, "items/s");
		vyre_bench_report_vyred_cpu(ctx, SUITE, name, s->trivial.vyred_cpu);
	} else {
		rc = -1;
	}
	if (s->one_domain && s->trivial_ran)
		rc |= one_domain_row(ctx, pl, s, &d, system, domains * per_domain);
	for (unsigned i = 0; i < N_CLOSED && strcmp(only_mode(), "trivial") != 0; i++) {
		snprintf(name, sizeof(name), "closed %s %up", system, pl->procs[i]);
		const struct vyre_peers_load closed = {SUITE,	name, d.sock, DOMAIN_PREFIX,
						       domains, NULL, NULL,   d.pid};

		if (vyre_peers_measure(ctx, &closed, pl->procs[i], &s->closed[i])) {
			rc = -1;
			continue;
		}
		s->closed_ran[i] = 1;
		vyre_peers_report(ctx, SUITE, name, &s->closed[i]);
	}
	vyre_bench_vyred_stop(&d, SUITE, summary_lines);
	return rc;
}

/* Rows "... B:A": @b's items/s (and closed-loop p50) over @a's, where both ran. */
static void ratios(struct vyre_bench_ctx *ctx, const struct plan *pl, const struct side *a,
		   const struct side *b)
{
	char name[128];

	if (a->trivial_ran && b->trivial_ran && a->trivial.items > 0) {
		snprintf(name, sizeof(name), "trivial %u %s:%s%s", pl->batch, b->label, a->label,
			 pl->va.tag);
		vyre_bench_report(ctx, SUITE, name, "items/s", b->trivial.items / a->trivial.items,
				  "x");
	}
	for (unsigned i = 0; i < N_CLOSED; i++) {
		const struct vyre_peers_figures *fa = &a->closed[i], *fb = &b->closed[i];

		if (!a->closed_ran[i] || !b->closed_ran[i])
			continue;
		snprintf(name, sizeof(name), "closed %s:%s%s %up", b->label, a->label, pl->va.tag,
			 pl->procs[i]);
		vyre_peers_report_ratio(ctx, SUITE, name, fb, fa);
	}
}

static int gpus_suite(struct vyre_bench_ctx *ctx)
{
	char bin[PATH_MAX], why[320];
	int ordinals[4] = {0, 1, 2, 3}, usable = 0;
	struct plan pl = {.bin = bin, .backend = "cpu", .system = "vyre-cpu"};
	struct side one = {.label = "1gpu", .one_domain = 1}, two = {.label = "2gpu"},
		    four = {.label = "4gpu", .spread = 2};

	if (!vyre_bench_find_vyred(bin, sizeof(bin))) {
		fprintf(stderr, "gpus: skipped: no vyred next to vyre-bench\n");
		return 0;
	}
	if (!vyre_bench_vyred_has_flag(bin, "--gpus")) {
		fprintf(
		    stderr,
		    "gpus: skipped: %s has no --gpus (it predates one vyred driving every GPU)\n",
		    bin);
		return 0;
	}
	vyre_bench_vyred_opts(ctx, SUITE, bin, &pl.va);
	pl.batch = ctx->quick ? 4096 : 65536;
	pl.per_domain = ctx->quick ? 1 : 2;
	pl.procs = ctx->quick ? quick_procs : closed_procs;
	if (ctx->cpu_only)
		snprintf(why, sizeof(why), "--backend cpu");
	else
		usable = vyre_bench_gpus_usable(ordinals, 4, why, sizeof(why));
	if (usable <= 0) {
		fprintf(
		    stderr,
		    "gpus: no GPU (%s): a smoke test on the CPU backend, its instances labelled "
		    "as GPUs\n",
		    why);
		for (int i = 0; i < 4; i++)
			ordinals[i] = i;
	} else {
		pl.backend = "cuda";
		pl.system = "vyre";
		if (why[0]) /* devices left out as unusable */
			fprintf(stderr, "gpus: %s\n", why);
	}
	if (usable == 1) {
		ordinals[1] = ordinals[0];
		two.label = "2lanes";
		fprintf(
		    stderr,
		    "gpus: the two-GPU rows were not made: the CUDA driver counts one usable GPU "
		    "(ordinal %d); the second vyred is --gpus %d,%d, two GPUs of one device, its "
		    "rows named 2lanes\n",
		    ordinals[0], ordinals[0], ordinals[0]);
	}
	snprintf(one.gpus, sizeof(one.gpus), "%d", ordinals[0]);
	snprintf(two.gpus, sizeof(two.gpus), "%d,%d", ordinals[0], ordinals[1]);
	int rc = run_side(ctx, &pl, &one);

	if (only_one_side()) {
		fprintf(stderr, "gpus: VYRE_BENCH_GPUS_ONLY=%s: the other sides were not run\n",
			getenv("VYRE_BENCH_GPUS_ONLY"));
		return rc ? -1 : 0;
	}
	rc |= run_side(ctx, &pl, &two);
	ratios(ctx, &pl, &one, &two);
	if (usable >= 4 || usable <= 0) {
		/* a host of four (or the CPU smoke test): all four against one too, 2 domains a GPU
		 */
		snprintf(four.gpus, sizeof(four.gpus), "%d,%d,%d,%d", ordinals[0], ordinals[1],
			 ordinals[2], ordinals[3]);
		rc |= run_side(ctx, &pl, &four);
		ratios(ctx, &pl, &one, &four);
	}
	return rc ? -1 : 0;
}

VYRE_BENCH_SUITE(gpus,
		 "one vyred with 1 GPU vs 2 (--gpus): trivial items/s at 65536 a batch, "
		 "closed loop of 16 and 32 producers, 4 domains",
		 gpus_suite)
