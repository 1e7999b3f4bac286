/* SPDX-License-Identifier: MIT */
/*
 * The byte ops over counted buffers (docs/design.md 6.1) in the oracle:
 * BASE64_DECODE, HEX_DECODE, BYTEMAP and DFA_SCAN_COUNTED. Goldens (the RFC
 * 4648 section 10 vectors, both directions), malformed inputs that must
 * change nothing anywhere in the heap, output sizes, padding, in-place
 * decoding, the static checks and hazard sets, random round trips against
 * an encoder written here, and a heap rewritten by another process while
 * the ops run.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../gpu/ops.h"
#include "../gpu/ops_bytes.h"
#include "test_rand.h"

#define HEAP_BYTES 65536u
#define GUARD	   0xa5u
static _Alignas(64) uint8_t heap_mem[HEAP_BYTES];
static struct vyre_heap_view heap = {heap_mem, HEAP_BYTES};

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The RFC 4648 encoder, written independently of the oracle's decoder. */
static uint32_t b64_encode(const uint8_t *src, uint32_t n, char *dst)
{
	uint32_t o = 0;

	for (uint32_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)src[i] << 16;
		uint32_t left = n - i;

		if (left > 1)
			v |= (uint32_t)src[i + 1] << 8;
		if (left > 2)
			v |= src[i + 2];
		dst[o++] = b64_alphabet[(v >> 18) & 63];
		dst[o++] = b64_alphabet[(v >> 12) & 63];
		dst[o++] = left > 1 ? b64_alphabet[(v >> 6) & 63] : '=';
		dst[o++] = left > 2 ? b64_alphabet[v & 63] : '=';
	}
	return o;
}

static uint32_t load(uint64_t off)
{
	uint32_t v;

	memcpy(&v, heap_mem + off, 4);
	return v;
}

static void store(uint64_t off, uint32_t v)
{
	memcpy(heap_mem + off, &v, 4);
}

static void guard_heap(void)
{
	memset(heap_mem, GUARD, sizeof(heap_mem));
}

/* A counted buffer at @off: word 0 = @len, then @len bytes of @s. */
static void put_counted(uint64_t off, const void *s, uint32_t len)
{
	store(off, len);
	memcpy(heap_mem + off + 4, s, len);
}

static struct vyre_exec_item bytes_item(uint32_t op, uint64_t in, uint32_t in_bytes, uint64_t out,
					uint32_t out_bytes)
{
	return (struct vyre_exec_item){
	    .op = op, .in_off = in, .in_bytes = in_bytes, .out_off = out, .out_bytes = out_bytes};
}

static int run(const struct vyre_exec_item *it, uint64_t *r)
{
	*r = 0xdeadbeefull;
	return vyre_exec_one(&heap, it, r);
}

/*
 * The counted output at @out of @out_bytes holds @want (@d bytes), zero
 * bytes to the end of its last word, and the guard after that.
 */
static void assert_counted(uint64_t out, uint32_t out_bytes, const void *want, uint32_t d)
{
	uint64_t end = vyre_counted_bytes(d);

	assert_true(end <= out_bytes);
	assert_int_equal(load(out), d);
	if (d)
		assert_memory_equal(heap_mem + out + 4, want, d);
	for (uint64_t i = 4 + (uint64_t)d; i < end; i++)
		assert_int_equal(heap_mem[out + i], 0);
	for (uint64_t i = end; i < out_bytes; i++)
		assert_int_equal(heap_mem[out + i], GUARD);
}

/* @it fails with VYRE_E_INVAL, result 0, and not one byte of the heap changes. */
static void assert_inval_unchanged(const struct vyre_exec_item *it)
{
	static uint8_t before[HEAP_BYTES];
	uint64_t r;

	memcpy(before, heap_mem, sizeof(before));
	assert_int_equal(run(it, &r), VYRE_E_INVAL);
	assert_int_equal(r, 0);
	assert_memory_equal(before, heap_mem, sizeof(before));
}

/* BASE64_DECODE of the string @s from 0 to 4096; the status, and the result when 0. */
static int b64(const char *s, uint32_t len, uint64_t *r)
{
	guard_heap();
	put_counted(0, s, len);
	struct vyre_exec_item it =
	    bytes_item(VYRE_OP_BASE64_DECODE, 0, 4 + 4 * ((len + 3) / 4), 4096, 4096);
	return run(&it, r);
}

static void test_rfc4648_vectors(void **state)
{
	static const struct {
		const char *plain, *enc;
	} v[] = {
	    {"", ""},
	    {"f", "Zg=="},
	    {"fo", "Zm8="},
	    {"foo", "Zm9v"},
	    {"foob", "Zm9vYg=="},
	    {"fooba", "Zm9vYmE="},
	    {"foobar", "Zm9vYmFy"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const uint32_t n = (uint32_t)strlen(v[i].plain);
		char enc[16];
		uint64_t r;

		/* encoding direction: the encoder here agrees with the RFC */
		assert_int_equal(b64_encode((const uint8_t *)v[i].plain, n, enc), strlen(v[i].enc));
		assert_memory_equal(enc, v[i].enc, strlen(v[i].enc));
		/* decoding direction: the oracle */
		assert_int_equal(b64(v[i].enc, (uint32_t)strlen(v[i].enc), &r), 0);
		assert_int_equal(r, n);
		assert_counted(4096, 4096, v[i].plain, n);
	}
}

static void test_base64_malformed(void **state)
{
	static const char *const bad[] = {
	    "Zm9v!mFy",	 /* a character outside the alphabet */
	    "Zm9v YmFy", /* whitespace */
	    "Zm-v",	 /* the URL-safe alphabet is not the standard one */
	    "Zg==Zg==",	 /* padding in the middle */
	    "Z=9v",	 /* '=' inside a group */
	    "Zg=v",	 /* '=' then a character */
	    "Z===",	 /* three '=' */
	    "====",	 /* nothing but padding */
	    "Zh==",	 /* non-canonical: pad bits of 'h' are not zero */
	    "Zm9=",	 /* non-canonical with one '=' */
	    "Zm9vY",	 /* length not a multiple of 4 */
	    "Zg=",	 /* unpadded short group */
	    "Zg",	 /* no padding at all */
	    "Z",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const uint32_t len = (uint32_t)strlen(bad[i]);

		guard_heap();
		put_counted(0, bad[i], len);
		struct vyre_exec_item it =
		    bytes_item(VYRE_OP_BASE64_DECODE, 0, 4 + 4 * ((len + 3) / 4), 4096, 4096);
		assert_inval_unchanged(&it);
		it.out_off = 0; /* in place: still nothing written */
		it.out_bytes = it.in_bytes;
		assert_inval_unchanged(&it);
	}
	/* a byte with the high bit set, and NUL */
	guard_heap();
	put_counted(0, "Zm\x80v", 4);
	struct vyre_exec_item it = bytes_item(VYRE_OP_BASE64_DECODE, 0, 8, 4096, 64);
	assert_inval_unchanged(&it);
	put_counted(0, "Zm\0v", 4);
	assert_inval_unchanged(&it);
}

static void test_counted_length_bounds(void **state)
{
	uint64_t r;
	(void)state;
	guard_heap();
	put_counted(0, "Zm9vYmFy", 8);
	/* L larger than the buffer holds */
	struct vyre_exec_item it = bytes_item(VYRE_OP_BASE64_DECODE, 0, 8, 4096, 64);
	assert_inval_unchanged(&it);
	store(0, 0xffffffffu);
	it.in_bytes = 12;
	assert_inval_unchanged(&it);
	store(0, 0xfffffffcu);
	assert_inval_unchanged(&it);
	/* exactly the buffer */
	store(0, 8);
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 6);
	/* inputs and outputs shorter than one word */
	it = bytes_item(VYRE_OP_HEX_DECODE, 0, 0, 4096, 64);
	assert_inval_unchanged(&it);
	it = bytes_item(VYRE_OP_HEX_DECODE, 0, 12, 4096, 0);
	assert_inval_unchanged(&it);
	/* a zero-length counted input decodes to a zero-length output, word 0 alone */
	guard_heap();
	store(0, 0);
	it = bytes_item(VYRE_OP_HEX_DECODE, 0, 4, 4096, 4);
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 0);
	assert_counted(4096, 4, "", 0);
}

static void test_hex(void **state)
{
	uint64_t r;
	(void)state;
	guard_heap();
	put_counted(0, "00ff7Fa5DEADbeef", 16);
	struct vyre_exec_item it = bytes_item(VYRE_OP_HEX_DECODE, 0, 20, 4096, 64);
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 8);
	assert_counted(4096, 64, "\x00\xff\x7f\xa5\xde\xad\xbe\xef", 8);

	/* D = 3: one pad byte in the last word */
	guard_heap();
	put_counted(0, "616263", 6);
	it = bytes_item(VYRE_OP_HEX_DECODE, 0, 12, 4096, 8);
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 3);
	assert_counted(4096, 8, "abc", 3);

	static const char *const bad[] = {"616", "6g", "0x", "61 62", "6\xff", "G0"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const uint32_t len = (uint32_t)strlen(bad[i]);

		guard_heap();
		put_counted(0, bad[i], len);
		it = bytes_item(VYRE_OP_HEX_DECODE, 0, 4 + 4 * ((len + 3) / 4), 4096, 64);
		assert_inval_unchanged(&it);
	}
}

static void test_output_size(void **state)
{
	uint64_t r;
	(void)state;
	/* "foobar" is 6 bytes: the output needs 4 + 8 bytes, exactly */
	guard_heap();
	put_counted(0, "Zm9vYmFy", 8);
	struct vyre_exec_item it = bytes_item(VYRE_OP_BASE64_DECODE, 0, 12, 4096, 8);
	assert_inval_unchanged(&it);
	it.out_bytes = 12;
	assert_int_equal(run(&it, &r), 0);
	assert_counted(4096, 12, "foobar", 6);
	/* hex: 4 bytes need 8 */
	guard_heap();
	put_counted(0, "01020304", 8);
	it = bytes_item(VYRE_OP_HEX_DECODE, 0, 12, 4096, 4);
	assert_inval_unchanged(&it);
	it.out_bytes = 8;
	assert_int_equal(run(&it, &r), 0);
	assert_counted(4096, 8, "\x01\x02\x03\x04", 4);
	/* bytemap: D = L = 5 needs 4 + 8 */
	guard_heap();
	for (uint32_t b = 0; b < 256; b++)
		heap_mem[8192 + b] = (uint8_t)b;
	put_counted(0, "hello", 5);
	it = bytes_item(VYRE_OP_BYTEMAP, 0, 12, 4096, 8);
	it.table_off = 8192;
	it.table_bytes = 256;
	assert_inval_unchanged(&it);
	it.out_bytes = 12;
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 5);
	assert_counted(4096, 12, "hello", 5);
}

/* Every length 0..40 of each op: the pad bytes, and the words after them untouched. */
static void test_lengths_and_padding(void **state)
{
	uint8_t plain[64];
	char enc[128];
	uint64_t r;
	(void)state;
	for (uint32_t n = 0; n <= 40; n++) {
		for (uint32_t i = 0; i < n; i++)
			plain[i] = (uint8_t)(0x41 + 7 * i);
		const uint32_t e = b64_encode(plain, n, enc);

		guard_heap();
		put_counted(0, enc, e);
		struct vyre_exec_item it =
		    bytes_item(VYRE_OP_BASE64_DECODE, 0, 4 + 4 * ((e + 3) / 4), 4096, 256);
		assert_int_equal(run(&it, &r), 0);
		assert_int_equal(r, n);
		assert_counted(4096, 256, plain, n);

		char hex[128];
		for (uint32_t i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", plain[i]);
		guard_heap();
		put_counted(0, hex, 2 * n);
		it = bytes_item(VYRE_OP_HEX_DECODE, 0, 4 + 4 * ((2 * n + 3) / 4), 4096, 256);
		assert_int_equal(run(&it, &r), 0);
		assert_int_equal(r, n);
		assert_counted(4096, 256, plain, n);
	}
}

static void test_in_place(void **state)
{
	uint64_t r;
	(void)state;
	/* base64 in place: the output overwrites the text it came from */
	guard_heap();
	put_counted(0, "Zm9vYmFyZm9vYmE=", 16);
	struct vyre_exec_item it = bytes_item(VYRE_OP_BASE64_DECODE, 0, 20, 0, 20);
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 11);
	assert_int_equal(load(0), 11);
	assert_memory_equal(heap_mem + 4, "foobarfooba\0", 12);
	/* the words after the output keep the rest of the text */
	assert_memory_equal(heap_mem + 16, "YmE=", 4);
	assert_int_equal(heap_mem[20], GUARD);
	/* running it again decodes the bytes it wrote: not idempotent */
	assert_int_equal(run(&it, &r), VYRE_E_INVAL);

	guard_heap();
	put_counted(0, "48656c6c6f2c20776f726c64", 24);
	it = bytes_item(VYRE_OP_HEX_DECODE, 0, 28, 0, 28);
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 12);
	assert_memory_equal(heap_mem + 4, "Hello, world", 12);
	assert_memory_equal(heap_mem + 16, "20776f726c64", 12);

	/* a long in-place decode: every group overwrites bytes already read */
	uint8_t plain[3000];
	static char enc[4100];
	for (uint32_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 131 + 7);
	const uint32_t e = b64_encode(plain, sizeof(plain), enc);
	guard_heap();
	put_counted(0, enc, e);
	it = bytes_item(VYRE_OP_BASE64_DECODE, 0, 4 + e, 0, 4 + e);
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, sizeof(plain));
	assert_memory_equal(heap_mem + 4, plain, sizeof(plain));
}

static void test_bytemap(void **state)
{
	uint64_t r;
	(void)state;
	/* identity */
	guard_heap();
	for (uint32_t b = 0; b < 256; b++)
		heap_mem[8192 + b] = (uint8_t)b;
	uint8_t all[256];
	for (uint32_t b = 0; b < 256; b++)
		all[b] = (uint8_t)(255 - b);
	put_counted(0, all, 256);
	struct vyre_exec_item it = bytes_item(VYRE_OP_BYTEMAP, 0, 260, 4096, 512);
	it.table_off = 8192;
	it.table_bytes = 256;
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 256);
	assert_counted(4096, 512, all, 256);

	/* case folding to lower case, in place */
	for (uint32_t b = 0; b < 256; b++)
		heap_mem[8192 + b] = (uint8_t)(b >= 'A' && b <= 'Z' ? b + 32 : b);
	put_counted(0, "Hello, WORLD! \xc3\x89", 16);
	it = bytes_item(VYRE_OP_BYTEMAP, 0, 20, 0, 20);
	it.table_off = 8192;
	it.table_bytes = 260;
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 16);
	assert_memory_equal(heap_mem + 4, "hello, world! \xc3\x89", 16);

	/* a table shorter than 256 bytes */
	it.table_bytes = 252;
	assert_inval_unchanged(&it);
	it.table_bytes = 0;
	assert_inval_unchanged(&it);

	/* the table is the output: read whole before the first store */
	guard_heap();
	for (uint32_t b = 0; b < 256; b++)
		heap_mem[8192 + b] = (uint8_t)(b ^ 0x20);
	uint8_t text[200];
	for (uint32_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)(i % 64);
	put_counted(0, text, sizeof(text));
	it = bytes_item(VYRE_OP_BYTEMAP, 0, 204, 8192 - 4, 260);
	it.table_off = 8192;
	it.table_bytes = 256;
	assert_int_equal(run(&it, &r), 0);
	for (uint32_t i = 0; i < sizeof(text); i++)
		assert_int_equal(heap_mem[8192 + i], text[i] ^ 0x20);
}

/* A DFA accepting after every 'a' (test_ops' table). */
static uint32_t build_dfa(uint64_t off)
{
	store(off, 2);
	store(off + 4, 0);
	store(off + 8, 1u << 1);
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t b = 0; b < 256; b++)
			store(off + 12 + 4 * (s * 256 + b), b == 'a');
	return (uint32_t)vyre_dfa_table_bytes(2);
}

static void test_dfa_scan_counted(void **state)
{
	uint64_t r;
	(void)state;
	guard_heap();
	const uint32_t tb = build_dfa(16384);
	put_counted(0, "abaacaaaaaaa", 12);
	store(0, 5);
	struct vyre_exec_item it = bytes_item(VYRE_OP_DFA_SCAN_COUNTED, 0, 16, 4096, 4);
	it.table_off = 16384;
	it.table_bytes = tb;
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 3); /* "abaac": only the counted bytes */
	assert_int_equal(load(4096), 3);
	/* the same bytes through DFA_SCAN count the length word and the rest too */
	it.op = VYRE_OP_DFA_SCAN;
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 10);
	it.op = VYRE_OP_DFA_SCAN_COUNTED;
	/* L past the buffer, and a short input */
	store(0, 13);
	assert_inval_unchanged(&it);
	it.in_bytes = 0;
	assert_inval_unchanged(&it);
	/* a decoder's output scanned directly */
	guard_heap();
	build_dfa(16384);
	put_counted(0, "YWJhYWNhYWE=", 12); /* "abaacaaa" */
	it = bytes_item(VYRE_OP_BASE64_DECODE, 0, 16, 4096, 64);
	assert_int_equal(run(&it, &r), 0);
	it = bytes_item(VYRE_OP_DFA_SCAN_COUNTED, 4096, 64, 8192, 4);
	it.table_off = 16384;
	it.table_bytes = tb;
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 6);
	/* in place: word 0 becomes the count, after the scan */
	it.out_off = 4096;
	assert_int_equal(run(&it, &r), 0);
	assert_int_equal(r, 6);
	assert_int_equal(load(4096), 6);
}

static void test_partial_overlap(void **state)
{
	(void)state;
	guard_heap();
	put_counted(0, "Zm9vYmFy", 8);
	struct vyre_exec_item it = bytes_item(VYRE_OP_BASE64_DECODE, 0, 12, 4, 12);
	assert_inval_unchanged(&it);
	it.out_off = 8;
	it.in_off = 0;
	assert_inval_unchanged(&it);
	for (uint32_t b = 0; b < 256; b++)
		heap_mem[8192 + b] = (uint8_t)b;
	it = bytes_item(VYRE_OP_BYTEMAP, 4, 12, 0, 12);
	it.table_off = 8192;
	it.table_bytes = 256;
	store(4, 8);
	assert_inval_unchanged(&it);
}

static void test_static_checks(void **state)
{
	static const uint32_t ops[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE, VYRE_OP_BYTEMAP,
				       VYRE_OP_DFA_SCAN_COUNTED};
	struct vyre_op_access acc;
	(void)state;
	assert_int_equal(VYRE_OP_COUNT, 15);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const uint32_t op = ops[i];
		const int table = op == VYRE_OP_BYTEMAP || op == VYRE_OP_DFA_SCAN_COUNTED;
		struct vyre_work_item w = {op, 1, 2, table ? 3u : 0u};
		const int mask = vyre_op_operands(op);

		assert_true(mask > 0);
		assert_true(mask & VYRE_OPERAND_COUNTED);
		assert_int_equal(!!(mask & VYRE_OPERAND_TABLE), table);
		assert_int_equal(vyre_op_check_lengths(op, &w, 4, 4), 0);
		assert_int_equal(vyre_op_check_lengths(op, &w, 0, 4), VYRE_E_INVAL);
		assert_int_equal(vyre_op_check_lengths(op, &w, 4, 0), VYRE_E_INVAL);
		assert_int_equal(vyre_op_check_lengths(op, &w, 6, 8), VYRE_E_INVAL);
		w.input_handle = 0;
		assert_int_equal(vyre_op_check_lengths(op, &w, 4, 4), VYRE_E_INVAL);
		w.input_handle = 1;
		w.output_handle = 0;
		assert_int_equal(vyre_op_check_lengths(op, &w, 4, 4), VYRE_E_INVAL);
		w.output_handle = 2;
		if (table) {
			w.param = 0;
			assert_int_equal(vyre_op_check_lengths(op, &w, 4, 4), VYRE_E_INVAL);
			w.param = 3;
		}

		/* hazards: the table is read; in place and table == out are not idempotent */
		vyre_op_access(&w, &acc);
		assert_int_equal(acc.n_reads, table ? 2 : 1);
		assert_int_equal(acc.reads[0], 1);
		if (table)
			assert_int_equal(acc.reads[1], 3);
		assert_int_equal(acc.write, 2);
		assert_true(vyre_op_idempotent(&w));
		w.output_handle = 1;
		assert_false(vyre_op_idempotent(&w));
		if (table) {
			w.output_handle = 3;
			assert_false(vyre_op_idempotent(&w));
		}
	}
}

/* Random bytes through the encoder here, then the oracle's decoders; random garbage fails. */
static void test_random_round_trips(void **state)
{
	static uint8_t plain[4096];
	static char enc[8192];
	uint64_t rng = 0x5eedu, r;
	(void)state;
	for (uint32_t round = 0; round < 2000; round++) {
		const uint32_t n = (uint32_t)(splitmix64(&rng) % (round < 1000 ? 64 : 4000));

		for (uint32_t i = 0; i < n; i++)
			plain[i] = (uint8_t)splitmix64(&rng);
		const uint32_t e = b64_encode(plain, n, enc);

		guard_heap();
		put_counted(0, enc, e);
		struct vyre_exec_item it =
		    bytes_item(VYRE_OP_BASE64_DECODE, 0, 4 + e, 32768, 4 + 4 * ((n + 3) / 4));
		assert_int_equal(run(&it, &r), 0);
		assert_int_equal(r, n);
		assert_memory_equal(heap_mem + 32768 + 4, plain, n);

		/* a character outside the alphabet anywhere, or '=' before the last two */
		if (e == 0)
			continue;
		const uint32_t at = (uint32_t)(splitmix64(&rng) % e);
		uint8_t c = (uint8_t)splitmix64(&rng);

		while (c == '=' || memchr(b64_alphabet, c, 64))
			c++;
		enc[at] = (char)c;
		put_counted(0, enc, e);
		assert_inval_unchanged(&it);
		if (at + 2 < e) {
			heap_mem[4 + at] = '=';
			assert_inval_unchanged(&it);
		}
	}
}

/*
 * Another process rewrites the input, its length word and the BYTEMAP table
 * while the ops run. The input ends where an inaccessible page begins, so a
 * read past it faults; the guard bytes around the outputs catch stray
 * stores. Whatever status comes back, every access stays in range.
 */
#define RW_BYTES    65536u
#define RW_IN	    (RW_BYTES - 4096 - 1024)
#define RW_TABLE    2048u
#define RW_DFA	    4096u
#define RW_OUT	    8192u
#define RW_SCAN_OUT 12288u

static void rewrite_forever(uint8_t *m)
{
	static const char pick[] = "AZaz09+/=0fF\x00\xff";
	volatile uint8_t *v = m;
	uint64_t s = 99;

	while (!v[0]) {
		const uint64_t x = splitmix64(&s);

		v[RW_IN + 4 + (x % 1020)] = (uint8_t)pick[(x >> 32) % (sizeof(pick) - 1)];
		v[RW_TABLE + (x >> 16) % 1024] = (uint8_t)(x >> 24);
		if ((x >> 40) % 16 == 0)
			v[RW_IN + (x >> 44) % 4] = (uint8_t)(x >> 56); /* the length word */
	}
	_exit(0);
}

static void test_concurrent_rewrite(void **state)
{
	static const uint32_t ops[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE, VYRE_OP_BYTEMAP,
				       VYRE_OP_DFA_SCAN_COUNTED};
	uint8_t *m =
	    mmap(NULL, RW_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const uint32_t tb = (uint32_t)vyre_dfa_table_bytes(2);
	(void)state;
	assert_true(m != MAP_FAILED);
	memset(m, GUARD, RW_BYTES);
	m[0] = 0; /* the child's stop flag */
	/* a DFA table the child leaves alone: state 1 (accepting) after odd bytes */
	memset(m + RW_DFA, 0, tb);
	m[RW_DFA] = 2;
	m[RW_DFA + 8] = 2;
	for (uint32_t st = 0; st < 2; st++)
		for (uint32_t b = 0; b < 256; b++)
			m[RW_DFA + 12 + 4 * (256 * st + b)] = (uint8_t)(b & 1);
	assert_int_equal(mprotect(m + RW_IN + 1024, 4096, PROT_NONE), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		rewrite_forever(m);

	const struct vyre_heap_view h = {m, RW_IN + 1024};
	uint64_t r;
	for (uint32_t i = 0; i < 200000; i++) {
		struct vyre_exec_item it = {.op = ops[i % 4],
					    .in_off = RW_IN,
					    .in_bytes = 1024,
					    .out_off = i % 8 ? RW_OUT : RW_IN,
					    .out_bytes = 1024,
					    .table_off = RW_TABLE,
					    .table_bytes = 1024};
		if ((i & 1023) == 0)
			memcpy(m + RW_IN, "\x08\0\0\0Zm9vYmFy", 12);
		if (it.op == VYRE_OP_DFA_SCAN_COUNTED) {
			it.out_off = RW_SCAN_OUT;
			it.out_bytes = 4;
			it.table_off = RW_DFA;
			it.table_bytes = tb;
		}
		int rc = vyre_exec_one(&h, &it, &r);
		assert_true(rc == 0 || rc == VYRE_E_INVAL);
		assert_true(r <= 1020);
	}
	m[0] = 1;
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (uint32_t i = RW_OUT + 1024; i < RW_IN; i++)
		if (i < RW_SCAN_OUT || i >= RW_SCAN_OUT + 4)
			assert_int_equal(m[i], GUARD);
	munmap(m, RW_BYTES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc4648_vectors),
	    cmocka_unit_test(test_base64_malformed),
	    cmocka_unit_test(test_counted_length_bounds),
	    cmocka_unit_test(test_hex),
	    cmocka_unit_test(test_output_size),
	    cmocka_unit_test(test_lengths_and_padding),
	    cmocka_unit_test(test_in_place),
	    cmocka_unit_test(test_bytemap),
	    cmocka_unit_test(test_dfa_scan_counted),
	    cmocka_unit_test(test_partial_overlap),
	    cmocka_unit_test(test_static_checks),
	    cmocka_unit_test(test_random_round_trips),
	    cmocka_unit_test(test_concurrent_rewrite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
