/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.c - what every suite reports through: the row printer (table
 * and JSON) and the clock, below the suites and the vyre-bench driver.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"

uint64_t vyre_bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void vyre_bench_report(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
		       const char *metric, double value, const char *unit)
{
	int decimals = strcmp(unit, "x") == 0 ? 3 : fabs(value) < 100 ? 2 : 0;

	printf("%-8s %-34s %-10s %16.*f %s\n", suite, name, metric, decimals, value, unit);
	fflush(stdout);
	if (!ctx->json)
		return;
	fputs("{\"suite\":", ctx->json);
	json_string(ctx->json, suite);
	fputs(",\"name\":", ctx->json);
	json_string(ctx->json, name);
	fputs(",\"metric\":", ctx->json);
	json_string(ctx->json, metric);
	if (isfinite(value))
		fprintf(ctx->json, ",\"value\":%.17g", value);
	else
		fputs(",\"value\":null", ctx->json);
	fputs(",\"unit\":", ctx->json);
	json_string(ctx->json, unit);
	fputs("}\n", ctx->json);
	fflush(ctx->json);
}
