#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The polkit path for real, with polkitd running and units/org.autosleep1.policy
# installed. Users run from this serial script through setpriv, without PAM,
# so they are outside any logind session and the policy's allow_any applies:
# auth_admin_keep for both actions, which without an authentication agent is
# a refusal. So an unprivileged user gets AccessDenied naming the action for
# Enable, Disable and AcquireWakeLock, while root is always allowed. A second
# user whom a polkit rule grants both actions gets them, which shows the
# refusals come from polkit's answer and not from the daemon alone.
set -u
. /usr/lib/autosleep-vm/lib.sh

as() { # as USER CMD...: no PAM, so no logind session
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --init-groups --reset-env -- "$@"
}
enabled() { busctl get-property org.autosleep1 /org/autosleep1 org.autosleep1.Manager Enabled; }
has() { # has STRING PATTERN...: every fixed PATTERN occurs in STRING
	local s=$1 p
	shift
	for p; do grep -qF -- "$p" <<< "$s" || return 1; done
}

for u in alice bob; do id "$u" > /dev/null 2>&1 || useradd -m "$u"; done
# bob may do both, by rule; alice gets the shipped defaults.
[ -d /etc/polkit-1/rules.d ] || install -d -m 0755 /etc/polkit-1/rules.d
cat > /etc/polkit-1/rules.d/50-autosleep-vmtest.rules <<'RULES'
polkit.addRule(function(action, subject) {
	if (action.id.indexOf("org.autosleep1.") == 0 && subject.user == "bob")
		return polkit.Result.YES;
});
RULES
# A fresh polkitd reads the rule at start, rather than racing its inotify.
systemctl restart polkit.service
check "polkitd is running and on the bus" busctl status org.freedesktop.PolicyKit1
check "polkit knows org.autosleep1.manage: allow_any is auth_admin_keep" \
	sh -c "pkaction --action-id org.autosleep1.manage --verbose | grep -q 'implicit any: *auth_admin_keep'"
check "polkit knows org.autosleep1.acquire-wake-lock: allow_any is auth_admin_keep" \
	sh -c "pkaction --action-id org.autosleep1.acquire-wake-lock --verbose | grep -q 'implicit any: *auth_admin_keep'"
cg=$(as alice cat /proc/self/cgroup)
check "alice's commands run outside any logind session (cgroup ${cg#0::})" eval '! has "$cg" session-'
check "alice is not root (uid $(as alice id -u))" [ "$(as alice id -u)" != 0 ]

# 1. alice, outside a session: AccessDenied for Enable, Disable and AcquireWakeLock.
for m in Disable Enable; do
	out=$(as alice dbus-send --system --print-reply --dest=org.autosleep1 /org/autosleep1 "org.autosleep1.Manager.$m" 2>&1)
	check "alice's $m gets AccessDenied naming org.autosleep1.manage (${out//$'\n'/ })" \
		has "$out" org.freedesktop.DBus.Error.AccessDenied org.autosleep1.manage
	[ "$m" = Disable ] && check "autosleep is still enabled after alice's Disable ($(enabled))" [ "$(enabled)" = "b true" ]
done
out=$(as alice autosleepctl disable 2>&1)
rc=$?
check "autosleepctl disable as alice fails and names org.autosleep1.manage (rc $rc: $out)" \
	eval '[ $rc -ne 0 ] && has "$out" org.autosleep1.manage'
out=$(as alice dbus-send --system --print-reply --dest=org.autosleep1 /org/autosleep1 \
	org.autosleep1.Manager.AcquireWakeLock string:alice string:polkit-test uint64:0 2>&1)
check "alice's AcquireWakeLock gets AccessDenied naming org.autosleep1.acquire-wake-lock (${out//$'\n'/ })" \
	has "$out" org.freedesktop.DBus.Error.AccessDenied org.autosleep1.acquire-wake-lock
out=$(as alice autosleepctl hold --name alice -- echo ran 2>&1)
rc=$?
check "autosleepctl hold as alice fails without running its command (rc $rc: $out)" \
	eval '[ $rc -ne 0 ] && ! has "$out" ran'

# 2. bob, whom the rule allows: the same calls succeed, so the answer is polkit's.
out=$(as bob autosleepctl hold --name bobs --why polkit-rule -- autosleepctl list 2>&1)
rc=$?
check "autosleepctl hold as bob (polkit rule) takes a lock under his uid $(id -u bob) (rc $rc)" \
	eval '[ $rc -eq 0 ] && grep -q "^bobs  *$(id -u bob) " <<< "$out"'
check "autosleepctl disable as bob (polkit rule) works" as bob autosleepctl disable
check "autosleep is disabled ($(enabled))" [ "$(enabled)" = "b false" ]
check "autosleepctl enable as bob (polkit rule) works" as bob autosleepctl enable

# 3. root needs no polkit.
check "autosleepctl disable as root works" autosleepctl disable
check "autosleep is disabled after root's disable ($(enabled))" [ "$(enabled)" = "b false" ]
check "autosleepctl enable as root works" autosleepctl enable
check "autosleep is enabled again ($(enabled))" [ "$(enabled)" = "b true" ]
rm -f /etc/polkit-1/rules.d/50-autosleep-vmtest.rules

# 4. Without polkitd (it is only a Recommends): only root, and the group the
# admin names with [WakeLocks] Group=, may take wake locks; nobody may
# Disable. polkitd is stopped and masked, so that no call activates it.
systemctl mask --runtime --now polkit.service > /dev/null 2>&1
check "polkitd is stopped and masked: org.freedesktop.PolicyKit1 has no owner" \
	wait_until 50 sh -c '! busctl status org.freedesktop.PolicyKit1 > /dev/null 2>&1'
out=$(as alice autosleepctl hold --name alice -- echo ran 2>&1)
rc=$?
check "without polkit, alice's hold is refused naming Group= and her command does not run (rc $rc: $out)" \
	eval '[ $rc -ne 0 ] && has "$out" "polkit is not running" "Group=" && ! has "$out" ran'
out=$(as alice dbus-send --system --print-reply --dest=org.autosleep1 /org/autosleep1 org.autosleep1.Manager.Disable 2>&1)
check "without polkit, alice's Disable gets AccessDenied (${out//$'\n'/ })" has "$out" org.freedesktop.DBus.Error.AccessDenied
check "... and autosleep is still enabled ($(enabled))" [ "$(enabled)" = "b true" ]
groupadd -f autosleep-vmtest
usermod -a -G autosleep-vmtest alice
mkdir -p /etc/autosleep/autosleep.conf.d
printf '[WakeLocks]\nGroup=autosleep-vmtest\n' > /etc/autosleep/autosleep.conf.d/50-vmtest-group.conf
systemctl restart autosleepd.service
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
out=$(as alice autosleepctl hold --name alice --why group -- autosleepctl list 2>&1)
rc=$?
check "with Group=autosleep-vmtest, alice (a member) takes a lock under her uid $(id -u alice) (rc $rc)" \
	eval '[ $rc -eq 0 ] && grep -q "^alice  *$(id -u alice) " <<< "$out"'
out=$(as bob autosleepctl hold --name bob -- echo ran 2>&1)
rc=$?
check "... and bob, not a member, is still refused (rc $rc)" eval '[ $rc -ne 0 ] && ! has "$out" ran'
check "autosleepctl disable as root works without polkit" autosleepctl disable
check "autosleepctl enable as root works without polkit" autosleepctl enable
rm -f /etc/autosleep/autosleep.conf.d/50-vmtest-group.conf
gpasswd -d alice autosleep-vmtest > /dev/null 2>&1
systemctl unmask --runtime polkit.service > /dev/null 2>&1
systemctl start polkit.service
systemctl restart autosleepd.service
check "polkitd and autosleepd are back" wait_until 100 sh -c 'busctl status org.freedesktop.PolicyKit1 > /dev/null 2>&1 && autosleepctl status > /dev/null 2>&1'
