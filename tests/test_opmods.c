/* SPDX-License-Identifier: MIT */
/*
 * test_opmods - vyred's op module loader (tools/vyred/opmods.h, design.md
 * 6.7) on real files and the example module's real shared object
 * (examples/ops/crc32c): a directory of modules loads, its ops are found
 * by name and number and the loaded host function computes CRC32C equal
 * to an independent bitwise one on random sizes and contents; every way a
 * module can be wrong is refused with its file and why (a file or the
 * directory writable by others, owned by another user, a link, a missing
 * file, a bad manifest, a missing symbol, a host file that is not a shared
 * object, an op name two modules share); an optional module that fails is
 * left out with a note; op numbers follow the files' bytes, not the order.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tools/vyred/opmods.h"
#include "opmod_stage.h"
#include "test_rand.h"
#include "vyre/abi.h"

#define TEST_NAME "test_opmods"
#include "test_check.h"

static char so_path[PATH_MAX];
static char root[256];
static unsigned n_dirs;

static int write_file(const char *dir, const char *name, const void *p, size_t n, mode_t mode)
{
	return opmod_stage_file(dir, name, p, n, mode);
}

static int copy_so(const char *dir, const char *name)
{
	return opmod_stage_copy(so_path, dir, name);
}

/* A new module directory under root, mode 0755. */
static void new_dir(char *dir)
{
	snprintf(dir, PATH_MAX, "%s/d%u", root, n_dirs++);
	if (mkdir(dir, 0755) != 0 || chmod(dir, 0755) != 0)
		fprintf(stderr, "test_opmods: mkdir %s: %s\n", dir, strerror(errno));
}

/* A module @name with op @op in @dir: manifest, the example's object, a PTX file. */
static void put_module(const char *dir, const char *name, const char *op, const char *extra)
{
	char text[1024], file[64];

	snprintf(text, sizeof(text),
		 "module %s\nabi 1\nhost lib%s.so\nptx %s.ptx\n%s"
		 "op %s\nin read\nout write\nparam word\npure yes\nresult the CRC32C\n"
		 "host_fn vyre_op_crc32c_host\n",
		 name, name, name, extra, op);
	snprintf(file, sizeof(file), "%s.opmod", name);
	write_file(dir, file, text, strlen(text), 0644);
	snprintf(file, sizeof(file), "lib%s.so", name);
	copy_so(dir, file);
	snprintf(file, sizeof(file), "%s.ptx", name);
	snprintf(text, sizeof(text),
		 "// device code of %s (the loader hashes it, the CUDA backend links it)\n", name);
	write_file(dir, file, text, strlen(text), 0644);
}

static struct vyre_opmods t;
static char why[1024];
static char notes[1024];

static void note(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(notes, sizeof(notes), "%s", msg);
}

static int load(const char *dir)
{
	notes[0] = 0;
	return vyre_opmods_load(dir, geteuid(), &t, note, NULL, why, sizeof(why));
}

static void loads_and_runs(void)
{
	char dir[PATH_MAX];
	uint64_t rng = 0x637263ull;

	new_dir(dir);
	put_module(dir, "checksums", "crc32c", "");
	put_module(dir, "more", "crc32c_b", "");
	int rc = load(dir);

	CHECK(rc == 0 && t.n_modules == 2 && t.n_ops == 2, "load: %d (%s), %u modules %u ops", rc,
	      why, t.n_modules, t.n_ops);
	if (rc)
		return;
	const struct vyre_opmod_loaded *op = vyre_opmods_find(&t, "crc32c");

	CHECK(op && (op->number & VYRE_OP_MODULE_BIT) &&
		  vyre_opmods_by_number(&t, op->number) == op &&
		  strcmp(t.modules[op->module].man.module, "checksums") == 0 && op->spec->pure,
	      "crc32c found");
	CHECK(!vyre_opmods_find(&t, "crc32") && !vyre_opmods_by_number(&t, 0x80000000u) &&
		  !vyre_opmods_by_number(&t, VYRE_OP_DFA_SCAN),
	      "nothing else found");
	CHECK(t.modules[0].ptx_bytes > 0 && t.modules[0].ptx && !t.modules[0].cubin,
	      "device code kept");
	const uint32_t first_number = op ? op->number : 0;

	/* the loaded host function against the bitwise CRC */
	static uint8_t buf[70000];
	const uint8_t check[] = "123456789";
	uint32_t out = 0;
	uint64_t result = 0;
	struct vyre_op_host_args a = {check, 9, &out, 4, NULL, 0, 0, VYRE_OP_MODULE_ABI};

	CHECK(op && op->host(&a, &result) == 0 && out == 0xe3069283u && result == out,
	      "CRC32C of 123456789: %08x", out);
	for (int i = 0; op && i < 300; i++) {
		const size_t n = i < 8 ? (size_t)i : splitmix64(&rng) % sizeof(buf);
		const uint32_t seed = i % 3 ? 0 : (uint32_t)splitmix64(&rng);

		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)splitmix64(&rng);
		a = (struct vyre_op_host_args){buf, n, &out, 4, NULL, 0, seed, VYRE_OP_MODULE_ABI};
		rc = op->host(&a, &result);
		CHECK(rc == 0 && out == opmod_stage_crc32c(seed, buf, n),
		      "random %d: %zu bytes seed %08x: %08x vs %08x", i, n, seed, out,
		      opmod_stage_crc32c(seed, buf, n));
	}
	a = (struct vyre_op_host_args){check, 9, &out, 2, NULL, 0, 0, VYRE_OP_MODULE_ABI};
	CHECK(op && op->host(&a, &result) == VYRE_E_INVAL, "a 2-byte output is refused");
	a = (struct vyre_op_host_args){check, 9, &out, 4, NULL, 0, 0, VYRE_OP_MODULE_ABI + 1};
	CHECK(op && op->host(&a, &result) == VYRE_E_INVAL, "another abi is refused");
	vyre_opmods_free(&t);

	/* the same files in another directory: the same number; other PTX bytes: another */
	new_dir(dir);
	put_module(dir, "checksums", "crc32c", "");
	CHECK(load(dir) == 0 && vyre_opmods_find(&t, "crc32c") &&
		  vyre_opmods_find(&t, "crc32c")->number == first_number,
	      "same files, same number: %s", why);
	vyre_opmods_free(&t);
	write_file(dir, "checksums.ptx", "// other\n", 9, 0644);
	CHECK(load(dir) == 0 && vyre_opmods_find(&t, "crc32c") &&
		  vyre_opmods_find(&t, "crc32c")->number != first_number,
	      "other device code, other number: %s", why);
	vyre_opmods_free(&t);

	/* an empty directory loads nothing */
	new_dir(dir);
	CHECK(load(dir) == 0 && t.n_ops == 0, "empty: %s", why);
	vyre_opmods_free(&t);
}

/* A directory with one module, broken by @breaker; the load must fail with @rc saying @says. */
static void refused(const char *what, void (*breaker)(const char *dir), int want, const char *says)
{
	char dir[PATH_MAX];

	new_dir(dir);
	put_module(dir, "m", "op_a", "");
	breaker(dir);
	const int rc = load(dir);

	CHECK(rc == want && strstr(why, says) && t.n_ops == 0 && !t.modules,
	      "%s: rc %d want %d, said '%s', want '%s'", what, rc, want, why, says);
	vyre_opmods_free(&t);
	chmod(dir, 0755);
}

static void chmod_in(const char *dir, const char *name, mode_t mode)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	chmod(p, mode);
}

static void other_writable_so(const char *dir)
{
	chmod_in(dir, "libm.so", 0646);
}
static void group_writable_manifest(const char *dir)
{
	chmod_in(dir, "m.opmod", 0664);
}
static void other_writable_dir(const char *dir)
{
	chmod(dir, 0757);
}
static void missing_ptx(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/m.ptx", dir);
	unlink(p);
}
static void linked_so(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/libm.so", dir);
	unlink(p);
	if (symlink(so_path, p) != 0)
		fprintf(stderr, "test_opmods: symlink: %s\n", strerror(errno));
}
static void text_so(const char *dir)
{
	write_file(dir, "libm.so", "not an ELF\n", 11, 0644);
}
static void bad_manifest(const char *dir)
{
	const char *text = "module m\nabi 1\nhost libm.so\nptx m.ptx\nop fill\nin read\nresult r\n";

	write_file(dir, "m.opmod", text, strlen(text), 0644);
}
static void missing_symbol(const char *dir)
{
	const char *text = "module m\nabi 1\nhost libm.so\nptx m.ptx\nop op_a\nin read\nresult r\n";

	write_file(dir, "m.opmod", text, strlen(text), 0644);
}
static void name_clash(const char *dir)
{
	put_module(dir, "n", "op_a", "");
}
static void foreign_owner(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/m.ptx", dir);
	if (chown(p, 12345, 12345) != 0)
		fprintf(stderr, "test_opmods: chown: %s\n", strerror(errno));
}

struct refusal {
	const char *what;
	void (*breaker)(const char *dir);
	int want;
	const char *says;
};

static const struct refusal refusals_table[] = {
    {"an object writable by others", other_writable_so, VYRE_E_PERM,
     "libm.so: writable by its group or others (mode 646)"},
    {"a manifest writable by its group", group_writable_manifest, VYRE_E_PERM,
     "m.opmod: writable by its group or others (mode 664)"},
    {"a directory writable by others", other_writable_dir, VYRE_E_PERM,
     "writable by its group or others (mode 757)"},
    {"a missing PTX file", missing_ptx, VYRE_E_NOENT, "m.ptx: No such file"},
    {"a link to the object", linked_so, VYRE_E_PERM, "libm.so: Too many levels"},
    {"a host file that is no object", text_so, VYRE_E_INVAL, "libm.so:"},
    {"a built-in op's name", bad_manifest, VYRE_E_INVAL,
     "m.opmod: line 5: op name `fill` is a built-in op's"},
    {"a missing symbol", missing_symbol, VYRE_E_INVAL,
     "m.opmod: op op_a: no symbol vyre_op_op_a_host in libm.so"},
    {"two modules with one op name", name_clash, VYRE_E_INVAL,
     "module n: op op_a has the name of module m's op op_a"},
};

static void refusals(void)
{
	for (size_t i = 0; i < sizeof(refusals_table) / sizeof(refusals_table[0]); i++)
		refused(refusals_table[i].what, refusals_table[i].breaker, refusals_table[i].want,
			refusals_table[i].says);
	if (geteuid() == 0)
		refused("a file of another user", foreign_owner, VYRE_E_PERM,
			"m.ptx: owned by uid 12345, not root or vyred's uid 0");
	else
		fprintf(stderr,
			"test_opmods: the foreign-owner case needs root (chown); left out\n");

	/* no such directory */
	CHECK(vyre_opmods_load("/nonexistent/ops.d", geteuid(), &t, NULL, NULL, why, sizeof(why)) ==
		      VYRE_E_NOENT &&
		  strstr(why, "/nonexistent/ops.d"),
	      "no directory: %s", why);
}

/* An optional module that fails is left out with a note; the others load. */
static void optional_module(void)
{
	char dir[PATH_MAX];

	new_dir(dir);
	put_module(dir, "good", "op_g", "");
	put_module(dir, "opt", "op_o", "optional yes\n");
	write_file(dir, "opt.ptx", "x", 1, 0646);
	const int rc = load(dir);

	CHECK(rc == 0 && t.n_modules == 1 && vyre_opmods_find(&t, "op_g") &&
		  !vyre_opmods_find(&t, "op_o") && strstr(notes, "opt.ptx: writable"),
	      "optional: rc %d (%s), note '%s'", rc, why, notes);
	vyre_opmods_free(&t);

	/* the same module not optional fails the load */
	new_dir(dir);
	put_module(dir, "good", "op_g", "");
	put_module(dir, "opt", "op_o", "");
	write_file(dir, "opt.ptx", "x", 1, 0646);
	CHECK(load(dir) == VYRE_E_PERM && strstr(why, "opt.ptx: writable"), "not optional: %s",
	      why);
	vyre_opmods_free(&t);
}

int main(void)
{
	char exe[PATH_MAX];
	const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return 1;
	exe[n] = 0;
	snprintf(so_path, sizeof(so_path), "%s/../examples/ops/libvyre_op_crc32c.so", dirname(exe));
	if (access(so_path, R_OK) != 0) {
		fprintf(stderr, "test_opmods: %s: %s\n", so_path, strerror(errno));
		return 1;
	}
	snprintf(root, sizeof(root), "/tmp/vyre-opmods-XXXXXX");
	if (!mkdtemp(root))
		return 1;
	loads_and_runs();
	refusals();
	optional_module();
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "test_opmods: could not remove %s\n", root);
	if (test_failures)
		return 1;
	printf("test_opmods: ok\n");
	return 0;
}
