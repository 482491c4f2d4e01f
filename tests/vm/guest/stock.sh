#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Debian's stock kernel (linux-image-amd64 from the archive), with the same
# autosleep package. It has neither CONFIG_PM_USERSPACE_AUTOSLEEP nor our
# knob nor /sys/power/wake_lock. autosleepd must say so at start and in
# status ("none"); wireguard-and-crng shows the cost of every cycle. Its
# kernel lock is then an eventfd in an EPOLLWAKEUP epoll, and that alone must
# hold the kernel back, with the daemon out of the picture:
#   1. a lease held and the daemon frozen (SIGSTOP): /sys/class/wakeup shows
#      the daemon's source ("[eventfd]") active, and a wakeup_count read blocks;
#   2. a wakeup_count write, then a lease, then a state write: EBUSY;
#   3. the same sequence without the lease suspends.
# The test's own hold here is wake-hold's timerfd ("[timerfd]"), so the two
# are told apart by name.
set -u
. /usr/lib/autosleep-vm/lib.sh

rel=$(uname -r)
kpkg=$(dpkg -S "/boot/vmlinuz-$rel" 2> /dev/null | cut -d: -f1)
check "booted Debian's stock kernel $rel from its package '$kpkg' (Debian Kernel Team)" \
	sh -c "[ -n '$kpkg' ] && dpkg-query -W -f='\${Maintainer}' '$kpkg' | grep -q 'Debian Kernel Team'"
check "linux-image-amd64 is installed" sh -c "dpkg-query -W -f='\${Status}' linux-image-amd64 | grep -q 'ok installed'"
check "no /sys/power/wake_lock (Debian's kernel lacks CONFIG_PM_WAKELOCKS)" [ ! -e /sys/power/wake_lock ]
check "no /sys/power/userspace_autosleep (no knob patch)" [ ! -e /sys/power/userspace_autosleep ]
check "mem_sleep is deep (real S3)" grep -q '\[deep\]' /sys/power/mem_sleep

j=$(journalctl -u autosleepd -o cat --no-pager)
check "autosleepd warned at start that every cycle reseeds the crng and clears WireGuard keys" \
	grep -qF 'Userspace autosleep: none: this kernel lacks CONFIG_PM_USERSPACE_AUTOSLEEP and /sys/power/userspace_autosleep: every suspend cycle will reseed the crng and clear all WireGuard session keys' <<< "$j"
starts=$(systemctl show -p NRestarts --value autosleepd.service)
n=$(grep -c 'No /sys/power/wake_lock' <<< "$j")
check "autosleepd logged the missing /sys/power/wake_lock once per start ($n lines, $((starts + 1)) starts)" \
	[ "$n" = $((starts + 1)) ]
st=$(autosleepctl status 2>&1)
echo "# autosleepctl status on Debian's stock kernel:"
sed 's/^/#   /' <<< "$st"
check "autosleepctl status: 'Frequent suspend: none (no /sys/power/userspace_autosleep)'" \
	grep -qF 'Frequent suspend: none (no /sys/power/userspace_autosleep)' <<< "$st"
check "autosleepctl status: 'wake_lock missing (the kernel lock is an epoll wakeup source)'" \
	grep -qF 'Kernel:           PM_USERSPACE_AUTOSLEEP=n, wake_lock missing (the kernel lock is an epoll wakeup source)' <<< "$st"
check "autosleepctl status warns that every suspend reseeds the crng and clears the keys" \
	grep -qF 'force: every suspend reseeds the crng and clears all WireGuard session keys.' <<< "$st"

# active_sources: the names of the wakeup sources active now.
active_sources() {
	local d t
	for d in /sys/class/wakeup/wakeup*; do
		t=$(cat "$d/active_time_ms" 2> /dev/null) || continue
		[ "$t" != 0 ] && cat "$d/name"
	done
}
ours_active() { active_sources | grep -qxF '[eventfd]'; }
ours_idle() { ! ours_active; }
lease_listed() { autosleepctl list 2> /dev/null | grep -q stock-lease; }
lease_gone() { ! lease_listed; }
lease_pid=
take_lease() {
	autosleepctl hold --name=stock-lease --why='stock kernel test' -- sleep 600 > /dev/null 2>&1 &
	lease_pid=$!
	wait_until 100 lease_listed
}
drop_lease() {
	kill "$lease_pid" 2> /dev/null
	wait "$lease_pid" 2> /dev/null
	wait_until 100 lease_gone
}
# write_count: one wakeup_count read and write-back, as autosleepd does;
# retried a few times in case a wakeup event moved the count in between.
write_count() {
	local i c
	for i in 1 2 3 4 5; do
		c=$(cat /sys/power/wakeup_count) && echo "$c" 2> /dev/null > /sys/power/wakeup_count && return 0
		sleep 0.2
	done
	return 1
}

# 1. The daemon frozen with a lease: only the kernel holds the machine.
check "before the lease, autosleepd's source is idle (active: $(active_sources | paste -sd' '))" ours_idle
check "a lease (autosleepctl hold) is listed" take_lease
check "with the lease, /sys/class/wakeup shows autosleepd's '[eventfd]' source active" wait_until 30 ours_active
arm_rtc 60
guard_start
pid=$(daemon_pid)
kill -STOP "$pid"
release
sleep 1
echo "# daemon $pid stopped; active wakeup sources: $(active_sources | paste -sd' ')"
check "daemon stopped (SIGSTOP), the test's hold released: '[eventfd]' still active" ours_active
check "... and the test's own '[timerfd]' is not" eval '! active_sources | grep -qxF "[timerfd]"'
timeout 3 cat /sys/power/wakeup_count > /dev/null
rc=$?
check "... and a wakeup_count read blocks (timeout after 3 s: exit $rc)" [ $rc = 124 ]
hold
kill -CONT "$pid"
seen=$(guard_stop)
check "the frozen daemon's lease kept the machine awake ($seen)" eval '! guard_tripped'
drop_lease
check "with the lease released, autosleepd's source goes idle" wait_until 50 ours_idle

# 2. and 3. The kernel's own check, armed by a wakeup_count write; autosleepd
# disabled so that only the test writes state.
autosleepctl disable > /dev/null
s0=$(stat_ success)
arm_rtc 30
release
if write_count; then
	ok "wakeup_count written back"
	take_lease
	err=$( { echo mem > /sys/power/state; } 2>&1)
	rc=$?
	check "wakeup_count write, then a lease, then a state write: it fails with EBUSY (exit $rc: ${err##*: })" \
		eval '[ $rc -ne 0 ] && grep -q "Device or resource busy" <<< "$err"'
	check "... and the machine did not suspend (suspend_stats/success $s0 -> $(stat_ success))" [ "$(stat_ success)" = "$s0" ]
	hold
	drop_lease
else
	hold
	not_ok "wakeup_count written back (a wakeup event kept moving the count)"
fi
wait_until 50 ours_idle
s0=$(stat_ success)
arm_rtc 5
mark "release stock-no-lease"
release
if write_count; then
	err=$( { echo mem > /sys/power/state; } 2>&1)
	rc=$?
	hold
	mark "resumed stock-no-lease"
	check "the same sequence without a lease suspends (exit $rc${err:+: ${err##*: }}; success $s0 -> $(stat_ success))" \
		eval '[ $rc = 0 ] && [ "$(stat_ success)" -gt "$s0" ]'
else
	hold
	not_ok "wakeup_count written back for the suspend without a lease"
fi
autosleepctl enable > /dev/null
