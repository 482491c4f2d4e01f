#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The real unit's sandbox, from inside. "systemctl reload autosleepd" runs
# sandbox-inside.sh (the guest's ExecReload= drop-in): systemd spawns it from
# autosleepd.service's own execution context, so it has the daemon's seccomp
# filters (RestrictAddressFamilies=, SystemCallFilter=), capabilities,
# NoNewPrivileges, network namespace and cgroup. nsenter cannot give a probe
# those, as they belong to a process, not a namespace; the scenario checks
# they match the running daemon's. Inside: AF_INET fails, /home cannot be
# read, /sys/class and the /sys/power files the daemon does not write
# (pm_async) cannot be written, while the daemon's own writes to
# /sys/power/wake_lock and wake_unlock and its reads of /dev/input/event*
# work. The same probes outside the sandbox succeed, so every check can fail.
# Last, like dbus-and-logind, it joins the running daemon's own mount
# namespace and cgroup for the file checks.
set -u
. /usr/lib/autosleep-vm/lib.sh
probe=/usr/lib/autosleep-vm/sandbox-probe
wakealarm=/sys/class/rtc/rtc0/wakealarm

id someone > /dev/null 2>&1 || useradd -m someone
echo "not for autosleepd" > /home/someone/secret
chown someone: /home/someone/secret
chmod 0600 /home/someone/secret
ev=$(ls /dev/input/event* 2> /dev/null | head -n1)
check "an input device exists to test with (${ev:-none})" [ -n "$ev" ]

# 1. Outside, as root in the test's own service, each refused access works.
outside() {
	local d=$1 out
	shift
	out=$("$probe" "$@" 2>&1)
	if [ "$out" = ok ]; then ok "outside the sandbox: $d"; else not_ok "outside the sandbox: $d ($out)"; fi
}
outside "an AF_INET socket can be created" socket inet
outside "an AF_INET6 socket can be created" socket inet6
outside "/home/someone/secret is readable" read /home/someone/secret
outside "$wakealarm is writable" write "$wakealarm" 0
outside "/dev/vda can be opened" open /dev/vda
outside "/sys/power/pm_async is writable (its own value)" write /sys/power/pm_async "$(cat /sys/power/pm_async)"

# 2. Inside: the probe runs from the unit, its lines come back in the journal.
pid=$(daemon_pid)
cursor=$(journalctl -u autosleepd.service -n 1 -o cat --no-pager --show-cursor | sed -n 's/^-- cursor: //p')
probe_lines() {
	journalctl -u autosleepd.service -o cat --no-pager --after-cursor="$cursor" | sed -n 's/^sandbox-probe: //p'
}
check "systemctl reload autosleepd ran the probe in the unit" systemctl reload autosleepd.service
probe_done() { probe_lines | grep -qx done; }
check "the probe's results reached the journal" wait_until 100 probe_done
out=$(probe_lines)
inside() { sed -n "s/^$1: //p" <<< "$out" | head -n1; }
# Same process credentials and namespaces as the running daemon.
for k in NoNewPrivs Seccomp Seccomp_filters CapEff CapBnd; do
	d=$(sed -n "s/^$k:[[:space:]]*//p" "/proc/$pid/status")
	check "the probe's $k is the daemon's ($(inside "$k") vs $d)" [ -n "$d" -a "$(inside "$k")" = "$d" ]
done
check "the probe is in the daemon's network namespace" [ "$(inside netns)" = "$(readlink "/proc/$pid/ns/net")" ]
check "the probe is in the daemon's cgroup" [ "$(inside cgroup)" = "$(sed -n 's/^0:://p' "/proc/$pid/cgroup")" ]
denied() {
	local v
	v=$(inside "$1")
	if [ -n "$v" ] && [ "$v" != ok ]; then ok "inside the sandbox: $2 fails ($v)"; else not_ok "inside the sandbox: $2 fails (got: ${v:-nothing})"; fi
}
allowed() {
	local v
	v=$(inside "$1")
	if [ "$v" = ok ]; then ok "inside the sandbox: $2 works"; else not_ok "inside the sandbox: $2 works (got: ${v:-nothing})"; fi
}
denied inet "creating an AF_INET socket"
denied inet6 "creating an AF_INET6 socket"
denied netlink "creating an AF_NETLINK socket"
denied home "reading /home/someone/secret"
denied wakealarm "writing $wakealarm"
denied vda "opening /dev/vda"
denied pm_async "writing /sys/power/pm_async, which the daemon never writes"
allowed mem_sleep "writing /sys/power/mem_sleep (its own value; MemSleep=)"
allowed unix "creating an AF_UNIX socket (D-Bus)"
allowed wake_lock "writing /sys/power/wake_lock"
allowed wake_lock_listed "the new kernel lock is listed in /sys/power/wake_lock"
allowed wake_unlock "writing /sys/power/wake_unlock"
allowed input "opening $ev for reading"
# The kernel saw both writes: the lock exists and is no longer active.
check "outside, the probe's kernel lock is released (listed in wake_unlock, not in wake_lock)" \
	sh -c "tr ' ' '\n' < /sys/power/wake_unlock | grep -qx sandboxprobe && ! tr ' ' '\n' < /sys/power/wake_lock | grep -qx sandboxprobe"

# 3. The running daemon's own mount namespace and cgroup (nsenter as root,
# with all capabilities, so only the mounts and the device cgroup refuse).
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
in_ns() {
	sh -c "echo \$\$ > '$cg/cgroup.procs' && exec nsenter -t $pid -m $probe $*" 2>&1
}
v=$(in_ns read /home/someone/secret)
check "in the daemon's mount namespace /home/someone/secret cannot be read (${v})" [ "$v" != ok ]
v=$(in_ns write "$wakealarm" 0)
check "in the daemon's mount namespace $wakealarm cannot be written (${v})" [ "$v" != ok ]
v=$(in_ns open "$ev")
check "in the daemon's mount namespace and cgroup $ev can be opened (${v})" [ "$v" = ok ]
