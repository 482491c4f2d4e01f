#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The autosleepd binary on fixture trees: start-up report, dry-run cycles,
# stale-lock cleanup, config errors and SIGTERM latency.
set -u

: "${AUTOSLEEPD:?}" "${FIXTURE_DIR:?}"
tmp=${TEST_TMPDIR:-/tmp}/test-daemon.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -f "${2:-}" ] && sed 's/^/#   /' "$2"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }

fixture() {
	local dir=$tmp/$1.$RANDOM
	mkdir -p "$dir"
	cp -R "$FIXTURE_DIR/$1/." "$dir/"
	chmod -R u+w "$dir"
	# kconfig looks for boot/config-$(uname -r) of the running kernel.
	[ -f "$dir/boot/config-test" ] && cp "$dir/boot/config-test" "$dir/boot/config-$(uname -r)"
	# No start-up hold, so cycles begin at once; section 7 tests the hold.
	printf '[WakeLocks]\nStartupHoldSec=0\n' > "$dir/nohold.conf"
	echo "$dir"
}

# Start the daemon in the background; its log goes to $2.
start() {
	local root=$1 log=$2
	shift 2
	"$AUTOSLEEPD" --root "$root" --config "${CONF:-$root/nohold.conf}" "$@" > "$log" 2>&1 &
	pid=$!
}

wait_for() {
	local pattern=$1 log=$2 tenths=${3:-50} i
	for i in $(seq $((tenths * 2))); do
		grep -q -- "$pattern" "$log" && return 0
		sleep 0.05
	done
	return 1
}

# SIGTERM the daemon: milliseconds to exit in $ms, exit status in $status.
term() {
	local t0 t1
	t0=$(date +%s%N)
	kill -TERM "$pid"
	wait "$pid"
	status=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
}

# 1. Dry run: cycles against the fixture, each step logged, nothing written.
root=$(fixture sysfs-basic)
log=$tmp/dry.log
start "$root" "$log" --dry-run
check "dry run reports PM_USERSPACE_AUTOSLEEP=y and PM_WAKELOCKS=y" \
	"wait_for 'CONFIG_PM_USERSPACE_AUTOSLEEP=y, CONFIG_PM_WAKELOCKS=y' $log" "$log"
check "dry run reports sleep states and mem_sleep" \
	"wait_for 'Sleep states: freeze mem disk; mem_sleep: s2idle \[deep\]' $log" "$log"
check "dry run logs the wakeup_count step" "wait_for 'Dry run: would write 5 to wakeup_count' $log" "$log"
check "dry run logs the state step" "wait_for 'Dry run: would write mem to state' $log" "$log"
check "dry run completes cycles" "wait_for 'Suspend #3: success' $log" "$log"
term
check "SIGTERM ends a dry run in ${ms} ms (< 1000) with status 0" "[ $ms -lt 1000 ] && [ $status -eq 0 ]" "$log"
check "dry run left state and wakeup_count untouched" \
	"[ \"\$(cat $root/sys/power/state)\" = 'freeze mem disk' ] && [ \"\$(cat $root/sys/power/wakeup_count)\" = 5 ]"
check "no warning about the crng on an autosleep kernel" "! grep -q 'reseed the crng' $log" "$log"

# 2. Stock kernel: no wake_lock (said once) and the crng/WireGuard warning.
root=$(fixture sysfs-nowakelock)
log=$tmp/stock.log
start "$root" "$log" --dry-run
check "stock kernel: warns that every cycle reseeds the crng and clears WireGuard keys" \
	"wait_for 'lacks CONFIG_PM_USERSPACE_AUTOSLEEP and /sys/power/userspace_autosleep: every suspend cycle will reseed the crng and clear all WireGuard session keys' $log" "$log"
wait_for 'Suspend #5: success' "$log"
check "stock kernel: missing wake_lock is logged exactly once" \
	"[ \$(grep -c 'No /sys/power/wake_lock' $log) -eq 1 ]" "$log"
term

# 3. Stale kernel locks from a crashed instance are removed, others kept.
root=$(fixture sysfs-basic)
log=$tmp/stale.log
echo "other autosleepd autosleepd.activity" > "$root/sys/power/wake_lock"
start "$root" "$log" --dry-run
check "stale lock 'autosleepd' removed" "wait_for \"Removed stale kernel wake lock 'autosleepd'\" $log" "$log"
check "stale lock 'autosleepd.activity' removed" \
	"wait_for \"Removed stale kernel wake lock 'autosleepd.activity'\" $log" "$log"
check "foreign lock 'other' left alone" "! grep -q \"lock 'other'\" $log" "$log"
term

# 4. SIGTERM while blocked reading wakeup_count (a FIFO nobody writes).
root=$(fixture sysfs-basic)
log=$tmp/fifo.log
rm "$root/sys/power/wakeup_count"
mkfifo "$root/sys/power/wakeup_count"
start "$root" "$log" --log-level=debug
wait_for 'Reading wakeup_count' "$log"
sleep 0.3
term
check "SIGTERM during a blocking wakeup_count read exits in ${ms} ms (< 1000), status 0" \
	"[ $ms -lt 1000 ] && [ $status -eq 0 ]" "$log"
check "nothing was suspended while blocked" "[ \"\$(cat $root/sys/power/state)\" = 'freeze mem disk' ]"

# 5. Bad configuration: the daemon refuses to start and says where.
root=$(fixture sysfs-basic)
log=$tmp/badconf.log
printf '[Suspend]\nState=mem\n[Backoff]\nDelaySec=fast\n' > "$root/bad.conf"
CONF=$root/bad.conf start "$root" "$log" --dry-run
wait "$pid"; status=$?
check "invalid value: exit status 1" "[ $status -eq 1 ]" "$log"
check "invalid value: names file, line and key" \
	"grep -q \"bad.conf:4: invalid value 'fast' for key 'DelaySec'\" $log" "$log"
printf '[Suspend]\nStat=mem\n' > "$root/bad.conf"
CONF=$root/bad.conf start "$root" "$log" --dry-run
wait "$pid"; status=$?
check "unknown key: refused with file:line" \
	"[ $status -eq 1 ] && grep -q \"bad.conf:2: unknown key 'Stat' in section \[Suspend\]\" $log" "$log"
mkdir -p "$root/good.conf.d"
: > "$root/good.conf"
printf '[Backoff]\nMultiplier=0\n' > "$root/good.conf.d/10-bad.conf"
CONF=$root/good.conf start "$root" "$log" --dry-run
wait "$pid"; status=$?
check "bad drop-in: refused, naming the drop-in" \
	"[ $status -eq 1 ] && grep -q 'good.conf.d/10-bad.conf:2: invalid value' $log" "$log"
CONF=$root/missing.conf start "$root" "$log" --dry-run
wait "$pid"; status=$?
check "missing --config file: refused" "[ $status -eq 1 ] && grep -q 'missing.conf' $log" "$log"
# A FIFO must be refused at once, not block the daemon before it handles signals.
mkfifo "$root/fifo.conf"
t0=$(date +%s%N)
CONF=$root/fifo.conf start "$root" "$log" --dry-run
for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$pid" 2>/dev/null
wait "$pid"; status=$?
first=$(( ($(date +%s%N) - t0) / 1000000 ))
check "a FIFO as --config: refused in ${first} ms, naming it" \
	"[ $status -eq 1 ] && grep -q 'fifo.conf is a FIFO, not a regular file' $log" "$log"

# 6. The kernel does not offer the configured state.
root=$(fixture sysfs-basic)
log=$tmp/nostate.log
echo "freeze disk" > "$root/sys/power/state"
start "$root" "$log" --dry-run
wait "$pid"; status=$?
check "State=mem on a kernel without mem: refused with the available states" \
	"[ $status -eq 1 ] && grep -q 'State=mem is not offered by the kernel (available: freeze disk)' $log" "$log"

# 7. Without systemd's fd store a restarted daemon cannot know its clients'
# locks: it holds the machine for StartupHoldSec so they can take them again.
root=$(fixture sysfs-basic)
log=$tmp/startup.log
printf '[WakeLocks]\nStartupHoldSec=1500ms\n' > "$root/hold.conf"
t0=$(date +%s%N)
CONF=$root/hold.conf start "$root" "$log" --dry-run --log-level=debug
wait_for 'Dry run: would write mem to state' "$log" 80
t1=$(date +%s%N)
first=$(( (t1 - t0) / 1000000 ))
term
check "no suspend before StartupHoldSec=1500ms has passed (first state write after ${first} ms)" \
	"[ $first -ge 1500 ] && [ $first -lt 4000 ]" "$log"
check "the start-up hold is logged as an expired lease" \
	"grep -q \"Lease [0-9]* 'autosleepd.startup' of autosleepd ended: expired\" $log" "$log"

# 7. Once the daemon is gone: ExecStopPost= (--restore-knob) disarms the
# wakeup_count check with a value that is never a count; the OnFailure= unit
# (--hand-back) also removes our kernel wake locks, of the configured name.
root=$(fixture sysfs-basic)
log=$tmp/stoppost.log
echo 12 > "$root/sys/power/wakeup_count"
"$AUTOSLEEPD" --root "$root" --restore-knob > "$log" 2>&1; status=$?
check "--restore-knob: exit status 0" "[ $status -eq 0 ]" "$log"
check "--restore-knob: the wakeup_count check is disarmed" \
	"[ \"\$(cat $root/sys/power/wakeup_count)\" = 4294967295 ]" "$log"
log=$tmp/handback.log
echo 12 > "$root/sys/power/wakeup_count"
echo "mine mine.activity autosleepd other" > "$root/sys/power/wake_lock"
: > "$root/sys/power/wake_unlock"
printf '[Suspend]\nWakeLockName=mine\n' > "$root/mine.conf"
"$AUTOSLEEPD" --root "$root" --config "$root/mine.conf" --hand-back > "$log" 2>&1; status=$?
check "--hand-back: exit status 0" "[ $status -eq 0 ]" "$log"
check "--hand-back: both locks of WakeLockName=mine removed, nobody else's" \
	"grep -q \"Handed the machine back: 2 kernel wake locks of 'mine' removed, wakeup_count check disarmed\" $log" "$log"
check "--hand-back: the last lock unlocked is mine.activity" "[ \"\$(cat $root/sys/power/wake_unlock)\" = mine.activity ]" "$log"
check "--hand-back: the wakeup_count check is disarmed" \
	"[ \"\$(cat $root/sys/power/wakeup_count)\" = 4294967295 ]" "$log"
# A broken configuration may be why the daemon failed: hand back the default name's locks all the same.
log=$tmp/handback-bad.log
echo "autosleepd other" > "$root/sys/power/wake_lock"
printf '[Suspend]\nBogus=1\n' > "$root/bad.conf"
"$AUTOSLEEPD" --root "$root" --config "$root/bad.conf" --hand-back > "$log" 2>&1; status=$?
check "--hand-back with a broken configuration: status 0, the default name's lock removed" \
	"[ $status -eq 0 ] && grep -q \"1 kernel wake lock of 'autosleepd' removed\" $log" "$log"

echo "1..$n"
[ $failed -eq 0 ]
