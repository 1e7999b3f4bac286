/* SPDX-License-Identifier: MIT */
/*
 * test_opmod_examples - the shipped example op modules (examples/ops,
 * docs/design.md 6.7) as vyred loads them: their module directories
 * ($(BUILD)/examples/ops/NAME/) staged into one ops directory with the
 * owner and modes the loader wants, loaded with vyred's loader, and every
 * op's loaded host function against an independent implementation written
 * here (a bitwise CRC32C, for crc32c and for the stream op crc32c_counted;
 * XXH64 written again from its description, and
 * the system's libxxhash when there is one; a plain count; the dot
 * product's defined order as a partials array) on random sizes from 0 to
 * 1 MiB and random contents, in place, and with operands each op refuses.
 * Their PTX, when nvcc built it, must define each manifest's device_fn as
 * a .visible .func (without nvcc a stand-in text is staged, and said so).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tools/vyred/opmods.h"
#include "test_built.h"
#include "opmod_stage.h"
#include "test_rand.h"
#include "vyre/abi.h"

#define TEST_NAME "test_opmod_examples"
#include "test_check.h"

static const char *const names[] = {"crc32c", "hash64", "histogram", "dot"};
#define N_EXAMPLES 4

static char built[PATH_MAX]; /* $(BUILD)/examples/ops */
static char root[64];

/* ---- the independent implementations ---- */

/* XXH64 again, as its description reads: accumulate, converge, add length, tail, avalanche. */
#define XP1 11400714785074694791ull
#define XP2 14029467366897019727ull
#define XP3 1609587929392839161ull
#define XP4 9650029242287828579ull
#define XP5 2870177450012600261ull

static uint64_t rol(uint64_t v, int r)
{
	return (v << r) | (v >> (64 - r));
}

static uint64_t xround(uint64_t acc, uint64_t lane)
{
	acc += lane * XP2;
	acc = rol(acc, 31);
	return acc * XP1;
}

static uint64_t read64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8); /* x86 and arm64 Linux: little-endian */
	return v;
}

static uint64_t xxh64_plain(const uint8_t *p, size_t n, uint64_t seed)
{
	const uint8_t *end = p + n;
	uint64_t acc;

	if (n >= 32) {
		uint64_t a1 = seed + XP1 + XP2, a2 = seed + XP2, a3 = seed, a4 = seed - XP1;

		while (end - p >= 32) {
			a1 = xround(a1, read64(p));
			a2 = xround(a2, read64(p + 8));
			a3 = xround(a3, read64(p + 16));
			a4 = xround(a4, read64(p + 24));
			p += 32;
		}
		acc = rol(a1, 1) + rol(a2, 7) + rol(a3, 12) + rol(a4, 18);
		acc ^= xround(0, a1);
		acc = acc * XP1 + XP4;
		acc ^= xround(0, a2);
		acc = acc * XP1 + XP4;
		acc ^= xround(0, a3);
		acc = acc * XP1 + XP4;
		acc ^= xround(0, a4);
		acc = acc * XP1 + XP4;
	} else {
		acc = seed + XP5;
	}
	acc += n;
	while (end - p >= 8) {
		acc ^= xround(0, read64(p));
		acc = rol(acc, 27) * XP1 + XP4;
		p += 8;
	}
	if (end - p >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		acc ^= w * XP1;
		acc = rol(acc, 23) * XP2 + XP3;
		p += 4;
	}
	while (p < end) {
		acc ^= *p++ * XP5;
		acc = rol(acc, 11) * XP1;
	}
	acc ^= acc >> 33;
	acc *= XP2;
	acc ^= acc >> 29;
	acc *= XP3;
	acc ^= acc >> 32;
	return acc;
}

/* The reference XXH64 of the system's libxxhash, when installed: a third opinion. */
typedef unsigned long long xxh64_fn(const void *, size_t, unsigned long long);
static xxh64_fn *xxh64_lib;

/* The dot product's defined order (examples/ops/dot/dot.opmod): element i into partial i mod 1024,
 * then a pairwise tree. */
static float tree(float *v, unsigned n)
{
	if (n == 1)
		return v[0];
	for (unsigned l = 0; l < n / 2; l++)
		v[l] += v[l + n / 2];
	return tree(v, n / 2);
}

static uint32_t dot_ordered(const float *x, const float *y, size_t n)
{
	float partial[1024];
	uint32_t bits;

	for (unsigned l = 0; l < 1024; l++)
		partial[l] = 0.0f;
	for (size_t i = 0; i < n; i++)
		partial[i % 1024] = fmaf(x[i], y[i], partial[i % 1024]);
	const float d = tree(partial, 1024);

	if (d != d)
		return 0x7fc00000u;
	memcpy(&bits, &d, 4);
	return bits;
}

/* ---- staging the module directories ---- */

/* The whole file at @path in a malloc'ed buffer (NULL when it cannot be read). */
static char *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)len + 1)) && fread(buf, 1, (size_t)len, f) == (size_t)len) {
		buf[len] = 0;
		*n = (size_t)len;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Copies $(BUILD)/examples/ops/@m/@file into @dir as mode 0644; 1 if it was not there. */
static int stage(const char *dir, const char *m, const char *file)
{
	char from[PATH_MAX + 64];
	size_t n = 0;

	snprintf(from, sizeof(from), "%s/%s/%s", built, m, file);
	char *buf = read_all(from, &n);

	if (!buf)
		return 1;
	const int rc = opmod_stage_file(dir, file, buf, n, 0644);

	free(buf);
	return rc;
}

/* 1 when PTX text @ptx defines @fn as a .visible .func (the line that names it, then a '('). */
static int ptx_defines(const char *ptx, const char *fn)
{
	const size_t len = strlen(fn);

	for (const char *s = strstr(ptx, fn); s; s = strstr(s + 1, fn)) {
		const char *line = s;

		while (line > ptx && line[-1] != '\n')
			line--;
		if (s[len] == '(' && strncmp(line, ".visible .func", 14) == 0 &&
		    (s == ptx || s[-1] == ' ' || s[-1] == '\t' || s[-1] == ')'))
			return 1;
	}
	return 0;
}

static struct vyre_opmods t;
static char why[1024];

/* The ops directory with the four modules: 0, or -1. */
static int stage_all(const char *dir)
{
	int stand_ins = 0;

	if (mkdir(dir, 0755) != 0 || chmod(dir, 0755) != 0) {
		fprintf(stderr, TEST_NAME ": mkdir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < N_EXAMPLES; i++) {
		char file[64];

		snprintf(file, sizeof(file), "%s.opmod", names[i]);
		CHECK(stage(dir, names[i], file) == 0, "%s/%s/%s not staged", built, names[i],
		      file);
		snprintf(file, sizeof(file), "libvyre_op_%s.so", names[i]);
		CHECK(stage(dir, names[i], file) == 0, "%s/%s/%s not staged", built, names[i],
		      file);
		snprintf(file, sizeof(file), "%s.ptx", names[i]);
		const int ptx = stage(dir, names[i], file);

#ifdef VYRE_OPMOD_PTX_BUILT
		CHECK(ptx == 0, "%s/%s/%s: nvcc was found, yet there is no PTX", built, names[i],
		      file);
#endif
		if (ptx == 1) {
			char text[256];

			snprintf(text, sizeof(text),
				 "// stand-in for %s's device code: built without nvcc\n",
				 names[i]);
			opmod_stage_file(dir, file, text, strlen(text), 0644);
			stand_ins++;
		}
	}
	if (stand_ins)
		printf(TEST_NAME ": no nvcc: %d stand-in PTX texts staged (the loader does not "
				 "interpret PTX; the device code is not checked here)\n",
		       stand_ins);
	return 0;
}

/* Every loaded op's device_fn is defined in its module's PTX (only when nvcc built it). */
static void ptx_names_device_fns(void)
{
	for (uint32_t i = 0; i < t.n_ops; i++) {
		const struct vyre_opmod_loaded *op = &t.ops[i];
		const struct vyre_opmod_module *m = &t.modules[op->module];
		char *text = malloc(m->ptx_bytes + 1);

		if (!text)
			return;
		memcpy(text, m->ptx, m->ptx_bytes);
		text[m->ptx_bytes] = 0;
#ifdef VYRE_OPMOD_PTX_BUILT
		CHECK(ptx_defines(text, op->spec->device_fn), "%s: its PTX does not define %s",
		      op->spec->name, op->spec->device_fn);
		CHECK(!ptx_defines(text, "vyre_op_no_such_device"), "the PTX check finds anything");
#else
		CHECK(!ptx_defines(text, op->spec->device_fn), "%s: the stand-in defines %s",
		      op->spec->name, op->spec->device_fn);
#endif
		free(text);
	}
}

/* ---- the ops against the independent implementations ---- */

#define MAX_IN (1u << 20)
static uint8_t *in, *outb;
static float *xf, *yf; /* the dot product's vectors */
static uint64_t rng = 0x6f706d6f64ull;

/* A random size: small ones often, every size below 80, some up to 1 MiB. */
static size_t pick_size(int i)
{
	if (i < 80)
		return (size_t)i;
	switch (splitmix64(&rng) % 4) {
	case 0:
		return splitmix64(&rng) % 4096;
	case 1:
		return splitmix64(&rng) % 70000;
	case 2:
		return MAX_IN - splitmix64(&rng) % 64;
	default:
		return splitmix64(&rng) % (MAX_IN + 1);
	}
}

static void fill(uint8_t *p, size_t n)
{
	const int kind = (int)(splitmix64(&rng) % 4);

	for (size_t k = 0; k < n; k++)
		p[k] = kind == 0   ? (uint8_t)splitmix64(&rng)
		       : kind == 1 ? (uint8_t)(k * 7)
		       : kind == 2 ? (uint8_t)(splitmix64(&rng) % 3)
				   : (uint8_t)(k % 251 == 0 ? 0xff : 'a');
}

/* @n random floats: finite of many scales, with a few zeros, subnormals and (rarely) specials. */
static void fill_floats(float *f, size_t n, int specials)
{
	for (size_t k = 0; k < n; k++) {
		const uint64_t r = splitmix64(&rng);

		switch (r % 64) {
		case 0:
			f[k] = r & 64 ? -0.0f : 0.0f;
			break;
		case 1: {
			const uint32_t sub = (uint32_t)(r >> 8) & 0x807fffffu; /* subnormal */

			memcpy(&f[k], &sub, 4);
			break;
		}
		case 2:
			f[k] = specials ? (r & 64 ? INFINITY : NAN) : 1.0f;
			break;
		default:
			f[k] = ldexpf((float)((int64_t)(r >> 8) % 2000001 - 1000000) / 1e6f,
				      (int)((r >> 40) % 40) - 20);
		}
	}
}

static int run(const struct vyre_opmod_loaded *op, const void *src, size_t n, void *out,
	       size_t out_n, const void *table, size_t table_n, uint32_t param, uint64_t *result)
{
	const struct vyre_op_host_args a = {src,   n,	    out,   out_n,
					    table, table_n, param, VYRE_OP_MODULE_ABI};

	return op->host(&a, result);
}

/* crc32c, or crc32c_counted, whose host function gets the counted bytes as crc32c's gets its input
 */
static void check_crc32c(const struct vyre_opmod_loaded *op)
{
	uint64_t result = 0;
	uint8_t out[8];

	CHECK(run(op, "123456789", 9, out, 4, NULL, 0, 0, &result) == 0 && result == 0xe3069283u,
	      "%s check value: %llx", op->spec->name, (unsigned long long)result);
	for (int i = 0; i < 300; i++) {
		const size_t n = pick_size(i);
		const uint32_t seed = i % 3 ? 0 : (uint32_t)splitmix64(&rng);

		fill(in, n);
		memset(out, 0xa5, sizeof(out));
		const int rc = run(op, in, n, out, sizeof(out), NULL, 0, seed, &result);
		const uint32_t want = opmod_stage_crc32c(seed, in, n);
		uint32_t got;

		memcpy(&got, out, 4);
		CHECK(rc == 0 && got == want && result == want && out[4] == 0xa5 && out[7] == 0xa5,
		      "%s %d: %zu bytes seed %08x: rc %d, %08x vs %08x", op->spec->name, i, n, seed,
		      rc, got, want);
	}
	/* in place: the CRC over its own first word */
	fill(in, 64);
	const uint32_t want = opmod_stage_crc32c(0, in, 64);

	CHECK(run(op, in, 64, in, 64, NULL, 0, 0, &result) == 0 && result == want &&
		  memcmp(in, &want, 4) == 0,
	      "%s in place", op->spec->name);
	CHECK(run(op, in, 9, out, 3, NULL, 0, 0, &result) == VYRE_E_INVAL, "%s: 3-byte output",
	      op->spec->name);
	CHECK(run(op, NULL, 9, out, 4, NULL, 0, 0, &result) == VYRE_E_INVAL, "%s: no input",
	      op->spec->name);
}

static void check_hash64(const struct vyre_opmod_loaded *op)
{
	static const struct {
		const char *s;
		uint64_t h;
	} known[] = {{"", 0xef46db3751d8e999ull},
		     {"a", 0xd24ec4f1a98c6e5bull},
		     {"abc", 0x44bc2cf5ad770999ull},
		     {"123456789", 0x8cb841db40e6ae83ull},
		     {"The quick brown fox jumps over the lazy dog", 0x0b242d361fda71bcull}};
	uint64_t result = 0;
	uint8_t out[12];

	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		const size_t n = strlen(known[k].s);

		CHECK(run(op, known[k].s, n, out, 8, NULL, 0, 0, &result) == 0 &&
			  result == known[k].h &&
			  xxh64_plain((const uint8_t *)known[k].s, n, 0) == known[k].h,
		      "XXH64(\"%s\"): %016llx", known[k].s, (unsigned long long)result);
	}
	for (int i = 0; i < 300; i++) {
		const size_t n = pick_size(i);
		const uint32_t seed = i % 2 ? 0 : (uint32_t)splitmix64(&rng);

		fill(in, n);
		memset(out, 0xa5, sizeof(out));
		const int rc = run(op, in, n, out, sizeof(out), NULL, 0, seed, &result);
		const uint64_t want = xxh64_plain(in, n, seed);
		uint64_t got;

		memcpy(&got, out, 8);
		CHECK(rc == 0 && got == want && result == want && out[8] == 0xa5 && out[11] == 0xa5,
		      "hash64 %d: %zu bytes seed %08x: rc %d, %016llx vs %016llx", i, n, seed, rc,
		      (unsigned long long)got, (unsigned long long)want);
		CHECK(!xxh64_lib || xxh64_lib(in, n, seed) == want,
		      "hash64 %d: libxxhash says %016llx", i, xxh64_lib(in, n, seed));
	}
	fill(in, 100);
	const uint64_t want = xxh64_plain(in, 100, 7);

	CHECK(run(op, in, 100, in, 100, NULL, 0, 7, &result) == 0 && result == want &&
		  memcmp(in, &want, 8) == 0,
	      "hash64 in place");
	CHECK(run(op, in, 9, out, 7, NULL, 0, 0, &result) == VYRE_E_INVAL, "hash64: 7-byte output");
}

static void check_histogram(const struct vyre_opmod_loaded *op)
{
	uint32_t want[256];
	uint64_t result = 0;

	for (int i = 0; i < 200; i++) {
		const size_t n = pick_size(i);

		fill(in, n);
		memset(want, 0, sizeof(want));
		for (size_t k = 0; k < n; k++)
			want[in[k]]++;
		memset(outb, 0xa5, 1028);
		const int rc = run(op, in, n, outb, 1028, NULL, 0, 0, &result);

		CHECK(rc == 0 && memcmp(outb, want, 1024) == 0 && result == n &&
			  outb[1024] == 0xa5 && outb[1027] == 0xa5,
		      "histogram %d: %zu bytes: rc %d result %llu", i, n, rc,
		      (unsigned long long)result);
	}
	/* in place: the counts of the output's own old bytes */
	fill(in, 4096);
	memset(want, 0, sizeof(want));
	for (size_t k = 0; k < 4096; k++)
		want[in[k]]++;
	CHECK(run(op, in, 4096, in, 4096, NULL, 0, 0, &result) == 0 && memcmp(in, want, 1024) == 0,
	      "histogram in place");
	CHECK(run(op, in, 9, outb, 1020, NULL, 0, 0, &result) == VYRE_E_INVAL,
	      "histogram: 1020-byte output");
}

static void check_dot(const struct vyre_opmod_loaded *op)
{
	float *x = xf, *y = yf;
	uint64_t result = 0;
	uint8_t out[8];

	/* small exact cases */
	const float a3[3] = {1, 2, 3}, b3[3] = {4, 5, 6};

	CHECK(run(op, a3, 12, out, 4, b3, 12, 0, &result) == 0 && result == 0x42000000u,
	      "dot (1,2,3).(4,5,6) = 32: %llx", (unsigned long long)result);
	CHECK(run(op, NULL, 0, out, 4, NULL, 0, 0, &result) == 0 && result == 0,
	      "dot of nothing is +0");
	for (int i = 0; i < 200; i++) {
		const size_t n = pick_size(i) / 4;

		fill_floats(x, n, i % 10 == 9);
		fill_floats(y, n, 0);
		memset(out, 0xa5, sizeof(out));
		const int rc = run(op, x, 4 * n, out, sizeof(out), y, 4 * n, 0, &result);
		const uint32_t want = dot_ordered(x, y, n);
		uint32_t got;

		memcpy(&got, out, 4);
		CHECK(rc == 0 && got == want && result == want && out[4] == 0xa5,
		      "dot %d: %zu floats: rc %d, %08x vs %08x", i, n, rc, got, want);
	}
	/* the order matters: a sum whose value depends on it */
	for (size_t k = 0; k < 2048; k++) {
		x[k] = k % 1024 == 0 ? 1e8f : 1.0f;
		y[k] = 1.0f;
	}
	float seq = 0.0f;
	uint32_t seq_bits;

	for (size_t k = 0; k < 2048; k++)
		seq = fmaf(x[k], y[k], seq);
	memcpy(&seq_bits, &seq, 4);
	CHECK(run(op, x, 4 * 2048, out, 4, y, 4 * 2048, 0, &result) == 0 &&
		  result == dot_ordered(x, y, 2048) && result != seq_bits,
	      "dot in its order, not in sequence: %08llx, in sequence %08x",
	      (unsigned long long)result, seq_bits);
	fill_floats(x, 64, 0);
	fill_floats(y, 64, 0);
	const uint32_t want = dot_ordered(x, y, 64);

	CHECK(run(op, x, 256, x, 256, y, 256, 0, &result) == 0 && result == want &&
		  memcmp(x, &want, 4) == 0,
	      "dot in place");
	CHECK(run(op, x, 10, out, 4, y, 10, 0, &result) == VYRE_E_INVAL, "dot: 10 bytes");
	CHECK(run(op, x, 16, out, 4, y, 12, 0, &result) == VYRE_E_INVAL, "dot: unequal lengths");
	CHECK(run(op, x, 16, out, 3, y, 16, 0, &result) == VYRE_E_INVAL, "dot: 3-byte output");
	CHECK(run(op, x, 16, out, 4, NULL, 0, 0, &result) == VYRE_E_INVAL, "dot: no table");
}

static void loads_and_checks(void)
{
	char dir[sizeof(root) + 16];

	snprintf(dir, sizeof(dir), "%s/ops.d", root);
	if (stage_all(dir) != 0)
		return;
	const int rc = vyre_opmods_load(dir, geteuid(), &t, NULL, NULL, why, sizeof(why));

	/* crc32c's module has a second op, crc32c_counted */
	CHECK(rc == 0 && t.n_modules == N_EXAMPLES && t.n_ops == N_EXAMPLES + 1,
	      "load: %d (%s), %u modules %u ops", rc, why, t.n_modules, t.n_ops);
	if (rc)
		return;
	ptx_names_device_fns();

	const struct vyre_opmod_loaded *op[N_EXAMPLES];

	for (int i = 0; i < N_EXAMPLES; i++) {
		op[i] = vyre_opmods_find(&t, names[i]);
		CHECK(op[i] && op[i]->spec->pure && !op[i]->spec->stream &&
			  op[i]->spec->in == VYRE_OPMOD_IN_READ &&
			  op[i]->spec->out == VYRE_OPMOD_OUT_WRITE &&
			  strcmp(t.modules[op[i]->module].man.module, names[i]) == 0,
		      "%s: loaded as written", names[i]);
		if (!op[i])
			return;
	}
	CHECK(op[0]->spec->param == VYRE_OPMOD_PARAM_WORD &&
		  op[1]->spec->param == VYRE_OPMOD_PARAM_WORD &&
		  op[2]->spec->param == VYRE_OPMOD_PARAM_NONE &&
		  op[3]->spec->param == VYRE_OPMOD_PARAM_TABLE,
	      "params");
	check_crc32c(op[0]);
	const struct vyre_opmod_loaded *counted = vyre_opmods_find(&t, "crc32c_counted");

	CHECK(counted && counted->spec->pure && counted->spec->stream &&
		  counted->spec->in == VYRE_OPMOD_IN_COUNTED &&
		  counted->spec->out == VYRE_OPMOD_OUT_WRITE &&
		  counted->spec->param == VYRE_OPMOD_PARAM_WORD && counted->module == op[0]->module,
	      "crc32c_counted: loaded as written, a stream op of crc32c's module");
	if (counted)
		check_crc32c(counted);
	check_hash64(op[1]);
	check_histogram(op[2]);
	check_dot(op[3]);

	/* every op refuses another ABI */
	uint8_t out[1024] = {0};
	uint64_t result;

	for (int i = 0; i < N_EXAMPLES; i++) {
		const struct vyre_op_host_args a = {in, 8, out, sizeof(out),
						    in, 8, 0,	VYRE_OP_MODULE_ABI + 1};

		CHECK(op[i]->host(&a, &result) == VYRE_E_INVAL, "%s: another ABI", names[i]);
	}
	vyre_opmods_free(&t);
}

int main(void)
{
	if (test_built_path(built, sizeof(built), "examples/ops") != 0)
		return 1;
	in = malloc(MAX_IN + 64);
	outb = malloc(2048);
	xf = malloc(MAX_IN);
	yf = malloc(MAX_IN);
	if (!in || !outb || !xf || !yf)
		return 1;
	void *lib = dlopen("libxxhash.so.0", RTLD_NOW | RTLD_LOCAL);

	if (lib)
		*(void **)&xxh64_lib = dlsym(lib, "XXH64");
	if (!xxh64_lib)
		printf(TEST_NAME ": no libxxhash.so.0: XXH64 against the plain one only\n");
	snprintf(root, sizeof(root), "/tmp/vyre-opmod-examples-XXXXXX");
	if (!mkdtemp(root))
		return 1;
	loads_and_checks();
	test_remove_tree(TEST_NAME, root);
	if (lib)
		dlclose(lib);
	free(in);
	free(outb);
	free(xf);
	free(yf);
	if (test_failures)
		return 1;
	printf(TEST_NAME ": ok\n");
	return 0;
}
