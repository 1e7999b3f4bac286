#!/bin/sh
# make demo: start vyred on a temporary socket with --backend auto, run the
# multi-producer demo against it, print what happened, stop vyred with
# SIGTERM and check that it exited 0 and removed its socket.
# usage: tools/demo.sh [DIR] [PRODUCERS] [ITEMS_PER_PRODUCER]
# DIR holds vyred and vyre-demo: a build directory, or where they are
# installed (/usr/bin); by default build/, else the vyred on $PATH.
set -u
default=build
[ -x build/vyred ] || default=$(dirname "$(command -v vyred || echo build/vyred)")
build=${1:-$default}
producers=${2:-4}
items=${3:-50000}
dir=$(mktemp -d /tmp/vyre-demo.XXXXXX) || exit 1
sock=$dir/vyre.sock
log=$dir/vyred.log
trap 'rm -rf "$dir"' EXIT

"$build/vyred" --socket "$sock" --backend auto 2>"$log" &
pid=$!
tries=0
until grep -q 'vyred: ready' "$log" 2>/dev/null; do
	if ! kill -0 "$pid" 2>/dev/null || [ "$tries" -ge 300 ]; then
		echo "demo: vyred did not start:"
		sed 's/^/  | /' "$log"
		kill -9 "$pid" 2>/dev/null
		exit 1
	fi
	tries=$((tries + 1))
	sleep 0.1
done
echo "demo: vyred running (pid $pid) on $sock"
sed -n 's/^vyred: \(backend.*\)/  \1/p; s/^vyred: \(doorbells.*\)/  \1/p' "$log"

"$build/vyre-demo" --socket "$sock" --producers "$producers" --items "$items"
demo_rc=$?

kill -TERM "$pid"
wait "$pid"
vyred_rc=$?
echo "demo: vyred stopped with SIGTERM: exit $vyred_rc$([ -e "$sock" ] && echo ', socket LEFT BEHIND' || echo ', socket removed')"
sed -n 's/^vyred: \(stopped.*\)/  \1/p' "$log"
# what the planner saved, from vyred's exit log (tools/vyred/loops.c)
sed -n 's/^vyred: planner: \(.*\)/\1/p' "$log" | tr ';' '\n' | sed 's/^ *//' | {
	IFS= read -r items && IFS= read -r bytes || exit 0
	echo "demo: what the planner did for this workload:"
	echo "$items" | sed 's/: /:\n    /; s/, \([0-9]* executed\)/,\n    \1/; s/^/  /'
	echo "  $bytes"
}
if [ "$demo_rc" -ne 0 ] || [ "$vyred_rc" -ne 0 ] || [ -e "$sock" ]; then
	echo "demo: FAILED; vyred's log:"
	sed 's/^/  | /' "$log"
	exit 1
fi
echo "demo: OK"
