/* SPDX-License-Identifier: MIT */
/*
 * The --local target: vyred's validation and the sequential oracle of
 * gpu/ops.c, in process. It shows what a daemon must answer, so tests compare
 * vyred's output with it.
 */
#include "target.h"

#include <stdlib.h>
#include <string.h>

#include "../../gpu/ops.h"
#include "../../ring/proto.h"
#include "../../ring/resolve.h"
#include "vyre/vyre.h"

struct local_buffer {
	uint64_t off;
	uint32_t bytes;
	uint32_t flags;			     /* VYRE_BUF_DEVICE: no mapping */
	char name[VYRE_BUFFER_NAME_MAX + 1]; /* "" when it has none */
};

struct local {
	struct vyre_heap_view heap;
	uint64_t used;
	struct local_buffer *bufs; /* handle h is bufs[h - 1] */
	uint32_t n_bufs, cap_bufs;
	struct vyre_cqe *cqes;
	uint32_t n_cqes, cap_cqes, head;
};

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	if (*cap > UINT32_MAX / 2)
		return VYRE_E_NOMEM;
	uint32_t cap2 = *cap ? *cap * 2 : 64;
	void *a = realloc(*arr, (size_t)cap2 * size);

	if (!a)
		return VYRE_E_NOMEM;
	*arr = a;
	*cap = cap2;
	return 0;
}

static int local_alloc(void *impl, uint32_t bytes, uint32_t flags, uint32_t *handle)
{
	struct local *l = impl;

	if (bytes % 4 || (flags != 0 && flags != VYRE_BUF_DEVICE))
		return VYRE_E_INVAL;
	if (bytes > l->heap.bytes - l->used || l->n_bufs == UINT32_MAX - 1)
		return VYRE_E_NOMEM;
	int rc = grow((void **)&l->bufs, &l->cap_bufs, l->n_bufs + 1, sizeof(*l->bufs));

	if (rc)
		return rc;
	l->bufs[l->n_bufs++] =
	    (struct local_buffer){.off = l->used, .bytes = bytes, .flags = flags};
	memset(l->heap.base + l->used, 0, bytes);
	l->used += bytes;
	*handle = l->n_bufs;
	return 0;
}

/* The handle of the buffer named @name, or 0. Nothing is freed here, so a scan will do. */
static uint32_t find_name(const struct local *l, const char *name)
{
	for (uint32_t i = 0; i < l->n_bufs; i++)
		if (strcmp(l->bufs[i].name, name) == 0)
			return i + 1;
	return 0;
}

static int name_ok(const char *name)
{
	return name && vyre_msg_name_ok(name, strnlen(name, VYRE_BUFFER_NAME_MAX + 1));
}

static int local_create(void *impl, const char *name, uint32_t bytes, uint32_t flags,
			uint32_t *handle)
{
	struct local *l = impl;

	if (!name_ok(name))
		return VYRE_E_INVAL;
	if (find_name(l, name))
		return VYRE_E_EXIST;
	int rc = local_alloc(impl, bytes, flags, handle);

	if (rc == 0)
		strcpy(l->bufs[*handle - 1].name, name);
	return rc;
}

static int local_open(void *impl, const char *name, uint32_t *handle, uint32_t *bytes,
		      uint32_t *flags)
{
	const struct local *l = impl;

	if (!name_ok(name))
		return VYRE_E_INVAL;
	uint32_t h = find_name(l, name);

	if (h == 0)
		return VYRE_E_NOENT;
	*handle = h;
	if (bytes)
		*bytes = l->bufs[h - 1].bytes;
	if (flags)
		*flags = l->bufs[h - 1].flags;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct vyre_buffer_info *)a)->name,
		      ((const struct vyre_buffer_info *)b)->name);
}

static int local_list(void *impl, struct vyre_buffer_info *out, uint32_t max)
{
	const struct local *l = impl;
	uint32_t n = 0, k = 0;

	if (max && !out)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < l->n_bufs; i++)
		n += l->bufs[i].name[0] != '\0';
	if (n > INT32_MAX)
		return VYRE_E_NOMEM;
	struct vyre_buffer_info *all = calloc(n ? n : 1, sizeof(*all));

	if (!all)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < l->n_bufs; i++)
		if (l->bufs[i].name[0]) {
			memcpy(all[k].name, l->bufs[i].name, sizeof(all[k].name));
			all[k].handle = i + 1;
			all[k].bytes = l->bufs[i].bytes;
			all[k++].flags = l->bufs[i].flags;
		}
	qsort(all, n, sizeof(*all), by_name);
	if (max)
		memcpy(out, all, (size_t)(n < max ? n : max) * sizeof(*all));
	free(all);
	return (int)n;
}

static const struct local_buffer *lookup(const struct local *l, uint32_t handle)
{
	return handle && handle <= l->n_bufs ? &l->bufs[handle - 1] : NULL;
}

static void *local_ptr(void *impl, uint32_t handle, uint32_t *bytes)
{
	struct local *l = impl;
	const struct local_buffer *b = lookup(l, handle);

	if (!b)
		return NULL;
	if (bytes)
		*bytes = b->bytes;
	return (b->flags & VYRE_BUF_DEVICE) ? NULL : l->heap.base + b->off;
}

/* Resolves handles as vyred does; VYRE_E_INVAL for any it would reject. */
static int resolve(const struct local *l, const struct vyre_work_item *it, struct vyre_exec_item *x)
{
	int mask = vyre_op_operands(it->op_handle);
	const struct local_buffer *in = lookup(l, it->input_handle);
	const struct local_buffer *out = lookup(l, it->output_handle);
	const struct local_buffer *table = lookup(l, it->param);

	if (mask < 0)
		return VYRE_E_INVAL;
	if (((mask & VYRE_OPERAND_IN) && !in) || ((mask & VYRE_OPERAND_OUT) && !out) ||
	    ((mask & VYRE_OPERAND_TABLE) && !table))
		return VYRE_E_INVAL;
	memset(x, 0, sizeof(*x));
	x->op = it->op_handle;
	if (mask & VYRE_OPERAND_IN) {
		x->in_off = in->off;
		x->in_bytes = in->bytes;
	}
	if (mask & VYRE_OPERAND_OUT) {
		x->out_off = out->off;
		x->out_bytes = out->bytes;
	}
	if (mask & VYRE_OPERAND_TABLE) {
		x->table_off = table->off;
		x->table_bytes = table->bytes;
	} else {
		x->param = it->param;
	}
	return vyre_op_check_lengths(it->op_handle, it, x->in_bytes, x->out_bytes);
}

/* The stream of a DFA_REPORT (vyre_resolve_aux's rules): 0 or VYRE_E_INVAL. */
static int resolve_stream(const struct local *l, const struct vyre_work_item *it, uint32_t stream,
			  struct vyre_exec_item *x)
{
	const struct local_buffer *s = lookup(l, stream);

	if (!stream)
		return 0;
	if (!s || s->bytes < sizeof(struct vyre_stream_state) || (s->flags & VYRE_BUF_TRANSIENT) ||
	    stream == it->input_handle || stream == it->output_handle || stream == it->param)
		return VYRE_E_INVAL;
	x->aux_off = s->off;
	x->aux_bytes = s->bytes;
	return 0;
}

static int local_submit(void *impl, const struct vyre_work_item *it,
			const struct vyre_item_range *range, uint32_t stream, uint64_t user_data,
			uint32_t flags)
{
	struct local *l = impl;
	struct vyre_exec_item x;
	struct vyre_cqe cqe = {.user_data = user_data};

	if ((flags & ~VYRE_SQE_VALID_FLAGS) || (stream && it->op_handle != VYRE_OP_DFA_REPORT &&
						it->op_handle != VYRE_OP_DFA_REPORT_COUNTED))
		return VYRE_E_INVAL;
	int rc = grow((void **)&l->cqes, &l->cap_cqes, l->n_cqes + 1, sizeof(*l->cqes));

	if (rc)
		return rc;
	cqe.status = resolve(l, it, &x);
	/* byte ranges as vyred narrows them (docs/design.md 6.6) */
	if (cqe.status == 0 && (flags & VYRE_SQE_RANGE)) {
		const struct vyre_sqe sqe = {.flags = flags,
					     .item = *it,
					     .in_offset = range->in_offset,
					     .out_offset = range->out_offset,
					     .in_length = range->in_length,
					     .out_length = range->out_length};

		cqe.status = vyre_resolve_range(&sqe, &x);
	}
	if (cqe.status == 0)
		cqe.status = resolve_stream(l, it, stream, &x);
	if (cqe.status == 0)
		cqe.status = vyre_exec_one(&l->heap, &x, &cqe.result);
	l->cqes[l->n_cqes++] = cqe;
	return 0;
}

static int local_wait(void *impl, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns)
{
	struct local *l = impl;
	uint32_t n = 0;

	(void)timeout_ns;
	while (n < max && l->head < l->n_cqes)
		out[n++] = l->cqes[l->head++];
	if (l->head == l->n_cqes)
		l->head = l->n_cqes = 0;
	return n ? (int)n : VYRE_E_TIMEDOUT;
}

static void local_close(void *impl)
{
	struct local *l = impl;

	free(l->heap.base);
	free(l->bufs);
	free(l->cqes);
	free(l);
}

int vyre_submit_target_local(uint64_t heap_bytes, struct vyre_submit_target *t)
{
	struct local *l = calloc(1, sizeof(*l));

	if (!l || heap_bytes >= SIZE_MAX) {
		free(l);
		return VYRE_E_NOMEM;
	}
	l->heap.base = malloc(heap_bytes ? heap_bytes : 1);
	if (!l->heap.base) {
		free(l);
		return VYRE_E_NOMEM;
	}
	l->heap.bytes = heap_bytes;
	t->impl = l;
	t->alloc = local_alloc;
	t->ptr = local_ptr;
	t->submit = local_submit;
	t->wait = local_wait;
	t->close = local_close;
	t->create = local_create;
	t->open = local_open;
	t->list = local_list;
	t->op_lookup = NULL; /* the oracle here loads no op modules */
	return 0;
}
