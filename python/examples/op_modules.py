#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Producers of the example op modules (examples/ops, vyre_op_module(7)).

Each looks its op up by name on vyred (Client.op_lookup: the number is this
vyred's) and submits items to it as to a built-in op. The modules must be in
vyred's ops directory.

    python3 python/examples/op_modules.py [crc32c|hash64|histogram|dot ...] [--socket SOCKET]

With no op named, runs the four.
"""
import argparse
import base64
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vyre  # noqa: E402

TEXT = b"The quick brown fox jumps over the lazy dog."  # 44 bytes, a multiple of 4


def buffer(c, data, nbytes=None):
    """A buffer of nbytes (default: len(data)) holding data."""
    buf = c.alloc(nbytes or len(data))
    buf.view[: len(data)] = data
    return buf


def run(c, item):
    """Submits one item, waits for its completion, returns its result."""
    c.submit(item, user_data=1)
    for cqe in c.wait(timeout=10):
        if not cqe.ok:
            raise cqe.error()
        return cqe.result
    raise RuntimeError("no completion")


def crc32c(c, op):
    """The CRC32C of a sentence, then of its halves, the second from the first's CRC."""
    whole, head, tail = buffer(c, TEXT), buffer(c, TEXT[:20]), buffer(c, TEXT[20:])
    out = c.alloc(4)
    crc = run(c, (op, whole, out, 0))
    second = run(c, (op, tail, out, run(c, (op, head, out, 0))))
    print(f"crc32c({TEXT.decode()!r}) = {crc:08x}; in two items: {second:08x}")
    # the sentence in base64, decoded into a transient buffer that the module's stream op
    # crc32c_counted reads: one chain (on a GPU the decoded bytes stay on chip)
    encoded = base64.b64encode(TEXT)
    src = buffer(c, struct.pack("<I", len(encoded)) + encoded)
    decoded = c.alloc(4 + len(TEXT), vyre.BUF_TRANSIENT)
    c.submit((vyre.Op.BASE64_DECODE, src, decoded, 0), user_data=1, flags=vyre.SQE_CHAIN)
    c.submit((c.op_lookup("crc32c_counted"), decoded, out, 0), user_data=2)
    results = {}
    while len(results) < 2:
        for cqe in c.wait(timeout=10):
            if not cqe.ok:
                raise cqe.error()
            results[cqe.user_data] = cqe.result
    print(f"base64 -> crc32c_counted chain: {results[2]:08x}")


def hash64(c, op):
    """XXH64 of a sentence under three seeds (the param word)."""
    data, out = buffer(c, TEXT), c.alloc(8)
    for seed in (0, 1, 0xDEADBEEF):
        h = run(c, (op, data, out, seed))
        assert bytes(out.view) == struct.pack("<Q", h)
        print(f"XXH64({TEXT.decode()!r}, seed {seed:#x}) = {h:016x}")


def histogram(c, op):
    """The byte values of a sentence, counted into 256 little-endian u32 counts."""
    data, out = buffer(c, TEXT), c.alloc(1024)
    counted = run(c, (op, data, out, 0))
    counts = struct.unpack("<256I", bytes(out.view))
    shown = " ".join(f"{chr(b)!s}:{n}" for b, n in enumerate(counts) if n and 32 < b < 127)
    print(f"{counted} bytes counted: {shown}")


def dot(c, op):
    """x = (1, 2, ..., 3000) dot y = (0.5, ...), y given as the param's table buffer."""
    n = 3000
    xs = buffer(c, struct.pack(f"<{n}f", *range(1, n + 1)))
    ys = buffer(c, struct.pack(f"<{n}f", *([0.5] * n)))
    bits = run(c, (op, xs, c.alloc(4), ys))
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    print(f"x . y = {value} (bits {bits:08x}; exact: {0.5 * n * (n + 1) / 2})")


PRODUCERS = {"crc32c": crc32c, "hash64": hash64, "histogram": histogram, "dot": dot}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", nargs="*", help="of " + ", ".join(PRODUCERS) + " (default: all)")
    ap.add_argument("--socket", default=None, help="vyred's socket (default: $VYRE_SOCKET)")
    args = ap.parse_args()
    for name in args.ops:
        if name not in PRODUCERS:
            ap.error(f"no example op {name!r}")
    with vyre.connect(args.socket) as c:
        for name in args.ops or list(PRODUCERS):
            op = c.op_lookup(name)
            print(f"op {name} is number {op:#x} on this vyred")
            PRODUCERS[name](c, op)


if __name__ == "__main__":
    main()
