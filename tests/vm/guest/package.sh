#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The packages themselves, on the kernel they were booted with: autosleep came
# from its .deb through apt, the running kernel from its package and initrd
# (the packaged knob kernel, or Debian's stock kernel). Then the package's
# life cycle: removal stops the daemon (and so puts the knob back), purge
# removes the conffile and /run/autosleep, and installing again neither
# enables nor starts the service, and so never suspends the machine, until
# "systemctl enable --now autosleepd" as the README says. Runs last: it
# removes the daemon for a while.
set -u
. /usr/lib/autosleep-vm/lib.sh

k=$knob_file
rel=$(uname -r)
deb=$(ls /var/cache/autosleep-vm/autosleep_*.deb 2> /dev/null | head -n1)
# step DESCRIPTION COMMAND...: ok if COMMAND succeeds; its output is shown
# only when it fails.
step() {
	local d=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ $rc = 0 ] || sed 's/^/#   /' <<< "$out"
	check "$d (exit $rc)" [ $rc = 0 ]
}

check "autosleep is installed: $(dpkg-query -W -f='${Package} ${Version}: ${Status}' autosleep 2>&1)" \
	[ "$(dpkg-query -W -f='${Status}' autosleep 2> /dev/null)" = "install ok installed" ]
check "apt installed it (/var/log/apt/history.log)" grep -q '^Install: autosleep:' /var/log/apt/history.log
check "/usr/sbin/autosleepd belongs to the package" sh -c 'dpkg -S /usr/sbin/autosleepd | grep -q "^autosleep:"'
check "/etc/autosleep/autosleep.conf is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' autosleep | grep -q ' /etc/autosleep/autosleep.conf '"
kpkg=$(dpkg -S "/boot/vmlinuz-$rel" 2> /dev/null | cut -d: -f1)
check "the running kernel $rel comes from the package '$kpkg'" [ -n "$kpkg" ]
check "its initramfs (initramfs-tools) is in /boot" [ -s "/boot/initrd.img-$rel" ]
check "the root disk's virtio_blk is a module, so the initramfs loaded it" [ -e /sys/module/virtio_blk/initstate ]
modprobe -q wireguard
check "WireGuard is a loadable module on this kernel" [ -e /sys/module/wireguard/initstate ]
# What the VM loads on this kernel: the list run-vm-suite.sh --distro-kernel
# builds Debian's config with (kernel-patches/vm-lsmod.txt).
echo "# lsmod: $(lsmod | awk 'NR > 1 { print $1 }' | sort | paste -sd' ')"

# Removal stops the daemon; its ExecStopPost puts the knob back.
pid=$(daemon_pid)
check "autosleepd runs before removal (pid $pid)" [ "$(systemctl is-active autosleepd.service)" = active ]
[ -e $k ] && check "... with the knob at 1" knob_is 1
step "dpkg -r autosleep" dpkg -r autosleep
check "removal stopped autosleepd ($(systemctl is-active autosleepd.service))" \
	sh -c '! kill -0 '"$pid"' 2> /dev/null && [ "$(systemctl is-active autosleepd.service)" != active ]'
[ -e $k ] && check "removal put the knob back: it reads $(knob)" knob_is 0
[ -e /sys/power/wake_lock ] &&
	check "removal left no autosleepd entry in /sys/power/wake_lock ('$(cat /sys/power/wake_lock)')" \
		sh -c '! tr " " "\n" < /sys/power/wake_lock | grep -qx "autosleepd.*"'
check "the conffile stays after a removal" [ -f /etc/autosleep/autosleep.conf ]
# What a daemon run outside systemd would leave; the service's own goes when it stops.
mkdir -p /run/autosleep && touch /run/autosleep/leases
step "dpkg --purge autosleep" dpkg --purge autosleep
check "purge removed /etc/autosleep/autosleep.conf" [ ! -e /etc/autosleep/autosleep.conf ]
check "purge removed /run/autosleep" [ ! -e /run/autosleep ]

# Installed again on a machine where the admin had not enabled it: the image
# enabled it with systemctl, whose links a purge leaves (deb-systemd-helper
# removes only the ones it made).
rm -f /etc/systemd/system/multi-user.target.wants/autosleepd.service /etc/systemd/system/dbus-org.autosleep1.service
systemctl daemon-reload
s0=$(stat_ success)
step "apt-get install $(basename "$deb") again" \
	env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb"
check "installing did not enable autosleepd ($(systemctl is-enabled autosleepd.service 2>&1))" \
	[ "$(systemctl is-enabled autosleepd.service 2>&1)" = disabled ]
check "installing did not start autosleepd ($(systemctl is-active autosleepd.service 2>&1))" \
	[ "$(systemctl is-active autosleepd.service 2>&1)" = inactive ]
[ -e $k ] && check "the knob stays 0 after installing" knob_is 0
arm_rtc 30
release
sleep 5
hold
check "nothing suspended the freshly installed machine in 5 s without a wake lock (success $s0 -> $(stat_ success))" \
	[ "$(stat_ success)" = "$s0" ]
step "systemctl enable --now autosleepd" systemctl enable --now autosleepd.service
check "... and it runs" wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
[ -e $k ] && check "... and set the knob to 1" wait_until 50 knob_is 1
