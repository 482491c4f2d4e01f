#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The machine after autosleepd's last failed start: a daemon that keeps
# failing (a broken configuration, then SIGKILL while a lock is held) ends
# in "failed" after its restarts, and then logind must be able to suspend,
# with no wake lock of ours left in /sys/power/wake_lock.
#   1. control, the unit as it was: no hand-back (masked: a drop-in cannot
#      reset OnFailure=) and no disarm in ExecStopPost= (on this kernel,
#      without the knob, ExecStopPost= did nothing else): our wake lock
#      stays in /sys/power/wake_lock. logind's suspend is tried and its
#      outcome printed, not checked: whether our last count write left the
#      check armed depends on where the thread was when it was killed, and
#      here it was not armed (logind suspended), so the EBUSY the disarm
#      prevents is shown by tests/unit/test-hand-back's fake kernel only;
#   2. the shipped unit: autosleepd-hand-back.service runs, our lock is gone,
#      and logind suspends;
#   3. the hand-back started while autosleepd runs, as systemd >= 254 does
#      before every automatic restart: it skips itself, and the running
#      daemon's kernel wake lock and a client's lock stay.
set -u
. /usr/lib/autosleep-vm/lib.sh

old=/run/systemd/system/autosleepd.service.d/zz-old-unit.conf
broken=/etc/autosleep/autosleep.conf.d/99-broken.conf
ours_held() { tr ' ' '\n' < /sys/power/wake_lock | grep -qx autosleepd; }
failed() { [ "$(systemctl show -p ActiveState --value autosleepd.service)" = failed ]; }

# ROUND: a cycle of autosleepd's (its count write arms the check), a lock,
# then a configuration it refuses and SIGKILL: it fails until systemd gives up.
fail_for_good() {
	local round=$1 s0 f0 pid
	s0=$(stat_ success); f0=$(stat_ fail)
	# After a start the input watch holds for IdleTimeoutSec (10 s): the alarm must outlast it.
	arm_rtc 15
	release
	check "$round: autosleepd suspended once (its wakeup_count write arms the check)" wait_cycle "$s0" "$f0"
	autosleepctl hold --why "hand-back $round" -- sleep 600 &
	holder=$!
	check "$round: a lock is held and autosleepd's kernel wake lock with it" \
		wait_until 50 eval '[ -n "$(lock_of "hand-back '"$round"'")" ] && ours_held'
	printf '[Suspend]\nBogus=yes\n' > "$broken"
	pid=$(daemon_pid)
	kill -KILL "$pid"
	t0=$(date +%s)
	if wait_until 900 failed; then
		ok "$round: autosleepd failed for good after $(( $(date +%s) - t0 )) s and $(daemon_restarts) restarts ($(systemctl show -p Result --value autosleepd.service))"
	else
		not_ok "$round: autosleepd failed for good within 90 s ($(systemctl show -p ActiveState,SubState,NRestarts --value autosleepd.service | paste -sd' '))"
	fi
	kill "$holder" 2> /dev/null
	wait "$holder" 2> /dev/null
}

# logind's suspend, with nothing of the test's own held: did it succeed?
logind_suspend() {
	local round=$1 want=$2 s0 f0 s1 f1
	s0=$(stat_ success); f0=$(stat_ fail)
	arm_rtc 5
	release
	systemctl suspend
	wait_cycle "$s0" "$f0"
	s1=$(stat_ success); f1=$(stat_ fail)
	echo "# $round: systemctl suspend: success $s0 -> $s1, fail $f0 -> $f1, last errno $(stat_ last_failed_errno)"
	if [ "$want" = any ]; then
		echo "# $round: not checked (see the top of this file)"
	elif [ "$want" = succeeds ]; then
		check "$round: logind suspended the guest (success $s0 -> $s1, fail $f0 -> $f1)" [ "$s1" -gt "$s0" -a "$f1" -eq "$f0" ]
	else
		check "$round: logind's suspend failed (success $s0 -> $s1, fail $f0 -> $f1, errno $(stat_ last_failed_errno))" \
			[ "$s1" -eq "$s0" -a "$f1" -gt "$f0" ]
	fi
	# The RTC alarm of a failed suspend is still due: let it pass awake.
	echo 0 > /sys/class/rtc/rtc0/wakealarm
}

# Back to the daemon as the other scenarios expect it.
recover() {
	rm -f "$broken" "$old"
	systemctl unmask --runtime autosleepd-hand-back.service
	systemctl daemon-reload
	systemctl reset-failed autosleepd.service autosleepd-hand-back.service
	systemctl start autosleepd.service
	wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
}

# --- 1. control: the unit without hand-back and disarm -----------------------
mkdir -p "$(dirname "$old")"
printf '[Service]\nExecStopPost=\n' > "$old"
systemctl mask --runtime autosleepd-hand-back.service
systemctl daemon-reload
systemctl restart autosleepd.service
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
cursor=$(journalctl -n 1 -o cat --no-pager --show-cursor | sed -n 's/^-- cursor: //p')
fail_for_good control
sleep 2
check "control: the hand-back did not run" \
	sh -c '! journalctl -u autosleepd-hand-back.service --after-cursor="$0" -o cat --no-pager | grep -q "Handed the machine back"' "$cursor"
check "control: autosleepd's kernel wake lock outlived the daemon ($(cat /sys/power/wake_lock))" ours_held
logind_suspend control any
recover

# --- 2. the shipped unit -------------------------------------------------------
check "the shipped unit names the hand-back unit in OnFailure=" \
	sh -c 'systemctl show -p OnFailure --value autosleepd.service | grep -qw autosleepd-hand-back.service'
cursor=$(journalctl -n 1 -o cat --no-pager --show-cursor | sed -n 's/^-- cursor: //p')
fail_for_good shipped
# Exited (ExecMainCode 1) with status 0 and inactive again: Result= alone says success before any run.
# (One property per call: systemctl show prints several in its own order.)
check "autosleepd-hand-back.service ran to its end" \
	wait_until 100 sh -c 'u=autosleepd-hand-back.service
		[ "$(systemctl show -p ActiveState --value $u)" = inactive ] &&
		[ "$(systemctl show -p ExecMainCode --value $u)" = 1 ] &&
		[ "$(systemctl show -p ExecMainStatus --value $u)" = 0 ] &&
		journalctl -u autosleepd-hand-back.service --after-cursor="$0" -o cat --no-pager | grep -q "Handed the machine back"' "$cursor"
journalctl -u autosleepd-hand-back.service --after-cursor="$cursor" -o cat --no-pager | sed 's/^/# hand-back: /'
check "no kernel wake lock of autosleepd's is left ($(cat /sys/power/wake_lock))" eval '! ours_held'
logind_suspend shipped succeeds
recover
check "autosleepd runs again afterwards" [ "$(systemctl is-active autosleepd.service)" = active ]

# --- 3. a hand-back while autosleepd runs (systemd >= 254 starts it before each restart) ---
autosleepctl hold --why "hand-back running" -- sleep 600 &
holder=$!
check "running: a lock is held and autosleepd's kernel wake lock with it" \
	wait_until 50 eval '[ -n "$(lock_of "hand-back running")" ] && ours_held'
cursor=$(journalctl -n 1 -o cat --no-pager --show-cursor | sed -n 's/^-- cursor: //p')
systemctl start autosleepd-hand-back.service
check "running: the hand-back skipped itself (autosleepd is not failed)" \
	sh -c '! journalctl -u autosleepd-hand-back.service --after-cursor="$0" -o cat --no-pager | grep -q "Handed the machine back"' "$cursor"
journalctl -u autosleepd-hand-back.service --after-cursor="$cursor" -o cat --no-pager | sed 's/^/# hand-back while running: /'
check "running: autosleepd's kernel wake lock is still there ($(cat /sys/power/wake_lock))" ours_held
check "running: the lock is still held" eval '[ -n "$(lock_of "hand-back running")" ]'
kill "$holder" 2> /dev/null
wait "$holder" 2> /dev/null
