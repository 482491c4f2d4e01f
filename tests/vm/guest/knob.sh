#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The knob kernel: PM_USERSPACE_AUTOSLEEP unset, plus
# /sys/power/userspace_autosleep from kernel-patches/knob/. While autosleepd
# runs autosleep the knob reads 1 and the kernel behaves like the autosleep
# kernel (WireGuard keys survive, no reseed). Disabled or stopped, autosleepd
# has put it back to 0, and a suspend clears the keys and reseeds the crng,
# as on the control kernel. A SIGKILL and systemd's restart leave it
# consistent, and the file takes only "0" or "1", and only from root.
set -u
. /usr/lib/autosleep-vm/lib.sh
. /usr/lib/autosleep-vm/wg.sh

k=$knob_file
saved=/run/autosleep/userspace_autosleep.saved
# write_knob VALUE: printf's exit status and error; the knob is written in one write(2).
write_knob() { printf '%s' "$1" > $k; }

kcfg=$(kernel_config | grep -c '^CONFIG_PM_USERSPACE_AUTOSLEEP=y')
check "knob kernel lacks CONFIG_PM_USERSPACE_AUTOSLEEP" [ "$kcfg" = 0 ]
if [ ! -f $k ]; then
	not_ok "knob kernel has $k"
	exit 0
fi
ok "knob kernel has $k"
check "mem_sleep is deep (real S3)" grep -q '\[deep\]' /sys/power/mem_sleep
check "crng is initialized, so a reseed would be logged" sh -c 'dmesg | grep -q "crng init done"'
wg_debug_on

# 1. What autosleepd says and did at start.
check "autosleepd set the knob at start: it reads $(knob)" knob_is 1
check "autosleepd's start-up log names the mode: 'Userspace autosleep: runtime-knob'" \
	sh -c "journalctl -u autosleepd -o cat | grep -q 'Userspace autosleep: runtime-knob'"
check "autosleepd saved the old value, 0, in $saved" [ "$(cat $saved 2>&1)" = 0 ]
st=$(autosleepctl status 2>&1)
echo "# autosleepctl status on the knob kernel:"
sed 's/^/#   /' <<< "$st"
check "autosleepctl status: 'Frequent suspend: runtime-knob (/sys/power/userspace_autosleep=1)'" \
	grep -qF 'Frequent suspend: runtime-knob (/sys/power/userspace_autosleep=1)' <<< "$st"
check "autosleepctl status shows no crng warning" eval '! grep -q Warning <<< "$st"'

# 2. The file itself: root only, 0 or 1 only.
check "$k is mode 0644, owned by root" [ "$(stat -c '%a %U' $k)" = "644 root" ]
err=$(setpriv --reuid=65534 --regid=65534 --clear-groups /bin/sh -c "printf 0 > $k" 2>&1)
rc=$?
check "a non-root write fails with EACCES (exit $rc: $err)" eval '[ $rc -ne 0 ] && grep -q "Permission denied" <<< "$err"'
check "... and the knob still reads 1" knob_is 1
# An empty string is what "echo '' >" writes: a lone newline. (A zero-length
# write(2) never reaches the attribute: sysfs returns 0 for it first.)
for v in 2 yes "" "+1" "01" " 1" "1 0" "-1" "18446744073709551617"; do
	err=$( { write_knob "$v"$'\n'; } 2>&1)
	rc=$?
	check "writing '$v' fails with EINVAL (exit $rc: ${err##*: })" eval '[ $rc -ne 0 ] && grep -q "Invalid argument" <<< "$err"'
done
check "after the invalid writes the knob still reads 1" knob_is 1
check "root can write 0 (no newline)" write_knob 0
check "... and it reads 0" knob_is 0
check "root can write '1\\n'" write_knob $'1\n'
check "... and it reads 1" knob_is 1

# 3. With autosleepd running autosleep: the autosleep kernel's behaviour.
wg_start || exit 0
for c in 1 2; do
	wg_cycle "knob 1, autosleepd cycle $c" autosleep autosleepd
done

# 4. Disabled: the knob goes back, and a suspend (ours) shows the control kernel's behaviour.
autosleepctl disable
check "after autosleepctl disable the knob reads 0" knob_is 0
check "... and $saved is gone" [ ! -e $saved ]
check "autosleepctl status says: 'Frequent suspend: none (/sys/power/userspace_autosleep=0)'" \
	sh -c "autosleepctl status | grep -qF 'Frequent suspend: none (/sys/power/userspace_autosleep=0)'"
wg_cycle "disabled, knob 0, the test's suspend" control test
autosleepctl enable
check "after autosleepctl enable the knob reads 1" knob_is 1

# 5. SIGKILL: systemd runs ExecStopPost= (knob back to 0) and restarts the
# daemon, which sets it again; the kernel behaves like the autosleep kernel.
pid=$(daemon_pid)
kill -KILL "$pid"
if wait_daemon_back "$pid" 150; then
	ok "systemd restarted autosleepd after SIGKILL"
else
	not_ok "systemd restarted autosleepd after SIGKILL within 15 s"
fi
check "ExecStopPost= (autosleepd --restore-knob) put the knob back to 0 after the kill" \
	sh -c "journalctl -u autosleepd -o cat | grep -q 'Put /sys/power/userspace_autosleep back to 0'"
check "the restarted daemon set the knob: it reads 1" knob_is 1
check "the restarted daemon saved 0 as the old value, not the 1 the killed one left" [ "$(cat $saved 2>&1)" = 0 ]
wg_cycle "knob 1 after the restart, autosleepd cycle" autosleep autosleepd

# 6. Stopped: back to 0, and a suspend clears keys and reseeds.
systemctl stop autosleepd.service
check "with autosleepd stopped the knob reads 0" knob_is 0
wg_cycle "stopped, knob 0, the test's suspend" control test
systemctl start autosleepd.service
check "started again, autosleepd set the knob: it reads 1" wait_until 50 knob_is 1

# 7. SetUserspaceAutosleep=no: autosleepd still suspends, but leaves the knob
# at 0, so its own cycles clear keys and reseed, as on the control kernel.
# The same boot and the same daemon as in 3., so only the setting differs.
conf=/etc/autosleep/autosleep.conf.d/90-vmtest-no-knob.conf
printf '[Suspend]\nSetUserspaceAutosleep=no\n' > $conf
systemctl restart autosleepd.service
check "SetUserspaceAutosleep=no: autosleepd is back after the restart" wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
check "SetUserspaceAutosleep=no: the knob reads 0" knob_is 0
check "SetUserspaceAutosleep=no: autosleepctl status says 'Frequent suspend: none (/sys/power/userspace_autosleep=0)'" \
	sh -c "autosleepctl status | grep -qF 'Frequent suspend: none (/sys/power/userspace_autosleep=0)'"
for c in 1 2; do
	wg_cycle "SetUserspaceAutosleep=no, knob 0, autosleepd cycle $c" control autosleepd
done
rm -f $conf
systemctl restart autosleepd.service
check "without the setting again, autosleepd set the knob: it reads 1" wait_until 100 knob_is 1
