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

hold() { echo vmtest > /sys/power/wake_lock; }
release() { echo vmtest > /sys/power/wake_unlock; }

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

# stay_awake TENTHS S0 F0: watch suspend_stats for TENTHS/10 s with the test's
# kernel lock released. A suspend (counts past S0/F0) means failure: take the
# lock at once, so the scenario goes on awake instead of cycling.
stay_awake() {
	local i
	for i in $(seq "$1"); do
		if [ "$(stat_ success)" -gt "$2" ] || [ "$(stat_ fail)" -gt "$3" ]; then
			hold
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# lock_of WHY: the wake lock with that reason in autosleepctl list --json,
# as "name owner deadline_usec".
lock_of() {
	autosleepctl list --json 2> /dev/null | tr '{' '\n' | grep "\"why\":\"$1\"" |
		sed -n 's/.*"name":"\([^"]*\)".*"owner":"\([^"]*\)".*"deadline_usec":\([0-9]*\).*/\1 \2 \3/p' |
		head -n1
}
