#!/bin/sh
# Model-checks models/ring.pml with spin: the correct protocol must verify
# (assertions, end states, the no_lost_wakeup LTL property under weak
# fairness) and every deliberately broken variant must be rejected, which
# shows that the properties can fail.
#
# usage: models/check.sh [MODEL]
# VYRE_TEST_SCALE >= 2 adds 2-entry rings (about a minute, under 1 GB).
# Exit 0: all as expected; 1: a check went the wrong way; 77: no spin or cc.
set -u

here=$(cd "$(dirname "$0")" && pwd)
model=${1:-$here/ring.pml}
scale=${VYRE_TEST_SCALE:-1}
cc=${CC:-cc}

if ! command -v spin >/dev/null 2>&1; then
	echo "spin is not installed (apt-get install spin)"
	exit 77
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "no C compiler ($cc) to build the spin verifier"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vyre-model.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cp "$model" "$work/model.pml" || exit 1
cd "$work" || exit 1

failures=0
# the verifier's memory bound in MB; a search that hits it is incomplete (a failure)
memlim=2048

# verify EXPECT KIND DEFINES...: KIND is safety (assertions + invalid end
# states) or ltl (acceptance cycles of no_lost_wakeup with weak fairness).
verify()
{
	expect=$1
	kind=$2
	shift 2
	rm -f pan pan.* model.pml.trail
	# a broken variant fails within a few hundred steps: skip the optimizer
	opt=-O1
	[ "$expect" = fail ] && opt=-O0
	if [ "$kind" = ltl ]; then
		spin -DCHECK_LTL "$@" -a model.pml >spin.out 2>&1 &&
			"$cc" $opt -DCOLLAPSE -DMEMLIM=$memlim -DNFAIR=3 -w -o pan pan.c >>spin.out 2>&1 &&
			./pan -a -f -m2000000 >pan.out 2>&1
	else
		spin "$@" -a model.pml >spin.out 2>&1 &&
			"$cc" $opt -DSAFETY -DCOLLAPSE -DMEMLIM=$memlim -w -o pan pan.c >>spin.out 2>&1 &&
			./pan -m2000000 >pan.out 2>&1
	fi
	if [ ! -s pan.out ]; then
		echo "FAIL $kind $*: spin or the verifier did not build"
		sed 's/^/    /' spin.out
		failures=$((failures + 1))
		return
	fi
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | tail -n 1)
	states=$(sed -n 's/^ *\([0-9e+.]*\) states, stored.*/\1/p' pan.out | tail -n 1)
	what=$(grep -m1 -o 'pan:1: .*' pan.out)
	if grep -q 'max search depth too small' pan.out; then
		echo "FAIL $kind $*: search depth too small, the check is incomplete"
		failures=$((failures + 1))
		return
	fi
	if [ "$expect" = pass ] && grep -qi 'out of memory\|memlim' pan.out; then
		echo "FAIL $kind $*: over ${memlim} MB, the check is incomplete"
		failures=$((failures + 1))
		return
	fi
	case $expect in
	pass)
		if [ "$errors" = 0 ]; then
			echo "ok   $kind $*: verified, $states states"
		else
			echo "FAIL $kind $*: $what"
			failures=$((failures + 1))
		fi
		;;
	fail)
		if [ -n "$errors" ] && [ "$errors" != 0 ]; then
			echo "ok   $kind $*: rejected as expected ($what)"
		else
			echo "FAIL $kind $*: the broken variant was not caught ($errors errors)"
			failures=$((failures + 1))
		fi
		;;
	esac
}

# The CI configuration: 2 producers through 1-entry rings, so every slot is
# reused, the SQ and the CQ both fill up, and each side sleeps and is woken.
small="-DNPROD=2 -DNITEMS=1 -DSQCAP=1 -DCQCAP=1"

verify pass safety $small
verify pass ltl $small

for bug in BUG_NO_RECHECK BUG_NO_FENCE BUG_LATE_SEEN BUG_WAKE_FIRST BUG_NO_REAP_KICK \
	BUG_TAKEN_UNCHECKED; do
	verify fail safety $small -D$bug
	verify fail ltl $small -D$bug
done
for bug in BUG_SEQ_FIRST BUG_EARLY_HEAD BUG_PLAIN_RESERVE; do
	verify fail safety $small -D$bug
done

# Bigger: 2-entry rings (7 M states, 15 s each). Three producers, or two
# with two items each, exceed 10^8 states: beyond what this checks exhaustively.
if [ "$scale" -ge 2 ]; then
	memlim=4096
	verify pass safety -DNPROD=2 -DNITEMS=1 -DSQCAP=2 -DCQCAP=2
	verify pass ltl -DNPROD=2 -DNITEMS=1 -DSQCAP=2 -DCQCAP=2
	verify fail safety -DNPROD=2 -DNITEMS=1 -DSQCAP=2 -DCQCAP=2 -DBUG_TAKEN_UNCHECKED
fi

if [ "$failures" -ne 0 ]; then
	echo "$failures model checks went the wrong way"
	exit 1
fi
echo "all model checks as expected"
