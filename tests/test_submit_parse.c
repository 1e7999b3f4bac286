/* SPDX-License-Identifier: MIT */
/*
 * The vyre-submit parser (tools/submit/parse.c): what each statement
 * produces, the line and column of every error, and that arbitrary bytes
 * (mutated examples, random noise) never crash it or leak (run under ASan).
 * VYRE_TEST_SCALE multiplies the number of fuzz iterations.
 */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vyre/dfa.h"
#include "../tools/submit/numbers.h"
#include "../tools/submit/program.h"

static unsigned scale(void)
{
	const char *s = getenv("VYRE_TEST_SCALE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v > 0 ? (unsigned)v : 1;
}

static struct vyre_submit_program *parse_ok(const char *text)
{
	struct vyre_submit_program *p = NULL;
	struct vyre_submit_error err;
	int rc = vyre_submit_parse(text, strlen(text), &p, &err);

	if (rc)
		fail_msg("parse failed (%d) at %u:%u: %s", rc, err.line, err.column, err.msg);
	return p;
}

static void test_program_structure(void **state)
{
	(void)state;
	const char *text = "# a comment\n"
			   "buffer a 16 words 1 2 -1 0x10   # trailing comment\n"
			   "\n"
			   "buffer b 1K fill 0xdeadbeef\n"
			   "buffer c 4\n"
			   "item add a b 5\n"
			   "item SUM b c fence nodedupe id=77\n"
			   "item 42 @9 0\n"
			   "item DFA_SCAN a c b\n"
			   "wait\n"
			   "print b hex\n"
			   "print c\n"
			   "item FILL 0 a -2 nodedupe\n";
	struct vyre_submit_program *p = parse_ok(text);

	assert_int_equal(p->n_buffers, 3);
	assert_string_equal(p->buffers[0].name, "a");
	assert_int_equal(p->buffers[0].bytes, 16);
	assert_int_equal(p->buffers[0].init, VYRE_SUBMIT_INIT_DATA);
	assert_int_equal(p->buffers[0].data_len, 16);
	const uint8_t want_a[16] = {1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0};
	assert_memory_equal(p->buffers[0].data, want_a, 16);
	assert_int_equal(p->buffers[0].line, 2);
	assert_int_equal(p->buffers[1].bytes, 1024);
	assert_int_equal(p->buffers[1].init, VYRE_SUBMIT_INIT_FILL);
	assert_int_equal(p->buffers[1].fill, 0xdeadbeefu);
	assert_int_equal(p->buffers[2].init, VYRE_SUBMIT_INIT_ZERO);

	assert_int_equal(p->n_items, 5);
	const struct vyre_submit_item *it = p->items;
	assert_int_equal(it[0].op, VYRE_OP_ADD);
	assert_int_equal(it[0].in.buffer, 1);
	assert_int_equal(it[0].out.buffer, 2);
	assert_int_equal(it[0].param.buffer, 0);
	assert_int_equal(it[0].param.value, 5);
	assert_int_equal(it[0].user_data, 6); /* default id: the line number */
	assert_int_equal(it[0].flags, 0);
	assert_int_equal(it[1].op, VYRE_OP_SUM);
	assert_int_equal(it[1].flags, VYRE_SQE_FENCE | VYRE_SQE_NODEDUPE);
	assert_int_equal(it[1].user_data, 77);
	assert_int_equal(it[2].op, 42);
	assert_int_equal(it[2].in.buffer, 0);
	assert_int_equal(it[2].in.value, 9);
	assert_int_equal(it[2].out.value, 0);
	assert_int_equal(it[3].param.buffer, 2); /* a buffer name as PARAM: its handle */
	assert_int_equal(it[4].param.value, 0xfffffffeu);
	assert_int_equal(it[4].flags, VYRE_SQE_NODEDUPE);

	const enum vyre_submit_stmt_kind kinds[] = {
	    VYRE_SUBMIT_STMT_BUFFER, VYRE_SUBMIT_STMT_BUFFER, VYRE_SUBMIT_STMT_BUFFER,
	    VYRE_SUBMIT_STMT_ITEM,   VYRE_SUBMIT_STMT_ITEM,   VYRE_SUBMIT_STMT_ITEM,
	    VYRE_SUBMIT_STMT_ITEM,   VYRE_SUBMIT_STMT_WAIT,   VYRE_SUBMIT_STMT_PRINT,
	    VYRE_SUBMIT_STMT_PRINT,  VYRE_SUBMIT_STMT_ITEM,
	};
	assert_int_equal(p->n_stmts, sizeof(kinds) / sizeof(kinds[0]));
	for (uint32_t i = 0; i < p->n_stmts; i++)
		assert_int_equal(p->stmts[i].kind, kinds[i]);
	assert_int_equal(p->stmts[8].index, 1);
	assert_int_equal(p->stmts[8].format, VYRE_SUBMIT_PRINT_HEX);
	assert_int_equal(p->stmts[8].line, 11);
	assert_int_equal(p->stmts[9].format, VYRE_SUBMIT_PRINT_WORDS);
	assert_int_equal(p->stmts[10].index, 4);
	vyre_submit_program_free(p);

	p = parse_ok("");
	assert_int_equal(p->n_stmts, 0);
	vyre_submit_program_free(p);
	p = parse_ok("\n\n   # only comments\r\n\t\n");
	assert_int_equal(p->n_stmts, 0);
	vyre_submit_program_free(p);
}

static void test_text_hex_and_escapes(void **state)
{
	(void)state;
	struct vyre_submit_program *p =
	    parse_ok("buffer s 16 text \"a\\\"b\\\\c\\n\\t\\x41\\0#\"  # not part of it\n"
		     "buffer w 8 text plain\r\n");
	const uint8_t want_s[] = {'a', '"', 'b', '\\', 'c', '\n', '\t', 'A', 0, '#'};

	assert_int_equal(p->buffers[0].data_len, sizeof(want_s));
	assert_memory_equal(p->buffers[0].data, want_s, sizeof(want_s));
	assert_int_equal(p->buffers[1].data_len, 5);
	assert_memory_equal(p->buffers[1].data, "plain", 5);
	vyre_submit_program_free(p);
}

static void test_hex_rejects_quotes(void **state)
{
	(void)state;
	struct vyre_submit_program *p = parse_ok("buffer h 8 hex 00ff 10 Ab\n");
	const uint8_t want[] = {0x00, 0xff, 0x10, 0xab};

	assert_int_equal(p->buffers[0].data_len, 4);
	assert_memory_equal(p->buffers[0].data, want, 4);
	vyre_submit_program_free(p);
}

static void test_counted_and_map(void **state)
{
	(void)state;
	struct vyre_submit_program *p = parse_ok("buffer c 12 counted \"Zm9v\\0x\"\n"
						 "buffer e 4 counted \"\"\n"
						 "buffer m 260 map \"AB\" ab\n"
						 "item BASE64_DECODE c c\n"
						 "item hex_decode c e\n"
						 "item BYTEMAP c c m\n"
						 "item DFA_SCAN_COUNTED c e m\n"
						 "print c counted\n");
	const uint8_t want_c[] = {6, 0, 0, 0, 'Z', 'm', '9', 'v', 0, 'x'};
	const uint8_t want_e[] = {0, 0, 0, 0};

	assert_int_equal(p->buffers[0].data_len, sizeof(want_c));
	assert_memory_equal(p->buffers[0].data, want_c, sizeof(want_c));
	assert_int_equal(p->buffers[1].data_len, 4);
	assert_memory_equal(p->buffers[1].data, want_e, 4);
	assert_int_equal(p->buffers[2].data_len, 256);
	for (uint32_t b = 0; b < 256; b++)
		assert_int_equal(p->buffers[2].data[b], b == 'A' ? 'a' : b == 'B' ? 'b' : b);
	assert_int_equal(p->items[0].op, VYRE_OP_BASE64_DECODE);
	assert_int_equal(p->items[1].op, VYRE_OP_HEX_DECODE);
	assert_int_equal(p->items[2].op, VYRE_OP_BYTEMAP);
	assert_int_equal(p->items[2].param.buffer, 3);
	assert_int_equal(p->items[3].op, VYRE_OP_DFA_SCAN_COUNTED);
	assert_int_equal(p->stmts[p->n_stmts - 1].format, VYRE_SUBMIT_PRINT_COUNTED);
	assert_string_equal(vyre_submit_op_name(VYRE_OP_DFA_SCAN_COUNTED), "DFA_SCAN_COUNTED");
	assert_null(vyre_submit_op_name(VYRE_OP_COUNT));
	vyre_submit_program_free(p);
}

/* The table the parser built for buffer 0 is vyre_dfa_compile's of @pats. */
static void check_dfa_table(const struct vyre_submit_program *p,
			    const struct vyre_dfa_pattern *pats, uint32_t n)
{
	uint8_t *table;
	uint32_t bytes;

	assert_int_equal(
	    vyre_dfa_compile(pats, n, VYRE_SUBMIT_MAX_DFA_STATES, &table, &bytes, NULL), 0);
	assert_int_equal(p->buffers[0].bytes, bytes);
	assert_int_equal(p->buffers[0].data_len, bytes);
	assert_memory_equal(p->buffers[0].data, table, bytes);
	vyre_dfa_free(table);
}

static void test_dfa_statement(void **state)
{
	(void)state;
	/* bare and quoted patterns: ids are their places in the line */
	struct vyre_submit_program *p = parse_ok("dfa pats error \"warn\\n\" x\n");
	struct vyre_dfa_pattern pats[] = {{(const uint8_t *)"error", 5, 0, 0},
					  {(const uint8_t *)"warn\n", 5, 1, 0},
					  {(const uint8_t *)"x", 1, 2, 0}};

	assert_int_equal(p->n_buffers, 1);
	check_dfa_table(p, pats, 3);
	vyre_submit_program_free(p);

	/* labels: ID, ID/FLAGS, /FLAGS (the place as id), escapes of any byte */
	p = parse_ok("dfa rules 10:\"GET /admin\" 11/i:\"password\" 0x0c:\"\\x00\\xffMZ\" "
		     "/i:\"a\\\"b\\\\\\t\\0\" plain 4294967295:\"x\" 7/:\"y\" # comment\n");
	static const uint8_t bin[] = {0, 0xff, 'M', 'Z'};
	struct vyre_dfa_pattern labelled[] = {
	    {(const uint8_t *)"GET /admin", 10, 10, 0},
	    {(const uint8_t *)"password", 8, 11, VYRE_DFA_CASELESS},
	    {bin, 4, 12, 0},
	    {(const uint8_t *)"a\"b\\\t\0", 6, 3, VYRE_DFA_CASELESS},
	    {(const uint8_t *)"plain", 5, 4, 0},
	    {(const uint8_t *)"x", 1, UINT32_MAX, 0},
	    {(const uint8_t *)"y", 1, 7, 0},
	};
	assert_int_equal(p->n_buffers, 1);
	check_dfa_table(p, labelled, 7);
	vyre_submit_program_free(p);
}

static void test_device_buffers(void **state)
{
	(void)state;
	struct vyre_submit_program *p =
	    parse_ok("dfa pats ab\nbuffer t pats device\nbuffer d 8K device\nbuffer h d\n");

	assert_int_equal(p->n_buffers, 4);
	assert_false(p->buffers[0].device);
	assert_true(p->buffers[1].device);
	assert_int_equal(p->buffers[1].bytes, p->buffers[0].bytes); /* sized like pats */
	assert_int_equal(p->buffers[1].init, VYRE_SUBMIT_INIT_ZERO);
	assert_true(p->buffers[2].device);
	assert_int_equal(p->buffers[2].bytes, 8192);
	assert_false(p->buffers[3].device);
	assert_int_equal(p->buffers[3].bytes, 8192);
	vyre_submit_program_free(p);
}

/* in=OFF+LEN and out=OFF+LEN: an item on byte ranges (VYRE_SQE_RANGE, design.md 6.6). */
static void test_item_ranges(void **state)
{
	(void)state;
	struct vyre_submit_program *p = parse_ok("buffer a 64\nbuffer b 64\n"
						 "item COPY a b in=4+8 out=0x10+8 fence\n"
						 "item SUM a b 0 out=0+4\n"
						 "item COPY a b\n");

	assert_int_equal(p->n_items, 3);
	assert_int_equal(p->items[0].flags, VYRE_SQE_RANGE | VYRE_SQE_FENCE);
	assert_int_equal(p->items[0].range.in_offset, 4);
	assert_int_equal(p->items[0].range.in_length, 8);
	assert_int_equal(p->items[0].range.out_offset, 16);
	assert_int_equal(p->items[0].range.out_length, 8);
	assert_int_equal(p->items[1].flags, VYRE_SQE_RANGE);
	assert_int_equal(p->items[1].range.in_length, 0);
	assert_int_equal(p->items[1].range.out_length, 4);
	assert_int_equal(p->items[2].flags, 0);
	vyre_submit_program_free(p);
}

static void test_named_buffers(void **state)
{
	(void)state;
	struct vyre_submit_program *p = parse_ok("buffer a 8 words 1 2 named\n"
						 "buffer t 8 text \"named\"\n"
						 "buffer named 4 named\n"
						 "buffer d 16 device named\n"
						 "open job-1.out as out\n"
						 "open a as same\n"
						 "open shared_x\n"
						 "item ADD out same 1\n"
						 "names\n");

	assert_int_equal(p->n_buffers, 7);
	assert_string_equal(p->buffers[0].shared, "a");
	assert_int_equal(p->buffers[0].data_len, 8); /* `named` is no word of the data */
	assert_string_equal(p->buffers[1].shared, "");
	assert_memory_equal(p->buffers[1].data, "named", 5); /* quoted: the data */
	assert_string_equal(p->buffers[2].shared, "named");
	assert_true(p->buffers[3].device);
	assert_string_equal(p->buffers[3].shared, "d");
	assert_true(p->buffers[4].opened);
	assert_string_equal(p->buffers[4].name, "out");
	assert_string_equal(p->buffers[4].shared, "job-1.out");
	assert_int_equal(p->buffers[4].bytes, 0);
	assert_string_equal(p->buffers[6].name, "shared_x");
	assert_int_equal(p->stmts[4].kind, VYRE_SUBMIT_STMT_OPEN);
	assert_int_equal(p->stmts[4].index, 4);
	assert_int_equal(p->stmts[8].kind, VYRE_SUBMIT_STMT_NAMES);
	vyre_submit_program_free(p);
}

struct bad_case {
	const char *text;
	uint32_t line, column;
	const char *msg; /* a substring of the message */
};

static void test_errors_name_line_and_column(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
	    {"frobnicate\n", 1, 1, "unknown statement"},
	    {"\n\nbuffer\n", 3, 1, "usage: buffer"},
	    {"buffer a 6\n", 1, 10, "multiple of 4"},
	    {"buffer a 4G\n", 1, 10, "not a buffer size"},
	    {"buffer a 5000000000\n", 1, 10, "not a buffer size"},
	    {"buffer 9a 4\n", 1, 8, "not a valid buffer name"},
	    {"buffer fence 4\n", 1, 8, "not a valid buffer name"},
	    {"buffer a 4\nbuffer a 8\n", 2, 8, "already declared on line 1"},
	    {"buffer a 4 words 1 2\n", 1, 18, "do not fit"},
	    {"buffer a 4 words\n", 1, 12, "at least one value"},
	    {"buffer a 4 fill\n", 1, 12, "'fill' takes one word"},
	    {"buffer a 4 fill 0x100000000\n", 1, 17, "not a 32-bit number"},
	    {"buffer a 4 text \"unterminated\n", 1, 17, "unterminated string"},
	    {"buffer a 4 text \"bad \\q\"\n", 1, 22, "unknown escape \\q"},
	    {"buffer a 4 text \"\\x4\"\n", 1, 18, "two hex digits"},
	    {"buffer a 4 text \"ab\"cd\n", 1, 21, "followed by a blank"},
	    {"buffer a 4 text ab\"cd\n", 1, 19, "quote inside a word"},
	    {"buffer a 4 text a b\n", 1, 19, "one word"},
	    {"buffer a 4 hex abc\n", 1, 16, "even number"},
	    {"buffer a 4 hex zz\n", 1, 16, "not hex"},
	    {"buffer a 4 hex \"\"\n", 1, 16, "even number"},
	    {"buffer a 4 zeros\n", 1, 12, "unknown initialiser"},
	    {"buffer a 4 text a\x01\n", 1, 18, "control byte 0x01"},
	    {"buffer a 4 device fill 1\n", 1, 19, "starts zero-filled"},
	    {"buffer a nothere\n", 1, 10, "not a buffer size"},
	    {"buffer a 4 device\nprint a\n", 2, 7, "is a device buffer"},
	    {"buffer a 8 counted abcde\n", 1, 20, "do not fit in 8 bytes"},
	    {"buffer a 0 counted \"\"\n", 1, 20, "do not fit in 0 bytes"},
	    {"buffer a 8 counted a b\n", 1, 12, "'counted' takes one"},
	    {"buffer a 256 map ab\n", 1, 14, "usage: map"},
	    {"buffer a 256 map ab c\n", 1, 21, "differ in length"},
	    {"buffer a 252 map a b\n", 1, 10, "needs 256 bytes"},
	    {"buffer a 4\nprint a count\n", 2, 9, "unknown format"},
	    {"dfa d\n", 1, 1, "usage: dfa"},
	    {"dfa d a \"\"\n", 1, 9, "an empty pattern"},
	    {"dfa d 1/x:\"a\"\n", 1, 7, "unknown pattern flag 'x'"},
	    {"dfa d x:\"a\"\n", 1, 7, "pattern id 'x' is not a u32"},
	    {"dfa d 4294967296:\"a\"\n", 1, 7, "not a u32"},
	    {"dfa d 1:\"a\"b\n", 1, 12, "followed by a blank"},
	    {"dfa d 1:a\"b\"\n", 1, 10, "quote inside a word"},
	    {"dfa d:\"x\" a\n", 1, 5, "a dfa's name takes no label"},
	    {"buffer a 4 text 1:\"ab\"\n", 1, 17, "only dfa patterns take a label"},
	    {"item ADD a b\n", 1, 10, "unknown buffer 'a'"},
	    {"buffer a 4\nitem FOO a a\n", 2, 6, "unknown op"},
	    {"buffer a 4\nitem ADD a 5\n", 2, 12, "not a buffer"},
	    {"buffer a 4\nitem ADD a a 1 fence fence\n", 2, 22, "given twice"},
	    {"buffer a 4\nitem ADD a a 1 bogus\n", 2, 16, "unexpected 'bogus'"},
	    {"buffer a 4\nitem ADD a a id=x\n", 2, 14, "64-bit number"},
	    {"buffer a 4\nitem ADD a a in=4\n", 2, 14, "OFFSET+LENGTH"},
	    {"buffer a 4\nitem ADD a a out=x+4\n", 2, 14, "64-bit offset"},
	    {"buffer a 4\nitem ADD a a in=0+4 in=0+4\n", 2, 21, "given twice"},
	    {"buffer a 4\nitem ADD a a @x\n", 2, 14, "not a handle"},
	    {"item NOP 0\n", 1, 1, "usage: item"},
	    {"buffer a 4\nitem NOP 0 0 id=5\nitem NOP 0 0\nitem NOP 0 0 id=3\n", 4, 0,
	     "item id 3 already used on line 3"},
	    {"print x\n", 1, 7, "unknown buffer 'x'"},
	    {"buffer a 4\nprint a bin\n", 2, 9, "unknown format"},
	    {"buffer a 4\nprint a words extra\n", 2, 1, "usage: print"},
	    {"wait now\n", 1, 6, "takes no arguments"},
	    {"\"buffer\" a 4\n", 1, 1, "not a string"},
	    {"buffer a 4\n\0", 2, 0, "NUL byte"},
	    {"buffer _a 4 named\n", 1, 8, "not a buffer name of the domain"},
	    {"buffer a 4 text named\n", 1, 12, "at least one value"},
	    {"open\n", 1, 1, "usage: open"},
	    {"open a as\n", 1, 1, "usage: open"},
	    {"open a b c\n", 1, 1, "usage: open"},
	    {"open .a as b\n", 1, 6, "not a buffer name of the domain"},
	    {"open \"a\"\n", 1, 6, "not a buffer name of the domain"},
	    {"open 9a\n", 1, 6, "give it one with 'open 9a as LOCAL'"},
	    {"open 9a as fence\n", 1, 12, "give it one"},
	    {"buffer a 4\nopen x as a\n", 2, 11, "already declared on line 1"},
	    {"open x\nbuffer b x\n", 2, 10, "known only when it is opened"},
	    {"names all\n", 1, 7, "takes no arguments"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		struct vyre_submit_program *p = (struct vyre_submit_program *)&p;
		struct vyre_submit_error err;
		size_t len = strlen(c->text) + (strcmp(c->msg, "NUL byte") == 0);
		int rc = vyre_submit_parse(c->text, len, &p, &err);

		if (rc != VYRE_E_INVAL || p != NULL || err.line != c->line ||
		    err.column != c->column || !strstr(err.msg, c->msg))
			fail_msg("case %zu: rc %d line %u col %u msg '%s'; want line %u col %u "
				 "'%s'",
				 i, rc, err.line, err.column, err.msg, c->line, c->column, c->msg);
	}
}

static void test_dfa_state_limit(void **state)
{
	(void)state;
	/* 10000 words of 10 letters, distinct in 3: 1 + 26 + 676 + 10000 * 8 states */
	const uint32_t words = 10000;
	char *text = malloc(16 + 11 * (size_t)words);
	struct vyre_submit_program *p;
	struct vyre_submit_error err;
	size_t at = 8;

	assert_non_null(text);
	memcpy(text, "dfa big ", 8);
	for (uint32_t i = 0; i < words; i++) {
		for (uint32_t k = 0, v = i; k < 10; k++, v /= 26)
			text[at++] = (char)('a' + (k < 4 ? v % 26 : (i * 7 + k) % 26));
		text[at++] = ' ';
	}
	text[at++] = '\n';
	assert_int_equal(vyre_submit_parse(text, at, &p, &err), VYRE_E_INVAL);
	assert_int_equal(err.line, 1);
	if (!strstr(err.msg, "at least 80703 DFA states and 82972792 table bytes"))
		fail_msg("%s", err.msg);
	free(text);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

static void test_examples_parse(void **state)
{
	(void)state;
	glob_t g;

	assert_int_equal(glob(VYRE_SRCDIR "/examples/*.vs", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 4);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		char *text = read_file(g.gl_pathv[i], &len);
		struct vyre_submit_program *p;
		struct vyre_submit_error err;

		if (vyre_submit_parse(text, len, &p, &err))
			fail_msg("%s:%u:%u: %s", g.gl_pathv[i], err.line, err.column, err.msg);
		assert_true(p->n_items > 0);
		vyre_submit_program_free(p);
		free(text);
	}
	globfree(&g);
}

static uint32_t rng_state = 0x2545f491u;

static uint32_t rnd(uint32_t bound)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state % bound;
}

/* Mutations that keep inputs near the grammar: tokens the parser looks for. */
static const char *const dictionary[] = {
    "buffer ",
    "dfa ",
    "item ",
    "wait",
    "print ",
    "fill ",
    "words ",
    "text ",
    "hex ",
    "fence",
    "nodedupe",
    "id=",
    "@",
    "0x",
    "\"",
    "\\x",
    "#",
    "\n",
    " 4 ",
    "-1 ",
    "4K ",
    "a ",
    "ADD ",
    "DFA_SCAN ",
    "\\",
    "4294967295 ",
    "counted ",
    "map ",
    "BASE64_DECODE ",
    "BYTEMAP ",
};

static size_t mutate(char *buf, size_t len, size_t cap)
{
	for (uint32_t k = 1 + rnd(4); k > 0; k--) {
		uint32_t op = rnd(4);
		size_t at = len ? rnd((uint32_t)len) : 0;

		if (op == 0 && len > 0) { /* flip a byte */
			buf[at] = (char)rnd(256);
		} else if (op == 1 && len > 1) { /* delete a run */
			size_t run = 1 + rnd(8);

			run = run > len - at ? len - at : run;
			memmove(buf + at, buf + at + run, len - at - run);
			len -= run;
		} else { /* insert a dictionary token */
			const char *w = dictionary[rnd(sizeof(dictionary) / sizeof(dictionary[0]))];
			size_t wl = strlen(w);

			if (len + wl > cap)
				continue;
			memmove(buf + at + wl, buf + at, len - at);
			memcpy(buf + at, w, wl);
			len += wl;
		}
	}
	return len;
}

static void test_fuzz_never_crashes(void **state)
{
	(void)state;
	glob_t g;
	enum { CAP = 1 << 16 };
	char *buf = malloc(CAP);
	unsigned ok = 0, rejected = 0;

	assert_non_null(buf);
	assert_int_equal(glob(VYRE_SRCDIR "/examples/*.vs", 0, NULL, &g), 0);
	for (unsigned iter = 0; iter < 20000 * scale(); iter++) {
		size_t len;
		char *seed = read_file(g.gl_pathv[iter % g.gl_pathc], &len);

		memcpy(buf, seed, len);
		free(seed);
		if (iter % 10 == 9) { /* pure noise now and then */
			len = rnd(512);
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)rnd(256);
		}
		for (uint32_t r = rnd(6); r > 0; r--)
			len = mutate(buf, len, CAP);
		struct vyre_submit_program *p = NULL;
		struct vyre_submit_error err;
		int rc = vyre_submit_parse(buf, len, &p, &err);

		if (rc == 0) {
			ok++;
			assert_non_null(p);
			vyre_submit_program_free(p);
		} else {
			rejected++;
			assert_int_equal(rc, VYRE_E_INVAL);
			assert_null(p);
			assert_true(err.msg[0] != '\0');
			assert_non_null(memchr(err.msg, '\0', sizeof(err.msg)));
		}
	}
	/* both outcomes must be exercised or the mutator is useless */
	assert_true(ok > 100);
	assert_true(rejected > 100);
	globfree(&g);
	free(buf);
}

/* Byte counts: the spellings -H and buffer sizes share (issue 14: -H 256M was refused). */
static void test_byte_counts(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint64_t max;
		int ok;
		uint64_t v;
	} cases[] = {
	    {"0", UINT64_MAX, 1, 0},
	    {"4096", UINT64_MAX, 1, 4096},
	    {"0x1000", UINT64_MAX, 1, 4096},
	    {"1k", UINT64_MAX, 1, 1024},
	    {"256M", UINT64_MAX, 1, 256ull << 20},
	    {"2G", UINT64_MAX, 1, 2ull << 30},
	    {"3g", UINT32_MAX, 1, 3ull << 30},
	    {"4G", UINT32_MAX, 0, 0},
	    {"17179869183G", UINT64_MAX, 1, 17179869183ull << 30},
	    {"17179869184G", UINT64_MAX, 0, 0},
	    {"0x10M", UINT64_MAX, 0, 0},
	    {"M", UINT64_MAX, 0, 0},
	    {"", UINT64_MAX, 0, 0},
	    {"12T", UINT64_MAX, 0, 0},
	    {"-1", UINT64_MAX, 0, 0},
	    {"1.5M", UINT64_MAX, 0, 0},
	    {"18446744073709551616", UINT64_MAX, 0, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		const int rc = vyre_submit_bytes(cases[i].s, cases[i].max, &v);

		if ((rc == 0) != cases[i].ok || (rc == 0 && v != cases[i].v))
			fail_msg("'%s': rc %d value %llu", cases[i].s, rc, (unsigned long long)v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_byte_counts),
	    cmocka_unit_test(test_program_structure),
	    cmocka_unit_test(test_text_hex_and_escapes),
	    cmocka_unit_test(test_hex_rejects_quotes),
	    cmocka_unit_test(test_counted_and_map),
	    cmocka_unit_test(test_dfa_statement),
	    cmocka_unit_test(test_device_buffers),
	    cmocka_unit_test(test_named_buffers),
	    cmocka_unit_test(test_item_ranges),
	    cmocka_unit_test(test_errors_name_line_and_column),
	    cmocka_unit_test(test_dfa_state_limit),
	    cmocka_unit_test(test_examples_parse),
	    cmocka_unit_test(test_fuzz_never_crashes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
