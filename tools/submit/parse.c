/* SPDX-License-Identifier: MIT */
/*
 * The vyre-submit parser: one statement per line, checked completely before
 * the caller sends anything. Grammar and meaning: docs/vyre-submit.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../ring/proto.h"
#include "dfa_compile.h"
#include "lex.h"
#include "numbers.h"
#include "program.h"

static const char *const op_names[VYRE_OP_COUNT] = {
    [VYRE_OP_NOP] = "NOP",
    [VYRE_OP_FILL] = "FILL",
    [VYRE_OP_COPY] = "COPY",
    [VYRE_OP_ADD] = "ADD",
    [VYRE_OP_XOR] = "XOR",
    [VYRE_OP_MUL] = "MUL",
    [VYRE_OP_SUM] = "SUM",
    [VYRE_OP_MAX] = "MAX",
    [VYRE_OP_DFA_SCAN] = "DFA_SCAN",
    [VYRE_OP_BASE64_DECODE] = "BASE64_DECODE",
    [VYRE_OP_HEX_DECODE] = "HEX_DECODE",
    [VYRE_OP_BYTEMAP] = "BYTEMAP",
    [VYRE_OP_DFA_SCAN_COUNTED] = "DFA_SCAN_COUNTED",
};

const char *vyre_submit_op_name(uint32_t op)
{
	return op < VYRE_OP_COUNT ? op_names[op] : NULL;
}

/* Open-addressing index from buffer name to 1 + buffer index. */
struct name_index {
	uint32_t *slot;
	uint32_t cap; /* power of two, more than twice the entries */
};

struct parser {
	struct vyre_submit_program *p;
	uint32_t cap_buffers, cap_items, cap_stmts;
	struct name_index names;
	struct vyre_submit_line line;
	uint32_t lineno;
	struct vyre_submit_error *err;
};

__attribute__((format(printf, 3, 4))) static int
perr(struct parser *ps, const struct vyre_submit_token *t, const char *fmt, ...)
{
	va_list ap;

	ps->err->line = ps->lineno;
	ps->err->column = t ? t->column : 0;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
	va_end(ap);
	return VYRE_E_INVAL;
}

/* Grows *arr (of *cap elements of @size) to hold @need; fails past @limit. */
static int grow(void **arr, uint32_t *cap, uint32_t need, size_t size, uint32_t limit)
{
	if (need <= *cap)
		return 0;
	if (need > limit)
		return VYRE_E_INVAL;
	uint32_t cap2 = *cap ? *cap : 16;

	while (cap2 < need)
		cap2 = cap2 > limit / 2 ? limit : cap2 * 2;
	void *a = realloc(*arr, (size_t)cap2 * size);

	if (!a)
		return VYRE_E_NOMEM;
	*arr = a;
	*cap = cap2;
	return 0;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Slot holding @name, or the empty slot where it would go. */
static uint32_t *name_slot(const struct parser *ps, const char *name)
{
	uint32_t mask = ps->names.cap - 1;

	for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
		uint32_t *s = &ps->names.slot[i];

		if (*s == 0 || strcmp(ps->p->buffers[*s - 1].name, name) == 0)
			return s;
	}
}

static int name_index_reserve(struct parser *ps, uint32_t entries)
{
	if ((uint64_t)entries * 2 < ps->names.cap)
		return 0;
	uint32_t cap = ps->names.cap ? ps->names.cap * 2 : 64;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return VYRE_E_NOMEM;
	uint32_t *old = ps->names.slot;

	ps->names.slot = slot;
	ps->names.cap = cap;
	for (uint32_t i = 0; i < ps->p->n_buffers; i++)
		*name_slot(ps, ps->p->buffers[i].name) = i + 1;
	free(old);
	return 0;
}

static int lookup_buffer(const struct parser *ps, const char *name)
{
	if (ps->names.cap == 0)
		return 0;
	return (int)*name_slot(ps, name);
}

static int is_keyword(const char *s)
{
	return strcmp(s, "fence") == 0 || strcmp(s, "nodedupe") == 0;
}

static int valid_name(const struct vyre_submit_token *t)
{
	if (t->quoted || t->len == 0 || t->len > VYRE_SUBMIT_NAME_MAX || is_keyword(t->s))
		return 0;
	for (uint32_t i = 0; i < t->len; i++) {
		char c = t->s[i];
		int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';

		if (!alpha && !(i > 0 && ((c >= '0' && c <= '9') || c == '-' || c == '.')))
			return 0;
	}
	return 1;
}

/* Unsigned decimal or 0x-hex number that fits in @max. */
/* A u32 word: a number, or -N for its two's complement. */
static int word(struct parser *ps, const struct vyre_submit_token *t, uint32_t *out)
{
	uint64_t v;
	int neg = !t->quoted && t->s[0] == '-';

	if (t->quoted || vyre_submit_number(t->s + neg, UINT32_MAX, &v))
		return perr(ps, t, "'%s' is not a 32-bit number", t->s);
	*out = neg ? (uint32_t)(0u - (uint32_t)v) : (uint32_t)v;
	return 0;
}

static int buffer_size(struct parser *ps, const struct vyre_submit_token *t, uint32_t *out)
{
	uint64_t v;

	if (t->quoted || t->len == 0)
		return perr(ps, t, "'%s' is not a buffer size", t->s);
	if (vyre_submit_bytes(t->s, UINT32_MAX, &v))
		return perr(ps, t, "'%s' is not a buffer size (bytes, or K/M/G suffixed, < 4 GiB)",
			    t->s);
	if (v % 4)
		return perr(ps, t, "buffer size %llu is not a multiple of 4",
			    (unsigned long long)v);
	*out = (uint32_t)v;
	return 0;
}

static int add_stmt(struct parser *ps, enum vyre_submit_stmt_kind kind, uint32_t index,
		    enum vyre_submit_print_format format)
{
	struct vyre_submit_program *p = ps->p;
	int rc = grow((void **)&p->stmts, &ps->cap_stmts, p->n_stmts + 1, sizeof(*p->stmts),
		      UINT32_MAX / 2);

	if (rc)
		return rc == VYRE_E_INVAL ? perr(ps, NULL, "too many statements") : rc;
	p->stmts[p->n_stmts++] = (struct vyre_submit_stmt){kind, index, format, ps->lineno};
	return 0;
}

/*
 * Appends a buffer named by token @t, made by a statement of @kind (BUFFER
 * or OPEN); on success *out points at it (data not yet set).
 */
static int add_buffer(struct parser *ps, const struct vyre_submit_token *t,
		      enum vyre_submit_stmt_kind kind, struct vyre_submit_buffer **out)
{
	struct vyre_submit_program *p = ps->p;
	int rc;

	if (!valid_name(t))
		return perr(ps, t,
			    "'%s' is not a valid buffer name (letter or _, then "
			    "letters, digits, _ - .; at most %u bytes)",
			    t->s, VYRE_SUBMIT_NAME_MAX);
	int prev = lookup_buffer(ps, t->s);

	if (prev)
		return perr(ps, t, "buffer '%s' already declared on line %u", t->s,
			    p->buffers[prev - 1].line);
	rc = grow((void **)&p->buffers, &ps->cap_buffers, p->n_buffers + 1, sizeof(*p->buffers),
		  VYRE_SUBMIT_MAX_BUFFERS);
	if (rc)
		return rc == VYRE_E_INVAL
			   ? perr(ps, t, "more than %u buffers", VYRE_SUBMIT_MAX_BUFFERS)
			   : rc;
	rc = name_index_reserve(ps, p->n_buffers + 1);
	if (rc)
		return rc;
	struct vyre_submit_buffer *b = &p->buffers[p->n_buffers];

	memset(b, 0, sizeof(*b));
	memcpy(b->name, t->s, t->len + 1);
	b->line = ps->lineno;
	*name_slot(ps, b->name) = ++p->n_buffers;
	*out = b;
	return add_stmt(ps, kind, p->n_buffers - 1, 0);
}

/* Decodes the initialiser tokens tok[first..n) of kind @kind into b->data. */
static int buffer_data(struct parser *ps, struct vyre_submit_buffer *b, const char *kind,
		       uint32_t first)
{
	const struct vyre_submit_line *l = &ps->line;
	uint64_t len = 0;

	if (first >= l->n)
		return perr(ps, &l->tok[first - 1], "'%s' needs at least one value", kind);
	for (uint32_t i = first; i < l->n; i++)
		len += strcmp(kind, "words") == 0 ? 4
		       : strcmp(kind, "hex") == 0 ? l->tok[i].len / 2
						  : l->tok[i].len;
	if (strcmp(kind, "text") == 0 && l->n - first != 1)
		return perr(ps, &l->tok[first + 1], "'text' takes one word or \"string\"");
	if (len > b->bytes)
		return perr(ps, &l->tok[first], "%llu bytes of %s do not fit in %u bytes",
			    (unsigned long long)len, kind, b->bytes);
	b->data = malloc(len ? len : 1);
	if (!b->data)
		return VYRE_E_NOMEM;
	b->init = VYRE_SUBMIT_INIT_DATA;
	b->data_len = (uint32_t)len;
	uint8_t *d = b->data;

	for (uint32_t i = first; i < l->n; i++) {
		const struct vyre_submit_token *t = &l->tok[i];

		if (strcmp(kind, "words") == 0) {
			uint32_t w;
			int rc = word(ps, t, &w);

			if (rc)
				return rc;
			for (int k = 0; k < 4; k++)
				*d++ = (uint8_t)(w >> (8 * k));
		} else if (strcmp(kind, "hex") == 0) {
			if (t->quoted || t->len % 2)
				return perr(ps, t, "hex needs an even number of hex digits");
			for (uint32_t k = 0; k < t->len; k += 2) {
				int hi = vyre_submit_hex_digit((unsigned char)t->s[k]),
				    lo = vyre_submit_hex_digit((unsigned char)t->s[k + 1]);

				if (hi < 0 || lo < 0)
					return perr(ps, t, "'%s' is not hex", t->s);
				*d++ = (uint8_t)(hi * 16 + lo);
			}
		} else {
			memcpy(d, t->s, t->len);
			d += t->len;
		}
	}
	return 0;
}

/* BYTES of a buffer statement: a size, or the name of a buffer declared before (its size). */
static int size_or_name(struct parser *ps, const struct vyre_submit_token *t, uint32_t *out)
{
	int like = t->quoted ? 0 : lookup_buffer(ps, t->s);

	if (!like)
		return buffer_size(ps, t, out);
	if (ps->p->buffers[like - 1].opened)
		return perr(ps, t, "the size of '%s' is known only when it is opened", t->s);
	*out = ps->p->buffers[like - 1].bytes;
	return 0;
}

/* counted STRING: word 0 = its byte length, then its bytes (docs/design.md 6.1). */
static int buffer_counted(struct parser *ps, struct vyre_submit_buffer *b)
{
	const struct vyre_submit_line *l = &ps->line;

	if (l->n != 5)
		return perr(ps, &l->tok[3], "'counted' takes one word or \"string\"");
	const struct vyre_submit_token *t = &l->tok[4];

	if (b->bytes < 4 || t->len > b->bytes - 4)
		return perr(ps, t, "4 + %u counted bytes do not fit in %u bytes", (unsigned)t->len,
			    b->bytes);
	b->data = malloc(4 + (size_t)t->len);
	if (!b->data)
		return VYRE_E_NOMEM;
	b->init = VYRE_SUBMIT_INIT_DATA;
	b->data_len = 4 + (uint32_t)t->len;
	for (int k = 0; k < 4; k++)
		b->data[k] = (uint8_t)(t->len >> (8 * k));
	memcpy(b->data + 4, t->s, t->len);
	return 0;
}

/* map FROM TO: a BYTEMAP table, identity but for byte FROM[i] -> TO[i]. */
static int buffer_map(struct parser *ps, struct vyre_submit_buffer *b)
{
	const struct vyre_submit_line *l = &ps->line;

	if (l->n != 6)
		return perr(ps, &l->tok[3], "usage: map FROM TO (two strings of one length)");
	const struct vyre_submit_token *from = &l->tok[4], *to = &l->tok[5];

	if (from->len != to->len)
		return perr(ps, to, "map FROM and TO differ in length (%u and %u bytes)",
			    (unsigned)from->len, (unsigned)to->len);
	if (b->bytes < 256)
		return perr(ps, &l->tok[2], "a byte map needs 256 bytes, the buffer has %u",
			    b->bytes);
	b->data = malloc(256);
	if (!b->data)
		return VYRE_E_NOMEM;
	b->init = VYRE_SUBMIT_INIT_DATA;
	b->data_len = 256;
	for (uint32_t i = 0; i < 256; i++)
		b->data[i] = (uint8_t)i;
	for (uint32_t i = 0; i < from->len; i++)
		b->data[(uint8_t)from->s[i]] = (uint8_t)to->s[i];
	return 0;
}

/* 1 when @t is the bare word @w. */
static int is_word(const struct vyre_submit_token *t, const char *w)
{
	return !t->quoted && strcmp(t->s, w) == 0;
}

/* A name other clients of the domain find the buffer by (docs/design.md 5). */
static int shared_name(struct parser *ps, const struct vyre_submit_token *t, char *out)
{
	if (t->quoted || !vyre_msg_name_ok(t->s, t->len))
		return perr(ps, t,
			    "'%s' is not a buffer name of the domain (1 to %u bytes of letters, "
			    "digits, . _ -, starting with a letter or digit)",
			    t->s, VYRE_BUFFER_NAME_MAX);
	memcpy(out, t->s, t->len + 1);
	return 0;
}

/*
 * buffer NAME BYTES|OTHER [fill W | words W... | text S | hex HH... | counted S | map F T |
 * device] [named]
 */
static int parse_buffer(struct parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_buffer *b;
	uint32_t bytes = 0;
	int rc, named = l->n > 3 && is_word(&l->tok[l->n - 1], "named");

	/* the initialisers read the tokens before a final `named` */
	ps->line.n -= (uint32_t)named;
	if (l->n < 3)
		return perr(ps, &l->tok[0],
			    "usage: buffer NAME BYTES [fill WORD | words W... | "
			    "text STRING | hex HEX... | counted STRING | map FROM TO | device] "
			    "[named]");
	rc = size_or_name(ps, &l->tok[2], &bytes);
	if (rc)
		return rc;
	rc = add_buffer(ps, &l->tok[1], VYRE_SUBMIT_STMT_BUFFER, &b);
	if (!rc && named)
		rc = shared_name(ps, &l->tok[1], b->shared);
	if (rc)
		return rc;
	b->bytes = bytes;
	if (l->n == 3)
		return 0;
	const struct vyre_submit_token *kind = &l->tok[3];

	if (!kind->quoted && strcmp(kind->s, "device") == 0) {
		if (l->n != 4)
			return perr(ps, &l->tok[4],
				    "a device buffer starts zero-filled: COPY data into it");
		b->device = 1;
		return 0;
	}

	if (!kind->quoted && strcmp(kind->s, "fill") == 0) {
		if (l->n != 5)
			return perr(ps, kind, "'fill' takes one word");
		b->init = VYRE_SUBMIT_INIT_FILL;
		return word(ps, &l->tok[4], &b->fill);
	}
	if (!kind->quoted && (strcmp(kind->s, "words") == 0 || strcmp(kind->s, "text") == 0 ||
			      strcmp(kind->s, "hex") == 0))
		return buffer_data(ps, b, kind->s, 4);
	if (!kind->quoted && strcmp(kind->s, "counted") == 0)
		return buffer_counted(ps, b);
	if (!kind->quoted && strcmp(kind->s, "map") == 0)
		return buffer_map(ps, b);
	return perr(ps, kind,
		    "unknown initialiser '%s' (fill, words, text, hex, counted, map or device)",
		    kind->s);
}

/* dfa NAME PATTERN... */
static int parse_dfa(struct parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_buffer *b;
	uint32_t n = l->n - 2;

	if (l->n < 3)
		return perr(ps, &l->tok[0], "usage: dfa NAME PATTERN...");
	struct vyre_dfa_pattern *pats = calloc(n, sizeof(*pats));

	if (!pats)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		pats[i] =
		    (struct vyre_dfa_pattern){(const uint8_t *)l->tok[i + 2].s, l->tok[i + 2].len};
	uint8_t *table = NULL;
	uint32_t bytes = 0;
	int rc = vyre_dfa_compile(pats, n, VYRE_SUBMIT_MAX_DFA_STATES, &table, &bytes);

	free(pats);
	if (rc == VYRE_E_NOMEM)
		return perr(ps, &l->tok[2], "the patterns need more than %u DFA states",
			    VYRE_SUBMIT_MAX_DFA_STATES);
	if (rc)
		return rc;
	rc = add_buffer(ps, &l->tok[1], VYRE_SUBMIT_STMT_BUFFER, &b);
	if (rc) {
		free(table);
		return rc;
	}
	b->bytes = bytes;
	b->init = VYRE_SUBMIT_INIT_DATA;
	b->data = table;
	b->data_len = bytes;
	return 0;
}

/* open NAME [as LOCAL]: a buffer another client of the domain created by name */
static int parse_open(struct parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_buffer *b;
	char shared[VYRE_BUFFER_NAME_MAX + 1];

	if (!(l->n == 2 || (l->n == 4 && is_word(&l->tok[2], "as"))))
		return perr(ps, &l->tok[0], "usage: open NAME [as LOCAL]");
	const struct vyre_submit_token *local = &l->tok[l->n - 1];
	int rc = shared_name(ps, &l->tok[1], shared);

	if (rc)
		return rc;
	if (!valid_name(local))
		return perr(ps, local,
			    "'%s' is not a valid buffer name here: give it one with "
			    "'open %s as LOCAL'",
			    local->s, l->tok[1].s);
	rc = add_buffer(ps, local, VYRE_SUBMIT_STMT_OPEN, &b);
	if (rc)
		return rc;
	memcpy(b->shared, shared, sizeof(shared));
	b->opened = 1;
	return 0;
}

static int parse_op(struct parser *ps, const struct vyre_submit_token *t, uint32_t *op)
{
	for (uint32_t i = 0; i < VYRE_OP_COUNT; i++)
		if (!t->quoted && strcasecmp(t->s, op_names[i]) == 0) {
			*op = i;
			return 0;
		}
	if (!t->quoted && strcasecmp(t->s, "DFA") == 0) {
		*op = VYRE_OP_DFA_SCAN;
		return 0;
	}
	uint64_t v;

	if (t->quoted || vyre_submit_number(t->s, UINT32_MAX, &v))
		return perr(ps, t,
			    "unknown op '%s' (NOP FILL COPY ADD XOR MUL SUM MAX DFA_SCAN "
			    "BASE64_DECODE HEX_DECODE BYTEMAP DFA_SCAN_COUNTED or a number)",
			    t->s);
	*op = (uint32_t)v;
	return 0;
}

/* A buffer name or @HANDLE; @param_ok also accepts any number. */
static int parse_operand(struct parser *ps, const struct vyre_submit_token *t, int param_ok,
			 struct vyre_submit_operand *o)
{
	uint64_t v;

	o->buffer = 0;
	o->value = 0;
	if (!t->quoted && t->s[0] == '@') {
		if (vyre_submit_number(t->s + 1, UINT32_MAX, &v))
			return perr(ps, t, "'%s' is not a handle (@ and a number)", t->s);
		o->value = (uint32_t)v;
		return 0;
	}
	if (valid_name(t)) {
		int b = lookup_buffer(ps, t->s);

		if (!b)
			return perr(ps, t, "unknown buffer '%s'", t->s);
		o->buffer = (uint32_t)b;
		return 0;
	}
	if (param_ok)
		return word(ps, t, &o->value);
	if (!t->quoted && strcmp(t->s, "0") == 0)
		return 0;
	return perr(ps, t, "'%s' is not a buffer (a name, @handle or 0)", t->s);
}

/* A token that names the item's flags, id or ranges, not its PARAM. */
static int item_option(const struct vyre_submit_token *t)
{
	return is_keyword(t->s) || strncmp(t->s, "id=", 3) == 0 || strncmp(t->s, "in=", 3) == 0 ||
	       strncmp(t->s, "out=", 4) == 0;
}

/* in=OFF+LEN / out=OFF+LEN (docs/design.md 6.6): the byte range of an operand. */
static int parse_range(struct parser *ps, const struct vyre_submit_token *t, const char *at,
		       uint64_t *off, uint32_t *len)
{
	char num[64];
	const char *plus = strchr(at, '+');
	uint64_t l;

	if (!plus || (size_t)(plus - at) >= sizeof(num))
		return perr(ps, t, "'%s' needs OFFSET+LENGTH", t->s);
	memcpy(num, at, (size_t)(plus - at));
	num[plus - at] = 0;
	if (vyre_submit_number(num, UINT64_MAX, off) ||
	    vyre_submit_number(plus + 1, UINT32_MAX, &l))
		return perr(ps, t, "'%s' needs a 64-bit offset and a 32-bit length", t->s);
	*len = (uint32_t)l;
	return 0;
}

/* One of an item's options: fence, nodedupe, id=N, in=OFF+LEN, out=OFF+LEN. */
static int parse_item_option(struct parser *ps, const struct vyre_submit_token *t,
			     struct vyre_submit_item *it, uint32_t *seen)
{
	static const char *const names[] = {"fence", "nodedupe", "id=", "in=", "out="};
	uint32_t which = 0;

	while (which < 5 && (t->quoted || strncmp(t->s, names[which], strlen(names[which])) != 0 ||
			     (which < 2 && strcmp(t->s, names[which]) != 0)))
		which++;
	if (which == 5)
		return perr(ps, t,
			    "unexpected '%s' (fence, nodedupe, id=N, in=OFF+LEN or out=OFF+LEN)",
			    t->s);
	if (*seen & (1u << which))
		return perr(ps, t, "'%s' given twice", names[which]);
	*seen |= 1u << which;
	switch (which) {
	case 0:
		it->flags |= VYRE_SQE_FENCE;
		return 0;
	case 1:
		it->flags |= VYRE_SQE_NODEDUPE;
		return 0;
	case 2:
		if (vyre_submit_number(t->s + 3, UINT64_MAX, &it->user_data))
			return perr(ps, t, "'%s' needs a 64-bit number", t->s);
		return 0;
	case 3:
		it->flags |= VYRE_SQE_RANGE;
		return parse_range(ps, t, t->s + 3, &it->range.in_offset, &it->range.in_length);
	default:
		it->flags |= VYRE_SQE_RANGE;
		return parse_range(ps, t, t->s + 4, &it->range.out_offset, &it->range.out_length);
	}
}

/* item OP IN OUT [PARAM] [fence] [nodedupe] [id=N] [in=OFF+LEN] [out=OFF+LEN] */
static int parse_item(struct parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_program *p = ps->p;
	struct vyre_submit_item it = {.user_data = ps->lineno, .line = ps->lineno};
	uint32_t i = 4, seen = 0;
	int rc;

	if (l->n < 4)
		return perr(ps, &l->tok[0],
			    "usage: item OP IN OUT [PARAM] [fence] [nodedupe] "
			    "[id=N] [in=OFF+LEN] [out=OFF+LEN]");
	rc = parse_op(ps, &l->tok[1], &it.op);
	if (!rc)
		rc = parse_operand(ps, &l->tok[2], 0, &it.in);
	if (!rc)
		rc = parse_operand(ps, &l->tok[3], 0, &it.out);
	if (!rc && i < l->n && !item_option(&l->tok[i]))
		rc = parse_operand(ps, &l->tok[i++], 1, &it.param);
	for (; !rc && i < l->n; i++)
		rc = parse_item_option(ps, &l->tok[i], &it, &seen);
	if (rc)
		return rc;
	rc = grow((void **)&p->items, &ps->cap_items, p->n_items + 1, sizeof(*p->items),
		  VYRE_SUBMIT_MAX_ITEMS);
	if (rc)
		return rc == VYRE_E_INVAL
			   ? perr(ps, NULL, "more than %u items", VYRE_SUBMIT_MAX_ITEMS)
			   : rc;
	p->items[p->n_items++] = it;
	return add_stmt(ps, VYRE_SUBMIT_STMT_ITEM, p->n_items - 1, 0);
}

/* print NAME [words|hex|text|counted] */
static int parse_print(struct parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	enum vyre_submit_print_format f = VYRE_SUBMIT_PRINT_WORDS;

	if (l->n < 2 || l->n > 3)
		return perr(ps, &l->tok[0], "usage: print NAME [words|hex|text|counted]");
	int b = lookup_buffer(ps, l->tok[1].s);

	if (l->tok[1].quoted || !b)
		return perr(ps, &l->tok[1], "unknown buffer '%s'", l->tok[1].s);
	if (ps->p->buffers[b - 1].device)
		return perr(ps, &l->tok[1],
			    "'%s' is a device buffer: COPY it into a heap buffer to print it",
			    l->tok[1].s);
	if (l->n == 3) {
		const struct vyre_submit_token *t = &l->tok[2];

		if (!t->quoted && strcmp(t->s, "hex") == 0)
			f = VYRE_SUBMIT_PRINT_HEX;
		else if (!t->quoted && strcmp(t->s, "text") == 0)
			f = VYRE_SUBMIT_PRINT_TEXT;
		else if (!t->quoted && strcmp(t->s, "counted") == 0)
			f = VYRE_SUBMIT_PRINT_COUNTED;
		else if (t->quoted || strcmp(t->s, "words") != 0)
			return perr(ps, t, "unknown format '%s' (words, hex, text or counted)",
				    t->s);
	}
	return add_stmt(ps, VYRE_SUBMIT_STMT_PRINT, (uint32_t)b - 1, f);
}

static int parse_statement(struct parser *ps)
{
	const struct vyre_submit_token *t = &ps->line.tok[0];

	if (t->quoted)
		return perr(ps, t, "a line starts with a statement, not a string");
	if (strcmp(t->s, "buffer") == 0)
		return parse_buffer(ps);
	if (strcmp(t->s, "dfa") == 0)
		return parse_dfa(ps);
	if (strcmp(t->s, "item") == 0)
		return parse_item(ps);
	if (strcmp(t->s, "print") == 0)
		return parse_print(ps);
	if (strcmp(t->s, "open") == 0)
		return parse_open(ps);
	if (strcmp(t->s, "wait") == 0)
		return ps->line.n == 1 ? add_stmt(ps, VYRE_SUBMIT_STMT_WAIT, 0, 0)
				       : perr(ps, &ps->line.tok[1], "'wait' takes no arguments");
	if (strcmp(t->s, "names") == 0)
		return ps->line.n == 1 ? add_stmt(ps, VYRE_SUBMIT_STMT_NAMES, 0, 0)
				       : perr(ps, &ps->line.tok[1], "'names' takes no arguments");
	return perr(ps, t, "unknown statement '%s' (buffer, dfa, open, item, wait, print or names)",
		    t->s);
}

struct id_line {
	uint64_t id;
	uint32_t line;
};

static int cmp_id_line(const void *a, const void *b)
{
	const struct id_line *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* CQEs are matched to items by user_data, so ids must be unique. */
static int check_unique_ids(struct parser *ps)
{
	const struct vyre_submit_program *p = ps->p;

	if (p->n_items < 2)
		return 0;
	struct id_line *ids = malloc((size_t)p->n_items * sizeof(*ids));

	if (!ids)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < p->n_items; i++)
		ids[i] = (struct id_line){p->items[i].user_data, p->items[i].line};
	qsort(ids, p->n_items, sizeof(*ids), cmp_id_line);
	int rc = 0;

	for (uint32_t i = 1; i < p->n_items && !rc; i++)
		if (ids[i].id == ids[i - 1].id) {
			ps->lineno = ids[i].line;
			rc = perr(ps, NULL, "item id %llu already used on line %u",
				  (unsigned long long)ids[i].id, ids[i - 1].line);
		}
	free(ids);
	return rc;
}

void vyre_submit_program_free(struct vyre_submit_program *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_buffers; i++)
		free(p->buffers[i].data);
	free(p->buffers);
	free(p->items);
	free(p->stmts);
	free(p);
}

static int parse_lines(struct parser *ps, const char *text, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (ps->lineno == UINT32_MAX)
			return perr(ps, NULL, "too many lines");
		ps->lineno++;
		if (memchr(text + pos, '\0', end - pos))
			return perr(ps, NULL, "NUL byte in the input");
		int rc = vyre_submit_lex_line(text + pos, end - pos, &ps->line, ps->err);

		if (rc == VYRE_E_INVAL)
			ps->err->line = ps->lineno;
		if (rc)
			return rc;
		if (ps->line.n) {
			rc = parse_statement(ps);
			if (rc)
				return rc;
		}
		pos = end + 1;
	}
	return check_unique_ids(ps);
}

int vyre_submit_parse(const char *text, size_t len, struct vyre_submit_program **out,
		      struct vyre_submit_error *err)
{
	struct vyre_submit_error scratch_err = {0};
	struct parser ps = {.err = err ? err : &scratch_err};
	int rc;

	memset(ps.err, 0, sizeof(*ps.err));
	if (!out || (!text && len))
		return VYRE_E_INVAL;
	*out = NULL;
	ps.p = calloc(1, sizeof(*ps.p));
	if (!ps.p)
		return VYRE_E_NOMEM;
	rc = parse_lines(&ps, text, len);
	if (rc == VYRE_E_NOMEM) {
		memset(ps.err, 0, sizeof(*ps.err));
		snprintf(ps.err->msg, sizeof(ps.err->msg), "out of memory");
	}
	vyre_submit_line_free(&ps.line);
	free(ps.names.slot);
	if (rc) {
		vyre_submit_program_free(ps.p);
		return rc;
	}
	*out = ps.p;
	return 0;
}
