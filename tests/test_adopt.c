/* SPDX-License-Identifier: MIT */
/*
 * What a new vyred adopts after a restart (docs/design.md section 3), one
 * piece at a time: vyre_ledger_read against ledgers written by
 * vyre_ledger_create/add and against forged memfds (bounds, overlaps,
 * duplicates, names, sizes, seals), vyre_heap_adopt (the free list is the
 * gaps; extents that are not as promised are refused), and the handle
 * table's adopt and alias paths (own slots, aliases, no value given out
 * twice in a domain, the recycled-slot queue, alias deletion against a
 * model).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../ring/handles.h"
#include "../ring/heap.h"
#include "../ring/ledger.h"
#include "../ring/ring.h"

#define HEAP (1u << 20)

/* ---- ledgers ---- */

/* A memfd holding @hdr and @n entries in @bytes, sealed with @seals. */
static int forged(const struct vyre_ledger_header *hdr, const struct vyre_ledger_entry *e,
		  uint32_t n, uint64_t bytes, int seals)
{
	int fd = memfd_create("forged-ledger", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
	assert_int_equal(pwrite(fd, hdr, sizeof(*hdr), 0), (ssize_t)sizeof(*hdr));
	if (n)
		assert_int_equal(pwrite(fd, e, n * sizeof(*e), sizeof(*hdr)),
				 (ssize_t)(n * sizeof(*e)));
	if (seals)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

static struct vyre_ledger_header header(uint32_t capacity, uint32_t high, const char *domain)
{
	struct vyre_ledger_header h;

	memset(&h, 0, sizeof(h));
	h.magic = VYRE_LEDGER_MAGIC;
	h.version = VYRE_LEDGER_VERSION;
	h.capacity = capacity;
	h.high = high;
	h.heap_bytes = HEAP;
	h.domain_len = (uint32_t)strlen(domain);
	memcpy(h.domain, domain, h.domain_len);
	return h;
}

static struct vyre_ledger_entry entry(uint32_t handle, uint64_t off, uint32_t bytes,
				      const char *name)
{
	struct vyre_ledger_entry e;

	memset(&e, 0, sizeof(e));
	e.handle = handle;
	e.off = off;
	e.bytes = bytes;
	e.name_len = name ? (uint32_t)strlen(name) : 0;
	if (name)
		memcpy(e.name, name, e.name_len);
	return e;
}

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW)

/* vyre_ledger_read of @n entries in a ledger of capacity 16; frees what it read. */
static int read_forged(const struct vyre_ledger_entry *e, uint32_t n)
{
	struct vyre_ledger_header h = header(16, n, "dom");
	struct vyre_ledger_image im;
	int fd = forged(&h, e, n, 256 + 16 * 80, SEALS);
	int rc = vyre_ledger_read(fd, HEAP, 1024, &im);

	close(fd);
	if (rc == 0)
		free(im.e);
	return rc;
}

static void test_ledger_roundtrip(void **state)
{
	struct vyre_ledger l;
	struct vyre_ledger_image im;
	uint32_t idx[4];

	(void)state;
	assert_int_equal(vyre_ledger_create(8, "dom", HEAP, 1000, 1001, &l), 0);
	/* vyred alone writes it: a client's writable mapping is refused */
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, l.fd, 0) == MAP_FAILED);
	assert_int_equal(vyre_ledger_add(&l, 0x100001, 0, 4096, 100, "b", &idx[0]), 0);
	assert_int_equal(vyre_ledger_add(&l, 0x100002, 0, 0, 256, NULL, &idx[1]), 0);
	assert_int_equal(vyre_ledger_add(&l, 0x100003, VYRE_BUF_DEVICE, 0, 64, "dev", &idx[2]), 0);
	assert_int_equal(vyre_ledger_add(&l, 0x100004, 0, 8192, 4, NULL, &idx[3]), 0);
	vyre_ledger_remove(&l, idx[3]);
	assert_int_equal(vyre_ledger_read(l.fd, HEAP, 8, &im), 0);
	assert_int_equal(im.n, 3);
	assert_int_equal(im.hdr.creator_uid, 1000);
	assert_int_equal(im.hdr.creator_gid, 1001);
	/* sorted by offset; the device buffer (off 0) first by size */
	assert_int_equal(im.e[0].handle, 0x100003);
	assert_int_equal(im.e[1].handle, 0x100002);
	assert_int_equal(im.e[2].handle, 0x100001);
	assert_memory_equal(im.e[2].name, "b", 2);
	free(im.e);
	/* a freed entry is reused, high stays */
	assert_int_equal(vyre_ledger_add(&l, 0x100005, 0, 8192, 4, "c", &idx[3]), 0);
	assert_int_equal(l.hdr->high, 4);
	/* more entries than we allow */
	assert_int_equal(vyre_ledger_read(l.fd, HEAP, 3, &im), VYRE_E_PROTO);
	/* another heap size */
	assert_int_equal(vyre_ledger_read(l.fd, HEAP * 2, 8, &im), VYRE_E_PROTO);
	vyre_ledger_destroy(&l);
}

/* A daemon started with stdin closed gets descriptor 0 for a ledger: it is closed like any. */
static void test_ledger_fd_zero(void **state)
{
	struct vyre_ledger l, zeroed;
	int saved = dup(0);

	(void)state;
	assert_true(saved >= 0);
	close(0);
	assert_int_equal(vyre_ledger_create(4, "", HEAP, 0, 0, &l), 0);
	assert_int_equal(l.fd, 0);
	vyre_ledger_destroy(&l);
	assert_true(fcntl(0, F_GETFD) < 0);
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	/* a zeroed (never created) ledger closes nothing */
	memset(&zeroed, 0, sizeof(zeroed));
	vyre_ledger_destroy(&zeroed);
	assert_true(fcntl(0, F_GETFD) >= 0);
}

/* vyre_ledger_read of a ledger of capacity 16 and no entries with header @h. */
static int read_header(const struct vyre_ledger_header *h, uint32_t max, int seals)
{
	struct vyre_ledger_image im;
	int fd = forged(h, NULL, 0, 256 + 16 * 80, seals);
	int rc = vyre_ledger_read(fd, HEAP, max, &im);

	close(fd);
	if (rc == 0)
		free(im.e);
	return rc;
}

static void test_ledger_forged_header(void **state)
{
	struct vyre_ledger_header h = header(16, 0, "dom");
	struct vyre_ledger_image im;
	int fd;

	(void)state;
	assert_int_equal(read_header(&h, 16, SEALS), 0);
	/* not sealed against shrinking: it could fault our mapping */
	assert_int_equal(read_header(&h, 16, F_SEAL_GROW), VYRE_E_PROTO);
	/* a capacity the file does not hold, one that overflows 32 bits times 80 */
	h = header(17, 0, "dom");
	assert_int_equal(read_header(&h, 16, SEALS), VYRE_E_PROTO);
	h = header(0xffffffffu, 0, "dom");
	assert_int_equal(read_header(&h, 16, SEALS), VYRE_E_PROTO);
	/* high past the capacity, huge high, high past what we allow */
	h = header(16, 17, "dom");
	assert_int_equal(read_header(&h, 1024, SEALS), VYRE_E_PROTO);
	h = header(16, 0xffffffffu, "dom");
	assert_int_equal(read_header(&h, 0xffffffffu, SEALS), VYRE_E_PROTO);
	h = header(16, 16, "dom");
	assert_int_equal(read_header(&h, 15, SEALS), VYRE_E_PROTO);
	/* a domain name longer than its field, a bad magic, a bad version */
	h = header(16, 0, "dom");
	h.domain_len = VYRE_DOMAIN_NAME_MAX + 1;
	assert_int_equal(read_header(&h, 16, SEALS), VYRE_E_PROTO);
	h = header(16, 0, "dom");
	h.magic ^= 1;
	assert_int_equal(read_header(&h, 16, SEALS), VYRE_E_PROTO);
	h = header(16, 0, "dom");
	h.version = 2;
	assert_int_equal(read_header(&h, 16, SEALS), VYRE_E_PROTO);
	/* shorter than a header; a file that is not a memfd */
	fd = memfd_create("short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_int_equal(ftruncate(fd, 100), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, SEALS), 0);
	assert_int_equal(vyre_ledger_read(fd, HEAP, 16, &im), VYRE_E_PROTO);
	close(fd);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_int_equal(vyre_ledger_read(fd, HEAP, 16, &im), VYRE_E_PROTO);
	close(fd);
}

static void test_ledger_forged_entries(void **state)
{
	struct vyre_ledger_entry e[3];
	char long_name[VYRE_BUFFER_NAME_MAX];

	(void)state;
	e[0] = entry(0x100001, 0, 512, "a");
	e[1] = entry(0x100002, 512, 256, NULL);
	e[2] = entry(0x100003, HEAP - 256, 256, "b");
	assert_int_equal(read_forged(e, 3), 0);
	/* an empty entry in the middle is skipped */
	e[1].handle = 0;
	e[1].off = 3; /* not looked at */
	assert_int_equal(read_forged(e, 3), 0);
	/* overlaps: the last 256 bytes of a 300-byte buffer's span */
	e[0] = entry(0x100001, 0, 300, NULL);
	e[1] = entry(0x100002, 256, 4, NULL);
	assert_int_equal(read_forged(e, 2), VYRE_E_PROTO);
	/* the same offset twice, one of 0 bytes: a 0-byte buffer takes no room */
	e[1] = entry(0x100002, 0, 0, NULL);
	assert_int_equal(read_forged(e, 2), 0);
	/* bounds: past the end, straddling it, an offset that wraps, misaligned */
	e[0] = entry(0x100001, HEAP, 4, NULL);
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0] = entry(0x100001, HEAP - 256, 260, NULL);
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0] = entry(0x100001, UINT64_MAX - 255, 256, NULL);
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0] = entry(0x100001, 128, 4, NULL);
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0] = entry(0x100001, 0, 6, NULL); /* not a multiple of 4 */
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	/* flags: unknown, both, a device buffer with an offset */
	e[0] = entry(0x100001, 0, 4, NULL);
	e[0].flags = 8;
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0].flags = VYRE_BUF_DEVICE | VYRE_BUF_TRANSIENT;
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0] = entry(0x100001, 256, 4, NULL);
	e[0].flags = VYRE_BUF_DEVICE;
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	/* a handle twice (one a device buffer), a name twice */
	e[0] = entry(0x100001, 0, 4, NULL);
	e[1] = entry(0x100001, 0, 4, NULL);
	e[1].flags = VYRE_BUF_DEVICE;
	assert_int_equal(read_forged(e, 2), VYRE_E_PROTO);
	e[0] = entry(0x100001, 0, 4, "same");
	e[1] = entry(0x100002, 256, 4, "same");
	assert_int_equal(read_forged(e, 2), VYRE_E_PROTO);
	/* names: a bad character, junk after the length, a length past the field */
	e[0] = entry(0x100001, 0, 4, "a/b");
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0] = entry(0x100001, 0, 4, "ab");
	e[0].name_len = 1;
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	memset(long_name, 'x', sizeof(long_name));
	e[0] = entry(0x100001, 0, 4, NULL);
	memcpy(e[0].name, long_name, sizeof(long_name));
	e[0].name_len = VYRE_BUFFER_NAME_MAX;
	assert_int_equal(read_forged(e, 1), 0); /* a full field needs no NUL */
	e[0].name_len = VYRE_BUFFER_NAME_MAX + 1;
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
	e[0].name_len = 0xffffffffu;
	assert_int_equal(read_forged(e, 1), VYRE_E_PROTO);
}

/* ---- heaps ---- */

static void test_heap_adopt(void **state)
{
	struct vyre_heap h;
	const struct vyre_heap_extent used[] = {{256, 512}, {1024, 256}, {HEAP - 256, 256}};
	uint64_t off;
	int fd = vyre_sealed_memfd("adopt", HEAP);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(vyre_heap_adopt(fd, HEAP, used, 3, &h), 0);
	assert_int_equal(h.fd, fd);
	assert_int_equal(h.used, 1024);
	assert_int_equal(h.n_allocs, 3);
	/* the gaps, first fit: [0,256), [768,1024), [1280, HEAP-256) */
	assert_int_equal(vyre_heap_alloc(&h, 256, &off), 0);
	assert_int_equal(off, 0);
	assert_int_equal(vyre_heap_alloc(&h, 300, &off), 0);
	assert_int_equal(off, 1280);
	assert_int_equal(vyre_heap_alloc(&h, 256, &off), 0);
	assert_int_equal(off, 768);
	vyre_heap_free(&h, 256, 512);
	vyre_heap_free(&h, 1024, 256);
	vyre_heap_free(&h, HEAP - 256, 256);
	vyre_heap_free(&h, 0, 256);
	vyre_heap_free(&h, 1280, 300);
	vyre_heap_free(&h, 768, 256);
	assert_int_equal(h.used, 0);
	assert_int_equal(h.n_free, 1);
	assert_int_equal(h.free[0].bytes, HEAP);
	vyre_heap_destroy(&h);
}

static void test_heap_adopt_refused(void **state)
{
	struct vyre_heap h;
	int fd = vyre_sealed_memfd("adopt", HEAP);
	const struct vyre_heap_extent overlap[] = {{0, 512}, {256, 256}};
	const struct vyre_heap_extent straddle[] = {{HEAP - 256, 512}};
	const struct vyre_heap_extent past[] = {{0, 256}, {HEAP + 4096, 256}};
	const struct vyre_heap_extent wraps[] = {{UINT64_MAX - 255, 512}};

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(vyre_heap_adopt(fd, HEAP, overlap, 2, &h), VYRE_E_INVAL);
	assert_int_equal(vyre_heap_adopt(fd, HEAP, straddle, 1, &h), VYRE_E_INVAL);
	assert_int_equal(vyre_heap_adopt(fd, HEAP, past, 2, &h), VYRE_E_INVAL);
	assert_int_equal(vyre_heap_adopt(fd, HEAP, wraps, 1, &h), VYRE_E_INVAL);
	assert_int_equal(vyre_heap_adopt(fd, 0, NULL, 0, &h), VYRE_E_INVAL);
	/* refused, the descriptor is still the caller's */
	assert_int_equal(fcntl(fd, F_GETFD) >= 0, 1);
	close(fd);
}

/* ---- handles ---- */

/* After vyre_handles_adopt_done: each free slot queued once, nothing else queued. */
static void check_queue(const struct vyre_handle_table *t)
{
	uint8_t *seen = calloc(t->n_slots, 1);
	uint32_t n_dead = 0;

	assert_non_null(seen);
	assert_true(t->n_free <= t->cap);
	for (uint32_t k = 0; k < t->n_free; k++) {
		uint32_t s = t->free[(t->free_head + k) % t->cap];

		assert_true(s > 0 && s < t->n_slots);
		assert_int_equal(t->slots[s].live, 0);
		assert_int_equal(seen[s], 0);
		seen[s] = 1;
	}
	for (uint32_t s = 1; s < t->n_slots; s++)
		n_dead += !t->slots[s].live;
	assert_int_equal(n_dead, t->n_free);
	assert_int_equal(t->n_slots - 1 - n_dead, t->n_live);
	free(seen);
}

/* @n buffers of @domain made and freed one after another. */
static void churn(struct vyre_handle_table *t, uint32_t domain, int n)
{
	struct vyre_buffer_ref ref = {.domain = domain}, got;
	uint32_t h;

	for (int i = 0; i < n; i++) {
		assert_int_equal(vyre_handles_add(t, &ref, &h), 0);
		assert_int_equal(vyre_handles_remove(t, h, domain, &got), 0);
	}
}

#define H(gen, slot) (((uint32_t)(gen) << VYRE_HANDLE_SLOT_BITS) | (slot))

static void test_handles_adopt_paths(void **state)
{
	struct vyre_handle_table t;
	struct vyre_buffer_ref a = {.off = 256, .bytes = 4, .domain = 1};
	struct vyre_buffer_ref b = {.off = 512, .bytes = 4, .domain = 2};
	struct vyre_buffer_ref got;
	uint32_t h1, slot, own;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, 1000), 0);
	assert_int_equal(vyre_handles_add(&t, &a, &h1), 0);
	assert_int_equal(h1, H(1, 1));
	/* handle 0, slot 0, generation 0 */
	assert_int_equal(vyre_handles_adopt(&t, 0, &b, &slot), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_adopt(&t, H(3, 0), &b, &slot), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_adopt(&t, 5, &b, &slot), VYRE_E_INVAL);
	/* a slot past the table: its own, the skipped ones are queued */
	assert_int_equal(vyre_handles_adopt(&t, H(7, 10), &b, &slot), 0);
	assert_int_equal(slot, 10);
	/* the same value twice in a domain */
	assert_int_equal(vyre_handles_adopt(&t, H(7, 10), &b, &slot), VYRE_E_INVAL);
	/* slot 1 is live in domain 1: aliases */
	assert_int_equal(vyre_handles_adopt(&t, H(1, 1), &b, &slot), 0);
	assert_int_not_equal(slot, 1);
	own = slot;
	assert_int_equal(t.slots[own].live, VYRE_HANDLE_LIVE_ALIASED);
	assert_int_equal(vyre_handles_adopt(&t, H(2, 1), &b, &slot), 0);
	assert_int_not_equal(slot, 1);
	vyre_handles_adopt_done(&t);
	check_queue(&t);
	/* one value, two buffers, told apart by domain */
	assert_int_equal(vyre_handles_get(&t, H(1, 1), 1, &got), 0);
	assert_int_equal(got.off, 256);
	assert_int_equal(vyre_handles_get(&t, H(1, 1), 2, &got), 0);
	assert_int_equal(got.off, 512);
	assert_int_equal(vyre_handles_get(&t, H(7, 10), 2, &got), 0);
	assert_int_equal(vyre_handles_get(&t, H(7, 10), 1, &got), VYRE_E_INVAL);
	/* the aliased slot's own handle is nobody's */
	assert_int_equal(vyre_handles_get(&t, H(t.slots[own].gen, own), 2, &got), VYRE_E_INVAL);
	/* freeing slot 1's buffer in domain 1: a new one of domain 2 there skips H(2, 1) */
	assert_int_equal(vyre_handles_remove(&t, h1, 1, &got), 0);
	for (int i = 0; i < 20; i++) {
		uint32_t h;

		assert_int_equal(vyre_handles_add(&t, &b, &h), 0);
		assert_int_not_equal(h, H(1, 1));
		assert_int_not_equal(h, H(2, 1));
		assert_int_not_equal(h, H(7, 10));
		assert_int_equal(vyre_handles_get(&t, h, 2, &got), 0);
	}
	check_queue(&t);
	/* removing the alias: the value is unknown, the slot free again */
	assert_int_equal(vyre_handles_remove(&t, H(1, 1), 2, &got), 0);
	assert_int_equal(got.off, 512);
	assert_int_equal(t.n_alias, 1);
	assert_int_equal(vyre_handles_get(&t, H(1, 1), 2, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_get(&t, H(2, 1), 2, &got), 0);
	check_queue(&t);
	assert_int_equal(vyre_handles_drop_domain(&t, 2, NULL, NULL), 22);
	assert_int_equal(t.n_alias, 0);
	assert_int_equal(t.n_live, 0);
	check_queue(&t);
	vyre_handles_fini(&t);
}

/* A slot this table already used at a generation as high: not reused under that value. */
static void test_handles_adopt_used_generation(void **state)
{
	struct vyre_handle_table t;
	struct vyre_buffer_ref a = {.domain = 1}, b = {.domain = 2}, got;
	uint32_t h, slot;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, 100), 0);
	churn(&t, 1, 3);
	/* slot 1 went out at generations 1 to 3 in this table: generation 2 is an alias */
	assert_int_equal(vyre_handles_adopt(&t, H(2, 1), &b, &slot), 0);
	assert_int_equal(t.slots[slot].live, VYRE_HANDLE_LIVE_ALIASED);
	assert_int_equal(vyre_handles_remove(&t, H(2, 1), 2, &got), 0);
	/* generation 9 never was: its own slot */
	assert_int_equal(vyre_handles_adopt(&t, H(9, 1), &b, &slot), 0);
	assert_int_equal(slot, 1);
	assert_int_equal(t.slots[1].live, VYRE_HANDLE_LIVE);
	vyre_handles_adopt_done(&t);
	check_queue(&t);
	/* and a new buffer there, once it is free, goes past 9 */
	assert_int_equal(vyre_handles_remove(&t, H(9, 1), 2, &got), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(vyre_handles_add(&t, &a, &h), 0);
		if ((h & VYRE_HANDLE_SLOT_MASK) == 1)
			assert_true(h >> VYRE_HANDLE_SLOT_BITS > 9);
	}
	check_queue(&t);
	vyre_handles_fini(&t);
}

/* The limit counts adopted buffers; a full table refuses more. */
static void test_handles_adopt_limit(void **state)
{
	struct vyre_handle_table t;
	struct vyre_buffer_ref a = {.domain = 1}, got;
	uint32_t h, slot;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, 4), 0);
	assert_int_equal(vyre_handles_adopt(&t, H(1, 4), &a, &slot), 0);
	/* a slot past the limit: an alias in a slot of its own */
	assert_int_equal(vyre_handles_adopt(&t, H(1, 1000), &a, &slot), 0);
	assert_true(slot <= 4);
	assert_int_equal(vyre_handles_add(&t, &a, &h), 0);
	assert_int_equal(vyre_handles_add(&t, &a, &h), 0);
	assert_int_equal(vyre_handles_add(&t, &a, &h), VYRE_E_NOMEM);
	assert_int_equal(vyre_handles_adopt(&t, H(5, 3), &a, &slot), VYRE_E_NOMEM);
	vyre_handles_adopt_done(&t);
	check_queue(&t);
	assert_true(t.n_slots <= 5);
	assert_int_equal(vyre_handles_get(&t, H(1, 1000), 1, &got), 0);
	vyre_handles_fini(&t);
}

/* A buffer adopted into a queued slot and freed before vyre_handles_adopt_done. */
static void test_handles_adopt_remove_early(void **state)
{
	struct vyre_handle_table t;
	struct vyre_buffer_ref a = {.domain = 1}, got;
	uint32_t slot;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, 16), 0);
	churn(&t, 1, 1); /* slot 1 is free and queued */
	assert_int_equal(vyre_handles_adopt(&t, H(5, 1), &a, &slot), 0);
	assert_int_equal(slot, 1);
	assert_int_equal(vyre_handles_remove(&t, H(5, 1), 1, &got), 0);
	vyre_handles_adopt_done(&t);
	check_queue(&t);
	churn(&t, 1, 40);
	check_queue(&t);
	vyre_handles_fini(&t);
}

/*
 * A forged ledger can name every generation of one slot: a new buffer of
 * that domain must still get a value (or NOMEM), never loop for ever.
 */
static void test_handles_every_generation_aliased(void **state)
{
	struct vyre_handle_table t;
	struct vyre_buffer_ref a = {.domain = 1}, b = {.domain = 2}, got;
	uint32_t h1, h, slot;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, VYRE_HANDLE_GEN_MAX + 8), 0);
	assert_int_equal(vyre_handles_add(&t, &a, &h1), 0);
	for (uint32_t g = 1; g <= VYRE_HANDLE_GEN_MAX; g++)
		assert_int_equal(vyre_handles_adopt(&t, H(g, 1), &b, &slot), 0);
	vyre_handles_adopt_done(&t);
	assert_int_equal(vyre_handles_remove(&t, h1, 1, &got), 0);
	/* slot 1 is next in the queue for domain 2: no value of it is free there */
	int rc = vyre_handles_add(&t, &b, &h);

	assert_true(rc == 0 || rc == VYRE_E_NOMEM);
	if (rc == 0)
		assert_int_not_equal(h & VYRE_HANDLE_SLOT_MASK, 1);
	check_queue(&t);
	/* another domain still gets slot 1 */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(vyre_handles_add(&t, &a, &h), 0);
		assert_int_equal(vyre_handles_get(&t, h, 1, &got), 0);
	}
	check_queue(&t);
	vyre_handles_fini(&t);
}

/* Random adopts, adds and removes over two domains against a model of who holds what. */
static void test_handles_adopt_model(void **state)
{
	enum { MAX = 512, VALUES = 4096 };
	struct vyre_handle_table t;
	static uint32_t held[3][VALUES]; /* per domain, the handles it holds */
	uint32_t n_held[3] = {0, 0, 0};
	uint64_t rng = 0x2545f4914f6cdd1dull;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, MAX), 0);
	for (int step = 0; step < 40000; step++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		uint32_t dom = 1 + (uint32_t)(rng & 1), op = (uint32_t)(rng >> 8) % 3;
		struct vyre_buffer_ref ref = {.domain = dom, .off = rng >> 40}, got;
		uint32_t h, slot;

		if (op == 0 && t.n_live < MAX) {
			/* a handle of a few slots and generations, so aliases come often */
			h = H(1 + (rng >> 20) % 6, 1 + (rng >> 30) % 40);
			int known = 0;

			for (uint32_t k = 0; k < n_held[dom]; k++)
				known |= held[dom][k] == h;
			int rc = vyre_handles_adopt(&t, h, &ref, &slot);

			assert_int_equal(rc, known ? VYRE_E_INVAL : 0);
			if (rc == 0)
				held[dom][n_held[dom]++] = h;
			vyre_handles_adopt_done(&t);
		} else if (op == 1 && t.n_live < MAX) {
			assert_int_equal(vyre_handles_add(&t, &ref, &h), 0);
			for (uint32_t k = 0; k < n_held[dom]; k++)
				assert_int_not_equal(held[dom][k], h);
			held[dom][n_held[dom]++] = h;
		} else if (n_held[dom]) {
			uint32_t k = (uint32_t)(rng >> 24) % n_held[dom];

			assert_int_equal(vyre_handles_remove(&t, held[dom][k], dom, &got), 0);
			assert_int_equal(vyre_handles_get(&t, held[dom][k], dom, &got),
					 VYRE_E_INVAL);
			held[dom][k] = held[dom][--n_held[dom]];
		}
		if (step % 1000 == 0) {
			check_queue(&t);
			for (uint32_t d = 1; d <= 2; d++)
				for (uint32_t k = 0; k < n_held[d]; k++)
					assert_int_equal(vyre_handles_get(&t, held[d][k], d, &got),
							 0);
		}
	}
	check_queue(&t);
	vyre_handles_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ledger_roundtrip),
	    cmocka_unit_test(test_ledger_fd_zero),
	    cmocka_unit_test(test_ledger_forged_header),
	    cmocka_unit_test(test_ledger_forged_entries),
	    cmocka_unit_test(test_heap_adopt),
	    cmocka_unit_test(test_heap_adopt_refused),
	    cmocka_unit_test(test_handles_adopt_paths),
	    cmocka_unit_test(test_handles_adopt_used_generation),
	    cmocka_unit_test(test_handles_adopt_limit),
	    cmocka_unit_test(test_handles_adopt_remove_early),
	    cmocka_unit_test(test_handles_every_generation_aliased),
	    cmocka_unit_test(test_handles_adopt_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
