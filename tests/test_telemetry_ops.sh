#!/bin/bash
# Per-op telemetry against a live vyred (CPU backend) that loaded the
# four example op modules from an ops directory (docs/design.md 6.7),
# under a vyre-submit load of crc32c and built-in ADD items, some of each
# failing before planning (a raw handle that does not exist):
#   1. vyre-top --json: one op row per op, named (crc32c of module crc32c,
#      add), its items and failed items equal to the CQEs vyre-submit
#      printed, and the ops adding up to the totals
#   2. vyre-top --openmetrics, parsed with python3-prometheus-client:
#      vyre_op_items_total{op="crc32c",module="crc32c"} and the other
#      vyre_op_* families equal to a second load
#   3. bpf/scripts/ops.bt over a third load: the same counts, names from
#      op_info
#   4. vyre-top -b: the text op rows
#   5. a batch of more ops than one ops record holds (13 built-in, 4 module
#      ops, 2 numbers of no op, all failing): the records split (part 1
#      and on, seen with bpftrace) and every op's items and failures, and
#      the unknown numbers' as `unknown`, still equal vyre-submit's CQEs
#   6. a supervisor of two GPU workers (--gpus 0,1): the same per-op counts
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_tool bpftrace
tm_require_prometheus

VYRED="$BUILD/vyred"
SUBMIT="$BUILD/vyre-submit"
MODULE="$BUILD/examples/ops/crc32c"
MODULES="crc32c hash64 histogram dot"
SOCK="$TM_TMP/vyre.sock"
SCALE=${VYRE_TEST_SCALE:-1}
N_CRC=$((40 * SCALE))
N_ADD=$((25 * SCALE))
[ -x "$SUBMIT" ] || fail "$SUBMIT is missing"
[ -f "$MODULE/crc32c.opmod" ] && [ -f "$MODULE/libvyre_op_crc32c.so" ] ||
	fail "the crc32c example module is not built in $MODULE"

# The ops directory: root's files, writable by no one else (the loader's rule).
OPS="$TM_TMP/ops.d"
mkdir -m 0755 "$OPS" || fail "mkdir $OPS"
chmod 0755 "$TM_TMP" "$OPS"
for m in $MODULES; do
	[ -f "$BUILD/examples/ops/$m/$m.opmod" ] || fail "the $m example module is not built"
	for f in "$BUILD/examples/ops/$m"/*; do
		install -m 644 "$f" "$OPS/" || fail "install $f"
	done
	# without nvcc there is no PTX: the loader keeps the bytes, the CPU backend never reads them
	[ -f "$OPS/$m.ptx" ] || echo "// stand-in: built without nvcc" >"$OPS/$m.ptx"
	chmod 0644 "$OPS/$m.ptx"
done

"$VYRED" --socket "$SOCK" --backend cpu --ops-dir "$OPS" 2>"$TM_TMP/vyred.log" &
VYRED_PID=$!
tm_track "$VYRED_PID"
tm_wait_for "$TM_TMP/vyred.log" "ready \(pid $VYRED_PID\)" 30 || fail "vyred did not start"
CRC_NUMBER=$(sed -n 's/.*op crc32c \(0x[0-9a-f]*\) of module crc32c.*/\1/p' "$TM_TMP/vyred.log")
[ -n "$CRC_NUMBER" ] || fail "vyred's log does not number crc32c: $(cat "$TM_TMP/vyred.log")"

# The load: crc32c items of distinct seeds (pure, but none identical), ADD
# items, and two of each op with an output handle that does not exist.
{
	echo 'buffer a 8 text "12345678"'
	echo 'buffer o 4'
	echo 'buffer s 64'
	for i in $(seq 1 "$N_CRC"); do echo "item crc32c a o $i"; done
	for i in $(seq 1 "$N_ADD"); do echo "item add s s $i"; done
	echo 'item crc32c a @9999 0'
	echo 'item crc32c a @9998 0'
	echo 'item add s @9997 1'
	echo 'item add s @9996 1'
	echo 'wait'
} >"$TM_TMP/load.vs"

# load OUT [SOCKET]: run the program, OUT gets its CQE lines; vyre-submit exits 1 for the
# failed items.
load() {
	"$SUBMIT" -s "${2:-$SOCK}" "$TM_TMP/load.vs" >"$1" 2>&1
	rc=$?
	[ "$rc" -le 1 ] || fail "vyre-submit exited with $rc: $(tail -5 "$1")"
}
# count OUT OP [ok|failed]: its CQEs of OP as vyre-submit names it (ADD, crc32c)
count() {
	case $3 in
	ok) grep -c "^cqe .* op=$2 status=ok " "$1" ;;
	failed) grep "^cqe .* op=$2 status=" "$1" | grep -vc " status=ok " ;;
	*) grep -c "^cqe .* op=$2 status=" "$1" ;;
	esac
}
# expect_counts OUT: the load's CQEs as the program was written
expect_counts() {
	[ "$(count "$1" crc32c)" -eq $((N_CRC + 2)) ] && [ "$(count "$1" crc32c failed)" -eq 2 ] &&
		[ "$(count "$1" ADD)" -eq $((N_ADD + 2)) ] && [ "$(count "$1" ADD failed)" -eq 2 ] ||
		fail "vyre-submit's CQEs are not the load: $(grep -c '^cqe' "$1") CQEs"
}

# 1. JSON: one refresh that outlasts the load.
for d in 3 8 20; do
	tm_top_start "$TM_TMP/top.json" 1 "$d" --socket "$SOCK" --json
	load "$TM_TMP/load1.out"
	tm_top_finish && break
	[ "$d" -lt 20 ] || fail "the load never finished within vyre-top's refresh"
done
expect_counts "$TM_TMP/load1.out"
python3 - "$TM_TMP/top.json" "$((CRC_NUMBER))" "$N_CRC" "$N_ADD" <<'PY' || fail "vyre-top --json per op"
import json, sys
o = json.loads(open(sys.argv[1]).read().splitlines()[-1])
crc_number, n_crc, n_add = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ops = {r["name"]: r for r in o["ops"]}
assert set(ops) == {"crc32c", "add"}, o["ops"]
crc, add = ops["crc32c"], ops["add"]
assert (crc["op"], crc["module"], crc["named"], crc["pure"]) == (crc_number, "crc32c", True, True), crc
assert (add["op"], add["module"], add["named"]) == (3, None, True), add
assert (crc["items"], crc["failed"]) == (n_crc + 2, 2), crc
assert (add["items"], add["failed"]) == (n_add + 2, 2), add
t = o["totals"]
assert crc["items"] + add["items"] == t["completed"], (crc, add, t)
assert crc["failed"] + add["failed"] == t["failed"], (crc, add, t)
assert crc["latency_sum_ns"] + add["latency_sum_ns"] == t["latency_ns"], (crc, add, t)
for r in (crc, add):
    assert 0 < r["latency_max_ns"] <= r["latency_sum_ns"], r
    assert r["latency_mean_ns"] == r["latency_sum_ns"] // r["items"], r
    assert r["drain_sum_ns"] > 0 and r["items_per_s"] > 0, r
print("json ok:", {k: (v["items"], v["failed"]) for k, v in ops.items()})
PY

# 2. OpenMetrics after one refresh period that outlasts a second load.
for d in 3 8 20; do
	t0=$(date +%s%N)
	"$TOP" --socket "$SOCK" --openmetrics -d "$d" >"$TM_TMP/om.txt" 2>"$TM_TMP/om.err" &
	top=$!
	tm_track "$top"
	tm_wait_for "$TM_TMP/om.err" "attached to pid $VYRED_PID, 12 of 12 probes" 60 ||
		fail "vyre-top --openmetrics did not attach"
	load "$TM_TMP/load2.out"
	t1=$(date +%s%N)
	wait "$top" || fail "vyre-top --openmetrics exited with $?: $(cat "$TM_TMP/om.err")"
	[ $((t1 - t0)) -lt $((d * 1000000000)) ] && break
	[ "$d" -lt 20 ] || fail "the load never finished within vyre-top's refresh period"
done
expect_counts "$TM_TMP/load2.out"
"$PY" - "$TM_TMP/om.txt" "$CRC_NUMBER" "$N_CRC" "$N_ADD" <<'PY' || fail "vyre-top --openmetrics per op"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om
text = open(sys.argv[1]).read()
crc_number, n_crc, n_add = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
assert text.endswith("# EOF\n")
fams = {f.name: f for f in om(text)}

def one(name, sample, **labels):
    got = [s for s in fams[name].samples if s.name == sample and s.labels == labels]
    assert len(got) == 1, (name, labels, fams[name].samples)
    return got[0].value

crc = dict(op="crc32c", module="crc32c")
add = dict(op="add", module="")
assert fams["vyre_op"].type == "info"
assert one("vyre_op", "vyre_op_info", number=crc_number, pure="1", **crc) == 1
assert one("vyre_op", "vyre_op_info", number="0x00000003", pure="1", **add) == 1
assert fams["vyre_op_items"].type == "counter"
assert one("vyre_op_items", "vyre_op_items_total", **crc) == n_crc + 2
assert one("vyre_op_items", "vyre_op_items_total", **add) == n_add + 2
assert one("vyre_op_failed_items", "vyre_op_failed_items_total", **crc) == 2
assert one("vyre_op_failed_items", "vyre_op_failed_items_total", **add) == 2
assert one("vyre_op_deduped_items", "vyre_op_deduped_items_total", **crc) == 0
lat = fams["vyre_op_item_latency_seconds"]
assert lat.type == "counter" and lat.unit == "seconds", (lat.type, lat.unit)
total = sum(one("vyre_op_item_latency_seconds", "vyre_op_item_latency_seconds_total", **l)
            for l in (crc, add))
hist = [s for s in fams["vyre_item_latency_seconds"].samples if s.name.endswith("_sum")][0].value
assert abs(total - hist) < 1e-6, (total, hist)
for l in (crc, add):
    mx = one("vyre_op_item_latency_max_seconds", "vyre_op_item_latency_max_seconds", **l)
    assert 0 < mx <= total, mx
    assert one("vyre_op_drain_to_complete_seconds", "vyre_op_drain_to_complete_seconds_total", **l) > 0
assert one("vyre_completed_items", "vyre_completed_items_total") == n_crc + n_add + 4
print("openmetrics ok")
PY

# 3. ops.bt over a third load: names from op_info (one a second), counts exact.
tm_bpftrace_start "$SCRIPTS/ops.bt" "$VYRED" "$VYRED_PID"
tm_wait_for "$BT_OUT" "^[0-9:]{8} ---- per" 10 || fail "ops.bt printed no interval"
sleep 1.2 # an op_info round after the attach
load "$TM_TMP/load3.out"
tm_wait_for "$BT_OUT" "^@items\[$((CRC_NUMBER)), crc32c\]: " 10 || fail "ops.bt never showed crc32c"
tm_bpftrace_stop
expect_counts "$TM_TMP/load3.out"
for want in "^@name\[$((CRC_NUMBER))\]: crc32c$" "^@module\[$((CRC_NUMBER))\]: crc32c$" \
	"^@name\[3\]: add$" "^@name\[12\]: dfa_scan_counted$" \
	"^@total_items\[$((CRC_NUMBER))\]: $((N_CRC + 2))$" "^@total_failed\[$((CRC_NUMBER))\]: 2$" \
	"^@total_items\[3\]: $((N_ADD + 2))$" "^@total_failed\[3\]: 2$"; do
	grep -Eq -- "$want" "$BT_OUT" || { cat "$BT_OUT"; fail "ops.bt: no line /$want/"; }
done
grep -q "^@layout_errors" "$BT_OUT" && ! grep -q "^@layout_errors: 0$" "$BT_OUT" &&
	fail "ops.bt: $(grep '^@layout_errors' "$BT_OUT")"

# 4. Text: the op rows under their header.
for d in 3 8 20; do
	tm_top_start "$TM_TMP/top.txt" 1 "$d" --socket "$SOCK"
	load "$TM_TMP/load4.out"
	tm_top_finish && break
	[ "$d" -lt 20 ] || fail "the load never finished within vyre-top's refresh"
done
for want in "^OP +MODULE +ITEMS/S +ITEMS +FAILED +FAIL/S +LAT mean +LAT all +LAT max$" \
	"^crc32c +crc32c +[0-9.k]+ +$((N_CRC + 2)) +2 " "^add +- +[0-9.k]+ +$((N_ADD + 2)) +2 "; do
	grep -Eq -- "$want" "$TM_TMP/top.txt" || { cat "$TM_TMP/top.txt"; fail "text lacks /$want/"; }
done

# 5. 19 op numbers in one batch, ten times over: more than VYRE_TM_OPS_MAX.
MANY="nop fill copy add xor mul sum max dfa_scan base64_decode hex_decode bytemap dfa_scan_counted"
MANY="$MANY $MODULES 4000 0x80001234"
{
	for r in $(seq 1 10); do
		for op in $MANY; do echo "item $op @9999 @9998 $r"; done
	done
	echo 'wait'
} >"$TM_TMP/many.vs"
cat >"$TM_TMP/parts.bt" <<'BT'
BEGIN { printf("Tracing the parts of ops records\n"); }
usdt:$1:vyre:ops /pid == $2/ { @parts = max(*(uint32 *)(arg0 + 16)); }
BT
tm_bpftrace_start "$TM_TMP/parts.bt" "$VYRED" "$VYRED_PID"
for d in 3 8 20; do
	tm_top_start "$TM_TMP/many.json" 1 "$d" --socket "$SOCK" --json
	"$SUBMIT" -s "$SOCK" "$TM_TMP/many.vs" >"$TM_TMP/many.out" 2>&1
	[ $? -le 1 ] || fail "vyre-submit: $(tail -5 "$TM_TMP/many.out")"
	tm_top_finish && break
	[ "$d" -lt 20 ] || fail "the load never finished within vyre-top's refresh"
done
tm_bpftrace_stop
grep -Eq "^@parts: [1-9]" "$BT_OUT" || { cat "$BT_OUT"; fail "no batch split its ops record"; }
python3 - "$TM_TMP/many.json" "$TM_TMP/many.out" <<'PY' || fail "vyre-top --json per op, 19 op numbers"
import collections, json, re, sys
o = json.loads(open(sys.argv[1]).read().splitlines()[-1])
cqes = collections.Counter()
bad = collections.Counter()
for line in open(sys.argv[2]):
    m = re.match(r"cqe .* op=(\S+) status=(\S+) ", line)
    if m:
        name = m.group(1).lower()
        name = "unknown" if name.isdigit() else name
        cqes[name] += 1
        bad[name] += m.group(2) != "ok"
assert len(cqes) == 18 and sum(cqes.values()) == 190, cqes
ops = {r["name"]: r for r in o["ops"]}
assert set(ops) == set(cqes), (sorted(ops), sorted(cqes))
for name, n in cqes.items():
    assert (ops[name]["items"], ops[name]["failed"]) == (n, bad[name]), (name, ops[name], n, bad[name])
assert ops["unknown"]["op"] == 0xffffffff and ops["unknown"]["items"] == 20, ops["unknown"]
for m in ("crc32c", "hash64", "histogram", "dot"):
    assert ops[m]["module"] == m and ops[m]["op"] >= 1 << 31, ops[m]
assert o["totals"]["completed"] == 190 and o["ops_dropped"] == 0, o["totals"]
print("19 op numbers in one batch ok:", len(ops), "rows")
PY

# 6. A supervisor of two GPU workers (--gpus 0,1): each worker loaded the
# modules and fires ops and op_info; vyre-top follows both.
SOCK2="$TM_TMP/vyre2.sock"
"$VYRED" --socket "$SOCK2" --backend cpu --gpus 0,1 --ops-dir "$OPS" 2>"$TM_TMP/vyred2.log" &
SUP_PID=$!
tm_track "$SUP_PID"
tm_wait_for "$TM_TMP/vyred2.log" "ready \(pid $SUP_PID\)" 30 || fail "vyred --gpus 0,1 did not start"
for d in 3 8 20; do
	tm_top_start "$TM_TMP/sup.json" 1 "$d" --socket "$SOCK2" --json
	load "$TM_TMP/load6.out" "$SOCK2"
	tm_top_finish && break
	[ "$d" -lt 20 ] || fail "the load never finished within vyre-top's refresh"
done
python3 - "$TM_TMP/sup.json" "$N_CRC" "$N_ADD" <<'PY' || fail "vyre-top --json per op, two GPU workers"
import json, sys
o = json.loads(open(sys.argv[1]).read().splitlines()[-1])
n_crc, n_add = int(sys.argv[2]), int(sys.argv[3])
assert len(o["workers"]) == 2, o["workers"]
ops = {r["name"]: (r["module"], r["items"], r["failed"]) for r in o["ops"]}
assert ops == {"crc32c": ("crc32c", n_crc + 2, 2), "add": (None, n_add + 2, 2)}, ops
print("two GPU workers ok:", ops)
PY
expect_counts "$TM_TMP/load6.out"
echo "per-op telemetry against vyred with the example modules: ok"
