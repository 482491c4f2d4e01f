#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A hung daemon is restarted by systemd's watchdog, and a held lock keeps the
# guest awake throughout. With WatchdogSec lowered to 10 s (a runtime
# drop-in), "autosleepctl hold" running and the test's kernel lock released,
# SIGSTOP autosleepd: systemd must kill it on the watchdog timeout and start
# it again, and the host checks from QMP events that nothing suspended from
# before the stop until after the restart. The lock must be listed again
# after the restart, as after a crash.
set -u
. /usr/lib/autosleep-vm/lib.sh
watchdog=10
dropin=/run/systemd/system/autosleepd.service.d/vmtest-watchdog.conf

# Lower the watchdog; the daemon learns WATCHDOG_USEC when it starts.
mkdir -p "${dropin%/*}"
printf '[Service]\nWatchdogSec=%ss\n' "$watchdog" > "$dropin"
systemctl daemon-reload
pid=$(daemon_pid)
systemctl restart autosleepd.service
check "autosleepd restarted with WatchdogSec=${watchdog}s ($(systemctl show -p WatchdogUSec --value autosleepd.service))" \
	wait_daemon_back "$pid" 100

autosleepctl hold --why watchdog -- sleep 300 &
holder=$!
check "autosleepctl hold --why watchdog is listed" wait_until 50 eval '[ -n "$(lock_of watchdog)" ]'
before=$(lock_of watchdog)
pid=$(daemon_pid)
n0=$(daemon_restarts)
cursor=$(journalctl -u autosleepd.service -n 1 -o cat --no-pager --show-cursor | sed -n 's/^-- cursor: //p')
# A wrong suspend comes back soon after the restart is due.
arm_rtc $(( watchdog + 10 ))
mark "hold-start watchdog"
guard_start
release
kill -STOP "$pid"
t0=$(date +%s%N)
# The last ping came at most WatchdogSec/2 before the stop (sd-event pings
# every 1/4 to 1/2 of it), so the restart is due 5-10 s in, plus RestartSec.
sleep $(( watchdog / 2 - 1 ))
check "no suspend while autosleepd is stopped ($(( watchdog / 2 - 1 )) s: success $guard_s0 -> $(stat_ success), fail $guard_f0 -> $(stat_ fail))" \
	eval '! guard_tripped'
if wait_daemon_back "$pid" $(( (watchdog + 20) * 10 )); then
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	check "systemd restarted the stopped daemon after $ms ms (WatchdogSec=${watchdog}s, NRestarts $n0 -> $(daemon_restarts))" \
		[ "$ms" -ge $(( watchdog * 500 )) -a "$(daemon_restarts)" -gt "$n0" ]
else
	not_ok "systemd restarted the stopped daemon within $((watchdog + 20)) s (MainPID $(daemon_pid), NRestarts $(daemon_restarts))"
fi
check "the journal says the watchdog fired" sh -c \
	"journalctl -u autosleepd.service --after-cursor='$cursor' -o cat --no-pager | grep -q 'Watchdog timeout'"
wait_until 50 eval '[ -n "$(lock_of watchdog)" ]'
after=$(lock_of watchdog)
check "after the restart the lock is listed with the same name, owner and deadline (before: '$before', after: '${after:-none}')" \
	[ -n "$after" -a "$after" = "$before" ]
# A daemon that lost the lock suspends within a second or two of its start.
sleep 10
mark "hold-end watchdog"
seen=$(guard_stop)
check "no suspend from the stop until the hold ended ($seen)" eval '! guard_tripped'
echo "# autosleepd around the watchdog restart:"
journalctl -u autosleepd.service --after-cursor="$cursor" -o cat --no-pager | head -n 30 | sed 's/^/#   /'
# Counts, alarm and mark first: a daemon that lost the lock suspends at the release.
s1=$(stat_ success); f1=$(stat_ fail)
arm_rtc 4
mark "release-timed watchdog"
release
pkill -TERM -P "$holder" -x sleep
wait "$holder"
check "autosleepd suspended once the hold ended" wait_cycle "$s1" "$f1"

# Back to the shipped watchdog for later scenarios.
rm -f "$dropin"
systemctl daemon-reload
pid=$(daemon_pid)
systemctl restart autosleepd.service
wait_daemon_back "$pid" 100
