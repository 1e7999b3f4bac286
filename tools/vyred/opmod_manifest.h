/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/opmod_manifest.h - an op module's manifest (docs/design.md
 * 6.7), parsed and checked, and module op numbers.
 *
 * The manifest comes from a file the operator installed, but it is still
 * input: every line is checked, and a bad one refuses the whole manifest
 * with its line number and what was wrong, never a partial module. The
 * parser only reads the text; the loader checks the files it names.
 */
#ifndef VYRED_OPMOD_MANIFEST_H
#define VYRED_OPMOD_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/op_module.h"

#define VYRE_OPMOD_MAX_BYTES (64u * 1024u)
#define VYRE_OPMOD_MAX_LINES 1024u
#define VYRE_OPMOD_LINE_MAX  512u
#define VYRE_OPMOD_FILE_MAX  255u /* a file name beside the manifest */
#define VYRE_OPMOD_SYM_MAX   63u  /* a host or device symbol */
#define VYRE_OPMOD_DOC_MAX   255u /* an operand's or result's description */

enum vyre_opmod_in { VYRE_OPMOD_IN_NONE, VYRE_OPMOD_IN_READ, VYRE_OPMOD_IN_COUNTED };
enum vyre_opmod_out { VYRE_OPMOD_OUT_NONE, VYRE_OPMOD_OUT_WRITE, VYRE_OPMOD_OUT_UPDATE };
enum vyre_opmod_param { VYRE_OPMOD_PARAM_NONE, VYRE_OPMOD_PARAM_WORD, VYRE_OPMOD_PARAM_TABLE };

struct vyre_opmod_op {
	char name[VYRE_OP_NAME_MAX + 1];
	uint8_t in, out, param; /* enum vyre_opmod_in, _out, _param */
	uint8_t pure, stream;
	char in_doc[VYRE_OPMOD_DOC_MAX + 1];
	char out_doc[VYRE_OPMOD_DOC_MAX + 1];
	char param_doc[VYRE_OPMOD_DOC_MAX + 1];
	char result[VYRE_OPMOD_DOC_MAX + 1];
	char host_fn[VYRE_OPMOD_SYM_MAX + 1];
	char device_fn[VYRE_OPMOD_SYM_MAX + 1];
};

struct vyre_opmod_manifest {
	char module[VYRE_OP_NAME_MAX + 1];
	uint32_t abi;
	char host[VYRE_OPMOD_FILE_MAX + 1];
	char ptx[VYRE_OPMOD_FILE_MAX + 1];
	char cubin[VYRE_OPMOD_FILE_MAX + 1]; /* "" when none */
	int optional;
	uint32_t n_ops;
	struct vyre_opmod_op ops[VYRE_OP_MODULE_MAX_OPS];
};

/*
 * Parses @len bytes of manifest @text into @m: 0, or VYRE_E_INVAL with
 * "line N: what" (or what, for the whole text) in @why.
 */
int vyre_opmod_parse(const char *text, size_t len, struct vyre_opmod_manifest *m, char *why,
		     size_t why_len);

/* 1 when @name is a built-in op's name in the manifest's spelling ("dfa_scan"). */
int vyre_opmod_builtin_name(const char *name);
/* The built-in op named @name (its VYRE_OP_*), or -1. */
int vyre_opmod_builtin_number(const char *name);
/* The name of built-in op @op ("dfa_scan"), or NULL past VYRE_OP_COUNT. */
const char *vyre_opmod_builtin(uint32_t op);

/* FNV-1a-64 of @n bytes at @p, continuing from @h (start: VYRE_OPMOD_FNV_SEED). */
#define VYRE_OPMOD_FNV_SEED 0xcbf29ce484222325ull
uint64_t vyre_opmod_fnv1a64(uint64_t h, const void *p, size_t n);

/*
 * The op number of op @name of a module whose files hash to @digest
 * (vyre_opmod_fnv1a64 over each file's bytes in manifest, host, ptx,
 * cubin order): VYRE_OP_MODULE_BIT | 31 bits of FNV-1a-64 over the
 * name, a zero byte and the digest's 8 bytes.
 */
uint32_t vyre_opmod_number(const char *name, uint64_t digest);

#endif /* VYRED_OPMOD_MANIFEST_H */
