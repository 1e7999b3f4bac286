# SPDX-License-Identifier: MIT
"""The Python binding (python/vyre) against a live vyred, checked against the oracle.

usage: test_python.py SRCDIR BUILDDIR   (run by tests/test_python.sh)

 - the binding's constants and structure layouts equal include/vyre's;
 - random items over several buffers (heap and device, fences, nodedupe,
   chains, batches, a full SQ, invalid handles) through a Python producer:
   every CQE's status and result and every buffer's final words equal
   `vyre-submit --local` (the sequential oracle) running the same items;
 - a chain with a transient buffer, and a chain cut by a failed item;
 - errors raise: a missing socket, bad flags, bad sizes, a double free, a
   timed-out wait; a bad handle gives a VYRE_E_INVAL CQE;
 - the memoryview and the numpy view are the same bytes;
 - the event fd: readable for a CQE, and within 2 s of vyred's SIGKILL, after
   which calls raise Disconnected;
 - restart without loss: resumable connections survive a SIGKILLed vyred
   (reconnect() and reconnect=True), their buffers keep bytes and views, a
   connection that is not resumable cannot reconnect;
 - vyre.dfa_compile: a mixed set's table (ids, caseless, NUL bytes) walked
   in Python lists at every offset what a brute-force search finds, and
   DFA_SCAN through vyred counts the positions where that list is not
   empty; NOMEM says what the set needs, bad patterns raise Invalid;
 - DFA_REPORT: texts cut into pieces on one stream (submit_stream with byte
   ranges, submit(stream=)) give, through parse_report, a brute-force
   search's records, at every capacity (overflow keeps the first ones);
 - python/examples/producer.py runs, and python/examples/scan_report.py
   prints a brute-force search's records for a file streamed in pieces.
"""
import array
import ctypes
import importlib.util
import os
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

SRC, BUILD = sys.argv[1], sys.argv[2]
os.environ.setdefault("VYRE_LIB", os.path.join(BUILD, "libvyre.so"))
sys.path.insert(0, os.path.join(SRC, "python"))
import vyre  # noqa: E402
from vyre._lib import CqeC, WorkItemC  # noqa: E402

SEED = int(os.environ.get("VYRE_TEST_SEED", time.time_ns() % 1000000))
ITEMS = 400 * int(os.environ.get("VYRE_TEST_SCALE", "1"))
BAD = 0xFFFFFFFF  # a handle vyred never issued (generation 4095)
DEATH_S = 2.0


def fail(msg):
    print(f"FAIL (seed {SEED}): {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def headers_match():
    text = open(os.path.join(SRC, "include/vyre/abi.h")).read()
    text += open(os.path.join(SRC, "include/vyre/vyre.h")).read()
    want = {f"OP_{n}": int(v) for n, v in re.findall(r"VYRE_OP_(\w+) = (\d+)", text)}
    want.update({f"E_{n}": int(v) for n, v in re.findall(r"VYRE_E_(\w+) = (-\d+)", text)})
    for n, v in re.findall(r"#define VYRE_((?:SQE|CQE|BUF|CONNECT|OP_INFO)_\w+)\s+\(1u << (\d+)\)", text):
        want[n] = 1 << int(v)
    check(len(want) > 25, "abi.h/vyre.h: constants not found")
    m = re.search(r"#define VYRE_PRIORITY_MAX\s+(\d+)u", text)
    check(m is not None and vyre.PRIORITY_MAX == int(m.group(1)), "vyre.PRIORITY_MAX")
    for name, v in want.items():
        check(getattr(vyre, name, None) == v, f"vyre.{name} is {getattr(vyre, name, None)}, C says {v}")
    structs = {"vyre_work_item": WorkItemC, "vyre_cqe": CqeC}
    for s, n in re.findall(r"sizeof\(struct (\w+)\) == (\d+)", text):
        if s in structs:
            check(ctypes.sizeof(structs[s]) == int(n), f"sizeof {s}")
    for s, f, n in re.findall(r"offsetof\(struct (\w+), (\w+)\) == (\d+)", text):
        if s in structs:
            check(getattr(structs[s], f).offset == int(n), f"offsetof {s}.{f}")
    print(f"ok: {len(want)} constants and the struct layouts equal the C headers")


class Daemon:
    def __init__(self, tmp, extra=()):
        """vyred on tmp/vyre.sock: a second one on the same tmp takes over a killed one's socket."""
        self.sock = os.path.join(tmp, "vyre.sock")
        self.log = os.path.join(tmp, "vyred.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [os.path.join(BUILD, "vyred"), "--socket", self.sock, "--backend", "cpu", *extra],
                stderr=log,
            )
        end = time.monotonic() + 60
        while "vyred: ready" not in open(self.log).read():
            if self.proc.poll() is not None or time.monotonic() > end:
                fail("vyred did not start:\n" + open(self.log).read())
            time.sleep(0.02)

    def check_log(self):
        """A sanitizer build's vyred reports into its log; none may be there."""
        log = open(self.log).read()
        check("Sanitizer" not in log, "vyred's log has a sanitizer report:\n" + log[-3000:])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


def oracle(program, tmp):
    """Runs a vyre-submit program on the sequential oracle: ({id: (status, result)}, {buf: words})."""
    path = os.path.join(tmp, "prog.vs")
    with open(path, "w") as f:
        f.write(program)
    r = subprocess.run(
        [os.path.join(BUILD, "vyre-submit"), "--local", path], capture_output=True, text=True
    )
    check(r.returncode in (0, 1), f"vyre-submit --local exit {r.returncode}: {r.stderr}")
    cqes, bufs = {}, {}
    for line in r.stdout.splitlines():
        m = re.match(r"cqe user_data=(\d+) .*status=(\S+) flags=\S+ result=(\d+)", line)
        if m:
            st = 0 if m[2] == "ok" else int(getattr(vyre, m[2]))
            cqes[int(m[1])] = (st, int(m[3]))
        m = re.match(r"buffer (\S+) words ?(.*)", line)
        if m:
            bufs[m[1]] = [int(w) for w in m[2].split()]
    return cqes, bufs


def dfa_table(tmp):
    _, bufs = oracle('dfa t "ab" b "cab"\nprint t\n', tmp)
    return bufs["t"]


def random_bytes_words(rng, n):
    raw = bytes(rng.choice(b"abcx") for _ in range(4 * n))
    return list(memoryview(raw).cast("I"))


def random_items(rng, heap, dev, table):
    """[(op, in, out, param, flags, sure)]: names or BAD; sure: certainly not failing."""
    everything = heap + dev
    items = []
    while len(items) < ITEMS:
        op = rng.choice(list(vyre.Op)[:9])
        a, b = rng.choice(everything), rng.choice(everything)
        param = rng.choice([0, 1, 3, 0x9E3779B9, rng.getrandbits(32)])
        if op == vyre.OP_NOP:
            it = [op, 0, 0, 0]
        elif op == vyre.OP_FILL:
            it = [op, 0, b, param]
        elif op == vyre.OP_DFA_SCAN:
            it = [op, a, b, table]
        else:
            it = [op, a, b, param]
        sure = rng.random() > 0.03
        if not sure:
            it[rng.choice([1, 2])] = BAD
        flags = (vyre.SQE_FENCE if rng.random() < 0.1 else 0) | (
            vyre.SQE_NODEDUPE if rng.random() < 0.1 else 0
        )
        items.append((*it, flags, sure))
    return items


def chain_flags(rng, items):
    """Marks short runs of sure items as chains (a chain that runs whole equals no chain)."""
    out, i = [], 0
    while i < len(items):
        run = rng.randint(2, 4)
        if rng.random() < 0.15 and all(x[5] for x in items[i : i + run]) and i + run <= len(items):
            for k in range(run):
                op, a, b, p, fl, sure = items[i + k]
                out.append((op, a, b, p, fl | (vyre.SQE_CHAIN if k < run - 1 else 0), sure))
            i += run
        else:
            out.append(items[i])
            i += 1
    return out


def program_text(init, dev, items, heap):
    lines = [f"buffer {n} {4 * len(w)} words {' '.join(map(str, w))}" for n, w in init.items()]
    lines += [f"buffer {n} {size} device" for n, size in dev.items()]
    for uid, (op, a, b, p, fl, _) in enumerate(items, 1):
        ref = lambda x: "0" if x == 0 else (f"@{BAD}" if x == BAD else x)  # noqa: E731
        words = [f"item {op.name}", ref(a), ref(b), ref(p) if isinstance(p, str) else str(p)]
        words += ["fence"] if fl & vyre.SQE_FENCE else []
        words += ["nodedupe"] if fl & vyre.SQE_NODEDUPE else []
        lines.append(" ".join(words) + f" id={uid}")
    lines += [f"print {n}" for n in heap]
    return "\n".join(lines) + "\n"


def run_python(c, bufs, items):
    """Submits @items (batches where flags allow, a full SQ retried) and collects the CQEs."""
    got, i, stats = {}, 0, {"batched": 0, "full": 0}

    def handle(x):
        return bufs[x] if isinstance(x, str) else x

    def collect(cqes):
        for cqe in cqes:
            check(cqe.user_data not in got, f"two CQEs for item {cqe.user_data}")
            got[cqe.user_data] = (cqe.status, cqe.result)

    while i < len(items):
        op, a, b, p, fl, _ = items[i]
        queued = 0
        if fl == 0 and i % 3 == 0:
            run = items[i : i + 8]
            n = next((k for k, x in enumerate(run) if x[4]), len(run))
            batch = [vyre.WorkItem(x[0], handle(x[1]), handle(x[2]), handle(x[3])) for x in run[:n]]
            queued = c.submit_batch(batch, list(range(i + 1, i + 1 + n)))
            stats["batched"] += queued
        else:
            try:
                c.submit(vyre.WorkItem(op, handle(a), handle(b), handle(p)), user_data=i + 1, flags=fl)
                queued = 1
            except vyre.Again:
                pass
        i += queued
        # a full SQ: sleep until vyred completes something rather than spin
        stats["full"] += queued == 0
        collect(c.reap(256) if queued else c.wait(256, timeout=30))
    end = time.monotonic() + 120
    while len(got) < len(items):
        check(time.monotonic() < end, f"{len(got)} of {len(items)} CQEs after 120 s")
        for cqe in c.wait(256, timeout=10):
            got[cqe.user_data] = (cqe.status, cqe.result)
    return got, stats


def random_vs_oracle(sock, tmp):
    rng = random.Random(SEED)
    table = dfa_table(tmp)
    init = {f"h{i}": random_bytes_words(rng, rng.randint(1, 48)) for i in range(5)}
    init["tab"] = table
    dev = {f"d{i}": 4 * rng.randint(1, 32) for i in range(2)}
    items = random_items(rng, [f"h{i}" for i in range(5)], list(dev), "tab")
    # device buffers come back through COPYs into heap buffers of their size
    for d, size in dev.items():
        init[f"back_{d}"] = [0] * (size // 4)
        items.append((vyre.OP_COPY, d, f"back_{d}", 0, vyre.SQE_FENCE, True))
    items = chain_flags(rng, items)
    want_cqes, want_bufs = oracle(program_text(init, dev, items, list(init)), tmp)
    check(len(want_cqes) == len(items), f"the oracle gave {len(want_cqes)} CQEs for {len(items)} items")

    with vyre.connect(sock, sq_entries=64, cq_entries=512, heap_bytes=1 << 20) as c:
        bufs = {}
        for n, words in init.items():
            b = c.alloc(4 * len(words))
            if vyre._np is not None:
                b.array()[:] = words
            else:
                b.words[:] = memoryview(bytearray(b"".join(w.to_bytes(4, "little") for w in words))).cast("I")
            bufs[n] = b
        for n, size in dev.items():
            bufs[n] = c.alloc(size, vyre.BUF_DEVICE)
        got, stats = run_python(c, bufs, items)
        for uid in range(1, len(items) + 1):
            check(got[uid] == want_cqes[uid], f"item {uid} {items[uid - 1][:4]}: {got[uid]}, oracle {want_cqes[uid]}")
        for n in init:
            check(list(bufs[n].words) == want_bufs[n], f"buffer {n}: {list(bufs[n].words)}, oracle {want_bufs[n]}")
    bad = sum(1 for st, _ in want_cqes.values() if st)
    chained = sum(1 for x in items if x[4] & vyre.SQE_CHAIN)
    print(
        f"ok: {len(items)} random items ({bad} failing, {chained} chain links, {stats['batched']} "
        f"in batches, {stats['full']} full SQs) over {len(init) + len(dev)} buffers equal the oracle"
    )


def ranges(sock, tmp):
    """Items on byte ranges (submit_range, submit_batch_range) equal vyre-submit --local's in=/out=."""
    rng = random.Random(SEED + 1)
    init = {"a": random_bytes_words(rng, 32), "b": [0] * 16}
    one = [
        ((vyre.OP_COPY, "a", "b"), (16, 32, 0, 32)),
        ((vyre.OP_SUM, "a", "b"), (0, 64, 60, 4)),
        ((vyre.OP_ADD, "b", "b", 3), (0, 16, 0, 16)),  # in place
        ((vyre.OP_XOR, "a", "a", 0xFF), (0, 16, 64, 16)),  # apart in one buffer
        ((vyre.OP_COPY, "a", "b"), (2, 4, 0, 4)),  # unaligned: E_INVAL
    ]
    batch = [((vyre.OP_MAX, "a", "b"), (8 * k, 8, 32 + 4 * k, 4)) for k in range(4)]
    items = one + batch
    lines = [f"buffer {n} {4 * len(w)} words " + " ".join(map(str, w)) for n, w in init.items()]
    for uid, ((op, a, b, *p), (io, il, oo, ol)) in enumerate(items, 1):
        param = p[0] if p else 0
        lines.append(f"item {op.name} {a} {b} {param} in={io}+{il} out={oo}+{ol} id={uid}")
    lines += [f"print {n}" for n in init]
    want_cqes, want_bufs = oracle("\n".join(lines) + "\n", tmp)
    with vyre.connect(sock) as c:
        bufs = {n: c.alloc(4 * len(w)) for n, w in init.items()}
        for n, w in init.items():
            bufs[n].words[:] = memoryview(bytearray(b"".join(x.to_bytes(4, "little") for x in w))).cast("I")

        def item(x):
            op, a, b, *p = x
            return vyre.WorkItem(op, bufs[a], bufs[b], p[0] if p else 0)

        for uid, (x, r) in enumerate(one, 1):
            c.submit_range(item(x), vyre.ItemRange(*r), uid)
        got = {}
        while len(got) < len(one):
            got.update({e.user_data: e for e in c.wait(16, timeout=30)})
        uids = list(range(len(one) + 1, len(items) + 1))
        queued = c.submit_batch_range([item(x) for x, _ in batch], [r for _, r in batch], uids)
        check(queued == len(batch), f"submit_batch_range queued {queued}")
        while len(got) < len(items):
            got.update({e.user_data: e for e in c.wait(16, timeout=30)})
        for uid in range(1, len(items) + 1):
            have = (got[uid].status, got[uid].result)
            check(have == want_cqes[uid], f"ranged item {uid}: {have}, oracle {want_cqes[uid]}")
        for n in init:
            check(list(bufs[n].words) == want_bufs[n], f"buffer {n}: {list(bufs[n].words)}, oracle {want_bufs[n]}")
        try:
            c.submit((vyre.OP_NOP, 0, 0), 1, vyre.SQE_RANGE)
            fail("submit took SQE_RANGE without a range")
        except vyre.Invalid:
            pass
    print(f"ok: {len(items)} items on byte ranges (one bad) equal the oracle")


def chains(sock):
    with vyre.connect(sock, domain="py-chains") as c:
        a, t, b = c.alloc(16), c.alloc(16, vyre.BUF_TRANSIENT), c.alloc(16)
        cc, s = c.alloc(16), c.alloc(4)
        a.words[:] = memoryview(bytearray(range(16))).cast("I")
        c.submit((vyre.OP_COPY, a, t), 1, vyre.SQE_CHAIN)
        c.submit((vyre.OP_ADD, t, b, 5), 2)
        c.submit((vyre.OP_COPY, BAD, cc), 3, vyre.SQE_CHAIN)
        c.submit((vyre.OP_ADD, a, cc, 1), 4, vyre.SQE_CHAIN)
        c.submit((vyre.OP_SUM, a, s), 5, vyre.SQE_FENCE)
        got = {}
        while len(got) < 5:
            got.update({e.user_data: e for e in c.wait(8, timeout=30)})
        check(got[1].ok and got[2].ok, "the transient chain failed")
        check([w - 5 for w in b.words] == list(a.words), "the transient chain's ADD")
        st = [got[k].status for k in (3, 4, 5)]
        check(st == [vyre.E_INVAL, vyre.E_CANCELED, vyre.E_CANCELED], f"a failed chain: {st}")
        check(isinstance(got[4].error(), vyre.Canceled), "Cqe.error() of a cancelled item")
        check(not any(cc.words) and s.words[0] == 0, "a cancelled item wrote")
        try:
            t.view
            fail("a transient buffer was mapped")
        except ValueError:
            pass
    print("ok: a transient chain runs whole, a failed chain cancels the rest")


def errors(sock, tmp):
    try:
        vyre.connect(os.path.join(tmp, "missing.sock"))
        fail("connect to a missing socket did not raise")
    except vyre.Disconnected as e:
        check(e.code == vyre.E_DISCONNECTED and e.text == vyre.strerror(-5), f"{e!r}")
    try:
        vyre.connect(sock, priority=1)
        fail("class 1 was allowed by a vyred without --priority-max")
    except vyre.Permission as e:
        check(e.code == vyre.E_PERM, f"{e!r}")
    with vyre.connect(sock, priority=0) as c:
        pass
    with vyre.connect(sock) as c:
        for call, exc in [
            (lambda: c.submit((vyre.OP_NOP, 0, 0, 0), 1, 1 << 7), vyre.Invalid),
            (lambda: c.alloc(6), vyre.Invalid),
            (lambda: c.alloc(4, vyre.BUF_DEVICE | vyre.BUF_TRANSIENT), vyre.Invalid),
            (lambda: c.wait(timeout=0.05), vyre.TimedOut),
        ]:
            try:
                call()
                fail(f"no {exc.__name__}")
            except exc as e:
                check(isinstance(e, vyre.VyreError) and e.code < 0, repr(e))
        b = c.alloc(8)
        c.free(b)
        try:
            c.free(b.handle)
            fail("a double free did not raise")
        except vyre.VyreError as e:
            check(e.code == vyre.E_INVAL, f"double free: {e!r}")
        c.submit((vyre.OP_SUM, BAD, BAD), 9)
        (cqe,) = c.wait(timeout=30)
        check(cqe.user_data == 9 and cqe.status == vyre.E_INVAL and cqe.result == 0, f"{cqe}")
        check(isinstance(cqe.error(), vyre.Invalid), "Cqe.error()")
    try:
        c.reap()
        fail("a closed connection was used")
    except ValueError:
        pass
    print("ok: errors raise VyreError subclasses with the C code; a bad handle is an INVAL CQE")


def dfa_reference(pats, text, end):
    """{id: longest len} of the patterns (id, bytes, flags) ending at @end."""
    fold = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))
    got = {}
    for pid, p, flags in pats:
        seg = text[max(0, end - len(p)) : end]
        a, b = (seg.translate(fold), p.translate(fold)) if flags & vyre.DFA_CASELESS else (seg, p)
        if len(p) <= end and a == b:
            got[pid] = max(got.get(pid, 0), len(p))
    return sorted(got.items())


def dfa_walk(table, text):
    """Per end offset the table's report list, and the accepting positions (design.md 6, 6.8)."""
    w = memoryview(table).cast("I")
    n, state = w[0], w[1]
    nxt = 2 + (n + 31) // 32
    rep = nxt + 256 * n
    check(w[rep] == 0x50455256 and len(w) == rep + 2 + n + 1 + 2 * w[rep + 1], "report section layout")
    first, ent = rep + 2, rep + 2 + n + 1
    lists, hits = [], 0
    for byte in text:
        state = w[nxt + 256 * state + byte]
        lo, hi = w[first + state], w[first + state + 1]
        lists.append([(w[ent + 2 * k], w[ent + 2 * k + 1]) for k in range(lo, hi)])
        accept = (w[2 + state // 32] >> (state % 32)) & 1
        check(accept == (hi > lo), f"state {state}: accept bit {accept}, {hi - lo} entries")
        hits += accept
    return lists, hits


def dfa_compile(sock):
    m = re.search(r"VYRE_DFA_CASELESS\s+\(1u << (\d+)\)", open(os.path.join(SRC, "include/vyre/dfa.h")).read())
    check(m and vyre.DFA_CASELESS == 1 << int(m[1]), "vyre.DFA_CASELESS differs from vyre/dfa.h")
    given = ["he", (7, b"she"), (8, b"HiS", vyre.DFA_CASELESS), (9, b"\0\xff"), (7, "hers"), b"s"]
    pats = [(0, b"he", 0), (7, b"she", 0), (8, b"HiS", 1), (9, b"\0\xff", 0), (7, b"hers", 0), (5, b"s", 0)]
    table = vyre.dfa_compile(given)
    rng = random.Random(SEED)
    text = b"ushers his HIS hIs\0\xff\0\xffshe" + bytes(rng.choice(b"hersiHIS\0\xff") for _ in range(200))
    text += b"\0" * (-len(text) % 4)
    lists, hits = dfa_walk(table, text)
    for end in range(1, len(text) + 1):
        want = dfa_reference(pats, text, end)
        check(lists[end - 1] == want, f"offset {end}: table lists {lists[end - 1]}, brute force {want}")
    with vyre.connect(sock) as c:
        t, i, o = c.alloc(len(table)), c.alloc(len(text)), c.alloc(4)
        t.view[:] = table
        i.view[:] = text
        c.submit((vyre.OP_DFA_SCAN, i, o, t), user_data=1)
        (cqe,) = c.wait(timeout=5)
        check(cqe.ok and cqe.result == hits and o.words[0] == hits, f"DFA_SCAN {cqe}, want {hits}")
    try:
        vyre.dfa_compile([b"abcdef"], max_states=6)
        fail("7 states under a limit of 6")
    except vyre.NoMemory as e:
        check(e.states == 7 and e.table_bytes >= 7 * 1024 and "7 states" in str(e), f"NOMEM: {e}")
    for bad in ([b""], [(1, b"a", 2)], [(-1, b"a")], [], [(1 << 32, b"a")]):
        try:
            vyre.dfa_compile(bad)
            fail(f"dfa_compile({bad}) compiled")
        except vyre.Invalid:
            pass
    print(f"ok: dfa_compile: {len(table)} table bytes list what brute force finds; DFA_SCAN counts {hits}")


def brute_records(pats, text):
    """The records (id, start, end) DFA_REPORT must give for @text (design.md 6.8)."""
    return [(pid, end - n, end) for end in range(1, len(text) + 1) for pid, n in dfa_reference(pats, text, end)]


def reports(sock):
    """A text cut into pieces on one stream (submit_stream with ranges, submit(stream=)) gives
    brute force's records; parse_report; a capacity below the total keeps the first ones."""
    rng = random.Random(SEED + 26)
    for rnd in range(16):
        alpha = b"abAB\0\xff"[: rng.randint(2, 6)]
        pats = [
            (rng.randrange(6), bytes(rng.choice(alpha) for _ in range(rng.randint(1, 4))), rng.randrange(2))
            for _ in range(rng.randint(1, 10))
        ]
        table = vyre.dfa_compile(pats)
        text = bytes(rng.choice(alpha) for _ in range(rng.randint(0, 600)))
        want = brute_records(pats, text)
        cuts = sorted(rng.randrange(len(text) + 1) for _ in range(rng.randint(0, 8))) + [len(text)]
        spans = list(zip([0] + cuts, cuts))
        ranged, cap = rnd % 2 == 1, rng.choice((0, 1, 3, 1000))
        ob = vyre.report_bytes(cap)
        with vyre.connect(sock, heap_bytes=1 << 22) as c:
            t, st = c.alloc(len(table)), c.alloc(vyre.STREAM_STATE_BYTES)
            t.view[:] = table
            st.view[:] = bytes(vyre.STREAM_STATE_BYTES)
            sizes = [4 + (b - a + 3) // 4 * 4 for a, b in spans]
            big_in, big_out = c.alloc(sum(sizes)), c.alloc(len(spans) * ob)
            at, outs = 0, []
            for k, ((a, b), nb) in enumerate(zip(spans, sizes)):
                big_in.view[at : at + 4] = (b - a).to_bytes(4, "little")
                big_in.view[at + 4 : at + 4 + b - a] = text[a:b]
                if ranged:  # slices of one input and one output buffer
                    r = vyre.ItemRange(at, nb, k * ob, ob)
                    c.submit_stream((vyre.OP_DFA_REPORT_COUNTED, big_in, big_out, t), st, r, user_data=k)
                    outs.append(big_out.view[k * ob : (k + 1) * ob])
                else:  # a buffer each
                    i, o = c.alloc(nb), c.alloc(ob)
                    i.view[:] = big_in.view[at : at + nb]
                    c.submit((vyre.OP_DFA_REPORT_COUNTED, i, o, t), user_data=k, stream=st)
                    outs.append(o)
                at += nb
            got = {}
            while len(got) < len(spans):
                got.update((q.user_data, q) for q in c.wait(timeout=10))
            done = 0
            for k, (a, b) in enumerate(spans):
                part = [w for w in want if a < w[2] <= b]
                rep = vyre.parse_report(outs[k])
                check(got[k].ok and got[k].result == len(part), f"round {rnd} piece {k}: {got[k]}, want {len(part)}")
                check(
                    rep.total == len(part) and rep.overflow == (len(part) > cap) and rep.records == part[:cap],
                    f"round {rnd} piece {k} [{a}, {b}) of {pats}: {rep}, want {part}",
                )
                done += len(part)
            check(done == len(want), f"round {rnd}: {done} records of {len(want)}")
            started, seen = int.from_bytes(st.view[:4], "little"), int.from_bytes(st.view[8:16], "little")
            check(started == 1 and seen == len(text), f"stream state: started {started}, {seen} bytes seen")
    try:
        vyre.parse_report(bytes(15))
        fail("parse_report of 15 bytes")
    except ValueError:
        pass
    try:
        vyre.parse_report((2).to_bytes(4, "little") + bytes(12) + bytes(24))
        fail("parse_report: 2 records kept in room for 1")
    except ValueError:
        pass
    with vyre.connect(sock) as c:
        a, b = c.alloc(16), c.alloc(16)
        try:
            c.submit_stream((vyre.OP_DFA_SCAN, a, b, a), b)
            fail("submit_stream of DFA_SCAN")
        except vyre.Invalid:
            pass
    print("ok: DFA_REPORT streams through submit_stream and submit(stream=) give brute force's records")


def scan_report_example(sock, tmp):
    """python/examples/scan_report.py streams a file in pieces and prints brute force's records."""
    path = os.path.join(SRC, "python/examples/scan_report.py")
    spec = importlib.util.spec_from_file_location("scan_report", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    pats = [(r[0], r[1], r[2] if len(r) > 2 else 0) for r in ex.RULES]
    rng = random.Random(SEED + 27)
    words = [p for _, p, _ in pats] + [b"PassWord=", b"TIMED OUT", b"err", b"\n", b" "]
    text = ex.LOG + b"".join(rng.choice(words) for _ in range(2000))
    example_path, log = path, os.path.join(tmp, "scan.log")
    with open(log, "wb") as f:
        f.write(text)
    want = brute_records(pats, text)
    for size in (7, 64, 65536):
        r = subprocess.run(
            [sys.executable, example_path, sock, log, str(size)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        got = [tuple(map(int, m)) for m in re.findall(r"^id=(\d+) start=(\d+) end=(\d+) ", r.stdout, re.M)]
        what = f"scan_report.py, pieces of {size}: {r.stderr}{got[:9]}, want {want[:9]}"
        check(r.returncode == 0 and got == want, what)
        check(f"{len(want)} matches in {len(text)} bytes" in r.stdout, f"scan_report.py: {r.stdout[-200:]}")
    print(f"ok: python/examples/scan_report.py prints brute force's {len(want)} records")


def views(sock):
    with vyre.connect(sock) as c:
        b = c.alloc(64)
        b.view[0:4] = b"\x01\x02\x03\x04"
        check(b.words[0] == 0x04030201, "memoryview words are little-endian u32")
        if vyre._np is None:
            print("ok: memoryview views (numpy not installed: its views untested)")
            return
        arr = b.array()
        arr[1] = 0xDEADBEEF
        check(b.words[1] == 0xDEADBEEF and arr.base is not None, "numpy view is not the heap")
        check(b.array("uint8")[0] == 1 and len(b.array("uint8")) == 64, "numpy uint8 view")
    print("ok: memoryview and numpy views share the heap bytes")


def named(sock):
    """Named buffers (issue 14): two clients of one domain meet by name."""
    with vyre.connect(sock, domain="py-named") as a, vyre.connect(sock, domain="py-named") as b:
        made = a.create("py.counter", 16)
        made.words[0] = 41
        seen = b.open("py.counter")
        check(seen.handle == made.handle and seen.nbytes == 16, f"open gave {seen}")
        check(seen.words[0] == 41, "the opener does not see the creator's bytes")
        b.submit((vyre.OP_ADD, seen.handle, seen.handle, 1))
        got = b.wait()
        check(got[0].ok and made.words[0] == 42, f"ADD through the opened handle: {got}")
        a.create("py.b", 4, vyre.BUF_DEVICE)
        names = b.names()
        check([n[0] for n in names] == ["py.b", "py.counter"], f"names: {names}")
        check(names[0][3] == vyre.BUF_DEVICE, f"the device buffer's flags: {names[0]}")
        try:
            a.create("py.counter", 4)
            fail("a second buffer of one name")
        except vyre.Exists:
            pass
        for bad in ("", ".x", "a/b", "x" * 49):
            try:
                a.create(bad, 4)
                fail(f"the bad name {bad!r} was taken")
            except vyre.Invalid:
                pass
        b.free_name("py.counter")
        try:
            a.open("py.counter")
            fail("open after free_name")
        except vyre.NoEntry:
            pass
    with vyre.connect(sock, domain="py-other") as other:
        try:
            other.open("py.b")
            fail("a name seen from another domain")
        except vyre.NoEntry:
            pass
    print("ok: named buffers: create, open, names, free_name; Exists, Invalid, NoEntry")


def crc32c(data, crc=0):
    """The independent CRC32C of the test: a bit at a time."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def op_modules(tmp):
    """op_lookup and ops (docs/design.md 6.7) on a vyred with the crc32c example module."""
    ops_dir = os.path.join(tmp, "ops.d")
    os.mkdir(ops_dir, 0o755)
    os.chmod(ops_dir, 0o755)
    files = {
        "checksums.opmod": b"module checksums\nabi 1\nhost libcrc.so\nptx crc.ptx\n"
        b"op crc32c\nin read\nout write\nparam word\npure yes\nresult the CRC32C\n",
        "libcrc.so": open(os.path.join(BUILD, "examples/ops/libvyre_op_crc32c.so"), "rb").read(),
        "crc.ptx": b"// device code\n",
    }
    for name, data in files.items():
        with open(os.path.join(ops_dir, name), "wb") as f:
            f.write(data)
        os.chmod(os.path.join(ops_dir, name), 0o644)
    home = os.path.join(tmp, "ops-vyred")
    os.mkdir(home)
    d = Daemon(home, ("--ops-dir", ops_dir))
    try:
        with vyre.connect(d.sock) as c:
            check(c.op_lookup("fill") == vyre.OP_FILL and c.op_lookup("dfa_scan") == vyre.OP_DFA_SCAN,
                  "built-in ops by name")
            crc_op = c.op_lookup("crc32c")
            check(crc_op & vyre.OP_MODULE_BIT, f"crc32c is {crc_op:#x}")
            ops = c.ops()
            check(len(ops) == len(vyre.Op) + 1, f"ops: {ops}")
            check([o.name for o in ops[: len(vyre.Op)]] == [o.name.lower() for o in vyre.Op], f"{ops}")
            want = vyre.OpInfo("crc32c", crc_op, "checksums",
                               vyre.OP_INFO_PURE | vyre.OP_INFO_IN | vyre.OP_INFO_OUT)
            check(ops[-1] == want, f"the module op: {ops[-1]}")
            for name, err in (("nosuch", vyre.NoEntry), ("Fill", vyre.Invalid), ("", vyre.Invalid),
                              ("x" * 32, vyre.Invalid)):
                try:
                    c.op_lookup(name)
                    fail(f"op_lookup({name!r}) found an op")
                except err:
                    pass
            rng = random.Random(SEED)
            want = {}
            for i in range(40):
                data = bytes(rng.getrandbits(8) for _ in range(4 * rng.randrange(0, 600)))
                seed = rng.getrandbits(32) if i % 3 == 0 else 0
                inp, out = c.alloc(len(data)), c.alloc(4)
                if data:
                    inp.view[:] = data
                c.submit((crc_op, inp, out, seed), user_data=i)
                want[i] = (crc32c(data, seed), out)
            c.submit((crc_op ^ 1, out, out, 0), user_data=999)  # a number this vyred lacks
            got = {}
            while len(got) < len(want) + 1:
                for q in c.wait(timeout=30):
                    got[q.user_data] = q
            check(got[999].status == vyre.E_INVAL, f"a foreign op number: {got[999]}")
            for i, (crc, out) in want.items():
                check(got[i].ok and got[i].result == crc and out.words[0] == crc,
                      f"crc32c item {i}: {got[i]}, want {crc:#x}")
        d.check_log()
    finally:
        d.kill()
    print("ok: op modules: op_lookup, ops, 40 crc32c items against an independent CRC32C, a foreign number")


def event_fd_and_death(d):
    c = vyre.connect(d.sock)
    fd = c.event_fd()
    s = c.alloc(4)
    c.submit((vyre.OP_FILL, 0, s, 3), 1)
    r, _, _ = select.select([fd], [], [], 30)
    check(r == [fd] and len(os.read(fd, 8)) == 8, "the event fd for a CQE")
    got = []
    while not got:
        got = c.reap()
    check(got[0].ok and s.words[0] == 3, f"{got}")
    d.kill()
    t0 = time.monotonic()
    r, _, _ = select.select([fd], [], [], DEATH_S)
    took = time.monotonic() - t0
    check(r == [fd], f"the event fd not readable {DEATH_S} s after vyred's SIGKILL")
    os.read(fd, 8)
    for call in (c.reap, lambda: c.submit((vyre.OP_NOP, 0, 0, 0)), lambda: c.alloc(4)):
        try:
            call()
            fail("a call after vyred died did not raise")
        except vyre.Disconnected:
            pass
    c.close()
    print(f"ok: the event fd woke for a CQE and {took * 1000:.0f} ms after vyred's SIGKILL")


def resume(tmp):
    """Restart without loss (issue 14): buffers and views survive a SIGKILLed vyred."""
    rdir = os.path.join(tmp, "resume")
    os.mkdir(rdir)
    d = Daemon(rdir)
    c = vyre.connect(d.sock, domain="py-resume", resumable=True)
    auto = vyre.connect(d.sock, domain="py-resume", reconnect=True)
    plain = vyre.connect(d.sock)
    try:
        check(c.reconnect(0) == 0, "reconnect on a live connection")
        a = c.create("py.kept", 16)
        a.words[:] = array.array("I", range(7, 11))
        out = c.alloc(16)
        c.submit((vyre.OP_ADD, a, out, 1), 1)
        check(c.wait(timeout=10)[0].ok and list(out.words) == [8, 9, 10, 11], "ADD before the kill")
        d.kill()
        try:
            c.wait(timeout=5)
            fail("wait after vyred died did not raise")
        except vyre.Disconnected:
            pass
        d = Daemon(rdir)
        check(c.reconnect(10) == 0, "reconnect: no item was in flight")
        check(list(a.words) == [7, 8, 9, 10], f"the buffer's bytes after the restart: {list(a.words)}")
        c.submit((vyre.OP_ADD, a, out, 2), 2)
        got = c.wait(timeout=10)
        check(got[0].ok and list(out.words) == [9, 10, 11, 12], f"ADD after the restart: {got}")
        seen = auto.open("py.kept")
        check(seen.handle == a.handle and seen.words[0] == 7, "reconnect=True: open by name after the restart")
        try:
            plain.reconnect(0.05)
            fail("a connection that is not resumable reconnected")
        except vyre.Invalid:
            pass
        check(vyre.VyreError.of(vyre.E_RESTARTED).__class__ is vyre.Restarted, "E_RESTARTED raises Restarted")
        d.check_log()
    finally:
        for x in (c, auto, plain):
            x.close()
        d.kill()
    print("ok: restart without loss: reconnect(), reconnect=True, buffers and views kept")


def example(sock):
    r = subprocess.run(
        [sys.executable, os.path.join(SRC, "python/examples/producer.py"), sock],
        capture_output=True,
        text=True,
        timeout=120,
    )
    check(r.returncode == 0 and "sum of plus: 2840" in r.stdout, f"producer.py: {r.stdout}{r.stderr}")
    print("ok: python/examples/producer.py")


def main():
    print(f"seed {SEED} (VYRE_TEST_SEED), numpy {'yes' if vyre._np is not None else 'no'}")
    headers_match()
    with tempfile.TemporaryDirectory(prefix="vyre-py.") as tmp:
        d = Daemon(tmp)
        try:
            random_vs_oracle(d.sock, tmp)
            ranges(d.sock, tmp)
            chains(d.sock)
            errors(d.sock, tmp)
            views(d.sock)
            dfa_compile(d.sock)
            named(d.sock)
            example(d.sock)
            reports(d.sock)
            scan_report_example(d.sock, tmp)
            event_fd_and_death(d)
            d.check_log()
            resume(tmp)
            op_modules(tmp)
        except SystemExit:
            print(open(d.log).read()[-3000:], file=sys.stderr)
            raise
        finally:
            d.kill()
    print("PASS")


main()
