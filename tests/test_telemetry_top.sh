#!/bin/bash
# vyre-top against the probe fixture (tests/telemetry_fixture.c), which fires
# known values through vyred's own probe macros: batch mode JSON parsed with
# python3's json module and compared with the exact expected counts (the
# GPU rows too: the fixture's loops summed per GPU, batches by complete.gpu), plain
# text mode, finding the daemon by its socket, layout errors, and the exact
# messages for a missing capability or a missing daemon. Also shows that no
# kernel BTF is needed: it runs with /sys/kernel/btf hidden.
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_tool python3

tm_fixture_start --socket "$TM_TMP/vyre.sock"

# 1. JSON, found through the socket: three refreshes, exact totals.
for d in 1 3 9; do
	tm_top_start "$TM_TMP/top.json" 3 "$d" --socket "$TM_TMP/vyre.sock" --json
	first=$((FIX_DONE * 10 + 1))
	tm_fixture connect
	tm_fixture gpu
	tm_fixture "go 10"
	tm_top_finish && break
	[ "$d" -lt 9 ] || fail "the fixture never finished within vyre-top's refreshes"
done
python3 - "$TM_TMP/top.json" "$first" <<'PY' || fail "JSON check"
import json, sys
objs = [json.loads(line) for line in open(sys.argv[1])]
first = int(sys.argv[2])  # the fixture's batch number of the first batch of this load
assert len(objs) == 3, f"{len(objs)} objects, want 3"
last = objs[-1]
t = last["totals"]
want = dict(batches=10, items=80, completed=80, failed=10, deduped=20, executed=50, invalid=10,
            groups=30, barriers=20, launches=20, launches_avoided=10, frontier_splits=10,
            bytes_avoided=40960, plan_ns=30000, dispatches=10, dispatch_ns=50000, dispatch_errors=0, errors=10,
            backpressure=10, arena_shrinks=2, connects=2, disconnects=0, slow_batches=5,
            slow_dropped=0, layout_errors=0, readback_bytes=20480, gpu_states=3)
for k, v in want.items():
    assert t[k] == v, f"totals.{k} = {t[k]}, want {v}"
assert last["backend"] == "cpu" and last["mode"] == "none", (last["backend"], last["mode"])
assert last["probes"] == 12 and last["probes_total"] == 12
assert abs(last["dedupe_ratio"] - 0.25) < 1e-9
assert abs(last["fusion_ratio"] - 1 / 3) < 1e-5
lat = last["latency_ns"]["total"]
assert lat == dict(count=80, p50=2047, p99=(1 << 25) - 1, p999=(1 << 25) - 1), lat
assert last["plan_ns"]["total"]["p50"] == 4095
assert last["dispatch_ns"]["total"] == dict(count=10, p50=8191, p99=8191, p999=8191)
assert last["batch_items"]["total"]["count"] == 10
assert last["arena"] == dict(used=(1 << 20) + first + 9, capacity=4 << 20, high_water=2 << 20)
ops = {o["name"]: o for o in last["ops"]}
assert set(ops) == {"add", "crc32c"} and last["ops_dropped"] == 0, last["ops"]
add, crc = ops["add"], ops["crc32c"]
assert (add["op"], add["module"], add["items"], add["failed"], add["deduped"]) == (3, None, 50, 10, 20), add
assert (add["latency_max_ns"], add["latency_sum_ns"]) == (20000000, 10 * 6000 + 5 * 20000000 + 5 * 20000), add
assert (crc["op"], crc["module"], crc["items"], crc["failed"], crc["pure"]) == (0x8000abcd, "checksums", 30, 0, True), crc
assert (crc["latency_mean_ns"], crc["drain_sum_ns"]) == (20000, 30 * 700), crc
assert last["ops"][0]["name"] == "add"  # most items first
clients = {c["id"]: c for c in last["clients"]}
assert set(clients) == {1, 2}, clients
c1, c2 = clients[1], clients[2]
assert (c1["pid"], c1["items"], c1["errors"], c1["backpressure"], c1["sq_depth"]) == (4101, 30, 0 + 10, 0, 5), c1
assert (c2["pid"], c2["items"], c2["errors"], c2["backpressure"], c2["sq_depth"]) == (4102, 50, 0, 10, 48), c2
assert c1["uid"] == 1000 and c2["domain"] == 2 and c1["connected"] and c2["connected"]
assert (c1["gpu"], c2["gpu"]) == (0, 1), (c1, c2)
assert (c1["class"], c2["class"]) == (0, 2), (c1, c2)
k2, k0 = last["classes"]
assert (k2["class"], k2["clients"], k2["items"]) == (2, 1, 40), k2
assert (k0["class"], k0["clients"], k0["items"]) == (0, 1, 40), k0
assert k0["latency_ns"]["count"] + k2["latency_ns"]["count"] <= 80
g0, g1 = last["gpus"]
for k, v in dict(gpu=0, have_state=True, ordinal=3, name="Fixture GPU A", backend="cuda",
                 mode="persistent", state="ok", lost=False, loops=2, loops_per_gpu=2, slots=8,
                 running=3, domains=3, clients=4, batches_total=150, items_total=1200,
                 device_bytes_used=1 << 20, device_bytes_max=1 << 30, batches=5, items=40,
                 errors=5, dispatches=5, dispatch_ns=25000).items():
    assert g0[k] == v, f"gpus[0].{k} = {g0[k]}, want {v}"
assert g0["latency_ns"]["total"] == dict(count=40, p50=2047, p99=(1 << 25) - 1, p999=(1 << 25) - 1)
for k, v in dict(gpu=1, ordinal=5, name="Fixture GPU B", state="LOST", lost=True, loops=1,
                 slots=8, running=0, items_total=56, device_bytes_max=2 << 30, items=40).items():
    assert g1[k] == v, f"gpus[1].{k} = {g1[k]}, want {v}"
assert g1["latency_ns"]["total"]["p99"] == (1 << 15) - 1
assert abs(sum(o["gpus"][0]["items_per_s"] * o["interval_s"] for o in objs if o["gpus"]) - 40) < 0.01
assert last["queue"] == dict(depth=53, max_fill_pct=75, max_client=2), last["queue"]
# Rates come from two samples: the items of the interval that saw them over its length.
items_rate = [o["rates"]["items"] * o["interval_s"] for o in objs]
assert abs(sum(items_rate) - 80) < 0.01, items_rate
slow = [e for o in objs for e in o["slow"]]
assert [e["batch_id"] for e in slow] == [b for b in range(first, first + 10) if b % 2 == 0], slow
assert sum(o["slow_events"] for o in objs) == 5
for e in slow:
    assert e["have_plan"] and e["max_ns"] == 20000000 and e["groups"] == 3 and e["plan_ns"] == 3000, e
    assert e["dispatch_ns"] == 5000, e
# Counters only grow between refreshes.
for a, b in zip(objs, objs[1:]):
    for k in a["totals"]:
        assert b["totals"][k] >= a["totals"][k], k
print("json ok:", len(objs), "objects")
PY

# 2. Plain text, by pid: the same numbers as words.
for d in 1 3 9; do
	tm_top_start "$TM_TMP/top.txt" 1 "$d" -p "$FIX_PID"
	tm_fixture gpu
	tm_fixture "go 4"
	tm_top_finish && break
	[ "$d" -lt 9 ] || fail "the fixture never finished within vyre-top's refresh"
done
for want in "^vyre-top  pid $FIX_PID vyre-tm-fixture  backend cpu  mode none  probes 12/12" \
	"^items 32 .* batches 4 " "^dedupe 25.0% \(8 deduped\)" "launches 8 .* avoided 4 " \
	"^latency p50 2.0us p99 33.55ms" "^arena 1.0MiB / 4.0MiB" "slow batches 2 " \
	"^read-back [0-9.]+[KMG]?i?B/s \(8.0KiB\)" \
	"^ +2 +4102 .* +20 +48 +64 +0 +4 +live +- +-$" "^ +1 +4101 .* +12 +5 +64 +4 +0 +live +- +-$" \
	"^ +CLASS +CLIENTS +ITEMS/S +ITEMS +LAT p50 +LAT p99$" "^ +2 +0 +[0-9.k]+ +16 +2.0us +32.8us$" \
	"^ +GPU +ORD +ITEMS/S +ITEMS +LAT p50 +INFLIGHT +DOMAINS +CLIENTS +MODE +DEVICE MEMORY +STATE +NAME$" \
	"^ +0 +3 +[0-9.k]+ +16 +2.0us +3/8 +3 +4 +cuda/persistent +1.0MiB/1.0GiB +ok +Fixture GPU A$" \
	"^ +1 +5 +[0-9.k]+ +16 +2.0us +0/8 +0 +0 +cuda/persistent +0B/2.0GiB +LOST +Fixture GPU B$"; do
	grep -Eq -- "$want" "$TM_TMP/top.txt" || { cat "$TM_TMP/top.txt"; fail "text lacks /$want/"; }
done

# 3. Structs of another layout are counted, not misread.
for d in 1 3 9; do
	tm_top_start "$TM_TMP/bad.json" 1 "$d" -p "$FIX_PID" --json
	tm_fixture bad
	tm_top_finish && break
	[ "$d" -lt 9 ] || fail "the fixture never finished within vyre-top's refresh"
done
python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
t = o["totals"]
assert t["layout_errors"] == 6 and t["batches"] == 0 and t["launches"] == 0, t
assert t["gpu_states"] == 0 and o["gpus"] == [] and o["ops"] == [], (o["gpus"], o["ops"])
' "$TM_TMP/bad.json" || fail "layout errors"

# 4. Without the capabilities it names them and exits non-zero.
check_denied() {
	out=$("$@" "$TOP" -p "$FIX_PID" -b -n 1 2>&1) && fail "vyre-top ran without privilege: $*"
	echo "$out" | grep -q "$WANT" || fail "'$*' said '$out', want '$WANT'"
}
WANT="missing CAP_BPF and CAP_PERFMON" check_denied setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all
# Root without some capabilities (dropped from the bounding set before exec).
drop() {
	caps=$1
	shift
	capsh --drop="$caps" -- -c 'exec "$0" "$@"' "$@"
}
WANT="missing CAP_BPF and CAP_PERFMON" check_denied drop cap_bpf,cap_perfmon,cap_sys_admin
WANT="missing CAP_PERFMON:" check_denied drop cap_perfmon,cap_sys_admin
WANT="missing CAP_BPF:" check_denied drop cap_bpf,cap_sys_admin

# 5. No daemon behind the socket, or a pid without probes.
out=$("$TOP" --socket "$TM_TMP/none.sock" -b -n 1 2>&1) && fail "vyre-top found a daemon at none.sock"
echo "$out" | grep -q "no process listens on $TM_TMP/none.sock" || fail "said '$out'"
out=$("$TOP" -p $$ -b -n 1 2>&1) && fail "vyre-top attached to a shell"
echo "$out" | grep -q "no vyre probe could be attached in pid $$" || fail "said '$out'"

# 6. Kernel BTF is not needed: hide /sys/kernel/btf in a private mount namespace.
if unshare -m true 2>/dev/null; then
	for d in 1 3 9; do
		TOP_T0=$(date +%s%N) TOP_N=1 TOP_D=$d TOP_OUT="$TM_TMP/nobtf.json"
		unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && test ! -e /sys/kernel/btf/vmlinux &&
			exec '$TOP' -p $FIX_PID --json -n 1 -d $d" >"$TOP_OUT" 2>"$TOP_OUT.err" &
		TOP_PID=$!
		tm_track "$TOP_PID"
		tm_wait_for "$TOP_OUT.err" "attached" 30 || fail "vyre-top without BTF did not attach"
		tm_fixture "go 2"
		tm_top_finish && break
		[ "$d" -lt 9 ] || fail "the fixture never finished within vyre-top's refresh"
	done
	python3 -c '
import json, sys
assert json.loads(open(sys.argv[1]).read())["totals"]["batches"] == 2
' "$TM_TMP/nobtf.json" || fail "no-BTF run counted wrong"
else
	echo "note: unshare -m unavailable, the no-BTF check did not run"
fi

tm_fixture_stop
echo "vyre-top against the fixture: ok"
