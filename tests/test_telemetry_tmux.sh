#!/bin/bash
# The interactive vyre-top, driven in tmux against the probe fixture: it
# starts and shows the fixture's numbers, 's' cycles the client order, 'h'
# opens and closes the help, 'p' freezes the screen while probes keep
# firing and unfreezes it, a resize redraws within the new size, 'q' quits
# with status 0. Every check reads the screen with capture-pane.
SRCDIR="@VYRE_SRCDIR@"
BUILD=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/tests/telemetry_lib.sh"

tm_require_bpf
tm_require_tool tmux

TMUX_SOCK="vyre-tm-$$"
tmx() {
	tmux -L "$TMUX_SOCK" "$@"
}
tmux_cleanup() {
	tmx kill-server 2>/dev/null
	tm_cleanup
}
trap tmux_cleanup EXIT

screen() {
	tmx capture-pane -p -t top >"$TM_TMP/screen.txt" 2>/dev/null
}

# wait_screen REGEX: until the screen shows a line matching REGEX.
wait_screen() {
	n=300
	while [ "$n" -gt 0 ]; do
		screen
		grep -Eq -- "$1" "$TM_TMP/screen.txt" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	echo "--- screen:"
	cat "$TM_TMP/screen.txt"
	fail "the screen never showed /$1/"
}

# row_of PID: the screen line number of a client row.
row_of() {
	grep -nE "^ +[0-9]+ +$1 " "$TM_TMP/screen.txt" | head -n 1 | cut -d: -f1
}

tm_fixture_start
tmx -f /dev/null new-session -d -s top -x 120 -y 32 \
	"TERM=xterm-256color '$TOP' -p $FIX_PID -d 0.2; echo \$? >'$TM_TMP/exit'"
wait_screen "^vyre-top  pid $FIX_PID vyre-tm-fixture"
wait_screen "h help  s sort \(items/s\)  p pause  q quit"

tm_fixture connect
tm_fixture gpu
tm_fixture "go 10"
wait_screen "^items 80 "
wait_screen "^ +2 +4102 .* live"
wait_screen "^ +1 +5 .* LOST +Fixture G"

# s: items/s -> items -> queue -> errors. By errors client 1 (10) leads client 2 (0).
tmx send-keys -t top s
wait_screen "s sort \(items\) "
screen
[ "$(row_of 4102)" -lt "$(row_of 4101)" ] || fail "sort by items: client 2 (50 items) is not first"
tmx send-keys -t top s
wait_screen "s sort \(queue\) "
tmx send-keys -t top s
wait_screen "s sort \(errors\) "
screen
[ "$(row_of 4101)" -lt "$(row_of 4102)" ] || fail "sort by errors: client 1 (10 errors) is not first"
tmx send-keys -t top s
wait_screen "s sort \(pid\) "
screen
[ "$(row_of 4101)" -lt "$(row_of 4102)" ] || fail "sort by pid: 4101 is not first"

# h: help over the screen, and away again.
tmx send-keys -t top h
wait_screen "vyre-top keys"
wait_screen "s  sort clients: items/s, items, queue, errors, pid"
tmx send-keys -t top h
n=50
while screen && grep -q "vyre-top keys" "$TM_TMP/screen.txt"; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "the help did not close"
	sleep 0.1
done

# p: paused, the screen keeps showing 80 items while 160 exist; then resumed.
tmx send-keys -t top p
wait_screen "PAUSED"
tm_fixture "go 10"
sleep 1 # five refresh periods: a running screen would have moved on
screen
grep -q "^items 80 " "$TM_TMP/screen.txt" || { cat "$TM_TMP/screen.txt"; fail "the paused screen changed"; }
tmx send-keys -t top p
wait_screen "^items 160 "
screen
grep -q PAUSED "$TM_TMP/screen.txt" && fail "still PAUSED after the second p"

# A smaller window: redrawn within it, the key line on the last row.
tmx resize-window -t top -x 70 -y 16
n=100
while :; do
	screen
	lines=$(wc -l <"$TM_TMP/screen.txt")
	widest=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$TM_TMP/screen.txt")
	last=$(tail -n 1 "$TM_TMP/screen.txt")
	# a capture can land in the middle of a redraw (slow under TSan): wait for
	# the whole screen, header included, before judging it
	[ "$lines" -le 16 ] && [ "$widest" -le 70 ] && echo "$last" | grep -q "^h help" &&
		grep -q "^items 160 " "$TM_TMP/screen.txt" && break
	n=$((n - 1))
	[ "$n" -gt 0 ] || {
		cat "$TM_TMP/screen.txt"
		fail "not redrawn for 70x16 with its header"
	}
	sleep 0.1
done
tmx resize-window -t top -x 120 -y 32
wait_screen "^ +1 +4101 "

# q: quits with status 0.
tmx send-keys -t top q
tm_wait_for "$TM_TMP/exit" "^0$" 30 || fail "vyre-top did not exit 0 on q"

tm_fixture_stop
echo "interactive vyre-top: ok"
