#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The lid and the sleep key, through a uinput lid switch (SW_LID, KEY_SLEEP)
# and the real logind:
#   1. autosleepd holds logind's handle-lid-switch inhibitor (systemd-inhibit
#      --list shows it); closing the lid suspends at once despite input 1 s
#      earlier, input from a built-in (i8042) keyboard under the closed lid
#      is ignored, and logind does not suspend on its own;
#   2. opening the lid gives a full idle period (host-timed);
#   3. the sleep key suspends at once, like closing the lid;
#   4. with another holder of handle-lid-switch autosleepd leaves the lid alone;
#   5. HandleLid=no: the old behaviour, logind handles the lid (an external
#      cycle) and a closed lid does not cut the idle period short.
set -u
. /usr/lib/autosleep-vm/lib.sh
tool=/usr/lib/autosleep-vm/uinput-tool
conf=/etc/autosleep/autosleep.conf.d/90-lid.conf
logind_conf=/etc/systemd/logind.conf.d/90-vmtest.conf

journal() { journalctl -u autosleepd -o cat --no-pager; }
watched() { journal | grep -q "Watching event[0-9]* '$1'"; }
activity_held() { tr ' ' '\n' < /sys/power/wake_lock | grep -qx autosleepd.activity; }
input_events() { autosleepctl stats --json | sed -n 's/.*"InputEvents":\([0-9]*\).*/\1/p'; }
read_since() { [ "$(input_events)" -gt "$ev0" ]; }
# On a failed check: what autosleepd said about input and holds lately.
why_not() { journal | grep -E "vmtest|User input|Holding|Lid|Sleep key|gone" | tail -n 8 | sed 's/^/# journal: /'; }
check_why() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; why_not; fi
}
externals() { autosleepctl stats --json | sed -n 's/.*"ExternalSuspends":\([0-9]*\).*/\1/p'; }
lid() { echo "$1" >&7; }
# type_on NAME KIND: a uinput keyboard that types every 300 ms for 3 s, once autosleepd watches it.
type_on() {
	$tool "$2" "$1" 300 3 > /dev/null 2>&1 &
	typer=$!
	wait_until 50 watched "$1"
}

# logind reacts to the lid 5 s after boot or resume, not 30 s, for step 5:
# long enough to open the lid again before it suspends once more.
mkdir -p "$(dirname "$logind_conf")"
printf '[Login]\nHoldoffTimeoutSec=5s\n' > "$logind_conf"
systemctl restart systemd-logind
rm -f /run/vmtest-lid.fifo
mkfifo /run/vmtest-lid.fifo
exec 7<> /run/vmtest-lid.fifo
$tool lid "vmtest Lid Switch" <&7 > /dev/null 2>&1 &
lidtool=$!
check "the lid switch is watched" wait_until 50 watched "vmtest Lid Switch"
check "autosleepd handles the lid" wait_until 50 sh -c 'autosleepctl status | grep -q "^Lid: *open, handled by autosleepd"'
check "systemd-inhibit --list shows autosleepd's handle-lid-switch" \
	sh -c 'systemd-inhibit --list --no-pager | grep autosleepd | grep -q handle-lid-switch'
e0=$(externals)

# --- 1. close: at once despite input; built-in input under the lid ignored ---
ev0=$(input_events)
type_on "vmtest external keyboard" keyboard
check_why "typing on an external keyboard is read" wait_until 50 read_since
check_why "and holds the machine awake" wait_until 20 activity_held
wait "$typer"
sleep 1
lid close
check "closing the lid means the user is gone" wait_until 50 sh -c "journalctl -u autosleepd -o cat | grep -q 'Lid closed: the user is gone'"
check "the activity hold went with it" eval '! activity_held'
ev0=$(input_events)
type_on "vmtest builtin keyboard" builtin-keyboard
wait "$typer"
check "keys on the built-in keyboard under the closed lid are read" read_since
check_why "but ignored: no activity hold" eval '! activity_held'
autosleepctl status | sed 's/^/# [lid closed] /'
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 8
mark "release-timed lid-closed"
release
check "autosleepd suspended at once with the lid closed" wait_cycle "$s0" "$f0"
check "logind did not suspend on its own (external cycles: $e0 -> $(externals))" test "$(externals)" = "$e0"

# --- 2. open: a full idle period ----------------------------------------------
sleep 6
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 30
mark "idle-timed lid-open"
lid open
check "opening the lid holds for a full idle period" wait_until 50 activity_held
release
check "then it suspends" wait_cycle "$s0" "$f0"

# --- 3. the sleep key --------------------------------------------------------
sleep 6
type_on "vmtest external keyboard 2" keyboard
wait "$typer"
check "the activity hold is set again" activity_held
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 8
release
mark "release-timed sleep-key"
lid sleep
check "the sleep key suspends at once" wait_cycle "$s0" "$f0"
check "the journal says so" sh -c "journalctl -u autosleepd -o cat | grep -q 'Sleep key: the user is gone'"

# --- 4. another holder of handle-lid-switch -----------------------------------
sleep 6
systemd-inhibit --what=handle-lid-switch --who=vmtest-desktop --why="a desktop's power manager" --mode=block sleep 300 &
desk=$!
check "autosleepd leaves the lid to the other holder" \
	wait_until 50 sh -c 'autosleepctl status | grep -q "^Lid: .*handled by vmtest-desktop"'
autosleepctl status | sed 's/^/# [other holder] /'
type_on "vmtest external keyboard 3" keyboard
wait "$typer"
arm_rtc 60
guard_start
mark "hold-start other-holder"
release
lid close
sleep 5
mark "hold-end other-holder"
hold
check "with the lid someone else's, closing it does not suspend" guard_stop
check "and the journal says whose it is" sh -c "journalctl -u autosleepd -o cat | grep -q 'vmtest-desktop (pid [0-9]*) handles the lid, leaving it alone'"
lid open
kill "$desk"; wait "$desk" 2> /dev/null
check "autosleepd takes the lid back" wait_until 50 sh -c 'autosleepctl status | grep -q "^Lid: .*handled by autosleepd"'

# --- 5. HandleLid=no: logind's behaviour ---------------------------------------
mkdir -p "$(dirname "$conf")"
printf '[Logind]\nHandleLid=no\n' > "$conf"
systemctl restart autosleepd
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
check "with HandleLid=no autosleepd takes no lid inhibitor" \
	sh -c '! systemd-inhibit --list --no-pager | grep autosleepd | grep -q handle-lid-switch'
e0=$(externals)
c0=$(journal | grep -c 'Lid closed: the user is gone')
# Past logind's hold-off since the last resume.
sleep 6
arm_rtc 10
release
lid close
check "with HandleLid=no logind handles the closed lid (an external cycle after $e0)" \
	wait_until 150 sh -c "[ \"\$(autosleepctl stats --json | sed -n 's/.*\"ExternalSuspends\":\([0-9]*\).*/\1/p')\" -gt $e0 ]"
lid open
hold
check "and autosleepd did not count the lid as an absence" test "$(journal | grep -c 'Lid closed: the user is gone')" = "$c0"
check "but said logind handles it" sh -c "journalctl -u autosleepd -o cat | grep -q 'Lid closed; logind (HandleLid=no) handles the lid, leaving it alone'"

# --- clean up -----------------------------------------------------------------
kill "$lidtool"
wait "$lidtool" 2> /dev/null
exec 7>&-
rm -f "$conf" "$logind_conf" /run/vmtest-lid.fifo
systemctl restart systemd-logind
systemctl restart autosleepd
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
hold
