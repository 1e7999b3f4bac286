/* SPDX-License-Identifier: MIT */
/*
 * tests/test_crc32c.h - the tests' own CRC32C (Castagnoli, reflected
 * 0x82f63b78), one bit at a time with no table: the oracle the example op
 * module's table-driven and block-parallel ones are checked against.
 */
#ifndef VYRE_TEST_CRC32C_H
#define VYRE_TEST_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C of @n bytes at @p, continuing from @crc (0 for a fresh one). */
static inline uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = crc & 1u ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

#endif /* VYRE_TEST_CRC32C_H */
