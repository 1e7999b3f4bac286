/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/program.h - a parsed vyre-submit input (docs/vyre-submit.md).
 *
 * vyre_submit_parse() turns the whole text into a program before anything is
 * sent, so a bad line changes nothing. It is pure (no I/O, no globals) and
 * safe on arbitrary bytes, which makes it the fuzzing entry point.
 */
#ifndef VYRE_TOOLS_SUBMIT_PROGRAM_H
#define VYRE_TOOLS_SUBMIT_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre.h"

#define VYRE_SUBMIT_NAME_MAX 63u /* longest buffer name, in bytes */

enum vyre_submit_init {
	VYRE_SUBMIT_INIT_ZERO = 0, /* buffer NAME BYTES */
	VYRE_SUBMIT_INIT_FILL,	   /* ... fill WORD: every word = fill */
	VYRE_SUBMIT_INIT_DATA,	   /* ... words/text/hex/counted/map, or a dfa table: data, zeros */
};

/* A buffer the program allocates (declared by `buffer` or `dfa`). */
struct vyre_submit_buffer {
	char name[VYRE_SUBMIT_NAME_MAX + 1];
	uint32_t bytes; /* a multiple of 4 */
	enum vyre_submit_init init;
	uint32_t fill;
	uint8_t *data; /* init DATA: data_len <= bytes bytes, owned by the program */
	uint32_t data_len;
	uint32_t line;
	int device; /* VYRE_BUF_DEVICE: zero-filled, seen only through items */
	/* named: created under this name in the domain; opened: found by it (then
	 * bytes is 0 here: its size is known when the program runs) */
	char shared[VYRE_BUFFER_NAME_MAX + 1];
	int opened;
};

/* An item operand: an immediate (a number, a raw @handle, 0) or a named buffer. */
struct vyre_submit_operand {
	uint32_t buffer; /* 0: immediate; else 1 + index into program.buffers */
	uint32_t value;	 /* the immediate */
};

/*
 * An op the program names that is no built-in op: a module op (docs/design.md
 * 6.7), whose number belongs to the vyred the program runs on, so it is
 * looked up (vyre_op_lookup) when the program runs.
 */
struct vyre_submit_op_name {
	char name[VYRE_OP_NAME_MAX + 1];
};

struct vyre_submit_item {
	uint32_t op;	  /* with op_name 0 */
	uint32_t op_name; /* 0: op is the number; else 1 + index into program.op_names */
	struct vyre_submit_operand in, out, param;
	struct vyre_submit_operand stream; /* stream=NAME: a DFA_REPORT's stream (design.md 6.8) */
	uint32_t flags;			   /* VYRE_SQE_* */
	struct vyre_item_range range;	   /* with VYRE_SQE_RANGE: in=OFF+LEN, out=OFF+LEN */
	uint64_t user_data;
	uint32_t line;
};

enum vyre_submit_print_format {
	VYRE_SUBMIT_PRINT_WORDS = 0, /* decimal u32 words */
	VYRE_SUBMIT_PRINT_HEX,	     /* bytes as hex pairs */
	VYRE_SUBMIT_PRINT_TEXT,	     /* bytes as a C-escaped string */
	VYRE_SUBMIT_PRINT_COUNTED,   /* word 0 as a length, then that many bytes as text */
	VYRE_SUBMIT_PRINT_REPORT, /* a DFA_REPORT output: total, overflow, id start end records */
};

enum vyre_submit_stmt_kind {
	VYRE_SUBMIT_STMT_BUFFER, /* allocate and initialise buffers[index] */
	VYRE_SUBMIT_STMT_ITEM,	 /* submit items[index] */
	VYRE_SUBMIT_STMT_WAIT,	 /* reap every submitted item, print their CQEs */
	VYRE_SUBMIT_STMT_PRINT,	 /* wait, then print buffers[index] */
	VYRE_SUBMIT_STMT_OPEN,	 /* open buffers[index] by its shared name */
	VYRE_SUBMIT_STMT_NAMES,	 /* print the domain's named buffers */
};

struct vyre_submit_stmt {
	enum vyre_submit_stmt_kind kind;
	uint32_t index;
	enum vyre_submit_print_format format;
	uint32_t line;
};

struct vyre_submit_program {
	struct vyre_submit_buffer *buffers;
	uint32_t n_buffers;
	struct vyre_submit_item *items;
	uint32_t n_items;
	struct vyre_submit_stmt *stmts;
	uint32_t n_stmts;
	struct vyre_submit_op_name *op_names;
	uint32_t n_op_names;
};

struct vyre_submit_error {
	uint32_t line;	 /* 1-based; 0 when not tied to a line */
	uint32_t column; /* 1-based byte column of the offending token, or 0 */
	char msg[160];
};

/* Limits that keep a hostile input from asking for unbounded memory. */
#define VYRE_SUBMIT_MAX_BUFFERS	   65536u
#define VYRE_SUBMIT_MAX_ITEMS	   (1u << 24)
#define VYRE_SUBMIT_MAX_DFA_STATES 65536u
#define VYRE_SUBMIT_MAX_OP_NAMES   256u

/*
 * vyre_submit_parse - parse @len bytes of @text. On success returns 0 and
 * *out owns a program (vyre_submit_program_free). On a malformed input returns
 * VYRE_E_INVAL and fills @err; VYRE_E_NOMEM when out of memory. Nothing is
 * allocated on failure.
 */
int vyre_submit_parse(const char *text, size_t len, struct vyre_submit_program **out,
		      struct vyre_submit_error *err);

void vyre_submit_program_free(struct vyre_submit_program *p);

/* Name of an op id ("SUM"), or NULL when it has none. */
const char *vyre_submit_op_name(uint32_t op);

#endif /* VYRE_TOOLS_SUBMIT_PROGRAM_H */
