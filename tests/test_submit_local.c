/* SPDX-License-Identifier: MIT */
/*
 * vyre-submit's runner (tools/submit/run.c) on the in-process oracle target:
 * every example produces its checked-in expected output (examples/NAME.out,
 * verified by hand); CQEs that arrive out of order and a full SQ change
 * nothing printed; a bad target's errors name the statement's line.
 */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../tools/submit/program.h"
#include "../tools/submit/run.h"
#include "../tools/submit/target.h"

#define SECOND_NS 1000000000

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 16);

	if (!f)
		fail_msg("cannot open %s", path);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

static struct vyre_submit_program *parse_file(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	struct vyre_submit_program *p;
	struct vyre_submit_error err;

	if (vyre_submit_parse(text, len, &p, &err))
		fail_msg("%s:%u: %s", path, err.line, err.msg);
	free(text);
	return p;
}

/* Runs @p on @t; returns what it printed (malloc'd) and stores the run's return value. */
static char *run_capture(const struct vyre_submit_program *p, const struct vyre_submit_target *t,
			 int *rc, struct vyre_submit_error *err)
{
	char *out = NULL;
	size_t out_len = 0;
	FILE *f = open_memstream(&out, &out_len);

	assert_non_null(f);
	*rc = vyre_submit_run(p, t, f, SECOND_NS, err);
	fclose(f);
	return out;
}

/*
 * A target that holds the oracle's CQEs back and releases them newest first,
 * and refuses submissions (VYRE_E_AGAIN) while it holds @sq_limit of them,
 * as a full SQ does.
 */
struct shuffler {
	struct vyre_submit_target inner;
	struct vyre_cqe held[64];
	uint32_t n_held, sq_limit, agains;
};

static int shuffle_alloc(void *impl, uint32_t bytes, uint32_t flags, uint32_t *handle)
{
	struct shuffler *s = impl;

	return s->inner.alloc(s->inner.impl, bytes, flags, handle);
}

static void *shuffle_ptr(void *impl, uint32_t handle, uint32_t *bytes)
{
	struct shuffler *s = impl;

	return s->inner.ptr(s->inner.impl, handle, bytes);
}

static int shuffle_submit(void *impl, const struct vyre_work_item *it,
			  const struct vyre_item_range *range, uint32_t stream, uint64_t user_data,
			  uint32_t flags)
{
	struct shuffler *s = impl;

	if (s->n_held >= s->sq_limit) {
		s->agains++;
		return VYRE_E_AGAIN;
	}
	int rc = s->inner.submit(s->inner.impl, it, range, stream, user_data, flags);

	if (rc == 0)
		assert_int_equal(s->inner.wait(s->inner.impl, &s->held[s->n_held++], 1, 0), 1);
	return rc;
}

static int shuffle_wait(void *impl, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns)
{
	struct shuffler *s = impl;
	uint32_t n = 0;

	(void)timeout_ns;
	while (n < max && s->n_held > 0)
		out[n++] = s->held[--s->n_held];
	return n ? (int)n : VYRE_E_TIMEDOUT;
}

static void shuffle_close(void *impl)
{
	struct shuffler *s = impl;

	s->inner.close(s->inner.impl);
}

static int shuffle_create(void *impl, const char *name, uint32_t bytes, uint32_t flags,
			  uint32_t *handle)
{
	struct shuffler *s = impl;

	return s->inner.create(s->inner.impl, name, bytes, flags, handle);
}

static int shuffle_open(void *impl, const char *name, uint32_t *handle, uint32_t *bytes,
			uint32_t *flags)
{
	struct shuffler *s = impl;

	return s->inner.open(s->inner.impl, name, handle, bytes, flags);
}

static int shuffle_list(void *impl, struct vyre_buffer_info *out, uint32_t max)
{
	struct shuffler *s = impl;

	return s->inner.list(s->inner.impl, out, max);
}

static void make_shuffler(struct shuffler *s, uint64_t heap_bytes, uint32_t sq_limit)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(vyre_submit_target_local(heap_bytes, &s->inner), 0);
	s->sq_limit = sq_limit;
}

static struct vyre_submit_target shuffler_target(struct shuffler *s)
{
	return (struct vyre_submit_target){.impl = s,
					   .alloc = shuffle_alloc,
					   .ptr = shuffle_ptr,
					   .submit = shuffle_submit,
					   .wait = shuffle_wait,
					   .close = shuffle_close,
					   .create = shuffle_create,
					   .open = shuffle_open,
					   .list = shuffle_list};
}

/* Expected result of each example: errors.vs has failing items, the rest none. */
static int expected_failures(const char *path)
{
	return strstr(path, "/errors.vs") ? 8 : 0;
}

static void test_examples_match_expected_output(void **state)
{
	(void)state;
	glob_t g;

	assert_int_equal(glob(VYRE_SRCDIR "/examples/*.vs", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 4);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char golden_path[4096];
		size_t glen, plen = strlen(g.gl_pathv[i]);

		assert_true(plen + 1 < sizeof(golden_path));
		memcpy(golden_path, g.gl_pathv[i], plen - 2);
		memcpy(golden_path + plen - 2, "out", 4);
		char *golden = read_file(golden_path, &glen);
		struct vyre_submit_program *p = parse_file(g.gl_pathv[i]);
		struct vyre_submit_error err;
		struct vyre_submit_target t;
		struct shuffler sh;
		int rc;

		assert_int_equal(vyre_submit_target_local(vyre_submit_heap_bytes(p), &t), 0);
		char *out = run_capture(p, &t, &rc, &err);

		t.close(t.impl);
		if (rc != expected_failures(g.gl_pathv[i]) || strcmp(out, golden) != 0)
			fail_msg("%s: rc %d (%s)\n--- got\n%s--- want\n%s", g.gl_pathv[i], rc,
				 err.msg, out, golden);
		free(out);

		/* out of order, with back-pressure: the same text */
		make_shuffler(&sh, vyre_submit_heap_bytes(p), 2);
		t = shuffler_target(&sh);
		out = run_capture(p, &t, &rc, &err);
		t.close(t.impl);
		if (rc != expected_failures(g.gl_pathv[i]) || strcmp(out, golden) != 0)
			fail_msg("%s shuffled: rc %d (%s)\n--- got\n%s--- want\n%s", g.gl_pathv[i],
				 rc, err.msg, out, golden);
		free(out);
		free(golden);
		vyre_submit_program_free(p);
	}
	globfree(&g);
}

static void test_full_sq_is_retried(void **state)
{
	(void)state;
	char text[8192];
	size_t n = (size_t)snprintf(text, sizeof(text), "buffer a 4\n");

	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "item ADD a a 1\n");
	snprintf(text + n, sizeof(text) - n, "print a\n");
	struct vyre_submit_program *p;
	struct vyre_submit_error err;
	struct shuffler sh;
	int rc;

	assert_int_equal(vyre_submit_parse(text, strlen(text), &p, &err), 0);
	make_shuffler(&sh, 4, 3);
	struct vyre_submit_target t = shuffler_target(&sh);
	char *out = run_capture(p, &t, &rc, &err);

	assert_int_equal(rc, 0);
	assert_true(sh.agains >= 30);
	/* in-place ADD is applied 100 times, in submission order */
	assert_non_null(strstr(out, "buffer a words 100\n"));
	/* CQEs printed in submission order although they came back reversed */
	assert_non_null(strstr(out, "cqe user_data=2 line=2 op=ADD"));
	assert_true(strstr(out, "user_data=2 ") < strstr(out, "user_data=3 "));
	assert_true(strstr(out, "user_data=100 ") < strstr(out, "user_data=101 "));
	free(out);
	t.close(t.impl);
	vyre_submit_program_free(p);
}

/* A target whose wait returns a CQE for an item nobody submitted. */
static int liar_wait(void *impl, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns)
{
	(void)impl;
	(void)max;
	(void)timeout_ns;
	memset(out, 0, sizeof(*out));
	out->user_data = 999;
	return 1;
}

static int never_wait(void *impl, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns)
{
	(void)impl;
	(void)out;
	(void)max;
	(void)timeout_ns;
	return VYRE_E_TIMEDOUT;
}

static int gone_wait(void *impl, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns)
{
	(void)impl;
	(void)out;
	(void)max;
	(void)timeout_ns;
	return VYRE_E_DISCONNECTED;
}

static int refuse_alloc(void *impl, uint32_t bytes, uint32_t flags, uint32_t *handle)
{
	(void)impl;
	(void)bytes;
	(void)flags;
	(void)handle;
	return VYRE_E_NOMEM;
}

static void expect_run_error(int (*wait)(void *, struct vyre_cqe *, uint32_t, int64_t),
			     int (*alloc)(void *, uint32_t, uint32_t, uint32_t *), int want_rc,
			     uint32_t want_line, const char *want_msg)
{
	const char *text = "buffer a 4\nbuffer b 4\nitem FILL 0 a 1\nwait\n";
	struct vyre_submit_program *p;
	struct vyre_submit_error err;
	struct vyre_submit_target t;
	int rc;

	assert_int_equal(vyre_submit_parse(text, strlen(text), &p, &err), 0);
	assert_int_equal(vyre_submit_target_local(64, &t), 0);
	if (wait)
		t.wait = wait;
	if (alloc)
		t.alloc = alloc;
	char *out = run_capture(p, &t, &rc, &err);

	if (rc != want_rc || err.line != want_line || !strstr(err.msg, want_msg))
		fail_msg("rc %d line %u '%s'; want %d line %u '%s'", rc, err.line, err.msg, want_rc,
			 want_line, want_msg);
	free(out);
	t.close(t.impl);
	vyre_submit_program_free(p);
}

static void test_target_errors_name_the_line(void **state)
{
	(void)state;
	expect_run_error(liar_wait, NULL, VYRE_E_PROTO, 4, "unexpected CQE user_data=999");
	expect_run_error(never_wait, NULL, VYRE_E_TIMEDOUT, 4, "timed out waiting for 1");
	expect_run_error(gone_wait, NULL, VYRE_E_DISCONNECTED, 4, "E_DISCONNECTED");
	expect_run_error(NULL, refuse_alloc, VYRE_E_NOMEM, 1, "allocating 4 bytes for 'a'");
}

static void test_local_heap_exhaustion(void **state)
{
	(void)state;
	const char *text = "buffer a 8\nbuffer b 8\n";
	struct vyre_submit_program *p;
	struct vyre_submit_error err;
	struct vyre_submit_target t;
	int rc;

	assert_int_equal(vyre_submit_parse(text, strlen(text), &p, &err), 0);
	assert_int_equal(vyre_submit_target_local(12, &t), 0);
	char *out = run_capture(p, &t, &rc, &err);

	assert_int_equal(rc, VYRE_E_NOMEM);
	assert_int_equal(err.line, 2);
	free(out);
	t.close(t.impl);
	vyre_submit_program_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examples_match_expected_output),
	    cmocka_unit_test(test_full_sq_is_retried),
	    cmocka_unit_test(test_target_errors_name_the_line),
	    cmocka_unit_test(test_local_heap_exhaustion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
