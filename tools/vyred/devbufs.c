/* SPDX-License-Identifier: MIT */
/* Device buffers of one loop: allocation, limits, write generations (devbufs.h). */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "devbufs.h"
#include "log.h"

int vyre_devbufs_init(struct vyre_devbufs *t, uint32_t base, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->base = base;
	t->max = max;
	if (max == 0)
		return 0;
	t->buf = calloc(max, sizeof(*t->buf));
	t->free = calloc(max, sizeof(*t->free));
	if (!t->buf || !t->free) {
		vyre_devbufs_fini(t);
		return VYRE_E_NOMEM;
	}
	/* popped from the end: buffer 0 first */
	for (uint32_t k = 0; k < max; k++)
		t->free[k] = max - 1 - k;
	t->n_free = max;
	return 0;
}

void vyre_devbufs_fini(struct vyre_devbufs *t)
{
	free(t->buf);
	free(t->free);
	memset(t, 0, sizeof(*t));
}

/* The device buffer at heap index @heap, or NULL for a domain heap. */
static struct vyre_devbuf *devbuf_of(const struct vyre_devbufs *t, uint32_t heap)
{
	if (heap < t->base || heap - t->base >= t->max)
		return NULL;
	struct vyre_devbuf *db = &t->buf[heap - t->base];

	return db->live ? db : NULL;
}

/* Take @bytes of the GPU's --device-bytes-max, shared by its loops; 0 when they do not fit. */
static int reserve(struct vyre_gpu *gpu, uint64_t bytes)
{
	uint64_t used = __atomic_load_n(&gpu->device_bytes_used, __ATOMIC_RELAXED);

	do {
		if (bytes > gpu->device_bytes_max || used > gpu->device_bytes_max - bytes)
			return 0;
	} while (!__atomic_compare_exchange_n(&gpu->device_bytes_used, &used, used + bytes, 1,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 1;
}

static void unreserve(struct vyre_gpu *gpu, uint64_t bytes)
{
	__atomic_fetch_sub(&gpu->device_bytes_used, bytes, __ATOMIC_RELAXED);
}

/* Once per client and limit, so that a client retrying in a loop cannot flood the log. */
static int log_once(struct vyre_conn *c, uint32_t bit)
{
	if (c->limits_logged & bit)
		return 0;
	c->limits_logged |= bit;
	return 1;
}

int vyre_devbuf_alloc(struct vyre_daemon *d, struct vyre_conn *c, uint32_t bytes,
		      struct vyre_buffer_ref *ref)
{
	struct vyre_devbufs *t = &d->devbufs;
	struct vyre_gpu *gpu = &d->sh->gpus[d->gpu];
	char why[256] = "";

	if (!d->backend_ops->alloc_device || !d->backend_ops->free_device)
		return VYRE_E_INVAL;
	if (t->n_free == 0) {
		if (log_once(c, LIMIT_DEVICE_BUFFERS))
			vyre_log("client %u: --max-device-buffers %u reached", c->id, t->max);
		return VYRE_E_NOMEM;
	}
	if (!reserve(gpu, bytes)) {
		if (log_once(c, LIMIT_DEVICE_BYTES))
			vyre_log("client %u: --device-bytes-max %llu reached: %llu bytes in device "
				 "buffers, %u more asked",
				 c->id, (unsigned long long)gpu->device_bytes_max,
				 (unsigned long long)__atomic_load_n(&gpu->device_bytes_used,
								     __ATOMIC_RELAXED),
				 bytes);
		return VYRE_E_NOMEM;
	}
	const uint32_t k = t->free[--t->n_free];
	int rc = d->backend_ops->alloc_device(d->backend, t->base + k, bytes, why, sizeof(why));

	if (rc != 0) {
		t->free[t->n_free++] = k;
		unreserve(gpu, bytes);
		if (log_once(c, LIMIT_DEVICE_BYTES))
			vyre_log("client %u: backend %s has no room for a %u-byte device buffer "
				 "(within --device-bytes-max %llu): %s",
				 c->id, d->backend_ops->name, bytes,
				 (unsigned long long)gpu->device_bytes_max,
				 why[0] ? why : vyre_strerror(rc));
		return rc;
	}
	t->buf[k] = (struct vyre_devbuf){.bytes = bytes, .live = 1};
	t->allocs++;
	*ref = (struct vyre_buffer_ref){
	    .bytes = bytes, .domain = c->domain->id, .heap = t->base + k, .flags = VYRE_BUF_DEVICE};
	return 0;
}

void vyre_devbuf_free(struct vyre_daemon *d, const struct vyre_buffer_ref *ref)
{
	struct vyre_devbufs *t = &d->devbufs;
	struct vyre_devbuf *db = devbuf_of(t, ref->heap);

	if (!db)
		return;
	d->backend_ops->free_device(d->backend, ref->heap);
	unreserve(&d->sh->gpus[d->gpu], db->bytes);
	db->live = 0;
	t->free[t->n_free++] = ref->heap - t->base;
}

/* Ops whose table is a DFA (docs/design.md section 6): the ones a trusted table spares a check. */
static int dfa_table(uint32_t op)
{
	return op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED ||
	       op == VYRE_OP_DFA_REPORT || op == VYRE_OP_DFA_REPORT_COUNTED;
}

/* Ops that read a table's report section (design.md 6.8). */
static int is_report(uint32_t op)
{
	return op == VYRE_OP_DFA_REPORT || op == VYRE_OP_DFA_REPORT_COUNTED;
}

/* The most bytes @x may write into its output. */
static uint64_t write_bytes(const struct vyre_exec_item *x, int mask)
{
	if (mask & VYRE_OPERAND_WORD0)
		return 4;
	switch (x->op) {
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		return x->in_bytes < x->out_bytes ? x->in_bytes : x->out_bytes;
	default:
		return x->out_bytes;
	}
}

void vyre_devbufs_stamp(struct vyre_daemon *d, struct vyre_batch *b)
{
	struct vyre_devbufs *t = &d->devbufs;
	uint64_t readback = 0;

	b->stats.readback_bytes = 0;
	if (t->n_free == t->max)
		return; /* no device buffer in this loop: nothing to mark or count */
	for (uint32_t i = 0; i < b->n_accepted; i++) {
		struct vyre_exec_item *x = &b->exec[i];
		const int mask = vyre_op_operands(x->op);

		if (b->status[i] != 0 || mask <= 0)
			continue;
		struct vyre_devbuf *tab =
		    (mask & VYRE_OPERAND_TABLE) ? devbuf_of(t, x->table_heap) : NULL;
		struct vyre_devbuf *out =
		    (mask & VYRE_OPERAND_OUT) ? devbuf_of(t, x->out_heap) : NULL;

		/* reads come before the item's own write: a scan into its own table reads it first
		 */
		if (tab && dfa_table(x->op)) {
			b->table_gen[i] = tab->write_gen;
			if (tab->valid_gen == tab->write_gen + 1) {
				x->flags |= VYRE_EXEC_TABLE_TRUSTED;
				t->trusted++;
			}
			if (is_report(x->op) && tab->report_gen == tab->write_gen + 1)
				x->flags |= VYRE_EXEC_REPORT_TRUSTED;
		}
		/* a DFA_REPORT's stream is written too (design.md 6.8) */
		struct vyre_devbuf *aux =
		    (mask & VYRE_OPERAND_AUX) && x->aux_bytes ? devbuf_of(t, x->aux_heap) : NULL;

		/*
		 * a device stream is read too, so its item's heap writes cross back as
		 * well; the input's entry (a line of its own an item) only when the
		 * table and the stream do not already say so
		 */
		const int reads_device =
		    tab || aux || ((mask & VYRE_OPERAND_IN) && devbuf_of(t, x->in_heap));

		if (out)
			out->write_gen++;
		else if ((mask & VYRE_OPERAND_OUT) && b->dedup_of[i] == VYRE_PLAN_NO_DEDUPE &&
			 reads_device)
			readback += write_bytes(x, mask);
		if (aux)
			aux->write_gen++;
		else if ((mask & VYRE_OPERAND_AUX) && x->aux_bytes && reads_device)
			readback += sizeof(struct vyre_stream_state);
	}
	b->stats.readback_bytes = readback;
}

void vyre_devbufs_finish(struct vyre_daemon *d, const struct vyre_batch *b, int status)
{
	const struct vyre_devbufs *t = &d->devbufs;

	if (status != 0 || t->n_free == t->max)
		return;
	for (uint32_t k = 0; k < b->plan.n_order; k++) {
		const uint32_t i = b->plan.order[k];
		const struct vyre_exec_item *x = &b->exec[i];

		if (!dfa_table(x->op) || b->results[i].status != 0)
			continue;
		struct vyre_devbuf *tab = devbuf_of(t, x->table_heap);

		if (tab && b->table_gen[i] + 1 > tab->valid_gen)
			tab->valid_gen = b->table_gen[i] + 1;
		/* a report checked its section too (or trusted it at this same generation) */
		if (tab && is_report(x->op) && b->table_gen[i] + 1 > tab->report_gen)
			tab->report_gen = b->table_gen[i] + 1;
	}
}
