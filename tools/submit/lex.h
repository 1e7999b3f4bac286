/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/lex.h - splits one vyre-submit line into tokens.
 *
 * A token is a run of non-blank bytes or a "quoted string" with C escapes
 * (\\ \" \n \t \r \0 \xHH); # outside quotes starts a comment. A quoted string
 * may carry a label: LABEL:"..." (no blank between), LABEL any non-blank
 * bytes but a quote; dfa patterns use it for their id and flags. Every token
 * is decoded into the line's scratch space and NUL-terminated there, so bare
 * tokens can be compared as C strings.
 */
#ifndef VYRE_TOOLS_SUBMIT_LEX_H
#define VYRE_TOOLS_SUBMIT_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "program.h"

struct vyre_submit_token {
	const char *s;	 /* decoded bytes, NUL-terminated (a quoted token may hold NULs) */
	uint32_t len;	 /* decoded length */
	uint32_t column; /* 1-based byte column where the token starts */
	int quoted;
	const char *label; /* LABEL of LABEL:"...", NUL-terminated, without the colon; or NULL */
};

struct vyre_submit_line {
	struct vyre_submit_token *tok;
	uint32_t n, cap;
	char *scratch;
	size_t scratch_cap;
};

/*
 * Tokenize @len bytes of one line (without its newline) into @l, reusing its
 * storage. Returns 0, VYRE_E_INVAL with @err->column and @err->msg set, or
 * VYRE_E_NOMEM.
 */
int vyre_submit_lex_line(const char *line, size_t len, struct vyre_submit_line *l,
			 struct vyre_submit_error *err);

void vyre_submit_line_free(struct vyre_submit_line *l);

#endif /* VYRE_TOOLS_SUBMIT_LEX_H */
