/* SPDX-License-Identifier: MIT */
/* vyre-submit's numbers and byte counts (numbers.h). */
#include "numbers.h"

#include <string.h>

#include "../../gpu/digits.h"

int vyre_submit_hex_digit(unsigned char c)
{
	const uint32_t v = vyre_hex_value(c);

	return v == VYRE_NOT_A_DIGIT ? -1 : (int)v;
}

int vyre_submit_number(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0, base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		const int digit = vyre_submit_hex_digit((unsigned char)*s);

		if (digit < 0 || (uint64_t)digit >= base)
			return -1;
		const uint64_t d = (uint64_t)digit;

		if (d > max || v > (max - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static uint64_t unit_of(char c)
{
	switch (c) {
	case 'K':
	case 'k':
		return 1ull << 10;
	case 'M':
	case 'm':
		return 1ull << 20;
	case 'G':
	case 'g':
		return 1ull << 30;
	default:
		return 1;
	}
}

int vyre_submit_bytes(const char *s, uint64_t max, uint64_t *out)
{
	char digits[32];
	const size_t n = strlen(s);
	const uint64_t unit = n ? unit_of(s[n - 1]) : 1;
	uint64_t v;

	if (unit == 1)
		return vyre_submit_number(s, max, out);
	if (n < 2 || n >= sizeof(digits))
		return -1;
	memcpy(digits, s, n - 1);
	digits[n - 1] = '\0';
	/* a suffix multiplies decimal digits only: 0x10M is a typo, not 16 MiB */
	for (size_t i = 0; i + 1 < n; i++)
		if (digits[i] < '0' || digits[i] > '9')
			return -1;
	if (vyre_submit_number(digits, max / unit, &v) != 0)
		return -1;
	*out = v * unit;
	return 0;
}
