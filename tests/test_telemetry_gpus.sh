#!/bin/bash
# Telemetry of a vyred driving two GPUs: `vyred --backend cpu --gpus 0,1`,
# two CPU backend instances labelled GPU 0 and GPU 1 (docs/design.md 8.8),
# each in a GPU worker process of its own under vyred's supervisor (which
# fires no probe: vyre-top and the scripts, given the supervisor, follow its
# workers), whose private domains are placed on them in turn:
#   1. an idle vyre-top shows both GPU rows from gpu_state alone
#   2. four held producers: each client row names its GPU, both GPUs get
#      clients, and the items of the clients of a GPU are that GPU's items
#      (vyre-top --json); an idle look then counts each GPU's clients,
#      domains and items since start
#   3. the gpu arguments per worker with bpftrace given the supervisor's
#      pid: client_connect and dispatch_begin, and complete's gpu and loop
#      (one loop a GPU: loop == gpu, each as its worker numbers it); gpus.bt's
#      totals
#   4. vyre-top follows the workers: producers on both GPUs, every item
#      counted once; GPU 1's worker killed (SIGKILL) while a client is held
#      on each GPU: its client is shown gone, the supervisor starts a new
#      worker, vyre-top attaches to it (and lets the dead one go), and the
#      items of new producers on it add to the same totals
#   5. a device fault on GPU 1 (VYRE_CPU_INJECT=fault VYRE_INJECT_DEVICE=1):
#      its loop fires gpu_state with lost set at once (within 10 ms of the
#      fault's error probe, where the 1 s timer would take up to a second),
#      and vyre-top shows GPU 1 LOST beside GPU 0 ok, then ok again once it
#      follows the supervisor's new worker for GPU 1, its errors kept
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

# worker LOG GPU N: the pid of the Nth worker the supervisor started for GPU
# (ordinal == index here), from its log line.
worker() {
	sed -n "s/^vyred: GPU $2 (ordinal $2): worker pid \([0-9]*\) starting$/\1/p" "$1" | sed -n "$3p"
}
W0=$(worker "$TM_TMP/vyred.log" 0 1)
W1=$(worker "$TM_TMP/vyred.log" 1 1)
[ -n "$W0" ] && [ -n "$W1" ] || fail "vyred named no GPU worker pids: $(cat "$TM_TMP/vyred.log")"

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
assert [r["gpu"] for r in g] == [0, 1], (o["workers"], o["totals"]["gpu_states"], g)
for i, r in enumerate(g):
    want = dict(have_state=True, ordinal=i, backend="cpu", mode="none", state="ok", lost=False,
                loops=1, loops_per_gpu=1, slots=8, running=0, clients=clients[i],
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
# The supervisor's pid, as the shipped scripts take it: its children (the
# workers) fire the probes. A worker numbers its GPUs from 0 (GPU 1's worker
# fires 0) or as --gpus does (1): either is taken, keyed by the worker.
SUPER='(pid == $2 || curtask->real_parent->tgid == $2)'
cat >"$TM_TMP/args.bt" <<BT
usdt:\$1:vyre:client_connect /$SUPER/ { @connect[pid, arg4] = count(); }
usdt:\$1:vyre:dispatch_begin /$SUPER/ { @begin[pid, arg4] = count(); }
usdt:\$1:vyre:complete /$SUPER/ {
	@complete[pid, *(uint32 *)(arg0 + 296), *(uint32 *)(arg0 + 300)] = sum(*(uint32 *)(arg0 + 4));
}
BEGIN { printf("Tracing the gpu arguments\\n"); }
BT
run_bt "$TM_TMP/args.bt" args
expect "^@connect\[$W0, 0\]: 1$"
expect "^@connect\[$W1, [01]\]: 1$"
expect "^@begin\[$W0, 0\]: [1-9][0-9]*$"
expect "^@begin\[$W1, [01]\]: [1-9][0-9]*$"
expect "^@complete\[$W0, 0, 0\]: [1-9][0-9]*$"
expect "^@complete\[$W1, (0, 0|1, 1)\]: [1-9][0-9]*$"
awk -F': ' '/^@complete/ { n += $2 } END { exit n != '"$ITEMS"' }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "complete's items over both GPUs are not $ITEMS"; }
grep -E "^@(connect|begin|complete)\[" "$BT_OUT" |
	grep -Evq "^@(connect|begin)\[($W0, 0|$W1, [01])\]|^@complete\[($W0, 0, 0|$W1, (0, 0|1, 1))\]" &&
	{ cat "$BT_OUT"; fail "a probe named a process, GPU or loop that does not exist"; }

# Given the supervisor's pid, gpus.bt sees both workers' items (a worker that
# numbers its GPU 0 shares that row with GPU 0's, see its header).
run_bt "$SCRIPTS/gpus.bt" gpus
expect "^[0-9:]{8} +0 +[01] +[1-9][0-9]* .* +(ok|-)$"
awk '$1 == "0" || $1 == "1" { if (NF == 7) n += $2 } END { exit n != '"$ITEMS"' }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "gpus.bt's totals over both GPUs are not $ITEMS"; }

# 4. vyre-top follows the workers, across a restart of one of them.
FOLLOW="$TM_TMP/follow.json"
# follow_wait SECONDS PYTHON: wait until PYTHON holds of a line `o` of
# vyre-top's output FOLLOW (with `env` the environment); prints the last
# line when none does.
follow_wait() {
	n=$(($1 * 4))
	while [ "$n" -gt 0 ]; do
		python3 - "$FOLLOW" "$2" <<'PY' && return 0
import json, os, sys
env = os.environ
for line in reversed(open(sys.argv[1]).read().splitlines()):
    try:
        o = json.loads(line)
    except ValueError:
        continue  # being written
    if eval("(" + sys.argv[2] + ")"):
        sys.exit(0)
sys.exit(1)
PY
		sleep 0.25
		n=$((n - 1))
	done
	echo "vyre-top's last line: $(tail -n 1 "$FOLLOW")"
	return 1
}
# loads FILE...: the producers' outputs as {pid: items}, in the environment as LOADS
loads() {
	LOADS=$(python3 -c 'import json,sys; print(json.dumps({str(json.load(open(a))["pid"]): json.load(open(a))["items"] for a in sys.argv[1:]}))' "$@")
	export LOADS
}
"$TOP" -b -n 400 -d 0.25 --socket "$SOCK" --json >"$FOLLOW" 2>"$FOLLOW.err" &
FOLLOW_PID=$!
tm_track "$FOLLOW_PID"
tm_wait_for "$FOLLOW.err" "attached to pid $VYRED_PID, 12 of 12 probes" 60 || fail "vyre-top did not attach"
export W0 W1
follow_wait 10 'sorted(o["workers"]) == sorted([int(env["W0"]), int(env["W1"])])' ||
	fail "vyre-top did not attach to both GPU workers"
running=""
for i in 1 2 3 4; do
	"$PRODUCER" --socket "$SOCK" --pairs $((PAIRS * i)) >"$TM_TMP/follow.$i.json" &
	tm_track "$!"
	running="$running $!"
done
for p in $running; do
	wait "$p" || fail "a producer on both GPUs failed"
done
# two clients held, one a GPU (placed in turn)
mkfifo "$TM_TMP/hold.follow"
exec 8<>"$TM_TMP/hold.follow"
for i in 5 6; do
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --hold <"$TM_TMP/hold.follow" \
		>"$TM_TMP/follow.$i.json" 8>&- &
	tm_track "$!"
	eval "export HELD$i=$!"
	tm_wait_for "$TM_TMP/follow.$i.json" '"round_trips"' 120 || fail "held producer $i did not finish"
done
loads "$TM_TMP"/follow.[1-6].json
# every item of both workers counted once, each GPU's items those of its clients
BOTH='sum(env_loads.values()) == o["totals"]["items"] == o["totals"]["completed"] ==
	sum(g["items"] for g in o["gpus"]) and
	all(sum(l for p, l in env_loads.items() if rows[p]["gpu"] == g["gpu"]) == g["items"]
	    for g in o["gpus"]) and {g["gpu"] for g in o["gpus"]} == {0, 1}'
ROWS='(rows := {str(r["pid"]): r for r in o["clients"]}) is not None and
	(env_loads := json.loads(env["LOADS"])) is not None and
	all(rows.get(p, {}).get("items") == l for p, l in env_loads.items())'
follow_wait 10 "$ROWS and $BOTH" || fail "vyre-top did not count the items of both workers"
H1=$(python3 -c 'import json, sys; o = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(next(r["pid"] for r in o["clients"] if r["pid"] in (int(sys.argv[2]), int(sys.argv[3])) and r["gpu"] == 1))' \
	"$FOLLOW" "$HELD5" "$HELD6") || fail "no held client on GPU 1"
export H1
# GPU 1's worker dies; the supervisor starts another, which vyre-top follows
kill -KILL "$W1"
tm_wait_for "$TM_TMP/vyred.log" "GPU 1 \(ordinal 1\): serving again" 30 || fail "GPU 1's worker was not started again"
W1B=$(worker "$TM_TMP/vyred.log" 1 2)
[ -n "$W1B" ] || fail "no second worker of GPU 1 in vyred's log"
export W1B
follow_wait 10 'sorted(o["workers"]) == sorted([int(env["W0"]), int(env["W1B"])]) and
	not next(r for r in o["clients"] if r["pid"] == int(env["H1"]))["connected"] and
	all(r["connected"] for r in o["clients"] if r["pid"] in (int(env["HELD5"]), int(env["HELD6"])) and r["pid"] != int(env["H1"]))' ||
	fail "vyre-top did not follow GPU 1's new worker $W1B (and let $W1 and its client go)"
# new domains go to GPU 1 now (GPU 0 still holds a client's domain)
for i in 7 8; do
	"$PRODUCER" --socket "$SOCK" --pairs $((PAIRS * i)) >"$TM_TMP/follow.$i.json" ||
		fail "a producer after the restart failed"
done
loads "$TM_TMP"/follow.[1-8].json
follow_wait 10 "$ROWS and $BOTH and
	all(rows[str(p)][\"gpu\"] == 1 for p in (json.load(open(f))[\"pid\"] for f in [\"$TM_TMP/follow.7.json\", \"$TM_TMP/follow.8.json\"]))" ||
	fail "vyre-top did not count the items of GPU 1's new worker"
exec 8>&-
wait "$HELD5" "$HELD6"
kill "$FOLLOW_PID"
wait "$FOLLOW_PID"
FOLLOWED=$(tm_items "$TM_TMP"/follow.[1-8].json)

kill -TERM "$VYRED_PID"
wait "$VYRED_PID" || fail "vyred exited with $?"

# 5. GPU 1 faults on its first batch.
SOCK="$TM_TMP/lost.sock"
VYRE_CPU_INJECT=fault VYRE_INJECT_DEVICE=1 "$VYRED" --socket "$SOCK" --backend cpu --gpus 0,1 \
	2>"$TM_TMP/lost.log" &
VYRED_PID=$!
tm_track "$VYRED_PID"
tm_wait_for "$TM_TMP/lost.log" "ready \(pid $VYRED_PID\)" 30 || fail "the faulting vyred did not start"
# the faulting worker's fault and its lost gpu_state (by ordinal: a worker
# may number its GPU 0)
cat >"$TM_TMP/lost.bt" <<BT
usdt:\$1:vyre:error /$SUPER && arg0 == 0 && @fault[pid] == 0/ { @fault[pid] = nsecs; }
usdt:\$1:vyre:gpu_state /$SUPER && *(uint32 *)(arg0 + 28) == 1 && @seen == 0/ {
	@seen = 1;
	printf("lost ordinal %u after %llu us\\n", *(uint32 *)(arg0 + 8), (nsecs - @fault[pid]) / 1000);
}
BEGIN { printf("Tracing the loss\\n"); }
BT
tm_bpftrace_start "$TM_TMP/lost.bt" "$EXE" "$VYRED_PID"
FOLLOW="$TM_TMP/lost.json"
"$TOP" -b -n 400 -d 0.25 --socket "$SOCK" --json >"$FOLLOW" 2>"$FOLLOW.err" &
TOP_PID=$!
tm_track "$TOP_PID"
tm_wait_for "$FOLLOW.err" "attached to pid $VYRED_PID, 12 of 12 probes" 60 || fail "vyre-top did not attach"
mkfifo "$TM_TMP/hold.lost"
exec 8<>"$TM_TMP/hold.lost"
"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --hold <"$TM_TMP/hold.lost" >"$TM_TMP/lost.0.json" 8>&- &
p0=$!
tm_track "$p0"
tm_wait_for "$TM_TMP/lost.0.json" '"round_trips"' 120 || fail "the producer on GPU 0 did not finish"
"$PRODUCER" --socket "$SOCK" --pairs 1 >/dev/null 2>&1 && fail "a producer on the faulting GPU 1 succeeded"
tm_wait_for "$BT_OUT" "^lost ordinal 1 after [0-9]+ us$" 30 || fail "no gpu_state said GPU 1 was lost"
us=$(awk '/^lost ordinal 1 after/ { print $5 }' "$BT_OUT")
[ "$us" -lt 10000 ] || fail "gpu_state said GPU 1 was lost $us us after the fault, not at once"
tm_bpftrace_stop
# GPU 1 LOST beside GPU 0 ok until the supervisor's new worker for GPU 1
# reports (about a second later): then ok again, its errors still counted
GPUS='(g := {r["gpu"]: r for r in o["gpus"]}) is not None and {0, 1} <= set(g) and
	(g[0]["state"], g[0]["lost"]) == ("ok", False) and g[0]["items"] > 0 and g[1]["errors"] > 0'
follow_wait 20 "$GPUS and (g[1][\"state\"], g[1][\"lost\"]) == (\"LOST\", True)" ||
	fail "vyre-top did not show GPU 1 LOST beside GPU 0 ok"
W1B=$(worker "$TM_TMP/lost.log" 1 2)
[ -n "$W1B" ] || fail "GPU 1's worker was not started again after the fault"
export W1B
follow_wait 20 "$GPUS and int(env[\"W1B\"]) in o[\"workers\"] and
	(g[1][\"state\"], g[1][\"lost\"]) == (\"ok\", False)" ||
	fail "vyre-top did not follow GPU 1's new worker after the fault"
kill "$TOP_PID"
wait "$TOP_PID"
exec 8>&-
wait "$p0" || fail "the producer on GPU 0 failed"
kill -TERM "$VYRED_PID"
wait "$VYRED_PID"
echo "telemetry of two GPUs: ok (before bpftrace: GPU 0 $BEFORE0 items, GPU 1 $BEFORE1;" \
	"$FOLLOWED items followed across a restart of GPU 1's worker)"
