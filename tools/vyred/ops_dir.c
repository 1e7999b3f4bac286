/* SPDX-License-Identifier: MIT */
/* vyred's op modules: --ops-dir loaded and registered (ops_dir.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"

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

void vyre_ops_dir_close(struct vyre_opmods *t)
{
	vyre_op_modules_register(NULL, 0);
	vyre_opmods_free(t);
}
