/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/numbers.h - the numbers vyre-submit reads, in its program text
 * and on its command line, so that both take the same spellings.
 */
#ifndef VYRE_TOOLS_SUBMIT_NUMBERS_H
#define VYRE_TOOLS_SUBMIT_NUMBERS_H

#include <stdint.h>

/* The value of hexadecimal digit @c (either case), or -1. */
int vyre_submit_hex_digit(unsigned char c);

/* Decimal, or hexadecimal after 0x, at most @max: 0, or -1 for anything else. */
int vyre_submit_number(const char *s, uint64_t max, uint64_t *out);

/*
 * A byte count: a number as above, or decimal digits with a K, M or G
 * suffix (either case; powers of 1024), at most @max: 0, or -1.
 */
int vyre_submit_bytes(const char *s, uint64_t max, uint64_t *out);

#endif /* VYRE_TOOLS_SUBMIT_NUMBERS_H */
