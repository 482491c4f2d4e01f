#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README demo, guest side: explain each step in plain words while
# autosleepd puts the guest to sleep and the RTC alarm wakes it, and check
# WireGuard and the crng after every cycle.
set -u
. /usr/lib/autosleep-vm/lib.sh
. /usr/lib/autosleep-vm/wg.sh

say() { echo "demo: $*"; }
status() { systemctl show -p StatusText --value autosleepd; }

say "Booted $(uname -r) with systemd as PID 1; autosleepd is a systemd service."
say "Kernel: $(kernel_config | grep -E '^(# )?CONFIG_PM_USERSPACE_AUTOSLEEP[= ]' | sed 's/^# //')"
say "autosleepd says: $(journalctl -u autosleepd -o cat | grep -m1 'CONFIG_PM_USERSPACE_AUTOSLEEP')"
say "Sleep mode: $(cat /sys/power/mem_sleep) (the bracketed one is used: deep = real S3)"
say "Setting up two WireGuard peers in two network namespaces..."
setup
peer_b
prime && say "WireGuard handshake done at $(handshake) (unix time)."
wg_debug_on

for c in $(seq "$CYCLES"); do
	sleep 11 # let WireGuard's keepalive pass, so the counters below are exact
	hs0=$(handshake)
	read -r rx0 tx0 < <(transfer)
	s0=$(stat_ success)
	f0=$(stat_ fail)
	d0=$(dmesg | wc -l)
	say "---- cycle $c of $CYCLES ----"
	say "Wake locks held in the kernel: '$(cat /sys/power/wake_lock)'. autosleepd status: $(status)"
	arm_rtc 4
	say "Armed the RTC alarm for 4 s from now. Releasing the last wake lock: autosleepd will suspend the machine."
	mark "release $c"
	release
	if ! wait_cycle "$s0" "$f0"; then
		say "no suspend within 90 s, giving up"
		break
	fi
	mark "resumed $c"
	say "Awake again (woken by the RTC alarm); took the wake lock back to look around."
	for i in $(seq 50); do journalctl -u autosleepd -o cat | grep -q "Suspend #$c: " && break; sleep 0.1; done
	say "autosleepd logged: $(journalctl -u autosleepd -o cat | grep "Suspend #" | tail -n1)"
	say "autosleepd status: $(status)"
	ping_once && say "Ping through the tunnel: OK."
	hs1=$(handshake)
	read -r rx1 tx1 < <(transfer)
	new=$(dmesg | tail -n +$((d0 + 1)))
	if [ "$hs1" = "$hs0" ] && [ $((tx1 - tx0)) -eq "$EXPECT_BYTES" ] && [ $((rx1 - rx0)) -eq "$EXPECT_BYTES" ]; then
		say "WireGuard: same session (handshake $hs0), counters moved by exactly one ping ($EXPECT_BYTES bytes each way): keys survived."
	else
		say "WireGuard: handshake $hs0 -> $hs1, tx +$((tx1 - tx0)) rx +$((rx1 - rx0)): the session was re-keyed."
	fi
	if grep -q 'Keypair [0-9]* destroyed' <<< "$new"; then
		say "WireGuard: the kernel destroyed keypairs during suspend."
	else
		say "WireGuard: no 'Keypair N destroyed' in the kernel log."
	fi
	if grep -q 'crng reseeded on system resumption' <<< "$new"; then
		say "crng: 'crng reseeded on system resumption' -- the kernel reseeded on resume."
	else
		say "crng: no reseed on resume."
	fi
done
say "Done: $(stat_ success) successful suspends, $(stat_ fail) failed (from /sys/power/suspend_stats)."
