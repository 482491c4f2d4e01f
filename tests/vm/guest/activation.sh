#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# D-Bus activation, tried as a stranger: user nobody calls org.autosleep1
# (busctl introspect, which the policy lets anyone do). While the admin has
# not enabled autosleepd.service, that call must get a D-Bus error and leave
# the unit inactive, so nothing starts suspending the machine; once the unit
# is enabled, the same call starts it. Then the same first call with the
# activation file as it was before the alias (SystemdService=autosleepd.service):
# there it starts the disabled daemon, which is what this test exists to catch.
set -u
. /usr/lib/autosleep-vm/lib.sh

svc=/usr/share/dbus-1/system-services/org.autosleep1.service
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
call() { as_nobody timeout 30 busctl --system introspect org.autosleep1 /org/autosleep1 2>&1; }
active() { systemctl is-active autosleepd.service; }
# stays_inactive SECONDS: the unit never leaves inactive in that time.
stays_inactive() {
	local i
	for i in $(seq $(( $1 * 10 ))); do
		[ "$(active)" = inactive ] || return 1
		sleep 0.1
	done
}

hold
check "the activation file names the alias: $(grep '^SystemdService=' $svc)" \
	grep -qx 'SystemdService=dbus-org.autosleep1.service' $svc
systemctl disable --now autosleepd.service 2> /dev/null
check "disabled and stopped: autosleepd is $(active), $(systemctl is-enabled autosleepd.service 2>&1)" \
	[ "$(active)" = inactive ]
check "disabling removed the alias /etc/systemd/system/dbus-org.autosleep1.service" \
	[ ! -e /etc/systemd/system/dbus-org.autosleep1.service ]

s0=$(stat_ success)
f0=$(stat_ fail)
out=$(call)
rc=$?
echo "$out" | head -n 3 | sed 's/^/#   nobody: /'
check "nobody's call to the disabled service fails with a D-Bus error (exit $rc)" [ $rc != 0 ]
check "... and leaves autosleepd inactive for 5 s" stays_inactive 5
check "... and nothing suspended (success $s0 -> $(stat_ success), fail $f0 -> $(stat_ fail))" \
	[ "$(stat_ success)" = "$s0" -a "$(stat_ fail)" = "$f0" ]

# Enabled, not started: activation is the admin's choice now.
systemctl enable autosleepd.service 2> /dev/null
check "enabling made the alias" [ -L /etc/systemd/system/dbus-org.autosleep1.service ]
out=$(call)
rc=$?
check "once enabled, nobody's call activates autosleepd (exit $rc)" [ $rc = 0 ]
check "... and the unit runs ($(active))" wait_until 100 sh -c '[ "$(systemctl is-active autosleepd.service)" = active ]'

# Disabled and stopped again, then any call: it must not come back.
systemctl disable autosleepd.service 2> /dev/null
systemctl stop autosleepd.service
call > /dev/null
check "disable, stop, then a call: autosleepd stays inactive" stays_inactive 3

# The old activation file, put back for this check alone: the same call
# starts the disabled daemon. dbus-daemon reloads the directory on a change.
cp $svc /run/org.autosleep1.service.new
sed -i 's/^SystemdService=.*/SystemdService=autosleepd.service/' $svc
busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig > /dev/null
call > /dev/null
rc=$?
check "control: with the old SystemdService=autosleepd.service nobody's call starts the disabled daemon (exit $rc, $(active))" \
	wait_until 100 sh -c '[ "$(systemctl is-active autosleepd.service)" = active ]'
systemctl stop autosleepd.service
mv /run/org.autosleep1.service.new $svc
busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig > /dev/null

# As the image had it: enabled and running.
systemctl enable --now autosleepd.service 2> /dev/null
check "enabled and started again" wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
