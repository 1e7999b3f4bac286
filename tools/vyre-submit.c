/* SPDX-License-Identifier: MIT */
/*
 * vyre-submit - run a vyre-submit program (docs/vyre-submit.md) against
 * vyred, or against the in-process oracle with --local.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"
#include "submit/numbers.h"
#include "submit/program.h"
#include "submit/run.h"
#include "submit/target.h"

/* Exit codes, documented in docs/vyre-submit.md and --help. */
#define EXIT_ITEM_FAILED 1
#define EXIT_USAGE	 2
#define EXIT_INPUT	 3
#define EXIT_DAEMON	 4

#define MAX_INPUT_BYTES (1ull << 30)

static void usage(FILE *f)
{
	fputs("usage: vyre-submit [options] [FILE]   (FILE '-' or absent: stdin)\n"
	      "       vyre-submit [-s PATH] ops      list vyred's ops: name, number, module,\n"
	      "                                      operands and purity (a program file\n"
	      "                                      named ops: ./ops)\n"
	      "  -s, --socket PATH    vyred socket (default $VYRE_SOCKET, else " VYRE_DEFAULT_SOCKET
	      ")\n"
	      "  -d, --domain NAME    join domain NAME (default: a private domain)\n"
	      "  -H, --heap BYTES     heap size if this connection creates the domain\n"
	      "                       (default: the daemon's, or twice the program's buffers)\n"
	      "  -t, --timeout SECS   give up when a wait makes no progress for SECS (default 30)\n"
	      "  -l, --local          run on the in-process sequential oracle, no daemon\n"
	      "  -c, --check          parse only: report errors, submit nothing\n"
	      "  -h, --help           this text\n"
	      "exit: 0 every item completed with status ok, 1 some item completed with an\n"
	      "error status, 2 usage, 3 unreadable or invalid input (nothing submitted),\n"
	      "4 daemon error (connect, allocation, disconnect, timeout)\n",
	      f);
}

static int read_all(FILE *in, char **text, size_t *len)
{
	size_t cap = 0, n = 0, got;
	char *buf = NULL;

	do {
		if (n == cap) {
			size_t cap2 = cap ? cap * 2 : 1u << 16;
			char *grown = cap >= MAX_INPUT_BYTES ? NULL : realloc(buf, cap2);

			if (!grown) {
				free(buf);
				errno = cap >= MAX_INPUT_BYTES ? EFBIG : ENOMEM;
				return -1;
			}
			buf = grown;
			cap = cap2;
		}
		got = fread(buf + n, 1, cap - n, in);
		n += got;
	} while (got > 0);
	if (ferror(in)) {
		free(buf);
		errno = EIO;
		return -1;
	}
	*text = buf;
	*len = n;
	return 0;
}

struct options {
	struct vyre_connect_opts connect;
	double timeout_s;
	int local, check;
	const char *path;
};

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
	    {"socket", required_argument, NULL, 's'}, {"domain", required_argument, NULL, 'd'},
	    {"heap", required_argument, NULL, 'H'},   {"timeout", required_argument, NULL, 't'},
	    {"local", no_argument, NULL, 'l'},	      {"check", no_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},	      {NULL, 0, NULL, 0},
	};
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "s:d:H:t:lch", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->connect.socket_path = optarg;
			break;
		case 'd':
			o->connect.domain = optarg;
			break;
		case 'H':
			if (vyre_submit_bytes(optarg, UINT64_MAX, &o->connect.heap_bytes) != 0) {
				fprintf(stderr,
					"vyre-submit: bad --heap '%s': bytes, or K/M/G suffixed\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			o->timeout_s = strtod(optarg, &end);
			if (*end || !(o->timeout_s > 0 && o->timeout_s < 1e9)) {
				fprintf(stderr, "vyre-submit: bad --timeout '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l':
			o->local = 1;
			break;
		case 'c':
			o->check = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	o->path = optind < argc ? argv[optind] : "-";
	return 0;
}

/* The words of an op's VYRE_OP_INFO_* flags, in the manifest's terms. */
static void op_flags(uint32_t f, char *s, size_t len)
{
	snprintf(s, len, "%s%s%s%s%s",
		 (f & VYRE_OP_INFO_COUNTED) ? " in=counted"
		 : (f & VYRE_OP_INFO_IN)    ? " in"
					    : "",
		 (f & VYRE_OP_INFO_OUT) ? " out" : "", (f & VYRE_OP_INFO_TABLE) ? " table" : "",
		 (f & VYRE_OP_INFO_PURE) ? " pure" : "",
		 (f & VYRE_OP_INFO_STREAM) ? " stream" : "");
}

/* `vyre-submit ops`: every op of vyred, one a line. */
static int list_ops(const struct vyre_connect_opts *o)
{
	struct vyre_client *c;
	struct vyre_op_info *v = NULL;
	uint32_t room = 0;
	int n, rc = vyre_connect(o, &c);

	if (rc) {
		fprintf(stderr, "vyre-submit: connect: %s\n", vyre_strerror(rc));
		return EXIT_DAEMON;
	}
	/* an op list does not change while vyred runs, but a restart between calls may */
	while ((n = vyre_op_list(c, v, room)) > (int)room) {
		struct vyre_op_info *bigger = realloc(v, (size_t)n * sizeof(*v));

		if (!bigger) {
			n = VYRE_E_NOMEM;
			break;
		}
		v = bigger;
		room = (uint32_t)n;
	}
	vyre_close(c);
	if (n < 0) {
		fprintf(stderr, "vyre-submit: ops: %s\n", vyre_strerror(n));
		free(v);
		return EXIT_DAEMON;
	}
	printf("%-20s %-10s %-20s %s\n", "op", "number", "module", "operands");
	for (int i = 0; i < n; i++) {
		char num[16], flags[64];

		snprintf(num, sizeof(num), v[i].op & VYRE_OP_MODULE_BIT ? "0x%08x" : "%u", v[i].op);
		op_flags(v[i].flags, flags, sizeof(flags));
		printf("%-20s %-10s %-20s%s\n", v[i].name, num, v[i].module[0] ? v[i].module : "-",
		       flags);
	}
	free(v);
	return 0;
}

static int load(const char *path, struct vyre_submit_program **p)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	struct vyre_submit_error err;
	char *text;
	size_t len;

	if (!in || read_all(in, &text, &len)) {
		fprintf(stderr, "vyre-submit: %s: %s\n", name, strerror(errno));
		if (in && in != stdin)
			fclose(in);
		return EXIT_INPUT;
	}
	if (in != stdin)
		fclose(in);
	int rc = vyre_submit_parse(text, len, p, &err);

	free(text);
	if (rc == 0)
		return 0;
	if (err.line && err.column)
		fprintf(stderr, "%s:%u:%u: %s\n", name, err.line, err.column, err.msg);
	else if (err.line)
		fprintf(stderr, "%s:%u: %s\n", name, err.line, err.msg);
	else
		fprintf(stderr, "%s: %s\n", name, err.msg);
	return EXIT_INPUT;
}

int main(int argc, char **argv)
{
	struct options o = {.timeout_s = 30};
	struct vyre_submit_program *p = NULL;
	struct vyre_submit_target t;
	struct vyre_submit_error err;
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc;
	if (strcmp(o.path, "ops") == 0 && (o.local || o.check)) {
		fprintf(stderr, "vyre-submit: ops asks vyred: not with --local or --check\n");
		return EXIT_USAGE;
	}
	if (strcmp(o.path, "ops") == 0)
		return list_ops(&o.connect);
	rc = load(o.path, &p);
	if (rc)
		return rc;
	if (o.check) {
		printf("ok: %u buffers, %u items, %u statements\n", p->n_buffers, p->n_items,
		       p->n_stmts);
		vyre_submit_program_free(p);
		return 0;
	}
	uint64_t need = vyre_submit_heap_bytes(p);

	if (o.connect.heap_bytes == 0 && (o.local || need > VYRE_DEFAULT_HEAP_BYTES / 2))
		o.connect.heap_bytes = o.local ? need : 2 * need;
	rc = o.local ? vyre_submit_target_local(o.connect.heap_bytes, &t)
		     : vyre_submit_target_client(&o.connect, &t);
	if (rc) {
		fprintf(stderr, "vyre-submit: %s: %s\n", o.local ? "local heap" : "connect",
			vyre_strerror(rc));
		vyre_submit_program_free(p);
		return EXIT_DAEMON;
	}
	rc = vyre_submit_run(p, &t, stdout, (int64_t)(o.timeout_s * 1e9), &err);
	t.close(t.impl);
	vyre_submit_program_free(p);
	if (rc < 0) {
		const char *name = strcmp(o.path, "-") ? o.path : "<stdin>";

		if (err.line)
			fprintf(stderr, "%s:%u: %s\n", name, err.line, err.msg);
		else
			fprintf(stderr, "%s: %s\n", name, err.msg);
		return EXIT_DAEMON;
	}
	return rc > 0 ? EXIT_ITEM_FAILED : 0;
}
