/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/opmods.h - the op modules of an ops directory, checked and
 * loaded (docs/design.md 6.7).
 *
 * Every file is opened once, without following links, and checked on the
 * descriptor it was opened as: a regular file (the directory: a
 * directory), owned by root or by vyred's user, writable by no one else.
 * The bytes read through that descriptor are the ones hashed into the op
 * numbers and, for the host object, the ones loaded (dlopen of
 * /proc/self/fd/N), so no file can be swapped between the check and the
 * use. A module that fails any check fails the whole load, unless its
 * manifest says `optional yes`: then it is left out and the note callback
 * says why.
 */
#ifndef VYRED_OPMODS_H
#define VYRED_OPMODS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "opmod_manifest.h"

#define VYRE_OPMODS_MAX_MODULES 64u
#define VYRE_OPMODS_MAX_FILE	(64ull << 20) /* a host object, PTX or cubin */

struct vyre_opmod_module {
	struct vyre_opmod_manifest man;
	char file[VYRE_OPMOD_FILE_MAX + 1]; /* the manifest's name in the directory, for logs */
	void *dl;			    /* the host object, dlopen'ed */
	uint64_t digest;		    /* FNV-1a-64 of its files (opmod_manifest.h) */
	uint8_t *ptx, *cubin;		    /* the device code, for the CUDA backend's linker */
	size_t ptx_bytes, cubin_bytes;
	int host_fd; /* the host object's descriptor, open while dl is (opmods.c says why) */
};

struct vyre_opmod_loaded {
	uint32_t number; /* VYRE_OP_MODULE_BIT | ... */
	uint32_t module; /* index into modules */
	const struct vyre_opmod_op *spec;
	vyre_op_host_fn *host;
};

struct vyre_opmods {
	struct vyre_opmod_module *modules;
	uint32_t n_modules;
	struct vyre_opmod_loaded *ops;
	uint32_t n_ops;
};

/* Says why an optional module was left out. */
typedef void vyre_opmods_note_fn(void *ctx, const char *msg);

/*
 * Loads every `*.opmod` of @dir, in name order, whose files may be owned
 * by root or @owner: 0, or a negative VYRE_E_* with the file and why in
 * @why (VYRE_E_PERM for an owner or mode, VYRE_E_INVAL for a bad manifest,
 * a missing symbol or a clash, VYRE_E_NOMEM). @t is empty on failure.
 */
int vyre_opmods_load(const char *dir, uid_t owner, struct vyre_opmods *t, vyre_opmods_note_fn *note,
		     void *ctx, char *why, size_t why_len);
void vyre_opmods_free(struct vyre_opmods *t);

/* The loaded op named @name, or NULL. */
const struct vyre_opmod_loaded *vyre_opmods_find(const struct vyre_opmods *t, const char *name);
/* The loaded op numbered @number, or NULL. */
const struct vyre_opmod_loaded *vyre_opmods_by_number(const struct vyre_opmods *t, uint32_t number);

#endif /* VYRED_OPMODS_H */
