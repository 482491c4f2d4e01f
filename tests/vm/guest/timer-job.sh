#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The work a WakeSystem timer starts in the timers scenario: a line a second
# for 20 s, with marks for the host at its first and last line. The label
# (on, off) comes from /run/vmtest-job.label.
label=$(cat /run/vmtest-job.label 2> /dev/null || echo none)
# A service is a session leader: a plain open of the tty would make it the
# controlling one, and the session leader's exit would hang it up for the
# test runner too. dd opens it with O_NOCTTY.
mark() { echo "@mark $*" | dd of=/dev/ttyS1 oflag=noctty status=none; }
out=/var/tmp/vmtest-job-$label.log
: > "$out"
for i in $(seq 1 20); do
	[ "$i" = 1 ] && mark "job-start $label"
	echo "line $i $(cut -d' ' -f1 /proc/uptime)" >> "$out"
	[ "$i" = 20 ] && mark "job-end $label"
	[ "$i" -lt 20 ] && sleep 1
done
exit 0
