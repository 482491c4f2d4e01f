#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A laptop under a real desktop-like session, with the real logind: root is
# logged in on ttyS2 by "agetty --autologin", so pam_systemd makes a real
# session (type x11 through XDG_SESSION_TYPE, since logind takes idle hints
# only from graphical sessions). From inside it:
#   1. SetIdleHint(false): no suspend for 20 s without any input (the host
#      checks QMP too);
#   2. a locker answers logind's Lock with SetLockedHint(true); SetIdleHint(true):
#      autosleepd locks, the lock reaches the session, then it suspends;
#   3. a session that never locks delays the suspend by at most
#      LockTimeoutSec (host-timed) and is named in the journal;
#   4. "systemctl suspend" by logind shows up as an external cycle;
#   5. HonorIdleHint=no and LockBeforeSleep=no: the old behaviour, a session
#      that is not idle does not keep the machine awake and nothing locks.
set -u
. /usr/lib/autosleep-vm/lib.sh

fifo=/run/vmtest-session.fifo
dropin=/run/systemd/system/serial-getty@ttyS2.service.d
conf=/etc/autosleep/autosleep.conf.d/90-laptop.conf

# in_session CMD: run CMD inside the session and wait for it; its status.
in_session() {
	rm -f /run/vmtest-session.done
	printf '%s\n' "$*" > "$fifo"
	wait_until 100 test -e /run/vmtest-session.done || return 1
	return "$(cat /run/vmtest-session.done)"
}
set_hint() { in_session "busctl call org.freedesktop.login1 /org/freedesktop/login1/session/auto org.freedesktop.login1.Session $1 b $2"; }
session_prop() { loginctl show-session "$sid" -p "$1" --value; }
status_to_log() { autosleepctl status 2>&1 | sed "s/^/# [$1] /"; }
journal() { journalctl -u autosleepd -o cat --no-pager; }
have_lease() { autosleepctl list | grep -q '^session-active '; }

# The locker: answers every Lock with SetLockedHint(true), after noting how
# many suspends had completed when the lock reached the session.
cat > /run/vmtest-locker.sh <<'LOCKER'
#!/bin/bash
dbus-monitor --system "type=signal,interface=org.freedesktop.login1.Session,member=Lock" |
	while IFS= read -r l; do
		touch /run/vmtest-locker-ready
		case $l in *member=Lock)
			cat /sys/power/suspend_stats/success > /run/vmtest-locked-at
			# For the host, which times it against QMP SUSPEND.
			echo "@mark locked session" > /dev/ttyS1
			busctl call org.freedesktop.login1 /org/freedesktop/login1/session/auto \
				org.freedesktop.login1.Session SetLockedHint b true ;;
		esac
	done
LOCKER
chmod +x /run/vmtest-locker.sh
start_locker() {
	rm -f /run/vmtest-locker-ready
	in_session "nohup /run/vmtest-locker.sh > /dev/null 2>&1 &"
	wait_until 50 test -e /run/vmtest-locker-ready || sleep 2
}
stop_locker() {
	pkill -f vmtest-locker.sh
	pkill -f 'dbus-monitor --system type=signal,interface=org.freedesktop.login1.Session'
}

# --- a real session -----------------------------------------------------
rm -f "$fifo" /run/vmtest-session.id /run/vmtest-locked-at /run/vmtest-locker-ready
mkfifo "$fifo"
cp /etc/environment /run/vmtest-environment.orig 2> /dev/null || : > /run/vmtest-environment.orig
echo XDG_SESSION_TYPE=x11 >> /etc/environment
cp /root/.profile /run/vmtest-profile.orig 2> /dev/null || : > /run/vmtest-profile.orig
echo '[ "$(tty)" = /dev/ttyS2 ] && exec /usr/lib/autosleep-vm/laptop-session.sh' >> /root/.profile
mkdir -p "$dropin"
printf '[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear -L %%I 115200 vt100\n' > "$dropin/autologin.conf"
systemctl daemon-reload
systemctl start serial-getty@ttyS2.service
check "autologin on ttyS2 made a session" wait_until 300 test -s /run/vmtest-session.id
sid=$(cat /run/vmtest-session.id)
check "session $sid is a real logind session of type x11, active, local" \
	test "$(session_prop Type) $(session_prop Active) $(session_prop Remote)" = "x11 yes no"

# --- 1. SetIdleHint(false): awake with no input ------------------------------
check "SetIdleHint(false) from inside the session" set_hint SetIdleHint false
check "autosleepd holds session-active for it" wait_until 50 have_lease
status_to_log "session not idle"
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 60
guard_start
mark "hold-start session-not-idle"
release
sleep 20
mark "hold-end session-not-idle"
hold
check "no suspend during 20 s of no input while the session is not idle" guard_stop

# --- 2. locker, then SetIdleHint(true): lock first, then suspend -----------
start_locker
s0=$(stat_ success); f0=$(stat_ fail)
check "SetIdleHint(true) from inside the session" set_hint SetIdleHint true
check "autosleepd let go of session-active" wait_until 50 eval '! have_lease'
arm_rtc 8
mark "release-lock session"
release
check "autosleepd suspended once the session was idle" wait_cycle "$s0" "$f0"
check "the lock reached the session before the suspend (suspends when it arrived: $(cat /run/vmtest-locked-at 2>/dev/null || echo none), before: $s0)" \
	test "$(cat /run/vmtest-locked-at 2> /dev/null)" = "$s0"
check "the session reports LockedHint=yes" test "$(session_prop LockedHint)" = yes
check "the journal says every graphical session locked" sh -c 'journalctl -u autosleepd -o cat | grep -q "Every graphical session is locked"'
status_to_log "after lock and suspend"
check "autosleepctl status says the lock step ran" sh -c 'autosleepctl status | grep -q "^Lock step: *ran: every graphical session locked"'

# --- 3. a session that never locks: at most LockTimeoutSec ------------------
stop_locker
check "the session unlocks and comes back" set_hint SetLockedHint false
set_hint SetIdleHint false
wait_until 50 have_lease
check "SetIdleHint(true) with no locker running" set_hint SetIdleHint true
wait_until 50 eval '! have_lease'
# Past the backoff and the resume grace, so only the lock step delays it.
sleep 6
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 12
mark "release-locktimeout never-locks"
release
check "autosleepd suspended after the lock timeout" wait_cycle "$s0" "$f0"
check "the journal names the session that did not lock" \
	sh -c "journalctl -u autosleepd -o cat | grep -q 'Session $sid of root (x11) did not lock within LockTimeoutSec=2.000s'"

# --- 4. systemctl suspend: an external cycle --------------------------------
# Disabled, autosleepd holds no kernel lock that would make the kernel refuse
# logind's suspend, and does not race it with one of its own.
ours0=$(autosleepctl stats --json | sed -n 's/.*"Successes":\([0-9]*\).*/\1/p')
autosleepctl disable
check "the session is idle, so nothing of autosleepd's is held" wait_until 100 eval '! grep -q autosleepd /sys/power/wake_lock'
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 5
release
systemctl suspend
check "logind suspended the guest" wait_cycle "$s0" "$f0"
autosleepctl enable
check "autosleepd recorded it as external" wait_until 50 sh -c 'autosleepctl stats --json | grep -q "\"ExternalSuspends\":1"'
check "the cycle history shows it as external" sh -c 'autosleepctl stats --json | grep -q "\"result\":\"external\""'
ours1=$(autosleepctl stats --json | sed -n 's/.*"Successes":\([0-9]*\).*/\1/p')
check "it did not count as one of ours ($ours0 -> $ours1)" test "$ours0" = "$ours1"
status_to_log "after systemctl suspend"

# --- 5. HonorIdleHint=no, LockBeforeSleep=no: the old behaviour -------------
mkdir -p "$(dirname "$conf")"
printf '[Logind]\nHonorIdleHint=no\nLockBeforeSleep=no\n' > "$conf"
systemctl restart autosleepd
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
rm -f /run/vmtest-locked-at
start_locker
set_hint SetLockedHint false
check "SetIdleHint(false) again" set_hint SetIdleHint false
sleep 1
check "with HonorIdleHint=no no session-active lease is taken" eval '! have_lease'
s0=$(stat_ success); f0=$(stat_ fail)
# The start-up hold and the idle timeout run out, then it suspends.
arm_rtc 25
release
check "with HonorIdleHint=no a session that is not idle does not keep it awake" wait_cycle "$s0" "$f0"
check "with LockBeforeSleep=no nothing was locked" test ! -e /run/vmtest-locked-at
status_to_log "HonorIdleHint=no"

# --- clean up -----------------------------------------------------------------
stop_locker
rm -f "$conf"
systemctl stop serial-getty@ttyS2.service
rm -rf "$dropin"
systemctl daemon-reload
cp /run/vmtest-environment.orig /etc/environment
cp /run/vmtest-profile.orig /root/.profile
loginctl terminate-session "$sid" 2> /dev/null
systemctl restart autosleepd
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
hold
