#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A held wake lock keeps autosleepd from suspending for 20 s; after release it
# suspends at once. The host checks, from QMP events, that no suspend began
# between the hold marks and how long after "release" the guest went down.
set -u
. /usr/lib/autosleep-vm/lib.sh

s0=$(stat_ success)
f0=$(stat_ fail)
# A late alarm, so a wrong suspend during the hold still comes back.
arm_rtc 60
mark "hold-start kernel-lock"
sleep 20
mark "hold-end kernel-lock"
check "no suspend while a wake lock was held for 20 s (success $s0 -> $(stat_ success))" \
	test "$(stat_ success)" -eq "$s0" -a "$(stat_ fail)" -eq "$f0"
arm_rtc 4
mark "release-timed kernel-lock"
release
if wait_cycle "$s0" "$f0"; then
	mark "resumed"
	ok "autosleepd suspended after the lock was released (success $s0 -> $(stat_ success))"
else
	not_ok "autosleepd suspended after the lock was released"
fi
