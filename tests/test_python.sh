#!/bin/sh
# The Python binding against a live vyred (tests/test_python.py says what is
# checked). Python is $VYRE_PYTHON, else Debian's /usr/bin/python3, else
# python3. In a sanitizer build libvyre.so needs its sanitizer's runtime
# loaded first, so python runs with it preloaded (leak checks off: they would
# report the interpreter's own allocations); where that cannot work the test
# skips.
src=@VYRE_SRCDIR@
build=@VYRE_BUILD@
sanitize=@VYRE_SANITIZE@
runtime=@VYRE_SAN_RUNTIME@

export PYTHONDONTWRITEBYTECODE=1
py=${VYRE_PYTHON:-}
[ -z "$py" ] && [ -x /usr/bin/python3 ] && py=/usr/bin/python3
[ -z "$py" ] && py=$(command -v python3)
[ -z "$py" ] && { echo "skip: no python3"; exit 77; }

case $sanitize in
"") exec "$py" "$src/tests/test_python.py" "$src" "$build" ;;
address) export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" ;;
thread) ;;
*) echo "skip: unknown sanitizer '$sanitize'"; exit 77 ;;
esac
[ -f "$runtime" ] || { echo "skip: $sanitize build: no sanitizer runtime to preload into $py"; exit 77; }
if ! LD_PRELOAD=$runtime VYRE_LIB=$build/libvyre.so "$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import vyre' \
	"$src/python" >/dev/null 2>&1; then
	echo "skip: $sanitize build: $py cannot load libvyre.so with $runtime preloaded"
	exit 77
fi
LD_PRELOAD=$runtime exec "$py" "$src/tests/test_python.py" "$src" "$build"
