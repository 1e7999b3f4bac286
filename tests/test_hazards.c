/* SPDX-License-Identifier: MIT */
/*
 * test_hazards - vyred's in-flight hazard counts (tools/vyred/hazards.h)
 * against a model that counts every operand of every item, as vyred did
 * before batches kept a record of what they took.
 *
 * Random batches of random items (every op family, ranged and whole
 * operands, streams, unknown ops, items that failed, handles of a few
 * slots with aliases past the table) are taken and given back in random
 * order, several in flight at once, as vyred's slots finish out of order.
 * After every step the conflict check and vyre_hazards_busy of random
 * probe items and every handle equal the model's, and once every batch is
 * given back the table holds no count and no span: a batch releases
 * exactly what it took, whatever its items did (failed items take nothing;
 * a batch that failed as a whole is given back like any other).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/ops.h"
#include "../ring/handles.h"
#include "../tools/vyred/hazards.h"
#include "test_rand.h"

#define MAX_BUFFERS 8u /* slots 1..8; handles past them share slots */
#define N_SLOTS	    (MAX_BUFFERS + 1)
#define BATCH_MAX   24u
#define IN_FLIGHT   4u
#define STEPS	    4000u
#define SEEDS	    40u

struct span {
	uint64_t lo, hi;
};

/* The model: per slot, every operand counted, spans widened per ranged operand. */
struct model_slot {
	uint32_t n[2], ranged[2]; /* [0] readers, [1] writers */
	struct span span[2];
};

struct batch {
	struct vyre_sqe sqe[BATCH_MAX];
	int32_t status[BATCH_MAX];
	uint32_t n;
	uint32_t taken[BATCH_MAX * VYRE_HAZARD_ENTRIES];
	uint32_t n_taken;
};

/*
 * vyre_hazards_take_batch as vyred calls it: the items and flags copied out
 * of the SQEs. The SQEs it is given have the item of every item without a
 * range or a stream cleared, so a count taken from those would miss.
 */
static uint32_t take_batch(struct vyre_hazards *h, struct batch *b)
{
	static struct vyre_work_item items[BATCH_MAX];
	static struct vyre_sqe sqes[BATCH_MAX];
	static uint32_t flags[BATCH_MAX];

	for (uint32_t i = 0; i < b->n; i++) {
		const int mask = vyre_op_operands(b->sqe[i].item.op_handle);

		items[i] = b->sqe[i].item;
		flags[i] = b->sqe[i].flags;
		sqes[i] = b->sqe[i];
		if (!(flags[i] & VYRE_SQE_RANGE) && !(mask > 0 && (mask & VYRE_OPERAND_AUX)))
			memset(&sqes[i].item, 0, sizeof(sqes[i].item));
	}
	return vyre_hazards_take_batch(h, items, flags, sqes, b->status, b->n, b->taken);
}

static const struct span whole = {0, UINT64_MAX};
static const struct span none = {UINT64_MAX, 0};

static uint32_t model_slot_of(uint32_t handle)
{
	const uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	if (handle == 0)
		return 0;
	return s < N_SLOTS ? s : 1 + s % (N_SLOTS - 1);
}

static struct span range(uint64_t off, uint32_t len)
{
	return (struct span){off, off > UINT64_MAX - len ? UINT64_MAX : off + len};
}

static int is_whole(struct span r)
{
	return r.lo == 0 && r.hi == UINT64_MAX;
}

/* The operands of @sqe: slot, kind (0 read, 1 write, 2 the stream), bytes; returns how many. */
static uint32_t operands(const struct vyre_sqe *sqe, uint32_t *slot, int *writer, struct span *r)
{
	const int mask = vyre_op_operands(sqe->item.op_handle);
	const int ranged = (sqe->flags & VYRE_SQE_RANGE) != 0;
	uint32_t n = 0;

	if (mask <= 0)
		return 0;
	if ((mask & VYRE_OPERAND_AUX) && sqe->aux_handle) {
		slot[n] = model_slot_of(sqe->aux_handle), writer[n] = 2, r[n++] = whole;
	}
	if (mask & VYRE_OPERAND_IN) {
		slot[n] = model_slot_of(sqe->item.input_handle), writer[n] = 0;
		r[n++] = ranged ? range(sqe->in_offset, sqe->in_length) : whole;
	}
	if (mask & VYRE_OPERAND_TABLE) {
		slot[n] = model_slot_of(sqe->item.param), writer[n] = 0, r[n++] = whole;
	}
	if (mask & VYRE_OPERAND_OUT) {
		slot[n] = model_slot_of(sqe->item.output_handle), writer[n] = 1;
		r[n++] = ranged ? range(sqe->out_offset, sqe->out_length) : whole;
	}
	return n;
}

static void model_count(struct model_slot *m, const struct batch *b, int delta)
{
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t slot[4];
		int w[4];
		struct span r[4];

		if (b->status[i] != 0)
			continue;
		for (uint32_t k = 0, n = operands(&b->sqe[i], slot, w, r); k < n; k++) {
			struct model_slot *s = &m[slot[k]];

			if (slot[k] == 0)
				continue;
			w[k] = w[k] != 0; /* the stream is counted as a writer */
			s->n[w[k]] += (uint32_t)delta;
			if (is_whole(r[k]))
				continue;
			s->ranged[w[k]] += (uint32_t)delta;
			if (delta > 0) {
				s->span[w[k]].lo =
				    r[k].lo < s->span[w[k]].lo ? r[k].lo : s->span[w[k]].lo;
				s->span[w[k]].hi =
				    r[k].hi > s->span[w[k]].hi ? r[k].hi : s->span[w[k]].hi;
			} else if (s->ranged[w[k]] == 0) {
				s->span[w[k]] = none;
			}
		}
	}
}

static int meets(struct span a, struct span b)
{
	return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}

/* The bytes in flight of one kind at @s: all of them, the span, or none. */
static struct span extent(const struct model_slot *s, int w)
{
	if (s->n[w] == 0)
		return none;
	return s->n[w] > s->ranged[w] ? whole : s->span[w];
}

static int model_conflict(const struct model_slot *m, const struct vyre_sqe *sqe)
{
	uint32_t slot[4];
	int w[4];
	struct span r[4];

	for (uint32_t k = 0, n = operands(sqe, slot, w, r); k < n; k++) {
		const struct model_slot *s = &m[slot[k]];

		if (slot[k] == 0)
			continue;
		/* a stream conflicts with anything in flight on it */
		if (w[k] == 2 && (s->n[0] | s->n[1]))
			return 1;
		/* a whole operand conflicts with any count, even of empty ranges */
		if (s->n[1] && (is_whole(r[k]) || meets(r[k], extent(s, 1))))
			return 1;
		if (w[k] && s->n[0] && (is_whole(r[k]) || meets(r[k], extent(s, 0))))
			return 1;
	}
	return 0;
}

static uint32_t rand_handle(uint64_t *rng)
{
	const uint32_t v = (uint32_t)splitmix64(rng);

	switch (v % 8) {
	case 0:
		return 0;
	case 1: /* a slot past the table: shares counters (an adopted domain's) */
		return (1u << VYRE_HANDLE_SLOT_BITS) | (MAX_BUFFERS + 1 + (v >> 8) % 20);
	default: /* a slot of the table, some generation */
		return ((v >> 8) % 3) << VYRE_HANDLE_SLOT_BITS | (1 + (v >> 12) % MAX_BUFFERS);
	}
}

static void rand_sqe(uint64_t *rng, struct vyre_sqe *sqe, const struct vyre_sqe *prev)
{
	static const uint32_t ops[] = {
	    VYRE_OP_NOP,	VYRE_OP_FILL,	  VYRE_OP_ADD,
	    VYRE_OP_SUM,	VYRE_OP_DFA_SCAN, VYRE_OP_DFA_SCAN_COUNTED,
	    VYRE_OP_DFA_REPORT, VYRE_OP_BYTEMAP,  0x7777u};
	const uint64_t v = splitmix64(rng);

	memset(sqe, 0, sizeof(*sqe));
	/* often the same item as the one before but for the output: runs on one table */
	if (prev && v % 3 == 0) {
		*sqe = *prev;
		sqe->item.output_handle = rand_handle(rng);
		return;
	}
	sqe->item.op_handle = ops[v % (sizeof(ops) / sizeof(ops[0]))];
	sqe->item.input_handle = rand_handle(rng);
	sqe->item.output_handle = rand_handle(rng);
	sqe->item.param = rand_handle(rng);
	sqe->aux_handle = (v >> 8) % 2 ? rand_handle(rng) : 0;
	if ((v >> 12) % 3 == 0) {
		sqe->flags |= VYRE_SQE_RANGE;
		sqe->in_offset = (uint32_t)(splitmix64(rng) % 64);
		sqe->in_length = (uint32_t)(splitmix64(rng) % 32);
		sqe->out_offset = (v >> 20) % 16 == 0 ? UINT64_MAX - 8 : splitmix64(rng) % 64;
		sqe->out_length = (uint32_t)(splitmix64(rng) % 32);
	}
}

static void rand_batch(uint64_t *rng, struct batch *b)
{
	b->n = 1 + (uint32_t)(splitmix64(rng) % BATCH_MAX);
	for (uint32_t i = 0; i < b->n; i++) {
		rand_sqe(rng, &b->sqe[i], i ? &b->sqe[i - 1] : NULL);
		b->status[i] = splitmix64(rng) % 6 == 0 ? VYRE_E_INVAL : 0;
	}
}

static int check(const struct vyre_hazards *h, const struct model_slot *m, uint64_t *rng,
		 uint64_t seed, uint32_t step)
{
	for (uint32_t p = 0; p < 16; p++) {
		struct vyre_sqe probe;

		rand_sqe(rng, &probe, NULL);
		if (vyre_hazards_conflict(h, &probe) != model_conflict(m, &probe)) {
			fprintf(stderr, "seed %llu step %u: conflict of op %u differs (table %d)\n",
				(unsigned long long)seed, step, probe.item.op_handle,
				vyre_hazards_conflict(h, &probe));
			return 1;
		}
		/* a batch's free prefix is its first conflict */
		if (vyre_hazards_free_prefix(h, &probe, 1) != (uint32_t)!model_conflict(m, &probe))
			return 1;
	}
	for (uint32_t s = 1; s < N_SLOTS; s++) {
		const int busy = (m[s].n[0] | m[s].n[1]) != 0;

		if (vyre_hazards_busy(h, s) != busy) {
			fprintf(stderr, "seed %llu step %u: slot %u busy %d, model %d\n",
				(unsigned long long)seed, step, s, !busy, busy);
			return 1;
		}
	}
	return 0;
}

static int run(uint64_t seed)
{
	struct vyre_hazards h;
	struct model_slot m[N_SLOTS];
	struct batch *b = calloc(IN_FLIGHT, sizeof(*b));
	int running[IN_FLIGHT] = {0};
	uint64_t rng = seed;
	int rc = 0;

	if (!b || vyre_hazards_init(&h, MAX_BUFFERS) != 0) {
		free(b);
		return 1;
	}
	for (uint32_t s = 0; s < N_SLOTS; s++)
		m[s] = (struct model_slot){{0, 0}, {0, 0}, {none, none}};
	for (uint32_t step = 0; step < STEPS && rc == 0; step++) {
		const uint32_t k = (uint32_t)(splitmix64(&rng) % IN_FLIGHT);

		if (!running[k]) {
			rand_batch(&rng, &b[k]);
			b[k].n_taken = take_batch(&h, &b[k]);
			if (b[k].n_taken > b[k].n * VYRE_HAZARD_ENTRIES)
				rc = 1;
			model_count(m, &b[k], 1);
		} else {
			vyre_hazards_give_back(&h, b[k].taken, b[k].n_taken);
			model_count(m, &b[k], -1);
		}
		running[k] = !running[k];
		rc |= check(&h, m, &rng, seed, step);
	}
	for (uint32_t k = 0; k < IN_FLIGHT && rc == 0; k++)
		if (running[k])
			vyre_hazards_give_back(&h, b[k].taken, b[k].n_taken);
	/* every count and span given back */
	for (uint32_t s = 0; s < h.n_slots && rc == 0; s++) {
		const struct vyre_hazard_count *c = &h.slot[s];

		if (c->readers || c->writers || c->ranged_readers || c->ranged_writers ||
		    h.spans[s].read.lo != UINT64_MAX || h.spans[s].read.hi != 0 ||
		    h.spans[s].write.lo != UINT64_MAX || h.spans[s].write.hi != 0) {
			fprintf(stderr, "seed %llu: slot %u holds counts after every batch\n",
				(unsigned long long)seed, s);
			rc = 1;
		}
	}
	vyre_hazards_fini(&h);
	free(b);
	return rc;
}

/* A run of items on one table takes its count once; a failed item takes nothing. */
static int shared_table(void)
{
	struct vyre_hazards h;
	struct batch b = {.n = BATCH_MAX};
	int rc = 0;

	if (vyre_hazards_init(&h, MAX_BUFFERS) != 0)
		return 1;
	for (uint32_t i = 0; i < b.n; i++) {
		b.sqe[i].item = (struct vyre_work_item){.op_handle = VYRE_OP_DFA_SCAN,
							.input_handle = 1,
							.param = 2,
							.output_handle = 3 + i % 4};
		b.status[i] = i == 5 ? VYRE_E_INVAL : 0;
	}
	b.n_taken = take_batch(&h, &b);
	/* one input, one table, an output each but where the one before wrote it too */
	if (h.slot[1].readers != 1 || h.slot[2].readers != 1 || h.slot[1].writers ||
	    b.n_taken != 2 + (b.n - 1))
		rc = 1;
	vyre_hazards_give_back(&h, b.taken, b.n_taken);
	for (uint32_t s = 0; s < h.n_slots; s++)
		if (h.slot[s].readers || h.slot[s].writers)
			rc = 1;
	vyre_hazards_fini(&h);
	return rc;
}

int main(void)
{
	if (shared_table() != 0) {
		fprintf(stderr, "test_hazards: a run on one table\n");
		return 1;
	}
	for (uint64_t seed = 1; seed <= SEEDS; seed++)
		if (run(seed) != 0)
			return 1;
	printf("test_hazards: %u seeds of %u steps: counts, conflicts and releases as the model\n",
	       SEEDS, STEPS);
	return 0;
}
