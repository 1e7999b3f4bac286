#!/bin/bash
# Telemetry against a live vyred (CPU backend) under a load whose every
# figure the producers count from their own CQEs (tests/telemetry_producer.c):
#   1. vyre-top -b -n 3 --json with one producer: items, dedupe, errors,
#      executions, launches and device read-back bytes exactly as produced
#   2. three producers at once: one row each, with its pid and exact items
#   3. the interactive vyre-top in tmux: rows, sort, help, pause, quit
#   4. every bpftrace script for a few seconds: its keys, non-zero counts,
#      and per-client items exactly as produced
#   5. the binaries: vyred carries all 14 probes with semaphores and no
#      libbpf; the VYRE_PROBES=0 build carries none
#   6. the GPU row: shown by an idle vyre-top within a second of attaching
#      (from gpu_state alone), with items since start equal to every load
#      so far; the gpu argument of dispatch_begin, dispatch_end,
#      client_connect and complete's gpu and loop read with bpftrace
# VYRE_TEST_SCALE multiplies the load.
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_tool python3
tm_require_tool tmux
tm_require_tool bpftrace

VYRED="$BUILD/vyred"
PRODUCER="$BUILD/tests/vyre-tm-producer"
SCALE=${VYRE_TEST_SCALE:-1}
PAIRS=$((200 * SCALE))
SOCK="$TM_TMP/vyre.sock"

# 5 first: what the binaries carry.
probes=$(readelf -n "$VYRED" | awk '/Provider: vyre/ { getline; print $2 }' | sort -u | tr '\n' ' ')
[ "$probes" = "arena backpressure batch_drained client_connect client_disconnect complete dedupe dispatch_begin dispatch_end error gpu_state op_info ops plan " ] ||
	fail "vyred's probes: '$probes'"
readelf -n "$VYRED" | grep -q "Semaphore: 0x0*[1-9a-f]" || fail "vyred's probes have no semaphores"
readelf -n "$VYRED" | grep -E "Semaphore: 0x0+$" && fail "a vyred probe without a semaphore"
readelf -n "$BUILD/noprobes/vyred" | grep -q "Provider: vyre" && fail "noprobes/vyred still has probes"
ldd "$VYRED" | grep -q libbpf && fail "vyred links libbpf"

"$VYRED" --socket "$SOCK" --backend cpu 2>"$TM_TMP/vyred.log" &
VYRED_PID=$!
tm_track "$VYRED_PID"
tm_wait_for "$TM_TMP/vyred.log" "ready \(pid $VYRED_PID\)" 30 || fail "vyred did not start"
ALL_ITEMS=0 # every item vyred has completed: what its gpu_state records say
count_load() {
	ALL_ITEMS=$((ALL_ITEMS + $(tm_items "$1")))
}

# idle_gpu_row CLIENTS: an idle vyre-top, one refresh 1.5 s after attaching,
# shows GPU 0 from its loop's gpu_state alone: no batch since attach, every
# item since vyred started, CLIENTS clients in as many private domains.
idle_gpu_row() {
	tm_idle_top "$SOCK" "$TM_TMP/idle.json"
	python3 - "$TM_TMP/idle.json" "$ALL_ITEMS" "$1" <<'PY' || fail "the idle GPU row"
import json, sys
o = json.loads(open(sys.argv[1]).read())
items, clients = int(sys.argv[2]), int(sys.argv[3])
assert len(o["gpus"]) == 1, o["gpus"]
g = o["gpus"][0]
want = dict(gpu=0, have_state=True, ordinal=0, backend="cpu", mode="none", state="ok",
            lost=False, loops=1, loops_per_gpu=1, slots=8, running=0, items_total=items, name="cpu",
            clients=clients, domains=clients, batches=0, items=0)
for k, v in want.items():
    assert g[k] == v, f"gpus[0].{k} = {g[k]}, want {v}"
assert g["device_bytes_max"] == 1 << 30 and g["device_bytes_used"] == 0, g
assert 0 < o["totals"]["gpu_states"] <= 3, o["totals"]["gpu_states"]
PY
}
idle_gpu_row 0

# 1. One producer, vyre-top found through the socket.
for d in 2 6 18; do
	tm_top_start "$TM_TMP/top.json" 3 "$d" --socket "$SOCK" --json
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --invalid 7 --readback 5 --chains 4 \
		>"$TM_TMP/load.json" ||
		fail "the producer failed"
	count_load "$TM_TMP/load.json"
	tm_top_finish && break
	[ "$d" -lt 18 ] || fail "the load never finished within vyre-top's refreshes"
done
python3 - "$TM_TMP/top.json" "$TM_TMP/load.json" "$VYRED_PID" <<'PY' || fail "vyre-top JSON against one producer"
import json, sys
objs = [json.loads(line) for line in open(sys.argv[1])]
load = json.loads(open(sys.argv[2]).read())
assert len(objs) == 3, f"{len(objs)} objects"
o = objs[-1]
t = o["totals"]
assert o["pid"] == int(sys.argv[3]) and o["backend"] == "cpu" and o["mode"] == "none", o["backend"]
assert o["probes"] == o["probes_total"] == 12, (o["probes"], o["probes_total"])
exact = dict(items=load["items"], completed=load["items"], deduped=load["deduped"],
             executed=load["executed"], failed=load["errors"], invalid=load["errors"],
             errors=load["errors"], connects=1, disconnects=1,
             launches=load["executed"] - load["chains"],  # a chain is one launch
             dispatch_errors=0, layout_errors=0, slow_dropped=0, readback_bytes=load["readback"],
             bytes_avoided=load["avoided"])
for k, v in exact.items():
    assert t[k] == v, f"totals.{k} = {t[k]}, the producer says {v}"
# Every round trip is one batch, or two when a pair was drained apart.
assert load["round_trips"] <= t["batches"] <= load["items"], (t["batches"], load)
assert t["groups"] >= t["launches"] and t["barriers"] < t["groups"] + 1
assert o["latency_ns"]["total"]["count"] == load["items"]
assert o["latency_ns"]["total"]["p50"] > 0
assert o["batch_items"]["total"]["count"] == t["batches"]
# vyre-top prints ratios with six significant digits.
assert abs(o["dedupe_ratio"] - load["deduped"] / load["items"]) < 1e-5, (o["dedupe_ratio"], load)
rows = o["clients"]
assert len(rows) == 1, rows
r = rows[0]
assert (r["pid"], r["items"], r["errors"], r["connected"], r["gpu"]) == (load["pid"], load["items"], load["errors"], False, 0), r
g = o["gpus"]
assert len(g) == 1 and g[0]["gpu"] == 0 and g[0]["have_state"], g
assert (g[0]["items"], g[0]["errors"], g[0]["batches"]) == (load["items"], load["errors"], t["batches"]), g[0]
assert (g[0]["dispatches"], g[0]["dispatch_ns"]) == (t["dispatches"], t["dispatch_ns"]), g[0]
assert g[0]["latency_ns"]["total"]["count"] == load["items"]
print("one producer:", load, "batches", t["batches"])
PY

# 2. Three producers at once, held connected until vyre-top has looked.
for d in 2 6 18; do
	tm_top_start "$TM_TMP/multi.json" 3 "$d" --socket "$SOCK" --json
	mkfifo "$TM_TMP/hold.$d"
	exec 8<>"$TM_TMP/hold.$d"
	held=""
	for i in 1 2 3; do
		"$PRODUCER" --socket "$SOCK" --pairs $((PAIRS * i / 2)) --invalid "$i" --hold \
			<"$TM_TMP/hold.$d" >"$TM_TMP/load.$i.json" 8>&- &
		held="$held $!"
		tm_track "$!"
	done
	for i in 1 2 3; do
		tm_wait_for "$TM_TMP/load.$i.json" '"round_trips"' 120 || fail "producer $i did not finish"
		count_load "$TM_TMP/load.$i.json"
	done
	ok=0
	tm_top_finish && ok=1
	sleep 1.1 # a gpu_state after the last item
	idle_gpu_row 3
	exec 8>&- # end of input: the held producers close and exit
	for p in $held; do
		wait "$p" || fail "a held producer failed"
	done
	[ "$ok" -eq 1 ] && break
	[ "$d" -lt 18 ] || fail "the load never finished within vyre-top's refreshes"
done
python3 - "$TM_TMP/multi.json" "$TM_TMP"/load.[123].json <<'PY' || fail "vyre-top JSON against three producers"
import json, sys
o = [json.loads(line) for line in open(sys.argv[1])][-1]
loads = [json.loads(open(p).read()) for p in sys.argv[2:]]
t = o["totals"]
for k, lk in (("items", "items"), ("deduped", "deduped"), ("executed", "executed"),
              ("failed", "errors"), ("errors", "errors")):
    want = sum(l[lk] for l in loads)
    assert t[k] == want, f"totals.{k} = {t[k]}, the producers say {want}"
assert t["connects"] == 3 and t["disconnects"] == 0, (t["connects"], t["disconnects"])
assert 1 <= t["launches"] <= t["executed"]
rows = {r["pid"]: r for r in o["clients"]}
assert len(rows) == 3, o["clients"]
for l in loads:
    r = rows[l["pid"]]
    assert (r["items"], r["errors"], r["connected"], r["gpu"]) == (l["items"], l["errors"], True, 0), (r, l)
    assert r["sq_entries"] > 0 and r["sq_depth"] == 0
# The default order is items/s, highest first, within one interval.
assert o["gpus"][0]["items"] == t["items"], (o["gpus"], t["items"])
rates = [r["items_per_s"] for r in o["clients"]]
assert rates == sorted(rates, reverse=True), rates
print("three producers:", [l["items"] for l in loads])
PY

# 3. Interactive, in tmux.
TMUX_SOCK="vyre-tm-$$"
tmx() {
	tmux -L "$TMUX_SOCK" "$@"
}
trap 'tmx kill-server 2>/dev/null; tm_cleanup' EXIT
screen_has() {
	n=300
	while [ "$n" -gt 0 ]; do
		tmx capture-pane -p -t top >"$TM_TMP/screen.txt" 2>/dev/null
		grep -Eq -- "$1" "$TM_TMP/screen.txt" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	cat "$TM_TMP/screen.txt"
	fail "the screen never showed /$1/"
}
tmx -f /dev/null new-session -d -s top -x 120 -y 30 \
	"TERM=xterm-256color '$TOP' --socket '$SOCK' -d 0.3; echo \$? >'$TM_TMP/exit'"
screen_has "^vyre-top  pid $VYRED_PID vyred  backend"
mkfifo "$TM_TMP/hold.tmux"
exec 8<>"$TM_TMP/hold.tmux"
"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --hold <"$TM_TMP/hold.tmux" >"$TM_TMP/load.tmux.json" 8>&- &
prod=$!
tm_track "$prod"
tm_wait_for "$TM_TMP/load.tmux.json" '"round_trips"' 120 || fail "the tmux producer did not finish"
items=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["items"])' "$TM_TMP/load.tmux.json")
screen_has "backend cpu  mode none  probes 12/12"
screen_has "^ +0 +0 +[0-9.k]+ +$items +[^ ]+ +0/8 +1 +1 +cpu/none +0B/1.0GiB +ok +cpu$"
screen_has "^ +[0-9]+ +$prod +[0-9.k]+ +$items +0 +[0-9]+ +0 +0 +live"
tmx send-keys -t top s
screen_has "s sort \(items\)"
tmx send-keys -t top h
screen_has "vyre-top keys"
tmx send-keys -t top h
tmx send-keys -t top p
screen_has "PAUSED"
tmx send-keys -t top p q
tm_wait_for "$TM_TMP/exit" "^0$" 30 || fail "vyre-top did not quit with 0"
exec 8>&-
wait "$prod" || fail "the tmux producer failed"

# 4. Every bpftrace script, traced while producers run.
EXE=$(readlink "/proc/$VYRED_PID/exe")
run_script() {
	case $1 in
	/*) script=$1 ;;
	*) script=$SCRIPTS/$1 ;;
	esac
	tm_bpftrace_start "$script" "$EXE" "$VYRED_PID" "${@:2}"
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --invalid 3 >"$TM_TMP/load.bt.json" ||
		fail "the producer failed under $1"
	count_load "$TM_TMP/load.bt.json"
	LOAD_PID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$TM_TMP/load.bt.json")
	LOAD_ITEMS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["items"])' "$TM_TMP/load.bt.json")
	# printf lines travel through a perf buffer: let them arrive before stopping.
	[ -z "$LAST" ] || tm_wait_for "$BT_OUT" "${LAST//@PID@/$LOAD_PID}" 30 || fail "$1 never printed /$LAST/"
	sleep 1.2 # and one per-second line after the load
	tm_bpftrace_stop
}
expect() {
	grep -Eq -- "$1" "$BT_OUT" || { cat "$BT_OUT"; fail "$(basename "$BT_OUT"): no line /$1/"; }
}
nonzero_total() { # the END "total" line: column $1 must be > 0
	awk -v c="$1" '$1 == "total" && $c > 0 { ok = 1 } END { exit !ok }' "$BT_OUT" ||
		{ cat "$BT_OUT"; fail "$(basename "$BT_OUT"): total column $1 is 0"; }
}

run_script latency.bt
sed -n '/since the start/,$p' "$BT_OUT" >"$BT_OUT.end"
BT_OUT="$BT_OUT.end"
expect "^ +from ns +items +share% +cum%$"
expect "^ +[0-9]+ +[1-9][0-9]* +[0-9]+ +100$"
expect "^ +total +$LOAD_ITEMS$"

run_script fusion.bt
expect "^time +batches +groups +launches +avoided +saved% +barriers +splits +bytes_saved$"
nonzero_total 2
nonzero_total 4

run_script dedupe.bt
expect "^time +batches +items +deduped +ratio%$"
expect "^total +[1-9][0-9]* +$LOAD_ITEMS +[0-9]+ +[0-9]+$"
expect "^@deduped_per_batch: $"

LAST="^[0-9:]{8} +[0-9]+ +[0-9]+ " run_script slow_batches.bt 1
expect "^Tracing vyre batches slower than 1 us"
expect "^[0-9:]{8} +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ "
awk '/ batches, / && $1 > 0 && $3 > 0 { ok = 1 } END { exit !ok }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "slow_batches.bt saw no slow batch"; }

LAST="disconnect client [0-9]+ pid @PID@" run_script client_load.bt
expect "connect +client [0-9]+ pid $LOAD_PID uid [0-9]+ domain [0-9]+$"
expect "disconnect client [0-9]+ pid $LOAD_PID reason -?[0-9]+$"
expect "^@total_items\[[0-9]+, $LOAD_PID\]: $LOAD_ITEMS$"
expect "^@total_errors\[[0-9]+, $LOAD_PID\]: 3$"
expect "^@items\[[0-9]+, $LOAD_PID\]: [1-9]"

# The load may come before the loop's first gpu_state (state "-"); one follows within a second.
LAST="^[0-9:]{8} +0 +0 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +0 +8 +0 +0 ok$" run_script gpus.bt
expect "^time +gpu +ord +items/s +batches/s +mean_us +max_us +peak +inflight +slots +domains +clients +state$"
expect "^[0-9:]{8} +0 +0 +[1-9][0-9]* +[1-9][0-9]* +[0-9]+ +[0-9]+ +[1-8] +[0-8] +[08] +[01] +[01] (ok|-)$"
expect "^ +0 +$LOAD_ITEMS +[1-9][0-9]* +3 +[1-9][0-9]* +[1-9][0-9]* +[1-9][0-9]*$"
expect "^@layout_errors: 0$"
run_script latency.bt 0
expect "^Tracing vyre item latency of GPU 0 in "
expect "^ +total +$LOAD_ITEMS$"

# 6. The gpu argument of client_connect and dispatch_begin, and complete's
# gpu and loop (bpftrace 0.17 reads a USDT probe's arg0-arg5 only: the BPF
# program read dispatch_end's arg6 for the GPU row's dispatches in 1).
cat >"$TM_TMP/args.bt" <<'BT'
usdt:$1:vyre:client_connect /pid == $2/ { @connect[arg4] = count(); }
usdt:$1:vyre:dispatch_begin /pid == $2/ { @begin[arg4] = count(); }
usdt:$1:vyre:complete /pid == $2/ {
	@complete[*(uint32 *)(arg0 + 296), *(uint32 *)(arg0 + 300)] = count();
	@items = sum(*(uint32 *)(arg0 + 4));
}
usdt:$1:vyre:gpu_state /pid == $2/ { @state[*(uint32 *)(arg0 + 4), *(uint32 *)(arg0 + 12)] = count(); }
BEGIN { printf("Tracing the gpu arguments\n"); }
BT
LAST="" run_script "$TM_TMP/args.bt"
expect "^@connect\[0\]: 1$"
expect "^@begin\[0\]: [1-9][0-9]*$"
expect "^@complete\[0, 0\]: [1-9][0-9]*$"
# the 3 invalid items' batches may never reach the backend: no dispatch_begin
awk -F': ' '/^@begin\[0\]/ { b = $2 } /^@complete\[0, 0\]/ { c = $2 } END { exit !(c >= b && c - b <= 3) }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "dispatch_begin and complete disagree on GPU 0's batches"; }
expect "^@items: $LOAD_ITEMS$"
expect "^@state\[0, 0\]: [1-9][0-9]*$"
grep -Eq "^@(connect|begin)\[[1-9]|^@(complete|state)\[([1-9]|0, [1-9])" "$BT_OUT" &&
	{ cat "$BT_OUT"; fail "a probe named a GPU or loop other than 0"; }

kill -TERM "$VYRED_PID"
wait "$VYRED_PID" || fail "vyred exited with $?"
echo "telemetry against a live vyred: ok"
