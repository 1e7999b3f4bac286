#!/bin/sh
# Runs each test program of the suite: exit 0 passes, 77 skips (the program
# says why), anything else fails. Prints one closing line for CI.
# usage: tests/run.sh DIR TEST...
dir=$1
shift
pass=0 fail=0 skip=0 failed=""
for t in "$@"; do
	start=$(date +%s)
	"$dir/$t" >"$dir/$t.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $t (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $t: $(tail -n 1 "$dir/$t.log")" ;;
	*) fail=$((fail + 1)); failed="$failed $t"; echo "FAIL $t (exit $rc, ${secs}s)"; tail -n 30 "$dir/$t.log" | sed 's/^/    /' ;;
	esac
done
echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
