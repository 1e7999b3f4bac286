#!/bin/bash
# Telemetry against a live vyred (CPU backend) under a load whose every
# figure the producers count from their own CQEs (tests/telemetry_producer.c):
#   1. vyre-top -b -n 3 --json with one producer: items, dedupe, errors,
#      executions, launches and device read-back bytes exactly as produced
#   2. three producers at once: one row each, with its pid and exact items
#   3. the interactive vyre-top in tmux: rows, sort, help, pause, quit
#   4. every bpftrace script for a few seconds: its keys, non-zero counts,
#      and per-client items exactly as produced
#   5. the binaries: vyred carries all 11 probes with semaphores and no
#      libbpf; the VYRE_PROBES=0 build carries none
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
[ "$probes" = "arena backpressure batch_drained client_connect client_disconnect complete dedupe dispatch_begin dispatch_end error plan " ] ||
	fail "vyred's probes: '$probes'"
readelf -n "$VYRED" | grep -q "Semaphore: 0x0*[1-9a-f]" || fail "vyred's probes have no semaphores"
readelf -n "$VYRED" | grep -E "Semaphore: 0x0+$" && fail "a vyred probe without a semaphore"
readelf -n "$BUILD/noprobes/vyred" | grep -q "Provider: vyre" && fail "noprobes/vyred still has probes"
ldd "$VYRED" | grep -q libbpf && fail "vyred links libbpf"

"$VYRED" --socket "$SOCK" --backend cpu 2>"$TM_TMP/vyred.log" &
VYRED_PID=$!
tm_track "$VYRED_PID"
tm_wait_for "$TM_TMP/vyred.log" "ready \(pid $VYRED_PID\)" 30 || fail "vyred did not start"

# 1. One producer, vyre-top found through the socket.
for d in 2 6 18; do
	tm_top_start "$TM_TMP/top.json" 3 "$d" --socket "$SOCK" --json
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --invalid 7 --readback 5 --chains 4 \
		>"$TM_TMP/load.json" ||
		fail "the producer failed"
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
assert o["probes"] == o["probes_total"] == 9, (o["probes"], o["probes_total"])
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
assert (r["pid"], r["items"], r["errors"], r["connected"]) == (load["pid"], load["items"], load["errors"], False), r
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
	done
	ok=0
	tm_top_finish && ok=1
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
    assert (r["items"], r["errors"], r["connected"]) == (l["items"], l["errors"], True), (r, l)
    assert r["sq_entries"] > 0 and r["sq_depth"] == 0
# The default order is items/s, highest first, within one interval.
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
screen_has "backend cpu  mode none  probes 9/9"
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
	tm_bpftrace_start "$SCRIPTS/$1" "$EXE" "$VYRED_PID" "${@:2}"
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --invalid 3 >"$TM_TMP/load.bt.json" ||
		fail "the producer failed under $1"
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

kill -TERM "$VYRED_PID"
wait "$VYRED_PID" || fail "vyred exited with $?"
echo "telemetry against a live vyred: ok"
