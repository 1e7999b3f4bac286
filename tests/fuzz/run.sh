#!/bin/sh
# Runs one libFuzzer harness for a bounded time over a scratch copy of its
# committed corpus and regressions (the committed files are never changed).
# A crash or broken promise fails the run; the input is kept under
# FUZZDIR/crashes/ to be committed to tests/fuzz/regressions/HARNESS/.
#
# usage: tests/fuzz/run.sh FUZZDIR HARNESS [SECONDS]
#   FUZZDIR  where the harness binaries are ($(BUILD)/fuzz)
#   SECONDS  default $VYRE_FUZZ_SECONDS, else 20
# Exit 0: no finding; 1: a finding or a broken run; 77: no libFuzzer here.
set -u

fuzzdir=$1
harness=$2
secs=${3:-${VYRE_FUZZ_SECONDS:-20}}
here=$(cd "$(dirname "$0")" && pwd)
bin=$fuzzdir/fuzz_$harness

if [ ! -x "$bin" ]; then
	if [ -f "$fuzzdir/UNAVAILABLE" ]; then
		cat "$fuzzdir/UNAVAILABLE"
		exit 77
	fi
	echo "$bin is missing: build it with make"
	exit 1
fi
if [ ! -d "$here/corpus/$harness" ]; then
	echo "no corpus at $here/corpus/$harness"
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vyre-fuzz-$harness.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/corpus" "$work/artifacts" "$fuzzdir/crashes"
cp "$here/corpus/$harness"/* "$work/corpus/"
dirs="$work/corpus"
[ -d "$here/regressions/$harness" ] && dirs="$dirs $here/regressions/$harness"

# -timeout: one input may take 10 s (a hang is a finding); -rss_limit_mb: so
# may 2 GiB. ASan's leak check runs at exit.
# shellcheck disable=SC2086
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" $dirs >"$work/log" 2>&1
rc=$?

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
corpus=$(ls "$work/corpus" | wc -l)
found=$(ls "$work/artifacts" | wc -l)
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
	tail -n 60 "$work/log"
	for f in "$work/artifacts"/*; do
		[ -f "$f" ] || continue
		cp "$f" "$fuzzdir/crashes/$harness-$(basename "$f")"
		echo "finding kept: $fuzzdir/crashes/$harness-$(basename "$f")"
	done
	echo "fuzz_$harness: FINDING after ${execs:-?} executions (exit $rc)"
	exit 1
fi
echo "fuzz_$harness: ${execs:-?} executions in ${secs}s, corpus $corpus inputs, no finding"
