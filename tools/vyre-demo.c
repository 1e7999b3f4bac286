/* SPDX-License-Identifier: MIT */
/*
 * vyre-demo: several producer processes share one vyre domain and push a
 * mixed workload through a running vyred: DFA scans counting a keyword in
 * text chunks, sums and maxima of number chunks, and copy/add/xor/mul
 * pipelines, plus a few deliberately invalid items. Each producer checks
 * some results against the sequential oracle computed in-process; the
 * parent prints a short summary. Used by `make demo` (tools/demo.sh).
 *
 * usage: vyre-demo --socket PATH [--producers N] [--items N] [--domain NAME]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/ops.h"
#include "vyre/vyre.h"

#define CHUNK_BYTES	4096u
#define CHUNKS		16u
#define KEYWORD		"error"
#define WAIT_NS		(30ll * 1000000000ll)
#define INVALID_EVERY	997u
#define ITEMS_PER_ROUND (8u * CHUNKS)

struct report {
	uint64_t items, completions, errors, unexpected_errors, checked, mismatches;
	uint64_t ns;
};

struct shared_setup {
	uint32_t text[CHUNKS];	  /* text chunks */
	uint32_t numbers[CHUNKS]; /* u32 chunks */
	uint32_t table;		  /* DFA for KEYWORD */
	uint64_t oracle_matches;  /* keyword hits in all text chunks */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A KMP automaton for @kw: state = length of the matched prefix; accepting at full length. */
static void build_dfa(uint32_t *t, const char *kw)
{
	uint32_t m = (uint32_t)strlen(kw), n = m + 1;
	uint32_t *next = t + 3; /* n <= 32: one accept word */

	t[0] = n;
	t[1] = 0;
	t[2] = 1u << m;
	for (uint32_t s = 0; s < n; s++) {
		for (uint32_t c = 0; c < 256; c++) {
			/* Longest prefix of kw that is a suffix of kw[0..s) + c. */
			uint32_t k = s < m ? s + 1 : m;

			for (; k > 0; k--) {
				if ((uint8_t)kw[k - 1] != c)
					continue;
				uint32_t off = s + 1 - k;

				if (k == 1 || memcmp(kw, kw + off, k - 1) == 0)
					break;
			}
			next[s * 256 + c] = k;
		}
	}
}

static void fill_text(uint8_t *p, uint32_t bytes, uint64_t *rng)
{
	static const char *const words[] = {"ok ", "warn ", "error ", "info ", "debug ", "errors "};

	for (uint32_t i = 0; i < bytes;) {
		*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
		const char *w = words[(*rng >> 33) % 6];

		for (; *w && i < bytes; w++)
			p[i++] = (uint8_t)*w;
	}
}

static int setup(struct vyre_client *c, struct shared_setup *s)
{
	uint64_t rng = 2024;
	uint32_t tbytes = (uint32_t)vyre_dfa_table_bytes((uint32_t)strlen(KEYWORD) + 1);
	int rc = vyre_buffer_alloc(c, tbytes, 0, &s->table);

	if (rc != 0)
		return rc;
	build_dfa(vyre_buffer_ptr(c, s->table, NULL), KEYWORD);
	s->oracle_matches = 0;
	for (uint32_t i = 0; i < CHUNKS; i++) {
		if ((rc = vyre_buffer_alloc(c, CHUNK_BYTES, 0, &s->text[i])) != 0 ||
		    (rc = vyre_buffer_alloc(c, CHUNK_BYTES, 0, &s->numbers[i])) != 0)
			return rc;
		uint8_t *t = vyre_buffer_ptr(c, s->text[i], NULL);
		uint32_t *w = vyre_buffer_ptr(c, s->numbers[i], NULL);

		fill_text(t, CHUNK_BYTES, &rng);
		for (uint32_t j = 0; j < CHUNK_BYTES / 4; j++)
			w[j] = (uint32_t)((rng = rng * 6364136223846793005ull + 1) >> 40);
		for (uint32_t j = 0; j + strlen(KEYWORD) <= CHUNK_BYTES; j++)
			s->oracle_matches += memcmp(t + j, KEYWORD, strlen(KEYWORD)) == 0;
	}
	return 0;
}

struct mapped {
	uint32_t handle, bytes;
	const void *ptr;
};

struct producer {
	struct vyre_client *c;
	const struct shared_setup *s;
	uint32_t scratch[4];   /* this producer's private outputs, in the shared heap */
	uint32_t result;       /* one word for reductions */
	uint32_t hits[CHUNKS]; /* each chunk's keyword count, asked for twice a round */
	struct mapped map[3 * CHUNKS + 8];
	uint32_t n_map;
	struct report rep;
};

/* Where a buffer is in this process: looked up at vyred once, then remembered. */
static const void *buffer(struct producer *p, uint32_t handle, uint32_t *bytes)
{
	for (uint32_t i = 0; i < p->n_map; i++) {
		if (p->map[i].handle == handle) {
			*bytes = p->map[i].bytes;
			return p->map[i].ptr;
		}
	}
	const void *ptr = vyre_buffer_ptr(p->c, handle, bytes);

	if (ptr && p->n_map < sizeof(p->map) / sizeof(p->map[0]))
		p->map[p->n_map++] = (struct mapped){handle, *bytes, ptr};
	return ptr;
}

/* The oracle for an item of this demo, on private copies of its buffers. */
static int oracle(struct producer *p, const struct vyre_work_item *it, uint64_t *result)
{
	static uint8_t heap[3 * CHUNK_BYTES + 65536];
	uint32_t in_b = 0, out_b = 0, t_b = 0;
	const void *in = buffer(p, it->input_handle, &in_b);
	const void *tab = it->op_handle == VYRE_OP_DFA_SCAN ? buffer(p, it->param, &t_b) : NULL;

	if (!in || !buffer(p, it->output_handle, &out_b) || in_b > CHUNK_BYTES ||
	    out_b > CHUNK_BYTES || t_b > 65536)
		return VYRE_E_INVAL;
	memcpy(heap, in, in_b);
	if (tab)
		memcpy(heap + 2 * CHUNK_BYTES, tab, t_b);
	struct vyre_heap_view view = {heap, sizeof(heap)};
	struct vyre_exec_item x = {.op = it->op_handle,
				   .param = tab ? 0 : it->param,
				   .in_bytes = in_b,
				   .in_off = 0,
				   .out_bytes = out_b,
				   .out_off = CHUNK_BYTES,
				   .table_bytes = t_b,
				   .table_off = 2 * CHUNK_BYTES};

	return vyre_exec_one(&view, &x, result);
}

/*
 * One round: per chunk a scan, a sum, a max and a small pipeline, and the
 * chunk's scan again, as a second consumer of the same figure would ask for
 * it: nothing in between writes what it reads or writes, so the planner runs
 * it once (dedupe). Fenced at the end.
 */
static uint32_t round_items(struct producer *p, uint32_t round, struct vyre_work_item *its)
{
	const struct shared_setup *s = p->s;
	uint32_t n = 0;

	for (uint32_t i = 0; i < CHUNKS; i++) {
		its[n++] =
		    (struct vyre_work_item){VYRE_OP_DFA_SCAN, s->text[i], p->hits[i], s->table};
		its[n++] = (struct vyre_work_item){VYRE_OP_SUM, s->numbers[i], p->result, 0};
		its[n++] = (struct vyre_work_item){VYRE_OP_MAX, s->numbers[i], p->result, 0};
		its[n++] = (struct vyre_work_item){VYRE_OP_COPY, s->numbers[i], p->scratch[0], 0};
		its[n++] =
		    (struct vyre_work_item){VYRE_OP_ADD, p->scratch[0], p->scratch[1], round};
		its[n++] = (struct vyre_work_item){VYRE_OP_XOR, p->scratch[1], p->scratch[2], i};
		its[n++] = (struct vyre_work_item){VYRE_OP_MUL, p->scratch[2], p->scratch[3], 3};
		its[n++] =
		    (struct vyre_work_item){VYRE_OP_DFA_SCAN, s->text[i], p->hits[i], s->table};
	}
	return n;
}

static int drain(struct producer *p, uint64_t *outstanding, const struct vyre_work_item *its,
		 uint64_t base, int block)
{
	struct vyre_cqe cqe[256];
	int n = block ? vyre_wait(p->c, cqe, 256, WAIT_NS) : vyre_reap(p->c, cqe, 256);

	if (n < 0) {
		fprintf(stderr, "vyre-demo: %s\n", vyre_strerror(n));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		uint64_t ud = cqe[i].user_data;

		p->rep.completions++;
		(*outstanding)--;
		if (cqe[i].status != 0) {
			p->rep.errors++;
			p->rep.unexpected_errors += ud % INVALID_EVERY != 0;
			continue;
		}
		/* Reductions and scans of the original chunks: check against the oracle. */
		const struct vyre_work_item *it = &its[(ud - base) % (ITEMS_PER_ROUND)];

		if (ud >= base && (it->op_handle == VYRE_OP_SUM || it->op_handle == VYRE_OP_MAX ||
				   it->op_handle == VYRE_OP_DFA_SCAN)) {
			uint64_t want = 0;

			p->rep.checked++;
			p->rep.mismatches += oracle(p, it, &want) != 0 || want != cqe[i].result;
		}
	}
	return 0;
}

static int produce(const char *sock, const char *domain, const struct shared_setup *s,
		   uint64_t items, struct report *out)
{
	struct vyre_connect_opts o = {.socket_path = sock, .domain = domain};
	struct producer p = {.s = s};
	struct vyre_work_item its[ITEMS_PER_ROUND];
	uint64_t sent = 0, outstanding = 0, t0;
	int rc = vyre_connect(&o, &p.c);

	if (rc != 0) {
		fprintf(stderr, "vyre-demo: connect %s: %s\n", sock, vyre_strerror(rc));
		return -1;
	}
	for (int i = 0; i < 4 && rc == 0; i++)
		rc = vyre_buffer_alloc(p.c, CHUNK_BYTES, 0, &p.scratch[i]);
	if (rc == 0)
		rc = vyre_buffer_alloc(p.c, 4, 0, &p.result);
	for (uint32_t i = 0; i < CHUNKS && rc == 0; i++)
		rc = vyre_buffer_alloc(p.c, 4, 0, &p.hits[i]);
	if (rc != 0) {
		fprintf(stderr, "vyre-demo: alloc: %s\n", vyre_strerror(rc));
		return -1;
	}
	t0 = now_ns();
	for (uint32_t round = 0; sent < items; round++) {
		uint32_t n = round_items(&p, round, its);
		uint64_t base = sent;

		for (uint32_t i = 0; i < n && sent < items;) {
			struct vyre_work_item it = its[i];

			if (sent % INVALID_EVERY == 0)
				it.input_handle = 0xdeadbeef; /* invalid on purpose */
			rc = vyre_submit(p.c, &it, sent, i + 1 == n ? VYRE_SQE_FENCE : 0);
			if (rc == VYRE_E_AGAIN) {
				if (drain(&p, &outstanding, its, base, 1) != 0)
					return -1;
				continue;
			}
			if (rc != 0) {
				fprintf(stderr, "vyre-demo: submit: %s\n", vyre_strerror(rc));
				return -1;
			}
			sent++;
			outstanding++;
			i++;
		}
		/* Results of this round are checked before the next one rewrites the outputs. */
		while (outstanding)
			if (drain(&p, &outstanding, its, base, 1) != 0)
				return -1;
	}
	p.rep.items = sent;
	p.rep.ns = now_ns() - t0;
	*out = p.rep;
	vyre_close(p.c);
	return 0;
}

/* The parent's own check: scan every text chunk once and add up the hits. */
static int scan_all(struct vyre_client *c, const struct shared_setup *s, uint64_t *hits)
{
	uint32_t out;
	struct vyre_cqe cqe[CHUNKS];
	uint32_t got = 0;

	if (vyre_buffer_alloc(c, 4, 0, &out) != 0)
		return -1;
	for (uint32_t i = 0; i < CHUNKS; i++) {
		struct vyre_work_item it = {VYRE_OP_DFA_SCAN, s->text[i], out, s->table};

		if (vyre_submit(c, &it, i, 0) != 0)
			return -1;
	}
	while (got < CHUNKS) {
		int n = vyre_wait(c, cqe, CHUNKS, WAIT_NS);

		if (n <= 0)
			return -1;
		for (int i = 0; i < n; i++)
			*hits += cqe[i].status == 0 ? cqe[i].result : 0;
		got += (uint32_t)n;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: vyre-demo --socket PATH [--producers N] [--items N] "
			"[--domain NAME]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'}, {"producers", required_argument, NULL, 'p'},
	    {"items", required_argument, NULL, 'n'},  {"domain", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},	      {NULL, 0, NULL, 0}};
	const char *sock = NULL, *domain = "demo";
	unsigned long producers = 4, items = 50000;
	struct shared_setup s;
	struct vyre_client *owner;
	int opt, fds[64][2];
	pid_t kids[64];

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 's')
			sock = optarg;
		else if (opt == 'p')
			producers = strtoul(optarg, NULL, 10);
		else if (opt == 'n')
			items = strtoul(optarg, NULL, 10);
		else if (opt == 'd')
			domain = optarg;
		else {
			usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	if (producers == 0 || producers > 64 || items == 0) {
		usage();
		return 2;
	}
	struct vyre_connect_opts o = {.socket_path = sock, .domain = domain};
	int rc = vyre_connect(&o, &owner);

	if (rc == 0)
		rc = setup(owner, &s);
	if (rc != 0) {
		fprintf(stderr, "vyre-demo: %s\n", vyre_strerror(rc));
		return 1;
	}
	printf("vyre-demo: %lu producer processes, %lu items each, domain '%s'\n", producers, items,
	       domain);
	printf("  workload per round: per 4 KiB chunk a DFA scan for \"%s\", SUM, MAX, a\n"
	       "  COPY->ADD->XOR->MUL pipeline, and the scan asked for again; one item in\n"
	       "  %u is invalid on purpose\n",
	       KEYWORD, INVALID_EVERY);
	uint64_t t0 = now_ns();

	for (unsigned long i = 0; i < producers; i++) {
		if (pipe(fds[i]) != 0)
			return 1;
		kids[i] = fork();
		if (kids[i] == 0) {
			struct report r = {0};

			close(fds[i][0]);
			rc = produce(sock, domain, &s, items, &r);
			_exit(rc == 0 && write(fds[i][1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
		}
		close(fds[i][1]);
	}
	struct report sum = {0};
	int failed = 0;

	for (unsigned long i = 0; i < producers; i++) {
		struct report r;
		int st;

		if (read(fds[i][0], &r, sizeof(r)) != sizeof(r))
			failed = 1;
		else {
			sum.items += r.items;
			sum.completions += r.completions;
			sum.errors += r.errors;
			sum.unexpected_errors += r.unexpected_errors;
			sum.checked += r.checked;
			sum.mismatches += r.mismatches;
		}
		waitpid(kids[i], &st, 0);
		failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	uint64_t hits = 0;

	if (scan_all(owner, &s, &hits) != 0)
		failed = 1;
	vyre_close(owner);
	printf("  items submitted    %" PRIu64 "\n", sum.items);
	printf("  completions        %" PRIu64 "%s\n", sum.completions,
	       sum.completions == sum.items ? " (every item completed once)" : "  MISSING");
	printf("  errors             %" PRIu64 " (%" PRIu64 " invalid on purpose, %" PRIu64
	       " unexpected)\n",
	       sum.errors, sum.errors - sum.unexpected_errors, sum.unexpected_errors);
	printf("  throughput         %.0f items/s over %.2f s (all producers)\n",
	       (double)sum.items / secs, secs);
	printf("  oracle checks      %" PRIu64 " SUM/MAX/DFA_SCAN results, %" PRIu64
	       " mismatches\n",
	       sum.checked, sum.mismatches);
	printf("  \"%s\" in 64 KiB   %" PRIu64 " hits by DFA_SCAN, %" PRIu64
	       " counted in-process\n",
	       KEYWORD, hits, s.oracle_matches);
	int ok = !failed && sum.completions == sum.items && !sum.unexpected_errors &&
		 !sum.mismatches && hits == s.oracle_matches;

	printf("vyre-demo: %s\n", ok ? "all results correct" : "FAILED");
	return ok ? 0 : 1;
}
