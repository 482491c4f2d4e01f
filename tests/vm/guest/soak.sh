#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# autosleepctl soak through the running daemon, with the two WireGuard peers
# up: SOAK_CYCLES real S3 cycles (RTC-woken, 4 s asleep) in batches of 10 on
# the autosleep kernel, 20 on the control kernel. Each batch starts a fresh
# WireGuard session and must finish well inside REKEY_AFTER_TIME (120 s,
# time asleep included), so a new handshake can only be the kernel's doing.
# Autosleep kernel: every cycle succeeds and is woken by the RTC, the
# session and the crng survive, and each report's counts equal the
# suspend_stats deltas. Control kernel: the reports show a reseed per cycle,
# destroyed keypairs, and a new handshake per batch. One report goes to the
# host (@file lines), which checks its SVG with xmllint.
# First, on the autosleep kernel, "who kept me awake": a wake_lock held from
# the shell for 5 s shows in autosleepctl stats and status with about 5 s.
# Then the soak session: a cycle a kernel wake_lock keeps awake is recorded
# as blocked and names it; autosleep pauses for the client and resumes when
# it is SIGKILLed; a D-Bus lock blocks a cycle unless --force, and survives
# the forced one. After the S3 batches, 3 pm_test cycles and 3 cycles woken
# by a CLOCK_BOOTTIME_ALARM timerfd instead of rtc0's wakealarm.
set -u
. /usr/lib/autosleep-vm/lib.sh
. /usr/lib/autosleep-vm/wg.sh

BATCH=10
REKEY_WINDOW=110 # s: REKEY_AFTER_TIME (120 s) less a margin for the ping after the batch
cycles=${SOAK_CYCLES:-50}
[ "$EXPECT" = control ] && cycles=20
out=/run/soak

# The report's number for a summary line, e.g. "success +10, fail +0" -> 10 0.
report_stats() { sed -n 's/^- suspend_stats deltas: success +\([0-9]*\), fail +\([0-9]*\)$/\1 \2/p' "$1/report.md"; }
report_count() { sed -n "s/^| $2 | \([0-9]*\) |\$/\1/p" "$1/report.md"; }
# Sum of a numeric field over cycles.jsonl.
jsonl_sum() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1/cycles.jsonl" | awk '{ s += $1 } END { print s + 0 }'; }
no_locks() { [ "$(autosleepctl list --json 2> /dev/null)" = "[]" ]; }

# Send a file to the host as @file/@data/@endfile lines (base64).
send_file() {
	echo "@file $2"
	base64 -w 76 "$1" | sed 's/^/@data /'
	echo "@endfile"
}

kept_awake() {
	local s0 f0 ms
	# Wait until the daemon holds nothing itself (start-up, logind, activity), so only our
	# kernel locks keep it in the wakeup_count read.
	if ! wait_until 300 no_locks; then
		not_ok "kept awake: the daemon's own holds ended"
		return
	fi
	s0=$(stat_ success)
	f0=$(stat_ fail)
	arm_rtc 10
	echo shell5 > /sys/power/wake_lock
	release
	sleep 5
	echo shell5 > /sys/power/wake_unlock
	if ! wait_cycle "$s0" "$f0"; then
		not_ok "kept awake: autosleepd suspended once shell5 was released"
		return
	fi
	autosleepctl stats | sed 's/^/# stats: /'
	ms=$(autosleepctl stats --json | tr '{' '\n' | sed -n 's/^"name":"shell5","count":[0-9]*,"total_usec":\([0-9]*\).*/\1/p')
	ms=$(( ${ms:-0} / 1000 ))
	echo "# shell5 kept the machine awake for $ms ms as autosleepctl stats shows it"
	check "kept awake: autosleepctl stats names the shell's wake_lock 'shell5' with about 5 s ($ms ms, 4900-8000)" \
		test "$ms" -ge 4900 -a "$ms" -le 8000
	check "kept awake: autosleepctl status lists shell5 next to the wake locks" \
		sh -c "autosleepctl status | sed -n '/Kernel wakeup sources that kept it awake/,/^\$/p' | grep -q '^  shell5 '"
	check "kept awake: the journal names shell5" \
		sh -c "journalctl -u autosleepd -o cat | grep 'kept awake by kernel wakeup sources' | grep -q 'shell5 [0-9]'"
	check "kept awake: the cycle after it names the RTC as the wake reason" \
		sh -c "journalctl -u autosleepd -o cat | grep ': success, slept' | tail -n1 | grep -q 'woken by rtc0'"
}

journal_has() { journalctl -u autosleepd -o cat --no-pager | grep -q "$1"; }
record_field() { sed -n "${2}p" "$1/cycles.jsonl" | sed -n "s/.*\"$3\":\"\([^\"]*\)\".*/\1/p"; }

session() {
	local pid n0 holder
	if ! wait_until 300 no_locks; then
		not_ok "session: the daemon's own holds ended"
		return
	fi
	# vmtest is held: the cycle's wakeup_count read blocks until its 10 s timeout.
	n0=$(journalctl -u autosleepd -o cat --no-pager | grep -c 'Soak client left')
	autosleepctl soak --cycles 50 --sleep 4 --awake 5 --output $out/killed > /run/soak-killed.log 2>&1 &
	pid=$!
	if ! wait_until 300 grep -q '^cycle 1/' /run/soak-killed.log; then
		not_ok "session: the first cycle held up by vmtest ended within 30 s"
		kill -9 $pid
		return
	fi
	sed 's/^/# /' /run/soak-killed.log
	check "session: a cycle vmtest kept awake is recorded as blocked ($(record_field $out/killed 1 result))" \
		test "$(record_field $out/killed 1 result)" = blocked
	check "session: its record names vmtest ($(record_field $out/killed 1 detail))" \
		sh -c "sed -n 1p $out/killed/cycles.jsonl | grep -q '\"detail\":\"vmtest [0-9]'"
	check "session: autosleep paused for the soak client" journal_has 'autosleep pauses until it leaves'
	kill -9 $pid
	wait $pid 2> /dev/null
	check "session: autosleep resumed when the SIGKILLed client left the bus" \
		wait_until 50 sh -c "[ \$(journalctl -u autosleepd -o cat --no-pager | grep -c 'Soak client left') -gt $n0 ]"

	# A D-Bus lock: blocked without --force, suspended with it, and still held after.
	autosleepctl hold --name soakguard --why "soak --force" -- sleep 300 &
	holder=$!
	wait_until 50 sh -c 'autosleepctl list | grep -q soakguard'
	release
	autosleepctl soak --cycles 1 --sleep 4 --output $out/guarded 2>&1 | sed 's/^/# /'
	check "session: a D-Bus wake lock blocks a soak cycle ($(record_field $out/guarded 1 detail))" \
		test "$(record_field $out/guarded 1 result)" = blocked -a "$(record_field $out/guarded 1 detail)" = "wake locks held"
	autosleepctl soak --cycles 1 --sleep 4 --force --output $out/forced 2>&1 | sed 's/^/# /'
	hold
	check "session: --force suspends anyway ($(record_field $out/forced 1 result), woken by $(record_field $out/forced 1 wake_reason))" \
		test "$(record_field $out/forced 1 result)" = success
	check "session: the lock is still held after the forced cycle" sh -c 'autosleepctl list | grep -q soakguard'
	check "session: and so is autosleepd's kernel lock" grep -qw autosleepd /sys/power/wake_lock
	kill $holder
	wait $holder 2> /dev/null
}

# batch N COUNT: one soak run of COUNT cycles with a fresh WireGuard session.
batch() {
	local b=$1 n=$2 dir=$out/batch$1 s0 f0 s1 f1 hs0 hs1 t0 t1 d0 new destroyed reseeded rs rf succ side
	prime || { not_ok "batch $b: a fresh WireGuard session"; return; }
	hs0=$(handshake)
	s0=$(stat_ success)
	f0=$(stat_ fail)
	d0=$(dmesg | wc -l)
	# Wall time, which includes time asleep, as WireGuard's rekey timer counts it.
	t0=$(date +%s)
	autosleepctl soak --cycles "$n" --sleep 4 --awake 0-1 --seed "$b" --output "$dir" 2>&1 | sed 's/^/# /'
	t1=$(date +%s)
	s1=$(stat_ success)
	f1=$(stat_ fail)
	# Up to three 5 s tries: on the control kernel the keys are gone and the
	# ping waits for a new handshake, whose retry comes 5 s after a lost
	# initiation. The autosleep kernel's "no new handshake" check still
	# catches a rekey that the retries would let through.
	ping_once || ping_once || ping_once
	local pong=$?
	hs1=$(handshake)
	new=$(dmesg | tail -n +$((d0 + 1)))
	destroyed=$(grep -c 'Keypair [0-9]* destroyed' <<< "$new")
	reseeded=$(grep -c 'crng reseeded on system resumption' <<< "$new")
	grep 'callbacks suppressed' <<< "$new" | sed 's/^/# batch '"$b"': /'
	# On the autosleep kernel each such line is a failure: show them and the peers.
	if [ "$EXPECT" = autosleep ] && [ "$destroyed" -gt 0 ]; then
		grep 'Keypair [0-9]* destroyed' <<< "$new" | sed 's/^/# batch '"$b"': /'
		for side in a b; do ns $side wg show all | sed "s/^/# batch $b: netns $side: /"; done
	fi
	read -r rs rf < <(report_stats "$dir")
	succ=$(report_count "$dir" success)
	echo "# batch $b: $n cycles in $((t1 - t0)) s; suspend_stats success +$((s1 - s0)) fail +$((f1 - f0)); report success ${succ:-?}, deltas +${rs:-?}/+${rf:-?}; handshake $hs0 -> $hs1; destroyed $destroyed, reseeds $reseeded"
	check "batch $b: $n records in cycles.jsonl" test "$(grep -c . "$dir/cycles.jsonl")" -eq "$n"
	check "batch $b: the report's suspend_stats deltas equal the kernel's (success +$((s1 - s0)), fail +$((f1 - f0)))" \
		test "${rs:-x}" = $((s1 - s0)) -a "${rf:-x}" = $((f1 - f0))
	check "batch $b: all $n cycles succeeded (report: ${succ:-?})" test "${succ:-0}" -eq "$n" -a $((s1 - s0)) -eq "$n"
	check "batch $b: every cycle was woken by rtc0" test "$(grep -c '"wake_reason":"rtc0' "$dir/cycles.jsonl")" -eq "$n"
	check "batch $b: no battery in the guest, so no battery figures" \
		test "$(grep -c '"battery_unit":null,"battery_entry":null,"battery_exit":null' "$dir/cycles.jsonl")" -eq "$n"
	check "batch $b: inside the rekey window ($((t1 - t0)) s < $REKEY_WINDOW s)" test $((t1 - t0)) -lt $REKEY_WINDOW
	check "batch $b: traffic flows through the tunnel after the batch" [ $pong -eq 0 ]
	if [ "$EXPECT" = autosleep ]; then
		check "batch $b: no new handshake" [ "$hs1" = "$hs0" ]
		check "batch $b: no 'Keypair N destroyed' (report: $(jsonl_sum "$dir" keypairs_destroyed))" \
			test "$destroyed" -eq 0 -a "$(jsonl_sum "$dir" keypairs_destroyed)" -eq 0
		check "batch $b: no crng reseed (report: $(jsonl_sum "$dir" crng_reseeds))" \
			test "$reseeded" -eq 0 -a "$(jsonl_sum "$dir" crng_reseeds)" -eq 0
	else
		check "batch $b: keys cleared: a new handshake" [ "$hs1" != "$hs0" ]
		check "batch $b: the report shows destroyed keypairs ($(jsonl_sum "$dir" keypairs_destroyed))" \
			test "$(jsonl_sum "$dir" keypairs_destroyed)" -gt 0
		check "batch $b: the report shows a reseed per cycle ($(jsonl_sum "$dir" crng_reseeds) of $n)" \
			test "$(jsonl_sum "$dir" crng_reseeds)" -eq "$n"
	fi
	LAST=$dir
}

check "mem_sleep is deep (real S3)" grep -q '\[deep\]' /sys/power/mem_sleep
wg_debug_on
wg_start || exit 0

if [ "$EXPECT" = autosleep ]; then
	kept_awake
	mkdir -p $out
	session
fi
if ! wait_until 300 no_locks; then
	not_ok "soak: the daemon's own holds ended"
	exit 0
fi
# The loop stays out of the way: disabled, and paused by the soak client too.
autosleepctl disable
release
mkdir -p $out
# WireGuard's "Keypair N destroyed" is net_dbg_ratelimited: the handshake
# lines of prime() just before a batch can use up net_ratelimit's burst (10
# per 5 s), and the first cycle's lines, the only ones that destroy keys,
# would be suppressed. No rate limit while we count them.
message_cost=$(cat /proc/sys/net/core/message_cost)
echo 0 > /proc/sys/net/core/message_cost
b=0
left=$cycles
while [ "$left" -gt 0 ]; do
	b=$((b + 1))
	n=$BATCH
	[ "$left" -lt $n ] && n=$left
	batch $b $n
	left=$((left - n))
done
if [ "$EXPECT" = autosleep ]; then
	s0=$(stat_ success)
	autosleepctl soak --cycles 3 --pm-test devices --awake 0 --output $out/pmtest 2>&1 | sed 's/^/# /'
	check "pm_test: 3 'devices' cycles succeeded (report: $(report_count $out/pmtest success), suspend_stats +$(( $(stat_ success) - s0 )))" \
		test "$(report_count $out/pmtest success)" = 3 -a $(( $(stat_ success) - s0 )) -eq 3
	check "pm_test: pm_test is back to none" grep -q '\[none\]' /sys/power/pm_test
	s0=$(stat_ success)
	autosleepctl soak --cycles 3 --sleep 4 --awake 0 --alarm timerfd --output $out/timerfd 2>&1 | sed 's/^/# /'
	check "timerfd: 3 cycles woken by a CLOCK_BOOTTIME_ALARM timerfd succeeded (report: $(report_count $out/timerfd success), suspend_stats +$(( $(stat_ success) - s0 )))" \
		test "$(report_count $out/timerfd success)" = 3 -a $(( $(stat_ success) - s0 )) -eq 3
	check "timerfd: each record says so, with the timer fired (expired, or due within the tolerance)" \
		test "$(grep -c '"wake_alarm":"timerfd","alarm_armed":true,"alarm_cleared":true' $out/timerfd/cycles.jsonl)" -eq 3
fi
echo "$message_cost" > /proc/sys/net/core/message_cost
hold
autosleepctl enable
check "autosleep resumed when the soak client left (State is neither soaking nor disabled)" \
	sh -c "! autosleepctl status | grep -q '^State: *\(soaking\|disabled\)'"
autosleepctl soak --compare $out/batch1 "$LAST" | sed 's/^/# compare: /'
for f in report.md report.svg report.html cycles.jsonl; do
	send_file "$LAST/$f" "soak-$f"
done
echo "# soak: $cycles cycles on the $EXPECT kernel in $b batches"
