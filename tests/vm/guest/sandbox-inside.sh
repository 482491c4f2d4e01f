#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Not a scenario: ExecReload= of autosleepd.service in the guest (a drop-in
# from mkrootfs.sh), so "systemctl reload autosleepd" makes systemd spawn this
# from the unit's own execution context: the daemon's seccomp filters,
# capability bounding set, mount protections, network namespace and cgroup.
# Results go to the unit's journal as "sandbox-probe: KEY: RESULT"; the
# sandbox scenario reads them.
p=/usr/lib/autosleep-vm/sandbox-probe
ev=$(ls /dev/input/event* 2> /dev/null | head -n1)
r() {
	k=$1
	shift
	echo "sandbox-probe: $k: $("$p" "$@" 2>&1)"
}
r inet socket inet
r inet6 socket inet6
r netlink socket netlink
r unix socket unix
r home read /home/someone/secret
r wakealarm write /sys/class/rtc/rtc0/wakealarm 0
r wake_lock write /sys/power/wake_lock sandboxprobe
echo "sandbox-probe: wake_lock_listed: $(tr ' ' '\n' < /sys/power/wake_lock | grep -qx sandboxprobe && echo ok || echo missing)"
r wake_unlock write /sys/power/wake_unlock sandboxprobe
# Its own value written back: harmless, and refused only by the sandbox.
r pm_async write /sys/power/pm_async "$(cat /sys/power/pm_async)"
r mem_sleep write /sys/power/mem_sleep "$(sed 's/.*\[\(.*\)\].*/\1/' /sys/power/mem_sleep)"
r input open "${ev:-/dev/input/event0}"
r vda open /dev/vda
for k in NoNewPrivs Seccomp Seccomp_filters CapEff CapBnd; do
	echo "sandbox-probe: $k: $(sed -n "s/^$k:[[:space:]]*//p" /proc/self/status)"
done
echo "sandbox-probe: netns: $(readlink /proc/self/ns/net)"
echo "sandbox-probe: cgroup: $(sed -n 's/^0:://p' /proc/self/cgroup)"
echo "sandbox-probe: done"
