#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A vyre producer in Python: fill buffers, ADD, SUM, a DFA scan, wait, print.

    python3 python/examples/producer.py [SOCKET]     (default: $VYRE_SOCKET)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vyre  # noqa: E402


def dfa_counting(byte):
    """A DFA table (docs/design.md section 6) that accepts after every @byte."""
    n_states, start, accept = 2, 0, 0b10
    nxt = [1 if b == byte else 0 for b in range(256)]
    return [n_states, start, accept] + nxt * n_states


def main():
    socket = sys.argv[1] if len(sys.argv) > 1 else None
    text = b"vyre queues work for the GPU; the planner merges the queue.\n"
    text += b"\0" * (-len(text) % 4)
    with vyre.connect(socket) as c:
        nums = c.alloc(4 * 16)
        plus = c.alloc(4 * 16)
        total = c.alloc(4)
        log = c.alloc(len(text))
        table = c.alloc(4 * len(dfa_counting(0)))
        hits = c.alloc(4)

        # The buffers are views of the shared heap: writing them copies nothing to vyred.
        for i in range(16):
            nums.words[i] = i * i
        log.view[:] = text
        for i, w in enumerate(dfa_counting(ord("e"))):
            table.words[i] = w

        c.submit((vyre.OP_ADD, nums, plus, 100), user_data=1)
        c.submit((vyre.OP_SUM, plus, total, 0), user_data=2)
        c.submit((vyre.OP_DFA_SCAN, log, hits, table), user_data=3, flags=vyre.SQE_FENCE)

        done = {}
        while len(done) < 3:
            for cqe in c.wait(timeout=10):
                if not cqe.ok:
                    raise cqe.error()
                done[cqe.user_data] = cqe
        print("plus:", list(plus.words))
        print("sum of plus:", done[2].result, "(buffer:", total.words[0], ")")
        print("bytes 'e' in the log:", done[3].result)


if __name__ == "__main__":
    main()
