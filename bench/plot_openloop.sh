#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/plot_openloop.sh - draws the open-loop rows of vyre-bench's peers
# suite: latency percentiles (p50 solid, p99 dashed, p999 dotted; log y)
# against achieved items/s, one colour per system.
#
#   sh bench/plot_openloop.sh ROWS.json [OUT.png]
#
# ROWS.json is `vyre-bench --json FILE peers` output or the
# peers-openloop.json that `vyre-bench --out DIR peers` writes (one row
# object per line, either way). OUT.png defaults to ROWS.png. Without
# gnuplot it says so and exits 0: the figure is a convenience, the rows are
# the record.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 ROWS.json [OUT.png]" >&2
	exit 2
fi
in=$1
out=${2:-${in%.json}.png}
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "$0: gnuplot is missing (apt-get install gnuplot-nox): no plot drawn" >&2
	exit 0
fi
[ -r "$in" ] || { echo "$0: cannot read $in" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One file per system: achieved items/s, p50, p99, p999 (us), by offered load.
# Row names are "open SYSTEM [inflight=N] Pp LOAD%".
awk -v dir="$tmp" '
function field(line, key,    v) {
	v = line
	if (!sub(".*\"" key "\":", "", v))
		return ""
	sub(/^"/, "", v)
	sub(/[",}].*/, "", v)
	return v
}
field($0, "suite") == "peers" && field($0, "name") ~ /^open / {
	name = field($0, "name")
	n = split(name, w, " ")
	sys = w[2]
	for (i = 3; i <= n - 2; i++)
		sys = sys "_" w[i]
	key = sys SUBSEP w[n]
	if (!(sys in seen)) {
		seen[sys] = 1
		order[++nsys] = sys
	}
	load[key] = w[n] + 0
	m = field($0, "metric")
	val[key, m] = field($0, "value")
	keys[key] = 1
}
END {
	for (k in keys) {
		split(k, part, SUBSEP)
		printf "%s %s %s %s %s\n", load[k], val[k, "items/s"], val[k, "p50"] / 1000,
		       val[k, "p99"] / 1000, val[k, "p999"] / 1000 >> (dir "/" part[1] ".dat")
	}
	for (i = 1; i <= nsys; i++)
		print order[i] > (dir "/systems")
}' "$in"

if [ ! -s "$tmp/systems" ]; then
	echo "$0: no open-loop rows of the peers suite in $in" >&2
	exit 1
fi
plots=""
colour=1
while read -r sys; do
	sort -n "$tmp/$sys.dat" >"$tmp/$sys.sorted"
	label=$(echo "$sys" | tr _ ' ')
	for p in "3:1:p50" "4:2:p99" "5:3:p999"; do
		col=${p%%:*}
		rest=${p#*:}
		dash=${rest%%:*}
		pct=${rest#*:}
		plots="$plots${plots:+, }'$tmp/$sys.sorted' using 2:$col with linespoints lc $colour dt $dash pt 7 ps 0.6 title '$label $pct'"
	done
	colour=$((colour + 1))
done <"$tmp/systems"

gnuplot <<EOF
set terminal pngcairo size 1000,650 noenhanced
set output '$out'
set title 'vyre-bench peers: open loop (Poisson arrivals), latency from arrival'
set xlabel 'achieved items/s'
set format x '%.0s%c'
set ylabel 'latency (us)'
set logscale y
set grid
set key outside right
plot $plots
EOF
echo "$out"
