/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/crc32c/producer.c - a client of the example op module
 * crc32c: looks the op up by name on vyred, the CRC32C of a sentence, then
 * of its two halves, the second continuing from the first's CRC (the param
 * word), which must give the same CRC.
 *
 *   producer [SOCKET]      (default: $VYRE_SOCKET)
 */
#include "../producer.h"

int main(int argc, char **argv)
{
	static const char text[] = PRODUCER_TEXT;
	uint32_t op;
	struct vyre_client *c = producer_start(argc, argv, "crc32c", &op);

	const uint32_t whole = producer_buffer(c, 44, text, 44);
	const uint32_t head = producer_buffer(c, 20, text, 20);
	const uint32_t tail = producer_buffer(c, 24, text + 20, 24);
	const uint32_t out = producer_buffer(c, 4, NULL, 0);

	const uint64_t crc = producer_run(c, op, whole, out, 0);
	const uint64_t first = producer_run(c, op, head, out, 0);
	const uint64_t second = producer_run(c, op, tail, out, (uint32_t)first);

	printf("crc32c(\"%s\") = %08llx\n", text, (unsigned long long)crc);
	printf("in two items, the second from the first's CRC: %08llx, %s\n",
	       (unsigned long long)second, second == crc ? "the same" : "DIFFERENT");
	vyre_close(c);
	return second == crc ? 0 : 1;
}
