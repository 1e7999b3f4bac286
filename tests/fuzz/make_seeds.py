#!/usr/bin/env python3
# Writes the seed corpora of the fuzz harnesses into tests/fuzz/corpus/<harness>/
# (seed-*.bin; inputs kept by fuzzing runs sit beside them under their hash
# names). The formats are described at the top of each tests/fuzz/fuzz_*.c.
# usage: tests/fuzz/make_seeds.py   (from anywhere; rewrites only seed-* files)
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def u32(*v):
    return struct.pack("<%dI" % len(v), *v)


# ---- DFA tables: u32 n_states, u32 start, u32 accept[ceil(n/32)], u32 next[n][256]


def dfa_table(n, start, accepting, step):
    accept = [0] * ((n + 31) // 32)
    for s in accepting:
        accept[s // 32] |= 1 << (s % 32)
    nxt = [step(s, c) for s in range(n) for c in range(256)]
    return u32(n, start) + u32(*accept) + u32(*nxt)


def dfa_input(mode, table, text):
    return bytes([mode]) + struct.pack("<H", len(table)) + table + text


def dfa_seeds():
    every = dfa_table(1, 0, [0], lambda s, c: 0)
    after_a = dfa_table(2, 0, [1], lambda s, c: 1 if c == ord("a") else 0)

    def ab(s, c):
        if c == ord("a"):
            return 1
        return 2 if (s == 1 and c == ord("b")) else 0

    ab_table = dfa_table(3, 0, [2], ab)
    text = b"abracadabra, a banana bread"
    text = text + b"\0" * (-len(text) % 4)
    write("dfa", "accept-all.bin", dfa_input(0, every, b"hello world!"))
    write("dfa", "after-a.bin", dfa_input(0, after_a, text))
    write("dfa", "ab.bin", dfa_input(0, ab_table, text))
    write("dfa", "empty-input.bin", dfa_input(0, ab_table, b""))
    write("dfa", "no-output.bin", dfa_input(1, after_a, text))
    write("dfa", "unaligned-input.bin", dfa_input(2, after_a, text + b"ab"))
    bad_start = bytearray(ab_table)
    bad_start[4:8] = u32(3)
    write("dfa", "bad-start.bin", dfa_input(0, bytes(bad_start), text))
    bad_next = bytearray(ab_table)
    bad_next[-4:] = u32(3)
    write("dfa", "bad-transition.bin", dfa_input(0, bytes(bad_next), text))
    write("dfa", "truncated.bin", dfa_input(0, ab_table[:-4], text))
    write("dfa", "zero-states.bin", dfa_input(0, u32(0, 0) + b"\0" * 16, text))
    write("dfa", "huge-states.bin", dfa_input(0, u32(0xFFFFFFFF, 0) + b"\0" * 16, text))
    # mode bit 2: pattern records (u8 len-1, u8 id, u8 flags, bytes) compiled into the table
    pats = dfa_patterns([(b"he", 1, 0), (b"she", 2, 0), (b"HIS", 3, 1), (b"hers", 1, 0), (b"\0\xff", 4, 0)])
    write("dfa", "compile-mixed.bin", dfa_input(4, pats, b"ushers his HIS hIs \0\xff\0\xffshe!" + b"\0" * 1))
    write("dfa", "compile-caseless.bin", dfa_input(4, dfa_patterns([(b"aB", 7, 1), (b"Ab", 7, 1)]), b"abABaBAb"))
    write("dfa", "compile-bad-flag.bin", dfa_input(4, dfa_patterns([(b"a", 1, 0x80)]), b"aaaa"))
    write("dfa", "compile-dup-ids.bin", dfa_input(4, dfa_patterns([(b"ab", 5, 0), (b"b", 5, 0), (b"ab", 6, 0)]), b"abab"))


def dfa_patterns(pats):
    return b"".join(bytes([len(p) - 1, pid, flags]) + p for p, pid, flags in pats)


# ---- control messages (ring/proto.h); the last byte picks how many fds travel

PROTO_MAGIC = 0x43525956
ABI = 1


def msg(mtype, body, msg_id=7, version=ABI):
    return u32(PROTO_MAGIC, version) + struct.pack("<HHI", mtype, 16 + len(body), msg_id) + body


def hello(domain=b"", sq=0, cq=0, heap=0, flags=0):
    return msg(1, u32(sq, cq) + struct.pack("<Q", heap) + u32(flags, len(domain)) +
               domain.ljust(64, b"\0"))


def proto_seeds():
    write("proto", "hello-private.bin", hello())
    write("proto", "hello-shared.bin", hello(b"shared", 64, 128, 1 << 20))
    write("proto", "hello-v2.bin", msg(1, hello()[16:], version=2))
    write("proto", "hello-reply.bin",
          msg(2, u32(0, 3, 4, 64, 128, 0) + struct.pack("<QQ", 8192, 1 << 20)))
    write("proto", "alloc.bin", msg(3, u32(4096, 0)))
    write("proto", "free.bin", msg(4, u32(0x100001, 0)))
    write("proto", "lookup.bin", msg(5, u32(0x100001, 0)))
    write("proto", "buffer-reply.bin", msg(6, u32(0, 0x100001) + struct.pack("<Q", 256) +
                                           u32(4096, 0)))
    write("proto", "error.bin", msg(7, u32(0xFFFFFFF8, 0)))
    write("proto", "bad-magic.bin", b"XXXX" + msg(3, u32(4, 0))[4:])
    write("proto", "truncated.bin", msg(3, u32(4, 0))[:20])
    write("proto", "bad-length.bin", msg(3, u32(4, 0))[:10] + b"\x40\x00" + msg(3, u32(4, 0))[12:])
    write("proto", "free-reserved.bin", msg(4, u32(1, 1)))
    write("proto", "oversized.bin", hello() + b"\0" * 200)
    write("proto", "domain-unprintable.bin", hello(b"a b"))
    write("proto", "create.bin", msg(8, u32(4096, 0, 5, 0) + b"job.1".ljust(48, b"\0")))
    write("proto", "open.bin", msg(9, u32(5, 0) + b"job.1".ljust(48, b"\0")))
    write("proto", "free-name.bin", msg(10, u32(48, 0) + b"z" * 48))
    write("proto", "list.bin", msg(11, u32(0, 0)))
    write("proto", "list-reply.bin", msg(12, u32(0, 0x100001, 64, 0, 2, 5) +
                                          b"job.1".ljust(48, b"\0")))
    write("proto", "list-reply-end.bin", msg(12, u32(0, 0, 0, 0, 0, 0) + b"\0" * 48))
    write("proto", "name-leading-dot.bin", msg(9, u32(4, 0) + b".job".ljust(48, b"\0")))
    write("proto", "name-padding.bin", msg(9, u32(3, 0) + b"job\0x".ljust(48, b"\0")))


# ---- SQE batches for fuzz_plan: u32 seed, u8 max batch, 3 reserved, 8-byte SQEs
# SQE: op, input, output, param selectors, flags, client, u16 immediate.
# Selectors (sel % 16): 0 none, 1..9 own buffers, 10..12 another domain's,
# 13 freed, 14 the DFA table, 15 made up. Own buffers by index: 0 B, 4, 16, 64,
# 256, 1024, 2060 (table).

BUF = {"none": 0, "b4": 2, "b16": 3, "b64": 4, "b256": 5, "b1k": 6, "table": 14,
       "foreign": 10, "freed": 13, "bogus": 15}


def sqe(op, inp="none", out="none", param=0, flags=0, client=0, imm=0):
    p = BUF[param] if isinstance(param, str) else param
    return bytes([op, BUF[inp], BUF[out], p, flags, client]) + struct.pack("<H", imm)


def plan_input(seed, max_batch, items):
    return u32(seed) + bytes([max_batch, 0, 0, 0]) + b"".join(items)


def plan_seeds():
    chain = [sqe(1, out="b64", imm=3), sqe(2, "b64", "b256"), sqe(3, "b256", "b256", imm=1),
             sqe(6, "b256", "b4"), sqe(7, "b64", "b16")]
    write("plan", "chain.bin", plan_input(1, 63, chain))
    dupes = [sqe(2, "b64", "b256"), sqe(2, "b64", "b256"), sqe(5, "b1k", "b64", imm=3),
             sqe(2, "b64", "b256"), sqe(2, "b64", "b256", flags=2), sqe(3, "b16", "b16", imm=1),
             sqe(3, "b16", "b16", imm=1)]
    write("plan", "dedupe-hazards.bin", plan_input(2, 63, dupes))
    dfa = [sqe(8, "b1k", "b4", "table"), sqe(8, "b1k", "b4", "table"),
           sqe(1, out="table", imm=9), sqe(8, "b1k", "b4", "table"), sqe(8, "b1k", "b16", "b64")]
    write("plan", "dfa-rewritten-table.bin", plan_input(3, 63, dfa))
    clients = []
    for c in range(4):
        clients += [sqe(1, out="b64", client=c, imm=c), sqe(4, "b64", "b256", client=c, imm=c),
                    sqe(6, "b256", "b4", client=c, flags=1)]
    write("plan", "four-clients-fences.bin", plan_input(4, 5, clients))
    invalid = [sqe(13), sqe(0, "b4"), sqe(2, "foreign", "b64"), sqe(2, "freed", "b64"),
               sqe(2, "bogus", "b64"), sqe(6, "b64", "none"), sqe(1, out="b4", flags=0x84),
               sqe(0)]
    write("plan", "invalid.bin", plan_input(5, 63, invalid))
    # decode -> map -> counted scan, in place and not (ops 9 to 12)
    byte_ops = [sqe(9, "b64", "b256"), sqe(11, "b256", "b256", "b1k"),
                sqe(12, "b256", "b4", "table"), sqe(10, "b16", "b16"), sqe(10, "b16", "b16"),
                sqe(11, "b64", "b1k", "b1k"), sqe(11, "b64", "b16", "b4")]
    write("plan", "byte-ops.bin", plan_input(7, 63, byte_ops))
    rng = random.Random(6)
    for k in range(4):
        items = [bytes(rng.randrange(256) for _ in range(8)) for _ in range(rng.randrange(8, 120))]
        write("plan", "random-%d.bin" % k, plan_input(rng.randrange(1 << 32), k * 20, items))


# ---- counted bytes for fuzz_decode: u8 mode (op = mode % 3; 4 in place, 8 output
# short, 16 length word from the data), then the counted bytes


def decode_seeds():
    for name, mode, text in [
            ("b64-foobar.bin", 0, b"Zm9vYmFy"), ("b64-padded.bin", 0, b"Zm9vYg=="),
            ("b64-one-pad.bin", 4, b"Zm9vYmE="), ("b64-empty.bin", 0, b""),
            ("b64-noncanonical.bin", 0, b"Zh=="), ("b64-middle-pad.bin", 0, b"Zg==Zg=="),
            ("b64-bad-char.bin", 4, b"Zm9v!mFy"), ("b64-short-out.bin", 8, b"Zm9vYmFy"),
            ("hex-mixed.bin", 1, b"00ffA5dEadBEEF"), ("hex-odd.bin", 1, b"abc"),
            ("hex-in-place.bin", 5, b"48656c6c6f"), ("hex-bad.bin", 1, b"0g"),
            ("map-text.bin", 2, b"Hello, World"), ("map-in-place.bin", 6, bytes(range(256))),
            ("map-short-out.bin", 10, b"abcdefgh"), ("raw-length.bin", 16, u32(3) + b"ab")]:
        write("decode", name, bytes([mode]) + text)


# ---- ring scripts for fuzz_ring: u8 log2 SQ - 1, u8 log2 CQ - 1, 6-byte steps
WRITE, PUSH, REAP, DRAIN, PENDING = range(5)


def step(action, count=0, value=0):
    return bytes([action, count]) + u32(value)


def ring_seeds():
    honest = [step(PUSH, 2), step(DRAIN, 0), step(REAP, 4), step(PUSH, 7), step(PENDING),
              step(DRAIN, 3), step(DRAIN, 0), step(REAP, 15), step(PENDING)]
    write("ring", "honest.bin", bytes([2, 2]) + b"".join(honest))
    # word 16 is sq_tail, 32 sq_head, 48 cq_tail, 64 cq_head, 80/81 SQ doorbell/need
    hostile = [step(PUSH, 3), step(WRITE, 16, 1000), step(DRAIN, 0), step(PENDING)]
    write("ring", "sq-tail-ahead.bin", bytes([1, 1]) + b"".join(hostile))
    lie = [step(PUSH, 3), step(DRAIN, 0), step(WRITE, 64, 99), step(DRAIN, 0), step(REAP, 1)]
    write("ring", "cq-head-lie.bin", bytes([1, 1]) + b"".join(lie))
    seqs = [step(PUSH, 1), step(WRITE, 128, 77), step(DRAIN, 0), step(WRITE, 81, 3),
            step(PUSH, 1), step(DRAIN, 0), step(PENDING)]
    write("ring", "seq-forged.bin", bytes([0, 0]) + b"".join(seqs))
    full = [step(PUSH, 15)] * 4 + [step(DRAIN, 0), step(PUSH, 15), step(DRAIN, 0), step(REAP, 15),
                                   step(DRAIN, 0)]
    write("ring", "full.bin", bytes([3, 0]) + b"".join(full))


# ---- vyre-submit inputs: the shipped examples plus edge cases


def submit_seeds():
    ex = os.path.join(ROOT, "examples")
    for name in sorted(os.listdir(ex)):
        if name.endswith(".vs"):
            with open(os.path.join(ex, name), "rb") as f:
                write("submit", name, f.read())
    write("submit", "quoted.vs", b'buffer t 16 text "a\\x00b\\"c\\n"\nprint t hex\n')
    write("submit", "hex.vs", b"buffer h 8 hex 00ff10ab\nbuffer o 8\nitem XOR h o 0xffffffff\nwait\n")
    write("submit", "raw-handles.vs", b"buffer a 4\nitem FILL 0 @1 5 nodedupe\nitem NOP\nwait\n")
    write("submit", "bad-escape.vs", b'buffer t 4 text "\\q"\n')
    write("submit", "dfa-empty-pattern.vs", b'dfa d ""\nbuffer x 4 text "ab"\nbuffer r 4\n'
          b"item DFA_SCAN x r d\nprint r\n")


if __name__ == "__main__":
    decode_seeds()
    dfa_seeds()
    proto_seeds()
    plan_seeds()
    ring_seeds()
    submit_seeds()
