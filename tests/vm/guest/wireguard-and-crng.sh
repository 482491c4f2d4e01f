#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Two WireGuard peers in two netns; autosleepd suspends the guest CYCLES
# times. With PM_USERSPACE_AUTOSLEEP (EXPECT=autosleep) every cycle must keep
# the session (same handshake, byte-exact counters, no destroyed keypair) and
# must not reseed the crng. On the control kernel every cycle must show the
# opposite, and so must Debian's stock kernel (EXPECT=stock: no option, no
# knob, no /sys/power/wake_lock, WireGuard a module, booted from its
# initramfs). Any kernel missing its expectation fails the suite.
set -u
. /usr/lib/autosleep-vm/lib.sh

. /usr/lib/autosleep-vm/wg.sh

kcfg=$(kernel_config | grep -c '^CONFIG_PM_USERSPACE_AUTOSLEEP=y')
case "$EXPECT" in
autosleep) check "kernel has CONFIG_PM_USERSPACE_AUTOSLEEP=y" [ "$kcfg" = 1 ] ;;
control) check "control kernel lacks CONFIG_PM_USERSPACE_AUTOSLEEP" [ "$kcfg" = 0 ] ;;
stock) check "Debian's stock kernel $(uname -r) lacks CONFIG_PM_USERSPACE_AUTOSLEEP" [ "$kcfg" = 0 ] ;;
*) not_ok "unknown expectation '$EXPECT'"; exit 0 ;;
esac
check "mem_sleep is deep (real S3)" grep -q '\[deep\]' /sys/power/mem_sleep
check "crng is initialized, so a reseed would be logged" sh -c 'dmesg | grep -q "crng init done"'
check "autosleepd reported the kernel option at start" \
	sh -c "journalctl -u autosleepd -o cat | grep -q 'CONFIG_PM_USERSPACE_AUTOSLEEP=$([ "$kcfg" = 1 ] && echo y || echo n)'"

mode=none
[ "$kcfg" = 1 ] && mode=compile-time
check "autosleepd's start-up log names the mode: 'Userspace autosleep: $mode'" \
	sh -c "journalctl -u autosleepd -o cat | grep -q 'Userspace autosleep: $mode'"
check "this kernel has no /sys/power/userspace_autosleep (that is the knob kernel's)" [ ! -e /sys/power/userspace_autosleep ]
# On a kernel without wake_lock the kernel lock is an EPOLLWAKEUP epoll item,
# which the kernel keeps only with CAP_BLOCK_SUSPEND: under the shipped unit
# it must, or a lease taken during suspend entry would wait at the gate.
if [ -e /sys/power/wake_lock ]; then
	check "autosleepd took /sys/power/wake_lock as its kernel lock" \
		sh -c "! journalctl -u autosleepd -o cat | grep -q 'No /sys/power/wake_lock'"
else
	check "autosleepd's epoll kernel lock kept EPOLLWAKEUP under the unit (no 'dropped EPOLLWAKEUP' logged)" \
		sh -c "journalctl -u autosleepd -o cat | grep -q 'No /sys/power/wake_lock' &&
			! journalctl -u autosleepd -o cat | grep -q 'dropped EPOLLWAKEUP'"
fi

wg_debug_on

wg_start || exit 0

outcome=$EXPECT
[ "$EXPECT" = stock ] && outcome=control
for c in $(seq "$CYCLES"); do
	wg_cycle "cycle $c" "$outcome" autosleepd
done
