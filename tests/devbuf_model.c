/* SPDX-License-Identifier: MIT */
/* The device buffer tests' oracle of one domain (devbuf_model.h). */
#include <stdlib.h>
#include <string.h>

#include "devbuf_model.h"

uint64_t dm_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int dm_add(struct dm *m, uint32_t handle, uint32_t bytes, int device, const void *init)
{
	if (m->n == DM_MAX_BUFFERS)
		return -1;
	uint8_t *mem = calloc(1, bytes ? bytes : 1);

	if (!mem)
		return -1;
	if (init)
		memcpy(mem, init, bytes);
	m->b[m->n] = (struct dm_buf){handle, bytes, device};
	m->views[m->n] = (struct vyre_heap_view){mem, bytes};
	return (int)m->n++;
}

static int find(const struct dm *m, uint32_t handle)
{
	for (uint32_t i = 0; handle && i < m->n; i++)
		if (m->b[i].handle == handle)
			return (int)i;
	return -1;
}

uint8_t *dm_bytes(const struct dm *m, uint32_t handle)
{
	int i = find(m, handle);

	return i < 0 ? NULL : m->views[i].base;
}

void dm_forget(struct dm *m, uint32_t handle)
{
	int i = find(m, handle);

	if (i >= 0)
		m->b[i].handle = 0;
}

/*
 * The buffers of @it's operands (-1: the op has none) after the checks of
 * whole buffers: 0, or -1 when the item is invalid as it stands.
 */
static int operands(const struct dm *m, const struct vyre_work_item *it, uint32_t flags, int *in,
		    int *out, int *table)
{
	const int mask = vyre_op_operands(it->op_handle);

	*in = *out = *table = -1;
	if (mask < 0 || (flags & ~VYRE_SQE_VALID_FLAGS))
		return -1;
	if (((mask & VYRE_OPERAND_IN) && (*in = find(m, it->input_handle)) < 0) ||
	    ((mask & VYRE_OPERAND_OUT) && (*out = find(m, it->output_handle)) < 0) ||
	    ((mask & VYRE_OPERAND_TABLE) && (*table = find(m, it->param)) < 0))
		return -1;
	return vyre_op_check_lengths(it->op_handle, it, *in < 0 ? 0 : m->b[*in].bytes,
				     *out < 0 ? 0 : m->b[*out].bytes)
		   ? -1
		   : 0;
}

/* Run @it on bytes [r.in_offset, +r.in_length) of buffer @in and so on, the table whole. */
static void run_on(struct dm *m, const struct vyre_work_item *it, int in, int out, int table,
		   const struct vyre_item_range *r, int32_t *status, uint64_t *result)
{
	const struct vyre_exec_item x = {
	    .op = it->op_handle,
	    .param = table < 0 ? it->param : 0,
	    .in_heap = in < 0 ? 0 : (uint32_t)in,
	    .out_heap = out < 0 ? 0 : (uint32_t)out,
	    .table_heap = table < 0 ? 0 : (uint32_t)table,
	    .in_bytes = r->in_length,
	    .out_bytes = r->out_length,
	    .table_bytes = table < 0 ? 0 : m->b[table].bytes,
	    .in_off = r->in_offset,
	    .out_off = r->out_offset,
	};

	*status = vyre_exec_one(m->views, &x, result);
}

void dm_exec(struct dm *m, const struct vyre_work_item *it, uint32_t flags, int32_t *status,
	     uint64_t *result)
{
	int in, out, table;

	*status = VYRE_E_INVAL;
	*result = 0;
	if (operands(m, it, flags, &in, &out, &table) != 0)
		return;
	const struct vyre_item_range whole = {.in_length = in < 0 ? 0 : m->b[in].bytes,
					      .out_length = out < 0 ? 0 : m->b[out].bytes};

	run_on(m, it, in, out, table, &whole, status, result);
}

/* A range of a buffer of @bytes, as design.md 6.6 allows it, of an operand the op @has. */
static int range_valid(int has, uint64_t off, uint32_t len, uint32_t bytes)
{
	if (!has)
		return off == 0 && len == 0;
	return off % 4 == 0 && len % 4 == 0 && off <= bytes && (uint64_t)len <= bytes - off;
}

void dm_exec_range(struct dm *m, const struct vyre_work_item *it, uint32_t flags,
		   const struct vyre_item_range *r, int32_t *status, uint64_t *result)
{
	int in, out, table;

	*status = VYRE_E_INVAL;
	*result = 0;
	if (operands(m, it, flags, &in, &out, &table) != 0)
		return;
	if (!range_valid(in >= 0, r->in_offset, r->in_length, in < 0 ? 0 : m->b[in].bytes) ||
	    !range_valid(out >= 0, r->out_offset, r->out_length, out < 0 ? 0 : m->b[out].bytes))
		return;
	/* one buffer: the same range (in place) or ranges that share no byte */
	if (in >= 0 && in == out && r->in_length && r->out_length &&
	    !(r->in_offset == r->out_offset && r->in_length == r->out_length) &&
	    r->in_offset < r->out_offset + r->out_length &&
	    r->out_offset < r->in_offset + r->in_length)
		return;
	if (vyre_op_check_lengths(it->op_handle, it, r->in_length, r->out_length) != 0)
		return;
	run_on(m, it, in, out, table, r, status, result);
}

void dm_free(struct dm *m)
{
	for (uint32_t i = 0; i < m->n; i++)
		free(m->views[i].base);
	memset(m, 0, sizeof(*m));
}

void dm_random_table(uint32_t *words, uint32_t n, uint64_t *rng)
{
	const uint32_t accept_words = (n + 31) / 32;

	words[0] = n;
	words[1] = (uint32_t)(dm_rng(rng) % n);
	for (uint32_t i = 0; i < accept_words; i++)
		words[2 + i] = (uint32_t)dm_rng(rng);
	if (n % 32)
		words[2 + accept_words - 1] &= (1u << (n % 32)) - 1;
	for (uint32_t i = 0; i < 256 * n; i++)
		words[2 + accept_words + i] = (uint32_t)(dm_rng(rng) % n);
}

void dm_count_a_table(uint32_t *w, uint32_t bad)
{
	w[0] = 2;
	w[1] = 0;
	w[2] = 2;
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t b = 0; b < 256; b++)
			w[3 + 256 * s + b] = b == 'a';
	if (bad)
		w[3 + 256 + 'z'] = 7;
}
