/* SPDX-License-Identifier: MIT */
/*
 * gpu/digits.h - the digit values of the decode ops (docs/design.md 6.1):
 * one definition for the oracle (gpu/ops_bytes.c) and the device code
 * (gpu/mk_decode.cuh, gpu/mk_fuse.cuh, and their host builds in tests/).
 */
#ifndef VYRE_GPU_DIGITS_H
#define VYRE_GPU_DIGITS_H

#include <stdint.h>

#ifdef __CUDACC__
#define VYRE_DIGITS_FN static inline __host__ __device__
#else
#define VYRE_DIGITS_FN static inline
#endif

/* Not a digit of the op: a bit above every digit's value, so ORs collect it. */
#define VYRE_NOT_A_DIGIT 64u

/* The 6-bit value of a base64 character (RFC 4648 standard alphabet), or VYRE_NOT_A_DIGIT. */
VYRE_DIGITS_FN uint32_t vyre_b64_value(uint32_t c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	return c == '/' ? 63 : VYRE_NOT_A_DIGIT;
}

/* The value of a hex digit of either case, or VYRE_NOT_A_DIGIT. */
VYRE_DIGITS_FN uint32_t vyre_hex_value(uint32_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return VYRE_NOT_A_DIGIT;
}

#endif /* VYRE_GPU_DIGITS_H */
