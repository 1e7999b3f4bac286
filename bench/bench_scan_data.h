/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_data.h - the "scan" suite's text (the corpus) and the
 * patterns picked from it (bench/bench_scan_data.c).
 */
#ifndef VYRE_BENCH_SCAN_DATA_H
#define VYRE_BENCH_SCAN_DATA_H

#include <stddef.h>
#include <stdint.h>

struct vyre_dfa_pattern;

struct corpus {
	uint8_t *bytes;
	size_t len, cap;
};

/* Reads the corpus; -1 when it holds under PICK_BYTES. */
int vyre_scan_corpus_load(struct corpus *c);

/* @len bytes of the corpus repeated from its start. */
void vyre_scan_tile(const struct corpus *c, uint8_t *dst, size_t len);

/* Up to @want distinct identifiers from @text, into @out; returns how many. */
uint32_t vyre_scan_pick_patterns(const uint8_t *text, struct vyre_dfa_pattern *out, uint32_t want);

/* Identifiers drawn uniformly from the distinct ones of the same text: a sparse set (issue 26). */
uint32_t vyre_scan_pick_sparse(const uint8_t *text, size_t len_text, struct vyre_dfa_pattern *out,
			       uint32_t want);

#endif /* VYRE_BENCH_SCAN_DATA_H */
