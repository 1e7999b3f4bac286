# SPDX-License-Identifier: MIT
"""Python producers for vyre: a ctypes binding over libvyre.

    import vyre

    with vyre.connect("/run/vyre/vyre.sock") as c:
        a = c.alloc(32)
        a.words[:] = array.array("I", range(8))
        total = c.alloc(4)
        c.submit((vyre.OP_SUM, a, total, 0), user_data=1)
        (cqe,) = c.wait(timeout=5)
        print(cqe.result)

Errors of calls raise VyreError (a subclass per VYRE_E_* code, such as
Disconnected or TimedOut); the status of an item is data, in its Cqe.
Threads: as in C (docs/design.md section 5), any number of threads may
submit on one connection at once; reap, wait and the buffer calls are made
by one thread at a time. ctypes releases the GIL during every call, so a
thread blocked in wait does not stop the others.
"""

import collections
import ctypes
import enum

from ._lib import BUFFER_NAME_MAX, OP_NAME_MAX, BufferInfoC, ConnectOptsC, CqeC, ItemRangeC, OpInfoC, WorkItemC, lib

try:
    import numpy as _np
except ImportError:
    _np = None

ABI_VERSION = 1
DEFAULT_SOCKET = "/run/vyre/vyre.sock"
DOMAIN_NAME_MAX = 64
MAX_RING_ENTRIES = 1 << 20
PRIORITY_MAX = 3


class Op(enum.IntEnum):
    """enum vyre_op (docs/design.md section 6)."""

    NOP = 0
    FILL = 1
    COPY = 2
    ADD = 3
    XOR = 4
    MUL = 5
    SUM = 6
    MAX = 7
    DFA_SCAN = 8
    BASE64_DECODE = 9
    HEX_DECODE = 10
    BYTEMAP = 11
    DFA_SCAN_COUNTED = 12
    DFA_REPORT = 13
    DFA_REPORT_COUNTED = 14


class Err(enum.IntEnum):
    """enum vyre_error: negative codes of calls and of Cqe.status."""

    OK = 0
    INVAL = -1
    AGAIN = -2
    NOMEM = -3
    PERM = -4
    DISCONNECTED = -5
    DEVICE = -6
    TIMEDOUT = -7
    PROTO = -8
    CANCELED = -9
    EXIST = -10
    NOENT = -11
    RESTARTED = -12


globals().update({f"OP_{o.name}": o for o in Op})
globals().update({f"E_{e.name}": e for e in Err if e})
OK = Err.OK

SQE_FENCE = 1 << 0
SQE_NODEDUPE = 1 << 1
SQE_CHAIN = 1 << 2
SQE_RANGE = 1 << 3
SQE_VALID_FLAGS = SQE_FENCE | SQE_NODEDUPE | SQE_CHAIN | SQE_RANGE
CQE_DEDUPED = 1 << 0
BUF_DEVICE = 1 << 0
BUF_TRANSIENT = 1 << 1
CONNECT_RESUMABLE = 1 << 0
CONNECT_RECONNECT = 1 << 1
CONNECT_RERUN = 1 << 2

# Op modules (docs/design.md 6.7): a module op's number has this bit; vyre_op_info.flags.
OP_MODULE_BIT = 1 << 31
OP_INFO_PURE = 1 << 0
OP_INFO_STREAM = 1 << 1
OP_INFO_IN = 1 << 2
OP_INFO_OUT = 1 << 3
OP_INFO_TABLE = 1 << 4
OP_INFO_COUNTED = 1 << 5


def strerror(code):
    """vyre_strerror: the English text of a VYRE_E_* code."""
    return lib.vyre_strerror(int(code)).decode()


class VyreError(Exception):
    """A libvyre call failed: .code is the VYRE_E_* value, .text its vyre_strerror."""

    code = None

    def __init__(self, code, what=""):
        self.code = int(code)
        self.text = strerror(self.code)
        super().__init__(f"{what}: {self.text}" if what else self.text)

    @staticmethod
    def of(code, what=""):
        """The exception for @code: its subclass when there is one."""
        return _SUBCLASS.get(int(code), VyreError)(code, what)


class Invalid(VyreError):
    """VYRE_E_INVAL"""


class Again(VyreError):
    """VYRE_E_AGAIN: the SQ is full; reap and retry."""


class NoMemory(VyreError):
    """VYRE_E_NOMEM"""


class Permission(VyreError):
    """VYRE_E_PERM"""


class Disconnected(VyreError):
    """VYRE_E_DISCONNECTED: no vyred, or vyred closed the connection or died."""


class DeviceError(VyreError):
    """VYRE_E_DEVICE"""


class TimedOut(VyreError):
    """VYRE_E_TIMEDOUT"""


class ProtocolError(VyreError):
    """VYRE_E_PROTO"""


class Canceled(VyreError):
    """VYRE_E_CANCELED"""


class Exists(VyreError):
    """VYRE_E_EXIST: the domain has a live buffer of that name."""


class NoEntry(VyreError):
    """VYRE_E_NOENT: the domain has no buffer of that name."""


class Restarted(VyreError):
    """VYRE_E_RESTARTED: accepted by a vyred that died before completing it (it may have run)."""


_SUBCLASS = {
    Err.INVAL: Invalid,
    Err.AGAIN: Again,
    Err.NOMEM: NoMemory,
    Err.PERM: Permission,
    Err.DISCONNECTED: Disconnected,
    Err.DEVICE: DeviceError,
    Err.TIMEDOUT: TimedOut,
    Err.PROTO: ProtocolError,
    Err.CANCELED: Canceled,
    Err.EXIST: Exists,
    Err.NOENT: NoEntry,
    Err.RESTARTED: Restarted,
}


def _check(rc, what):
    if rc < 0:
        raise VyreError.of(rc, what)
    return rc


OpInfo = collections.namedtuple("OpInfo", "name op module flags")
OpInfo.__doc__ = "struct vyre_op_info: module is '' for a built-in op; flags are OP_INFO_*."

WorkItem = collections.namedtuple("WorkItem", "op input output param", defaults=(0, 0, 0))
WorkItem.__doc__ = "struct vyre_work_item; input, output and param may be Buffers or handles."


class Cqe(collections.namedtuple("Cqe", "user_data status flags result complete_ns")):
    """struct vyre_cqe: status is 0 or a negative VYRE_E_* code."""

    __slots__ = ()

    @property
    def ok(self):
        return self.status == 0

    @property
    def deduped(self):
        return bool(self.flags & CQE_DEDUPED)

    def error(self):
        """The item's failure as a VyreError (not raised), or None."""
        return VyreError.of(self.status, f"item {self.user_data}") if self.status else None


def _handle(x):
    return x.handle if isinstance(x, Buffer) else int(x)


ItemRange = collections.namedtuple("ItemRange", "in_offset in_length out_offset out_length")
ItemRange.__doc__ = """An item's byte ranges (docs/design.md 6.6): offset and length of its input and output."""


def _range_c(r, into=None):
    r = ItemRange(*r) if not isinstance(r, ItemRange) else r
    c = into if into is not None else ItemRangeC()
    c.in_offset, c.in_length = int(r.in_offset), int(r.in_length)
    c.out_offset, c.out_length = int(r.out_offset), int(r.out_length)
    return c


def _item_c(it, into=None):
    op, inp, out, param = WorkItem(*it) if not isinstance(it, WorkItem) else it
    c = into if into is not None else WorkItemC()
    c.op_handle, c.input_handle = int(op), _handle(inp)
    c.output_handle, c.param = _handle(out), _handle(param)
    return c


class Buffer:
    """A buffer of the domain: its handle, size, and (heap buffers) its mapped bytes.

    view is a writable memoryview of the bytes in the shared heap, words the
    same as little-endian u32 ("I"), array() a numpy view of them: none of
    them copies. They are valid until the buffer is freed or the connection
    closed; read what an item wrote only after its Cqe.
    """

    def __init__(self, client, handle, nbytes, flags):
        self._client = client
        self.handle = handle
        self.nbytes = nbytes
        self.flags = flags  # BUF_*, or None for another client's unmapped buffer
        self._raw = None

    def __int__(self):
        return self.handle

    def __repr__(self):
        return f"<vyre.Buffer handle={self.handle:#x} bytes={self.nbytes} flags={self.flags}>"

    def _mapped(self):
        if self._raw is None:
            self._raw = self._client._map(self.handle, self.nbytes, self.flags)
        return self._raw

    @property
    def view(self):
        return memoryview(self._mapped()).cast("B")

    @property
    def words(self):
        return self.view.cast("I")

    def array(self, dtype="uint32"):
        """A numpy array over the bytes (no copy); needs numpy."""
        if _np is None:
            raise ImportError("vyre: numpy is not installed")
        return _np.frombuffer(self._mapped(), dtype=dtype)

    def free(self):
        self._client.free(self)


def _connect_flags(resumable, reconnect, rerun):
    return (
        (CONNECT_RESUMABLE if resumable else 0)
        | (CONNECT_RECONNECT if reconnect else 0)
        | (CONNECT_RERUN if rerun else 0)
    )


class Client:
    """One connection to vyred (vyre_connect); a context manager that closes it.

    resumable keeps what a new vyred needs to take the connection over after
    vyred died (reconnect() then works; buffers, their bytes, handles and
    views survive); reconnect implies it and makes wait, reap and the buffer
    calls reconnect by themselves; rerun runs the items the dead vyred had
    accepted again instead of completing them with E_RESTARTED
    (docs/design.md section 3). priority is the connection's class, 0 to
    PRIORITY_MAX; vyred refuses one above what its --priority-max and
    --priority rules allow this uid and its groups with vyre.Permission.
    """

    def __init__(
        self,
        socket=None,
        domain=None,
        sq_entries=0,
        cq_entries=0,
        heap_bytes=0,
        resumable=False,
        reconnect=False,
        rerun=False,
        priority=0,
    ):
        opts = ConnectOptsC(
            socket.encode() if isinstance(socket, str) else socket,
            domain.encode() if isinstance(domain, str) else domain,
            sq_entries,
            cq_entries,
            heap_bytes,
            _connect_flags(resumable, reconnect, rerun),
            priority,
        )
        handle = ctypes.c_void_p()
        _check(lib.vyre_connect(ctypes.byref(opts), ctypes.byref(handle)), "connect")
        self._c = handle
        self._cqes = (CqeC * 0)()
        self._buffers = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _live(self):
        if getattr(self, "_c", None) is None:
            raise ValueError("vyre: the connection is closed")
        return self._c

    def close(self):
        """vyre_close: the buffers' views of this connection die with it."""
        c, self._c = getattr(self, "_c", None), None
        if c is None:
            return
        for b in self._buffers.values():
            b._raw = None
        self._buffers.clear()
        lib.vyre_close(c)

    def alloc(self, nbytes, flags=0):
        """vyre_buffer_alloc: a zero-filled Buffer of nbytes (a multiple of 4)."""
        h = ctypes.c_uint32()
        _check(lib.vyre_buffer_alloc(self._live(), nbytes, flags, ctypes.byref(h)), "alloc")
        b = Buffer(self, h.value, nbytes, flags)
        self._buffers[b.handle] = b
        return b

    def free(self, buf):
        """vyre_buffer_free: a Buffer or a handle; items naming it later fail INVAL."""
        h = _handle(buf)
        rc = lib.vyre_buffer_free(self._live(), h)
        b = self._buffers.pop(h, None)
        if b is not None:
            b._raw = None
        _check(rc, "free")

    def create(self, name, nbytes, flags=0):
        """vyre_buffer_create: a zero-filled Buffer of nbytes named name in the domain."""
        h = ctypes.c_uint32()
        _check(
            lib.vyre_buffer_create(self._live(), name.encode(), nbytes, flags, ctypes.byref(h)),
            "create",
        )
        b = Buffer(self, h.value, nbytes, flags)
        self._buffers[b.handle] = b
        return b

    def open(self, name):
        """vyre_buffer_open: the Buffer another client of the domain created as name."""
        h, n, f = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_uint32()
        _check(
            lib.vyre_buffer_open(
                self._live(), name.encode(), ctypes.byref(h), ctypes.byref(n), ctypes.byref(f)
            ),
            "open",
        )
        return self._buffers.get(h.value) or Buffer(self, h.value, n.value, f.value)

    def names(self):
        """vyre_buffer_list: [(name, handle, bytes, flags)] of the domain, in name order."""
        cap = 64
        while True:
            out = (BufferInfoC * cap)()
            n = _check(lib.vyre_buffer_list(self._live(), out, cap), "list")
            if n <= cap:
                return [(i.name.decode(), i.handle, i.bytes, i.flags) for i in out[:n]]
            cap = n

    def op_lookup(self, name):
        """vyre_op_lookup: this vyred's number of the op named name ("fill", a module's "crc32c")."""
        op = ctypes.c_uint32()
        _check(lib.vyre_op_lookup(self._live(), name.encode(), ctypes.byref(op)), "op_lookup")
        return op.value

    def ops(self):
        """vyre_op_list: [OpInfo(name, op, module, flags)], built-in ops first, then module ops."""
        cap = 64
        while True:
            out = (OpInfoC * cap)()
            n = _check(lib.vyre_op_list(self._live(), out, cap), "ops")
            if n <= cap:
                return [OpInfo(i.name.decode(), i.op, i.module.decode(), i.flags) for i in out[:n]]
            cap = n

    def free_name(self, name):
        """vyre_buffer_free_name: free the domain's buffer named name."""
        _check(lib.vyre_buffer_free_name(self._live(), name.encode()), "free_name")

    def buffer(self, handle):
        """A Buffer for a handle of the domain (another client's, say); Invalid if unknown."""
        if handle in self._buffers:
            return self._buffers[handle]
        n = ctypes.c_uint32()
        ptr = lib.vyre_buffer_ptr(self._live(), handle, ctypes.byref(n))
        if not ptr and n.value == 0:
            raise Invalid(Err.INVAL, f"buffer {handle:#x}")
        # not mapped: a device or a transient buffer, which vyred does not say
        return Buffer(self, handle, n.value, 0 if ptr else None)

    def _map(self, handle, nbytes, flags):
        if flags != 0:
            raise ValueError("vyre: device and transient buffers are not mappable")
        ptr = lib.vyre_buffer_ptr(self._live(), handle, None)
        if not ptr:
            raise Invalid(Err.INVAL, f"buffer {handle:#x}")
        return (ctypes.c_ubyte * nbytes).from_address(ptr)

    def submit(self, item, user_data=0, flags=0, stream=None):
        """vyre_submit one item (a WorkItem or an (op, input, output, param) tuple).

        stream: a DFA_REPORT* item continues the stream in that buffer
        (submit_stream). Again when the SQ is full: nothing was queued; reap and retry.
        """
        if stream is not None:
            return self.submit_stream(item, stream, None, user_data, flags)
        _check(lib.vyre_submit(self._live(), ctypes.byref(_item_c(item)), user_data, flags), "submit")

    def submit_stream(self, item, stream, rng=None, user_data=0, flags=0):
        """vyre_submit_stream: a DFA_REPORT or DFA_REPORT_COUNTED item that continues
        the stream whose state is in buffer @stream (16 bytes, zeroed: a new stream;
        docs/design.md 6.8), on byte ranges @rng (an ItemRange or tuple) if given.

        Items of one stream run in submission order; a match cut by an item
        boundary is reported once, by the item with its last byte, at stream
        offsets. Invalid for another op; Again when the SQ is full.
        """
        it = _item_c(item)
        r = ctypes.byref(_range_c(rng)) if rng is not None else None
        rc = lib.vyre_submit_stream(self._live(), ctypes.byref(it), _handle(stream), r, user_data, flags)
        _check(rc, "submit_stream")

    def submit_batch(self, items, user_data=None):
        """vyre_submit_batch: items with flags 0; returns how many were queued (a prefix)."""
        n = len(items)
        if user_data is not None and len(user_data) != n:
            raise ValueError("vyre: one user_data per item")
        arr = (WorkItemC * n)()
        for i, it in enumerate(items):
            _item_c(it, arr[i])
        ud = (ctypes.c_uint64 * n)(*user_data) if user_data is not None else None
        return _check(lib.vyre_submit_batch(self._live(), arr, ud, n), "submit_batch")

    def submit_range(self, item, rng, user_data=0, flags=0):
        """vyre_submit_range: one item on byte ranges of its buffers.

        rng is an ItemRange or an (in_offset, in_length, out_offset, out_length)
        tuple; vyred completes a bad range with E_INVAL. Again when the SQ is full.
        """
        it, r = _item_c(item), _range_c(rng)
        _check(lib.vyre_submit_range(self._live(), ctypes.byref(it), ctypes.byref(r), user_data, flags), "submit_range")

    def submit_batch_range(self, items, ranges, user_data=None):
        """vyre_submit_batch_range: ranges[i] for items[i]; returns how many were queued (a prefix)."""
        n = len(items)
        if len(ranges) != n or (user_data is not None and len(user_data) != n):
            raise ValueError("vyre: one range and one user_data per item")
        arr, rarr = (WorkItemC * n)(), (ItemRangeC * n)()
        for i, (it, r) in enumerate(zip(items, ranges)):
            _item_c(it, arr[i])
            _range_c(r, rarr[i])
        ud = (ctypes.c_uint64 * n)(*user_data) if user_data is not None else None
        return _check(lib.vyre_submit_batch_range(self._live(), arr, rarr, ud, n), "submit_batch_range")

    def _cqe_room(self, max_cqes):
        if len(self._cqes) < max_cqes:
            self._cqes = (CqeC * max_cqes)()
        return self._cqes

    @staticmethod
    def _cqe_list(arr, n):
        return [Cqe(e.user_data, e.status, e.flags, e.result, e.complete_ns) for e in arr[:n]]

    def reap(self, max_cqes=64):
        """vyre_reap: the ready Cqes (maybe none) without blocking."""
        arr = self._cqe_room(max_cqes)
        return self._cqe_list(arr, _check(lib.vyre_reap(self._live(), arr, max_cqes), "reap"))

    def wait(self, max_cqes=64, timeout=None):
        """vyre_wait: at least one Cqe; timeout in seconds (None: forever); TimedOut."""
        ns = -1 if timeout is None else max(0, int(timeout * 1e9))
        arr = self._cqe_room(max_cqes)
        return self._cqe_list(arr, _check(lib.vyre_wait(self._live(), arr, max_cqes, ns), "wait"))

    def event_fd(self):
        """vyre_event_fd: readable when Cqes are ready and when vyred is gone.

        Read its 8 bytes (os.read(fd, 8)) to clear it, then reap. The fd
        belongs to the connection: do not close it.
        """
        return _check(lib.vyre_event_fd(self._live()), "event_fd")

    def reconnect(self, timeout=None):
        """vyre_reconnect: resume a resumable connection with the next vyred on its socket.

        Tries every 10 ms until timeout seconds pass (None: forever, 0: once);
        returns how many items the dead vyred had accepted without completing
        them (each completes with E_RESTARTED, or runs again with rerun), 0 on
        a live connection. Buffers and their views stay valid. Invalid when
        the connection is not resumable, TimedOut when no vyred took it.
        """
        ns = -1 if timeout is None else max(0, int(timeout * 1e9))
        return _check(lib.vyre_reconnect(self._live(), ns), "reconnect")


def connect(socket=None, domain=None, **opts):
    """vyre_connect: socket None means $VYRE_SOCKET, else DEFAULT_SOCKET; domain None a private one.

    opts: sq_entries, cq_entries, heap_bytes, resumable, reconnect, rerun, priority (see Client).
    """
    return Client(socket, domain, **opts)


from ._dfa import DFA_CASELESS, DFA_DEFAULT_MAX_STATES, DFA_PATTERN_MAX, dfa_compile  # noqa: E402,F401
from ._report import (  # noqa: E402,F401
    REPORT_HEADER_BYTES,
    REPORT_OVERFLOW,
    REPORT_RECORD_BYTES,
    STREAM_STATE_BYTES,
    Record,
    Report,
    parse_report,
    report_bytes,
)
