#!/bin/sh
# test_man: the manual pages in man/ lint clean and cannot silently go stale.
#  - mandoc -T lint -W warning reports nothing for any page;
#  - every public vyre_ function of include/vyre/vyre.h has a page that names
#    it (.Nm) and shows its prototype (.Fn/.Fo);
#  - every VYRE_E_* and VYRE_OP_* of include/vyre/abi.h is an item of
#    libvyre.3, every VYRE_E_* one of vyre_strerror.3 too;
#  - every flag of vyred, vyre-submit, vyre-top and vyre-bench --help is an
#    option item (.It Fl --flag) of its page, every suite of vyre-bench --list
#    an item (.It Cm suite) of vyre-bench.1;
#  - every page another page cites with .Xr exists, when it is one of ours;
#  - every example program (a literal block that starts with #include)
#    compiles against include/.
# Skips (77) without mandoc.
src=@VYRE_SRCDIR@
build=@VYRE_BUILD@
cc=${CC:-cc}

command -v mandoc >/dev/null 2>&1 || {
	echo "mandoc is not installed (apt-get install mandoc): cannot lint the manual pages"
	exit 77
}
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

pages=$(ls man/*.[1-8])
[ -n "$pages" ] || bad "no pages in man/"

for p in $pages; do
	out=$(mandoc -T lint -W warning "$p" 2>&1) || bad "$p: mandoc exit $?"
	[ -z "$out" ] || bad "$p: mandoc -T lint -W warning:
$out"
done

# Declarations in vyre.h start at the left margin with their type; comment
# lines start with ' *' or '/*'.
funcs=$(grep -E '^[a-z]' include/vyre/vyre.h | grep -oE 'vyre_[a-z0-9_]+\(' | tr -d '(' | sort -u)
[ "$(echo "$funcs" | wc -w)" -ge 11 ] || bad "found only these functions in vyre.h: $funcs"
for f in $funcs; do
	grep -qE "^\.Nm $f( |,|\$)" man/*.3 || bad "$f: no page names it (.Nm $f)"
	grep -qE "^\.F[no] $f( |\$)" man/*.3 || bad "$f: no page shows its prototype (.Fn $f)"
done

# Every error code and operation of abi.h's enums.
codes=$(grep -oE '^	VYRE_(E_[A-Z_]+|OP_[A-Z0-9_]+) =' include/vyre/abi.h | tr -d '\t =')
[ "$(echo "$codes" | wc -w)" -ge 20 ] || bad "found only these codes in abi.h: $codes"
for v in $codes; do
	grep -qE "^\.It Dv $v( |\$)" man/libvyre.3 || bad "man/libvyre.3: $v is not an item"
	case $v in
	VYRE_E_*) grep -qE "^\.It Dv $v( |\$)" man/vyre_strerror.3 ||
		bad "man/vyre_strerror.3: $v is not an item" ;;
	esac
done

# Long flags at the start of --help's option lines ("  --flag", "  -x, --flag").
help_flags() {
	"$build/$1" --help | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}--\([a-z][a-z0-9-]*\).*/\2/p' | sort -u
}
for tool in vyred:man/vyred.8 vyre-submit:man/vyre-submit.1 vyre-top:man/vyre-top.8 \
	vyre-bench:man/vyre-bench.1; do
	bin=${tool%%:*} page=${tool#*:}
	flags=$(help_flags "$bin") || bad "$bin --help failed"
	[ "$(echo "$flags" | wc -w)" -ge 3 ] || bad "$bin --help: found only these flags: $flags"
	for fl in $flags; do
		grep -qE "^\.It .*Fl -$fl( |\$)" "$page" || bad "$page: $bin --$fl is not an option item"
	done
done
suites=$("$build/vyre-bench" --list | awk '{ print $1 }')
[ -n "$suites" ] || bad "vyre-bench --list printed no suite"
for s in $suites; do
	grep -qE "^\.It Cm $s\$" man/vyre-bench.1 || bad "man/vyre-bench.1: suite $s is not an item"
done

grep -hoE '^\.Xr (vyre|libvyre)[a-z0-9_-]* [1-8]' man/*.[1-8] | sort -u | while read -r _ name sec; do
	[ -f "man/$name.$sec" ] || echo "$name.$sec"
done >"$tmp/missing"
[ -s "$tmp/missing" ] && bad "cited but missing: $(cat "$tmp/missing")"

n=0
for p in $pages; do
	awk -v base="$tmp/$(basename "$p")" '
	/^\.Bd -literal/ { inb = 1; n++; buf = ""; first = ""; next }
	/^\.Ed/ {
		if (inb && first ~ /^#include/) { f = base "." n ".c"; printf "%s", buf > f; close(f) }
		inb = 0; next
	}
	inb {
		line = $0; gsub(/\\e/, "\\", line); gsub(/\\&/, "", line)
		if (first == "") first = line
		buf = buf line "\n"
	}' "$p"
done
for c in "$tmp"/*.c; do
	[ -f "$c" ] || continue
	n=$((n + 1))
	"$cc" -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude -fsyntax-only "$c" ||
		bad "the example $(basename "$c" .c) does not compile"
done
[ "$n" -ge 11 ] || bad "only $n example programs found in the pages"

[ "$fail" -eq 0 ] && echo "ok: $(echo "$pages" | wc -w) pages lint clean, $(echo "$funcs" | wc -w) functions documented, $n examples compile"
exit "$fail"
