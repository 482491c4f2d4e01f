#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# An upgrade of the package, as every user meets it: apt installs a newer
# autosleep over a running daemon. The daemon must come back on the new
# binary (a new PID whose executable is the new file), a wake lock held by
# "autosleepctl hold" across the upgrade must still be held, with the same
# name, owner and deadline, and nothing may suspend while it is (the guard
# here, and the host's QMP check between the hold marks). A daemon that the
# admin stopped, or disabled, stays so through an upgrade. Runs before
# "package", which removes the package; it leaves the newer version
# installed, enabled and running.
set -u
. /usr/lib/autosleep-vm/lib.sh

old_deb=$(ls /var/cache/autosleep-vm/autosleep_*.deb 2> /dev/null | head -n1)
new_deb=$(ls /var/cache/autosleep-vm/upgrade/autosleep_*.deb 2> /dev/null | head -n1)
v_old=$(dpkg-deb -f "$old_deb" Version 2> /dev/null)
v_new=$(dpkg-deb -f "$new_deb" Version 2> /dev/null)
check "two versions of the package to upgrade between ($v_old, $v_new)" \
	sh -c '[ -n "$1" ] && [ -n "$2" ] && dpkg --compare-versions "$2" gt "$1"' sh "$v_old" "$v_new"
installed() { dpkg-query -W -f='${Version}' autosleep 2> /dev/null; }
# apt_install DEB: the way a user upgrades (or, with a lower version, goes back).
apt_install() {
	env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --allow-downgrades "$1" 2>&1 |
		sed 's/^/#   apt: /'
	return "${PIPESTATUS[0]}"
}
# exe_of PID: the file the process runs, " (deleted)" once dpkg replaced it.
exe_of() { readlink "/proc/$1/exe" 2> /dev/null; }
check "version $v_old is installed ($(installed))" [ "$(installed)" = "$v_old" ]
check "autosleepd is enabled and running before the upgrade" \
	sh -c '[ "$(systemctl is-enabled autosleepd.service)" = enabled ] && [ "$(systemctl is-active autosleepd.service)" = active ]'

# 1. Running, with a wake lock held across the upgrade.
autosleepctl hold --why upgrade -- sleep 600 &
holder=$!
check "autosleepctl hold --why upgrade is listed" wait_until 50 eval '[ -n "$(lock_of upgrade)" ]'
before=$(lock_of upgrade)
pid0=$(daemon_pid)
s0=$(stat_ success)
f0=$(stat_ fail)
# A wrong suspend comes back in 15 s; the guard then keeps the guest awake.
arm_rtc 15
mark "hold-start upgrade"
guard_start
release
t0=$(date +%s%N)
apt_install "$new_deb"
rc=$?
check "apt-get install $(basename "$new_deb") over the running daemon (exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms)" [ $rc = 0 ]
check "version $v_new is installed ($(installed))" [ "$(installed)" = "$v_new" ]
check "the daemon was restarted: PID $pid0 -> $(daemon_pid)" wait_daemon_back "$pid0" 150
pid1=$(daemon_pid)
check "the old daemon (PID $pid0) is gone" sh -c "! kill -0 $pid0 2> /dev/null"
check "the new daemon runs the installed file: /proc/$pid1/exe is '$(exe_of "$pid1")'" \
	[ "$(exe_of "$pid1")" = /usr/sbin/autosleepd ]
wait_until 50 eval '[ -n "$(lock_of upgrade)" ]'
after=$(lock_of upgrade)
check "the lock is still held, with the same name, owner and deadline (before: '$before', after: '${after:-none}')" \
	[ -n "$after" -a "$after" = "$before" ]
# A daemon that lost the lock suspends within a second or two of its start.
sleep 10
check "autosleepctl hold is still running" kill -0 "$holder"
mark "hold-end upgrade"
seen=$(guard_stop)
check "no suspend from the upgrade until the hold ended ($seen)" eval '! guard_tripped'
echo "# upgrade: $v_old -> $v_new, PID $pid0 -> $pid1, lock '$after', suspend_stats success $s0 -> $(stat_ success), fail $f0 -> $(stat_ fail)"
s1=$(stat_ success); f1=$(stat_ fail)
arm_rtc 4
release
kill "$holder" 2> /dev/null
pkill -TERM -P "$holder" -x sleep
wait "$holder" 2> /dev/null
check "the upgraded daemon suspends once the hold ended" wait_cycle "$s1" "$f1"

# 2. Stopped but enabled: an upgrade does not start it.
systemctl stop autosleepd.service
apt_install "$old_deb" > /dev/null
apt_install "$new_deb"
check "an upgrade leaves a stopped daemon stopped ($(systemctl is-active autosleepd.service))" \
	[ "$(systemctl is-active autosleepd.service)" = inactive ]
check "... and enabled ($(systemctl is-enabled autosleepd.service))" [ "$(systemctl is-enabled autosleepd.service)" = enabled ]

# 3. Disabled: an upgrade neither enables nor starts it.
systemctl disable autosleepd.service 2> /dev/null
apt_install "$old_deb" > /dev/null
apt_install "$new_deb"
check "an upgrade leaves a disabled daemon disabled ($(systemctl is-enabled autosleepd.service 2>&1))" \
	[ "$(systemctl is-enabled autosleepd.service 2>&1)" = disabled ]
check "... and not running ($(systemctl is-active autosleepd.service))" \
	[ "$(systemctl is-active autosleepd.service)" = inactive ]
[ -e "$knob_file" ] && check "... with the knob at 0" knob_is 0

systemctl enable --now autosleepd.service 2> /dev/null
check "enabled again, the upgraded daemon runs" wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
hold
