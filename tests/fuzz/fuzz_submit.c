/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the vyre-submit input parser (tools/submit/parse.c, lex.c,
 * dfa_compile.c).
 *
 * Any bytes either parse into a program whose every reference is in range
 * or fail with VYRE_E_INVAL (or VYRE_E_NOMEM) and a terminated message that
 * names a line. Small programs are then run on the in-process oracle target
 * (--local), which must finish and report only VYRE_E_* codes.
 */
#include <stdio.h>
#include <string.h>

#include "../../tools/submit/program.h"
#include "../../tools/submit/run.h"
#include "../../tools/submit/target.h"
#include "fuzz.h"

#define PARSE_MAX_INPUT (64u << 10)
#define RUN_MAX_ITEMS	4096u
#define RUN_MAX_BYTES	(1u << 20)
#define RUN_TIMEOUT_NS	1000000000ll

static void check_program(const struct vyre_submit_program *p)
{
	for (uint32_t b = 0; b < p->n_buffers; b++) {
		const struct vyre_submit_buffer *buf = &p->buffers[b];

		FUZZ_CHECK(buf->bytes % 4 == 0);
		FUZZ_CHECK(buf->name[VYRE_SUBMIT_NAME_MAX] == '\0');
		FUZZ_CHECK(buf->data_len <= buf->bytes);
		FUZZ_CHECK(buf->init != VYRE_SUBMIT_INIT_DATA || buf->data || buf->data_len == 0);
		FUZZ_CHECK(!buf->opened || (buf->shared[0] && buf->bytes == 0));
	}
	for (uint32_t i = 0; i < p->n_items; i++) {
		const struct vyre_submit_item *it = &p->items[i];

		FUZZ_CHECK(it->in.buffer <= p->n_buffers);
		FUZZ_CHECK(it->out.buffer <= p->n_buffers);
		FUZZ_CHECK(it->param.buffer <= p->n_buffers);
	}
	for (uint32_t s = 0; s < p->n_stmts; s++) {
		const struct vyre_submit_stmt *st = &p->stmts[s];

		if (st->kind == VYRE_SUBMIT_STMT_BUFFER || st->kind == VYRE_SUBMIT_STMT_PRINT ||
		    st->kind == VYRE_SUBMIT_STMT_OPEN)
			FUZZ_CHECK(st->index < p->n_buffers);
		else if (st->kind == VYRE_SUBMIT_STMT_ITEM)
			FUZZ_CHECK(st->index < p->n_items);
	}
}

static void run_local(const struct vyre_submit_program *p)
{
	static FILE *sink;
	struct vyre_submit_target t;
	struct vyre_submit_error err;
	uint64_t heap = vyre_submit_heap_bytes(p);

	if (p->n_items > RUN_MAX_ITEMS || heap > RUN_MAX_BYTES)
		return;
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!sink || vyre_submit_target_local(heap ? heap : 4, &t) != 0)
		return;
	memset(&err, 0, sizeof(err));
	int rc = vyre_submit_run(p, &t, sink, RUN_TIMEOUT_NS, &err);

	FUZZ_CHECK(rc >= VYRE_E_NOENT); /* the lowest VYRE_E_* code */
	FUZZ_CHECK(rc < 0 || (uint32_t)rc <= p->n_items);
	FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
	t.close(t.impl);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct vyre_submit_program *p = NULL;
	struct vyre_submit_error err;

	if (size > PARSE_MAX_INPUT)
		return 0;
	memset(&err, 0x55, sizeof(err));
	int rc = vyre_submit_parse((const char *)data, size, &p, &err);

	if (rc != 0) {
		FUZZ_CHECK(rc == VYRE_E_INVAL || rc == VYRE_E_NOMEM);
		FUZZ_CHECK(p == NULL);
		FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
		return 0;
	}
	FUZZ_CHECK(p != NULL);
	check_program(p);
	run_local(p);
	vyre_submit_program_free(p);
	return 0;
}
