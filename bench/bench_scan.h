/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan.h - the parts of the "scan" suite, internal to bench/:
 *   bench_scan.c         the suite: pattern sets, rows, the count check, reporting
 *   bench_scan_data.c    the text scanned (the corpus) and the patterns picked from it
 *   bench_scan_run.c     one row: its workers' board and the warm-up and measuring window
 *   bench_scan_hs.c      the Hyperscan peer (VYRE_HAVE_HS)
 *   bench_scan_vyre.c    the vyre peer: vyred, its producer processes, the single long scan
 *   bench_scan_limits.c  the physical-limit rows, CUDA copies in a forked child
 *   bench_scan_b64.c     base64: the encoded item sets and the CPU peer's decoder
 */
#ifndef VYRE_BENCH_SCAN_H
#define VYRE_BENCH_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"
#include "harness.h"

/* Pointers only, so that only the files that use these need their headers. */
struct vyre_dfa_pattern;
struct hs_database;

#define SUITE		"scan"
#define KIB		1024u
#define MIB		(1024u * KIB)
#define GIB		(1024ull * MIB)
#define MAX_WORKERS	256u /* Hyperscan threads: one per online CPU, at most this */
#define SET_BYTES	(16u * MIB)
#define QUICK_SET_BYTES (2u * MIB)
#define PICK_BYTES	QUICK_SET_BYTES /* patterns come from text every item set holds */
#define PATTERN_MIN	5u
#define PATTERN_MAX	16u
#define ROW_CAP_NS	(30ull * 1000000000ull) /* the longest any one row may take */

/* ---- bench_scan_data.c -------------------------------------------------------- */

struct corpus {
	uint8_t *bytes;
	size_t len, cap;
};

/* Reads the corpus; -1 when it holds under PICK_BYTES. */
int scan_corpus_load(struct corpus *c);

/* @len bytes of the corpus repeated from its start. */
void scan_tile(const struct corpus *c, uint8_t *dst, size_t len);

/* Up to @want distinct identifiers from @text, into @out; returns how many. */
uint32_t scan_pick_patterns(const uint8_t *text, struct vyre_dfa_pattern *out, uint32_t want);

/* ---- bench_scan_run.c: what the workers share with the suite ------------------- */

struct worker {
	_Alignas(64) uint64_t bytes; /* of completed items, read by the suite */
	uint64_t items;
	uint64_t pass_count; /* distinct end offsets over the first pass of the share */
	uint32_t pass_seen, pass_done, ready, failed;
	char why[160];
};

struct board {
	_Alignas(64) uint32_t go;
	_Alignas(64) uint32_t stop;
	struct worker w[MAX_WORKERS];
};

/* job.mode: where vyre's bytes live and what each item does */
#define SCAN_ITEMS_DEVICE (1u << 0) /* items copied once into device buffers (VYRE_BUF_DEVICE) */
#define SCAN_B64	  (1u << 1) /* items base64-encoded: decode, then scan the decoded bytes */
#define SCAN_FUSED	  (1u << 2) /* SCAN_B64 as one chain through a transient buffer */

/* One row's work: the item set, the peer's inputs, and who takes which items. */
struct job {
	const uint8_t *data; /* n_items items of item_bytes, back to back */
	uint32_t item_bytes, n_items;
	uint32_t mode;
	/* SCAN_B64: item k encoded as a counted buffer (design.md 6.1) at enc + k * enc_stride */
	const uint8_t *enc;
	uint32_t enc_stride;
	unsigned workers;
	struct board *b;
	const char *socket; /* vyre */
	pid_t vyred;	    /* its pid, for its CPU time (figures.vyred_cpu) */
	const uint8_t *table;
	uint32_t table_bytes, depth;
	/* Hyperscan; there in every build, so the layout is the same in every file */
	const struct hs_database *db;
};

struct figures {
	double gbps;
	uint64_t matches;
	int counted; /* every worker finished its first pass: matches is the whole set's */
	/* vyre rows: ns of vyred's CPU a work item over the window (harness.h); < 0: not measured
	 */
	double vyred_cpu;
};

__attribute__((format(printf, 2, 3))) void scan_fail(struct worker *me, const char *fmt, ...);
int scan_stopping(const struct board *b);

/* Says it is ready and waits for go; 0 to start, -1 when the suite gave up. */
int scan_ready_then_go(struct board *b, struct worker *me);

/* Items [*first, *first + *n) are worker @id's: an even split. */
void scan_share(const struct job *j, unsigned id, uint32_t *first, uint32_t *n);

/* Item @k of a worker's cyclic walk over its @n items is done with @count matches. */
void scan_item_done(struct worker *me, uint64_t k, uint32_t n, uint32_t bytes, uint64_t count);

/*
 * Runs the row whose @workers are starting on @b and sets stop; the caller
 * joins them. @vyred: the pid of the vyred the workers use, whose CPU time
 * over the window per item completed is f->vyred_cpu (0: none, -1 there).
 */
int scan_run_window(const struct vyre_bench_ctx *ctx, struct board *b, unsigned workers,
		    const char *row, pid_t vyred, struct figures *f);

/* Prints the first failed worker's reason; 1 when one failed. */
int scan_report_failed(const struct board *b, unsigned workers, const char *row);

/* ---- bench_scan_hs.c ---------------------------------------------------------- */

#ifdef VYRE_HAVE_HS
/* The first @n of @p compiled as literals; NULL (and why, on stderr) on failure. */
struct hs_database *scan_hs_build(const struct vyre_dfa_pattern *p, uint32_t n);
void scan_hs_free(struct hs_database *db);

/* The row @row of @j with one thread per online CPU; 0 with @f filled. */
int scan_hs_row(const struct vyre_bench_ctx *ctx, struct job *j, const char *row,
		struct figures *f);

/*
 * One scan of @bytes of @data by one thread per online CPU, each taking a
 * slice and starting PATTERN_MAX - 1 bytes before it so that the matches
 * ending in it are all found; repeated for --seconds. @f as a row's.
 */
int scan_hs_single(const struct vyre_bench_ctx *ctx, const struct hs_database *db,
		   const uint8_t *data, uint32_t bytes, struct figures *f);
#endif

/* ---- bench_scan_b64.c --------------------------------------------------------- */

/* Bytes of the counted buffer holding @bytes base64-encoded: the length word, padded text. */
uint32_t scan_b64_counted_bytes(uint32_t bytes);

/* Encodes each @item_bytes item of @data into a counted buffer of @stride bytes at @enc. */
void scan_b64_encode_items(const uint8_t *data, uint32_t item_bytes, uint32_t n_items, uint8_t *enc,
			   uint32_t stride);

/* Decodes the counted base64 at @counted into @out; the decoded length, or -1 if malformed. */
int64_t scan_b64_decode(const uint8_t *counted, uint8_t *out, uint64_t out_cap);

/* ---- bench_scan_vyre.c -------------------------------------------------------- */

struct vyred {
	struct vyre_bench_vyred run;
	char peer[16]; /* "vyre-cpu" or "vyre-cuda": the backend vyred chose */
};

/*
 * Starts vyred @bin on a socket of its own (the cpu backend when @cpu_only;
 * one event loop, so that one domain has the whole GPU, when @one_loop).
 */
int scan_vyred_start(struct vyred *d, const char *bin, int cpu_only, int one_loop);
void scan_vyred_stop(struct vyred *d);

/* The row @row of @j with producer processes through the vyred at j->socket. */
int scan_vyre_row(const struct vyre_bench_ctx *ctx, struct job *j, const char *row,
		  struct figures *f);

struct single {
	uint64_t bytes, scans, ns, matches; /* ns: all @scans together */
	double vyred_cpu; /* ns of vyred's CPU a scan over them; < 0: not measured */
	struct worker w;
};

/* One buffer of @bytes of the corpus scanned whole, again and again for --seconds. */
int scan_vyre_single_row(const struct vyre_bench_ctx *ctx, const struct job *j,
			 const struct corpus *corp, uint32_t bytes, int device, struct single *out);

/* ---- bench_scan_limits.c ------------------------------------------------------ */

/* The "limit" rows where there is a GPU; their absence fails nothing. */
int scan_limits_rows(struct vyre_bench_ctx *ctx);

#endif /* VYRE_BENCH_SCAN_H */
