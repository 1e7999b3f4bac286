#!/bin/bash
# Runs everything of the CUDA backend that needs a GPU, from a bundle made by
# `make BUILD=build-cudadev cuda-bundle` and carried to a GPU machine:
#   bash build-cudadev/cuda-bundle/run.sh
# Each step's full output goes to $OUT/<step>.log (default /tmp/vyre-gpu-out);
# the console gets each step's exit status and last lines. A step that runs
# past its limit is killed (timeout), so the run itself can never hang.
cd "$(dirname "$0")" || exit 1
export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
O=${OUT:-/tmp/vyre-gpu-out}
mkdir -p "$O"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
	uname -r
	nproc
	echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
} >"$O/info.log" 2>&1
cat "$O/info.log"

# What every vyred and test process waits in, and the tails of the test
# daemons' logs: a step that ran past its limit leaves this in $O/<step>.hung
# before it is killed, so that a hang seen once can be read afterwards.
dump_hung() {
	local p t
	for p in $(pgrep -f 'vyred|tests/test_'); do
		echo "=== pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
		for t in /proc/"$p"/task/*; do
			echo "-- ${t##*/} $(cat "$t/comm" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
			head -n 8 "$t/stack" 2>/dev/null
		done
	done
	for t in /tmp/vyre-test-*/vyred.log; do
		[ -f "$t" ] && echo "=== $t" && tail -n 40 "$t"
	done
}

step() {
	local name=$1 limit=$2 t0 rc
	shift 2
	t0=$(date +%s)
	timeout -k 10 "$limit" "$@" >"$O/$name.log" 2>&1 &
	local pid=$!
	# dump a few seconds before timeout kills it
	while kill -0 "$pid" 2>/dev/null && [ $(($(date +%s) - t0)) -lt $((limit - 3)) ]; do
		sleep 0.2
	done
	kill -0 "$pid" 2>/dev/null && dump_hung >"$O/$name.hung" 2>&1
	wait "$pid"
	rc=$?
	echo "== $name: exit $rc after $(($(date +%s) - t0)) s"
	tail -n "${TAILN:-6}" "$O/$name.log"
	[ -s "$O/$name.hung" ] && echo "   (ran past its limit: $O/$name.hung has the processes' stacks)"
}

step lower 120 ./tests/test_cuda_lower
step immediate 120 ./tests/test_cuda_immediate
step diff "${DIFF_LIMIT:-300}" ./tests/test_cuda_diff
step dfa "${DFA_LIMIT:-300}" ./tests/test_cuda_dfa
step report "${REPORT_LIMIT:-300}" ./tests/test_cuda_report
step modules "${MODULES_LIMIT:-300}" ./tests/test_cuda_modules
step opmod-device 120 ./tests/test_opmod_device
step examples 200 ./tests/test_cuda_examples
VYRE_BUILD=$PWD step ops-dir 200 ./tests/test_ops_dir_cuda
step fault 180 ./tests/test_cuda_fault
step inflight "${INFLIGHT_LIMIT:-300}" ./tests/test_cuda_inflight
step e2e "${E2E_LIMIT:-300}" ./tests/test_cuda_e2e
# the pool on a small grid: several slots share a lane (a watchdog trip then
# has launches after it that finished, which must not run again) and teams
# wait for blocks
VYRE_CUDA_MAX_BLOCKS=8 step inflight-grid8 120 ./tests/test_cuda_inflight
VYRE_CUDA_MAX_BLOCKS=4 step diff-grid4 120 ./tests/test_cuda_diff
# NO_BENCH=1: the tests alone (a shorter run, e.g. on a multi-GPU lease)
if [ -z "$NO_BENCH" ]; then
# the SM clock while the benchmark runs: an idle GPU clocks down, which a
# single-item latency feels
nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv,noheader -lms 500 \
	>"$O/clocks.log" 2>&1 &
SMI=$!
step bench "${BENCH_LIMIT:-300}" ./vyre-bench --seconds "${BENCH_SECONDS:-0.5}" cuda
kill "$SMI" 2>/dev/null
sort -t, -k2 -n "$O/clocks.log" | awk -F, '{ c[NR] = $2 } END { if (NR) print "SM clock during the bench (min / median / max):", c[1], "/", c[int((NR + 1) / 2)], "/", c[NR] }' 
grep -E '^cuda ' "$O/bench.log" | grep -v 'graph\|per-item\|launch per' | head -60
grep -E 'mean ns per batch' "$O/bench.log"
# one vyred on 1 GPU against one on 2 (on a one-GPU host: two GPUs of one
# device, rows "2lanes"); about 20 s at 0.5 s a measurement
step gpus "${GPUS_LIMIT:-240}" ./vyre-bench --seconds "${BENCH_SECONDS:-0.5}" gpus
grep -E '^gpus(: (the two-GPU|skipped|no GPU)| )' "$O/gpus.log" | grep -v p999
fi
# restart without loss on the CUDA backend: SIGKILL under load, resume, every
# item once against the oracle; then the pause it costs (design.md 3, 11)
VYRE_TEST_BACKEND=cuda step resume 200 ./tests/test_resume
VYRE_TEST_BACKEND=cuda step resume-edges 200 ./tests/test_resume_edges
# a device fault on one GPU of two under load: the other serves on, the faulting
# GPU's resumable producers resume (design.md 8.5, 8.8); needs two GPUs, else 77
VYRE_TEST_BACKEND=cuda step fault-load 200 ./tests/test_gpu_fault_load
if [ -z "$NO_BENCH" ]; then
step restart 200 ./vyre-bench restart
grep -E '^restart' "$O/restart.log" | head -20
# a class-1 producer beside a class-0 flood, with and without classes (design.md 8.9)
step priority 200 ./vyre-bench --seconds "${BENCH_SECONDS:-0.5}" priority
grep -E '^priority' "$O/priority.log" | grep -E 'p50|p99 |ratio|flood '
# the example op modules through vyred against the same device functions in
# each producer's own kernel under MPS (issue 25: >= 2.5 x items/s at 16
# producers, p50 below MPS); about 100 measurements
step modules-bench "${MODULES_BENCH_LIMIT:-600}" ./vyre-bench --seconds "${BENCH_SECONDS:-0.5}" modules
grep -E '^modules(:| .*(:mps|closed (vyre-persistent|mps) 16p +(items/s|p50)))' "$O/modules-bench.log" | head -80
# the same host's CPU-backend end to end, for what vyred itself costs there
step e2e-cpu 120 ./vyre-bench --seconds "${BENCH_SECONDS:-0.5}" e2e
fi
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$S" ] && [ -z "$NO_SANITIZER" ]; then
	VYRE_CUDA_DIFF_BATCHES=40 step memcheck 200 "$S" --tool memcheck --print-limit 20 ./tests/test_cuda_diff
	VYRE_CUDA_DIFF_BATCHES=20 step racecheck 200 "$S" --tool racecheck --print-limit 20 ./tests/test_cuda_diff
	VYRE_CUDA_DFA_BATCHES=8 VYRE_CUDA_DFA_BIG=0 step dfa-memcheck 300 "$S" --tool memcheck --print-limit 20 ./tests/test_cuda_dfa
	VYRE_CUDA_DFA_BATCHES=3 VYRE_CUDA_DFA_BIG=0 step dfa-racecheck 300 "$S" --tool racecheck --print-limit 20 ./tests/test_cuda_dfa
	VYRE_CUDA_REPORT_BATCHES=10 step report-memcheck 300 "$S" --tool memcheck --print-limit 20 ./tests/test_cuda_report
	VYRE_CUDA_REPORT_BATCHES=4 step report-racecheck 300 "$S" --tool racecheck --print-limit 20 ./tests/test_cuda_report
fi
