# SPDX-License-Identifier: MIT
"""vyre.dfa_compile: literal patterns into a DFA table (vyre/dfa.h, docs/design.md 6.8)."""

import ctypes

from ._lib import DfaInfoC, DfaPatternC, lib

DFA_CASELESS = 1 << 0
DFA_VALID_FLAGS = DFA_CASELESS
DFA_PATTERN_MAX = 65535
DFA_DEFAULT_MAX_STATES = 65536


def _pattern(i, p):
    """(id, bytes, flags) of one item of dfa_compile's list; str is UTF-8."""
    pid, flags = i, 0
    if isinstance(p, tuple):
        if len(p) == 2:
            pid, p = p
        elif len(p) == 3:
            pid, p, flags = p
        else:
            raise ValueError(f"pattern {i}: a tuple is (id, bytes) or (id, bytes, flags)")
    if isinstance(p, str):
        p = p.encode()
    if not isinstance(p, (bytes, bytearray, memoryview)):
        raise TypeError(f"pattern {i}: bytes or str, not {type(p).__name__}")
    return int(pid), bytes(p), int(flags)


def dfa_compile(patterns, max_states=0):
    """The DFA table (bytes) of @patterns for DFA_SCAN and DFA_REPORT.

    Each pattern is bytes or str (its id: its place in the list), or a tuple
    (id, bytes) or (id, bytes, flags), flags DFA_CASELESS or 0. At most
    @max_states states (0: 65536). Raises Invalid for an empty or too long
    pattern, an id or flags out of range, and NoMemory (with .states and
    .table_bytes: at least what the set needs) past the limit.
    """
    from . import Err, VyreError  # the package imports this module last

    pats = [_pattern(i, p) for i, p in enumerate(patterns)]
    arr = (DfaPatternC * max(len(pats), 1))()
    keep = []
    for k, (pid, data, flags) in enumerate(pats):
        if not 0 <= pid <= 0xFFFFFFFF or not 0 <= flags <= 0xFFFFFFFF:
            raise VyreError.of(Err.INVAL, f"pattern {k}: id and flags are u32")
        buf = ctypes.create_string_buffer(data, len(data))
        keep.append(buf)
        arr[k] = DfaPatternC(ctypes.cast(buf, ctypes.c_void_p), len(data), pid, flags)
    if not 0 <= max_states <= 0xFFFFFFFF:
        raise VyreError.of(Err.INVAL, "max_states is a u32")
    table = ctypes.POINTER(ctypes.c_uint8)()
    nbytes = ctypes.c_uint32()
    info = DfaInfoC()
    rc = lib.vyre_dfa_compile(arr, len(pats), max_states, ctypes.byref(table), ctypes.byref(nbytes), ctypes.byref(info))
    if rc == Err.NOMEM and info.states:
        e = VyreError.of(
            rc,
            f"dfa_compile: the patterns need at least {info.states} states and "
            f"{info.table_bytes} table bytes (limit {max_states or DFA_DEFAULT_MAX_STATES} states)",
        )
        e.states, e.table_bytes = info.states, info.table_bytes
        raise e
    if rc < 0:
        raise VyreError.of(rc, "dfa_compile")
    try:
        return ctypes.string_at(table, nbytes.value)
    finally:
        lib.vyre_dfa_free(table)
