#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which rule matched where, in a text streamed through vyre in pieces.

    python3 python/examples/scan_report.py [SOCKET [FILE [PIECE_BYTES]]]

Compiles RULES (ids chosen per rule, one caseless, one binary) with
vyre.dfa_compile, sends FILE (default: a small built-in log) as counted
DFA_REPORT_COUNTED items of PIECE_BYTES (default 64) that all continue one
stream, and prints each match as `id=ID start=S end=E RULE`, at offsets of
the whole text: a match cut by a piece boundary is reported once, by the
piece holding its last byte (docs/design.md 6.8).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vyre  # noqa: E402

RULES = [
    (1, b"error"),
    (2, b"timeout"),
    (2, b"timed out"),  # ids may repeat: both are rule 2
    (3, b"password=", vyre.DFA_CASELESS),
    (4, b"\x00\xffMZ"),  # any bytes, NUL included
]
NAMES = {1: "error", 2: "timeout", 3: "password (caseless)", 4: "binary MZ"}
LOG = (
    b"12:00:01 GET /login PASSWORD=hunter2 from 10.0.0.7\n"
    b"12:00:02 upstream timed out after 30 s\n"
    b"12:00:03 error: upload held \x00\xffMZ at offset 4096\n"
    b"12:00:04 retry: error again, connection timeout; Password=xyz\n"
)
SLOTS = 4  # pieces in flight at once


def pieces(data, size):
    for at in range(0, len(data), size):
        yield data[at : at + size]


def main():
    socket = sys.argv[1] if len(sys.argv) > 1 else None
    text = open(sys.argv[2], "rb").read() if len(sys.argv) > 2 else LOG
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    cap = size  # records a piece's report holds: one a byte (more are counted, not kept)
    heap = SLOTS * (8 + size + vyre.report_bytes(cap)) + (1 << 20)
    with vyre.connect(socket, heap_bytes=max(1 << 24, heap)) as c:
        rules = vyre.dfa_compile(RULES)
        table = c.alloc(len(rules))
        table.view[:] = rules
        stream = c.alloc(vyre.STREAM_STATE_BYTES)
        stream.view[:] = bytes(vyre.STREAM_STATE_BYTES)  # zeros: a new stream
        ins = [c.alloc(4 + (size + 3) // 4 * 4) for _ in range(SLOTS)]
        outs = [c.alloc(vyre.report_bytes(cap)) for _ in range(SLOTS)]
        busy = {}  # slot -> piece number in flight there
        matches = 0

        def finish(cqe):
            nonlocal matches
            if not cqe.ok:
                raise cqe.error()
            slot = busy.pop(cqe.user_data)
            rep = vyre.parse_report(outs[slot])
            for r in rep.records:
                print(f"id={r.id} start={r.start} end={r.end} {NAMES[r.id]}")
            if rep.overflow:
                print(f"piece {cqe.user_data}: {rep.total - len(rep.records)} more matches not kept")
            matches += rep.total

        # The stream orders its items, so pieces go in while earlier ones run;
        # a slot is refilled only after its item completed (and was printed, in order).
        for k, piece in enumerate(pieces(text, size)):
            slot = k % SLOTS
            while slot in busy.values():
                for cqe in sorted(c.wait(timeout=10)):
                    finish(cqe)
            ins[slot].view[:4] = len(piece).to_bytes(4, "little")
            ins[slot].view[4 : 4 + len(piece)] = piece
            busy[k] = slot
            c.submit((vyre.OP_DFA_REPORT_COUNTED, ins[slot], outs[slot], table), user_data=k, stream=stream)
        while busy:
            for cqe in sorted(c.wait(timeout=10)):
                finish(cqe)
        print(f"{matches} matches in {len(text)} bytes")


if __name__ == "__main__":
    main()
