# SPDX-License-Identifier: MIT
"""vyre.parse_report: a DFA_REPORT output as Python values (docs/design.md 6.8)."""

import collections
import struct

REPORT_OVERFLOW = 1 << 0
REPORT_HEADER_BYTES = 16
REPORT_RECORD_BYTES = 24
STREAM_STATE_BYTES = 16

_HEADER = struct.Struct("<IIQ")  # kept, flags, total
_RECORD = struct.Struct("<IIQQ")  # id, zero, start, end

Record = collections.namedtuple("Record", "id start end")
Record.__doc__ = "One match: pattern id, offset of its first byte, offset after its last (stream offsets)."

Report = collections.namedtuple("Report", "total overflow records")
Report.__doc__ = """A DFA_REPORT output: total matches (the CQE's result), whether the
capacity left some out, and the records kept, ordered by end then id."""


def report_bytes(capacity):
    """The output buffer size that holds @capacity records."""
    return REPORT_HEADER_BYTES + REPORT_RECORD_BYTES * int(capacity)


def parse_report(data):
    """The Report in @data (bytes, a memoryview or a Buffer) an item wrote.

    Raises ValueError when it cannot be one: under 16 bytes, or more
    records kept than the bytes hold.
    """
    view = getattr(data, "view", data)
    mv = memoryview(view).cast("B")
    if len(mv) < REPORT_HEADER_BYTES:
        raise ValueError(f"vyre: a report is at least {REPORT_HEADER_BYTES} bytes, not {len(mv)}")
    kept, flags, total = _HEADER.unpack_from(mv, 0)
    if kept > (len(mv) - REPORT_HEADER_BYTES) // REPORT_RECORD_BYTES or kept > total:
        raise ValueError(f"vyre: {kept} records kept of {total} do not fit {len(mv)} bytes")
    recs = []
    for k in range(kept):
        pid, _zero, start, end = _RECORD.unpack_from(mv, REPORT_HEADER_BYTES + REPORT_RECORD_BYTES * k)
        recs.append(Record(pid, start, end))
    return Report(total, bool(flags & REPORT_OVERFLOW), recs)
