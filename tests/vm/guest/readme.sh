#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's "Install on a laptop" blocks that need systemd as PID 1, as
# printed (tests/newcomer/readme-blocks.py put them in the image): "Undo"
# on the installed, enabled and running package, then, once the package is
# installed again, step 5, "Enable the service". tests/newcomer/run.sh runs
# the other blocks in a fresh root. Runs after "package".
set -u
. /usr/lib/autosleep-vm/lib.sh

dir=/usr/lib/autosleep-vm/readme
deb=$(ls /var/cache/autosleep-vm/autosleep_*.deb 2> /dev/null | head -n1)
# run_block NAME: the README's block in a shell of its own, as a user types
# it; apt's question answered yes, as the README expects.
run_block() {
	local out rc
	out=$(cd /root && env DEBIAN_FRONTEND=noninteractive APT_CONFIG=/run/vmtest-apt-yes.conf bash -e "$dir/$1.sh" 2>&1)
	rc=$?
	sed 's/^/#   /' <<< "$out" | tail -n 15
	check "README block '$1' ran as printed (exit $rc): $(head -n1 "$dir/$1.sh")" [ $rc = 0 ]
}
echo 'APT::Get::Assume-Yes "true";' > /run/vmtest-apt-yes.conf

pid=$(daemon_pid)
check "before Undo autosleepd runs (pid $pid), enabled" \
	sh -c '[ "$(systemctl is-active autosleepd.service)" = active ] && [ "$(systemctl is-enabled autosleepd.service)" = enabled ]'
[ -e "$knob_file" ] && check "... with the knob at 1" wait_until 50 knob_is 1
[ -e /sys/power/wake_lock ] && echo "# /sys/power/wake_lock before Undo: '$(cat /sys/power/wake_lock)'"
hold
run_block undo
check "Undo stopped autosleepd" sh -c "! kill -0 $pid 2> /dev/null"
[ -e "$knob_file" ] && check "Undo put the knob back: it reads $(knob)" knob_is 0
[ -e /sys/power/wake_lock ] &&
	check "Undo left no autosleepd entry in /sys/power/wake_lock ('$(cat /sys/power/wake_lock)')" \
		sh -c '! tr " " "\n" < /sys/power/wake_lock | grep -qx "autosleepd.*"'
check "Undo purged the package ($(dpkg-query -W -f='${Status}' autosleep 2>&1))" \
	sh -c "! dpkg-query -W -f='\${Status}' autosleep 2> /dev/null | grep -q -e installed -e config-files"
# The image's own drop-in (50-vmtest.conf) is the admin's file, not the
# package's: purge leaves it, and the directories it is in.
left=$(find /etc/autosleep -type f 2> /dev/null | sort | tr '\n' ' ')
check "Undo left nothing of the package's in /etc/autosleep (left: ${left:-nothing})" \
	[ "${left% }" = /etc/autosleep/autosleep.conf.d/50-vmtest.conf -o -z "$left" ]
for f in /usr/sbin/autosleepd /lib/systemd/system/autosleepd.service /etc/autosleep/autosleep.conf /run/autosleep \
	/usr/share/dbus-1/system-services/org.autosleep1.service \
	/etc/systemd/system/multi-user.target.wants/autosleepd.service /etc/systemd/system/dbus-org.autosleep1.service; do
	check "Undo removed $f" [ ! -e "$f" ]
done

env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" > /dev/null 2>&1
check "installed again: neither enabled nor running ($(systemctl is-enabled autosleepd.service 2>&1), $(systemctl is-active autosleepd.service))" \
	sh -c '[ "$(systemctl is-enabled autosleepd.service 2>&1)" = disabled ] && [ "$(systemctl is-active autosleepd.service)" = inactive ]'
run_block enable
check "step 5: autosleepd runs and answers" wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
check "step 5: it is enabled, with the D-Bus activation alias" \
	sh -c '[ "$(systemctl is-enabled autosleepd.service)" = enabled ] && [ -L /etc/systemd/system/dbus-org.autosleep1.service ]'
[ -e "$knob_file" ] && check "step 5: the knob reads 1" wait_until 50 knob_is 1
rm -f /run/vmtest-apt-yes.conf
