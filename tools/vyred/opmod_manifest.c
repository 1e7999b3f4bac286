/* SPDX-License-Identifier: MIT */
/* An op module's manifest, parsed and checked, and module op numbers (opmod_manifest.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vyre/abi.h"
#include "opmod_manifest.h"

static const char *const builtin_names[] = {"nop",
					    "fill",
					    "copy",
					    "add",
					    "xor",
					    "mul",
					    "sum",
					    "max",
					    "dfa_scan",
					    "base64_decode",
					    "hex_decode",
					    "bytemap",
					    "dfa_scan_counted",
					    "dfa_report",
					    "dfa_report_counted"};

_Static_assert(sizeof(builtin_names) / sizeof(builtin_names[0]) == VYRE_OP_COUNT,
	       "a name for every built-in op, in VYRE_OP_* order");

int vyre_opmod_builtin_number(const char *name)
{
	for (uint32_t i = 0; i < VYRE_OP_COUNT; i++)
		if (strcmp(name, builtin_names[i]) == 0)
			return (int)i;
	return -1;
}

int vyre_opmod_builtin_name(const char *name)
{
	return vyre_opmod_builtin_number(name) >= 0;
}

const char *vyre_opmod_builtin(uint32_t op)
{
	return op < VYRE_OP_COUNT ? builtin_names[op] : NULL;
}

uint64_t vyre_opmod_fnv1a64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint32_t vyre_opmod_number(const char *name, uint64_t digest)
{
	unsigned char d[8];
	uint64_t h = vyre_opmod_fnv1a64(VYRE_OPMOD_FNV_SEED, name, strlen(name) + 1);

	for (int i = 0; i < 8; i++)
		d[i] = (unsigned char)(digest >> (8 * i));
	h = vyre_opmod_fnv1a64(h, d, sizeof(d));
	return VYRE_OP_MODULE_BIT | (uint32_t)(h & 0x7fffffffu);
}

/* The parser's place in the text and where its complaint goes. */
struct cursor {
	unsigned line;
	char *why;
	size_t why_len;
};

static int fail(struct cursor *c, const char *fmt, ...)
{
	va_list ap;
	int n = c->line ? snprintf(c->why, c->why_len, "line %u: ", c->line) : 0;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->why_len)
		vsnprintf(c->why + n, c->why_len - (size_t)n, fmt, ap);
	va_end(ap);
	return VYRE_E_INVAL;
}

static int is_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > VYRE_OP_NAME_MAX || s[0] < 'a' || s[0] > 'z')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int is_symbol(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > VYRE_OPMOD_SYM_MAX || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* A file beside the manifest: no directory part, not "." or "..", printable. */
static int is_file(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > VYRE_OPMOD_FILE_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || (unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return 0;
	return 1;
}

/* Copies @src (shorter than @cap) to @dst. */
static void put(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	memcpy(dst, src, n < cap ? n : cap - 1);
	dst[n < cap ? n : cap - 1] = 0;
}

/* Index of @word in @names (NULL-terminated), or -1. */
static int pick(const char *word, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(word, names[i]) == 0)
			return i;
	return -1;
}

enum op_key { K_IN, K_OUT, K_PARAM, K_PURE, K_STREAM, K_RESULT, K_HOST_FN, K_DEVICE_FN, K_OPS };
static const char *const op_keys[] = {"in",	"out",	   "param",	"pure", "stream",
				      "result", "host_fn", "device_fn", NULL};
enum mod_key { M_MODULE, M_ABI, M_HOST, M_PTX, M_CUBIN, M_OPTIONAL, M_KEYS };
static const char *const mod_keys[] = {"module", "abi", "host", "ptx", "cubin", "optional", NULL};
static const char *const yes_no[] = {"no", "yes", NULL};
static const char *const in_kinds[] = {"none", "read", "counted", NULL};
static const char *const out_kinds[] = {"none", "write", "update", NULL};
static const char *const param_kinds[] = {"none", "word", "table", NULL};

/* The parse so far: which keys the module and the current op have. */
struct state {
	struct vyre_opmod_manifest *m;
	unsigned mod_seen;
	unsigned op_seen;
	int in_op;
};

/* An op block ends: its checks, and the defaults of what it did not say. */
static int end_op(struct cursor *c, struct state *st)
{
	struct vyre_opmod_op *op = &st->m->ops[st->m->n_ops - 1];

	if (!(st->op_seen & (1u << K_RESULT)))
		return fail(c, "op %s: no `result`", op->name);
	if (op->in == VYRE_OPMOD_IN_NONE && op->out == VYRE_OPMOD_OUT_NONE)
		return fail(c, "op %s: neither `in` nor `out`", op->name);
	if (op->stream && op->in == VYRE_OPMOD_IN_NONE)
		return fail(c, "op %s: `stream yes` without an input", op->name);
	char name[VYRE_OP_NAME_MAX + 1];

	put(name, sizeof(name), op->name); /* a copy: the symbols share op's storage */
	/* "vyre_op_" + 31 + "_device" fits VYRE_OPMOD_SYM_MAX */
	if (!(st->op_seen & (1u << K_HOST_FN)))
		snprintf(op->host_fn, sizeof(op->host_fn), "vyre_op_%s_host", name);
	if (!(st->op_seen & (1u << K_DEVICE_FN)))
		snprintf(op->device_fn, sizeof(op->device_fn), "vyre_op_%s_device", name);
	return 0;
}

static int start_op(struct cursor *c, struct state *st, const char *name)
{
	struct vyre_opmod_manifest *m = st->m;

	if (st->in_op && end_op(c, st))
		return VYRE_E_INVAL;
	if (!(st->mod_seen & (1u << M_HOST)) || !(st->mod_seen & (1u << M_PTX)) ||
	    !(st->mod_seen & (1u << M_ABI)))
		return fail(c, "`op` before the module's `abi`, `host` and `ptx`");
	if (m->n_ops == VYRE_OP_MODULE_MAX_OPS)
		return fail(c, "more than %u ops", VYRE_OP_MODULE_MAX_OPS);
	if (!is_name(name))
		return fail(c, "op name `%s`: 1-%u of [a-z0-9_], a letter first", name,
			    VYRE_OP_NAME_MAX);
	if (vyre_opmod_builtin_name(name))
		return fail(c, "op name `%s` is a built-in op's", name);
	for (uint32_t i = 0; i < m->n_ops; i++)
		if (strcmp(m->ops[i].name, name) == 0)
			return fail(c, "op `%s` twice", name);
	struct vyre_opmod_op *op = &m->ops[m->n_ops++];

	memset(op, 0, sizeof(*op));
	put(op->name, sizeof(op->name), name);
	st->op_seen = 0;
	st->in_op = 1;
	return 0;
}

/* `KIND description...` of an operand: the kind's index into @kinds, the rest into @doc. */
static int operand(struct cursor *c, const char *key, const char *value, const char *const *kinds,
		   uint8_t *kind, char *doc, size_t doc_cap)
{
	char word[16];
	size_t n = strcspn(value, " \t");

	if (n == 0 || n >= sizeof(word))
		return fail(c, "`%s %s`: not one of its kinds", key, value);
	memcpy(word, value, n);
	word[n] = 0;
	const int k = pick(word, kinds);

	if (k < 0)
		return fail(c, "`%s %s`: `%s` is not one of its kinds", key, value, word);
	value += n;
	value += strspn(value, " \t");
	if (strlen(value) > VYRE_OPMOD_DOC_MAX)
		return fail(c, "`%s`: the description is over %u bytes", key, VYRE_OPMOD_DOC_MAX);
	*kind = (uint8_t)k;
	put(doc, doc_cap, value);
	return 0;
}

static int op_line(struct cursor *c, struct state *st, const char *key, const char *value)
{
	struct vyre_opmod_op *op = &st->m->ops[st->m->n_ops - 1];
	const int k = pick(key, op_keys);
	int yn;

	if (k < 0)
		return pick(key, mod_keys) >= 0
			   ? fail(c, "module key `%s` inside op %s", key, op->name)
			   : fail(c, "unknown key `%s`", key);
	if (st->op_seen & (1u << k))
		return fail(c, "op %s: `%s` twice", op->name, key);
	st->op_seen |= 1u << k;
	switch ((enum op_key)k) {
	case K_IN:
		return operand(c, key, value, in_kinds, &op->in, op->in_doc, sizeof(op->in_doc));
	case K_OUT:
		return operand(c, key, value, out_kinds, &op->out, op->out_doc,
			       sizeof(op->out_doc));
	case K_PARAM:
		return operand(c, key, value, param_kinds, &op->param, op->param_doc,
			       sizeof(op->param_doc));
	case K_PURE:
	case K_STREAM:
		if ((yn = pick(value, yes_no)) < 0)
			return fail(c, "`%s %s`: yes or no", key, value);
		*(k == K_PURE ? &op->pure : &op->stream) = (uint8_t)yn;
		return 0;
	case K_RESULT:
		if (!*value || strlen(value) > VYRE_OPMOD_DOC_MAX)
			return fail(c, "`result`: 1-%u bytes of description", VYRE_OPMOD_DOC_MAX);
		put(op->result, sizeof(op->result), value);
		return 0;
	default: /* K_HOST_FN, K_DEVICE_FN */
		if (!is_symbol(value))
			return fail(c, "`%s %s`: not a C symbol of 1-%u bytes", key, value,
				    VYRE_OPMOD_SYM_MAX);
		put(k == K_HOST_FN ? op->host_fn : op->device_fn, VYRE_OPMOD_SYM_MAX + 1, value);
		return 0;
	}
}

static int module_line(struct cursor *c, struct state *st, const char *key, const char *value)
{
	struct vyre_opmod_manifest *m = st->m;
	const int k = pick(key, mod_keys);
	int yn;

	if (k < 0)
		return pick(key, op_keys) >= 0 ? fail(c, "op key `%s` before any `op`", key)
					       : fail(c, "unknown key `%s`", key);
	if (st->mod_seen & (1u << k))
		return fail(c, "`%s` twice", key);
	if (k != M_MODULE && !(st->mod_seen & (1u << M_MODULE)))
		return fail(c, "the first key must be `module`");
	st->mod_seen |= 1u << k;
	switch ((enum mod_key)k) {
	case M_MODULE:
		if (!is_name(value))
			return fail(c, "module name `%s`: 1-%u of [a-z0-9_], a letter first", value,
				    VYRE_OP_NAME_MAX);
		put(m->module, sizeof(m->module), value);
		return 0;
	case M_ABI:
		if (strcmp(value, "1") != 0)
			return fail(c, "abi `%s`: this vyred takes abi %u", value,
				    VYRE_OP_MODULE_ABI);
		m->abi = VYRE_OP_MODULE_ABI;
		return 0;
	case M_OPTIONAL:
		if ((yn = pick(value, yes_no)) < 0)
			return fail(c, "`optional %s`: yes or no", value);
		m->optional = yn;
		return 0;
	default: { /* M_HOST, M_PTX, M_CUBIN */
		char *dst = k == M_HOST ? m->host : k == M_PTX ? m->ptx : m->cubin;

		if (!is_file(value))
			return fail(c, "`%s %s`: a file name beside the manifest (no `/`)", key,
				    value);
		put(dst, VYRE_OPMOD_FILE_MAX + 1, value);
		return 0;
	}
	}
}

/* One line, without its newline: comment and blanks stripped, then key and value. */
static int parse_line(struct cursor *c, struct state *st, char *s)
{
	char *hash = strchr(s, '#');

	if (hash)
		*hash = 0;
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < ' ' && *p != '\t')
			return fail(c, "a control character (byte %u)", (unsigned char)*p);
	s += strspn(s, " \t");
	size_t end = strlen(s);

	while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t'))
		s[--end] = 0;
	if (!*s)
		return 0;
	char *value = s + strcspn(s, " \t");

	if (*value) {
		*value++ = 0;
		value += strspn(value, " \t");
	}
	if (strcmp(s, "op") == 0)
		return start_op(c, st, value);
	if (!*value)
		return fail(c, "`%s` without a value", s);
	return st->in_op ? op_line(c, st, s, value) : module_line(c, st, s, value);
}

int vyre_opmod_parse(const char *text, size_t len, struct vyre_opmod_manifest *m, char *why,
		     size_t why_len)
{
	struct cursor c = {0, why, why_len};
	struct state st = {m, 0, 0, 0};
	char line[VYRE_OPMOD_LINE_MAX + 1];
	size_t at = 0;

	if (why_len)
		why[0] = 0;
	memset(m, 0, sizeof(*m));
	if (!text || len > VYRE_OPMOD_MAX_BYTES)
		return fail(&c, "over %u bytes", VYRE_OPMOD_MAX_BYTES);
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		const size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		if (++c.line > VYRE_OPMOD_MAX_LINES)
			return fail(&c, "over %u lines", VYRE_OPMOD_MAX_LINES);
		if (n > VYRE_OPMOD_LINE_MAX)
			return fail(&c, "over %u bytes", VYRE_OPMOD_LINE_MAX);
		if (memchr(text + at, 0, n))
			return fail(&c, "a zero byte");
		memcpy(line, text + at, n);
		line[n] = 0;
		if (parse_line(&c, &st, line))
			return VYRE_E_INVAL;
		at += n + (nl != NULL);
	}
	if (st.in_op && end_op(&c, &st))
		return VYRE_E_INVAL;
	c.line = 0;
	if (!(st.mod_seen & (1u << M_MODULE)))
		return fail(&c, "no `module`");
	if (!(st.mod_seen & (1u << M_ABI)) || !(st.mod_seen & (1u << M_HOST)) ||
	    !(st.mod_seen & (1u << M_PTX)))
		return fail(&c, "module %s: `abi`, `host` and `ptx` are required", m->module);
	if (m->n_ops == 0)
		return fail(&c, "module %s: no `op`", m->module);
	return 0;
}
