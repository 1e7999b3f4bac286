/* SPDX-License-Identifier: MIT */
/*
 * test_opmod_manifest - an op module's manifest (docs/design.md 6.7,
 * tools/vyred/opmod_manifest.h): a full manifest parses into every field
 * with the defaults filled in; each way a manifest can be wrong is refused
 * with its line and what was wrong; random and mutated text never crashes
 * the parser and always gets an answer; module op numbers are stable,
 * carry VYRE_OP_MODULE_BIT and change with the name and the module's
 * digest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/vyred/opmod_manifest.h"
#include "test_rand.h"
#include "vyre/abi.h"

#define TEST_NAME "test_opmod_manifest"
#include "test_check.h"

static struct vyre_opmod_manifest m;

static const char good[] = "# CRC32C and a 64-bit hash\n"
			   "module checksums\n"
			   "abi 1\n"
			   "host libchecksums.so\n"
			   "ptx checksums.ptx\n"
			   "cubin checksums.sm_90.cubin\n"
			   "\n"
			   "op crc32c\n"
			   "\tin read   the bytes to checksum\n"
			   "  out write word 0: the CRC32C   # trailing comment\n"
			   "param word the initial CRC\n"
			   "pure yes\n"
			   "stream yes\n"
			   "result the CRC32C of the input\n"
			   "op hash64\n"
			   "in counted\n"
			   "out update\n"
			   "result the hash\n"
			   "host_fn my_hash\n"
			   "device_fn my_hash_dev\n";

static int parse(const char *text, char *why, size_t why_len)
{
	return vyre_opmod_parse(text, strlen(text), &m, why, why_len);
}

static void good_manifest(void)
{
	char why[256];
	const int rc = parse(good, why, sizeof(why));

	CHECK(rc == 0, "the good manifest: %d (%s)", rc, why);
	if (rc)
		return;
	CHECK(strcmp(m.module, "checksums") == 0, "module %s", m.module);
	CHECK(m.abi == VYRE_OP_MODULE_ABI && !m.optional, "abi %u optional %d", m.abi, m.optional);
	CHECK(strcmp(m.host, "libchecksums.so") == 0 && strcmp(m.ptx, "checksums.ptx") == 0 &&
		  strcmp(m.cubin, "checksums.sm_90.cubin") == 0,
	      "files %s %s %s", m.host, m.ptx, m.cubin);
	CHECK(m.n_ops == 2, "%u ops", m.n_ops);
	const struct vyre_opmod_op *a = &m.ops[0], *b = &m.ops[1];

	CHECK(strcmp(a->name, "crc32c") == 0 && a->in == VYRE_OPMOD_IN_READ &&
		  a->out == VYRE_OPMOD_OUT_WRITE && a->param == VYRE_OPMOD_PARAM_WORD && a->pure &&
		  a->stream,
	      "crc32c: %s %u %u %u %u %u", a->name, a->in, a->out, a->param, a->pure, a->stream);
	CHECK(strcmp(a->in_doc, "the bytes to checksum") == 0, "in_doc '%s'", a->in_doc);
	CHECK(strcmp(a->out_doc, "word 0: the CRC32C") == 0, "out_doc '%s'", a->out_doc);
	CHECK(strcmp(a->param_doc, "the initial CRC") == 0, "param_doc '%s'", a->param_doc);
	CHECK(strcmp(a->result, "the CRC32C of the input") == 0, "result '%s'", a->result);
	CHECK(strcmp(a->host_fn, "vyre_op_crc32c_host") == 0 &&
		  strcmp(a->device_fn, "vyre_op_crc32c_device") == 0,
	      "default symbols %s %s", a->host_fn, a->device_fn);
	CHECK(strcmp(b->name, "hash64") == 0 && b->in == VYRE_OPMOD_IN_COUNTED &&
		  b->out == VYRE_OPMOD_OUT_UPDATE && b->param == VYRE_OPMOD_PARAM_NONE &&
		  !b->pure && !b->stream && b->in_doc[0] == 0,
	      "hash64 fields");
	CHECK(strcmp(b->host_fn, "my_hash") == 0 && strcmp(b->device_fn, "my_hash_dev") == 0,
	      "named symbols %s %s", b->host_fn, b->device_fn);

	/* no newline at the end, optional yes, the longest name */
	const char *edge = "module m\nabi 1\nhost h.so\nptx p.ptx\noptional yes\n"
			   "op a234567890123456789012345678901\nout write\nresult r";
	CHECK(parse(edge, why, sizeof(why)) == 0 && m.optional && m.cubin[0] == 0 &&
		  strlen(m.ops[0].name) == VYRE_OP_NAME_MAX,
	      "edge manifest: %s", why);
}

struct bad {
	const char *text;
	const char *says;
};

/* A valid head for the cases that break an op. */
#define HEAD "module m\nabi 1\nhost h.so\nptx p.ptx\n"

static const struct bad bads[] = {
    {"", "no `module`"},
    {"# only a comment\n\n", "no `module`"},
    {"abi 1\nmodule m\n", "line 1: the first key must be `module`"},
    {"module M\n", "line 1: module name `M`"},
    {"module m\nabi 2\n", "line 2: abi `2`: this vyred takes abi 1"},
    {"module m\nabi 1\nhost h.so\n", "module m: `abi`, `host` and `ptx` are required"},
    {"module m\nabi 1\nhost h.so\nop x\n", "line 4: `op` before the module's"},
    {HEAD, "module m: no `op`"},
    {HEAD "colour blue\n", "line 5: unknown key `colour`"},
    {HEAD "host g.so\n", "line 5: `host` twice"},
    {HEAD "in read\n", "line 5: op key `in` before any `op`"},
    {HEAD "host ../h.so\n", "`host` twice"},
    {"module m\nabi 1\nhost ../h.so\n", "line 3: `host ../h.so`: a file name beside the manifest"},
    {"module m\nabi 1\nhost ..\n", "line 3: `host ..`: a file name"},
    {"module m\nabi 1\noptional maybe\n", "line 3: `optional maybe`: yes or no"},
    {HEAD "op Crc\n", "line 5: op name `Crc`"},
    {HEAD "op 1crc\n", "line 5: op name `1crc`"},
    {HEAD "op a2345678901234567890123456789012\n", "op name `a2345678901234567890123456789012`"},
    {HEAD "op dfa_scan\n", "line 5: op name `dfa_scan` is a built-in op's"},
    {HEAD "op fill\n", "is a built-in op's"},
    {HEAD "op\n", "line 5: op name ``"},
    {HEAD "op a\nin read\nresult r\nop a\n", "line 8: op `a` twice"},
    {HEAD "op a\nin read\nin read\n", "line 7: op a: `in` twice"},
    {HEAD "op a\nin maybe\n", "line 6: `in maybe`: `maybe` is not one of its kinds"},
    {HEAD "op a\nout read\n", "`read` is not one of its kinds"},
    {HEAD "op a\nparam buffer\n", "`buffer` is not one of its kinds"},
    {HEAD "op a\nin read\n", "line 6: op a: no `result`"},
    {HEAD "op a\nresult r\n", "op a: neither `in` nor `out`"},
    {HEAD "op a\nparam word\nresult r\n", "neither `in` nor `out`"},
    {HEAD "op a\nout write\nstream yes\nresult r\n", "op a: `stream yes` without an input"},
    {HEAD "op a\npure maybe\n", "line 6: `pure maybe`: yes or no"},
    {HEAD "op a\npure\n", "line 6: `pure` without a value"},
    {HEAD "op a\nhost_fn 1abc\n", "`host_fn 1abc`: not a C symbol"},
    {HEAD "op a\ndevice_fn a-b\n", "`device_fn a-b`: not a C symbol"},
    {HEAD "op a\nin read\ncubin c.bin\n", "line 7: module key `cubin` inside op a"},
    {HEAD "op a\nin read\nresult r\nop b\nout write\n", "line 9: op b: no `result`"},
    {"module m\r\n", "line 1: a control character (byte 13)"},
};

static void bad_manifests(void)
{
	char why[256];

	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const int rc = parse(bads[i].text, why, sizeof(why));

		CHECK(rc == VYRE_E_INVAL && strstr(why, bads[i].says),
		      "case %zu: rc %d, said '%s', want '%s'", i, rc, why, bads[i].says);
	}
}

/* Limits: lines, line length, the whole text, descriptions, the number of ops, a zero byte. */
static void limits(void)
{
	static char text[2 * VYRE_OPMOD_MAX_BYTES];
	char why[256];
	size_t n;

	n = (size_t)snprintf(text, sizeof(text), HEAD);
	for (unsigned i = 0; i < VYRE_OP_MODULE_MAX_OPS + 1; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "op o%u\nout write\nresult r\n",
				      i);
	CHECK(vyre_opmod_parse(text, n, &m, why, sizeof(why)) == VYRE_E_INVAL &&
		  strstr(why, "more than 64 ops"),
	      "65 ops: %s", why);
	/* exactly 64 parse */
	n = (size_t)snprintf(text, sizeof(text), HEAD);
	for (unsigned i = 0; i < VYRE_OP_MODULE_MAX_OPS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "op o%u\nout write\nresult r\n",
				      i);
	CHECK(vyre_opmod_parse(text, n, &m, why, sizeof(why)) == 0 && m.n_ops == 64, "64 ops: %s",
	      why);

	n = (size_t)snprintf(text, sizeof(text), HEAD);
	for (unsigned i = 0; i < VYRE_OPMOD_MAX_LINES; i++)
		text[n++] = '\n';
	CHECK(vyre_opmod_parse(text, n, &m, why, sizeof(why)) == VYRE_E_INVAL &&
		  strstr(why, "over 1024 lines"),
	      "too many lines: %s", why);

	n = (size_t)snprintf(text, sizeof(text), "module m\n#");
	memset(text + n, 'x', VYRE_OPMOD_LINE_MAX);
	n += VYRE_OPMOD_LINE_MAX;
	CHECK(vyre_opmod_parse(text, n, &m, why, sizeof(why)) == VYRE_E_INVAL &&
		  strstr(why, "line 2: over 512 bytes"),
	      "long line: %s", why);

	memset(text, '\n', VYRE_OPMOD_MAX_BYTES + 1);
	CHECK(vyre_opmod_parse(text, VYRE_OPMOD_MAX_BYTES + 1, &m, why, sizeof(why)) ==
		      VYRE_E_INVAL &&
		  strstr(why, "over 65536 bytes"),
	      "long text: %s", why);

	n = (size_t)snprintf(text, sizeof(text), HEAD "op a\nresult ");
	memset(text + n, 'r', VYRE_OPMOD_DOC_MAX + 1);
	n += VYRE_OPMOD_DOC_MAX + 1;
	CHECK(vyre_opmod_parse(text, n, &m, why, sizeof(why)) == VYRE_E_INVAL &&
		  strstr(why, "`result`: 1-255 bytes"),
	      "long result: %s", why);

	n = (size_t)snprintf(text, sizeof(text), "module m\nabi 1");
	text[n - 1] = 0;
	CHECK(vyre_opmod_parse(text, n, &m, why, sizeof(why)) == VYRE_E_INVAL &&
		  strstr(why, "line 2: a zero byte"),
	      "zero byte: %s", why);

	/* a reason that does not fit is cut, never overrun; none at all is allowed */
	char small[8];

	memset(small, 'Z', sizeof(small));
	CHECK(parse(HEAD "colour blue\n", small, 6) == VYRE_E_INVAL && small[5] == 0 &&
		  small[6] == 'Z',
	      "short reason buffer");
	CHECK(parse(HEAD "colour blue\n", NULL, 0) == VYRE_E_INVAL, "no reason buffer");
	CHECK(vyre_opmod_parse(NULL, 0, &m, why, sizeof(why)) == VYRE_E_INVAL, "NULL text");
}

/* Random bytes and mutated good manifests: an answer every time, a reason with every refusal. */
static void fuzz(void)
{
	static char text[4096];
	char why[256];
	uint64_t rng = 0x6f706d6f64ull;

	for (int i = 0; i < 20000; i++) {
		size_t n;

		if (i % 2) {
			n = splitmix64(&rng) % sizeof(text);
			for (size_t k = 0; k < n; k++)
				text[k] = (char)(splitmix64(&rng) % 4
						     ? "abmo ptx\n#1"[splitmix64(&rng) % 11]
						     : (char)splitmix64(&rng));
		} else {
			n = sizeof(good) - 1;
			memcpy(text, good, n);
			for (int k = 0; k < 1 + (int)(splitmix64(&rng) % 4); k++)
				text[splitmix64(&rng) % n] = (char)splitmix64(&rng);
			n -= splitmix64(&rng) % 3 == 0 ? splitmix64(&rng) % n : 0;
		}
		const int rc = vyre_opmod_parse(text, n, &m, why, sizeof(why));

		CHECK(rc == 0 || (rc == VYRE_E_INVAL && why[0]), "fuzz %d: rc %d", i, rc);
		if (rc == 0)
			CHECK(m.n_ops >= 1 && m.n_ops <= VYRE_OP_MODULE_MAX_OPS && m.module[0] &&
				  m.host[0] && m.ptx[0],
			      "fuzz %d: accepted an incomplete manifest", i);
	}
}

static void numbers(void)
{
	CHECK(vyre_opmod_fnv1a64(VYRE_OPMOD_FNV_SEED, "", 0) == 0xcbf29ce484222325ull,
	      "fnv of nothing");
	CHECK(vyre_opmod_fnv1a64(VYRE_OPMOD_FNV_SEED, "a", 1) == 0xaf63dc4c8601ec8cull, "fnv of a");
	const uint32_t a = vyre_opmod_number("crc32c", 1), b = vyre_opmod_number("crc32c", 1);

	CHECK(a == b && (a & VYRE_OP_MODULE_BIT), "stable, marked: %08x %08x", a, b);
	CHECK(vyre_opmod_number("crc32c", 2) != a, "the digest changes the number");
	CHECK(vyre_opmod_number("crc32", 1) != a, "the name changes the number");
	CHECK(vyre_opmod_builtin_name("dfa_scan_counted") && !vyre_opmod_builtin_name("crc32c"),
	      "built-in names");
}

int main(void)
{
	good_manifest();
	bad_manifests();
	limits();
	fuzz();
	numbers();
	if (test_failures)
		return 1;
	printf("test_opmod_manifest: ok (%zu bad manifests refused)\n",
	       sizeof(bads) / sizeof(bads[0]));
	return 0;
}
