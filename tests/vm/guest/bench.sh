#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The VM rows of docs/benchmarks.md, with the real unit, system bus and
# logind: AcquireWakeLock + close against a Peer.Ping, logind's Inhibit() +
# close and a raw /sys/power/wake_lock + wake_unlock write, interleaved (the
# test's own kernel lock is held, so the suspender waits in wakeup_count
# meanwhile), then the daemon's CPU per 1,000 evdev events at up to 1,000
# events/s (what the uinput tool manages under TCG) and its wake_lock writes
# per second. Numbers are "# " lines; a row fails
# only when its benchmark breaks. Under QEMU TCG every microsecond is slow:
# compare the ratios.
set -u
. /usr/lib/autosleep-vm/lib.sh
tools=/usr/lib/autosleep-vm

hold
if out=$("$tools/bench-client" "${BENCH_ITERATIONS:-200}" 2>&1); then
	echo "$out"
	ok "bench: ping, AcquireWakeLock, logind Inhibit and raw wake_lock writes measured"
else
	echo "$out" | sed 's/^/# /'
	not_ok "bench: ping, AcquireWakeLock, logind Inhibit and raw wake_lock writes measured"
fi

# CPU from /proc/PID/stat (utime + stime of all threads, in clock ticks: the
# guest kernel has no schedstats), over as many events as the tool managed.
stat_json() { autosleepctl stats --json | grep -o "\"$1\":[0-9]*" | cut -d: -f2; }
pid=$(daemon_pid)
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$pid"/stat; }
w0=$(stat_json ActivityHoldWrites)
c0=$(cpu_ticks)
t0=$(date +%s%N)
if "$tools/uinput-tool" flood "autosleep bench flood" 1000 10 2> /tmp/bench-flood.log > /dev/null; then
	t1=$(date +%s%N)
	sleep 1.5 # a pending refresh lands
	c1=$(cpu_ticks)
	w1=$(stat_json ActivityHoldWrites)
	events=$(grep -o '^[0-9]* events' /tmp/bench-flood.log | cut -d' ' -f1)
	secs=$(( (t1 - t0 + 999999999) / 1000000000 ))
	cpu_us=$(( (c1 - c0) * 1000000 / hz ))
	echo "# bench: input flood: $(cat /tmp/bench-flood.log)"
	echo "# bench: input flood: daemon CPU $cpu_us us (clock ticks of $((1000000 / hz)) us) for ${events:-?} events:" \
		"$(( cpu_us * 1000 / ${events:-1} )) us per 1,000 events; $((w1 - w0)) wake_lock writes in $secs s"
	ok "bench: input flood measured"
else
	not_ok "bench: input flood measured ($(cat /tmp/bench-flood.log))"
fi
