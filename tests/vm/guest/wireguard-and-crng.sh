#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Two WireGuard peers in two netns; autosleepd suspends the guest CYCLES
# times. With PM_USERSPACE_AUTOSLEEP (EXPECT=autosleep) every cycle must keep
# the session (same handshake, byte-exact counters, no destroyed keypair) and
# must not reseed the crng. On the control kernel every cycle must show the
# opposite. Either kernel missing its expectation fails the suite.
set -u
. /usr/lib/autosleep-vm/lib.sh

. /usr/lib/autosleep-vm/wg.sh

kcfg=$(zcat /proc/config.gz | grep -c '^CONFIG_PM_USERSPACE_AUTOSLEEP=y')
case "$EXPECT" in
autosleep) check "kernel has CONFIG_PM_USERSPACE_AUTOSLEEP=y" [ "$kcfg" = 1 ] ;;
control) check "control kernel lacks CONFIG_PM_USERSPACE_AUTOSLEEP" [ "$kcfg" = 0 ] ;;
*) not_ok "unknown expectation '$EXPECT'"; exit 0 ;;
esac
check "mem_sleep is deep (real S3)" grep -q '\[deep\]' /sys/power/mem_sleep
check "crng is initialized, so a reseed would be logged" sh -c 'dmesg | grep -q "crng init done"'
check "autosleepd reported the kernel option at start" \
	sh -c "journalctl -u autosleepd -o cat | grep -q 'CONFIG_PM_USERSPACE_AUTOSLEEP=$([ "$kcfg" = 1 ] && echo y || echo n)'"

echo 'file drivers/net/wireguard/noise.c +p' > /proc/dynamic_debug/control

setup
peer_b
if ! prime; then
	not_ok "WireGuard handshake between the two netns"
	exit 0
fi
ok "WireGuard handshake between the two netns (A tx/rx per ping: $EXPECT_BYTES bytes)"

for c in $(seq "$CYCLES"); do
	if [ $(( $(date +%s) - PRIMED )) -gt 60 ]; then
		prime || not_ok "cycle $c: re-priming the session"
	fi
	# A peer that received data and sent none answers with a keepalive
	# 10 s later (timers.c); let it pass,
	# so nothing but our own ping moves the counters.
	sleep 11
	hs0=$(handshake)
	read -r rx0 tx0 < <(transfer)
	s0=$(stat_ success)
	f0=$(stat_ fail)
	j0=$(journal_successes)
	d0=$(dmesg | wc -l)

	arm_rtc 4
	mark "release $c"
	release
	if ! wait_cycle "$s0" "$f0"; then
		not_ok "cycle $c: autosleepd suspended the guest within 90 s"
		continue
	fi
	mark "resumed $c"
	ping_once
	pong=$?
	hs1=$(handshake)
	read -r rx1 tx1 < <(transfer)
	s1=$(stat_ success)
	# autosleepd logs the result after the thread reports it; give it a moment.
	for i in $(seq 50); do [ "$(journal_successes)" -gt "$j0" ] && break; sleep 0.1; done
	j1=$(journal_successes)
	new=$(dmesg | tail -n +$((d0 + 1)))
	destroyed=$(grep -c 'Keypair [0-9]* destroyed' <<< "$new")
	reseeded=$(grep -c 'crng reseeded on system resumption' <<< "$new")
	drx=$((rx1 - rx0))
	dtx=$((tx1 - tx0))

	echo "# cycle $c: suspend_stats success $s0 -> $s1; handshake $hs0 -> $hs1; A rx +$drx tx +$dtx (one ping: $EXPECT_BYTES); destroyed-keypair lines $destroyed; reseed lines $reseeded"
	check "cycle $c: suspend_stats/success went up" [ "$s1" -gt "$s0" ]
	check "cycle $c: autosleepd logged the cycle" [ "$j1" -gt "$j0" ]
	check "cycle $c: traffic flows through the tunnel after resume" [ $pong -eq 0 ]
	if [ "$EXPECT" = autosleep ]; then
		check "cycle $c: no new handshake" [ "$hs1" = "$hs0" ]
		check "cycle $c: counters moved by exactly one ping each way" test $drx -eq $EXPECT_BYTES -a $dtx -eq $EXPECT_BYTES
		check "cycle $c: no 'Keypair N destroyed'" [ "$destroyed" -eq 0 ]
		check "cycle $c: no 'crng reseeded on system resumption'" [ "$reseeded" -eq 0 ]
	else
		check "cycle $c: control: new handshake" [ "$hs1" != "$hs0" ]
		check "cycle $c: control: counters show a new handshake plus the ping (tx $((WG_INITIATION_LEN + EXPECT_BYTES)), rx $((WG_RESPONSE_LEN + EXPECT_BYTES)))" \
			test $dtx -eq $((WG_INITIATION_LEN + EXPECT_BYTES)) -a $drx -eq $((WG_RESPONSE_LEN + EXPECT_BYTES))
		check "cycle $c: control: 'Keypair N destroyed' logged" [ "$destroyed" -gt 0 ]
		check "cycle $c: control: 'crng reseeded on system resumption' logged" [ "$reseeded" -gt 0 ]
	fi
done
