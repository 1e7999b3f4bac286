/* SPDX-License-Identifier: MIT */
/*
 * vyre-submit end to end: a real vyred on a temporary socket, the real
 * vyre-submit binary. Every example prints exactly its expected output
 * (examples/NAME.out, which the sequential oracle produced and a person
 * checked), also with two clients at once in one shared domain; random
 * programs (more items than the SQ holds, every op, invalid items, fences,
 * waits) print the same through vyred as through --local, the in-process
 * oracle; named buffers pass between vyre-submit and a libvyre client of
 * the domain; bad input and a missing daemon give their documented exit codes;
 * and the vyre-bench e2e suite runs against the daemon. CQE flags are
 * compared with "deduped" masked: dedupe may not change anything else.
 * VYRE_TEST_SCALE multiplies the random programs' length.
 */
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_integration_daemon.h"
#include "vyre/vyre.h"

static char submit_bin[PATH_MAX], bench_bin[PATH_MAX];
static struct vyre_test_daemon daemon_;
static char tmpdir[] = "/tmp/vyre-submit-e2e-XXXXXX";

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);

	if (!f)
		fail_msg("cannot open %s", path);
	assert_non_null(buf);
	for (;;) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		cap *= 2;
		char *grown = realloc(buf, cap);

		assert_non_null(grown);
		buf = grown;
	}
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* "flags=deduped" -> "flags=-": the only difference dedupe may make. */
static void mask_dedupe(char *s)
{
	char *p;

	while ((p = strstr(s, "flags=deduped")) != NULL) {
		p[6] = '-';
		memmove(p + 7, p + 13, strlen(p + 13) + 1);
	}
}

struct result {
	int status;
	char *out, *err;
};

/* Runs @bin with @argv (argv[0] excluded, NULL-terminated) and stdin from @in. */
static struct result run(const char *bin, const char *const *args, const char *in)
{
	char out[128], err[128];
	const char *argv[24];
	int n = 0;
	struct result r;

	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	argv[n++] = bin;
	for (; args[n - 1] && n < 23; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int i = open(in ? in : "/dev/null", O_RDONLY);

		if (o < 0 || e < 0 || i < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || dup2(i, 0) < 0)
			_exit(126);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	r.out = slurp(out);
	r.err = slurp(err);
	return r;
}

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static int expected_status(const char *example)
{
	return strstr(example, "/errors.vs") ? 1 : 0;
}

static char *golden_for(const char *example)
{
	char path[PATH_MAX];
	size_t n = strlen(example);

	assert_true(n + 2 < sizeof(path));
	memcpy(path, example, n - 2);
	memcpy(path + n - 2, "out", 4);
	return slurp(path);
}

static void test_examples_through_vyred(void **state)
{
	(void)state;
	glob_t g;

	assert_int_equal(glob(VYRE_SRCDIR "/examples/*.vs", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 4);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *args[] = {"--socket", daemon_.socket, g.gl_pathv[i], NULL};
		struct result r = run(submit_bin, args, NULL);
		char *golden = golden_for(g.gl_pathv[i]);

		mask_dedupe(r.out);
		if (r.status != expected_status(g.gl_pathv[i]) || strcmp(r.out, golden) != 0)
			fail_msg("%s: exit %d\n--- got\n%s--- want\n%s--- stderr\n%s",
				 g.gl_pathv[i], r.status, r.out, golden, r.err);
		free(golden);
		result_free(&r);
	}
	globfree(&g);
}

/* Two clients at once in one named domain, each with its own buffers. */
static void test_shared_domain_clients(void **state)
{
	(void)state;
	const char *example = VYRE_SRCDIR "/examples/pipeline.vs";
	char *golden = golden_for(example);
	char outs[2][128];
	pid_t pids[2];

	for (int k = 0; k < 2; k++) {
		snprintf(outs[k], sizeof(outs[k]), "%s/shared%d", tmpdir, k);
		fflush(NULL);
		pids[k] = fork();
		assert_true(pids[k] >= 0);
		if (pids[k] == 0) {
			int o = open(outs[k], O_WRONLY | O_CREAT | O_TRUNC, 0600);

			if (o < 0 || dup2(o, 1) < 0)
				_exit(126);
			execl(submit_bin, submit_bin, "-s", daemon_.socket, "-d", "e2e-shared",
			      example, (char *)NULL);
			_exit(127);
		}
	}
	for (int k = 0; k < 2; k++) {
		int status;

		assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		char *out = slurp(outs[k]);

		mask_dedupe(out);
		if (strcmp(out, golden) != 0)
			fail_msg("client %d:\n--- got\n%s--- want\n%s", k, out, golden);
		free(out);
	}
	free(golden);
}

/* Writes @text to a file in tmpdir named @name; the path goes to @path. */
static void write_file(char *path, size_t len, const char *name, const char *text)
{
	snprintf(path, len, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * vyre-submit finds by name a buffer this process made, and leaves one of
 * its own under a name this process then opens; a second run meets its
 * own name (E_EXIST), a missing name is E_NOENT, through vyred and --local.
 */
static void test_named_across_processes(void **state)
{
	(void)state;
	struct vyre_connect_opts o = {.socket_path = daemon_.socket, .domain = "e2e-named"};
	struct vyre_client *c;
	uint32_t in, out, bytes = 0, flags = 9;
	char prog[256], missing[256];

	assert_int_equal(vyre_connect(&o, &c), 0);
	assert_int_equal(vyre_buffer_create(c, "input", 16, 0, &in), 0);
	uint32_t *w = vyre_buffer_ptr(c, in, NULL);

	for (uint32_t i = 0; i < 4; i++)
		w[i] = 5 + i;
	write_file(prog, sizeof(prog), "named.vs",
		   "open input as in\nbuffer result 16 named\nitem ADD in result 100\n"
		   "print result\nnames\n");
	write_file(missing, sizeof(missing), "missing.vs", "open nothere\n");
	const char *args[] = {"-s", daemon_.socket, "-d", "e2e-named", prog, NULL};
	struct result r = run(submit_bin, args, NULL);

	if (r.status != 0 ||
	    strcmp(r.out, "cqe user_data=3 line=3 op=ADD status=ok flags=- result=0\n"
			  "buffer result words 105 106 107 108\n"
			  "name input bytes=16 flags=-\n"
			  "name result bytes=16 flags=-\n") != 0)
		fail_msg("exit %d\n--- got\n%s--- stderr\n%s", r.status, r.out, r.err);
	result_free(&r);
	/* its buffer outlives the run: the domain still has this client */
	assert_int_equal(vyre_buffer_open(c, "result", &out, &bytes, &flags), 0);
	assert_int_equal(bytes, 16);
	assert_int_equal(flags, 0);
	w = vyre_buffer_ptr(c, out, NULL);
	assert_non_null(w);
	assert_int_equal(w[3], 108);

	r = run(submit_bin, args, NULL);
	if (r.status != 4 || !strstr(r.err, ":2:") || !strstr(r.err, "E_EXIST"))
		fail_msg("a second run: exit %d, stderr %s", r.status, r.err);
	result_free(&r);
	const char *nothere[] = {"-s", daemon_.socket, "-d", "e2e-named", missing, NULL};

	r = run(submit_bin, nothere, NULL);
	if (r.status != 4 || !strstr(r.err, "opening 'nothere': E_NOENT"))
		fail_msg("open of a missing name: exit %d, stderr %s", r.status, r.err);
	result_free(&r);
	/* --local runs in a private domain of its own: nobody made 'input' there */
	const char *local[] = {"--local", prog, NULL};

	r = run(submit_bin, local, NULL);
	if (r.status != 4 || !strstr(r.err, "opening 'input': E_NOENT"))
		fail_msg("--local open: exit %d, stderr %s", r.status, r.err);
	result_free(&r);
	vyre_close(c);
	unlink(prog);
	unlink(missing);
}

static uint32_t rng = 0x1234567u;

static uint32_t rnd(uint32_t bound)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng % bound;
}

#define RANDOM_BUFFERS 6

/* A random buffer operand: a name, 0, or a handle no daemon hands out. */
static const char *random_buffer(char *buf, size_t len)
{
	uint32_t k = rnd(RANDOM_BUFFERS + 3);

	if (k == RANDOM_BUFFERS)
		return "0";
	if (k == RANDOM_BUFFERS + 1 && rnd(4) == 0)
		return "@4294967295";
	snprintf(buf, len, "b%u", k % RANDOM_BUFFERS);
	return buf;
}

/* Writes a random program of @items items to @path. */
static void write_random_program(const char *path, uint32_t items)
{
	static const char *const ops[] = {"NOP",	   "FILL",
					  "COPY",	   "ADD",
					  "XOR",	   "MUL",
					  "SUM",	   "MAX",
					  "DFA_SCAN",	   "42",
					  "BASE64_DECODE", "HEX_DECODE",
					  "BYTEMAP",	   "DFA_SCAN_COUNTED"};
	/* counted inputs for the decoders: valid ones and a few malformed */
	static const char *const counted[] = {"",	  "Zg==",     "Zm8=", "Zm9vYmFy",
					      "YWJjYWJj", "Y2FiYQ==", "Zh==", "Zm9v!",
					      "616263",	  "CAFEcafe", "6",    "zz"};
	FILE *f = fopen(path, "w");
	char a[16], b[16];

	assert_non_null(f);
	for (int i = 0; i < RANDOM_BUFFERS; i++) {
		uint32_t bytes = 4 * rnd(33);

		if (rnd(3) == 0) {
			const char *c = counted[rnd(sizeof(counted) / sizeof(counted[0]))];

			fprintf(f, "buffer b%d %u counted \"%s\"\n", i,
				4 + 4 * (((uint32_t)strlen(c) + 3) / 4) + 4 * rnd(4), c);
			continue;
		}
		switch (rnd(3)) {
		case 0:
			fprintf(f, "buffer b%d %u fill %u\n", i, bytes, rnd(1000));
			break;
		case 1:
			fprintf(f, "buffer b%d %u text \"", i, bytes);
			for (uint32_t k = 0; k < bytes; k++)
				fputc("abc"[rnd(3)], f);
			fprintf(f, "\"\n");
			break;
		default:
			fprintf(f, "buffer b%d %u words %u %u\n", i, bytes < 8 ? 8 : bytes,
				rnd(1u << 31), rnd(100));
		}
	}
	fprintf(f, "dfa t0 abc ca \"b\"\ndfa t1 aa cab\nbuffer m0 256 map abc ABC\n");
	for (uint32_t i = 0; i < items; i++) {
		const char *op = ops[rnd(sizeof(ops) / sizeof(ops[0]))];

		fprintf(f, "item %s %s %s", op, random_buffer(a, sizeof(a)),
			random_buffer(b, sizeof(b)));
		if (strncmp(op, "DFA_SCAN", 8) == 0)
			fprintf(f, " %s", rnd(4) ? (rnd(2) ? "t0" : "t1") : "b1");
		else if (strcmp(op, "BYTEMAP") == 0)
			fprintf(f, " %s", rnd(4) ? "m0" : "b2");
		else
			fprintf(f, " %u", rnd(7) == 0 ? 0xffffffffu - rnd(3) : rnd(5));
		if (rnd(10) == 0)
			fprintf(f, " fence");
		if (rnd(20) == 0)
			fprintf(f, " nodedupe");
		fprintf(f, "\n");
		if (rnd(500) == 0)
			fprintf(f, "wait\n");
	}
	for (int i = 0; i < RANDOM_BUFFERS; i++)
		fprintf(f, "print b%d\n", i);
	fclose(f);
}

static void test_random_programs_match_oracle(void **state)
{
	(void)state;
	char path[128];

	snprintf(path, sizeof(path), "%s/random.vs", tmpdir);
	for (int round = 0; round < 3; round++) {
		write_random_program(path, 6000 * (uint32_t)vyre_test_scale());
		const char *local_args[] = {"--local", path, NULL};
		const char *daemon_args[] = {"-s", daemon_.socket, path, NULL};
		struct result want = run(submit_bin, local_args, NULL);
		struct result got = run(submit_bin, daemon_args, NULL);

		mask_dedupe(got.out);
		assert_int_equal(want.status, 1); /* random programs always hold invalid items */
		/* and valid ones of every kind, DFA scans included */
		assert_non_null(strstr(want.out, "op=ADD status=ok"));
		assert_non_null(strstr(want.out, "op=DFA_SCAN status=ok"));
		assert_non_null(strstr(want.out, "op=BYTEMAP status=ok"));
		assert_non_null(strstr(want.out, "op=SUM status=E_INVAL"));
		if (got.status != want.status || strcmp(got.out, want.out) != 0) {
			size_t at = 0;

			while (got.out[at] && got.out[at] == want.out[at])
				at++;
			fail_msg("round %d: exit %d (oracle %d); first difference at byte %zu:\n"
				 "--- vyred\n%.300s\n--- oracle\n%.300s\n--- stderr\n%s",
				 round, got.status, want.status, at,
				 got.out + (at > 100 ? at - 100 : 0),
				 want.out + (at > 100 ? at - 100 : 0), got.err);
		}
		result_free(&want);
		result_free(&got);
	}
	unlink(path);
}

static void test_exit_codes(void **state)
{
	(void)state;
	char bad[128];

	snprintf(bad, sizeof(bad), "%s/bad.vs", tmpdir);
	FILE *f = fopen(bad, "w");

	assert_non_null(f);
	fputs("buffer a 16\nitem ADD a missing 1\n", f);
	fclose(f);
	const char *parse_error[] = {"-s", daemon_.socket, bad, NULL};
	struct result r = run(submit_bin, parse_error, NULL);

	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, "");
	if (!strstr(r.err, "bad.vs:2:12: unknown buffer 'missing'"))
		fail_msg("stderr: %s", r.err);
	result_free(&r);

	const char *stdin_args[] = {"-s", daemon_.socket, NULL};
	r = run(submit_bin, stdin_args, VYRE_SRCDIR "/examples/basic.vs");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "buffer total words 116\n"));
	result_free(&r);

	char nowhere[160];

	snprintf(nowhere, sizeof(nowhere), "%s/no-daemon.sock", tmpdir);
	const char *no_daemon[] = {"-s", nowhere, VYRE_SRCDIR "/examples/basic.vs", NULL};
	r = run(submit_bin, no_daemon, NULL);
	assert_int_equal(r.status, 4);
	result_free(&r);

	const char *usage[] = {"--timeout", "x", NULL};
	r = run(submit_bin, usage, NULL);
	assert_int_equal(r.status, 2);
	result_free(&r);

	/* --heap takes the suffixes buffer sizes take (issue 14); a new domain gets that heap */
	const char *heap_256m[] = {
	    "-s", daemon_.socket, "-d", "heap256", "-H", "256M", VYRE_SRCDIR "/examples/basic.vs",
	    NULL};
	r = run(submit_bin, heap_256m, NULL);
	if (r.status != 0)
		fail_msg("-H 256M: exit %d: %s", r.status, r.err);
	result_free(&r);
	if (!vyre_test_log_has(daemon_.log, "'heap256': sq") ||
	    !vyre_test_log_has(daemon_.log, "heap 268435456"))
		fail_msg("vyred did not make domain heap256 with a 256 MiB heap");
	static const char *const bad_heaps[] = {"256X", "0x10M", "M", "-1", "17179869184G"};

	for (size_t i = 0; i < sizeof(bad_heaps) / sizeof(bad_heaps[0]); i++) {
		const char *bad_heap[] = {"-H", bad_heaps[i], "--local",
					  VYRE_SRCDIR "/examples/basic.vs", NULL};

		r = run(submit_bin, bad_heap, NULL);
		if (r.status != 2 || !strstr(r.err, "bad --heap"))
			fail_msg("-H %s: exit %d, want 2: %s", bad_heaps[i], r.status, r.err);
		result_free(&r);
	}
	unlink(bad);
}

static void test_bench_e2e_suite(void **state)
{
	(void)state;
	char json[128];

	snprintf(json, sizeof(json), "%s/e2e.json", tmpdir);
	const char *args[] = {"--quick", "--socket", daemon_.socket, "--json", json, "e2e", NULL};
	struct result r = run(bench_bin, args, NULL);

	if (r.status != 0)
		fail_msg("vyre-bench exited %d\n%s%s", r.status, r.out, r.err);
	char *rows = slurp(json);

	assert_non_null(strstr(rows, "\"name\":\"cpu/latency\",\"metric\":\"p50\""));
	assert_non_null(strstr(rows, "\"name\":\"cpu/latency_idle\",\"metric\":\"p99\""));
	assert_non_null(strstr(rows, "\"name\":\"cpu/1p\",\"metric\":\"items/s\""));
	assert_non_null(strstr(rows, "\"name\":\"cpu/3p\",\"metric\":\"items/s\""));
	free(rows);
	result_free(&r);
	unlink(json);
}

static int setup(void **state)
{
	(void)state;
	if (vyre_test_daemon_start(&daemon_, (const char *const[]){"--backend", "cpu", NULL}))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	int rc = vyre_test_daemon_stop(&daemon_);

	if (rc != 0)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	return rc == 0 ? 0 : -1;
}

int main(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0 || !mkdtemp(tmpdir))
		return 1;
	self[n] = '\0';
	const char *dir = dirname(self);

	/* $(BUILD)/tests/test_submit_e2e -> $(BUILD)/vyre-submit, $(BUILD)/vyre-bench */
	snprintf(submit_bin, sizeof(submit_bin), "%s/../vyre-submit", dir);
	snprintf(bench_bin, sizeof(bench_bin), "%s/../vyre-bench", dir);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examples_through_vyred),
	    cmocka_unit_test(test_shared_domain_clients),
	    cmocka_unit_test(test_named_across_processes),
	    cmocka_unit_test(test_random_programs_match_oracle),
	    cmocka_unit_test(test_exit_codes),
	    cmocka_unit_test(test_bench_e2e_suite),
	};
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "%s/stdout", tmpdir);
	unlink(cmd);
	snprintf(cmd, sizeof(cmd), "%s/stderr", tmpdir);
	unlink(cmd);
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof(cmd), "%s/shared%d", tmpdir, k);
		unlink(cmd);
	}
	rmdir(tmpdir);
	return rc;
}
