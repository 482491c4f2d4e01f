#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Wake lock acquires racing suspend attempts. /sys/power/pm_test=$level
# makes every state write sync, freeze, suspend and resume the devices, and
# thaw without entering S3, so autosleepd (restarted with DelaySec=100ms, the
# shipped default, and input watching off) cycles several times a second,
# while race-client takes and drops a wake lock over D-Bus at random
# intervals. From /dev/kmsg ("PM: suspend entry"/"exit", and with
# pm_debug_messages the kernel's "Wakeup pending, aborting suspend"), read
# in its own order with the client's marks (printk_devkmsg=on, or the
# kernel would drop them over its rate limit), it checks that every attempt
# that overlapped a granted lock (in flight at the reply or entered while
# held) was backed out of by the kernel. The default level
# is "devices": at "freezer" pm_test returns before the kernel looks for
# wakeup events once every task froze in one pass. RACE_ITERATIONS (default
# 100, 1000 with run-vm-suite.sh --long) sets the number of acquires. The
# host checks that the guest never really suspended during the race.
set -u
. /usr/lib/autosleep-vm/lib.sh
iterations=${RACE_ITERATIONS:-100}
level=${PM_TEST_LEVEL:-devices}
conf=/etc/autosleep/autosleep.conf.d/90-vmtest-pm-test.conf

check "the kernel offers pm_test ($(cat /sys/power/pm_test 2> /dev/null))" grep -qw "$level" /sys/power/pm_test
delay0=$(cat /sys/module/suspend/parameters/pm_test_delay 2> /dev/null)
echo "$level" > /sys/power/pm_test
echo 0 > /sys/module/suspend/parameters/pm_test_delay 2> /dev/null
check "pm_test is '$level' and pm_test_delay is 0 (was ${delay0:-absent})" \
	eval 'grep -q "\[$level\]" /sys/power/pm_test && [ "$(cat /sys/module/suspend/parameters/pm_test_delay)" = 0 ]'
devkmsg0=$(cat /proc/sys/kernel/printk_devkmsg 2> /dev/null)
echo on > /proc/sys/kernel/printk_devkmsg
check "printk_devkmsg is on, so the client's marks are not rate limited (was ${devkmsg0:-absent})" \
	grep -qx on /proc/sys/kernel/printk_devkmsg
debug0=$(cat /sys/power/pm_debug_messages 2> /dev/null)
echo 1 > /sys/power/pm_debug_messages
check "pm_debug_messages is on, so the kernel logs where it backs out (was ${debug0:-absent})" \
	grep -qx 1 /sys/power/pm_debug_messages

# The shipped DelaySec: with 10ms, acquires starved (no reply in 25 s) in 2
# of 4 runs while the daemon kept cycling.
printf '[Backoff]\nDelaySec=100ms\n[Activity]\nIdleTimeoutSec=0\n' > "$conf"
pid=$(daemon_pid)
systemctl restart autosleepd.service
check "autosleepd restarted with DelaySec=100ms and no input watching" wait_daemon_back "$pid" 100

# A late alarm: pm_test never reaches S3, so this only matters if it did.
arm_rtc 120
s0=$(stat_ success); f0=$(stat_ fail)
cursor=$(journalctl -u autosleepd.service -n 1 -o cat --no-pager --show-cursor | sed -n 's/^-- cursor: //p')
mark "hold-start pm-test-race"
t0=$(date +%s%N)
# race-client releases the test's kernel lock once it follows the kernel log,
# and takes it again at the end. First the instrument: without a lock, its
# windows must catch attempts entering.
/usr/lib/autosleep-vm/race-client --no-lock 10 300 50 vmtest
if ! /usr/lib/autosleep-vm/race-client "$iterations" 50 100 vmtest; then
	echo "# autosleepd during the race, last 40 lines:"
	journalctl -u autosleepd.service --after-cursor="$cursor" -o short-monotonic --no-pager | tail -n 40 | sed 's/^/#   /'
fi
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
mark "hold-end pm-test-race"
hold
s1=$(stat_ success); f1=$(stat_ fail)
echo "# pm_test: suspend_stats success $s0 -> $s1, fail $f0 -> $f1 in $ms ms ($(awk -v n=$(( s1 - s0 + f1 - f0 )) -v t="$ms" 'BEGIN { printf "%.1f", n * 1000 / t }') attempts/s)"
echo "# autosleepd's results:" $(journalctl -u autosleepd.service --after-cursor="$cursor" -o cat --no-pager |
	sed -n 's/^Suspend #[0-9]*: \([a-z-]*\).*/\1/p' | sort | uniq -c)

# Back to real suspends and the guest's configuration.
echo none > /sys/power/pm_test
[ -n "$delay0" ] && echo "$delay0" > /sys/module/suspend/parameters/pm_test_delay
[ -n "$debug0" ] && echo "$debug0" > /sys/power/pm_debug_messages
[ -n "$devkmsg0" ] && echo "$devkmsg0" > /proc/sys/kernel/printk_devkmsg
rm -f "$conf"
pid=$(daemon_pid)
systemctl restart autosleepd.service
wait_daemon_back "$pid" 100
