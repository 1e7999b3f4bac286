#!/bin/sh
# Installs the Debian 12 packages vyre builds and tests with. As root it runs
# apt-get; otherwise it prints the exact command to run.
pkgs="build-essential pkg-config liburing-dev libbpf-dev bpftool clang llvm systemtap-sdt-dev
libcmocka-dev libncurses-dev bpftrace libck-dev spin afl++ libclang-rt-14-dev tmux jq python3
python3-numpy mandoc dpkg-dev curl python3-prometheus-client"
# gnuplot draws vyre-bench --plot's figures (without it the rows are still written)
pkgs="$pkgs gnuplot-nox"
# Hyperscan, the scan suite's peer (bench/bench_scan.c), is packaged for amd64 only
if [ "$(dpkg --print-architecture)" = amd64 ]; then
	pkgs="$pkgs libhyperscan-dev"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { echo "setup: all packages present"; exit 0; }
if [ "$(id -u)" -ne 0 ]; then
	echo "setup: missing packages; run as root:"
	echo "  apt-get update && apt-get install -y$missing"
	exit 1
fi
echo "setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq $missing >/dev/null
