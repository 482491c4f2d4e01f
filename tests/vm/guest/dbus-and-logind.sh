#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The D-Bus API under systemd with real logind, on the hardened unit:
# "autosleepctl hold" and "systemd-inhibit --what=sleep" each keep the guest
# awake, a SIGKILLed client's lock disappears, and the unit's sandbox still
# lets autosleepd write wake_lock and read /dev/input. The host checks from
# QMP events that nothing suspended between the hold marks.
set -u
. /usr/lib/autosleep-vm/lib.sh

# Exactly our lease's lock: autosleepd.activity (input, resume grace) is another.
held_by_autosleepd() { tr ' ' '\n' < /sys/power/wake_lock | grep -qx autosleepd; }

check "autosleepd answers on the system bus" autosleepctl status
score=$(systemd-analyze security autosleepd.service 2>/dev/null | sed -n 's/.*Overall exposure level for autosleepd.service: \([0-9.]*\).*/\1/p')
check "the running unit's exposure level is at most 1.0 (measured: ${score:-none})" \
	awk -v s="${score:-99}" 'BEGIN { exit !(s <= 1.0) }'

# 1. autosleepctl hold keeps the machine awake for the command's lifetime.
s0=$(stat_ success); f0=$(stat_ fail)
autosleepctl hold --why "vm test" -- sleep 300 &
hold=$!
check "autosleepctl hold shows in autosleepctl list" wait_until 50 sh -c 'autosleepctl list | grep -q "^sleep .*vm test"'
check "the hardened unit mirrors the lock in /sys/power/wake_lock" wait_until 20 held_by_autosleepd
arm_rtc 60
mark "hold-start autosleepctl"
release
sleep 15
mark "hold-end autosleepctl"
check "no suspend during 15 s of autosleepctl hold" test "$(stat_ success)" -eq "$s0" -a "$(stat_ fail)" -eq "$f0"
arm_rtc 4
# Mark first: the guest may be frozen before a later echo gets out.
mark "release-timed autosleepctl"
pkill -TERM -P "$hold" -x sleep
wait "$hold"
rc=$?
check "autosleepctl hold returned its command's status (143 for SIGTERM, got $rc)" [ "$rc" -eq 143 ]
check "autosleepd suspended once the held command ended" wait_cycle "$s0" "$f0"
check "the kernel lock went with the last lease" eval '! held_by_autosleepd'

# 2. A logind block inhibitor from the stock tool keeps it awake too.
s0=$(stat_ success); f0=$(stat_ fail)
systemd-inhibit --what=sleep --who=vmtest --why="inhibitor test" --mode=block sleep 300 &
inh=$!
check "autosleepd follows the logind inhibitor" wait_until 50 sh -c 'autosleepctl list | grep -q "^logind-inhibitor"'
arm_rtc 60
mark "hold-start inhibit"
release
sleep 15
mark "hold-end inhibit"
check "no suspend during 15 s of systemd-inhibit --what=sleep" \
	test "$(stat_ success)" -eq "$s0" -a "$(stat_ fail)" -eq "$f0"
arm_rtc 4
mark "release-timed inhibit"
pkill -TERM -P "$inh" -x sleep
wait "$inh"
check "autosleepd suspended once the inhibitor was gone" wait_cycle "$s0" "$f0"

# 3. A client killed with SIGKILL loses its lock at once.
autosleepctl hold --name victim -- sleep 300 &
victim=$!
wait_until 50 sh -c 'autosleepctl list | grep -q "^victim "'
t0=$(date +%s%N)
kill -KILL "$victim"
if wait_until 20 sh -c '! autosleepctl list | grep -q "^victim "'; then
	ok "SIGKILLed client's lock gone after $(( ($(date +%s%N) - t0) / 1000000 )) ms (polled with autosleepctl list)"
else
	not_ok "SIGKILLed client's lock gone within 2 s"
fi
pkill -x sleep
wait 2>/dev/null

# 4. Inside the unit's sandbox (its mount namespace and device cgroup),
# /dev/input is readable and other devices are not.
pid=$(systemctl show -p MainPID --value autosleepd.service)
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
probe() {
	sh -c "echo \$\$ > '$cg/cgroup.procs' && exec nsenter -t $pid -m sh -c 'exec 3< $1'" 2>/dev/null
}
ev=$(ls /dev/input/event* 2>/dev/null | head -n1)
check "an input device exists to test with (${ev:-none})" [ -n "$ev" ]
check "$ev is readable inside autosleepd's sandbox" probe "${ev:-/dev/input/event0}"
if probe /dev/vda; then not_ok "/dev/vda is denied inside the sandbox"; else ok "/dev/vda is denied inside the sandbox"; fi
hold
