/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/devbuf_table.h - a loop's table of device buffers (the
 * state devbufs.c keeps, devbufs.h). Types only.
 */
#ifndef VYRED_DEVBUF_TABLE_H
#define VYRED_DEVBUF_TABLE_H

#include <stdint.h>

struct vyre_devbuf {
	uint64_t write_gen;  /* accepted items that write it */
	uint64_t valid_gen;  /* 1 + the write_gen a DFA scan last found valid; 0: never */
	uint64_t report_gen; /* 1 + the write_gen a DFA_REPORT* last found valid; 0: never */
	uint32_t bytes;
	uint32_t live;
};

struct vyre_devbufs {
	struct vyre_devbuf *buf;
	uint32_t *free; /* unused buffer numbers, a stack */
	uint32_t n_free;
	uint32_t max;	  /* --max-device-buffers */
	uint32_t base;	  /* heap index of buffer 0: --max-domains */
	uint64_t allocs;  /* device buffers made, for the exit log */
	uint64_t trusted; /* scans that skipped their table check, for the exit log */
};

#endif /* VYRED_DEVBUF_TABLE_H */
