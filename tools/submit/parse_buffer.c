/* SPDX-License-Identifier: MIT */
/*
 * vyre-submit: the statements that declare buffers - buffer (with its
 * initialisers), dfa and open.
 */
#include <stdlib.h>
#include <string.h>

#include "../../ring/proto.h"
#include "numbers.h"
#include "parse_buffer.h"
#include "vyre/dfa.h"

static int buffer_size(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
		       uint32_t *out)
{
	uint64_t v;

	if (t->quoted || t->len == 0)
		return vyre_submit_perr(ps, t, "'%s' is not a buffer size", t->s);
	if (vyre_submit_bytes(t->s, UINT32_MAX, &v))
		return vyre_submit_perr(
		    ps, t, "'%s' is not a buffer size (bytes, or K/M/G suffixed, < 4 GiB)", t->s);
	if (v % 4)
		return vyre_submit_perr(ps, t, "buffer size %llu is not a multiple of 4",
					(unsigned long long)v);
	*out = (uint32_t)v;
	return 0;
}

/* Decodes the initialiser tokens tok[first..n) of kind @kind into b->data. */
static int buffer_data(struct vyre_submit_parser *ps, struct vyre_submit_buffer *b,
		       const char *kind, uint32_t first)
{
	const struct vyre_submit_line *l = &ps->line;
	uint64_t len = 0;

	if (first >= l->n)
		return vyre_submit_perr(ps, &l->tok[first - 1], "'%s' needs at least one value",
					kind);
	for (uint32_t i = first; i < l->n; i++)
		len += strcmp(kind, "words") == 0 ? 4
		       : strcmp(kind, "hex") == 0 ? l->tok[i].len / 2
						  : l->tok[i].len;
	if (strcmp(kind, "text") == 0 && l->n - first != 1)
		return vyre_submit_perr(ps, &l->tok[first + 1],
					"'text' takes one word or \"string\"");
	if (len > b->bytes)
		return vyre_submit_perr(ps, &l->tok[first],
					"%llu bytes of %s do not fit in %u bytes",
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
			int rc = vyre_submit_word(ps, t, &w);

			if (rc)
				return rc;
			for (int k = 0; k < 4; k++)
				*d++ = (uint8_t)(w >> (8 * k));
		} else if (strcmp(kind, "hex") == 0) {
			if (t->quoted || t->len % 2)
				return vyre_submit_perr(ps, t,
							"hex needs an even number of hex digits");
			for (uint32_t k = 0; k < t->len; k += 2) {
				int hi = vyre_submit_hex_digit((unsigned char)t->s[k]),
				    lo = vyre_submit_hex_digit((unsigned char)t->s[k + 1]);

				if (hi < 0 || lo < 0)
					return vyre_submit_perr(ps, t, "'%s' is not hex", t->s);
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
static int size_or_name(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
			uint32_t *out)
{
	int like = t->quoted ? 0 : vyre_submit_lookup_buffer(ps, t->s);

	if (!like)
		return buffer_size(ps, t, out);
	if (ps->p->buffers[like - 1].opened)
		return vyre_submit_perr(ps, t, "the size of '%s' is known only when it is opened",
					t->s);
	*out = ps->p->buffers[like - 1].bytes;
	return 0;
}

/* counted STRING: word 0 = its byte length, then its bytes (docs/design.md 6.1). */
static int buffer_counted(struct vyre_submit_parser *ps, struct vyre_submit_buffer *b)
{
	const struct vyre_submit_line *l = &ps->line;

	if (l->n != 5)
		return vyre_submit_perr(ps, &l->tok[3], "'counted' takes one word or \"string\"");
	const struct vyre_submit_token *t = &l->tok[4];

	if (b->bytes < 4 || t->len > b->bytes - 4)
		return vyre_submit_perr(ps, t, "4 + %u counted bytes do not fit in %u bytes",
					(unsigned)t->len, b->bytes);
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
static int buffer_map(struct vyre_submit_parser *ps, struct vyre_submit_buffer *b)
{
	const struct vyre_submit_line *l = &ps->line;

	if (l->n != 6)
		return vyre_submit_perr(ps, &l->tok[3],
					"usage: map FROM TO (two strings of one length)");
	const struct vyre_submit_token *from = &l->tok[4], *to = &l->tok[5];

	if (from->len != to->len)
		return vyre_submit_perr(ps, to,
					"map FROM and TO differ in length (%u and %u bytes)",
					(unsigned)from->len, (unsigned)to->len);
	if (b->bytes < 256)
		return vyre_submit_perr(ps, &l->tok[2],
					"a byte map needs 256 bytes, the buffer has %u", b->bytes);
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

/* A name other clients of the domain find the buffer by (docs/design.md 5). */
static int shared_name(struct vyre_submit_parser *ps, const struct vyre_submit_token *t, char *out)
{
	if (t->quoted || !vyre_msg_name_ok(t->s, t->len))
		return vyre_submit_perr(
		    ps, t,
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
int vyre_submit_parse_buffer(struct vyre_submit_parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_buffer *b;
	uint32_t bytes = 0;
	int rc, named = l->n > 3 && vyre_submit_is_word(&l->tok[l->n - 1], "named");

	/* the initialisers read the tokens before a final `named` */
	ps->line.n -= (uint32_t)named;
	if (l->n < 3)
		return vyre_submit_perr(
		    ps, &l->tok[0],
		    "usage: buffer NAME BYTES [fill WORD | words W... | "
		    "text STRING | hex HEX... | counted STRING | map FROM TO | device] "
		    "[named]");
	rc = size_or_name(ps, &l->tok[2], &bytes);
	if (rc)
		return rc;
	rc = vyre_submit_add_buffer(ps, &l->tok[1], VYRE_SUBMIT_STMT_BUFFER, &b);
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
			return vyre_submit_perr(
			    ps, &l->tok[4],
			    "a device buffer starts zero-filled: COPY data into it");
		b->device = 1;
		return 0;
	}

	if (!kind->quoted && strcmp(kind->s, "fill") == 0) {
		if (l->n != 5)
			return vyre_submit_perr(ps, kind, "'fill' takes one word");
		b->init = VYRE_SUBMIT_INIT_FILL;
		return vyre_submit_word(ps, &l->tok[4], &b->fill);
	}
	if (!kind->quoted && (strcmp(kind->s, "words") == 0 || strcmp(kind->s, "text") == 0 ||
			      strcmp(kind->s, "hex") == 0))
		return buffer_data(ps, b, kind->s, 4);
	if (!kind->quoted && strcmp(kind->s, "counted") == 0)
		return buffer_counted(ps, b);
	if (!kind->quoted && strcmp(kind->s, "map") == 0)
		return buffer_map(ps, b);
	return vyre_submit_perr(
	    ps, kind, "unknown initialiser '%s' (fill, words, text, hex, counted, map or device)",
	    kind->s);
}

/*
 * A dfa pattern's label, ID[/FLAGS] (either part may be left out): its id
 * (default: @pos, the pattern's place in the line) and flags (i: caseless).
 */
static int pattern_label(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
			 uint32_t pos, struct vyre_dfa_pattern *p)
{
	const char *slash = strchr(t->label, '/');
	size_t id_len = slash ? (size_t)(slash - t->label) : strlen(t->label);
	char id[24];
	uint64_t v;

	p->id = pos;
	p->flags = 0;
	if (id_len >= sizeof(id))
		return vyre_submit_perr(ps, t, "pattern id '%s' is not a u32", t->label);
	memcpy(id, t->label, id_len);
	id[id_len] = '\0';
	if (id_len && vyre_submit_number(id, UINT32_MAX, &v))
		return vyre_submit_perr(ps, t, "pattern id '%s' is not a u32", id);
	if (id_len)
		p->id = (uint32_t)v;
	for (const char *f = slash ? slash + 1 : ""; *f; f++) {
		if (*f != 'i')
			return vyre_submit_perr(ps, t, "unknown pattern flag '%c' (i: caseless)",
						*f);
		p->flags |= VYRE_DFA_CASELESS;
	}
	return 0;
}

/* dfa NAME PATTERN... where PATTERN is a word, "string" or ID[/FLAGS]:"string" */
int vyre_submit_parse_dfa(struct vyre_submit_parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_buffer *b;
	uint32_t n = l->n - 2;
	int rc = 0;

	if (l->n < 3)
		return vyre_submit_perr(ps, &l->tok[0], "usage: dfa NAME PATTERN...");
	if (l->tok[1].label)
		return vyre_submit_perr(ps, &l->tok[1], "a dfa's name takes no label");
	struct vyre_dfa_pattern *pats = calloc(n, sizeof(*pats));

	if (!pats)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < n && !rc; i++) {
		const struct vyre_submit_token *t = &l->tok[i + 2];

		pats[i] = (struct vyre_dfa_pattern){(const uint8_t *)t->s, t->len, i, 0};
		if (t->len == 0)
			rc = vyre_submit_perr(ps, t, "an empty pattern");
		else if (t->len > VYRE_DFA_PATTERN_MAX)
			rc = vyre_submit_perr(ps, t, "a pattern of more than %u bytes",
					      VYRE_DFA_PATTERN_MAX);
		else if (t->label)
			rc = pattern_label(ps, t, i, &pats[i]);
	}
	uint8_t *table = NULL;
	uint32_t bytes = 0;
	struct vyre_dfa_info info;

	if (!rc)
		rc = vyre_dfa_compile(pats, n, VYRE_SUBMIT_MAX_DFA_STATES, &table, &bytes, &info);
	free(pats);
	if (rc == VYRE_E_NOMEM && info.states > VYRE_SUBMIT_MAX_DFA_STATES)
		return vyre_submit_perr(
		    ps, &l->tok[2],
		    "the patterns need at least %llu DFA states and %llu table bytes (the limit "
		    "is %u states)",
		    (unsigned long long)info.states, (unsigned long long)info.table_bytes,
		    VYRE_SUBMIT_MAX_DFA_STATES);
	if (rc)
		return rc;
	rc = vyre_submit_add_buffer(ps, &l->tok[1], VYRE_SUBMIT_STMT_BUFFER, &b);
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
int vyre_submit_parse_open(struct vyre_submit_parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_buffer *b;
	char shared[VYRE_BUFFER_NAME_MAX + 1];

	if (!(l->n == 2 || (l->n == 4 && vyre_submit_is_word(&l->tok[2], "as"))))
		return vyre_submit_perr(ps, &l->tok[0], "usage: open NAME [as LOCAL]");
	const struct vyre_submit_token *local = &l->tok[l->n - 1];
	int rc = shared_name(ps, &l->tok[1], shared);

	if (rc)
		return rc;
	if (!vyre_submit_valid_name(local))
		return vyre_submit_perr(ps, local,
					"'%s' is not a valid buffer name here: give it one with "
					"'open %s as LOCAL'",
					local->s, l->tok[1].s);
	rc = vyre_submit_add_buffer(ps, local, VYRE_SUBMIT_STMT_OPEN, &b);
	if (rc)
		return rc;
	memcpy(b->shared, shared, sizeof(shared));
	b->opened = 1;
	return 0;
}
