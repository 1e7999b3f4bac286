/* SPDX-License-Identifier: MIT */
/*
 * Runs a program: buffers are allocated and filled when their statement is
 * reached, items are submitted in order (reaping while the SQ is full), and
 * CQEs are printed in submission order whatever order they arrive in.
 */
#include "run.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "print.h"
#include "vyre/vyre.h"

#define REAP_BATCH	64u
#define FULL_SQ_POLL_NS 1000000 /* how long to wait for completions while the SQ is full */

struct id_index {
	uint64_t user_data;
	uint32_t item;
};

struct runner {
	const struct vyre_submit_program *p;
	const struct vyre_submit_target *t;
	FILE *out;
	int64_t timeout_ns;
	struct vyre_submit_error *err;
	uint32_t line;
	uint32_t *handles;
	uint32_t *sizes;      /* of each buffer once made or opened */
	struct id_index *ids; /* sorted by user_data */
	struct vyre_cqe *cqes;
	uint8_t *done;
	uint32_t *op_numbers; /* of program.op_names, once looked up; 0 before */
	uint32_t submitted, completed, printed, failed;
};

__attribute__((format(printf, 3, 4))) static int rerr(struct runner *r, int rc, const char *fmt,
						      ...)
{
	va_list ap;

	r->err->line = r->line;
	r->err->column = 0;
	va_start(ap, fmt);
	vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
	va_end(ap);
	return rc;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;

	return x->user_data < y->user_data ? -1 : x->user_data > y->user_data;
}

uint64_t vyre_submit_heap_bytes(const struct vyre_submit_program *p)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < p->n_buffers; i++)
		sum += p->buffers[i].bytes;
	return sum;
}

/* Records CQEs; one that matches no submitted, outstanding item is a protocol error. */
static int take(struct runner *r, const struct vyre_cqe *cqes, int n)
{
	for (int i = 0; i < n; i++) {
		struct id_index key = {cqes[i].user_data, 0};
		const struct id_index *hit =
		    r->p->n_items ? bsearch(&key, r->ids, r->p->n_items, sizeof(key), cmp_id)
				  : NULL;

		if (!hit || hit->item >= r->submitted || r->done[hit->item])
			return rerr(r, VYRE_E_PROTO, "unexpected CQE user_data=%llu",
				    (unsigned long long)cqes[i].user_data);
		r->cqes[hit->item] = cqes[i];
		r->done[hit->item] = 1;
		r->completed++;
		r->failed += cqes[i].status != 0;
	}
	return 0;
}

static int reap(struct runner *r, int64_t timeout_ns)
{
	struct vyre_cqe buf[REAP_BATCH];
	int n = r->t->wait(r->t->impl, buf, REAP_BATCH, timeout_ns);

	if (n == VYRE_E_TIMEDOUT)
		return 0;
	if (n < 0)
		return rerr(r, n, "waiting for completions: %s", vyre_submit_status_name(n));
	return take(r, buf, n);
}

/* Waits for every submitted item, then prints the CQEs not printed yet. */
static int drain(struct runner *r)
{
	int64_t deadline = now_ns() + r->timeout_ns;

	while (r->completed < r->submitted) {
		uint32_t before = r->completed;
		int64_t left = deadline - now_ns();

		if (left <= 0)
			return rerr(r, VYRE_E_TIMEDOUT, "timed out waiting for %u completions",
				    r->submitted - r->completed);
		int rc = reap(r, left);

		if (rc)
			return rc;
		if (r->completed != before)
			deadline = now_ns() + r->timeout_ns;
	}
	for (; r->printed < r->submitted; r->printed++)
		vyre_submit_print_cqe(r->out, r->p, &r->p->items[r->printed], &r->cqes[r->printed]);
	return 0;
}

static uint32_t operand(const struct runner *r, const struct vyre_submit_operand *o)
{
	return o->buffer ? r->handles[o->buffer - 1] : o->value;
}

/* The number of module op @i of the program on this target, looked up once; 0 or an error. */
static int module_op(struct runner *r, uint32_t i, uint32_t *op)
{
	const char *name = r->p->op_names[i].name;

	if (r->op_numbers[i] == 0) {
		if (!r->t->op_lookup)
			return rerr(r, VYRE_E_NOENT,
				    "op '%s': no module ops here (--local runs the built-in ops)",
				    name);
		int rc = r->t->op_lookup(r->t->impl, name, &r->op_numbers[i]);

		if (rc == VYRE_E_NOENT)
			return rerr(
			    r, rc, "vyred has no op named '%s' (vyre-submit ops lists them)", name);
		if (rc)
			return rerr(r, rc, "op '%s': lookup: %s", name,
				    vyre_submit_status_name(rc) ? vyre_submit_status_name(rc)
								: "error");
	}
	*op = r->op_numbers[i];
	return 0;
}

static int submit_item(struct runner *r, uint32_t index)
{
	const struct vyre_submit_item *it = &r->p->items[index];
	struct vyre_work_item w = {it->op, operand(r, &it->in), operand(r, &it->out),
				   operand(r, &it->param)};
	int64_t deadline = now_ns() + r->timeout_ns;

	if (it->op_name) {
		int rc = module_op(r, it->op_name - 1, &w.op_handle);

		if (rc)
			return rc;
	}

	for (;;) {
		int rc =
		    r->t->submit(r->t->impl, &w, (it->flags & VYRE_SQE_RANGE) ? &it->range : NULL,
				 operand(r, &it->stream), it->user_data, it->flags);

		if (rc == 0)
			break;
		if (rc != VYRE_E_AGAIN)
			return rerr(r, rc, "submit: %s", vyre_submit_status_name(rc));
		uint32_t before = r->completed;

		if (now_ns() > deadline)
			return rerr(r, VYRE_E_TIMEDOUT, "the SQ stayed full");
		rc = reap(r, FULL_SQ_POLL_NS);
		if (rc)
			return rc;
		if (r->completed != before)
			deadline = now_ns() + r->timeout_ns;
	}
	r->submitted++;
	return 0;
}

static int init_buffer(struct runner *r, uint32_t index)
{
	const struct vyre_submit_buffer *b = &r->p->buffers[index];
	const uint32_t flags = b->device ? VYRE_BUF_DEVICE : 0;
	uint32_t h, bytes = 0;
	int rc = b->shared[0] ? r->t->create(r->t->impl, b->shared, b->bytes, flags, &h)
			      : r->t->alloc(r->t->impl, b->bytes, flags, &h);

	if (rc)
		return rerr(r, rc, "allocating %u bytes for '%s': %s", b->bytes, b->name,
			    vyre_submit_status_name(rc));
	r->handles[index] = h;
	r->sizes[index] = b->bytes;
	if (b->device)
		return 0; /* zero-filled, and only items may write it */
	uint8_t *mem = r->t->ptr(r->t->impl, h, &bytes);

	if (!mem || bytes < b->bytes)
		return rerr(r, VYRE_E_PROTO, "buffer '%s' has no usable mapping", b->name);
	memset(mem, 0, b->bytes);
	if (b->init == VYRE_SUBMIT_INIT_DATA)
		memcpy(mem, b->data, b->data_len);
	else if (b->init == VYRE_SUBMIT_INIT_FILL)
		for (uint32_t i = 0; i + 4 <= b->bytes; i += 4)
			memcpy(mem + i, &b->fill, 4);
	return 0;
}

/* A buffer another client made: its handle and size come from the domain. */
static int open_buffer(struct runner *r, uint32_t index)
{
	const struct vyre_submit_buffer *b = &r->p->buffers[index];
	uint32_t flags = 0;
	int rc = r->t->open(r->t->impl, b->shared, &r->handles[index], &r->sizes[index], &flags);

	if (rc)
		return rerr(r, rc, "opening '%s': %s", b->shared, vyre_submit_status_name(rc));
	return 0;
}

static int print_buffer(struct runner *r, const struct vyre_submit_stmt *s)
{
	const struct vyre_submit_buffer *b = &r->p->buffers[s->index];
	const uint32_t want = r->sizes[s->index];
	uint32_t bytes = 0;
	const uint8_t *mem = r->t->ptr(r->t->impl, r->handles[s->index], &bytes);
	int rc = drain(r);

	if (rc)
		return rc;
	if (!mem)
		return rerr(r, VYRE_E_PROTO, "buffer '%s' has no mapping", b->name);
	vyre_submit_print_buffer(r->out, b->name, mem, want < bytes ? want : bytes, s->format);
	return 0;
}

/* The domain's named buffers, in name order. */
static int print_names(struct runner *r)
{
	int n = r->t->list(r->t->impl, NULL, 0);
	struct vyre_buffer_info *all = n > 0 ? calloc((size_t)n, sizeof(*all)) : NULL;

	if (n > 0 && !all)
		return rerr(r, VYRE_E_NOMEM, "out of memory");
	/* a name made meanwhile by another client is left for the next listing */
	int got = n > 0 ? r->t->list(r->t->impl, all, (uint32_t)n) : n;

	for (int i = 0; i < got && i < n; i++)
		vyre_submit_print_name(r->out, &all[i]);
	free(all);
	if (got < 0)
		return rerr(r, got, "listing names: %s", vyre_submit_status_name(got));
	return 0;
}

static int run_stmts(struct runner *r)
{
	for (uint32_t i = 0; i < r->p->n_stmts; i++) {
		const struct vyre_submit_stmt *s = &r->p->stmts[i];
		int rc = 0;

		r->line = s->line;
		switch (s->kind) {
		case VYRE_SUBMIT_STMT_BUFFER:
			rc = init_buffer(r, s->index);
			break;
		case VYRE_SUBMIT_STMT_ITEM:
			rc = submit_item(r, s->index);
			break;
		case VYRE_SUBMIT_STMT_WAIT:
			rc = drain(r);
			break;
		case VYRE_SUBMIT_STMT_PRINT:
			rc = print_buffer(r, s);
			break;
		case VYRE_SUBMIT_STMT_OPEN:
			rc = open_buffer(r, s->index);
			break;
		case VYRE_SUBMIT_STMT_NAMES:
			rc = print_names(r);
			break;
		}
		if (rc)
			return rc;
	}
	r->line = 0;
	return drain(r);
}

int vyre_submit_run(const struct vyre_submit_program *p, const struct vyre_submit_target *t,
		    FILE *out, int64_t timeout_ns, struct vyre_submit_error *err)
{
	struct runner r = {.p = p, .t = t, .out = out, .timeout_ns = timeout_ns, .err = err};
	size_t nb = p->n_buffers ? p->n_buffers : 1, ni = p->n_items ? p->n_items : 1;
	int rc = VYRE_E_NOMEM;

	memset(err, 0, sizeof(*err));
	r.handles = calloc(nb, sizeof(*r.handles));
	r.sizes = calloc(nb, sizeof(*r.sizes));
	r.ids = calloc(ni, sizeof(*r.ids));
	r.cqes = calloc(ni, sizeof(*r.cqes));
	r.done = calloc(ni, 1);
	r.op_numbers = calloc(p->n_op_names ? p->n_op_names : 1, sizeof(*r.op_numbers));
	if (r.handles && r.sizes && r.ids && r.cqes && r.done && r.op_numbers) {
		for (uint32_t i = 0; i < p->n_items; i++)
			r.ids[i] = (struct id_index){p->items[i].user_data, i};
		qsort(r.ids, p->n_items, sizeof(*r.ids), cmp_id);
		rc = run_stmts(&r);
	} else {
		rerr(&r, rc, "out of memory");
	}
	fflush(out);
	free(r.handles);
	free(r.sizes);
	free(r.ids);
	free(r.cqes);
	free(r.done);
	free(r.op_numbers);
	return rc ? rc : (int)(r.failed > INT32_MAX ? INT32_MAX : r.failed);
}
