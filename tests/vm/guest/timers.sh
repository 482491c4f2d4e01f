#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Scheduled work under autosleepd (daemon/timers.c), with systemd's own
# timers: a timer with WakeSystem=true and OnCalendar= 25 s ahead starts a oneshot
# service that writes a line a second for 20 s (timer-job.sh).
#   on:  the machine suspends before the timer is due, systemd's alarm wakes
#        it (no system_wakeup from the host), the 20 lines are written with no
#        suspend in between, and the next suspend comes within DelaySec + 1 s
#        of the job's end. The host checks the QMP timeline against the marks.
#   off: the same with HoldWakeTimers=no: the job is frozen mid-way (a QMP
#        SUSPEND between its first and last line), so the check can fail.
# Then an alarm due 1.5 s after an idle period starts: with GuardSec=0 the
# kernel's alarmtimer refuses and the record says alarm-imminent with the
# delay not grown; with the default GuardSec=3s autosleepd holds instead and
# no attempt is refused. Last, a soak run with a WakeSystem timer every 30 s
# names the timer as the wake source in its records.
set -u
. /usr/lib/autosleep-vm/lib.sh

conf=/etc/autosleep/autosleep.conf.d/60-timers.conf
units=/run/systemd/system
no_locks() { [ "$(autosleepctl list --json 2> /dev/null)" = "[]" ]; }
journal() { journalctl -u autosleepd -o cat --no-pager; }
pid1_ticks() { awk '{ print $14 + $15 }' /proc/1/stat; }
job_lines() { [ -e "$1" ] && wc -l < "$1" || echo 0; }

# restart_daemon CONFIG: autosleepd again with [Timers] CONFIG (empty: the defaults).
restart_daemon() {
	local old
	if [ -n "$1" ]; then printf '[Timers]\n%s\n' "$1" > "$conf"; else rm -f "$conf"; fi
	old=$(daemon_pid)
	# With a time limit: a stop that hangs (PID 1 busy) must fail here, not stall the boot.
	timeout 60 systemctl restart autosleepd.service || not_ok "timers: systemctl restart autosleepd ($1)"
	wait_daemon_back "$old" 300 || not_ok "timers: autosleepd back after a restart ($1)"
}

cat > "$units/vmtest-job.service" <<UNIT
[Service]
Type=oneshot
ExecStart=/usr/lib/autosleep-vm/timer-job.sh
UNIT
cat > "$units/vmtest-soon.service" <<UNIT
[Service]
Type=oneshot
ExecStart=/bin/sleep 3
UNIT
cat > "$units/vmtest-soon.timer" <<UNIT
[Timer]
OnActiveSec=3s
AccuracySec=1ms
WakeSystem=true
RemainAfterElapse=no
UNIT
cat > "$units/vmtest-tick.service" <<UNIT
[Service]
Type=oneshot
ExecStart=/bin/true
UNIT
cat > "$units/vmtest-tick.timer" <<UNIT
[Timer]
OnCalendar=*:*:00/30
AccuracySec=1ms
WakeSystem=true
UNIT
systemctl daemon-reload

# job LABEL: the 20 s job, started by its timer 25 s after the machine was left alone.
job() {
	local label=$1 log=/var/tmp/vmtest-job-$1.log s0 f0 i c0 c1
	echo "$label" > /run/vmtest-job.label
	rm -f "$log"
	hold
	systemctl stop vmtest-job.timer vmtest-job.service 2> /dev/null
	if ! wait_until 300 no_locks; then
		not_ok "timers $label: autosleepd's own holds ended before the test"
		return
	fi
	# A late RTC alarm: back in any case, well after the timer (25 s) and the job (20 s).
	arm_rtc 90
	s0=$(stat_ success)
	# A calendar timer, as a nightly backup's: systemd 252 moves a monotonic
	# WakeSystem= timer (OnActiveSec=) on by the time asleep, so its alarm
	# wakes the machine but the timer is not due yet (seen in this VM).
	cat > "$units/vmtest-job.timer" <<UNIT
[Timer]
OnCalendar=$(date -u -d @$(( $(date +%s) + 25 )) '+%Y-%m-%d %H:%M:%S') UTC
AccuracySec=1ms
WakeSystem=true
RemainAfterElapse=no
UNIT
	systemctl daemon-reload
	mark "timer-armed $label"
	t_armed=$(date +%s)
	systemctl start vmtest-job.timer
	echo "# timers $label: $(systemctl show -p NextElapseUSecMonotonic -p SubState vmtest-job.timer | tr '\n' ' ')uptime $(cut -d' ' -f1 /proc/uptime), rtc0 wakealarm $(cat /sys/class/rtc/rtc0/wakealarm) now $(cat /sys/class/rtc/rtc0/since_epoch)"
	release
	# The machine sleeps until the timer; the job's first line says it ran.
	wait_until 1200 test -s "$log"
	s0=$(stat_ success)
	f0=$(stat_ fail)
	if [ "$label" = off ]; then
		# Frozen mid-way is the expected outcome: an RTC alarm brings the machine
		# back, and the test's lock lets the job finish awake.
		arm_rtc 8
		wait_cycle "$s0" "$f0"
	else
		# The job takes 20 s and the machine suspends at once after it: back by this.
		arm_rtc 30
	fi
	for i in $(seq 1200); do
		[ "$(job_lines "$log")" -ge 20 ] && [ "$(systemctl is-active vmtest-job.service)" != activating ] && break
		sleep 0.1
	done
	check "timers $label: the job wrote all 20 lines ($(job_lines "$log"))" test "$(job_lines "$log")" -eq 20
	if [ "$label" = on ]; then
		wait_cycle "$s0" "$f0" || not_ok "timers on: a suspend after the job"
		check "timers on: the record names the timer as the wake source" \
			sh -c "journalctl -u autosleepd -o cat --no-pager | grep -q 'woken by vmtest-job.timer ('"
		check "timers on: the hold was the timer's ('Timer vmtest-job.timer: running')" \
			sh -c "journalctl -u autosleepd -o cat --no-pager | grep -q 'Timer vmtest-job.timer: running'"
		# Following the timers must not keep PID 1 busy (a load/unload round with systemd's GC).
		c0=$(pid1_ticks)
		sleep 2
		c1=$(pid1_ticks)
		check "timers on: PID 1 idle after the job ($((c1 - c0)) ticks of CPU in 2 s)" test $((c1 - c0)) -lt 50
	fi
	hold
	mark "timer-done $label"
	echo "# timers $label: autosleepd's journal since the timer was armed:"
	journalctl -u autosleepd -o short-monotonic --no-pager --since "@$t_armed" |
		grep -e 'Timer \|Suspend #\|timer\|Woken\|wake' | tail -n 40 | sed 's/^/#   /'
}

# imminent GUARD: an alarm due 1.5 s after the idle period starts.
imminent() {
	local guard=$1 n0 n1 g0 line
	hold
	systemctl stop vmtest-soon.timer 2> /dev/null
	wait_until 300 no_locks || not_ok "imminent $guard: autosleepd's own holds ended before the test"
	n0=$(journal | grep -c ': alarm-imminent,')
	g0=$(journal | grep -c 'Timer vmtest-soon.timer: due')
	systemctl start vmtest-soon.timer
	sleep 1.5
	release
	# The timer fires 3 s after its start and its job runs 3 s, held by autosleepd:
	# the test's lock is back before the job ends, so no suspend follows.
	wait_until 100 sh -c '[ "$(systemctl is-active vmtest-soon.service)" = activating ]' ||
		not_ok "imminent $guard: the timer's job ran"
	hold
	wait_until 100 sh -c '[ "$(systemctl is-active vmtest-soon.service)" != activating ]'
	n1=$(journal | grep -c ': alarm-imminent,')
	if [ "$guard" = 0 ]; then
		line=$(journal | grep ': alarm-imminent,' | tail -n1)
		check "imminent GuardSec=0: the kernel's refusal is recorded as alarm-imminent ($n0 -> $n1: ${line:-none})" \
			test "$n1" -gt "$n0"
		check "imminent GuardSec=0: the next attempt's delay did not grow (DelaySec=2s)" \
			sh -c "echo '$line' | grep -q 'next attempt in 2.000s'"
		check "imminent GuardSec=0: GetStatistics counts it" \
			sh -c "autosleepctl stats --json | grep -q '\"AlarmImminent\":[1-9]'"
	else
		check "imminent GuardSec=3s: no attempt refused ($n0 -> $n1), the timer was guarded" \
			test "$n1" -eq "$n0" -a "$(journal | grep -c 'Timer vmtest-soon.timer: due')" -gt "$g0"
	fi
}

# Seconds past the last tick (:00 or :30), and whether that is clear of one.
tick_phase() { echo $(( 10#$(date +%S) % 30 )); }
clear_of_tick() { local p; p=$(tick_phase); [ "$p" -ge 2 ] && [ "$p" -le 20 ]; }

soak_tick() {
	local out=/run/soak-timer n
	hold
	wait_until 300 no_locks
	systemctl start vmtest-tick.timer
	# autosleepd holds from GuardSec (3 s) before a tick until its job ends,
	# and a soak cycle that starts in that hold is recorded as blocked (each
	# blocked cycle ends at once, so both could be). Start clear of a tick:
	# then the first cycle sleeps until the next one wakes it. The loop stays
	# out of the way, as in soak.sh: enabled, it would suspend as soon as our
	# lock goes, before the soak's first cycle, and the tick would wake the
	# machine into its hold.
	autosleepctl disable
	wait_until 300 clear_of_tick || not_ok "soak: a start clear of a tick"
	echo "# soak: starts $(tick_phase) s after a tick"
	release
	autosleepctl soak --cycles 2 --sleep 40 --awake 1 --output "$out" 2>&1 | sed 's/^/# /'
	hold
	autosleepctl enable
	systemctl stop vmtest-tick.timer
	n=$(grep -c '"wake_reason":"vmtest-tick.timer (' "$out/cycles.jsonl")
	check "soak: records name the WakeSystem timer as the wake source ($n of $(wc -l < "$out/cycles.jsonl"))" \
		test "$n" -ge 1
	grep -o '"result":"[^"]*"[^}]*"wake_reason":"[^"]*"' "$out/cycles.jsonl" | sed 's/^/# soak record: /'
}

journal | grep -q "Following systemd's WakeSystem= timers" &&
	ok "timers: autosleepd follows systemd's WakeSystem= timers" ||
	not_ok "timers: autosleepd follows systemd's WakeSystem= timers"
job on
restart_daemon "HoldWakeTimers=no"
job off
restart_daemon "GuardSec=0"
imminent 0
restart_daemon ""
imminent 3
soak_tick
