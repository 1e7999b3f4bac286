#!/bin/sh
# test_layers: the sources stay in the layers of tools/layers.conf
# (docs/layers.md), and the check that says so fails on planted violations.
#  - tools/layers.py passes on the tree, with the calls of this build's objects;
#  - on a small tree of its own it passes a clean tree and fails, naming the
#    culprit, on: an include of a higher layer, a circle of calls (seen only
#    in the objects), a folder using a folder ranked above it, a file with no
#    layer, a layer line naming no file;
#  - on the real tree it fails when the list is changed so that tools/vyred
#    ranks below gpu, and when tools/vyred's bottom layer is moved to the top.
# Skips (77) without python3.
src=@VYRE_SRCDIR@
build=@VYRE_BUILD@
cc=${CC:-cc}

command -v python3 >/dev/null 2>&1 || {
	echo "python3 is not installed (apt-get install python3): cannot run tools/layers.py"
	exit 77
}
check="python3 $src/tools/layers.py"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# expect_fail NAME PATTERN ARGS...: the check exits 1 and prints PATTERN
expect_fail() {
	name=$1 pattern=$2
	shift 2
	$check "$@" >"$tmp/out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || bad "$name: exit $rc, expected 1: $(cat "$tmp/out")"
	grep -q -- "$pattern" "$tmp/out" || bad "$name: no line with '$pattern' in: $(cat "$tmp/out")"
}

# the tree itself
$check --root "$src" --build "$build" >"$tmp/out" 2>&1 || bad "the tree: $(cat "$tmp/out")"
cat "$tmp/out"

# a small tree: folder a (rank 0) with low (layer 0) and high (layer 1),
# folder b (rank 1) with top, which uses a
t=$tmp/t
mkdir -p "$t/a" "$t/b" "$t/build/obj/a" "$t/build/obj/b"
printf 'int low_f(void);\n' >"$t/a/low.h"
printf '#include "low.h"\nint low_f(void) { return 1; }\n' >"$t/a/low.c"
printf 'int high_f(void);\n' >"$t/a/high.h"
printf '#include "high.h"\n#include "low.h"\nint high_f(void) { return low_f(); }\n' >"$t/a/high.c"
printf '#include "../a/high.h"\nint top_f(void) { return high_f(); }\n' >"$t/b/top.c"
cat >"$t/conf" <<EOF
folder a 0
folder b 1
layer a 0 low
layer a 1 high
layer b 0 top
EOF
build_objs() {
	for f in a/low a/high b/top; do
		$cc -c "$t/$f.c" -o "$t/build/obj/$f.o" || bad "cc $f.c"
	done
}
build_objs
$check --root "$t" --conf "$t/conf" --build "$t/build" >"$tmp/out" 2>&1 ||
	bad "clean small tree: $(cat "$tmp/out")"

# a lower layer includes a higher one
cp "$t/a/low.c" "$tmp/low.c.orig"
printf '#include "high.h"\n' >>"$t/a/low.c"
expect_fail "include up" "a/low (layer 0) uses a/high (layer 1)" --root "$t" --conf "$t/conf"
cp "$tmp/low.c.orig" "$t/a/low.c"

# a circle only the objects show: low calls high through its own declaration
printf 'int high_f(void);\nint low_g(void) { return high_f(); }\n' >>"$t/a/low.c"
build_objs
expect_fail "call up" "a/low (layer 0) uses a/high (layer 1): calls high_f" \
	--root "$t" --conf "$t/conf" --build "$t/build"
expect_fail "circle" "circle: a/high <-> a/low" --root "$t" --conf "$t/conf" --build "$t/build"
cp "$tmp/low.c.orig" "$t/a/low.c"
build_objs

# a folder uses a folder ranked above it
sed -e 's/^folder a 0/folder a 2/' "$t/conf" >"$t/conf.rank"
expect_fail "folder rank" "b/top (folder rank 1) uses a/high (folder rank 2)" \
	--root "$t" --conf "$t/conf.rank"

# a file with no layer, a layer naming no file
printf 'int new_f(void) { return 0; }\n' >"$t/a/new.c"
expect_fail "no layer" "a/new: no layer" --root "$t" --conf "$t/conf"
rm "$t/a/new.c"
printf 'layer a 2 gone\n' >>"$t/conf"
expect_fail "stale line" "a/gone: listed" --root "$t" --conf "$t/conf"

# the real tree with a wrong list: tools/vyred below gpu
conf=$src/tools/layers.conf
gpu_rank=$(awk '$1 == "folder" && $2 == "gpu" { print $3 }' "$conf")
awk -v r="$gpu_rank" '$1 == "folder" && $2 == "tools/vyred" { $3 = r - 1 } { print }' \
	"$conf" | awk '$1 == "folder" && $3 < 0 { next } { print }' >"$tmp/rank.conf"
grep -q '^folder tools/vyred' "$tmp/rank.conf" &&
	expect_fail "vyred below gpu" "tools/vyred/.*(folder rank" --root "$src" --conf "$tmp/rank.conf"

# ... and tools/vyred's bottom layer moved to the top
awk '$1 == "layer" && $2 == "tools/vyred" && $3 == 0 { $3 = 99 } { print }' "$conf" >"$tmp/top.conf"
expect_fail "vyred base on top" "(layer 99)" --root "$src" --conf "$tmp/top.conf" --build "$build"

[ "$fail" -eq 0 ] && echo "test_layers: ok"
exit "$fail"
