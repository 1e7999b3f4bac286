/* SPDX-License-Identifier: MIT */
/* vyred's op modules: --ops-dir loaded and registered (ops_dir.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "../../gpu/backend.h"
#include "../../gpu/ops.h"
#include "log.h"
#include "ops_dir.h"

void vyre_ops_dir_entry(const struct vyre_opmods *t, const struct vyre_opmod_loaded *op,
			struct vyre_op_module_entry *e)
{
	const struct vyre_opmod_op *s = op->spec;
	const struct vyre_opmod_module *m = &t->modules[op->module];

	memset(e, 0, sizeof(*e));
	e->number = op->number;
	if (s->in != VYRE_OPMOD_IN_NONE)
		e->mask |= VYRE_OPERAND_IN;
	if (s->in == VYRE_OPMOD_IN_COUNTED)
		e->mask |= VYRE_OPERAND_COUNTED;
	if (s->out != VYRE_OPMOD_OUT_NONE)
		e->mask |= VYRE_OPERAND_OUT;
	if (s->param == VYRE_OPMOD_PARAM_TABLE)
		e->mask |= VYRE_OPERAND_TABLE;
	/* an update reads what it wrote: running it once for two identical items differs */
	e->pure = s->pure && s->out != VYRE_OPMOD_OUT_UPDATE;
	e->stream = s->stream;
	e->host = op->host;
	e->name = s->name;
	e->module = m->man.module;
	e->device_fn = s->device_fn[0] ? s->device_fn : NULL;
	e->ptx = m->ptx;
	e->ptx_bytes = m->ptx_bytes;
	e->cubin = m->cubin;
	e->cubin_bytes = m->cubin_bytes;
}

static void left_out(void *ctx, const char *msg)
{
	(void)ctx;
	vyre_log("--ops-dir: optional module left out: %s", msg);
}

int vyre_ops_dir_open(const char *dir, struct vyre_opmods *t)
{
	char why[1024];
	int rc = vyre_opmods_load(dir, geteuid(), t, left_out, NULL, why, sizeof(why));

	if (rc != 0) {
		/* the loader's message names the file and why; its code adds nothing to it */
		vyre_log("--ops-dir %s: cannot start: %s", dir, why[0] ? why : "cannot load");
		return -1;
	}
	struct vyre_op_module_entry *e = t->n_ops ? calloc(t->n_ops, sizeof(*e)) : NULL;

	if (t->n_ops && !e) {
		vyre_log("--ops-dir %s: out of memory for %u ops", dir, t->n_ops);
		vyre_opmods_free(t);
		return -1;
	}
	for (uint32_t i = 0; i < t->n_ops; i++) {
		const struct vyre_opmod_loaded *op = &t->ops[i];

		vyre_ops_dir_entry(t, op, &e[i]);
		vyre_log("--ops-dir: op %s 0x%08x of module %s (%s/%s)%s", op->spec->name,
			 op->number, t->modules[op->module].man.module, dir,
			 t->modules[op->module].file, e[i].pure ? ", pure" : "");
	}
	rc = vyre_op_modules_register(e, t->n_ops);
	free(e); /* the registry copies the entries; it borrows only what they point to */
	if (rc != 0) {
		vyre_log("--ops-dir %s: cannot register its %u ops: %s", dir, t->n_ops,
			 vyre_strerror(rc));
		vyre_opmods_free(t);
		return -1;
	}
	vyre_log("--ops-dir %s: %u op%s of %u module%s", dir, t->n_ops, t->n_ops == 1 ? "" : "s",
		 t->n_modules, t->n_modules == 1 ? "" : "s");
	return 0;
}

/* The entries of @t's ops whose module @keep marks, into @e; returns how many. */
static uint32_t kept_entries(const struct vyre_opmods *t, const uint8_t *keep,
			     struct vyre_op_module_entry *e)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->n_ops; i++)
		if (keep[t->ops[i].module])
			vyre_ops_dir_entry(t, &t->ops[i], &e[n++]);
	return n;
}

/* Whether the modules @keep marks link on every device of @ordinals. */
static int link_kept(const struct vyre_opmods *t, const uint8_t *keep,
		     struct vyre_op_module_entry *e, const struct vyre_backend_ops *ops,
		     const uint32_t *ordinals, uint32_t n_ordinals, char *why, size_t why_len)
{
	const uint32_t n = kept_entries(t, keep, e);
	int rc = 0;

	for (uint32_t d = 0; d < n_ordinals && rc == 0 && n; d++)
		rc = ops->link_modules((int)ordinals[d], e, n, why, (uint32_t)why_len);
	return rc;
}

/*
 * Required modules first, then each optional one that links beside them;
 * the registry then holds what linked.
 */
static int keep_what_links(const char *dir, const struct vyre_opmods *t, uint8_t *keep,
			   struct vyre_op_module_entry *e, const struct vyre_backend_ops *ops,
			   const uint32_t *ordinals, uint32_t n_ordinals)
{
	char why[4096];
	uint32_t optional = 0;

	for (uint32_t m = 0; m < t->n_modules; m++) {
		keep[m] = !t->modules[m].man.optional;
		optional += !keep[m];
	}
	if (link_kept(t, keep, e, ops, ordinals, n_ordinals, why, sizeof(why)) != 0) {
		vyre_log("--ops-dir %s: cannot start: %s", dir, why);
		return -1;
	}
	for (uint32_t m = 0; m < t->n_modules && optional; m++) {
		if (t->modules[m].man.optional) {
			keep[m] = 1;
			if (link_kept(t, keep, e, ops, ordinals, n_ordinals, why, sizeof(why)) !=
			    0) {
				keep[m] = 0;
				vyre_log("--ops-dir: optional module %s left out: %s",
					 t->modules[m].man.module, why);
			}
		}
	}
	const uint32_t n = kept_entries(t, keep, e);
	const int rc = vyre_op_modules_register(e, n);

	if (rc != 0)
		vyre_log("--ops-dir %s: cannot register its ops: %s", dir, vyre_strerror(rc));
	return rc ? -1 : 0;
}

int vyre_ops_dir_link(const char *dir, const struct vyre_opmods *t,
		      const struct vyre_backend_ops *ops, const uint32_t *ordinals,
		      uint32_t n_ordinals)
{
	uint8_t all[VYRE_OPMODS_MAX_MODULES];
	char why[4096];

	if (!ops->link_modules || !t->n_ops)
		return 0;
	struct vyre_op_module_entry *e = calloc(t->n_ops, sizeof(*e));

	if (!e) {
		vyre_log("--ops-dir %s: out of memory for %u ops", dir, t->n_ops);
		return -1;
	}
	memset(all, 1, sizeof(all));
	/* the common case: everything links at once */
	int rc = link_kept(t, all, e, ops, ordinals, n_ordinals, why, sizeof(why));

	if (rc != 0)
		rc = keep_what_links(dir, t, all, e, ops, ordinals, n_ordinals);
	else
		vyre_log("--ops-dir: %u op%s linked into the megakernel on %u device%s", t->n_ops,
			 t->n_ops == 1 ? "" : "s", n_ordinals, n_ordinals == 1 ? "" : "s");
	free(e);
	return rc;
}

void vyre_ops_dir_close(struct vyre_opmods *t)
{
	vyre_op_modules_register(NULL, 0);
	vyre_opmods_free(t);
}

/* VYRE_OP_INFO_* of an op whose operands are @mask (VYRE_OPERAND_*). */
static uint32_t info_flags(int mask, int pure, int stream)
{
	uint32_t f = 0;

	if (mask & VYRE_OPERAND_IN)
		f |= VYRE_OP_INFO_IN;
	if (mask & VYRE_OPERAND_OUT)
		f |= VYRE_OP_INFO_OUT;
	if (mask & VYRE_OPERAND_TABLE)
		f |= VYRE_OP_INFO_TABLE;
	if (mask & VYRE_OPERAND_COUNTED)
		f |= VYRE_OP_INFO_COUNTED;
	if (pure)
		f |= VYRE_OP_INFO_PURE;
	if (stream)
		f |= VYRE_OP_INFO_STREAM;
	return f;
}

static void builtin_reply(uint32_t op, struct vyre_msg_op_reply *r)
{
	r->op = op;
	r->flags = info_flags(vyre_op_operands(op), vyre_op_pure(op), 0);
	snprintf(r->name, sizeof(r->name), "%s", vyre_opmod_builtin(op));
	r->module[0] = '\0';
}

static void module_reply(const struct vyre_op_module_entry *e, struct vyre_msg_op_reply *r)
{
	r->op = e->number;
	r->flags = info_flags(e->mask, e->pure, e->stream);
	snprintf(r->name, sizeof(r->name), "%s", e->name);
	snprintf(r->module, sizeof(r->module), "%s", e->module);
}

void vyre_ops_dir_lookup(const char *name, struct vyre_msg_op_reply *r)
{
	uint32_t n;
	const struct vyre_op_module_entry *all = vyre_op_modules_all(&n);
	const int builtin = vyre_opmod_builtin_number(name);

	memset(r, 0, sizeof(*r));
	if (builtin >= 0) {
		builtin_reply((uint32_t)builtin, r);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		if (all[i].name && strcmp(all[i].name, name) == 0) {
			module_reply(&all[i], r);
			return;
		}
	r->status = VYRE_E_NOENT;
}

void vyre_ops_dir_list(uint32_t cursor, struct vyre_msg_op_reply *r)
{
	uint32_t n;
	const struct vyre_op_module_entry *all = vyre_op_modules_all(&n);
	const uint64_t end = (uint64_t)VYRE_OP_COUNT + n;

	memset(r, 0, sizeof(*r));
	if (cursor >= end)
		return;
	if (cursor < VYRE_OP_COUNT)
		builtin_reply(cursor, r);
	else
		module_reply(&all[cursor - VYRE_OP_COUNT], r);
	r->next = cursor + 1 < end ? cursor + 1 : 0;
}
