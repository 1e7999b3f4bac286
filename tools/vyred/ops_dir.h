/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/ops_dir.h - vyred's op modules (docs/design.md 6.7): the
 * modules of --ops-dir, loaded once at start and made known to the core
 * library's registry (gpu/op_modules.h) before any event loop or backend
 * opens, so that every reader of the registry runs after it is filled and
 * needs no lock. The loaded modules stay for vyred's whole run: the
 * registry borrows their names, host functions and device code.
 */
#ifndef VYRED_OPS_DIR_H
#define VYRED_OPS_DIR_H

#include "opmods.h"

#include "../../gpu/op_modules.h"
#include "../../ring/proto.h"

/*
 * Loads the modules of @dir with vyred's euid as their allowed owner into
 * @t, logs each op (number, module, manifest file) and each optional
 * module left out, and registers the ops: 0, or -1 after logging the
 * loader's message (the file, the op, why); @t is then empty.
 */
int vyre_ops_dir_open(const char *dir, struct vyre_opmods *t);

struct vyre_backend_ops;

/*
 * With a backend that links module device code (backend.h link_modules),
 * after vyre_ops_dir_open and before any backend opens, in the process
 * that drives the devices @ordinals: whether every module links on each.
 * When one does not, an optional module that does not link beside the
 * required ones is left out of the registry (and logged with the linker's
 * message); a required one that does not link stops vyred: -1 after
 * logging the module, the op and the linker's log. 0 otherwise.
 */
int vyre_ops_dir_link(const char *dir, const struct vyre_opmods *t,
		      const struct vyre_backend_ops *ops, const uint32_t *ordinals,
		      uint32_t n_ordinals);

/* Forgets the registered ops and frees @t's modules (after every loop has stopped). */
void vyre_ops_dir_close(struct vyre_opmods *t);

/*
 * The registry entry of loaded op @op of @t: operand bits from its manifest
 * (`in read` IN, `in counted` IN|COUNTED, `out write|update` OUT, `param
 * table` TABLE; never WORD0, which a manifest cannot say), pure only when
 * the manifest says so and the op does not update its output, and the
 * names and device code it borrows from @t.
 */
void vyre_ops_dir_entry(const struct vyre_opmods *t, const struct vyre_opmod_loaded *op,
			struct vyre_op_module_entry *e);

/*
 * The answers to a client's OP_LOOKUP and OP_LIST (ring/proto.h), from the
 * built-in ops and the registry: @r gets the op named @name, or status
 * VYRE_E_NOENT and no op; the op at @cursor (built-in ops, then the
 * registry's in number order) and the cursor past it (0 after the last),
 * or no op and cursor 0 past the end.
 */
void vyre_ops_dir_lookup(const char *name, struct vyre_msg_op_reply *r);
void vyre_ops_dir_list(uint32_t cursor, struct vyre_msg_op_reply *r);

#endif /* VYRED_OPS_DIR_H */
