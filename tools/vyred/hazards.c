/* SPDX-License-Identifier: MIT */
/* The in-flight reader and writer counts and byte spans per buffer handle (hazards.h). */
#include <stdlib.h>

#include "../../gpu/ops.h"
#include "../../ring/handles.h"
#include "hazards.h"

static const struct vyre_hazard_span whole = {0, UINT64_MAX};
static const struct vyre_hazard_span empty = {UINT64_MAX, 0};

int vyre_hazards_init(struct vyre_hazards *h, uint32_t max_buffers)
{
	/* slots run from 1 to max_buffers at most, plus the unused slot 0 */
	h->n_slots = max_buffers > VYRE_HANDLES_MAX ? VYRE_HANDLES_MAX + 1 : max_buffers + 1;
	h->slot = calloc(h->n_slots, sizeof(*h->slot));
	h->spans = malloc((size_t)h->n_slots * sizeof(*h->spans));
	if (!h->slot || !h->spans) {
		vyre_hazards_fini(h);
		return VYRE_E_NOMEM;
	}
	for (uint32_t s = 0; s < h->n_slots; s++)
		h->spans[s].read = h->spans[s].write = empty;
	return 0;
}

void vyre_hazards_fini(struct vyre_hazards *h)
{
	free(h->slot);
	free(h->spans);
	h->slot = NULL;
	h->spans = NULL;
	h->n_slots = 0;
}

/* [off, off + len), clamped at the top: a range as submitted may overflow. */
static struct vyre_hazard_span span_of(uint64_t off, uint32_t len)
{
	return (struct vyre_hazard_span){off, off > UINT64_MAX - len ? UINT64_MAX : off + len};
}

/* The bytes an item's operands name: their ranges with VYRE_SQE_RANGE (design.md 6.6). */
struct operand_spans {
	struct vyre_hazard_span in, out;
};

static struct operand_spans spans_of(const struct vyre_sqe *sqe)
{
	if (!(sqe->flags & VYRE_SQE_RANGE))
		return (struct operand_spans){whole, whole};
	return (struct operand_spans){span_of(sqe->in_offset, sqe->in_length),
				      span_of(sqe->out_offset, sqe->out_length)};
}

static int is_whole(struct vyre_hazard_span r)
{
	return r.lo == 0 && r.hi == UINT64_MAX;
}

/* The bytes @count's in-flight items of @span's kind name: all, their ranges', or none. */
static struct vyre_hazard_span extent(uint32_t count, uint32_t ranged,
				      const struct vyre_hazard_span *span)
{
	if (count == 0)
		return empty;
	return count > ranged ? whole : *span;
}

/* The two share a byte. */
static int meets(struct vyre_hazard_span a, struct vyre_hazard_span b)
{
	return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}

static void widen(struct vyre_hazard_span *s, struct vyre_hazard_span r)
{
	s->lo = r.lo < s->lo ? r.lo : s->lo;
	s->hi = r.hi > s->hi ? r.hi : s->hi;
}

/* vyre_op_access's reads with their spans: the input's range, the table whole. */
static uint32_t reads_of(const struct vyre_op_access *acc, const struct operand_spans *sp,
			 const struct vyre_sqe *sqe, struct vyre_hazard_span *r)
{
	const int mask = vyre_op_operands(sqe->item.op_handle);

	/* vyre_op_access lists the input (when the op has one) before the table */
	for (uint32_t i = 0; i < acc->n_reads; i++)
		r[i] = (i == 0 && mask > 0 && (mask & VYRE_OPERAND_IN)) ? sp->in : whole;
	return acc->n_reads;
}

int vyre_hazards_conflict_general(const struct vyre_hazards *h, const struct vyre_sqe *sqe)
{
	struct vyre_op_access acc;
	const struct operand_spans sp = spans_of(sqe);
	struct vyre_hazard_span r[2];
	uint32_t s;

	vyre_op_access_aux(&sqe->item, vyre_sqe_aux(sqe), &acc);
	const uint32_t n = reads_of(&acc, &sp, sqe, r);

	/* a stream (design.md 6.8) is read and written whole: any item in flight on it */
	s = vyre_hazards_slot(h, acc.aux);
	if (s && (h->slot[s].readers | h->slot[s].writers))
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		s = vyre_hazards_slot(h, acc.reads[i]);
		if (s && h->slot[s].writers &&
		    (is_whole(r[i]) ||
		     meets(r[i], extent(h->slot[s].writers, h->slot[s].ranged_writers,
					&h->spans[s].write))))
			return 1;
	}
	s = vyre_hazards_slot(h, acc.write);
	if (!s || !(h->slot[s].readers | h->slot[s].writers))
		return 0;
	if (is_whole(sp.out))
		return 1;
	return meets(sp.out,
		     extent(h->slot[s].readers, h->slot[s].ranged_readers, &h->spans[s].read)) ||
	       meets(sp.out,
		     extent(h->slot[s].writers, h->slot[s].ranged_writers, &h->spans[s].write));
}

/*
 * @count by @delta; a ranged operand also moves @ranged and widens @span,
 * which is emptied when its last ranged item leaves.
 */
static void count(uint32_t *count, uint32_t *ranged, struct vyre_hazard_span *span,
		  struct vyre_hazard_span r, int delta)
{
	*count += (uint32_t)delta;
	if (is_whole(r))
		return;
	*ranged += (uint32_t)delta;
	if (delta > 0)
		widen(span, r);
	else if (*ranged == 0)
		*span = empty;
}

uint32_t vyre_hazards_free_prefix(const struct vyre_hazards *h, const struct vyre_sqe *sqes,
				  uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		if (k + VYRE_HAZARDS_AHEAD < n)
			vyre_hazards_prefetch(h, &sqes[k + VYRE_HAZARDS_AHEAD].item);
		if (vyre_hazards_conflict(h, &sqes[k]))
			return k;
	}
	return n;
}

/* An entry that matches none: slot 0 is never counted. */
#define NO_ENTRY 0u

/*
 * One whole operand at slot @s (0: none) as a reader or a writer: counted
 * and recorded in @taken unless it equals @prev, an entry the batch
 * already holds (its operand of the item before). Returns the entries
 * written.
 */
static inline uint32_t take_whole(struct vyre_hazards *h, uint32_t s, uint32_t writer,
				  uint32_t *prev, uint32_t *taken)
{
	const uint32_t e = s << 2 | writer;

	if (s == 0 || e == *prev)
		return 0;
	*prev = e;
	if (writer)
		h->slot[s].writers++;
	else
		h->slot[s].readers++;
	*taken = e;
	return 1;
}

/* take_whole of an operand that may be ranged: a ranged one counts every time. */
static uint32_t take_one(struct vyre_hazards *h, uint32_t s, uint32_t writer,
			 struct vyre_hazard_span r, uint32_t *prev, uint32_t *taken)
{
	if (s == 0 || is_whole(r))
		return take_whole(h, s, writer, prev, taken);
	if (writer)
		count(&h->slot[s].writers, &h->slot[s].ranged_writers, &h->spans[s].write, r, 1);
	else
		count(&h->slot[s].readers, &h->slot[s].ranged_readers, &h->spans[s].read, r, 1);
	*taken = s << 2 | writer | VYRE_HAZARD_RANGED;
	return 1;
}

/* An item with a range or a stream: vyre_op_access and the spans, as the conflict check. */
static uint32_t take_general(struct vyre_hazards *h, const struct vyre_sqe *sqe, uint32_t *prev,
			     uint32_t *taken)
{
	struct vyre_op_access acc;
	struct vyre_hazard_span r[2] = {whole, whole};
	const struct operand_spans sp = spans_of(sqe);
	uint32_t k = 0;

	vyre_op_access_aux(&sqe->item, vyre_sqe_aux(sqe), &acc);
	const uint32_t nr = reads_of(&acc, &sp, sqe, r);

	/* the stream as a whole writer: every later reader and writer of it waits */
	k += take_one(h, vyre_hazards_slot(h, acc.aux), VYRE_HAZARD_WRITER, whole, &prev[0],
		      &taken[k]);
	for (uint32_t j = 0; j < nr; j++)
		k += take_one(h, vyre_hazards_slot(h, acc.reads[j]), 0, r[j], &prev[1 + j],
			      &taken[k]);
	k += take_one(h, vyre_hazards_slot(h, acc.write), VYRE_HAZARD_WRITER, sp.out, &prev[3],
		      &taken[k]);
	return k;
}

uint32_t vyre_hazards_take_batch(struct vyre_hazards *h, const struct vyre_work_item *items,
				 const uint32_t *flags, const struct vyre_sqe *sqes,
				 const int32_t *status, uint32_t n, uint32_t *taken)
{
	/*
	 * Entries the batch holds, one an operand position: the previous
	 * item's stream, input (or first read), table (or second read), write.
	 * Any entry the batch holds would do; these catch runs of one client's
	 * items on one table.
	 */
	uint32_t prev[VYRE_HAZARD_ENTRIES] = {NO_ENTRY, NO_ENTRY, NO_ENTRY, NO_ENTRY};
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct vyre_work_item *it = &items[i];
		const int mask = vyre_op_operands(it->op_handle);

		if (status[i] != 0 || mask <= 0)
			continue;
		if ((flags[i] & VYRE_SQE_RANGE) || (mask & VYRE_OPERAND_AUX)) {
			k += take_general(h, &sqes[i], prev, &taken[k]);
			continue;
		}
		if (mask & VYRE_OPERAND_IN)
			k += take_whole(h, vyre_hazards_slot(h, it->input_handle), 0, &prev[1],
					&taken[k]);
		if (mask & VYRE_OPERAND_TABLE)
			k += take_whole(h, vyre_hazards_slot(h, it->param), 0, &prev[2], &taken[k]);
		if (mask & VYRE_OPERAND_OUT)
			k += take_whole(h, vyre_hazards_slot(h, it->output_handle),
					VYRE_HAZARD_WRITER, &prev[3], &taken[k]);
	}
	return k;
}

/*
 * Entries ahead whose count slots are loaded while the current one is
 * released: a batch's slots may have left the caches while it ran.
 */
#define GIVE_AHEAD 8u

void vyre_hazards_give_back(struct vyre_hazards *h, const uint32_t *taken, uint32_t n)
{
	static const struct vyre_hazard_span ranged = {0, 0};

	for (uint32_t k = 0; k < n; k++) {
		if (k + GIVE_AHEAD < n)
			__builtin_prefetch(&h->slot[taken[k + GIVE_AHEAD] >> 2], 1);
		const uint32_t e = taken[k];
		const uint32_t s = e >> 2;
		struct vyre_hazard_count *c = &h->slot[s];

		if (!(e & VYRE_HAZARD_RANGED)) {
			if (e & VYRE_HAZARD_WRITER)
				c->writers--;
			else
				c->readers--;
		} else if (e & VYRE_HAZARD_WRITER) {
			/* count() looks at the span only to tell a ranged operand */
			count(&c->writers, &c->ranged_writers, &h->spans[s].write, ranged, -1);
		} else {
			count(&c->readers, &c->ranged_readers, &h->spans[s].read, ranged, -1);
		}
	}
}

int vyre_hazards_busy(const struct vyre_hazards *h, uint32_t handle)
{
	uint32_t s = vyre_hazards_slot(h, handle);

	return s && (h->slot[s].readers || h->slot[s].writers);
}
