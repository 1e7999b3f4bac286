#!/bin/sh
# make deb, then install the packages on this machine with apt-get (which
# pulls their dependencies), check what they installed (Python: Debian's
# /usr/bin/python3, whose path has dist-packages), run the demo and a
# vyre-submit example against the installed binaries and a client built
# against the installed libvyre-dev, and remove the packages with --purge.
# Needs root, apt-get and dpkg-dev; runs only from a plain build (packages
# are not made of sanitizer builds). Whatever happens, the packages are
# removed again (trap), and the vyre group too when this test made it.
src='@VYRE_SRCDIR@'
build='@BUILD@'
sanitize='@SANITIZE@'

skip() {
	echo "$*"
	exit 77
}
[ -z "$sanitize" ] || skip "packages are built from the plain build only (SANITIZE=$sanitize)"
[ "$(id -u)" -eq 0 ] || skip "installing packages needs root"
for t in apt-get dpkg-deb dpkg-shlibdeps dpkg-architecture; do
	command -v "$t" >/dev/null || skip "no $t (apt-get install dpkg-dev)"
done
# this runs under `make test`: the inner makes must not talk to the outer one's jobserver
unset MAKEFLAGS MFLAGS MAKELEVEL
py_dir=$(make -s -C "$src" --no-print-directory install-parts | sed -n 's/^py_dir=//p')
pkgs="vyre libvyre0 libvyre-dev"
[ -n "$py_dir" ] && pkgs="$pkgs python3-vyre"
for p in $pkgs; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed; then
		skip "$p is installed on this machine already: not replacing it"
	fi
done
[ ! -e /usr/bin/vyred ] || skip "/usr/bin/vyred exists outside the packages: not overwriting it"

tmp=$(mktemp -d /tmp/vyre-deb.XXXXXX) || exit 1
had_group=$(getent group vyre >/dev/null && echo yes)
cleanup() {
	[ -n "${vpid:-}" ] && kill -9 "$vpid" 2>/dev/null
	installed=""
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed &&
			installed="$installed $p"
	done
	if [ -n "$installed" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -q $installed \
			>"$tmp/remove.log" 2>&1 || sed 's/^/  | /' "$tmp/remove.log"
	fi
	[ -n "$had_group" ] || groupdel vyre 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
quote() { sed 's/^/  | /' "$1"; }

start=$(date +%s)
make -s -C "$src" BUILD="$build" deb >"$tmp/make.log" 2>&1 || {
	echo "FAIL: make deb:"
	quote "$tmp/make.log"
	exit 1
}
debs=$(ls "$build"/deb/*.deb)
echo "built: $(echo "$debs" | xargs -n1 basename | tr '\n' ' ')"
[ "$(echo "$debs" | wc -l)" -eq "$(echo $pkgs | wc -w)" ] || fail "expected packages: $pkgs"
# the daemon's and vyre-top's libraries, found by dpkg-shlibdeps
depends=$(dpkg-deb -f "$build"/deb/vyre_*.deb Depends)
for d in liburing2 libbpf1 libncursesw6 libc6; do
	echo "$depends" | grep -q "$d" || fail "vyre does not depend on $d: $depends"
done

DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $debs \
	>"$tmp/install.log" 2>&1 || {
	echo "FAIL: apt-get install:"
	quote "$tmp/install.log"
	exit 1
}
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		fail "$p not installed"
done
getent group vyre >/dev/null || fail "postinst made no vyre group"
for f in /usr/bin/vyred /usr/bin/vyre-submit /usr/bin/vyre-top /usr/bin/vyre-demo \
	/usr/lib/systemd/system/vyred.service /usr/lib/systemd/system/vyred.socket \
	/usr/include/vyre/vyre.h; do
	[ -e "$f" ] || fail "$f not installed"
done
dpkg -V $pkgs >"$tmp/verify.log" 2>&1 || {
	fail "dpkg -V:"
	quote "$tmp/verify.log"
}

# the demo against /usr/bin
sh "$src/tools/demo.sh" /usr/bin 2 5000 >"$tmp/demo.log" 2>&1 &&
	grep -q '^demo: OK' "$tmp/demo.log" || {
	fail "the demo against /usr/bin:"
	quote "$tmp/demo.log"
}

# an installed vyred serving the installed examples, and a client of libvyre.so.0
sock=$tmp/vyre.sock
/usr/bin/vyred --socket "$sock" --backend cpu 2>"$tmp/vyred.log" &
vpid=$!
i=0
while ! grep -q 'vyred: ready' "$tmp/vyred.log" 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
/usr/bin/vyre-submit -s "$sock" /usr/share/vyre/examples/basic.vs >"$tmp/basic.out" 2>&1 &&
	cmp -s "$tmp/basic.out" /usr/share/vyre/examples/basic.out || {
	fail "vyre-submit basic.vs against the installed vyred:"
	quote "$tmp/basic.out"
}
cat >"$tmp/client.c" <<'EOF'
#include <stdio.h>
#include <vyre/vyre.h>
int main(int argc, char **argv)
{
	struct vyre_connect_opts o = {.socket_path = argc > 1 ? argv[1] : NULL};
	struct vyre_client *c;
	int rc = vyre_connect(&o, &c);

	if (rc != 0) {
		printf("vyre_connect: %s\n", vyre_strerror(rc));
		return 1;
	}
	vyre_close(c);
	return 0;
}
EOF
# shellcheck disable=SC2046 # pkg-config's words are separate arguments
cc -o "$tmp/client" "$tmp/client.c" $(pkg-config --cflags --libs vyre) 2>"$tmp/cc.log" &&
	ldd "$tmp/client" | grep -q "libvyre.so.0 => /.*/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libvyre.so.0" &&
	"$tmp/client" "$sock" || {
	fail "a client built with pkg-config vyre:"
	quote "$tmp/cc.log"
	[ -x "$tmp/client" ] && ldd "$tmp/client" | grep vyre
}
if [ -n "$py_dir" ]; then
	/usr/bin/python3 -c "import $(basename "$py_dir")" 2>"$tmp/py.log" || {
		fail "python3-vyre: import:"
		quote "$tmp/py.log"
	}
fi
kill -TERM "$vpid"
wait "$vpid" || fail "the installed vyred did not stop cleanly"
vpid=""

DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -q $pkgs >"$tmp/remove.log" 2>&1 || {
	fail "apt-get remove --purge:"
	quote "$tmp/remove.log"
}
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed && fail "$p still installed"
done
for f in /usr/bin/vyred /usr/lib/systemd/system/vyred.service /usr/include/vyre \
	/usr/share/vyre /etc/systemd/system/sockets.target.wants/vyred.socket; do
	[ -e "$f" ] || [ -L "$f" ] && fail "$f left after purge"
done
if [ -n "$py_dir" ] && [ -e "/usr/lib/python3/dist-packages/$(basename "$py_dir")" ]; then
	fail "the Python package's directory is left after purge"
fi
[ "$fails" -eq 0 ] || exit 1
echo "ok: make deb, install, demo, example, client, purge in $(($(date +%s) - start)) s"
