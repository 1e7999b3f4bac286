# tests/telemetry_lib.sh - helpers shared by the telemetry shell tests.
# Sourced by tests/test_telemetry_*.sh after they set SRCDIR and BUILD.
# Every background process a test starts is recorded in TM_PIDS and stopped,
# by pid, when the test exits.

TM_TMP=$(mktemp -d /tmp/vyre-tm.XXXXXX)
TM_PIDS=""
TOP="$BUILD/vyre-top"
FIXTURE="$BUILD/tests/vyre-tm-fixture"
SCRIPTS="$SRCDIR/bpf/scripts"

tm_cleanup() {
	for p in $TM_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $TM_PIDS; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$TM_TMP"
}
trap tm_cleanup EXIT

tm_track() {
	TM_PIDS="$TM_PIDS $1"
}

fail() {
	echo "FAIL: $*"
	exit 1
}

skip() {
	echo "$*"
	exit 77
}

# Skip (77) unless this process may load BPF and attach uprobes.
tm_require_bpf() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to load BPF and attach uprobes"
	msg=$("$TOP" --check 2>&1) || skip "BPF unavailable: $msg"
}

tm_require_tool() {
	command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed (make setup installs it)"
}

# Fail unless Debian's python3-prometheus-client is there; PY is the python3
# to parse expositions with (the module lives in /usr/lib/python3/dist-packages).
tm_require_prometheus() {
	PY=/usr/bin/python3
	"$PY" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null ||
		fail "python3-prometheus-client is not installed (make setup installs it)"
}

# tm_wait_for FILE REGEX [SECONDS]: wait until FILE has a line matching REGEX.
tm_wait_for() {
	n=$(( ${3:-30} * 10 ))
	while [ "$n" -gt 0 ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	echo "timed out waiting for /$2/ in $1:"
	tail -n 20 "$1" 2>/dev/null | sed 's/^/    /'
	return 1
}

# Start the probe fixture; FIX_PID is its pid, tm_fixture sends it commands.
tm_fixture_start() {
	mkfifo "$TM_TMP/fixture.in"
	"$FIXTURE" "$@" <"$TM_TMP/fixture.in" >"$TM_TMP/fixture.out" 2>&1 &
	FIX_PID=$!
	tm_track "$FIX_PID"
	exec 7>"$TM_TMP/fixture.in"
	tm_wait_for "$TM_TMP/fixture.out" "^ready " 10 || fail "the fixture did not start"
	FIX_DONE=0
}

# tm_fixture CMD: send a command; for "go N" and "bad", wait until it is done.
tm_fixture() {
	echo "$1" >&7
	case $1 in
	go\ * | bad)
		FIX_DONE=$((FIX_DONE + 1))
		n=300
		while [ "$(grep -c '^done ' "$TM_TMP/fixture.out")" -lt "$FIX_DONE" ]; do
			n=$((n - 1))
			[ "$n" -gt 0 ] || fail "the fixture did not finish '$1'"
			sleep 0.1
		done
		;;
	esac
}

tm_fixture_stop() {
	echo quit >&7
	exec 7>&-
	wait "$FIX_PID"
}

# tm_bpftrace_start SCRIPT ARGS...: run a bpftrace script in the background
# until tm_bpftrace_stop; waits until its probes are attached.
tm_bpftrace_start() {
	BT_OUT="$TM_TMP/$(basename "$1").out"
	bpftrace "$@" >"$BT_OUT" 2>"$BT_OUT.err" &
	BT_PID=$!
	tm_track "$BT_PID"
	tm_wait_for "$BT_OUT" "^Attaching [0-9]+ probe" 60 || {
		cat "$BT_OUT.err"
		fail "bpftrace $1 did not attach"
	}
	# The BEGIN line follows the attachment of every probe.
	tm_wait_for "$BT_OUT" "^Tracing " 30 || fail "bpftrace $1 did not start"
}

# Stop it with SIGINT so its END block prints the totals. bpftrace 0.17 can
# miss a SIGINT that lands just before it blocks in epoll_wait (a script with
# no interval probe then sleeps on): repeat the signal until it has exited.
tm_bpftrace_stop() {
	n=0
	while kill -INT "$BT_PID" 2>/dev/null; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$BT_PID" 2>/dev/null || break 2
			sleep 0.2
		done
		n=$((n + 1))
		[ "$n" -lt 30 ] || fail "bpftrace ignored SIGINT for a minute"
	done
	wait "$BT_PID"
	rc=$?
	[ "$rc" -eq 0 ] || {
		cat "$BT_OUT.err"
		fail "bpftrace exited with $rc"
	}
}

# tm_items FILE...: the items the producers' JSON outputs (vyre-tm-producer) add up to.
tm_items() {
	python3 -c 'import json,sys; print(sum(json.load(open(a))["items"] for a in sys.argv[1:]))' "$@"
}

# tm_idle_top SOCKET OUT: one `vyre-top --json` refresh 1.5 s after it
# attached (so at least one gpu_state of every loop) into OUT.
tm_idle_top() {
	"$TOP" --socket "$1" --json -n 1 -d 1.5 >"$2" 2>"$2.err" || fail "idle vyre-top: $(cat "$2.err")"
}

# tm_top_start OUT N D ARGS...: run `vyre-top -b -n N -d D ARGS...` in the
# background, stdout to OUT, and wait until it has attached.
tm_top_start() {
	TOP_OUT=$1
	TOP_N=$2
	TOP_D=$3
	shift 3
	TOP_T0=$(date +%s%N)
	"$TOP" -b -n "$TOP_N" -d "$TOP_D" "$@" >"$TOP_OUT" 2>"$TOP_OUT.err" &
	TOP_PID=$!
	tm_track "$TOP_PID"
	tm_wait_for "$TOP_OUT.err" "attached to pid [0-9]+, [0-9]+ of 12 probes" 60 || fail "vyre-top did not attach"
}

# tm_top_finish: call right after the load is complete; waits for vyre-top.
# Succeeds when the load surely ended before vyre-top's last refresh (which
# comes at least N*D seconds after it started), so its output must hold the
# whole load; fails when the load took too long to tell: retry with a larger D.
tm_top_finish() {
	t1=$(date +%s%N)
	wait "$TOP_PID" || fail "vyre-top exited with $?: $(cat "$TOP_OUT.err")"
	budget=$(awk -v n="$TOP_N" -v d="$TOP_D" 'BEGIN { printf "%d", n * d * 1e9 }')
	[ $((t1 - TOP_T0)) -lt "$budget" ] && return 0
	echo "note: the load outlasted vyre-top's refreshes (-d $TOP_D); again with a longer interval"
	return 1
}
