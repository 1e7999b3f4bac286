/* SPDX-License-Identifier: MIT */
/*
 * vyre/abi.h - the shared-memory ABI between vyre clients and vyred.
 *
 * Everything in this file is read by two processes that do not trust each
 * other: sizes and offsets are pinned with static assertions and must never
 * change without bumping VYRE_ABI_VERSION.
 *
 * A client region is one sealed memfd created by vyred:
 *
 *	struct vyre_region_header   (VYRE_REGION_HEADER_BYTES)
 *	struct vyre_sqe sq[sq_entries]   at header.sq_offset
 *	struct vyre_cqe cq[cq_entries]   at header.cq_offset
 *
 * The SQ is multi-producer (client threads) single-consumer (vyred); the CQ is
 * single-producer (vyred) single-consumer (the reaping client thread).
 */
#ifndef VYRE_ABI_H
#define VYRE_ABI_H

#include <stddef.h>
#include <stdint.h>

#define VYRE_ABI_VERSION  1u
#define VYRE_REGION_MAGIC 0x45525956u /* "VYRE" little-endian */

/* Operation ids (docs/design.md section 6). */
enum vyre_op {
	VYRE_OP_NOP = 0,
	VYRE_OP_FILL = 1,
	VYRE_OP_COPY = 2,
	VYRE_OP_ADD = 3,
	VYRE_OP_XOR = 4,
	VYRE_OP_MUL = 5,
	VYRE_OP_SUM = 6,
	VYRE_OP_MAX = 7,
	VYRE_OP_DFA_SCAN = 8,
	VYRE_OP_BASE64_DECODE = 9, /* counted bytes in, counted bytes out (design.md 6.1) */
	VYRE_OP_HEX_DECODE = 10,
	VYRE_OP_BYTEMAP = 11, /* param: a 256-byte table buffer */
	VYRE_OP_DFA_SCAN_COUNTED = 12,
	VYRE_OP_DFA_REPORT =
	    13, /* match records (design.md 6.8); aux_handle: a stream buffer or 0 */
	VYRE_OP_DFA_REPORT_COUNTED = 14,
};
#define VYRE_OP_COUNT 15u

/* A DFA_REPORT output (design.md 6.8): this header, then 24-byte records. */
struct vyre_report_header {
	uint32_t kept;	/* records written */
	uint32_t flags; /* VYRE_REPORT_* */
	uint64_t total; /* matches found, written or not; the CQE's result */
};
#define VYRE_REPORT_OVERFLOW (1u << 0) /* total > kept: the capacity left records out */

struct vyre_report_record {
	uint32_t id; /* the pattern's id */
	uint32_t zero;
	uint64_t start; /* offset of the match's first byte (from the stream's start) */
	uint64_t end;	/* offset just past its last byte */
};

/* A DFA_REPORT stream buffer (design.md 6.8); zeroed: a new stream. */
struct vyre_stream_state {
	uint32_t started; /* 0 or 1 */
	uint32_t state;
	uint64_t bytes_seen;
};

/* The report section after a DFA table's next[][] (design.md 6.8). */
#define VYRE_DFA_REPORT_MAGIC 0x50455256u /* "VREP" */

/* vyre_sqe.flags */
#define VYRE_SQE_FENCE	     (1u << 0) /* CQE posted after every earlier item's of this client */
#define VYRE_SQE_NODEDUPE    (1u << 1) /* always execute, never satisfy from an earlier item */
#define VYRE_SQE_CHAIN	     (1u << 2) /* this item and the next one of the client are one chain */
#define VYRE_SQE_RANGE	     (1u << 3) /* operands are the byte ranges in_offset.. (design.md 6.6) */
#define VYRE_SQE_VALID_FLAGS (VYRE_SQE_FENCE | VYRE_SQE_NODEDUPE | VYRE_SQE_CHAIN | VYRE_SQE_RANGE)

/* vyre_cqe.flags */
#define VYRE_CQE_DEDUPED (1u << 0) /* satisfied by an identical earlier item */

/* Errors: negative values in vyre_cqe.status and API return codes. */
enum vyre_error {
	VYRE_OK = 0,
	VYRE_E_INVAL = -1,
	VYRE_E_AGAIN = -2,
	VYRE_E_NOMEM = -3,
	VYRE_E_PERM = -4,
	VYRE_E_DISCONNECTED = -5,
	VYRE_E_DEVICE = -6,
	VYRE_E_TIMEDOUT = -7,
	VYRE_E_PROTO = -8,
	VYRE_E_CANCELED = -9,	/* an earlier item of its chain failed */
	VYRE_E_EXIST = -10,	/* a live buffer of the domain already has that name */
	VYRE_E_NOENT = -11,	/* the domain has no buffer of that name */
	VYRE_E_RESTARTED = -12, /* accepted by a vyred that died before completing it */
};

/* One unit of work; the same 16 bytes as vyre's MegakernelWorkItem. */
struct vyre_work_item {
	uint32_t op_handle;	/* enum vyre_op */
	uint32_t input_handle;	/* buffer handle or 0 */
	uint32_t output_handle; /* buffer handle or 0 */
	uint32_t param;		/* immediate, or the DFA table handle for DFA_SCAN */
};

struct vyre_sqe {
	uint32_t seq;	/* publish marker: slot position + 1, stored last with release */
	uint32_t flags; /* VYRE_SQE_* */
	struct vyre_work_item item;
	uint64_t user_data; /* echoed in the CQE */
	uint64_t submit_ns; /* CLOCK_MONOTONIC at submit */
	/* with VYRE_SQE_RANGE: the operands' byte ranges (docs/design.md 6.6); else ignored */
	uint32_t in_offset;
	uint32_t aux_handle; /* DFA_REPORT*: the stream buffer or 0 (design.md 6.8) */
	uint64_t out_offset;
	uint32_t in_length;
	uint32_t out_length;
};

struct vyre_cqe {
	uint64_t user_data;
	int32_t status; /* 0 or a negative VYRE_E_* */
	uint32_t flags; /* VYRE_CQE_* */
	uint64_t result;
	uint64_t complete_ns; /* CLOCK_MONOTONIC when vyred wrote it (its batch completed) */
};

#define VYRE_CACHELINE 64u

/*
 * Region header. Every index lives on its own cache line so producers and the
 * consumer never false-share. Counters are free-running u32 positions; a slot
 * is position & (entries - 1).
 *
 * Sleep protocol (both directions): the sleeper stores 1 to *_need_wakeup,
 * issues a full fence, re-checks the ring, then futex-waits on the doorbell
 * word with the value it read before re-checking. The waker publishes, issues
 * a full fence, and only if *_need_wakeup is set bumps the doorbell and calls
 * futex_wake. Futex words are shared (not FUTEX_PRIVATE) because the region is
 * mapped by two processes.
 */
struct vyre_region_header {
	/* line 0: immutable after creation (written by vyred before sealing) */
	uint32_t magic;
	uint32_t abi_version;
	uint32_t sq_entries; /* power of two */
	uint32_t cq_entries; /* power of two */
	uint32_t sq_offset;  /* bytes from the region start */
	uint32_t cq_offset;
	uint64_t region_bytes;
	uint32_t client_id;
	uint32_t domain_id;
	uint8_t pad0[VYRE_CACHELINE - 40];

	/* line 1: SQ tail, advanced by producers (CAS) to reserve slots */
	uint32_t sq_tail;
	uint8_t pad1[VYRE_CACHELINE - 4];
	/* line 2: SQ head, written by vyred after consuming slots */
	uint32_t sq_head;
	/* resumable connections: SQ position up to which vyred may have started items */
	uint32_t sq_accepted;
	uint8_t pad2[VYRE_CACHELINE - 8];
	/* line 3: CQ tail, written by vyred after posting CQEs */
	uint32_t cq_tail;
	uint8_t pad3[VYRE_CACHELINE - 4];
	/* line 4: CQ head, written by the reaping client */
	uint32_t cq_head;
	uint8_t pad4[VYRE_CACHELINE - 4];
	/* line 5: vyred's sleep state: SQ doorbell futex and its need-wakeup flag */
	uint32_t sq_doorbell;
	uint32_t sq_need_wakeup;
	uint8_t pad5[VYRE_CACHELINE - 8];
	/* line 6: the client's sleep state: CQ doorbell futex and its need-wakeup flag */
	uint32_t cq_doorbell;
	uint32_t cq_need_wakeup; /* bit 0: futex sleeper, bit 1: eventfd armed */
	uint8_t pad6[VYRE_CACHELINE - 8];
	/* line 7: set by vyred when it drops the client (protocol error, shutdown) */
	uint32_t closed; /* 0, or a VYRE_E_* value negated into a positive code */
	uint8_t pad7[VYRE_CACHELINE - 4];
};

#define VYRE_REGION_HEADER_BYTES 512u
#define VYRE_CQ_WAKE_FUTEX	 (1u << 0)
#define VYRE_CQ_WAKE_EVENTFD	 (1u << 1)

_Static_assert(sizeof(struct vyre_work_item) == 16, "work item is 16 bytes");
_Static_assert(sizeof(struct vyre_sqe) == 64, "SQE is one cache line");
_Static_assert(offsetof(struct vyre_sqe, item) == 8, "SQE item offset");
_Static_assert(offsetof(struct vyre_sqe, user_data) == 24, "SQE user_data offset");
_Static_assert(offsetof(struct vyre_sqe, submit_ns) == 32, "SQE submit_ns offset");
_Static_assert(offsetof(struct vyre_sqe, in_offset) == 40, "SQE in_offset offset");
_Static_assert(offsetof(struct vyre_sqe, aux_handle) == 44, "SQE aux_handle offset");
_Static_assert(sizeof(struct vyre_report_header) == 16, "report header is 16 bytes");
_Static_assert(sizeof(struct vyre_report_record) == 24, "report record is 24 bytes");
_Static_assert(sizeof(struct vyre_stream_state) == 16, "stream state is 16 bytes");
_Static_assert(offsetof(struct vyre_sqe, out_offset) == 48, "SQE out_offset offset");
_Static_assert(offsetof(struct vyre_sqe, in_length) == 56, "SQE in_length offset");
_Static_assert(offsetof(struct vyre_sqe, out_length) == 60, "SQE out_length offset");
_Static_assert(sizeof(struct vyre_cqe) == 32, "CQE is 32 bytes");
_Static_assert(offsetof(struct vyre_cqe, status) == 8, "CQE status offset");
_Static_assert(offsetof(struct vyre_cqe, result) == 16, "CQE result offset");
_Static_assert(offsetof(struct vyre_cqe, complete_ns) == 24, "CQE complete_ns offset");
_Static_assert(sizeof(struct vyre_region_header) == VYRE_REGION_HEADER_BYTES, "region header size");
_Static_assert(offsetof(struct vyre_region_header, sq_tail) == 64, "sq_tail line");
_Static_assert(offsetof(struct vyre_region_header, sq_head) == 128, "sq_head line");
_Static_assert(offsetof(struct vyre_region_header, sq_accepted) == 132, "sq_accepted");
_Static_assert(offsetof(struct vyre_region_header, cq_tail) == 192, "cq_tail line");
_Static_assert(offsetof(struct vyre_region_header, cq_head) == 256, "cq_head line");
_Static_assert(offsetof(struct vyre_region_header, sq_doorbell) == 320, "sq doorbell line");
_Static_assert(offsetof(struct vyre_region_header, cq_doorbell) == 384, "cq doorbell line");
_Static_assert(offsetof(struct vyre_region_header, closed) == 448, "closed line");

#endif /* VYRE_ABI_H */
