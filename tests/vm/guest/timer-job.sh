#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The work a WakeSystem timer starts in the timers scenario: a line a second
# for 20 s, with marks for the host at its first and last line. The label
# (on, off) comes from /run/vmtest-job.label.
label=$(cat /run/vmtest-job.label 2> /dev/null || echo none)
out=/var/tmp/vmtest-job-$label.log
: > "$out"
for i in $(seq 1 20); do
	[ "$i" = 1 ] && echo "@mark job-start $label" > /dev/ttyS1
	echo "line $i $(cut -d' ' -f1 /proc/uptime)" >> "$out"
	[ "$i" = 20 ] && echo "@mark job-end $label" > /dev/ttyS1
	[ "$i" -lt 20 ] && sleep 1
done
exit 0
