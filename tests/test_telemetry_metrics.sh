#!/bin/bash
# vyre-top's Prometheus/OpenMetrics export against a live vyred (CPU backend)
# under a load the producer counts from its own CQEs, read with Debian's
# python3-prometheus-client parsers:
#   1. --openmetrics: every count equals the load, items that failed before
#      planning and at execution (a DFA table written malformed) both count
#      as invalid, histogram buckets are cumulative with +Inf = _count = the
#      items, the GPU and the client series carry their labels
#   2. --listen 127.0.0.1:0: curl gets the 0.0.4 text format by default and
#      OpenMetrics when its Accept asks, both equal to a second load; other
#      paths are 404; a client that connects and says nothing neither delays
#      a scrape nor stops vyre-top
#   3. --listen refuses an address that is not loopback
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_tool curl
tm_require_prometheus

VYRED="$BUILD/vyred"
PRODUCER="$BUILD/tests/vyre-tm-producer"
SCALE=${VYRE_TEST_SCALE:-1}
PAIRS=$((100 * SCALE))
SOCK="$TM_TMP/vyre.sock"

"$VYRED" --socket "$SOCK" --backend cpu 2>"$TM_TMP/vyred.log" &
VYRED_PID=$!
tm_track "$VYRED_PID"
tm_wait_for "$TM_TMP/vyred.log" "ready \(pid $VYRED_PID\)" 30 || fail "vyred did not start"

# check.py FORMAT FILE LOAD VYRED_PID: the exposition against the load.
cat >"$TM_TMP/check.py" <<'PY'
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families as prom
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om

fmt, path, load_path, vyred_pid = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
text = open(path).read()
load = json.loads(open(load_path).read())
if fmt == "openmetrics":
    assert text.endswith("# EOF\n"), "no # EOF"
fams = {f.name: f for f in (om if fmt == "openmetrics" else prom)(text)}

def one(name, sample=None, **labels):
    f = fams[name]
    sample = sample or (name + "_total" if f.type == "counter" else name)
    got = [s for s in f.samples if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(got) == 1, (name, labels, got)
    return got[0].value

want = dict(vyre_items=load["items"], vyre_completed_items=load["items"],
            vyre_failed_items=load["errors"], vyre_errors=load["errors"],
            vyre_invalid_items=load["rejected"] + load["exec_invalid"],
            vyre_deduped_items=load["deduped"], vyre_executed_items=load["executed"],
            vyre_client_connects=1, vyre_client_disconnects=1, vyre_dispatch_errors=0,
            vyre_top_layout_errors=0, vyre_readback_bytes=load["readback"])
for name, v in want.items():
    assert fams[name].type == "counter", (name, fams[name].type)
    assert one(name) == v, f"{name} = {one(name)}, the producer says {v}"
assert load["exec_invalid"] > 0 and load["rejected"] > 0, load

info = "vyre_daemon" if fmt == "openmetrics" else "vyre_daemon_info"
assert fams[info].type == ("info" if fmt == "openmetrics" else "gauge")
d = fams[info].samples[0].labels
assert (d["pid"], d["backend"], d["mode"]) == (vyred_pid, "cpu", "none"), d

def histogram(name, count, **labels):
    f = fams[name]
    assert f.type == "histogram", (name, f.type)
    buckets = [s for s in f.samples if s.name == name + "_bucket"
               and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(buckets) == 64, (name, len(buckets))
    les = [float(s.labels["le"]) for s in buckets]
    assert les == sorted(les) and les[-1] == math.inf, les
    values = [s.value for s in buckets]
    assert all(a <= b for a, b in zip(values, values[1:])), f"{name}: buckets not cumulative"
    total = one(name, name + "_count", **labels)
    assert values[-1] == total == count, (name, values[-1], total, count)
    return one(name, name + "_sum", **labels), buckets

lat_sum, lat = histogram("vyre_item_latency_seconds", load["items"])
assert fams["vyre_item_latency_seconds"].unit == ("seconds" if fmt == "openmetrics" else "")
assert lat_sum > 0 and float(lat[0].labels["le"]) == 0.0
assert abs(float(lat[10].labels["le"]) - 1023e-9) < 1e-15, lat[10].labels  # 2^10 - 1 ns
batches = one("vyre_batches")
bsum, _ = histogram("vyre_batch_items", batches)
assert bsum == load["items"], bsum
assert load["round_trips"] <= batches <= load["items"], (batches, load)
histogram("vyre_plan_duration_seconds", batches)

gpu = "vyre_gpu" if fmt == "openmetrics" else "vyre_gpu_info"
g = [s.labels for s in fams[gpu].samples]
assert g == [dict(gpu="0", ordinal="0", name="cpu", backend="cpu", mode="none")], g
assert one("vyre_gpu_completed_items", gpu="0") == load["items"]
assert one("vyre_gpu_failed_items", gpu="0") == load["errors"]
assert one("vyre_gpu_lost", gpu="0") == 0
histogram("vyre_gpu_item_latency_seconds", load["items"], gpu="0")

client = "vyre_client" if fmt == "openmetrics" else "vyre_client_info"
rows = fams[client].samples
assert len(rows) == 1 and rows[0].labels["pid"] == str(load["pid"]), rows
cid = rows[0].labels["client"]
assert rows[0].labels["gpu"] == "0" and rows[0].labels["class"] == "0", rows[0].labels
assert one("vyre_class_completed_items", **{"class": "0"}) == load["items"]
histogram("vyre_class_item_latency_seconds", load["items"], **{"class": "0"})
assert one("vyre_client_items", client=cid, pid=str(load["pid"])) == load["items"]
assert one("vyre_client_errors", client=cid, pid=str(load["pid"])) == load["errors"]
assert one("vyre_client_connected", client=cid, pid=str(load["pid"])) == 0
print(fmt, "ok:", load, "batches", batches)
PY

# 1. One exposition after one refresh period that outlasts the load.
for d in 3 8 20; do
	t0=$(date +%s%N)
	"$TOP" --socket "$SOCK" --openmetrics -d "$d" >"$TM_TMP/once.txt" 2>"$TM_TMP/once.err" &
	top=$!
	tm_track "$top"
	tm_wait_for "$TM_TMP/once.err" "attached to pid $VYRED_PID, 12 of 12 probes" 60 ||
		fail "vyre-top --openmetrics did not attach"
	"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --invalid 3 --bad-tables 4 --readback 2 \
		>"$TM_TMP/load1.json" || fail "the producer failed"
	t1=$(date +%s%N)
	wait "$top" || fail "vyre-top --openmetrics exited with $?: $(cat "$TM_TMP/once.err")"
	[ $((t1 - t0)) -lt $((d * 1000000000)) ] && break
	[ "$d" -lt 20 ] || fail "the load never finished within vyre-top's refresh period"
done
"$PY" "$TM_TMP/check.py" openmetrics "$TM_TMP/once.txt" "$TM_TMP/load1.json" "$VYRED_PID" ||
	fail "vyre-top --openmetrics against the load"

# 3 first: a non-loopback address is refused before anything is attached.
"$TOP" --socket "$SOCK" --listen 0.0.0.0:0 2>"$TM_TMP/refused.err" &&
	fail "--listen 0.0.0.0:0 was accepted"
grep -q "not a loopback address" "$TM_TMP/refused.err" || fail "refusal: $(cat "$TM_TMP/refused.err")"

# 2. The scrape endpoint.
"$TOP" --socket "$SOCK" --listen 127.0.0.1:0 -d 0.2 2>"$TM_TMP/listen.err" &
LISTEN_PID=$!
tm_track "$LISTEN_PID"
tm_wait_for "$TM_TMP/listen.err" "serving http://127\.0\.0\.1:[0-9]+/metrics" 60 ||
	fail "vyre-top --listen did not start serving"
ADDR=$(sed -n 's|.*serving http://\([0-9.:]*\)/metrics.*|\1|p' "$TM_TMP/listen.err")
# A client that connects and says nothing, held open over the scrapes.
exec 9<>"/dev/tcp/127.0.0.1/${ADDR##*:}" || fail "cannot connect to $ADDR"
"$PRODUCER" --socket "$SOCK" --pairs "$PAIRS" --invalid 2 --bad-tables 3 \
	>"$TM_TMP/load2.json" || fail "the second producer failed"
sleep 1.3 # a gpu_state (once a second) and refreshes after the load
code=$(curl -s --max-time 5 -o "$TM_TMP/prom.txt" -D "$TM_TMP/prom.hdr" -w '%{http_code}' \
	"http://$ADDR/metrics") || fail "curl /metrics failed beside a silent client"
[ "$code" = 200 ] || fail "GET /metrics: HTTP $code"
grep -qi '^content-type: text/plain; version=0.0.4' "$TM_TMP/prom.hdr" ||
	fail "default scrape: $(cat "$TM_TMP/prom.hdr")"
"$PY" "$TM_TMP/check.py" prometheus "$TM_TMP/prom.txt" "$TM_TMP/load2.json" "$VYRED_PID" ||
	fail "the 0.0.4 scrape against the second load"
curl -sf --max-time 5 -o "$TM_TMP/om.txt" -D "$TM_TMP/om.hdr" \
	-H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
	"http://$ADDR/metrics" || fail "the OpenMetrics scrape failed"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$TM_TMP/om.hdr" ||
	fail "OpenMetrics scrape: $(cat "$TM_TMP/om.hdr")"
"$PY" "$TM_TMP/check.py" openmetrics "$TM_TMP/om.txt" "$TM_TMP/load2.json" "$VYRED_PID" ||
	fail "the OpenMetrics scrape against the second load"
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$ADDR/") || fail "curl /"
[ "$code" = 404 ] || fail "GET /: HTTP $code, want 404"
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$ADDR/metricsx") ||
	fail "curl /metricsx"
[ "$code" = 404 ] || fail "GET /metricsx: HTTP $code, want 404"
sleep 6 # past the silent client's deadline
kill -0 "$LISTEN_PID" 2>/dev/null || fail "vyre-top --listen exited: $(cat "$TM_TMP/listen.err")"
exec 9<&-
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$ADDR/metrics") ||
	fail "curl after the silent client"
[ "$code" = 200 ] || fail "GET /metrics after the silent client: HTTP $code"
kill -TERM "$LISTEN_PID"
wait "$LISTEN_PID" || fail "vyre-top --listen exited with $? on SIGTERM"
echo "PASS: test_telemetry_metrics"
