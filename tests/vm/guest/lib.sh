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
