#!/bin/bash
# Each bpftrace script of bpf/scripts against the probe fixture, which fires
# known values through vyred's probe macros: the printed figures must be
# exactly the fixture's. Every script has a usage header and an example
# output file next to it.
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_tool bpftrace

for s in latency fusion dedupe slow_batches client_load gpus ops; do
	[ -f "$SCRIPTS/$s.bt" ] || fail "bpf/scripts/$s.bt is missing"
	grep -q "^ \* usage: bpftrace $s.bt VYRED" "$SCRIPTS/$s.bt" || fail "$s.bt has no usage header"
	[ -s "$SCRIPTS/$s.example.txt" ] || fail "bpf/scripts/$s.example.txt is missing"
done

tm_fixture_start

# run SCRIPT ARGS...: trace the fixture through one load, stop, leave $BT_OUT.
# With LAST set, first wait until the output shows it: printf lines travel
# through a perf buffer, and bpftrace may exit before it prints the last ones.
run() {
	tm_bpftrace_start "$SCRIPTS/$1" "$FIXTURE" "${@:2}"
	tm_fixture connect
	tm_fixture gpu
	tm_fixture "go 10"
	tm_fixture bad
	tm_fixture disconnect
	[ -z "$LAST" ] || tm_wait_for "$BT_OUT" "$LAST" 30 || fail "$1 never printed /$LAST/"
	tm_bpftrace_stop
}

# expect REGEX: $BT_OUT has a line matching it.
expect() {
	grep -Eq -- "$1" "$BT_OUT" || { cat "$BT_OUT"; fail "$(basename "$BT_OUT"): no line /$1/"; }
}

run latency.bt
sed -n '/since the start/,$p' "$BT_OUT" >"$BT_OUT.end"
BT_OUT="$BT_OUT.end"
expect "^ +1024 +40 +50 +50$"
expect "^ +16384 +35 +43 +93$"
expect "^ +16777216 +5 +6 +100$"
expect "^ +total +80$"
expect "^@layout_errors: 1$"

# GPU 1 alone: the odd batches, whose slowest item is in bucket 15.
run latency.bt 0 1
expect "^Tracing vyre item latency of GPU 1 in "
sed -n '/since the start/,$p' "$BT_OUT" >"$BT_OUT.end"
BT_OUT="$BT_OUT.end"
expect "^ +1024 +20 +50 +50$"
expect "^ +16384 +20 +50 +100$"
expect "^ +total +40$"

run fusion.bt
expect "^total +10 +30 +20 +10 +33 +20 +10 +40960$"
expect "^@layout_errors: 1$"

run dedupe.bt
expect "^total +10 +80 +20 +25$"
expect "^\[2, 4\) +10 \|@+\|$"

first=$(( FIX_DONE / 2 * 10 )) # batches the fixture fired before the next load
LAST="^[0-9:]{8} +$((first + 10)) " run slow_batches.bt
expect "^Tracing vyre batches slower than 10000 us"
for b in 2 4 6 8 10; do
	expect "^[0-9:]{8} +$((first + b)) +8 +1 +2 +20000 +2508 +5 +3 +2 +2 +1 +1 +3000 +5000$"
done
expect "^10 batches, 5 slow$"
first=$(( FIX_DONE / 2 * 10 ))
LAST="^[0-9:]{8} +$((first + 10)) " run slow_batches.bt 0 10
expect "^10 batches, 10 slow$"

LAST="disconnect client 2" run client_load.bt
expect "connect +client 1 pid 4101 uid 1000 domain 1$"
expect "disconnect client 2 pid 4102 reason -5$"
expect "^@total_items\[1, 4101\]: 30$"
expect "^@total_items\[2, 4102\]: 50$"
expect "^@total_backpressure\[2, 4102\]: 10$"
expect "^@total_errors\[1, 4101\]: 10$"

# Per GPU: even batches on GPU 0 (a 20 ms item each), odd ones on GPU 1
# (lost); the state columns are the loops' gpu_state records summed.
LAST="^[0-9:]{8} +1 +5 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +1 +0 +8 +0 +0 LOST$" run gpus.bt
expect "^time +gpu +ord +items/s +batches/s +mean_us +max_us +peak +inflight +slots +domains +clients +state$"
expect "^[0-9:]{8} +0 +3 +[0-9]+ +[0-9]+ +[0-9]+ +20000 +1 +3 +8 +3 +4 ok$"
expect "^ +0 +40 +5 +5 +2508250 +2047 +33554431$"
expect "^ +1 +40 +5 +5 +10750 +2047 +32767$"
expect "^@layout_errors: 2$"
awk '$2 == 0 && $3 == 3 && $1 ~ /^[0-9:]+$/ { n += $4 } END { exit n != 40 }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "gpus.bt: GPU 0's items per second do not add up to 40"; }

# Per op: ADD 5 items a batch (one failed, two deduplicated), the module op
# 3; names from op_info (sent with the fixture's gpu_state).
LAST="^@items\[3, add\]: " run ops.bt
expect "^@name\[3\]: add$"
expect "^@name\[$((0x8000abcd))\]: crc32c$"
expect "^@module\[$((0x8000abcd))\]: checksums$"
expect "^@total_items\[3\]: 50$"
expect "^@total_failed\[3\]: 10$"
expect "^@total_deduped\[3\]: 20$"
expect "^@total_sum_ns\[3\]: $((10 * 6000 + 5 * 20000000 + 5 * 20000))$"
expect "^@total_max_ns\[3\]: 20000000$"
expect "^@total_items\[$((0x8000abcd))\]: 30$"
expect "^@total_failed\[$((0x8000abcd))\]: 0$"
expect "^@total_sum_ns\[$((0x8000abcd))\]: 600000$"
expect "^@layout_errors: 2$"
awk -F': ' '/^@items\[3, add\]: / { n += $2 } END { exit n != 50 }' "$BT_OUT" ||
	{ cat "$BT_OUT"; fail "ops.bt: add's items per second do not add up to 50"; }

tm_fixture_stop
echo "bpftrace scripts against the fixture: ok"
