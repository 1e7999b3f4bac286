/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/dot/producer.c - a client of the example op module dot:
 * looks the op up by name on vyred and computes the float32 dot product of
 * x = (1, 2, ..., 3000) and y = (0.5, 0.5, ...), given as the param's
 * table buffer, in the op's fixed order (vyre_op_module(7)): the same bits
 * on the CPU backend and on any GPU.
 *
 *   producer [SOCKET]      (default: $VYRE_SOCKET)
 */
#include "../producer.h"

#define N 3000

int main(int argc, char **argv)
{
	static float x[N], y[N];
	uint32_t op;
	struct vyre_client *c = producer_start(argc, argv, "dot", &op);

	for (int i = 0; i < N; i++) {
		x[i] = (float)(i + 1);
		y[i] = 0.5f;
	}
	const uint32_t xs = producer_buffer(c, sizeof(x), x, sizeof(x));
	const uint32_t ys = producer_buffer(c, sizeof(y), y, sizeof(y));
	const uint32_t out = producer_buffer(c, 4, NULL, 0);

	const uint32_t bits = (uint32_t)producer_run(c, op, xs, out, ys);
	float d;

	memcpy(&d, &bits, 4);
	printf("x . y = %.1f (bits %08x; exact: %.1f)\n", d, bits, 0.5 * N * (N + 1) / 2);
	vyre_close(c);
	return 0;
}
