#!/bin/sh
# examples/scanlog against a live vyred on the CPU backend: a generated log
# of about 600 KiB (ten 64 KiB items of one stream, rule literals placed
# across item boundaries, caseless and binary-escaped rules) scanned with the
# table in the heap and in a device buffer; every printed (rule, line) must
# equal a Python reference's, in the same order (lines in order; on a line,
# rules by where they first end, then by id).
src=@VYRE_SRCDIR@
build=@VYRE_BUILD@

command -v python3 >/dev/null || {
	echo "skip: no python3 for the reference"
	exit 77
}
tmp=$(mktemp -d /tmp/vyre-scanlog.XXXXXX) || exit 1
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM

python3 - "$tmp" <<'PY' || exit 1
import random, sys
d = sys.argv[1]
rnd = random.Random(26)
rules = [(10, 0, b"GET /admin"), (11, 1, b"password"), (12, 0, b"\tERROR"),
         (13, 0, b"root"), (14, 1, b"Root Login"), (15, 0, b"oot"), (16, 0, b"xyzzy"),
         (17, 0, b"admin"), (10, 0, b"/etc/shadow")]
def esc(b):
    return "".join(c if 32 < ord(c) < 127 and c != "\\" else "\\x%02x" % ord(c)
                   for c in b.decode("latin-1"))
with open(d + "/rules", "w") as f:
    f.write("# scanlog test rules\n\n")
    for i, fl, p in rules:
        f.write("%d%s %s\n" % (i, "/i" if fl else "", esc(p)))
words = [b"user", b"GET", b"/index.html", b"HTTP/1.1", b"200", b"admin", b"PassWord",
         b"ROOT LOGIN", b"root", b"\tERROR", b"/etc/shadow", b"boot", b"GET /admin",
         b"x", b"-", b"ok"]
lines, size = [], 0
while size < 600 * 1024:
    ln = b" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 12)))
    lines.append(ln)
    size += len(ln) + 1
log = b"\n".join(lines) + b"\n"
open(d + "/log", "wb").write(log)
out = []
for n, ln in enumerate(lines, 1):
    first = {}
    for i, fl, p in rules:
        hay, pat = (ln.lower(), p.lower()) if fl else (ln, p)
        k = hay.find(pat)
        if k >= 0:
            e = k + len(p)
            first[i] = min(first.get(i, e), e)
    for i in sorted(first, key=lambda i: (first[i], i)):
        out.append(b"rule %d line %d: %s" % (i, n, ln))
open(d + "/want", "wb").write(b"\n".join(out) + b"\n")
PY

"$build/vyred" --backend cpu --socket "$tmp/v.sock" >"$tmp/vyred.log" 2>&1 &
pid=$!
i=0
while [ ! -S "$tmp/v.sock" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -S "$tmp/v.sock" ] || {
	echo "vyred did not start:"
	sed 's/^/  | /' "$tmp/vyred.log"
	exit 1
}
fails=0
for mode in heap device; do
	flag=
	[ $mode = device ] && flag=-d
	if ! "$build/examples/scanlog" -s "$tmp/v.sock" $flag "$tmp/rules" "$tmp/log" \
		>"$tmp/got.$mode" 2>"$tmp/err.$mode"; then
		echo "FAIL: scanlog ($mode) exit $?:"
		sed 's/^/  | /' "$tmp/err.$mode"
		fails=$((fails + 1))
		continue
	fi
	if ! cmp -s "$tmp/want" "$tmp/got.$mode"; then
		echo "FAIL: scanlog ($mode) printed other lines than the reference:"
		diff "$tmp/want" "$tmp/got.$mode" | head -20 | sed 's/^/  | /'
		fails=$((fails + 1))
		continue
	fi
	echo "ok: scanlog ($mode): $(wc -l <"$tmp/want") (rule, line) pairs; $(tail -1 "$tmp/err.$mode")"
done
# a bad rule file: a clear error naming the line, exit 1
printf '1 ok\n2 bad\\q\n' >"$tmp/bad"
if "$build/examples/scanlog" -s "$tmp/v.sock" "$tmp/bad" "$tmp/log" >/dev/null 2>"$tmp/err.bad"; then
	echo "FAIL: a bad escape was accepted"
	fails=$((fails + 1))
elif ! grep -q "bad:2: bad escape" "$tmp/err.bad"; then
	echo "FAIL: the bad rule's error does not name its line:"
	sed 's/^/  | /' "$tmp/err.bad"
	fails=$((fails + 1))
fi
[ $fails -eq 0 ] || exit 1
echo "test_scanlog: ok"
