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

/*
 * The counters of @handle, 0 for none. A domain adopted after a restart
 * keeps handles whose slots may lie past the table: they share counters
 * with others, which can only make an item wait, never miss a hazard.
 */
static uint32_t slot_of(const struct vyre_hazards *h, uint32_t handle)
{
	uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	if (handle == 0)
		return 0;
	return s < h->n_slots ? s : 1 + s % (h->n_slots - 1);
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

int vyre_hazards_conflict(const struct vyre_hazards *h, const struct vyre_sqe *sqe)
{
	struct vyre_op_access acc;
	const struct operand_spans sp = spans_of(sqe);
	struct vyre_hazard_span r[2];
	uint32_t s;

	vyre_op_access_aux(&sqe->item, vyre_sqe_aux(sqe), &acc);
	const uint32_t n = reads_of(&acc, &sp, sqe, r);

	/* a stream (design.md 6.8) is read and written whole: any item in flight on it */
	s = slot_of(h, acc.aux);
	if (s && (h->slot[s].readers | h->slot[s].writers))
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		s = slot_of(h, acc.reads[i]);
		if (s && h->slot[s].writers &&
		    (is_whole(r[i]) ||
		     meets(r[i], extent(h->slot[s].writers, h->slot[s].ranged_writers,
					&h->spans[s].write))))
			return 1;
	}
	s = slot_of(h, acc.write);
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

void vyre_hazards_track(struct vyre_hazards *h, const struct vyre_sqe *sqe, int delta)
{
	struct vyre_op_access acc;
	const struct operand_spans sp = spans_of(sqe);
	struct vyre_hazard_span r[2];
	uint32_t s;

	vyre_op_access_aux(&sqe->item, vyre_sqe_aux(sqe), &acc);
	const uint32_t n = reads_of(&acc, &sp, sqe, r);

	/* the stream as a whole writer: every later reader and writer of it waits */
	if ((s = slot_of(h, acc.aux)))
		count(&h->slot[s].writers, &h->slot[s].ranged_writers, &h->spans[s].write, whole,
		      delta);
	for (uint32_t i = 0; i < n; i++)
		if ((s = slot_of(h, acc.reads[i])))
			count(&h->slot[s].readers, &h->slot[s].ranged_readers, &h->spans[s].read,
			      r[i], delta);
	if ((s = slot_of(h, acc.write)))
		count(&h->slot[s].writers, &h->slot[s].ranged_writers, &h->spans[s].write, sp.out,
		      delta);
}

/*
 * SQEs ahead whose lines are loaded while the current one is counted: a
 * batch's copies are cold by the time it finishes. The count slots are not
 * prefetched: a batch's are mostly in cache, and asking for them cost the
 * dispatch more than it saved on the H100 host (bench/RESULTS.md, session 11).
 */
#define SQE_AHEAD 16u

uint32_t vyre_hazards_free_prefix(const struct vyre_hazards *h, const struct vyre_sqe *sqes,
				  uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (vyre_hazards_conflict(h, &sqes[k]))
			return k;
	return n;
}

void vyre_hazards_track_batch(struct vyre_hazards *h, const struct vyre_sqe *sqes,
			      const int32_t *status, uint32_t n, int delta)
{
	for (uint32_t i = 0; i < n; i++) {
		if (i + SQE_AHEAD < n)
			__builtin_prefetch(&sqes[i + SQE_AHEAD]);
		if (status[i] == 0)
			vyre_hazards_track(h, &sqes[i], delta);
	}
}

int vyre_hazards_busy(const struct vyre_hazards *h, uint32_t handle)
{
	uint32_t s = slot_of(h, handle);

	return s && (h->slot[s].readers || h->slot[s].writers);
}
