#!/bin/sh
# test_ops_dir_cuda: op modules through vyred on a GPU (docs/design.md 6.7).
# The example crc32c module ($(BUILD)/examples/ops/crc32c: its manifest,
# host object and PTX) runs in vyred --backend cuda in persistent and launch mode: a program of
# crc32c items on random buffers of 0 to 64 KiB (and seeds) prints the same
# CQEs and output words as on vyred --backend cpu, which test_ops_dir checks
# against an independent CRC32C; an item of a number vyred does not have
# fails on both. A module whose device function is missing stops vyred
# --backend cuda at start with the linker's message, which names it.
# Skips (77) without a GPU.
# VYRE_BUILD: where vyred, vyre-submit and examples/ops are (a GPU bundle's root)
build=${VYRE_BUILD:-@VYRE_BUILD@}
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU' || {
	echo "skip: no GPU (nvidia-smi -L lists none)"
	exit 77
}
tmp=$(mktemp -d /tmp/vyre-opsdir-cuda.XXXXXX) || exit 1
chmod 755 "$tmp"
vpid=""
cleanup() {
	[ -n "$vpid" ] && kill "$vpid" 2>/dev/null && wait "$vpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# module DIR [DEVICE_FN]: a copy of the example's module directory with its
# crc32c op alone (the stream op crc32c_counted, the manifest's last block,
# cut: test_cuda_examples runs it), so a device_fn line appended names another
module() {
	mkdir -m 755 "$1"
	cp "$build/examples/ops/crc32c/"* "$1/"
	sed -i '/^op crc32c_counted$/,$d' "$1/crc32c.opmod"
	grep -q '^op crc32c$' "$1/crc32c.opmod" && ! grep -q '^op crc32c_' "$1/crc32c.opmod" || {
		echo "FAIL: the example's manifest has no op crc32c block to test"
		exit 1
	}
	[ -z "${2:-}" ] || echo "device_fn $2" >>"$1/crc32c.opmod"
	chmod 644 "$1"/*
}
[ -f "$build/examples/ops/crc32c/crc32c.ptx" ] || {
	echo "FAIL: $build/examples/ops/crc32c/crc32c.ptx missing (nvcc builds it)"
	exit 1
}
module "$tmp/good"
module "$tmp/bad" no_such_device_function

# the program: 40 items on random buffers, one of a number no vyred has
{
	i=0
	for n in 0 4 12 100 1000 4096 65536 3 7 40000; do
		for s in 0 1; do
			b=$((n / 4 * 4))
			if [ $b -eq 0 ]; then
				printf 'buffer in%d 0\n' $i
			else
				printf 'buffer in%d %d hex %s\n' $i $b \
					"$(head -c $b /dev/urandom | od -An -v -tx1 | tr -d ' \n')"
			fi
			printf 'buffer out%d 4\nitem crc32c in%d out%d %d\n' $i $i $i $((s * 123456789))
			i=$((i + 1))
		done
	done
	printf 'item 2147483647 in0 out0\nitem 0x80000001 in1 out1\nwait\n'
	j=0
	while [ $j -lt $i ]; do
		printf 'print out%d\n' $j
		j=$((j + 1))
	done
} >"$tmp/prog.vs"

# run NAME ARGS...: vyred with ARGS on its own socket, the program through it into NAME.out
run() {
	name=$1
	shift
	sock=$tmp/$name.sock
	"$build/vyred" --socket "$sock" "$@" 2>"$tmp/$name.log" &
	vpid=$!
	k=0
	until grep -q 'vyred: ready' "$tmp/$name.log"; do
		k=$((k + 1))
		if ! kill -0 "$vpid" 2>/dev/null || [ $k -gt 600 ]; then
			vpid=""
			return 1
		fi
		sleep 0.1
	done
	"$build/vyre-submit" -s "$sock" "$tmp/prog.vs" >"$tmp/$name.out" 2>&1
	echo "exit $?" >>"$tmp/$name.out"
	kill "$vpid"
	wait "$vpid" || fail "$name: vyred exited $?"
	vpid=""
}

run cpu --backend cpu --ops-dir "$tmp/good" || fail "cpu: vyred did not start: $(cat "$tmp/cpu.log")"
n=$(grep -c 'op=crc32c status=ok' "$tmp/cpu.out")
[ "$n" -eq 20 ] && grep -q 'exit 1' "$tmp/cpu.out" || fail "cpu: $n crc32c items ok, want 20, and the foreign ones failed"
for mode in persistent launch; do
	if ! run "$mode" --backend cuda --mode $mode --ops-dir "$tmp/good"; then
		fail "cuda $mode: vyred did not start:"
		sed 's/^/  | /' "$tmp/$mode.log"
		continue
	fi
	cmp -s "$tmp/cpu.out" "$tmp/$mode.out" || {
		fail "cuda $mode: the output differs from the cpu backend's:"
		diff "$tmp/cpu.out" "$tmp/$mode.out" | head -20
	}
done
if run missing --backend cuda --ops-dir "$tmp/bad"; then
	fail "cuda: vyred started with a missing device function"
else
	# the linker's own message names the function (docs/cuda.md "Op modules")
	grep -q 'no_such_device_function' "$tmp/missing.log" ||
		fail "cuda: the refusal does not name the missing function: $(cat "$tmp/missing.log")"
fi
# an optional module whose device code does not link is left out, the rest runs
module "$tmp/opt"
sed -e 's/^module crc32c/module crc_opt/' -e 's/^op crc32c/op crc_opt/' \
	-e 's/^host libvyre_op_crc32c.so/host libvyre_op_crc_opt.so/' \
	-e 's/^ptx crc32c.ptx/ptx crc_opt.ptx\noptional yes/' \
	"$tmp/opt/crc32c.opmod" >"$tmp/opt/crc_opt.opmod"
printf 'host_fn vyre_op_crc32c_host\ndevice_fn no_such_device_function\n' >>"$tmp/opt/crc_opt.opmod"
cp "$tmp/opt/libvyre_op_crc32c.so" "$tmp/opt/libvyre_op_crc_opt.so"
# PTX that defines nothing: the module's device function is missing at link time
printf '.version 7.0\n.target sm_75\n.address_size 64\n' >"$tmp/opt/crc_opt.ptx"
chmod 644 "$tmp/opt"/*
if ! run optional --backend cuda --ops-dir "$tmp/opt"; then
	fail "cuda: vyred did not start with an optional module that does not link:"
	sed 's/^/  | /' "$tmp/optional.log"
else
	grep -q 'optional module crc_opt left out.*no_such_device_function' "$tmp/optional.log" || {
		fail "cuda: the optional module's leaving out is not logged with the linker's message:"
		sed 's/^/  | /' "$tmp/optional.log"
	}
	cmp -s "$tmp/cpu.out" "$tmp/optional.out" ||
		fail "cuda: crc32c beside a left-out optional module differs from the cpu backend"
fi
[ "$fails" -eq 0 ] || exit 1
echo "ok: crc32c through vyred on the GPU (persistent, launch) equals the cpu backend; a missing device function refused"
