/* SPDX-License-Identifier: MIT */
/*
 * test_ops_dir - op modules in a running vyred (docs/design.md 6.7):
 * `vyred --backend cpu --ops-dir DIR` with the example crc32c module and
 * an optional broken one starts, logs the op with its number and the
 * module it left out; a client looks the op up by name (and built-in ops,
 * an unknown name, bad names), lists every op, and runs crc32c items on
 * random buffers, each checked against an independent CRC32C; items of an
 * op number this vyred does not have (another vyred's, a stale one)
 * complete with VYRE_E_INVAL and leave their output alone. vyred refuses
 * to start on a group-writable host object, a wrong ABI and a missing
 * directory, naming the file. The registry entries follow the manifest
 * (operand bits, an `update` op never pure). A resumed client keeps its
 * number across a restart with the same files, and its old number is an
 * unknown op after the module changed. vyre-submit lists the ops and runs
 * crc32c by name. A vyred of two devices loads the modules in each worker
 * process, with the same numbers.
 */
#include <libgen.h>
#include <stdlib.h>

#include "../tools/vyred/ops_dir.h"
#include "opmod_stage.h"
#include "test_integration_daemon.h"
#include "test_rand.h"
#include "vyre/vyre.h"

#define TEST_NAME "test_ops_dir"
#include "test_check.h"

static char so_path[PATH_MAX + 64];
static char exe_dir[PATH_MAX - 64];
static char root[128];
static unsigned n_dirs;

/* A new module directory under root, mode 0755. */
static void new_dir(char *dir)
{
	snprintf(dir, PATH_MAX, "%s/d%u", root, n_dirs++);
	if (mkdir(dir, 0755) != 0 || chmod(dir, 0755) != 0)
		fprintf(stderr, "test_ops_dir: mkdir %s: %s\n", dir, strerror(errno));
}

/*
 * Module @name in @dir: its manifest (@head after the module keys, then
 * @ops), the example's host object as lib@name.so and a PTX file.
 */
static void put_module(const char *dir, const char *name, const char *head, const char *ops,
		       mode_t so_mode)
{
	char text[2048], file[64];

	snprintf(text, sizeof(text), "module %s\n%shost lib%s.so\nptx %s.ptx\n%s", name, head, name,
		 name, ops);
	snprintf(file, sizeof(file), "%s.opmod", name);
	opmod_stage_file(dir, file, text, strlen(text), 0644);
	snprintf(file, sizeof(file), "lib%s.so", name);
	opmod_stage_copy(so_path, dir, file);
	if (so_mode != 0644) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", dir, file);
		chmod(path, so_mode);
	}
	snprintf(file, sizeof(file), "%s.ptx", name);
	opmod_stage_file(dir, file, "// device code\n", 15, 0644);
}

static const char crc_op[] = "op crc32c\nin read\nout write\nparam word\npure yes\n"
			     "result the CRC32C\n";

/* The registry entries vyred makes of two ops: operand bits and purity from the manifest. */
static void entries_follow_manifest(void)
{
	char dir[PATH_MAX], why[512] = "";
	struct vyre_opmods t;
	struct vyre_op_module_entry e;

	new_dir(dir);
	put_module(dir, "mix", "abi 1\n",
		   "op crc32c\nin read\nout write\nparam word\npure yes\nresult r\n"
		   "op upd\nin counted\nout update\nparam table\npure yes\nstream yes\nresult r\n"
		   "host_fn vyre_op_crc32c_host\n",
		   0644);
	int rc = vyre_opmods_load(dir, geteuid(), &t, NULL, NULL, why, sizeof(why));

	CHECK(rc == 0 && t.n_ops == 2, "load: %d %s", rc, why);
	if (rc != 0)
		return;
	const struct vyre_opmod_loaded *crc = vyre_opmods_find(&t, "crc32c");
	const struct vyre_opmod_loaded *upd = vyre_opmods_find(&t, "upd");

	vyre_ops_dir_entry(&t, crc, &e);
	CHECK(e.number == crc->number && e.mask == (VYRE_OPERAND_IN | VYRE_OPERAND_OUT) && e.pure &&
		  !e.stream && e.host == crc->host && !strcmp(e.name, "crc32c") &&
		  !strcmp(e.module, "mix") && !strcmp(e.device_fn, "vyre_op_crc32c_device") &&
		  e.ptx == t.modules[0].ptx && e.ptx_bytes == 15 && !e.cubin,
	      "crc32c: mask %x pure %u", e.mask, e.pure);
	vyre_ops_dir_entry(&t, upd, &e);
	CHECK(e.mask == (VYRE_OPERAND_IN | VYRE_OPERAND_COUNTED | VYRE_OPERAND_OUT |
			 VYRE_OPERAND_TABLE) &&
		  !e.pure && e.stream,
	      "upd: mask %x, pure %u (an update is never pure), stream %u", e.mask, e.pure,
	      e.stream);
	vyre_opmods_free(&t);
}

/* vyred must not start with --ops-dir @dir; its log must name @file and say @why. */
static void refused(const char *what, const char *dir, const char *file, const char *why)
{
	struct vyre_test_daemon d;
	const char *args[] = {"--backend", "cpu", "--ops-dir", dir, NULL};

	fprintf(stderr, "test_ops_dir: %s: vyred must refuse to start (its log follows)\n", what);
	int rc = vyre_test_daemon_start(&d, args);

	CHECK(rc != 0, "%s: vyred started", what);
	CHECK(vyre_test_log_has(d.log, file) && vyre_test_log_has(d.log, why) &&
		  vyre_test_log_has(d.log, "cannot start"),
	      "%s: the log does not say '%s' and '%s'", what, file, why);
	if (rc == 0)
		vyre_test_daemon_stop(&d);
	vyre_test_daemon_cleanup(&d);
}

static void refusals(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	new_dir(dir);
	put_module(dir, "loose", "abi 1\n", crc_op, 0664);
	snprintf(path, sizeof(path), "%s/libloose.so", dir);
	refused("a group-writable host object", dir, path, "writable by its group");

	new_dir(dir);
	put_module(dir, "future", "abi 2\n", crc_op, 0644);
	snprintf(path, sizeof(path), "%s/future.opmod", dir);
	refused("a manifest of another abi", dir, path, "abi");

	snprintf(path, sizeof(path), "%s/none", root);
	refused("a missing directory", path, path, "No such file");
}

static struct vyre_client *client;

static int lookups(uint32_t *crc_op_number, const struct vyre_test_daemon *d)
{
	uint32_t op = 0;
	char line[96];
	static const char long_name[] = "a23456789012345678901234567890123";

	CHECK(vyre_op_lookup(client, "fill", &op) == 0 && op == VYRE_OP_FILL, "fill: %u", op);
	CHECK(vyre_op_lookup(client, "dfa_scan_counted", &op) == 0 &&
		  op == VYRE_OP_DFA_SCAN_COUNTED,
	      "dfa_scan_counted: %u", op);
	CHECK(vyre_op_lookup(client, "nop", &op) == 0 && op == VYRE_OP_NOP, "nop: %u", op);
	CHECK(vyre_op_lookup(client, "crc32", &op) == VYRE_E_NOENT, "crc32 is no op");
	CHECK(vyre_op_lookup(client, "broken", &op) == VYRE_E_NOENT, "the left-out op is no op");
	CHECK(vyre_op_lookup(client, "FILL", &op) == VYRE_E_INVAL, "upper case is a bad name");
	CHECK(vyre_op_lookup(client, "", &op) == VYRE_E_INVAL, "an empty name");
	CHECK(vyre_op_lookup(client, "9lives", &op) == VYRE_E_INVAL, "a digit first");
	CHECK(vyre_op_lookup(client, long_name, &op) == VYRE_E_INVAL, "33 bytes");
	CHECK(vyre_op_lookup(client, NULL, &op) == VYRE_E_INVAL, "NULL name");
	CHECK(vyre_op_lookup(client, "crc32c", NULL) == VYRE_E_INVAL, "NULL op");
	int rc = vyre_op_lookup(client, "crc32c", crc_op_number);

	CHECK(rc == 0 && (*crc_op_number & VYRE_OP_MODULE_BIT), "crc32c: %s %08x",
	      vyre_strerror(rc), *crc_op_number);
	if (rc != 0)
		return -1;
	snprintf(line, sizeof(line), "op crc32c 0x%08x of module checksums", *crc_op_number);
	CHECK(vyre_test_log_has(d->log, line), "vyred's log does not say '%s'", line);

	struct vyre_op_info info[VYRE_OP_COUNT + 4];
	const int n = vyre_op_list(client, info, VYRE_OP_COUNT + 4);

	CHECK(n == (int)VYRE_OP_COUNT + 1, "vyre_op_list: %d ops", n);
	CHECK(vyre_op_list(client, NULL, 0) == n, "counting only");
	for (int i = 0; i < n && i < (int)VYRE_OP_COUNT; i++) {
		uint32_t again = ~0u;

		CHECK(info[i].op == (uint32_t)i && !info[i].module[0] &&
			  vyre_op_lookup(client, info[i].name, &again) == 0 && again == info[i].op,
		      "built-in %d: %s %u", i, info[i].name, info[i].op);
	}
	CHECK(n > 0 && !strcmp(info[0].name, "nop") && info[0].flags == VYRE_OP_INFO_PURE,
	      "nop: flags %x", info[0].flags);
	CHECK(n > 8 && !strcmp(info[8].name, "dfa_scan") &&
		  info[8].flags ==
		      (VYRE_OP_INFO_PURE | VYRE_OP_INFO_IN | VYRE_OP_INFO_OUT | VYRE_OP_INFO_TABLE),
	      "dfa_scan: flags %x", n > 8 ? info[8].flags : 0);
	const struct vyre_op_info *m = n == (int)VYRE_OP_COUNT + 1 ? &info[VYRE_OP_COUNT] : NULL;

	CHECK(m && !strcmp(m->name, "crc32c") && !strcmp(m->module, "checksums") &&
		  m->op == *crc_op_number &&
		  m->flags == (VYRE_OP_INFO_PURE | VYRE_OP_INFO_IN | VYRE_OP_INFO_OUT),
	      "crc32c listed: %s %s %08x %x", m ? m->name : "-", m ? m->module : "-", m ? m->op : 0,
	      m ? m->flags : 0);
	return 0;
}

#define ITEMS	 192
#define MAX_SIZE 65536u

struct item {
	uint32_t in, out, in_bytes, seed, op;
	int64_t want_status;
};

/* Submits @n items and checks each CQE against items[user_data]. */
static void run_items(struct item *items, uint32_t n)
{
	struct vyre_cqe cqe[64];
	uint32_t done = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct vyre_work_item it = {items[i].op, items[i].in, items[i].out,
						  items[i].seed};
		int rc = vyre_submit(client, &it, i, 0);

		CHECK(rc == 0, "submit %u: %s", i, vyre_strerror(rc));
		if (rc != 0)
			return;
	}
	while (done < n) {
		int got = vyre_wait(client, cqe, 64, 10000000000ll);

		CHECK(got > 0, "wait: %s after %u of %u", vyre_strerror(got), done, n);
		if (got <= 0)
			return;
		for (int k = 0; k < got; k++) {
			CHECK(cqe[k].user_data < n, "a CQE of no item: %llu",
			      (unsigned long long)cqe[k].user_data);
			if (cqe[k].user_data >= n)
				continue;
			const struct item *x = &items[cqe[k].user_data];
			const uint8_t *in = vyre_buffer_ptr(client, x->in, NULL);
			const uint32_t *out = vyre_buffer_ptr(client, x->out, NULL);
			const uint32_t want = x->want_status
						  ? 0xdeadbeefu
						  : opmod_stage_crc32c(x->seed, in, x->in_bytes);

			CHECK(cqe[k].status == x->want_status &&
				  (x->want_status || cqe[k].result == want) && *out == want,
			      "item %llu (op %08x, %u bytes, seed %08x): status %d result %08llx "
			      "out %08x, want %d %08x",
			      (unsigned long long)cqe[k].user_data, x->op, x->in_bytes, x->seed,
			      cqe[k].status, (unsigned long long)cqe[k].result, *out,
			      (int)x->want_status, want);
		}
		done += (uint32_t)got;
	}
}

/* Random inputs through crc32c, and items of numbers this vyred has not loaded. */
static void crc_items(uint32_t crc_number)
{
	static struct item items[ITEMS];
	uint64_t rng = 0x6f7073646972ull;
	const uint32_t foreign[] = {
	    vyre_opmod_number("crc32c", 0x1234), /* the same op of other module bytes */
	    crc_number ^ 1u,			 /* a neighbour */
	    VYRE_OP_MODULE_BIT,			 /* the bit alone */
	    VYRE_OP_COUNT,			 /* the first number past the built-in ops */
	};

	for (uint32_t i = 0; i < ITEMS; i++) {
		struct item *x = &items[i];
		const uint32_t k = i % 16;

		x->in_bytes = k < 4 ? 4 * k : 4 * (uint32_t)(splitmix64(&rng) % (MAX_SIZE / 4));
		x->seed = i % 3 ? 0 : (uint32_t)splitmix64(&rng);
		x->op = crc_number;
		x->want_status = 0;
		if (i % 12 == 5) {
			x->op = foreign[(i / 12) % 4];
			x->want_status = VYRE_E_INVAL;
		}
		int rc = vyre_buffer_alloc(client, x->in_bytes, 0, &x->in);

		if (rc == 0)
			rc = vyre_buffer_alloc(client, 4, 0, &x->out);
		CHECK(rc == 0, "alloc %u: %s", i, vyre_strerror(rc));
		if (rc != 0)
			return;
		uint8_t *p = vyre_buffer_ptr(client, x->in, NULL);

		for (uint32_t b = 0; b < x->in_bytes; b++)
			p[b] = (uint8_t)splitmix64(&rng);
		/* an item that must not run leaves this word alone */
		*(uint32_t *)vyre_buffer_ptr(client, x->out, NULL) = 0xdeadbeefu;
	}
	CHECK(opmod_stage_crc32c(0, (const uint8_t *)"123456789", 9) == 0xe3069283u,
	      "the test's own CRC32C");
	run_items(items, ITEMS);
}

/* The lines vyre-submit @args prints hold each of @want (NULL-terminated). */
static void submit_says(const char *sock, const char *args, const char *const *want)
{
	char cmd[PATH_MAX * 2 + 64], out[8192];
	size_t n = 0;

	snprintf(cmd, sizeof(cmd), "%s/../vyre-submit -s '%s' %s 2>&1", exe_dir, sock, args);
	FILE *f = popen(cmd, "r");

	if (f)
		n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	const int st = f ? pclose(f) : -1;

	CHECK(st == 0, "%s: exit %d:\n%s", cmd, st, out);
	for (int i = 0; want[i]; i++)
		CHECK(strstr(out, want[i]), "%s: no '%s' in:\n%s", cmd, want[i], out);
}

/* vyre-submit lists the ops and runs crc32c by name. */
static void submit_tool(const char *sock, uint32_t crc_number)
{
	char number[32], result[64], prog[PATH_MAX];

	snprintf(number, sizeof(number), "0x%08x", crc_number);
	const char *const list[] = {"crc32c",		number, "checksums", "in out pure",
				    "dfa_scan_counted", NULL};

	submit_says(sock, "ops", list);
	snprintf(prog, sizeof(prog), "%s/prog.vs", root);
	static const char text[] = "buffer a 8 text \"12345678\"\nbuffer o 4\n"
				   "item crc32c a o 0\nwait\n";

	opmod_stage_file(root, "prog.vs", text, sizeof(text) - 1, 0644);
	snprintf(result, sizeof(result), "op=crc32c status=ok flags=- result=%u",
		 opmod_stage_crc32c(0, (const uint8_t *)"12345678", 8));
	const char *const ran[] = {result, NULL};

	submit_says(sock, prog, ran);
}

static void serves(void)
{
	char dir[PATH_MAX];
	struct vyre_test_daemon d;
	uint32_t crc_number = 0;

	new_dir(dir);
	put_module(dir, "checksums", "abi 1\n", crc_op, 0644);
	/* optional, and its op's host symbol is missing: left out, vyred starts */
	put_module(dir, "broken", "abi 1\noptional yes\n",
		   "op broken\nin read\nout write\nresult r\nhost_fn no_such_symbol\n", 0644);
	const char *args[] = {"--backend", "cpu", "--ops-dir", dir, NULL};

	if (vyre_test_daemon_start(&d, args) != 0) {
		CHECK(0, "vyred with the crc32c module did not start");
		return;
	}
	CHECK(vyre_test_log_has(&d.log[0], "optional module left out") &&
		  vyre_test_log_has(d.log, "broken.opmod") &&
		  vyre_test_log_has(d.log, "no_such_symbol"),
	      "the left-out module is not logged with its file and why");
	CHECK(vyre_test_log_has(d.log, "1 op of 1 module"), "the count of ops is not logged");
	struct vyre_connect_opts o = {.socket_path = d.socket, .heap_bytes = 64u << 20};

	client = NULL;
	int rc = vyre_connect(&o, &client);

	CHECK(rc == 0, "connect: %s", vyre_strerror(rc));
	if (rc == 0 && lookups(&crc_number, &d) == 0) {
		crc_items(crc_number);
		submit_tool(d.socket, crc_number);
	}
	if (rc == 0)
		vyre_close(client);
	client = NULL;
	CHECK(vyre_test_daemon_finish(&d) == 0, "vyred did not stop cleanly");
}

/* Starts vyred @d on @dir; on @socket when not NULL (a restart for a resumed client). */
static int start_on(struct vyre_test_daemon *d, const char *dir, const char *socket)
{
	const char *args[] = {"--backend", "cpu", "--ops-dir", dir, "--socket", socket, NULL};

	if (!socket)
		args[4] = NULL;
	return vyre_test_daemon_start(d, args);
}

/*
 * A resumed client across restarts (design.md 3 and 6.7): the same module
 * files give the same number, so the number it looked up still runs
 * crc32c; a changed module gives a new number, and the old one is an
 * unknown op (VYRE_E_INVAL, output untouched), never another op.
 */
static void restart_changes_numbers(void)
{
	char dir[PATH_MAX];
	struct vyre_test_daemon d[3];
	uint32_t before = 0, after = 0;
	static struct item x[2];

	new_dir(dir);
	put_module(dir, "checksums", "abi 1\n", crc_op, 0644);
	if (start_on(&d[0], dir, NULL) != 0) {
		CHECK(0, "restart: the first vyred did not start");
		return;
	}
	struct vyre_connect_opts o = {.socket_path = d[0].socket, .flags = VYRE_CONNECT_RESUMABLE};

	client = NULL;
	int rc = vyre_connect(&o, &client);

	if (rc == 0)
		rc = vyre_op_lookup(client, "crc32c", &before);
	for (int i = 0; rc == 0 && i < 2; i++) {
		x[i] = (struct item){.in_bytes = 64, .seed = (uint32_t)i, .op = before};
		rc = vyre_buffer_alloc(client, 64, 0, &x[i].in);
		if (rc == 0)
			rc = vyre_buffer_alloc(client, 4, 0, &x[i].out);
		if (rc == 0)
			memset(vyre_buffer_ptr(client, x[i].in, NULL), 'a' + i, 64);
	}
	CHECK(rc == 0, "restart: set up: %s", vyre_strerror(rc));
	CHECK(vyre_test_daemon_stop(&d[0]) == 0, "restart: the first vyred did not stop cleanly");
	if (rc != 0) {
		if (client)
			vyre_close(client);
		vyre_test_daemon_cleanup(&d[0]);
		return;
	}
	/* the same files: the same number runs crc32c */
	rc = start_on(&d[1], dir, d[0].socket);
	if (rc == 0)
		rc = vyre_reconnect(client, 5000000000ll) < 0 ? -1 : 0;
	CHECK(rc == 0 && vyre_op_lookup(client, "crc32c", &after) == 0 && after == before,
	      "restart with the same files: %08x, then %08x", before, after);
	*(uint32_t *)vyre_buffer_ptr(client, x[0].out, NULL) = 0xdeadbeefu;
	run_items(x, 1);
	if (rc == 0)
		CHECK(vyre_test_daemon_stop(&d[1]) == 0, "restart: the second vyred did not stop");
	vyre_test_daemon_cleanup(&d[1]);

	/* other device code: a new number, and the old one is no op */
	opmod_stage_file(dir, "checksums.ptx", "// other device code\n", 21, 0644);
	rc = start_on(&d[2], dir, d[0].socket);
	if (rc == 0)
		rc = vyre_reconnect(client, 5000000000ll) < 0 ? -1 : 0;
	CHECK(rc == 0 && vyre_op_lookup(client, "crc32c", &after) == 0 && after != before &&
		  (after & VYRE_OP_MODULE_BIT),
	      "restart with a changed module: %08x, then %08x", before, after);
	x[1].want_status = VYRE_E_INVAL;
	*(uint32_t *)vyre_buffer_ptr(client, x[1].out, NULL) = 0xdeadbeefu;
	run_items(&x[1], 1);
	x[1].op = after;
	x[1].want_status = 0;
	run_items(&x[1], 1);
	vyre_close(client);
	client = NULL;
	if (rc == 0)
		CHECK(vyre_test_daemon_finish(&d[2]) == 0, "restart: the third vyred did not stop");
	else
		vyre_test_daemon_cleanup(&d[2]);
	vyre_test_daemon_cleanup(&d[0]);
}

/*
 * A vyred of two devices (design.md 8.8: a worker process each, here two
 * CPU backends) loads the modules in each worker: clients of domains on
 * different workers get the same number, and crc32c runs on both.
 */
static void two_workers(void)
{
	char dir[PATH_MAX], line[96];
	struct vyre_test_daemon d;
	const char *args[] = {"--backend", "cpu", "--gpus", "0,1", "--ops-dir", dir, NULL};
	uint32_t number[2] = {0, 0};
	int gpu[2] = {-1, -1};

	new_dir(dir);
	put_module(dir, "checksums", "abi 1\n", crc_op, 0644);
	if (vyre_test_daemon_start(&d, args) != 0) {
		CHECK(0, "two workers: vyred did not start");
		return;
	}
	for (int k = 0; k < 2; k++) {
		static struct item x[4];
		struct vyre_connect_opts o = {.socket_path = d.socket, .domain = k ? "b" : "a"};
		client = NULL;
		int rc = vyre_connect(&o, &client);

		if (rc == 0)
			rc = vyre_op_lookup(client, "crc32c", &number[k]);
		gpu[k] = rc == 0 ? vyre_test_logged_gpu(&d, (uint32_t)k + 1) : -1;
		for (uint32_t i = 0; rc == 0 && i < 4; i++) {
			x[i] = (struct item){.in_bytes = 4096 * i, .seed = i, .op = number[k]};
			rc = vyre_buffer_alloc(client, x[i].in_bytes, 0, &x[i].in);
			if (rc == 0)
				rc = vyre_buffer_alloc(client, 4, 0, &x[i].out);
			if (rc == 0 && i)
				memset(vyre_buffer_ptr(client, x[i].in, NULL), 'k' + k,
				       x[i].in_bytes);
		}
		CHECK(rc == 0, "two workers: client %d: %s", k, vyre_strerror(rc));
		if (rc == 0)
			run_items(x, 4);
		if (client)
			vyre_close(client);
		client = NULL;
	}
	CHECK(gpu[0] >= 0 && gpu[1] >= 0 && gpu[0] != gpu[1],
	      "two workers: the domains are not on two workers (gpus %d and %d)", gpu[0], gpu[1]);
	CHECK(number[0] && number[0] == number[1], "two workers: numbers %08x and %08x", number[0],
	      number[1]);
	for (int g = 0; g < 2; g++) {
		snprintf(line, sizeof(line), "vyred[gpu %d]: --ops-dir: op crc32c 0x%08x", g,
			 number[0]);
		CHECK(vyre_test_log_has(d.log, line), "two workers: no '%s' in the log", line);
	}
	CHECK(vyre_test_daemon_finish(&d) == 0, "two workers: vyred did not stop cleanly");
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 16];
	const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)argc;
	(void)argv;
	if (n <= 0)
		return 1;
	exe[n] = 0;
	snprintf(exe_dir, sizeof(exe_dir), "%s", dirname(exe));
	snprintf(so_path, sizeof(so_path), "%s/../examples/ops/libvyre_op_crc32c.so", exe_dir);
	if (access(so_path, R_OK) != 0) {
		fprintf(stderr, "test_ops_dir: %s: %s (make builds it with the test)\n", so_path,
			strerror(errno));
		return 1;
	}
	snprintf(root, sizeof(root), "/tmp/vyre-opsdir-XXXXXX");
	if (!mkdtemp(root) || chmod(root, 0755) != 0)
		return 1;
	entries_follow_manifest();
	serves();
	restart_changes_numbers();
	two_workers();
	refusals();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "test_ops_dir: could not remove %s\n", root);
	if (test_failures) {
		fprintf(stderr, "test_ops_dir: %d failures\n", test_failures);
		return 1;
	}
	printf("test_ops_dir: ok\n");
	return 0;
}
