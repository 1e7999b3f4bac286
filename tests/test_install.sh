#!/bin/sh
# make install PREFIX=TMP and make install DESTDIR=TMP PREFIX=/usr put every
# part where it belongs: binaries, library and its links, headers, vyre.pc
# naming the prefix, the systemd units with ExecStart in the prefix (and
# systemd-analyze verify content with them where it is installed), the
# examples and the demo, and, when their fragments exist in this tree, the
# man pages in their sections, the Python package (importable from there)
# and the example op modules (lib/vyre/ops/NAME, modes the loader takes).
# Filled in by tests/ops.mk: the source tree and the build.
src='@VYRE_SRCDIR@'
build='@BUILD@'
sanitize='@SANITIZE@'
cflags='@CFLAGS@'

tmp=$(mktemp -d /tmp/vyre-install.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# this runs under `make test`: the inner make must not talk to the outer one's jobserver
unset MAKEFLAGS MFLAGS MAKELEVEL
parts=$(make -s -C "$src" --no-print-directory install-parts) || exit 1
man_pages=$(echo "$parts" | sed -n 's/^man_pages=//p')
py_dir=$(echo "$parts" | sed -n 's/^py_dir=//p')
opmods=$(echo "$parts" | sed -n 's/^opmods=//p')
install_to() {
	make -s -C "$src" BUILD="$build" SANITIZE="$sanitize" CFLAGS="$cflags" "$@" install \
		>"$tmp/make.log" 2>&1 || {
		echo "make $* install failed:"
		sed 's/^/  | /' "$tmp/make.log"
		exit 1
	}
}

# check ROOT PREFIX: what make install put under ROOT for prefix PREFIX
check() {
	root=$1 prefix=$2
	for b in vyred vyre-submit vyre-top vyre-bench vyre-demo; do
		[ -x "$root$prefix/bin/$b" ] || fail "$prefix/bin/$b missing"
	done
	[ -f "$root$prefix/lib/libvyre.so.0.1.0" ] && [ -f "$root$prefix/lib/libvyre.a" ] ||
		fail "libvyre missing"
	[ "$(readlink "$root$prefix/lib/libvyre.so.0")" = libvyre.so.0.1.0 ] &&
		[ "$(readlink "$root$prefix/lib/libvyre.so")" = libvyre.so.0 ] ||
		fail "libvyre.so links wrong"
	[ -f "$root$prefix/include/vyre/vyre.h" ] || fail "vyre.h missing"
	pc=$root$prefix/lib/pkgconfig/vyre.pc
	grep -qx "prefix=$prefix" "$pc" && grep -qx "libdir=$prefix/lib" "$pc" ||
		fail "vyre.pc does not name $prefix"
	units=$root$prefix/lib/systemd/system
	opsdir=$prefix/etc/vyre/ops.d
	[ "$prefix" = /usr ] && opsdir=/etc/vyre/ops.d
	grep -qx "ExecStart=$prefix/bin/vyred --allow-gid vyre --ops-dir $opsdir" "$units/vyred.service" ||
		fail "vyred.service: ExecStart not $prefix/bin/vyred with --ops-dir $opsdir"
	[ -d "$root$opsdir" ] && [ "$(stat -c %a "$root$opsdir")" = 755 ] &&
		[ -z "$(ls -A "$root$opsdir")" ] || fail "$opsdir: not an empty directory of mode 755"
	grep -qx "ListenSequentialPacket=/run/vyre/vyre.sock" "$units/vyred.socket" &&
		grep -qx "SocketGroup=vyre" "$units/vyred.socket" ||
		fail "vyred.socket: not the SEQPACKET socket of group vyre"
	[ -f "$root$prefix/share/vyre/examples/basic.vs" ] && [ -x "$root$prefix/share/vyre/demo.sh" ] ||
		fail "examples or demo.sh missing"
	[ -f "$root$prefix/share/doc/vyre/operations.md" ] || fail "operations.md missing"
	if [ -n "$man_pages" ]; then
		for p in $man_pages; do
			[ -f "$root$prefix/share/man/man${p##*.}/${p##*/}" ] ||
				fail "man page $p not in man${p##*.}"
		done
	fi
	for m in $opmods; do
		d=$root$prefix/lib/vyre/ops/$m
		[ -f "$d/$m.opmod" ] && [ -f "$d/libvyre_op_$m.so" ] ||
			fail "op module $m not in lib/vyre/ops/$m"
		[ ! -e "$root$prefix/share/vyre/ops" ] ||
			fail "share/vyre/ops: op modules hold shared objects, they go under lib"
		[ -z "$(find "$d" -perm /022)" ] || fail "op module $m: writable by group or others"
		[ -f "$root$prefix/share/vyre/examples/ops/$m/host.c" ] ||
			fail "op module $m's sources not in share/vyre/examples/ops/$m"
	done
	if [ -n "$py_dir" ]; then
		pkg=$(basename "$py_dir")
		[ -f "$root$prefix/lib/python3/dist-packages/$pkg/__init__.py" ] ||
			fail "python package $pkg not in lib/python3/dist-packages"
	fi
}

install_to PREFIX="$tmp/prefix"
check "" "$tmp/prefix"
# the service file as systemd reads it, where systemd's tools are installed
if command -v systemd-analyze >/dev/null; then
	units=$tmp/prefix/lib/systemd/system
	(cd "$units" && systemd-analyze verify --man=no vyred.socket vyred.service) \
		>"$tmp/verify.log" 2>&1 || {
		fail "systemd-analyze verify:"
		sed 's/^/  | /' "$tmp/verify.log"
	}
else
	echo "note: no systemd-analyze: units not verified"
fi
if [ -n "$py_dir" ] && [ -n "$sanitize" ]; then
	# python cannot load a sanitizer-built libvyre.so without its runtime preloaded
	# (tests/test_python.sh does that); the plain build checks the import
	echo "note: $sanitize build: the installed Python package's import is not tried"
elif [ -n "$py_dir" ]; then
	pkg=$(basename "$py_dir")
	LD_LIBRARY_PATH=$tmp/prefix/lib PYTHONPATH=$tmp/prefix/lib/python3/dist-packages \
		python3 -c "import $pkg, sys; sys.exit(0 if '$tmp' in $pkg.__file__ else 1)" ||
		fail "python3 cannot import $pkg from the installed tree"
else
	echo "note: no python/python.mk in this tree: Python package not checked"
fi
[ -n "$man_pages" ] || echo "note: no man/man.mk in this tree: man pages not checked"

install_to PREFIX=/usr DESTDIR="$tmp/dest"
check "$tmp/dest" /usr
[ -z "$(find "$tmp/dest" -mindepth 1 -maxdepth 1 ! -name usr ! -name etc)" ] &&
	[ -z "$(find "$tmp/dest/etc" -mindepth 1 ! -path "$tmp/dest/etc/vyre" ! -path "$tmp/dest/etc/vyre/ops.d")" ] ||
	fail "DESTDIR install wrote outside DESTDIR/usr and DESTDIR/etc/vyre/ops.d"

[ "$fails" -eq 0 ] || exit 1
echo "ok: make install PREFIX= and DESTDIR= put every part in place"
