# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers for guest scenarios: TAP lines, the test's own kernel wake lock,
# the RTC alarm and waiting for autosleepd to suspend and resume.

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds.
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
mark() { echo "@mark $*"; }

# The test's own kernel wake lock: "vmtest" in /sys/power/wake_lock, or on a
# kernel without it (Debian's stock kernel) wake-hold's EPOLLWAKEUP timerfd.
HOLD_PID=/run/vmtest-hold.pid
hold() {
	if [ -e /sys/power/wake_lock ]; then
		echo vmtest > /sys/power/wake_lock
		return
	fi
	[ -f $HOLD_PID ] && kill -0 "$(cat $HOLD_PID)" 2> /dev/null && return 0
	/usr/lib/autosleep-vm/wake-hold $HOLD_PID
}
release() {
	if [ -e /sys/power/wake_lock ]; then
		echo vmtest > /sys/power/wake_unlock
		return
	fi
	[ -f $HOLD_PID ] && kill "$(cat $HOLD_PID)" 2> /dev/null
	rm -f $HOLD_PID
}

# The running kernel's config: /proc/config.gz, or the packaged kernel's
# /boot/config-RELEASE (Debian's kernels have no IKCONFIG_PROC).
kernel_config() {
	if [ -r /proc/config.gz ]; then zcat /proc/config.gz; else cat "/boot/config-$(uname -r)"; fi
}

# WireGuard logs "Keypair N destroyed" through dynamic debug. A query only
# reaches code that is loaded, so a modular WireGuard is loaded first.
wg_debug_on() {
	modprobe -q wireguard 2> /dev/null
	echo 'file drivers/net/wireguard/noise.c +p' > /proc/dynamic_debug/control
}

# The knob of kernel-patches/knob/, on the knob kernel only.
knob_file=/sys/power/userspace_autosleep
knob() { cat $knob_file; }
knob_is() { [ "$(knob)" = "$1" ]; }

arm_rtc() {
	echo 0 > /sys/class/rtc/rtc0/wakealarm
	echo "+$1" > /sys/class/rtc/rtc0/wakealarm
}

stat_() { cat "/sys/power/suspend_stats/$1"; }
journal_successes() { journalctl -u autosleepd -o cat --no-pager | grep -c ': success, slept'; }

# Wait until suspend_stats shows a suspend after "success"/"fail" counts
# $1/$2, then take the wake lock at once so the checks run awake.
wait_cycle() {
	local s0=$1 f0=$2 i
	for i in $(seq 900); do
		if [ "$(stat_ success)" -gt "$s0" ] || [ "$(stat_ fail)" -gt "$f0" ]; then
			hold
			return 0
		fi
		sleep 0.1
	done
	hold
	return 1
}

# wait_until TENTHS CMD...: poll CMD every 0.1 s until it succeeds.
wait_until() {
	local n=$1 i
	shift
	for i in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}

# The running daemon, as systemd sees it.
daemon_pid() { systemctl show -p MainPID --value autosleepd.service; }
daemon_restarts() { systemctl show -p NRestarts --value autosleepd.service; }
# wait_daemon_back OLD_PID TENTHS: a new main process is up, ready and on the bus.
daemon_back() {
	local p
	p=$(daemon_pid)
	[ "$p" != 0 ] && [ "$p" != "$1" ] && [ "$(systemctl is-active autosleepd.service)" = active ] &&
		autosleepctl status > /dev/null 2>&1
}
wait_daemon_back() { wait_until "$2" daemon_back "$1"; }

# From guard_start to guard_stop a suspend is a failure. A background loop
# watches suspend_stats/success and takes the test's kernel lock the moment
# one completes, so a scenario that fails goes on awake instead of cycling
# (each wrong suspend lasts until the RTC alarm the scenario armed).
# guard_stop prints what it saw and fails if a suspend completed.
guard_start() {
	guard_s0=$(stat_ success)
	guard_f0=$(stat_ fail)
	rm -f /run/vmtest-guard
	(
		while [ "$(stat_ success)" -le "$guard_s0" ]; do sleep 0.1; done
		hold
		echo tripped > /run/vmtest-guard
	) &
	guard_pid=$!
}
guard_stop() {
	kill "$guard_pid" 2> /dev/null
	wait "$guard_pid" 2> /dev/null
	echo "success $guard_s0 -> $(stat_ success), fail $guard_f0 -> $(stat_ fail)"
	[ ! -e /run/vmtest-guard ]
}
guard_tripped() { [ -e /run/vmtest-guard ]; }

# lock_of WHY: the wake lock with that reason in autosleepctl list --json,
# as "name owner deadline_usec".
lock_of() {
	autosleepctl list --json 2> /dev/null | tr '{' '\n' | grep "\"why\":\"$1\"" |
		sed -n 's/.*"name":"\([^"]*\)".*"owner":"\([^"]*\)".*"deadline_usec":\([0-9]*\).*/\1 \2 \3/p' |
		head -n1
}
