/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_b64.h - base64 for the "scan" suite (bench/
 * bench_scan_b64.c): the encoded item sets and the CPU peer's decoder.
 */
#ifndef VYRE_BENCH_SCAN_B64_H
#define VYRE_BENCH_SCAN_B64_H

#include <stdint.h>

/* Bytes of the counted buffer holding @bytes base64-encoded: the length word, padded text. */
uint32_t vyre_scan_b64_counted_bytes(uint32_t bytes);

/* Encodes each @item_bytes item of @data into a counted buffer of @stride bytes at @enc. */
void vyre_scan_b64_encode_items(const uint8_t *data, uint32_t item_bytes, uint32_t n_items,
				uint8_t *enc, uint32_t stride);

/* Decodes the counted base64 at @counted into @out; the decoded length, or -1 if malformed. */
int64_t vyre_scan_b64_decode(const uint8_t *counted, uint8_t *out, uint64_t out_cap);

#endif /* VYRE_BENCH_SCAN_B64_H */
