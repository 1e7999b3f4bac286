/* SPDX-License-Identifier: MIT */
/*
 * examples/scanlog/scanlog.c - scan a log file for rules through vyred and
 * print each rule that matches with its line:
 *
 *	scanlog [-s SOCKET] [-d] [-q] RULES LOG
 *
 * The rules (rules.c: `ID PATTERN` or `ID/i PATTERN` a line) are compiled
 * with vyre_dfa_compile; the log is sent in 64 KiB items of one stream
 * (DFA_REPORT_COUNTED with a stream buffer, docs/design.md 6.8), up to 8
 * in flight, so a rule that straddles two items is found once, where it
 * ends. Each (rule, line) is printed once, in the order of the log:
 *
 *	rule 12 line 3: GET /admin HTTP/1.1
 *
 * -d keeps the table in a device buffer (one COPY), -q prints only the
 * summary. Exit 0 when it ran (matches or not), 1 on an error, 2 when an
 * item had more matches than its report holds (the rest are counted but
 * not printed).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rules.h"
#include "vyre/abi.h"
#include "vyre/dfa.h"
#include "vyre/vyre.h"

#define ITEM_BYTES   (64u * 1024u)
#define INFLIGHT     8u
#define REPORT_CAP   8192u /* records an item's report holds */
#define REPORT_BYTES (16u + REPORT_CAP * 24u)

struct slot {
	uint32_t in, report;
	uint64_t first; /* the item's first byte in the log */
	uint32_t len;
	int busy, done, status;
};

/* Where the printing is: records come in log order, so the line only moves forward. */
struct cursor {
	const uint8_t *log;
	uint64_t size, line_start, pos; /* pos: bytes whose newlines are counted */
	uint64_t line;			/* 1-based number of the line holding pos */
	uint32_t *ids;			/* rules already printed on this line */
	uint32_t n_ids, cap_ids;
	int quiet;
};

static int die(struct vyre_client *c, const char *what, int rc)
{
	fprintf(stderr, "scanlog: %s: %s\n", what, vyre_strerror(rc));
	if (c)
		vyre_close(c);
	return 1;
}

/* Moves the cursor to the line holding byte @off (a newline belongs to the line it ends). */
static void cursor_seek(struct cursor *k, uint64_t off)
{
	while (k->pos < off) {
		const uint8_t *nl = memchr(k->log + k->pos, '\n', off - k->pos);

		if (!nl) {
			k->pos = off;
			break;
		}
		k->pos = (uint64_t)(nl - k->log) + 1;
		k->line_start = k->pos;
		k->line++;
		k->n_ids = 0;
	}
}

/* Prints rule @id on the line of byte @off, once a (rule, line). */
static int cursor_print(struct cursor *k, uint32_t id, uint64_t off)
{
	cursor_seek(k, off);
	for (uint32_t i = 0; i < k->n_ids; i++)
		if (k->ids[i] == id)
			return 0;
	if (k->n_ids == k->cap_ids) {
		const uint32_t cap = k->cap_ids ? k->cap_ids * 2 : 16;
		void *p = realloc(k->ids, (size_t)cap * sizeof(*k->ids));

		if (!p)
			return -1;
		k->ids = p;
		k->cap_ids = cap;
	}
	k->ids[k->n_ids++] = id;
	if (k->quiet)
		return 0;
	const uint8_t *s = k->log + k->line_start;
	const uint8_t *nl = memchr(s, '\n', k->size - k->line_start);
	size_t len = nl ? (size_t)(nl - s) : (size_t)(k->size - k->line_start);

	if (len && s[len - 1] == '\r')
		len--;
	printf("rule %u line %llu: %.*s\n", id, (unsigned long long)k->line, (int)len,
	       (const char *)s);
	return 0;
}

/* The records of a finished slot, printed; adds its matches to *matches. */
static int slot_print(struct vyre_client *c, const struct slot *s, struct cursor *k,
		      uint64_t *matches, int *overflow)
{
	const uint8_t *p = vyre_buffer_ptr(c, s->report, NULL);
	struct vyre_report_header h;

	memcpy(&h, p, sizeof(h));
	*matches += h.total;
	if (h.flags & VYRE_REPORT_OVERFLOW) {
		fprintf(stderr,
			"scanlog: bytes %llu..%llu: %llu matches, the report holds %u: the "
			"rest are not printed\n",
			(unsigned long long)s->first, (unsigned long long)(s->first + s->len),
			(unsigned long long)h.total, h.kept);
		*overflow = 1;
	}
	for (uint32_t i = 0; i < h.kept && i < REPORT_CAP; i++) {
		struct vyre_report_record r;

		memcpy(&r, p + 16 + (size_t)i * sizeof(r), sizeof(r));
		if (r.end == 0 || r.end > k->size || cursor_print(k, r.id, r.end - 1) != 0)
			return -1;
	}
	return 0;
}

static uint32_t buffer(struct vyre_client *c, uint32_t bytes, uint32_t flags, int *rc)
{
	uint32_t h = 0;

	*rc = vyre_buffer_alloc(c, bytes, flags, &h);
	if (*rc == 0 && !(flags & VYRE_BUF_DEVICE))
		memset(vyre_buffer_ptr(c, h, NULL), 0, bytes);
	return h;
}

/* The compiled rules in a buffer of vyred's: the heap, or a device buffer by one COPY. */
static int table_upload(struct vyre_client *c, const uint8_t *t, uint32_t bytes, int device,
			uint32_t *out)
{
	int rc;
	const uint32_t heap = buffer(c, bytes, 0, &rc);

	if (rc)
		return rc;
	memcpy(vyre_buffer_ptr(c, heap, NULL), t, bytes);
	*out = heap;
	if (!device)
		return 0;
	const uint32_t dev = buffer(c, bytes, VYRE_BUF_DEVICE, &rc);

	if (rc)
		return rc;
	const struct vyre_work_item copy = {VYRE_OP_COPY, heap, dev, 0};
	struct vyre_cqe cqe;

	rc = vyre_submit(c, &copy, 0, 0);
	if (rc == 0)
		rc = vyre_wait(c, &cqe, 1, -1);
	if (rc == 1)
		rc = cqe.status;
	*out = dev;
	return rc;
}

static int compile(const struct scanlog_rules *rs, uint8_t **table, uint32_t *bytes)
{
	struct vyre_dfa_pattern *p = calloc(rs->n, sizeof(*p));
	struct vyre_dfa_info info = {0};

	if (!p)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < rs->n; i++)
		p[i] = (struct vyre_dfa_pattern){rs->r[i].bytes, rs->r[i].len, rs->r[i].id,
						 rs->r[i].flags};
	const int rc = vyre_dfa_compile(p, rs->n, 0, table, bytes, &info);

	free(p);
	if (rc == VYRE_E_NOMEM)
		fprintf(stderr,
			"scanlog: the rules need at least %llu states (%llu bytes of table)\n",
			(unsigned long long)info.states, (unsigned long long)info.table_bytes);
	else if (rc == 0)
		fprintf(stderr, "scanlog: %u rules: %llu states, %llu KiB of table\n", rs->n,
			(unsigned long long)info.states,
			(unsigned long long)(info.table_bytes / 1024));
	return rc;
}

int main(int argc, char **argv)
{
	struct vyre_connect_opts o = {0};
	int device = 0, quiet = 0, opt;

	while ((opt = getopt(argc, argv, "s:dq")) != -1) {
		if (opt == 's')
			o.socket_path = optarg;
		else if (opt == 'd')
			device = 1;
		else if (opt == 'q')
			quiet = 1;
		else
			return 1;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: scanlog [-s SOCKET] [-d] [-q] RULES LOG\n");
		return 1;
	}
	struct scanlog_rules rs;
	uint8_t *table = NULL;
	uint32_t table_bytes = 0;

	if (scanlog_rules_load(argv[optind], &rs) != 0)
		return 1;
	int rc = compile(&rs, &table, &table_bytes);

	scanlog_rules_free(&rs);
	if (rc)
		return die(NULL, "vyre_dfa_compile", rc);

	const int fd = open(argv[optind + 1], O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(argv[optind + 1]);
		return 1;
	}
	const uint64_t size = (uint64_t)st.st_size;
	const uint8_t *log = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;

	close(fd);
	if (size && log == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	struct vyre_client *c = NULL;

	rc = vyre_connect(&o, &c);
	if (rc)
		return die(NULL, "connect", rc);
	uint32_t tbl = 0, stream;
	struct slot slots[INFLIGHT] = {0};

	rc = table_upload(c, table, table_bytes, device, &tbl);
	free(table);
	if (rc)
		return die(c, "the table", rc);
	stream = buffer(c, 16, 0, &rc);
	for (uint32_t i = 0; i < INFLIGHT && rc == 0; i++) {
		slots[i].in = buffer(c, 4 + ITEM_BYTES, 0, &rc);
		if (rc == 0)
			slots[i].report = buffer(c, REPORT_BYTES, 0, &rc);
	}
	if (rc)
		return die(c, "buffers", rc);

	struct cursor k = {.log = log, .size = size, .line = 1, .quiet = quiet};
	struct timespec t0, t1;
	uint64_t next = 0, matches = 0, items = 0;
	uint32_t head = 0, tail = 0; /* slots in flight: [head, tail), in log order */
	int overflow = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (next < size || head != tail) {
		/* fill every free slot with the next piece of the log */
		while (next < size && tail - head < INFLIGHT) {
			struct slot *s = &slots[tail % INFLIGHT];
			uint8_t *p = vyre_buffer_ptr(c, s->in, NULL);
			const uint32_t len =
			    size - next < ITEM_BYTES ? (uint32_t)(size - next) : ITEM_BYTES;
			const struct vyre_work_item it = {VYRE_OP_DFA_REPORT_COUNTED, s->in,
							  s->report, tbl};

			memcpy(p, &len, 4);
			memcpy(p + 4, log + next, len);
			rc = vyre_submit_stream(c, &it, stream, NULL, tail, 0);
			if (rc == VYRE_E_AGAIN)
				break;
			if (rc)
				return die(c, "submit", rc);
			*s = (struct slot){s->in, s->report, next, len, 1, 0, 0};
			next += len;
			tail++;
			items++;
		}
		struct vyre_cqe cqe[INFLIGHT];
		const int n = vyre_wait(c, cqe, INFLIGHT, -1);

		if (n < 0)
			return die(c, "wait", n);
		for (int i = 0; i < n; i++) {
			struct slot *s = &slots[cqe[i].user_data % INFLIGHT];

			s->done = 1;
			s->status = cqe[i].status;
		}
		/* print finished items in log order */
		while (head != tail && slots[head % INFLIGHT].done) {
			struct slot *s = &slots[head % INFLIGHT];

			if (s->status)
				return die(c, "an item", s->status);
			if (slot_print(c, s, &k, &matches, &overflow) != 0)
				return die(c, "a report", VYRE_E_PROTO);
			s->busy = s->done = 0;
			head++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	const double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	fprintf(stderr, "scanlog: %llu bytes in %llu items, %llu matches, %.3f s (%.1f MB/s)\n",
		(unsigned long long)size, (unsigned long long)items, (unsigned long long)matches, s,
		s > 0 ? (double)size / s / 1e6 : 0.0);
	free(k.ids);
	vyre_close(c);
	return overflow ? 2 : 0;
}
