#!/bin/sh
# The example op modules' producers (examples/ops/NAME/producer.c, python/
# examples/op_modules.py) against a live vyred on the CPU backend that
# loaded the four example modules from an ops directory staged from
# $(BUILD)/examples/ops/NAME/ (examples/ops.mk): each op looked up by
# name, its items run through the module's host function, the printed
# values equal to ones computed apart (CRC32C bitwise, XXH64 by xxHash's
# own library, counts by hand, the exact dot product). The Python producer
# runs in plain builds only (a sanitizer build's libvyre.so wants its
# runtime preloaded: test_python covers that).
src=@VYRE_SRCDIR@
build=@VYRE_BUILD@
sanitize=@VYRE_SANITIZE@

tmp=$(mktemp -d /tmp/vyre-producers.XXXXXX) || exit 1
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

mkdir -m 0755 "$tmp/ops.d" || exit 1
chmod 0755 "$tmp/ops.d"
for m in crc32c hash64 histogram dot; do
	for f in "$build/examples/ops/$m"/*; do
		install -m 644 "$f" "$tmp/ops.d/" || exit 1
	done
	# without nvcc there is no PTX: the loader keeps the bytes, does not read them
	[ -f "$tmp/ops.d/$m.ptx" ] || echo "// stand-in: built without nvcc" >"$tmp/ops.d/$m.ptx"
	chmod 0644 "$tmp/ops.d/$m.ptx"
done
"$build/vyred" --backend cpu --socket "$tmp/v.sock" --ops-dir "$tmp/ops.d" >"$tmp/vyred.log" 2>&1 &
pid=$!
i=0
while [ ! -S "$tmp/v.sock" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -S "$tmp/v.sock" ] || {
	echo "vyred did not start:"
	sed 's/^/  | /' "$tmp/vyred.log"
	exit 1
}

# expect NAME TEXT...: NAME's output has each TEXT
expect() {
	name=$1
	shift
	for want in "$@"; do
		grep -qF -- "$want" "$tmp/$name.out" || fail "$name: no \"$want\" in:
$(sed 's/^/  | /' "$tmp/$name.out")"
	done
}
run() {
	name=$1
	shift
	"$@" >"$tmp/$name.out" 2>&1 || fail "$name: exit $?:
$(sed 's/^/  | /' "$tmp/$name.out")"
}

# the values, computed apart: CRC32C bitwise, XXH64 by libxxhash (0.8), the dot product exactly
crc=190097b3
x0=44ad33705751ad73 x1=d2322df45e8e9e26 xd=c56a805848d097a3
for m in crc32c hash64 histogram dot; do
	run "$m" "$build/examples/ops/producer_$m" "$tmp/v.sock"
	expect "$m" "op $m is number 0x"
done
expect crc32c "= $crc" "$crc, the same" "base64 -> crc32c_counted chain: $crc, the same"
expect hash64 "seed 0) = $x0" "seed 0x1) = $x1" "seed 0xdeadbeef) = $xd"
expect histogram "44 bytes counted:" " .:1 T:1 a:1" " e:3 " " o:4 " " z:1"
expect dot "x . y = 2250750.0 (bits 4a095ff8; exact: 2250750.0)"

if [ -z "$sanitize" ]; then
	VYRE_LIB=$build/libvyre.so PYTHONDONTWRITEBYTECODE=1 run python \
		python3 "$src/python/examples/op_modules.py" --socket "$tmp/v.sock"
	expect python "= $crc; in two items: $crc" "base64 -> crc32c_counted chain: $crc" "seed 0x0) = $x0" "seed 0xdeadbeef) = $xd" \
		"44 bytes counted: .:1 T:1" "x . y = 2250750.0 (bits 4a095ff8"
fi

# an op vyred does not have
"$build/examples/ops/producer_crc32c" "$tmp/nope.sock" >"$tmp/nope.out" 2>&1 &&
	fail "a producer of a socket with no vyred succeeded"

kill "$pid" && wait "$pid"
pid=
[ "$fails" -eq 0 ] || exit 1
echo "test_opmod_producers: ok"
