/* SPDX-License-Identifier: MIT */
/*
 * vyre-bench smoke test: `vyre-bench --quick --json FILE ring wake` (the
 * suites that need no daemon) exits 0, prints its table, and every JSON line
 * is a valid object with the documented fields, a finite value, and the rows
 * the suites promise (throughput, latency percentiles and ratios of every
 * peer); `--quick --backend cpu --out DIR peers` (1, 2 and 4 producers
 * through a vyred on the cpu backend, under a second) gives its closed- and
 * open-loop rows and DIR/peers-openloop.json; `--quick --backend cpu scan`
 * gives vyre's rows for every pattern set and item size (and Hyperscan's and
 * the ratios when vyre-bench was built with libhs; the suite itself fails
 * when the two count different matches); `--quick --backend cpu gpus` gives
 * the trivial and closed-loop rows of a vyred with one CPU-backend GPU and
 * one with two, and their ratios (skipped while vyred has no --gpus);
 * `--quick --backend cpu restart` gives the pause of a restart without loss
 * and the restarted items (the suite fails when a buffer lost bytes);
 * `--quick --backend cpu modules` gives the closed-loop rows of every
 * example op module at both sizes and 1 and 4 producers, their scaling,
 * and the 4 KiB open loop (the suite fails when an item's output differs
 * from the module's host function). Every
 * row that measures items through a vyred (e2e, peers, scan, gpus, priority)
 * has its "vyred cpu" row, positive ns/item; Hyperscan's rows have none. Not
 * a performance assertion: only that figures exist and are sane.
 *
 * --plot DIR: those runs also draw their figures (openloop and closed from
 * peers, scan, gpus; never batch, which needs the cuda suite), each a real
 * PNG of a real size, and `--quick --plot DIR e2e` keeps its rows in
 * DIR/rows.json. `--plot DIR --from FILE` redraws every figure from
 * tests/bench_rows.json, a fixture of real rows from several runs (the cuda
 * suite's batch rows of an H100 run in bench/RESULTS.md, at 561237d; the
 * peers open loop of docs/peers-openloop-h100.json; the rest from
 * `--quick --backend cpu e2e peers gpus scan` on the dev VM, their "vyred
 * cpu" rows from a later such run, which no figure draws), without gnuplot
 * in $PATH it says so, exits 0 and leaves the scripts, and bad input is
 * refused. The PNG checks skip (with a message) where gnuplot is missing.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char bench_path[PATH_MAX];

/* ---- a strict parser for one flat JSON object of strings, numbers and null ---- */

struct row {
	char suite[96], name[96], metric[96], unit[96];
	double value;
	int has_value, fields;
};

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* Parses a JSON string into out (truncating silently); NULL when malformed. */
static const char *json_string(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		char c = *p++;

		if (c == '\0' || (unsigned char)c < 0x20)
			return NULL;
		if (c == '\\') {
			c = *p++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++)
					if (!isxdigit((unsigned char)*p++))
						return NULL;
				c = '?';
			} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
				return NULL;
			}
		}
		if (n + 1 < cap)
			out[n++] = c;
	}
	out[n] = '\0';
	return p + 1;
}

static const char *json_number(const char *p, double *v)
{
	const char *start = p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (isdigit((unsigned char)*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	*v = strtod(start, NULL);
	return p;
}

static int parse_row(const char *line, struct row *r)
{
	const char *p = ws(line);

	memset(r, 0, sizeof(*r));
	if (*p++ != '{')
		return -1;
	p = ws(p);
	while (*p != '}') {
		char key[32];

		if (r->fields && *p++ != ',')
			return -1;
		p = json_string(ws(p), key, sizeof(key));
		if (!p || *(p = ws(p)) != ':')
			return -1;
		p = ws(p + 1);
		if (*p == '"') {
			char sval[96];

			p = json_string(p, sval, sizeof(sval));
			if (!p)
				return -1;
			if (strcmp(key, "suite") == 0)
				snprintf(r->suite, sizeof(r->suite), "%s", sval);
			else if (strcmp(key, "name") == 0)
				snprintf(r->name, sizeof(r->name), "%s", sval);
			else if (strcmp(key, "metric") == 0)
				snprintf(r->metric, sizeof(r->metric), "%s", sval);
			else if (strcmp(key, "unit") == 0)
				snprintf(r->unit, sizeof(r->unit), "%s", sval);
		} else if (strncmp(p, "null", 4) == 0) {
			p += 4;
		} else {
			p = json_number(p, &r->value);
			if (!p || strcmp(key, "value") != 0)
				return -1;
			r->has_value = 1;
		}
		r->fields++;
		p = ws(p);
	}
	return *ws(p + 1) == '\0' ? 0 : -1;
}

static void test_json_parser_rejects_garbage(void **state)
{
	(void)state;
	struct row r;
	const char *bad[] = {"",	   "{",		"{\"a\":}",    "{\"a\":1,}", "{\"a\":01}",
			     "{\"a\":1}x", "{\"a\" 1}", "{\"a\":\"x}", "{\"a\":1.}", "[1]"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_row(bad[i], &r) == 0)
			fail_msg("accepted '%s'", bad[i]);
	assert_int_equal(parse_row("{\"suite\":\"s\",\"value\":-1.5e3,\"unit\":\"x\\\"y\"}", &r),
			 0);
	assert_true(r.has_value);
	assert_true(r.value == -1500.0);
	assert_string_equal(r.unit, "x\"y");
}

/* ---- running vyre-bench ---- */

/*
 * Runs vyre-bench with @argv (NULL-terminated, after argv[0]); stdout to
 * @out_path, stderr to @err_path (NULL: this test's), $PATH set to @path
 * (NULL: unchanged).
 */
static int run_bench_env(const char *const *args, const char *out_path, const char *err_path,
			 const char *path)
{
	char *argv[16];
	int n = 0;

	argv[n++] = bench_path;
	for (; args[n - 1] && n < 15; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		if (err_path) {
			fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd < 0 || dup2(fd, 2) < 0)
				_exit(126);
		}
		if (path && setenv("PATH", path, 1) != 0)
			_exit(126);
		execv(bench_path, argv);
		_exit(127);
	}
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_bench(const char *const *args, const char *out_path)
{
	return run_bench_env(args, out_path, NULL, NULL);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);

	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const struct row *find(const struct row *rows, size_t n, const char *suite, const char *name,
			      const char *metric)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].suite, suite) && !strcmp(rows[i].name, name) &&
		    !strcmp(rows[i].metric, metric))
			return &rows[i];
	return NULL;
}

static void expect_positive(const struct row *rows, size_t n, const char *suite, const char *name,
			    const char *metric, const char *unit)
{
	const struct row *r = find(rows, n, suite, name, metric);

	if (!r)
		fail_msg("no row %s %s %s", suite, name, metric);
	if (strcmp(r->unit, unit) != 0 || !(r->value > 0))
		fail_msg("row %s %s %s: %g %s", suite, name, metric, r->value, r->unit);
}

/* Parses every line of @path into @rows (at most @cap), each a complete row; returns the count. */
static size_t load_rows(const char *path, struct row *rows, size_t cap)
{
	char *text = slurp(path);
	size_t n = 0;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		assert_true(n < cap);
		if (parse_row(line, &rows[n]))
			fail_msg("not a JSON row: %s", line);
		if (rows[n].fields != 5 || !rows[n].has_value || !isfinite(rows[n].value) ||
		    !rows[n].suite[0] || !rows[n].name[0] || !rows[n].metric[0] || !rows[n].unit[0])
			fail_msg("incomplete row: %s", line);
		n++;
	}
	free(text);
	return n;
}

/* Runs vyre-bench with @args, fails unless it exits 0; the table's line count. */
static size_t run_ok(const char *const *args, const char *out)
{
	int rc = run_bench(args, out);
	char *table = slurp(out);
	size_t lines = 0;

	if (rc != 0)
		fail_msg("vyre-bench exited %d; table:\n%s", rc, table);
	for (char *line = strtok(table, "\n"); line; line = strtok(NULL, "\n"))
		lines++;
	free(table);
	return lines;
}

/* ---- figures ---- */

static int have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char file[PATH_MAX];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		snprintf(file, sizeof(file), "%.*s/gnuplot", (int)len, path);
		if (len > 0 && access(file, X_OK) == 0)
			return 1;
		path += len + (path[len] == ':');
	}
	return 0;
}

static int exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* DIR/NAME.png is a PNG of at least 800x600 and more than a blank image's bytes. */
static void expect_png(const char *dir, const char *name)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	unsigned char head[24];
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s.png", dir, name);
	FILE *f = fopen(path, "rb");

	if (!f)
		fail_msg("no figure %s", path);
	const size_t got = fread(head, 1, sizeof(head), f);

	fclose(f);
	if (got != sizeof(head) || memcmp(head, sig, sizeof(sig)) != 0 ||
	    memcmp(head + 12, "IHDR", 4) != 0)
		fail_msg("%s is not a PNG", path);
	const uint32_t width = (uint32_t)head[16] << 24 | (uint32_t)head[17] << 16 |
			       (uint32_t)head[18] << 8 | head[19];
	const uint32_t height = (uint32_t)head[20] << 24 | (uint32_t)head[21] << 16 |
				(uint32_t)head[22] << 8 | head[23];

	assert_int_equal(stat(path, &st), 0);
	if (st.st_size < 10000 || width < 800 || height < 600)
		fail_msg("%s: %lld bytes, %ux%u: not a drawn figure", path, (long long)st.st_size,
			 width, height);
}

/* The figures of a --plot run: @drawn are there (when gnuplot is), the others are not. */
static void expect_figures(const char *dir, const char *const *drawn)
{
	static const char *const all[] = {"openloop", "closed", "batch", "scan", "gpus"};
	char gp[64];

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int want = 0;

		for (size_t k = 0; drawn[k]; k++)
			want |= strcmp(drawn[k], all[i]) == 0;
		snprintf(gp, sizeof(gp), "%s.gp", all[i]);
		if (exists(dir, gp) != want)
			fail_msg("%s/%s: %s", dir, gp, want ? "missing" : "drawn without its rows");
		if (want && have_gnuplot())
			expect_png(dir, all[i]);
	}
	if (!have_gnuplot())
		printf("no gnuplot in $PATH: scripts checked, not the PNGs\n");
}

/* Removes @dir and the files in it. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			assert_int_equal(unlink(path), 0);
		}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
}

/* A fresh directory under /tmp, and where the tests put rows, the table and stderr in it. */
struct scratch {
	char dir[32], json[64], out[64], err[64];
};

static void scratch_make(struct scratch *t)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/vyre-bench-smoke-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->json, sizeof(t->json), "%s/rows.json", t->dir);
	snprintf(t->out, sizeof(t->out), "%s/table.txt", t->dir);
	snprintf(t->err, sizeof(t->err), "%s/stderr.txt", t->dir);
}

static void test_quick_ring_and_wake_json(void **state)
{
	(void)state;
	struct scratch t;

	scratch_make(&t);
	const char *dir = t.dir, *json = t.json, *out = t.out;
	const char *args[] = {"--quick", "--json", json, "ring", "wake", NULL};
	const size_t table_rows = run_ok(args, out);
	struct row rows[256];
	const size_t n = load_rows(json, rows, 256);

	assert_int_equal(table_rows, n + 1); /* the header, then one table row per JSON row */

	static const char *const modes[] = {"spsc", "mpsc3"};
	static const char *const peers[] = {"sq", "ck_ring", "eventfd"};
	char name[64];

	for (size_t m = 0; m < 2; m++) {
		for (size_t p = 0; p < 3; p++) {
			snprintf(name, sizeof(name), "%s/%s", modes[m], peers[p]);
			expect_positive(rows, n, "ring", name, "items/s", "items/s");
			expect_positive(rows, n, "ring", name, "p50", "ns");
			expect_positive(rows, n, "ring", name, "p99", "ns");
			expect_positive(rows, n, "ring", name, "p999", "ns");
		}
		snprintf(name, sizeof(name), "%s/sq:ck_ring", modes[m]);
		expect_positive(rows, n, "ring", name, "items/s", "x");
		expect_positive(rows, n, "ring", name, "p50", "x");
	}
	expect_positive(rows, n, "ring", "spsc/pingpong", "p50", "ns");
	expect_positive(rows, n, "ring", "spsc/sq:pingpong", "p50", "x");
	expect_positive(rows, n, "wake", "futex", "p50", "ns");
	expect_positive(rows, n, "wake", "eventfd", "p99", "ns");
	expect_positive(rows, n, "wake", "eventfd:futex", "p50", "x");
	/* the io_uring rows exist whenever the kernel has IORING_OP_FUTEX_WAIT (6.7+) */
	if (find(rows, n, "wake", "io_uring_futex", "p50"))
		expect_positive(rows, n, "wake", "io_uring_futex:futex", "p50", "x");
	const struct row *p50 = find(rows, n, "ring", "spsc/sq", "p50");
	const struct row *p999 = find(rows, n, "ring", "spsc/sq", "p999");

	assert_true(p50->value <= p999->value);
	remove_dir(dir);
}

/*
 * `--quick --backend cpu --json FILE @suite` in a new scratch @t: its rows
 * (at most @cap) into @rows, one table line each after the header.
 */
static size_t run_quick_cpu(struct scratch *t, const char *suite, struct row *rows, size_t cap)
{
	scratch_make(t);
	const char *args[] = {"--quick", "--backend", "cpu", "--json", t->json, suite, NULL};
	const size_t table_rows = run_ok(args, t->out);
	const size_t n = load_rows(t->json, rows, cap);

	assert_int_equal(table_rows, n + 1);
	return n;
}

static void test_quick_modules_cpu(void **state)
{
	(void)state;
	struct scratch t;
	char name[96];
	static struct row rows[256];
	const size_t n = run_quick_cpu(&t, "modules", rows, 256);
	static const char *const ops[] = {"crc32c", "hash64", "histogram", "dot"};
	static const char *const sizes[] = {"4KiB", "64KiB"};
	static const char *const loads[] = {"10%", "50%", "120%"};
	static const char *const metrics[] = {"items/s", "p50", "p99", "p999", "vyred cpu"};
	static const char *const units[] = {"items/s", "ns", "ns", "ns", "ns/item"};

	for (size_t o = 0; o < 4; o++)
		for (size_t z = 0; z < 2; z++) {
			for (unsigned p = 1; p <= 4; p *= 4) {
				snprintf(name, sizeof(name), "%s %s closed vyre-cpu %up", ops[o],
					 sizes[z], p);
				for (size_t m = 0; m < 5; m++)
					expect_positive(rows, n, "modules", name, metrics[m],
							units[m]);
			}
			snprintf(name, sizeof(name), "%s %s closed vyre-cpu 4p:1p", ops[o],
				 sizes[z]);
			expect_positive(rows, n, "modules", name, "items/s", "x");
			expect_positive(rows, n, "modules", name, "p50", "x");
			for (size_t l = 0; z == 0 && l < 3; l++) {
				snprintf(name, sizeof(name), "%s 4KiB open vyre-cpu 4p %s", ops[o],
					 loads[l]);
				expect_positive(rows, n, "modules", name, "offered", "items/s");
				for (size_t m = 0; m < 5; m++)
					expect_positive(rows, n, "modules", name, metrics[m],
							units[m]);
			}
		}
	/* 8 series x 2 closed x 5, 4 x 3 open x 6, 8 x 2 ratios: nothing else */
	assert_int_equal(n, 80 + 72 + 16);
	remove_dir(t.dir);
}

static void test_quick_peers_cpu(void **state)
{
	(void)state;
	struct scratch t;
	char open_json[160], name[64];

	scratch_make(&t);
	const char *dir = t.dir, *json = t.json, *out = t.out;
	snprintf(open_json, sizeof(open_json), "%s/peers-openloop.json", dir);
	const char *args[] = {"--quick", "--backend", "cpu", "--json", json, "--out",
			      dir,	 "--plot",    dir,   "peers",  NULL};
	const size_t table_rows = run_ok(args, out);
	struct row rows[128], open_rows[64];
	const size_t n = load_rows(json, rows, 128);

	assert_int_equal(table_rows, n + 1);
	static const char *const metrics[] = {"items/s", "p50", "p99", "p999"};
	static const char *const units[] = {"items/s", "ns", "ns", "ns"};
	static const unsigned procs[] = {1, 2, 4};

	for (size_t p = 0; p < 3; p++) {
		snprintf(name, sizeof(name), "closed vyre-cpu %up", procs[p]);
		for (size_t m = 0; m < 4; m++)
			expect_positive(rows, n, "peers", name, metrics[m], units[m]);
		expect_positive(rows, n, "peers", name, "vyred cpu", "ns/item");
	}
	expect_positive(rows, n, "peers", "closed vyre-cpu 4p:1p", "items/s", "x");
	expect_positive(rows, n, "peers", "closed vyre-cpu 4p:1p", "p50", "x");
	static const char *const loads[] = {"10%", "50%", "120%"};
	const size_t n_open = load_rows(open_json, open_rows, 64);

	for (size_t l = 0; l < 3; l++) {
		snprintf(name, sizeof(name), "open vyre-cpu 4p %s", loads[l]);
		expect_positive(rows, n, "peers", name, "offered", "items/s");
		expect_positive(rows, n, "peers", name, "vyred cpu", "ns/item");
		for (size_t m = 0; m < 4; m++) {
			expect_positive(rows, n, "peers", name, metrics[m], units[m]);
			expect_positive(open_rows, n_open, "peers", name, metrics[m], units[m]);
		}
	}
	assert_int_equal(n_open, 3 * 5); /* the open-loop rows, and nothing else */
	expect_figures(dir, (const char *const[]){"openloop", "closed", NULL});
	remove_dir(dir);
}

static void test_quick_scan_cpu(void **state)
{
	(void)state;
	struct scratch t;
	char name[96];

	scratch_make(&t);
	const char *dir = t.dir, *json = t.json, *out = t.out;
	const char *args[] = {"--quick", "--backend", "cpu",	    "--json", json, "--plot",
			      dir,	 "--label",   "smoke test", "scan",   NULL};
	const size_t table_rows = run_ok(args, out);
	struct row *rows = calloc(512, sizeof(*rows));

	assert_non_null(rows);
	const size_t n = load_rows(json, rows, 512);

	assert_int_equal(table_rows, n + 1);
	static const unsigned sets[] = {10, 100, 1000};
	/* every vyre row, with its peer's name and the hyperscan row it is compared with */
	static const char *const rows_of[][2] = {
	    {"lit%u 4KiB vyre-cpu", "lit%u 4KiB hyperscan"},
	    {"lit%u 64KiB vyre-cpu", "lit%u 64KiB hyperscan"},
	    {"lit%u 1MiB vyre-cpu", "lit%u 1MiB hyperscan"},
	    {"lit%u 4KiB vyre-cpu dev", "lit%u 4KiB hyperscan"},
	    {"lit%u 1MiB vyre-cpu dev", "lit%u 1MiB hyperscan"},
	    {"b64 lit%u 4KiB vyre-cpu unfused", "b64 lit%u 4KiB hyperscan"},
	    {"b64 lit%u 64KiB vyre-cpu fused", "b64 lit%u 64KiB hyperscan"},
	    {"single lit%u 32MiB vyre-cpu", "single lit%u 32MiB hyperscan"},
	    {"single lit%u 32MiB vyre-cpu dev", "single lit%u 32MiB hyperscan"},
	};

	for (size_t s = 0; s < 3; s++)
		for (size_t k = 0; k < sizeof(rows_of) / sizeof(rows_of[0]); k++) {
			snprintf(name, sizeof(name), rows_of[k][0], sets[s]);
			expect_positive(rows, n, "scan", name, "GB/s", "GB/s");
			expect_positive(rows, n, "scan", name, "matches", "count");
			expect_positive(rows, n, "scan", name, "vyred cpu", "ns/item");
#ifdef VYRE_HAVE_HS
			const struct row *v = find(rows, n, "scan", name, "matches");
			char ratio[128];

			snprintf(ratio, sizeof(ratio), "%s:hyperscan", name);
			expect_positive(rows, n, "scan", ratio, "GB/s", "x");
			snprintf(name, sizeof(name), rows_of[k][1], sets[s]);
			expect_positive(rows, n, "scan", name, "GB/s", "GB/s");
			assert_true(find(rows, n, "scan", name, "matches")->value == v->value);
			if (find(rows, n, "scan", name, "vyred cpu"))
				fail_msg("a vyred cpu row for %s, not through vyred", name);
#endif
		}
	free(rows);
	expect_figures(dir, (const char *const[]){"scan", NULL});
	remove_dir(dir);
}

/* 1 when the vyred next to vyre-bench lists --gpus in its --help. */
static int vyred_has_gpus(void)
{
	char dir[PATH_MAX], cmd[PATH_MAX + 64], line[256];
	int found = 0;

	snprintf(dir, sizeof(dir), "%s", bench_path);
	snprintf(cmd, sizeof(cmd), "'%s/vyred' --help 2>&1", dirname(dir));
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		found |= strstr(line, "--gpus") != NULL;
	pclose(p);
	return found;
}

static void test_quick_gpus_cpu(void **state)
{
	(void)state;
	struct scratch t;
	char name[96];

	if (!vyred_has_gpus()) {
		printf("vyred has no --gpus yet: the gpus suite skips\n");
		skip();
	}
	scratch_make(&t);
	const char *dir = t.dir, *json = t.json, *out = t.out;
	const char *args[] = {"--quick", "--backend", "cpu",  "--json", json,
			      "--plot",	 dir,	      "gpus", NULL};
	const size_t table_rows = run_ok(args, out);
	struct row rows[128];
	const size_t n = load_rows(json, rows, 128);

	assert_int_equal(table_rows, n + 1);
	static const char *const metrics[] = {"items/s", "p50", "p99", "p999"};
	static const char *const units[] = {"items/s", "ns", "ns", "ns"};
	static const char *const sides[] = {"1gpu", "2gpu", "4gpu"};
	static const unsigned procs[] = {4, 8};

	/* every measurement with vyred's CPU an item: supervisor and GPU workers (2gpu, 4gpu) */
	for (size_t g = 0; g < 3; g++) {
		snprintf(name, sizeof(name), "trivial 4096 vyre-cpu %s", sides[g]);
		expect_positive(rows, n, "gpus", name, "items/s", "items/s");
		expect_positive(rows, n, "gpus", name, "vyred cpu", "ns/item");
		for (size_t p = 0; p < 2; p++) {
			snprintf(name, sizeof(name), "closed vyre-cpu %s %up", sides[g], procs[p]);
			for (size_t m = 0; m < 4; m++)
				expect_positive(rows, n, "gpus", name, metrics[m], units[m]);
			expect_positive(rows, n, "gpus", name, "vyred cpu", "ns/item");
		}
	}
	/* 2gpu:1gpu, and 4gpu:1gpu, which the CPU smoke run makes as a host of four would */
	for (size_t g = 1; g < 3; g++) {
		snprintf(name, sizeof(name), "trivial 4096 %s:1gpu", sides[g]);
		expect_positive(rows, n, "gpus", name, "items/s", "x");
		for (size_t p = 0; p < 2; p++) {
			snprintf(name, sizeof(name), "closed %s:1gpu %up", sides[g], procs[p]);
			expect_positive(rows, n, "gpus", name, "items/s", "x");
			expect_positive(rows, n, "gpus", name, "p50", "x");
		}
	}
	/* one domain alone, on the one-GPU side: its rows and its ratio to four domains */
	expect_positive(rows, n, "gpus", "trivial 4096 vyre-cpu 1gpu 1dom", "items/s", "items/s");
	expect_positive(rows, n, "gpus", "trivial 4096 vyre-cpu 1gpu 1dom", "vyred cpu", "ns/item");
	expect_positive(rows, n, "gpus", "trivial 4096 vyre-cpu 1gpu 1dom:4dom", "items/s", "x");
	/* those rows and nothing else */
	assert_int_equal(n, 3 * (1 + 1) + 3 * 2 * (4 + 1) + 2 * (1 + 2 * 2) + 3);
	expect_figures(dir, (const char *const[]){"gpus", NULL});
	remove_dir(dir);
}

/* The restart suite on the cpu backend: vyred killed once under 2 resumable producers. */
static void test_quick_restart_cpu(void **state)
{
	(void)state;
	struct scratch t;

	scratch_make(&t);
	const char *args[] = {"--quick", "--backend", "cpu", "--json", t.json, "restart", NULL};
	const size_t table_rows = run_ok(args, t.out);
	struct row rows[16];
	const size_t n = load_rows(t.json, rows, 16);

	assert_int_equal(table_rows, n + 1);
	static const char *const names[] = {"kill->first completion 2p", "kill->ready"};
	static const char *const metrics[] = {"p50", "max"};

	for (size_t i = 0; i < 2; i++)
		for (size_t m = 0; m < 2; m++)
			expect_positive(rows, n, "restart", names[i], metrics[m], "ns");
	const struct row *r = find(rows, n, "restart", "restarted items 2p 1r", "count");

	if (!r || strcmp(r->unit, "items") != 0 || r->value < 0)
		fail_msg("no row restart \"restarted items 2p 1r\" count in items");
	assert_int_equal(n, 2 * 2 + 1); /* those rows and nothing else */
	remove_dir(t.dir);
}

/* The priority suite on the CPU backend: every row of the three runs, nothing else. */
static void test_quick_priority_cpu(void **state)
{
	(void)state;
	struct scratch t;
	char name[96];
	struct row rows[64];
	const size_t n = run_quick_cpu(&t, "priority", rows, 64);
	static const char *const configs[] = {"classes", "one_class", "classes_loops2"};
	static const char *const phases[] = {"alone", "flooded"};
	static const char *const quantiles[] = {"p50", "p99", "p999"};

	for (size_t c = 0; c < 3; c++) {
		for (size_t p = 0; p < 2; p++)
			for (size_t q = 0; q < 3; q++) {
				snprintf(name, sizeof(name), "%s_producer_%s", configs[c],
					 phases[p]);
				expect_positive(rows, n, "priority", name, quantiles[q], "ns");
			}
		for (size_t p = 0; p < 2; p++) {
			snprintf(name, sizeof(name), "%s_producer_%s", configs[c], phases[p]);
			expect_positive(rows, n, "priority", name, "vyred cpu", "ns/item");
		}
		snprintf(name, sizeof(name), "%s_p99_flooded_vs_alone", configs[c]);
		expect_positive(rows, n, "priority", name, "ratio", "x");
		snprintf(name, sizeof(name), "%s_flood", configs[c]);
		expect_positive(rows, n, "priority", name, "items/s", "items/s");
		expect_positive(rows, n, "priority", name, "vyred cpu", "ns/item");
	}
	assert_int_equal(n, 3 * (2 * 3 + 2 + 3));
	remove_dir(t.dir);
}

/* Without --json, --plot DIR keeps the rows it draws from in DIR/rows.json. */
static void test_quick_plot_e2e(void **state)
{
	(void)state;
	struct scratch t;

	scratch_make(&t);
	const char *dir = t.dir, *json = t.json, *out = t.out;
	const char *args[] = {"--quick", "--plot", dir, "e2e", NULL};
	const size_t table_rows = run_ok(args, out);
	struct row rows[64];
	const size_t n = load_rows(json, rows, 64);

	assert_int_equal(table_rows, n + 1);
	expect_positive(rows, n, "e2e", "cpu/1p", "items/s", "items/s");
	expect_positive(rows, n, "e2e", "cpu/3p", "items/s", "items/s");
	static const char *const measured[] = {"cpu/latency", "cpu/latency_spin",
					       "cpu/latency_idle", "cpu/1p", "cpu/3p"};

	for (size_t i = 0; i < sizeof(measured) / sizeof(measured[0]); i++)
		expect_positive(rows, n, "e2e", measured[i], "vyred cpu", "ns/item");
	assert_int_equal(n, 3 * (3 + 1) + 2 * (1 + 1)); /* those rows and nothing else */
	expect_figures(dir, (const char *const[]){"closed", NULL});
	remove_dir(dir);
}

/* tests/bench_rows.json, from the source tree the test was built in or the current directory. */
static const char *fixture(void)
{
	static const char *const paths[] = {BENCH_ROWS_FIXTURE, "tests/bench_rows.json"};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	return NULL;
}

/* --from redraws every figure from saved rows, from several files, running no suite. */
static void test_plot_from_fixture(void **state)
{
	(void)state;
	struct scratch t;
	char fig[64];
	const char *rows = fixture();

	if (!rows) {
		printf("tests/bench_rows.json not found (not run from the source tree)\n");
		skip();
	}
	scratch_make(&t);
	snprintf(fig, sizeof(fig), "%s/figures", t.dir);
	const char *args[] = {"--plot", fig,	   "--from",  rows, "--from",
			      rows,	"--label", "fixture", NULL};

	assert_int_equal(run_bench_env(args, t.out, t.err, NULL), 0);
	char *table = slurp(t.out);

	assert_string_equal(table, ""); /* no suite ran: not even the table's header */
	free(table);
	expect_figures(fig,
		       (const char *const[]){"openloop", "closed", "batch", "scan", "gpus", NULL});
	/* every panel's data is there: two systems open loop, two cuda shapes, three sets */
	assert_true(exists(fig, "openloop.1.dat"));
	assert_true(exists(fig, "batch.4.dat") && exists(fig, "batch.7.dat"));
	assert_true(exists(fig, "gpus.2.dat"));
	remove_dir(fig);
	remove_dir(t.dir);
}

/* Without gnuplot: a message, exit 0, the scripts and data but no PNG. */
static void test_plot_without_gnuplot(void **state)
{
	(void)state;
	struct scratch t;
	const char *rows = fixture();

	if (!rows) {
		printf("tests/bench_rows.json not found (not run from the source tree)\n");
		skip();
	}
	scratch_make(&t);
	const char *dir = t.dir, *args[] = {"--plot", dir, "--from", rows, NULL};

	assert_int_equal(run_bench_env(args, t.out, t.err, dir), 0);
	char *text = slurp(t.err);

	if (!strstr(text, "gnuplot is missing"))
		fail_msg("no word of the missing gnuplot: %s", text);
	free(text);
	assert_true(exists(dir, "openloop.gp") && exists(dir, "openloop.0.dat"));
	assert_false(exists(dir, "openloop.png"));
	remove_dir(dir);
}

static void test_plot_bad_input(void **state)
{
	(void)state;
	struct scratch t;
	char bad[64];

	scratch_make(&t);
	const char *dir = t.dir, *out = t.out, *err = t.err;

	snprintf(bad, sizeof(bad), "%s/bad.json", dir);
	FILE *f = fopen(bad, "w");

	assert_non_null(f);
	fputs("{\"suite\":\"peers\",\"name\":\"open x 1p 10%\",\"metric\":\"p50\",\"value\":1,"
	      "\"unit\":\"ns\"}\n{\"suite\":\"peers\",\"name\":\"trunc",
	      f);
	fclose(f);
	const char *no_plot[] = {"--from", bad, NULL};
	const char *with_suite[] = {"--plot", dir, "--from", bad, "ring", NULL};
	const char *malformed[] = {"--plot", dir, "--from", bad, NULL};

	assert_int_equal(run_bench_env(no_plot, out, err, NULL), 2);
	assert_int_equal(run_bench_env(with_suite, out, err, NULL), 2);
	assert_int_equal(run_bench_env(malformed, out, err, NULL), 1);
	char *text = slurp(err);

	if (!strstr(text, "bad.json:2:"))
		fail_msg("the bad line is not named: %s", text);
	free(text);
	assert_false(exists(dir, "openloop.gp")); /* nothing drawn from a file it refused */
	remove_dir(dir);
}

static void test_list_and_usage(void **state)
{
	(void)state;
	char out[] = "/tmp/vyre-bench-list-XXXXXX";
	int fd = mkstemp(out);

	assert_true(fd >= 0);
	close(fd);
	const char *list[] = {"--list", NULL};

	assert_int_equal(run_bench(list, out), 0);
	char *text = slurp(out);

	assert_non_null(strstr(text, "ring "));
	assert_non_null(strstr(text, "wake "));
	assert_non_null(strstr(text, "peers "));
	assert_non_null(strstr(text, "scan "));
	assert_non_null(strstr(text, "gpus "));
	free(text);
	const char *unknown[] = {"no-such-suite", NULL};

	assert_int_equal(run_bench(unknown, out), 2);
	const char *bad_seconds[] = {"--seconds", "-1", "ring", NULL};

	assert_int_equal(run_bench(bad_seconds, out), 2);
	const char *bad_backend[] = {"--backend", "gpu", "peers", NULL};

	assert_int_equal(run_bench(bad_backend, out), 2);
	const char *bad_inflight[] = {"--inflight", "0", "peers", NULL};

	assert_int_equal(run_bench(bad_inflight, out), 2);
	unlink(out);
}

int main(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = '\0';
	/* $(BUILD)/tests/test_bench_smoke -> $(BUILD)/vyre-bench */
	snprintf(bench_path, sizeof(bench_path), "%s/../vyre-bench", dirname(self));
	if (access(bench_path, X_OK) != 0) {
		printf("vyre-bench not built at %s\n", bench_path);
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_parser_rejects_garbage),
	    cmocka_unit_test(test_list_and_usage),
	    cmocka_unit_test(test_quick_ring_and_wake_json),
	    cmocka_unit_test(test_quick_peers_cpu),
	    cmocka_unit_test(test_quick_modules_cpu),
	    cmocka_unit_test(test_quick_scan_cpu),
	    cmocka_unit_test(test_quick_gpus_cpu),
	    cmocka_unit_test(test_quick_restart_cpu),
	    cmocka_unit_test(test_quick_priority_cpu),
	    cmocka_unit_test(test_quick_plot_e2e),
	    cmocka_unit_test(test_plot_from_fixture),
	    cmocka_unit_test(test_plot_without_gnuplot),
	    cmocka_unit_test(test_plot_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
