#!/bin/bash
# Telemetry of a vyred driving two GPUs: `vyred --backend cpu --gpus 0,1`,
# two CPU backend instances labelled GPU 0 and GPU 1 (docs/design.md 8.8),
# whose private domains are placed on them in turn:
#   1. an idle vyre-top shows both GPU rows from gpu_state alone
#   2. four held producers: each client row names its GPU, both GPUs get
#      clients, and the items of the clients of a GPU are that GPU's items
#      (vyre-top --json); an idle look then counts each GPU's clients,
#      domains and items since start
#   3. the gpu arguments per GPU with bpftrace: client_connect and
#      dispatch_begin, and complete's gpu and loop (one loop a GPU: loop ==
#      gpu); gpus.bt's totals per GPU
#   4. a device fault on GPU 1 (VYRE_CPU_INJECT=fault VYRE_INJECT_DEVICE=1):
#      its loop fires gpu_state with lost set at once (within 10 ms of the
#      fault's error probe, where the 1 s timer would take up to a second),
#      and vyre-top shows GPU 1 LOST beside GPU 0 ok
# Skips (77) while vyred has no --gpus.
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_tool python3
tm_require_tool bpftrace

VYRED="$BUILD/vyred"
PRODUCER="$BUILD/tests/vyre-tm-producer"
SOCK="$TM_TMP/vyre.sock"
SCALE=${VYRE_TEST_SCALE:-1}
PAIRS=$((100 * SCALE))
"$VYRED" --help 2>&1 | grep -q -- "--gpus" || skip "this vyred has no --gpus"

"$VYRED" --socket "$SOCK" --backend cpu --gpus 0,1 2>"$TM_TMP/vyred.log" &
VYRED_PID=$!
tm_track "$VYRED_PID"
tm_wait_for "$TM_TMP/vyred.log" "ready \(pid $VYRED_PID\)" 30 || fail "vyred did not start"
EXE=$(readlink "/proc/$VYRED_PID/exe")

ALL_ITEMS=0 # every item vyred completed, over both GPUs
count_loads() {
	ALL_ITEMS=$((ALL_ITEMS + $(tm_items "$@")))
}

# idle_look CLIENTS0 CLIENTS1 MIN0 MIN1: one refresh 1.5 s after attaching:
# each GPU's clients and domains, at least MINi items since start on GPU i,
# and every item of every load so far over both.
idle_look() {
	tm_idle_top "$SOCK" "$TM_TMP/idle.json"
	python3 - "$TM_TMP/idle.json" "$@" "$ALL_ITEMS" <<'PY' || fail "the idle GPU rows"
import json, sys
o = json.loads(open(sys.argv[1]).read())
clients, least, total = [int(a) for a in sys.argv[2:4]], [int(a) for a in sys.argv[4:6]], int(sys.argv[6])
g = o["gpus"]
assert [r["gpu"] for r in g] == [0, 1], g
for i, r in enumerate(g):
    want = dict(have_state=True, ordinal=i, backend="cpu", mode="none", state="ok", lost=False,
                loops=1, loops_per_gpu=1, slots=4, running=0, clients=clients[i],
                domains=clients[i], items=0)
    for k, v in want.items():
        assert r[k] == v, f"gpus[{i}].{k} = {r[k]}, want {v}"
    assert r["items_total"] >= least[i], (i, r["items_total"], least)
assert g[0]["items_total"] + g[1]["items_total"] == total, (g, total)
PY
}

# 1. Before any traffic.
idle_look 0 0 0 0

# 2. Four producers, each in its private domain, held connected.
for d in 2 6 18; do
	tm_top_start "$TM_TMP/top.json" 3 "$d" --socket "$SOCK" --json
	mkfifo "$TM_TMP/hold.$d"
	exec 8<>"$TM_TMP/hold.$d"
	held=""
	for i in 1 2 3 4; do
		"$PRODUCER" --socket "$SOCK" --pairs $((PAIRS * i)) --hold \
			<"$TM_TMP/hold.$d" >"$TM_TMP/load.$i.json" 8>&- &
		held="$held $!"
		tm_track "$!"
	done
	for i in 1 2 3 4; do
		tm_wait_for "$TM_TMP/load.$i.json" '"round_trips"' 120 || fail "producer $i did not finish"
	done
	count_loads "$TM_TMP"/load.[1234].json
	ok=0
	tm_top_finish && ok=1
	[ "$ok" -eq 1 ] || {
		exec 8>&-
		for p in $held; do wait "$p"; done
		[ "$d" -lt 18 ] || fail "the load never finished within vyre-top's refreshes"
		continue
	}
	python3 - "$TM_TMP/top.json" "$TM_TMP"/load.[1234].json >"$TM_TMP/split" <<'PY' || fail "GPU rows against four producers"
import json, sys
o = [json.loads(line) for line in open(sys.argv[1])][-1]
loads = {json.loads(open(p).read())["pid"]: json.loads(open(p).read()) for p in sys.argv[2:]}
rows = {r["pid"]: r for r in o["clients"] if r["pid"] in loads}
assert len(rows) == 4, o["clients"]
per_gpu = {0: [0, 0], 1: [0, 0]}  # clients, items
for pid, l in loads.items():
    r = rows[pid]
    assert r["gpu"] in (0, 1) and r["items"] == l["items"], (r, l)
    per_gpu[r["gpu"]][0] += 1
    per_gpu[r["gpu"]][1] += l["items"]
assert per_gpu[0][0] == per_gpu[1][0] == 2, per_gpu  # placed in turn
g = {r["gpu"]: r for r in o["gpus"]}
assert set(g) == {0, 1}, o["gpus"]
for i in (0, 1):
    assert g[i]["items"] == per_gpu[i][1], (i, g[i]["items"], per_gpu)
    assert g[i]["latency_ns"]["total"]["count"] == per_gpu[i][1]
assert g[0]["batches"] + g[1]["batches"] == o["totals"]["batches"]
print(per_gpu[0][0], per_gpu[1][0], per_gpu[0][1], per_gpu[1][1])
PY
	sleep 1.1 # a gpu_state after the last item
	idle_look $(cat "$TM_TMP/split")
	exec 8>&-
	for p in $held; do
		wait "$p" || fail "a held producer failed"
	done
	break
done
read -r _ _ BEFORE0 BEFORE1 <"$TM_TMP/split"

# 3. bpftrace: the gpu arguments and gpus.bt under two producers, the
# second started while the first (done, held) keeps GPU 0 busier.
run_bt() {
	tm_bpftrace_start "$1" "$EXE" "$VYRED_PID"
	mkfifo "$TM_TMP/hold.bt.$2"
	exec 8<>"$TM_TMP/hold.bt.$2"
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --hold <"$TM_TMP/hold.bt.$2" >"$TM_TMP/bt.1.json" 8>&- &
	p1=$!
	tm_track "$p1"
	tm_wait_for "$TM_TMP/bt.1.json" '"round_trips"' 120 || fail "the first producer did not finish"
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" >"$TM_TMP/bt.2.json" || fail "a producer failed"
	exec 8>&-
	wait "$p1" || fail "the held producer failed"
	ITEMS=$(tm_items "$TM_TMP"/bt.[12].json)
	sleep 1.2
	tm_bpftrace_stop
}
expect() {
	grep -Eq -- "$1" "$BT_OUT" || { cat "$BT_OUT"; fail "$(basename "$BT_OUT"): no line /$1/"; }
}
cat >"$TM_TMP/args.bt" <<'BT'
usdt:$1:vyre:client_connect /pid == $2/ { @connect[arg4] = count(); }
usdt:$1:vyre:dispatch_begin /pid == $2/ { @begin[arg4] = count(); }
usdt:$1:vyre:complete /pid == $2/ {
	@complete[*(uint32 *)(arg0 + 296), *(uint32 *)(arg0 + 300)] = sum(*(uint32 *)(arg0 + 4));
}
BEGIN { printf("Tracing the gpu arguments\n"); }
BT
run_bt "$TM_TMP/args.bt" args
expect "^@connect\[0\]: 1$"
expect "^@connect\[1\]: 1$"
expect "^@begin\[0\]: [1-9][0-9]*$"
expect "^@begin\[1\]: [1-9][0-9]*$"
expect "^@complete\[0, 0\]: [1-9][0-9]*$"
expect "^@complete\[1, 1\]: [1-9][0-9]*$"
awk -F': ' '/^@complete/ { n += $2 } END { exit n != '"$ITEMS"' }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "complete's items over both GPUs are not $ITEMS"; }
grep -Eq "^@(connect|begin)\[[2-9]|^@complete\[([2-9]|0, [1-9]|1, [02-9])" "$BT_OUT" &&
	{ cat "$BT_OUT"; fail "a probe named a GPU or loop that does not exist"; }

run_bt "$SCRIPTS/gpus.bt" gpus
expect "^[0-9:]{8} +0 +0 +[1-9][0-9]* .* +(ok|-)$"
expect "^[0-9:]{8} +1 +1 +[1-9][0-9]* .* +(ok|-)$"
awk '$1 == "0" || $1 == "1" { if (NF == 7) { n += $2; g[$1] = 1 } } END { exit !(n == '"$ITEMS"' && (0 in g) && (1 in g)) }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "gpus.bt's totals over both GPUs are not $ITEMS"; }

kill -TERM "$VYRED_PID"
wait "$VYRED_PID" || fail "vyred exited with $?"

# 4. GPU 1 faults on its first batch.
SOCK="$TM_TMP/lost.sock"
VYRE_CPU_INJECT=fault VYRE_INJECT_DEVICE=1 "$VYRED" --socket "$SOCK" --backend cpu --gpus 0,1 \
	2>"$TM_TMP/lost.log" &
VYRED_PID=$!
tm_track "$VYRED_PID"
tm_wait_for "$TM_TMP/lost.log" "ready \(pid $VYRED_PID\)" 30 || fail "the faulting vyred did not start"
cat >"$TM_TMP/lost.bt" <<'BT'
usdt:$1:vyre:error /pid == $2 && arg0 == 0 && @fault == 0/ { @fault = nsecs; }
usdt:$1:vyre:gpu_state /pid == $2 && *(uint32 *)(arg0 + 28) == 1 && @seen == 0/ {
	@seen = 1;
	printf("lost gpu %u after %llu us\n", *(uint32 *)(arg0 + 4), (nsecs - @fault) / 1000);
}
BEGIN { printf("Tracing the loss\n"); }
BT
tm_bpftrace_start "$TM_TMP/lost.bt" "$EXE" "$VYRED_PID"
tm_top_start "$TM_TMP/lost.json" 2 2 --socket "$SOCK" --json
mkfifo "$TM_TMP/hold.lost"
exec 8<>"$TM_TMP/hold.lost"
"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --hold <"$TM_TMP/hold.lost" >"$TM_TMP/lost.0.json" 8>&- &
p0=$!
tm_track "$p0"
tm_wait_for "$TM_TMP/lost.0.json" '"round_trips"' 120 || fail "the producer on GPU 0 did not finish"
"$PRODUCER" --socket "$SOCK" --pairs 1 >/dev/null 2>&1 && fail "a producer on the faulting GPU 1 succeeded"
tm_wait_for "$BT_OUT" "^lost gpu 1 after [0-9]+ us$" 30 || fail "no gpu_state said GPU 1 was lost"
us=$(awk '/^lost gpu 1 after/ { print $5 }' "$BT_OUT")
[ "$us" -lt 10000 ] || fail "gpu_state said GPU 1 was lost $us us after the fault, not at once"
tm_bpftrace_stop
wait "$TOP_PID" || fail "vyre-top exited with $?: $(cat "$TOP_OUT.err")"
exec 8>&-
wait "$p0" || fail "the producer on GPU 0 failed"
python3 - "$TM_TMP/lost.json" <<'PY' || fail "vyre-top's rows after GPU 1's fault"
import json, sys
o = [json.loads(line) for line in open(sys.argv[1])][-1]
g = {r["gpu"]: r for r in o["gpus"]}
assert (g[0]["state"], g[0]["lost"]) == ("ok", False), g[0]
assert (g[1]["state"], g[1]["lost"]) == ("LOST", True), g[1]
assert g[0]["items"] > 0 and g[1]["errors"] > 0, o["gpus"]
PY
kill -TERM "$VYRED_PID"
wait "$VYRED_PID"
echo "telemetry of two GPUs: ok (before bpftrace: GPU 0 $BEFORE0 items, GPU 1 $BEFORE1)"
