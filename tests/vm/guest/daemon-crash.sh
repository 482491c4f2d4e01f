#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A held lock survives the daemon: SIGKILL autosleepd while
# "autosleepctl hold" runs. systemd restarts it (Restart=on-failure), the
# lock is listed again with the same name, owner and deadline, and nothing
# suspends until the hold ends (the host checks QMP events between the hold
# marks, which span the kill and the restart). After the hold the guest
# suspends and the RTC wakes it.
set -u
. /usr/lib/autosleep-vm/lib.sh

autosleepctl hold --why crash -- sleep 300 &
holder=$!
check "autosleepctl hold --why crash is listed" wait_until 50 eval '[ -n "$(lock_of crash)" ]'
before=$(lock_of crash)
pid=$(daemon_pid)
n0=$(daemon_restarts)
# A wrong suspend comes back in 10 s; the guard then keeps the guest awake.
arm_rtc 10
mark "hold-start crash"
guard_start
release
kill -KILL "$pid"
t0=$(date +%s%N)
if wait_daemon_back "$pid" 150; then
	ok "systemd restarted autosleepd after SIGKILL in $(( ($(date +%s%N) - t0) / 1000000 )) ms (NRestarts $n0 -> $(daemon_restarts))"
else
	not_ok "systemd restarted autosleepd after SIGKILL within 15 s (MainPID $(daemon_pid), $(systemctl is-active autosleepd))"
fi
# The client learns of the restart from NameOwnerChanged; give it the time a
# re-acquire takes, then the lock must be back exactly as it was.
wait_until 50 eval '[ -n "$(lock_of crash)" ]'
after=$(lock_of crash)
check "after the restart the lock is listed with the same name, owner and deadline (before: '$before', after: '${after:-none}')" \
	[ -n "$after" -a "$after" = "$before" ]
# A daemon that lost the lock suspends within a second or two of its start.
sleep 10
check "autosleepctl hold is still running" kill -0 "$holder"
mark "hold-end crash"
seen=$(guard_stop)
check "no suspend from the kill until the hold ended ($seen)" eval '! guard_tripped'
# Counts, alarm and mark first: a daemon that lost the lock suspends at the release.
s1=$(stat_ success); f1=$(stat_ fail)
arm_rtc 4
mark "release-timed crash"
release
pkill -TERM -P "$holder" -x sleep
wait "$holder"
rc=$?
check "autosleepctl hold returned its command's status across the restart (143 for SIGTERM, got $rc)" [ "$rc" -eq 143 ]
check "autosleepd suspended once the hold ended" wait_cycle "$s1" "$f1"
