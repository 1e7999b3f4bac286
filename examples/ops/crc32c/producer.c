/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/crc32c/producer.c - a client of the example op module
 * crc32c: looks the op up by name on vyred, the CRC32C of a sentence, then
 * of its two halves, the second continuing from the first's CRC (the param
 * word), which must give the same CRC; then the sentence in base64 through
 * a chain BASE64_DECODE -> crc32c_counted (the module's stream op), whose
 * decoded bytes live in a transient buffer (on a GPU: kept on chip).
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

	/* base64 of the text as a counted buffer (length word, then the characters) */
	static const char b64[] = "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZy4=";
	uint8_t counted[4 + sizeof(b64) - 1];
	const uint32_t n64 = (uint32_t)sizeof(b64) - 1;
	uint32_t counted_op, decoded;

	memcpy(counted, &n64, 4); /* little-endian, as vyre's words are */
	memcpy(counted + 4, b64, n64);
	int rc = vyre_op_lookup(c, "crc32c_counted", &counted_op);

	if (rc == 0)
		rc = vyre_buffer_alloc(c, 4 + 48, VYRE_BUF_TRANSIENT, &decoded);
	if (rc != 0) {
		fprintf(stderr, "crc32c producer: crc32c_counted: %s\n", vyre_strerror(rc));
		vyre_close(c);
		return 1;
	}
	const uint32_t encoded = producer_buffer(c, sizeof(counted), counted, sizeof(counted));
	const struct vyre_work_item decode = {VYRE_OP_BASE64_DECODE, encoded, decoded, 0};
	const struct vyre_work_item check = {counted_op, decoded, out, 0};
	struct vyre_cqe cqe[2] = {{0}};
	uint64_t chained = 0;
	int got = 0;

	rc = vyre_submit(c, &decode, 1, VYRE_SQE_CHAIN);
	if (rc == 0)
		rc = vyre_submit(c, &check, 2, 0);
	while (rc == 0 && got < 2) {
		const int n = vyre_wait(c, cqe + got, 2 - (uint32_t)got, 10 * 1000000000ll);

		if (n < 0)
			rc = n;
		got += n > 0 ? n : 0;
	}
	for (int k = 0; rc == 0 && k < got; k++) {
		if (cqe[k].status != 0)
			rc = cqe[k].status;
		else if (cqe[k].user_data == 2)
			chained = cqe[k].result;
	}
	if (rc != 0) {
		fprintf(stderr, "crc32c producer: the base64 chain: %s\n", vyre_strerror(rc));
		vyre_close(c);
		return 1;
	}
	printf("base64 -> crc32c_counted chain: %08llx, %s\n", (unsigned long long)chained,
	       chained == crc ? "the same" : "DIFFERENT");
	vyre_close(c);
	return second == crc && chained == crc ? 0 : 1;
}
