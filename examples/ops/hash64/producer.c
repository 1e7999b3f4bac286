/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/hash64/producer.c - a client of the example op module
 * hash64: looks the op up by name on vyred and hashes a sentence with
 * XXH64 under three seeds (the param word); bytes 0-7 of the output hold
 * the hash too.
 *
 *   producer [SOCKET]      (default: $VYRE_SOCKET)
 */
#include "../producer.h"

int main(int argc, char **argv)
{
	static const char text[] = PRODUCER_TEXT;
	static const uint32_t seeds[] = {0, 1, 0xdeadbeefu};
	uint32_t op;
	struct vyre_client *c = producer_start(argc, argv, "hash64", &op);

	const uint32_t in = producer_buffer(c, 44, text, 44);
	const uint32_t out = producer_buffer(c, 8, NULL, 0);

	const uint8_t *word = vyre_buffer_ptr(c, out, NULL);

	for (int i = 0; i < 3; i++) {
		const uint64_t h = producer_run(c, op, in, out, seeds[i]);
		uint64_t stored = 0;

		for (int k = 7; k >= 0; k--)
			stored = stored << 8 | word[k];
		printf("XXH64(\"%s\", seed %#x) = %016llx%s\n", text, seeds[i],
		       (unsigned long long)h, stored == h ? "" : " (the output differs!)");
	}
	vyre_close(c);
	return 0;
}
