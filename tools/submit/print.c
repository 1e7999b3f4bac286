/* SPDX-License-Identifier: MIT */
#include "print.h"

#include <string.h>

static const char *const status_names[] = {
    "ok",	"E_INVAL",    "E_AGAIN", "E_NOMEM",    "E_PERM",  "E_DISCONNECTED",
    "E_DEVICE", "E_TIMEDOUT", "E_PROTO", "E_CANCELED", "E_EXIST", "E_NOENT",
};

const char *vyre_submit_status_name(int32_t status)
{
	if (status <= 0 && status > -(int32_t)(sizeof(status_names) / sizeof(status_names[0])))
		return status_names[-status];
	return NULL;
}

void vyre_submit_print_cqe(FILE *f, const struct vyre_submit_program *p,
			   const struct vyre_submit_item *it, const struct vyre_cqe *cqe)
{
	const char *op =
	    it->op_name ? p->op_names[it->op_name - 1].name : vyre_submit_op_name(it->op);
	const char *status = vyre_submit_status_name(cqe->status);
	char op_num[16], status_num[16];

	if (!op) {
		snprintf(op_num, sizeof(op_num), "%u", it->op);
		op = op_num;
	}
	if (!status) {
		snprintf(status_num, sizeof(status_num), "E_%d", (int)cqe->status);
		status = status_num;
	}
	fprintf(f, "cqe user_data=%llu line=%u op=%s status=%s flags=%s result=%llu\n",
		(unsigned long long)cqe->user_data, it->line, op, status,
		(cqe->flags & VYRE_CQE_DEDUPED) ? "deduped" : "-", (unsigned long long)cqe->result);
}

static void print_text(FILE *f, const uint8_t *data, uint32_t bytes)
{
	fputc('"', f);
	for (uint32_t i = 0; i < bytes; i++) {
		uint8_t c = data[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == 0)
			fputs("\\0", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A DFA_REPORT output (docs/design.md 6.8): its header, then one line a record kept. */
static void print_report(FILE *f, const uint8_t *data, uint32_t bytes)
{
	struct vyre_report_header h;

	if (bytes < sizeof(h)) {
		fprintf(f, " malformed (%u bytes)\n", (unsigned)bytes);
		return;
	}
	memcpy(&h, data, sizeof(h));
	const uint64_t room = (bytes - sizeof(h)) / sizeof(struct vyre_report_record);

	fprintf(f, " total=%llu kept=%u%s\n", (unsigned long long)h.total, (unsigned)h.kept,
		(h.flags & VYRE_REPORT_OVERFLOW) ? " overflow" : "");
	for (uint64_t k = 0; k < h.kept && k < room; k++) {
		struct vyre_report_record r;

		memcpy(&r, data + sizeof(h) + sizeof(r) * k, sizeof(r));
		fprintf(f, "match id=%u start=%llu end=%llu\n", (unsigned)r.id,
			(unsigned long long)r.start, (unsigned long long)r.end);
	}
}

void vyre_submit_print_buffer(FILE *f, const char *name, const uint8_t *data, uint32_t bytes,
			      enum vyre_submit_print_format format)
{
	static const char *const format_names[] = {"words", "hex", "text", "counted", "report"};

	fprintf(f, "buffer %s %s", name, format_names[format]);
	if (format == VYRE_SUBMIT_PRINT_REPORT) {
		print_report(f, data, bytes);
		return;
	}
	if (format == VYRE_SUBMIT_PRINT_COUNTED) {
		uint32_t len = 0;

		if (bytes >= 4)
			memcpy(&len, data, sizeof(len));
		if (bytes < 4 || len > bytes - 4) {
			fprintf(f, " malformed (%u bytes, word 0 = %u)\n", (unsigned)bytes,
				(unsigned)len);
			return;
		}
		fprintf(f, " %u ", (unsigned)len);
		print_text(f, data + 4, len);
	} else if (format == VYRE_SUBMIT_PRINT_TEXT) {
		fputc(' ', f);
		print_text(f, data, bytes);
	} else if (format == VYRE_SUBMIT_PRINT_HEX) {
		if (bytes)
			fputc(' ', f);
		for (uint32_t i = 0; i < bytes; i++)
			fprintf(f, "%02x", data[i]);
	} else {
		for (uint32_t i = 0; i + 4 <= bytes; i += 4) {
			uint32_t w;

			memcpy(&w, data + i, sizeof(w));
			fprintf(f, " %u", (unsigned)w);
		}
	}
	fputc('\n', f);
}

void vyre_submit_print_name(FILE *f, const struct vyre_buffer_info *b)
{
	const char *flags = (b->flags & VYRE_BUF_DEVICE)      ? "device"
			    : (b->flags & VYRE_BUF_TRANSIENT) ? "transient"
							      : "-";

	fprintf(f, "name %s bytes=%u flags=%s\n", b->name, (unsigned)b->bytes, flags);
}
