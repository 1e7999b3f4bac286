# SPDX-License-Identifier: MIT
"""ctypes declarations of libvyre (include/vyre/vyre.h and include/vyre/abi.h).

The structures mirror the C ones field for field; the sizes and offsets that
abi.h pins with _Static_assert are checked again here at import, so a
binding that no longer matches the library refuses to load instead of
corrupting rings.
"""

import ctypes
import ctypes.util
import os
from pathlib import Path

c_u32 = ctypes.c_uint32
c_u64 = ctypes.c_uint64


class WorkItemC(ctypes.Structure):
    """struct vyre_work_item: one unit of work, 16 bytes."""

    _fields_ = [
        ("op_handle", c_u32),
        ("input_handle", c_u32),
        ("output_handle", c_u32),
        ("param", c_u32),
    ]


class ItemRangeC(ctypes.Structure):
    """struct vyre_item_range: an item's byte ranges (vyre_submit_range)."""

    _fields_ = [
        ("in_offset", c_u64),
        ("out_offset", c_u64),
        ("in_length", c_u32),
        ("out_length", c_u32),
    ]


class CqeC(ctypes.Structure):
    """struct vyre_cqe: one completion, 32 bytes."""

    _fields_ = [
        ("user_data", c_u64),
        ("status", ctypes.c_int32),
        ("flags", c_u32),
        ("result", c_u64),
        ("complete_ns", c_u64),
    ]


BUFFER_NAME_MAX = 48


class BufferInfoC(ctypes.Structure):
    """struct vyre_buffer_info: one named buffer of the domain."""

    _fields_ = [
        ("name", ctypes.c_char * (BUFFER_NAME_MAX + 1)),
        ("handle", c_u32),
        ("bytes", c_u32),
        ("flags", c_u32),
    ]


OP_NAME_MAX = 31


class OpInfoC(ctypes.Structure):
    """struct vyre_op_info: one op of the daemon (vyre_op_list)."""

    _fields_ = [
        ("name", ctypes.c_char * (OP_NAME_MAX + 1)),
        ("module", ctypes.c_char * (OP_NAME_MAX + 1)),
        ("op", c_u32),
        ("flags", c_u32),
    ]


class ConnectOptsC(ctypes.Structure):
    """struct vyre_connect_opts."""

    _fields_ = [
        ("socket_path", ctypes.c_char_p),
        ("domain", ctypes.c_char_p),
        ("sq_entries", c_u32),
        ("cq_entries", c_u32),
        ("heap_bytes", c_u64),
        ("flags", c_u32),
        ("priority", c_u32),
    ]


_PTRS = 2 * ctypes.sizeof(ctypes.c_void_p)

# (structure, size, {field: offset}) as abi.h's static assertions pin them,
# and vyre_connect_opts as the C compiler lays it out.
LAYOUT = [
    (WorkItemC, 16, {"op_handle": 0, "input_handle": 4, "output_handle": 8, "param": 12}),
    (CqeC, 32, {"user_data": 0, "status": 8, "flags": 12, "result": 16, "complete_ns": 24}),
    (ItemRangeC, 24, {"in_offset": 0, "out_offset": 8, "in_length": 16, "out_length": 20}),
    (OpInfoC, 72, {"name": 0, "module": 32, "op": 64, "flags": 68}),
    (
        ConnectOptsC,
        _PTRS + 24,
        {"sq_entries": _PTRS, "heap_bytes": _PTRS + 8, "flags": _PTRS + 16, "priority": _PTRS + 20},
    ),
]


def _check_layout():
    for struct, size, offsets in LAYOUT:
        if ctypes.sizeof(struct) != size:
            raise ImportError(f"vyre: {struct.__name__} is {ctypes.sizeof(struct)} bytes, not {size}")
        for name, off in offsets.items():
            if getattr(struct, name).offset != off:
                raise ImportError(f"vyre: {struct.__name__}.{name} at {getattr(struct, name).offset}, not {off}")


def _candidates():
    """Where libvyre is looked for, in order: $VYRE_LIB, installed, this repository's build."""
    env = os.environ.get("VYRE_LIB")
    if env:
        return [env]
    found = ctypes.util.find_library("vyre")
    repo_build = Path(__file__).resolve().parent.parent.parent / "build" / "libvyre.so"
    return ["libvyre.so.0"] + ([found] if found else []) + [str(repo_build)]


def _load():
    tried = []
    for name in _candidates():
        try:
            return ctypes.CDLL(name, use_errno=True)
        except OSError as e:
            tried.append(f"{name}: {e}")
    raise ImportError("vyre: libvyre not found (set VYRE_LIB):\n  " + "\n  ".join(tried))


class DfaPatternC(ctypes.Structure):
    """struct vyre_dfa_pattern (vyre/dfa.h): one literal of vyre_dfa_compile."""

    _fields_ = [
        ("bytes", ctypes.c_void_p),
        ("len", c_u32),
        ("id", c_u32),
        ("flags", c_u32),
    ]


class DfaInfoC(ctypes.Structure):
    """struct vyre_dfa_info: what a compile built, or at least what a set needs."""

    _fields_ = [
        ("states", c_u64),
        ("table_bytes", c_u64),
        ("report_entries", c_u64),
    ]


def _declare(lib):
    P = ctypes.c_void_p
    I = ctypes.c_int
    sigs = {
        "vyre_connect": (I, [ctypes.POINTER(ConnectOptsC), ctypes.POINTER(P)]),
        "vyre_close": (None, [P]),
        "vyre_buffer_alloc": (I, [P, c_u32, c_u32, ctypes.POINTER(c_u32)]),
        "vyre_buffer_free": (I, [P, c_u32]),
        "vyre_buffer_create": (I, [P, ctypes.c_char_p, c_u32, c_u32, ctypes.POINTER(c_u32)]),
        "vyre_buffer_open": (
            I,
            [P, ctypes.c_char_p, ctypes.POINTER(c_u32), ctypes.POINTER(c_u32), ctypes.POINTER(c_u32)],
        ),
        "vyre_buffer_list": (I, [P, ctypes.POINTER(BufferInfoC), c_u32]),
        "vyre_buffer_free_name": (I, [P, ctypes.c_char_p]),
        "vyre_op_lookup": (I, [P, ctypes.c_char_p, ctypes.POINTER(c_u32)]),
        "vyre_op_list": (I, [P, ctypes.POINTER(OpInfoC), c_u32]),
        "vyre_buffer_ptr": (P, [P, c_u32, ctypes.POINTER(c_u32)]),
        "vyre_submit": (I, [P, ctypes.POINTER(WorkItemC), c_u64, c_u32]),
        "vyre_submit_batch": (I, [P, ctypes.POINTER(WorkItemC), ctypes.POINTER(c_u64), c_u32]),
        "vyre_submit_range": (I, [P, ctypes.POINTER(WorkItemC), ctypes.POINTER(ItemRangeC), c_u64, c_u32]),
        "vyre_submit_batch_range": (
            I,
            [P, ctypes.POINTER(WorkItemC), ctypes.POINTER(ItemRangeC), ctypes.POINTER(c_u64), c_u32],
        ),
        "vyre_submit_stream": (
            I,
            [P, ctypes.POINTER(WorkItemC), c_u32, ctypes.POINTER(ItemRangeC), c_u64, c_u32],
        ),
        "vyre_reap": (I, [P, ctypes.POINTER(CqeC), c_u32]),
        "vyre_wait": (I, [P, ctypes.POINTER(CqeC), c_u32, ctypes.c_int64]),
        "vyre_event_fd": (I, [P]),
        "vyre_reconnect": (I, [P, ctypes.c_int64]),
        "vyre_strerror": (ctypes.c_char_p, [I]),
        "vyre_dfa_compile": (
            I,
            [
                ctypes.POINTER(DfaPatternC),
                c_u32,
                c_u32,
                ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                ctypes.POINTER(c_u32),
                ctypes.POINTER(DfaInfoC),
            ],
        ),
        "vyre_dfa_free": (None, [ctypes.POINTER(ctypes.c_uint8)]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


_check_layout()
lib = _declare(_load())
