#!/bin/bash
# Every item is exactly one of deduplicated, invalid or executed
# (docs/design.md 9), and the three readers agree on which. A live vyred
# (CPU backend) runs a load the producer counts from its own CQEs
# (tests/telemetry_producer.c): exact duplicates, items with an unknown op or
# handle (refused before planning), DFA_SCANs through a table an earlier
# item wrote malformed (refused when they run) and identical pairs of those
# (one runs, the other is deduplicated). Then
#   - vyred's exit log (its "planner:" line),
#   - vyre-top --json (totals) and
#   - vyre-top --openmetrics (the *_items_total counters)
# must give the same deduplicated, invalid and executed counts, equal to the
# producer's, summing to the items it submitted.
# VYRE_TEST_SCALE multiplies the load.
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_prometheus

VYRED="$BUILD/vyred"
PRODUCER="$BUILD/tests/vyre-tm-producer"
SCALE=${VYRE_TEST_SCALE:-1}
SOCK="$TM_TMP/vyre.sock"

# One run: a fresh vyred, both vyre-top readers attached before any item,
# the load, then SIGTERM for the exit log. Fails (1) when the load outlasted
# vyre-top's refresh period D.
run() {
	d=$1
	rm -f "$SOCK"
	"$VYRED" --socket "$SOCK" --backend cpu 2>"$TM_TMP/vyred.log" &
	VYRED_PID=$!
	tm_track "$VYRED_PID"
	tm_wait_for "$TM_TMP/vyred.log" "ready \(pid $VYRED_PID\)" 30 || fail "vyred did not start"
	tm_top_start "$TM_TMP/top.json" 1 "$d" --socket "$SOCK" --json
	# started after the JSON one: its one refresh comes later still
	"$TOP" --socket "$SOCK" --openmetrics -d "$d" >"$TM_TMP/om.txt" 2>"$TM_TMP/om.err" &
	om=$!
	tm_track "$om"
	tm_wait_for "$TM_TMP/om.err" "attached to pid $VYRED_PID, 12 of 12 probes" 60 ||
		fail "vyre-top --openmetrics did not attach"
	"$PRODUCER" --socket "$SOCK" --pairs $((200 * SCALE)) --invalid $((20 * SCALE)) \
		--bad-tables $((8 * SCALE)) --bad-pairs $((8 * SCALE)) >"$TM_TMP/load.json" ||
		fail "the producer failed"
	tm_top_finish
	ok=$?
	wait "$om" || fail "vyre-top --openmetrics exited with $?: $(cat "$TM_TMP/om.err")"
	kill -TERM "$VYRED_PID"
	wait "$VYRED_PID" || fail "vyred exited with $? on SIGTERM: $(tail -n 5 "$TM_TMP/vyred.log")"
	return "$ok"
}

for d in 3 8 20; do
	run "$d" && break
	[ "$d" -lt 20 ] || fail "the load never finished within vyre-top's refresh period"
done

"$PY" - "$TM_TMP/load.json" "$TM_TMP/vyred.log" "$TM_TMP/top.json" "$TM_TMP/om.txt" <<'PY' ||
import json, re, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om

load = json.loads(open(sys.argv[1]).read())
assert load["deduped"] > 0 and load["rejected"] > 0 and load["exec_invalid"] > 0, load
items = load["items"]
want = (load["deduped"], load["rejected"] + load["exec_invalid"], load["executed"])
assert sum(want) == items, (want, load)

log = re.findall(r"^vyred: planner: (\d+) items: (\d+) deduplicated, (\d+) invalid, "
                 r"(\d+) executed in ", open(sys.argv[2]).read(), re.M)
assert len(log) == 1, f"{len(log)} planner lines in vyred's log"
log = tuple(int(v) for v in log[0])

tops = [json.loads(line) for line in open(sys.argv[3])]
assert len(tops) == 1, f"{len(tops)} JSON objects"
t = tops[0]["totals"]

fams = {f.name: f for f in om(open(sys.argv[4]).read())}
def counter(name):
    got = [s.value for s in fams[name].samples if s.name == name + "_total"]
    assert len(got) == 1, (name, got)
    return int(got[0])

seen = {
    "vyred's log": (log[0], log[1:]),
    "vyre-top --json": (t["items"], (t["deduped"], t["invalid"], t["executed"])),
    "vyre-top --openmetrics": (counter("vyre_items"),
                               tuple(counter("vyre_" + k + "_items")
                                     for k in ("deduped", "invalid", "executed"))),
}
bad = []
for who, (n, parts) in seen.items():
    print(f"{who}: {n} items: {parts[0]} deduplicated, {parts[1]} invalid, {parts[2]} executed"
          f" (sum {sum(parts)})")
    if n != items or parts != want:
        bad.append(who)
print(f"the producer: {items} items: {want[0]} deduplicated, {want[1]} invalid "
      f"({load['rejected']} refused, {load['exec_invalid']} at execution), {want[2]} executed")
assert not bad, "disagree with the producer: " + ", ".join(bad)
PY
	fail "deduplicated, invalid and executed do not add up or do not agree"
echo "PASS: test_telemetry_partition"
