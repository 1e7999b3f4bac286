#!/bin/sh
# Splits a staged `make install DESTDIR=DIR/stage PREFIX=/usr` into the
# binary packages, writes their control files and builds them with dpkg-deb.
# Every staged file must land in a package: a new one that does not stops
# the build here instead of going missing.
# usage: dist/deb/build.sh DIR UPSTREAM_VERSION DEB_VERSION
set -eu
dir=$(cd "$1" && pwd) upstream=$2 version=$3
here=$(cd "$(dirname "$0")" && pwd)
stage=$dir/stage
work=$dir/work
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
maintainer="vyre maintainers <vyre@localhost>"

rm -rf "$work"
mkdir -p "$work/debian"
# dpkg-shlibdeps reads debian/control (empty is enough) and wants the files in debian/PKG/
: >"$work/debian/control"

# take PKG PATH...: move staged paths (relative to the stage) into PKG's tree
take() {
	pkg=$1
	shift
	for p in "$@"; do
		[ -e "$stage/$p" ] || [ -L "$stage/$p" ] || continue
		mkdir -p "$work/debian/$pkg/$(dirname "$p")"
		mv "$stage/$p" "$work/debian/$pkg/$p"
	done
}

# the library package is named after its SONAME (Debian policy 8.1)
soname=$(objdump -p "$stage/usr/lib/$ma/libvyre.so.$upstream" | sed -n 's/^ *SONAME *//p')
major=${soname##*.so.}
lib=libvyre$major

take vyre usr/bin usr/lib/systemd usr/lib/vyre usr/share/vyre usr/share/doc/vyre etc/vyre
take "$lib" "usr/lib/$ma/$soname" "usr/lib/$ma/libvyre.so.$upstream"
take libvyre-dev usr/include "usr/lib/$ma/libvyre.a" "usr/lib/$ma/libvyre.so" "usr/lib/$ma/pkgconfig"
take python3-vyre usr/lib/python3
for page in "$stage"/usr/share/man/man*/*; do
	[ -e "$page" ] || continue
	rel=${page#"$stage"/}
	case $rel in
	usr/share/man/man3/*) take libvyre-dev "$rel" ;;
	*) take vyre "$rel" ;;
	esac
done
left=$(find "$stage" ! -type d)
if [ -n "$left" ]; then
	echo "dist/deb/build.sh: staged files in no package:" >&2
	echo "$left" >&2
	exit 1
fi

# Debian policy: no debug sections in binaries (symbols and the USDT notes
# that vyre-top and the bpftrace scripts attach to stay)
find "$work/debian" -type f \( -path '*/usr/bin/*' -o -name '*.so.*' -o -name '*.a' \) \
	-exec strip --strip-debug {} +

# Debian policy: man pages compressed, without a timestamp
find "$work/debian" -path '*/usr/share/man/*' -type f ! -name '*.gz' -exec gzip -9n {} +
find "$work/debian" -path '*/usr/share/man/*' -type l ! -name '*.gz' | while read -r l; do
	ln -s "$(readlink "$l").gz" "$l.gz" && rm "$l"
done

# shlibs FILE...: the Depends of these ELF files (relative to $work); callers
# assign the result first, so that a failure stops the build (set -e)
shlibs() {
	out=$(cd "$work" && dpkg-shlibdeps -O "$@" 2>"$work/shlibdeps.log") || {
		cat "$work/shlibdeps.log" >&2
		return 1
	}
	echo "$out" | sed -n 's/^shlibs:Depends=//p'
}

# control PKG ARCH SECTION DEPENDS [EXTRA FIELD LINES] < DESCRIPTION
control() {
	pkg=$1 parch=$2 section=$3 depends=$4 extra=${5:-}
	root=$work/debian/$pkg
	mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$pkg"
	cp "$here/copyright" "$root/usr/share/doc/$pkg/copyright"
	for s in postinst prerm postrm; do
		if [ -f "$here/$pkg.$s" ]; then
			install -m 755 "$here/$pkg.$s" "$root/DEBIAN/$s"
		fi
	done
	(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z |
		xargs -0 -r md5sum >DEBIAN/md5sums)
	{
		echo "Package: $pkg"
		echo "Version: $version"
		echo "Architecture: $parch"
		echo "Maintainer: $maintainer"
		echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
		echo "Depends: $depends"
		[ -z "$extra" ] || printf '%s\n' "$extra"
		echo "Section: $section"
		echo "Priority: optional"
		cat
	} >"$root/DEBIAN/control"
	chmod -R u+rwX,go+rX,go-w "$root"
	dpkg-deb --root-owner-group -Zxz --build "$root" "$dir/${pkg}_${version}_$parch.deb" >/dev/null
	echo "deb: $dir/${pkg}_${version}_$parch.deb"
}

bins=$(find "$work/debian/vyre/usr/bin" -type f | sed "s|^$work/||")
deps=$(shlibs $bins)
control vyre "$arch" utils "$deps, passwd" "Suggests: libcuda1" <<'D'
Description: shared-memory GPU work-submission service
 vyred drains the work items that client processes publish in shared-memory
 rings, plans them into batches and runs them on the GPUs (CUDA) or on the
 CPU. This package holds the daemon with its systemd units (socket
 activation, group vyre for clients), vyre-submit, vyre-top, vyre-bench and
 the demo.
D

# shlibs: what packages linking libvyre depend on; the trigger runs ldconfig
mkdir -p "$work/debian/$lib/DEBIAN"
echo "libvyre $major $lib (>= $upstream)" >"$work/debian/$lib/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$work/debian/$lib/DEBIAN/triggers"
deps=$(shlibs "debian/$lib/usr/lib/$ma/libvyre.so.$upstream")
control "$lib" "$arch" libs "$deps" "Multi-Arch: same" <<'D'
Description: vyre client library
 libvyre connects a process to vyred, maps its shared-memory rings and the
 domain heap, and submits work items and reaps their completions.
D

control libvyre-dev "$arch" libdevel "$lib (= $version)" <<'D'
Description: vyre client library - development files
 Headers, the static library, the linker name and vyre.pc for building
 vyre clients, and the libvyre(3) manual pages when built.
D

if [ -d "$work/debian/python3-vyre" ]; then
	control python3-vyre all python "python3, $lib (>= $upstream)" "Suggests: python3-numpy" <<'D'
Description: vyre client library - Python binding
 A ctypes binding over libvyre: connect, buffers as memoryview or numpy
 arrays, submit, reap, wait, errors as exceptions.
D
fi
