/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_job.h - the types every part of the "scan" suite shares:
 * its sizes, one row's job and its workers' board, and the figures of a row.
 * The parts, each with its own header:
 *   bench_scan.c         the suite: pattern sets, rows, the count check, reporting
 *   bench_scan_data.c    the text scanned (the corpus) and the patterns picked from it
 *   bench_scan_run.c     one row: its workers' board and the warm-up and measuring window
 *   bench_scan_hs.c      the Hyperscan peer (VYRE_HAVE_HS)
 *   bench_scan_vyre.c    the vyre peer: vyred, its producer processes, the single long scan
 *   bench_scan_limits.c  the physical-limit rows, CUDA copies in a forked child
 *   bench_scan_b64.c     base64: the encoded item sets and the CPU peer's decoder
 */
#ifndef VYRE_BENCH_SCAN_JOB_H
#define VYRE_BENCH_SCAN_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

struct worker {
	_Alignas(64) uint64_t bytes; /* of completed items, read by the suite */
	uint64_t items;
	uint64_t pass_count; /* distinct end offsets over the first pass of the share */
	uint32_t pass_seen, pass_done, ready, failed;
	uint64_t sink; /* SCAN_REPORT: a sum of the records read */
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
/*
 * Which pattern matched where (issue 26): vyre runs DFA_REPORT into a report
 * buffer per item, which the producer reads; Hyperscan's callback stores
 * (id, to) in an array. `matches` counts the records, one per (id, end).
 */
#define SCAN_REPORT (1u << 3)

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
	/* vyre rows: ns of vyred's CPU a work item over the window (harness_cpu.h); < 0: not
	 * measured
	 */
	double vyred_cpu;
};

#endif /* VYRE_BENCH_SCAN_JOB_H */
