/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/histogram/producer.c - a client of the example op module
 * histogram: looks the op up by name on vyred, counts the byte values of a
 * sentence into 256 counts, and prints the letters that occur.
 *
 *   producer [SOCKET]      (default: $VYRE_SOCKET)
 */
#include "../producer.h"

int main(int argc, char **argv)
{
	static const char text[] = PRODUCER_TEXT;
	uint32_t op;
	struct vyre_client *c = producer_start(argc, argv, "histogram", &op);

	const uint32_t in = producer_buffer(c, 44, text, 44);
	const uint32_t out = producer_buffer(c, 1024, NULL, 0);

	const uint64_t counted = producer_run(c, op, in, out, 0);
	const uint8_t *bins = vyre_buffer_ptr(c, out, NULL);

	printf("%llu bytes counted:", (unsigned long long)counted);
	for (int b = 0; b < 256; b++) {
		const uint32_t n = (uint32_t)bins[4 * b] | (uint32_t)bins[4 * b + 1] << 8 |
				   (uint32_t)bins[4 * b + 2] << 16 |
				   (uint32_t)bins[4 * b + 3] << 24;

		if (n)
			printf(b > ' ' && b < 127 ? " %c:%u" : " %#x:%u", b, n);
	}
	printf("\n");
	vyre_close(c);
	return 0;
}
