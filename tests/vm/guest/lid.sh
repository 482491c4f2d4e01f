#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The lid and the sleep key, through a uinput lid switch (SW_LID, KEY_SLEEP)
# and the real logind:
#   1. autosleepd holds logind's handle-lid-switch inhibitor (systemd-inhibit
#      --list shows it); closing the lid suspends at once despite input 1 s
#      earlier, input from a built-in (i8042) keyboard under the closed lid
#      is ignored, and logind does not suspend on its own;
#   2. opening the lid gives a full idle period (host-timed);
#   3. the sleep key suspends at once, like closing the lid;
#   4. with another holder of handle-lid-switch autosleepd leaves the lid alone;
#   5. a closed lid overrides logind's idle inhibitors (anyone's for the
#      asking: nobody's here, as an SSH user's would be), as logind's
#      LidSwitchIgnoreInhibited=yes does, but not a system service's sleep
#      inhibitor (root's here, as fwupd takes while it flashes);
#   6. a user's wake lock waits for the lid to open (alice, whom a polkit rule
#      lets take locks, is refused --lid-closed by the shipped defaults; her
#      lock comes from a real SSH login, a remote logind session without a
#      seat, and autosleepctl list marks it lid-wait), and one taken with
#      --lid-closed holds (bob, whom a rule grants every org.autosleep1
#      action, as the active session's owner has it); carol, over SSH with
#      no rule, gets no lock at all (a remote session is polkit's allow_any);
#   7. HandleLid=no: the old behaviour, logind handles the lid (an external
#      cycle) and a closed lid does not cut the idle period short.
set -u
. /usr/lib/autosleep-vm/lib.sh
tool=/usr/lib/autosleep-vm/uinput-tool
conf=/etc/autosleep/autosleep.conf.d/90-lid.conf
logind_conf=/etc/systemd/logind.conf.d/90-vmtest.conf

journal() { journalctl -u autosleepd -o cat --no-pager; }
watched() { journal | grep -q "Watching event[0-9]* '$1'"; }
activity_held() { tr ' ' '\n' < /sys/power/wake_lock | grep -qx autosleepd.activity; }
input_events() { autosleepctl stats --json | sed -n 's/.*"InputEvents":\([0-9]*\).*/\1/p'; }
read_since() { [ "$(input_events)" -gt "$ev0" ]; }
# On a failed check: what autosleepd said about input and holds lately.
why_not() { journal | grep -E "vmtest|User input|Holding|Lid|Sleep key|gone" | tail -n 8 | sed 's/^/# journal: /'; }
check_why() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; why_not; fi
}
externals() { autosleepctl stats --json | sed -n 's/.*"ExternalSuspends":\([0-9]*\).*/\1/p'; }
lid() { echo "$1" >&7; }
# type_on NAME KIND: a uinput keyboard that types every 300 ms for 3 s, once autosleepd watches it.
type_on() {
	$tool "$2" "$1" 300 3 > /dev/null 2>&1 &
	typer=$!
	wait_until 50 watched "$1"
}

# logind reacts to the lid 5 s after boot or resume, not 30 s, for step 5:
# long enough to open the lid again before it suspends once more.
mkdir -p "$(dirname "$logind_conf")"
printf '[Login]\nHoldoffTimeoutSec=5s\n' > "$logind_conf"
systemctl restart systemd-logind
rm -f /run/vmtest-lid.fifo
mkfifo /run/vmtest-lid.fifo
exec 7<> /run/vmtest-lid.fifo
$tool lid "vmtest Lid Switch" <&7 > /dev/null 2>&1 &
lidtool=$!
check "the lid switch is watched" wait_until 50 watched "vmtest Lid Switch"
check "autosleepd handles the lid" wait_until 50 sh -c 'autosleepctl status | grep -q "^Lid: *open, handled by autosleepd"'
check "systemd-inhibit --list shows autosleepd's handle-lid-switch" \
	sh -c 'systemd-inhibit --list --no-pager | grep autosleepd | grep -q handle-lid-switch'
e0=$(externals)

# --- 1. close: at once despite input; built-in input under the lid ignored ---
ev0=$(input_events)
type_on "vmtest external keyboard" keyboard
check_why "typing on an external keyboard is read" wait_until 50 read_since
check_why "and holds the machine awake" wait_until 20 activity_held
wait "$typer"
sleep 1
lid close
check "closing the lid means the user is gone" wait_until 50 sh -c "journalctl -u autosleepd -o cat | grep -q 'Lid closed: the user is gone'"
check "the activity hold went with it" eval '! activity_held'
ev0=$(input_events)
type_on "vmtest builtin keyboard" builtin-keyboard
wait "$typer"
check "keys on the built-in keyboard under the closed lid are read" read_since
check_why "but ignored: no activity hold" eval '! activity_held'
autosleepctl status | sed 's/^/# [lid closed] /'
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 8
mark "release-timed lid-closed"
release
check "autosleepd suspended at once with the lid closed" wait_cycle "$s0" "$f0"
check "logind did not suspend on its own (external cycles: $e0 -> $(externals))" test "$(externals)" = "$e0"

# --- 2. open: a full idle period ----------------------------------------------
sleep 6
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 30
mark "idle-timed lid-open"
lid open
check "opening the lid holds for a full idle period" wait_until 50 activity_held
release
check "then it suspends" wait_cycle "$s0" "$f0"

# --- 3. the sleep key --------------------------------------------------------
sleep 6
type_on "vmtest external keyboard 2" keyboard
wait "$typer"
check "the activity hold is set again" activity_held
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 8
release
mark "release-timed sleep-key"
lid sleep
check "the sleep key suspends at once" wait_cycle "$s0" "$f0"
check "the journal says so" sh -c "journalctl -u autosleepd -o cat | grep -q 'Sleep key: the user is gone'"

# --- 4. another holder of handle-lid-switch -----------------------------------
sleep 6
systemd-inhibit --what=handle-lid-switch --who=vmtest-desktop --why="a desktop's power manager" --mode=block sleep 300 &
desk=$!
check "autosleepd leaves the lid to the other holder" \
	wait_until 50 sh -c 'autosleepctl status | grep -q "^Lid: .*handled by vmtest-desktop"'
autosleepctl status | sed 's/^/# [other holder] /'
type_on "vmtest external keyboard 3" keyboard
wait "$typer"
arm_rtc 60
guard_start
mark "hold-start other-holder"
release
lid close
sleep 5
mark "hold-end other-holder"
hold
check "with the lid someone else's, closing it does not suspend" guard_stop
check "and the journal says whose it is" sh -c "journalctl -u autosleepd -o cat | grep -q 'vmtest-desktop (pid [0-9]*) handles the lid, leaving it alone'"
lid open
kill "$desk"; wait "$desk" 2> /dev/null
check "autosleepd takes the lid back" wait_until 50 sh -c 'autosleepctl status | grep -q "^Lid: .*handled by autosleepd"'

# --- 5. inhibitors with the lid closed ------------------------------------------
sleep 6
setpriv --reuid=65534 --regid=65534 --clear-groups systemd-inhibit --what=idle --who=remote-user \
	--why="reading mail over ssh" --mode=block sleep 300 &
idler=$!
systemd-inhibit --what=sleep --who=vmtest-flash --why="flashing firmware" --mode=block sleep 300 &
flasher=$!
check "with the lid open both inhibitors hold (autosleepctl list)" \
	wait_until 50 sh -c 'autosleepctl list | grep -q "logind inhibitor by .* and 1 more"'
autosleepctl list | sed 's/^/# [lid open] /'
type_on "vmtest external keyboard 4" keyboard
wait "$typer"
arm_rtc 60
guard_start
mark "hold-start lid-system-sleep-inhibitor"
release
lid close
check "the closed lid overrides nobody's idle inhibitor, and the journal says so" \
	wait_until 50 sh -c "journalctl -u autosleepd -o cat | grep -q 'Lid closed: not staying awake for 1 logind inhibitor of idle, or of a user.s sleep (logind inhibitor by remote-user (idle, uid 65534)'"
sleep 5
mark "hold-end lid-system-sleep-inhibitor"
check "root's sleep inhibitor keeps the closed lid awake" guard_stop
check "and is the only hold left" sh -c 'autosleepctl list | grep "logind inhibitor by vmtest-flash (sleep, uid 0)" | grep -vq "more"'
autosleepctl list | sed 's/^/# [lid closed] /'
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 8
mark "release-timed lid-idle-inhibitor"
kill "$flasher"; wait "$flasher" 2> /dev/null
check "once it ends, the closed lid suspends despite nobody's idle inhibitor" wait_cycle "$s0" "$f0"
lid open
check "with the lid open again, nobody's idle inhibitor holds" \
	wait_until 50 sh -c 'autosleepctl list | grep -q "logind inhibitor by remote-user (idle, uid 65534)"'
kill "$idler"; wait "$idler" 2> /dev/null
check "and is gone with its taker" wait_until 50 sh -c '! autosleepctl list | grep -q "logind inhibitor by"'

# --- 6. wake locks with the lid closed ------------------------------------------
as() { # as USER CMD...: no PAM, so no logind session: polkit's allow_any
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --init-groups --reset-env -- "$@"
}
# as_bg USER CMD...: the same in the background; $! is CMD's own pid (setpriv
# execs it), so a kill reaches it and not a subshell that waits for it.
as_bg() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --init-groups --reset-env -- "$@" &
}
listed() { autosleepctl list | grep -q "^$1 "; }
lid_waiting() { autosleepctl status --json | sed -n 's/.*"wake_locks_waiting_for_lid":\([0-9]*\).*/\1/p'; }
lid_none() { [ "$(lid_waiting)" = 0 ]; }
for u in alice bob carol; do id "$u" > /dev/null 2>&1 || useradd -m "$u"; done
# A real remote session: sshd on the loopback, logins with root's key.
# pam_systemd makes each login a logind session with Remote=yes and no seat.
key=/root/.ssh/vmtest-lid
install -d -m 0700 /root/.ssh
[ -f "$key" ] || ssh-keygen -q -t ed25519 -N '' -f "$key"
for u in alice carol; do
	install -d -m 0700 -o "$u" -g "$u" "/home/$u/.ssh"
	install -m 0600 -o "$u" -g "$u" "$key.pub" "/home/$u/.ssh/authorized_keys"
done
systemctl start ssh.service
ssh_as() {
	local u=$1
	shift
	ssh -n -i "$key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR "$u@127.0.0.1" "$@"
}
# remote_session USER: the id of USER's logind session that is remote and has no seat.
remote_session() {
	local id
	for id in $(loginctl list-sessions --no-legend | awk -v u="$1" '$3 == u { print $1 }'); do
		[ "$(loginctl show-session "$id" -p Remote --value)" = yes ] &&
			[ -z "$(loginctl show-session "$id" -p Seat --value)" ] && { echo "$id"; return 0; }
	done
	return 1
}
rules=/etc/polkit-1/rules.d/50-autosleep-vmtest-lid.rules
[ -d /etc/polkit-1/rules.d ] || install -d -m 0755 /etc/polkit-1/rules.d
cat > "$rules" <<'RULES'
polkit.addRule(function(action, subject) {
	if (action.id == "org.autosleep1.acquire-wake-lock" && subject.user == "alice")
		return polkit.Result.YES;
	if (action.id.indexOf("org.autosleep1.") == 0 && subject.user == "bob")
		return polkit.Result.YES;
});
RULES
systemctl restart polkit.service
pk=$(pkaction --action-id org.autosleep1.acquire-wake-lock-lid-closed --verbose 2>&1)
echo "$pk" | grep implicit | sed 's/^/# /'
check "polkit's lid-closed action: the active session yes, inactive and any the admin's password" \
	sh -c 'printf "%s\n" "$1" | grep -q "implicit any: *auth_admin_keep" &&
		printf "%s\n" "$1" | grep -q "implicit inactive: *auth_admin_keep" &&
		printf "%s\n" "$1" | grep -q "implicit active: *yes"' sh "$pk"
ssh_as alice "autosleepctl hold --name=alice-build --why=\"a user's build\" -- sleep 300" &
alice_job=$!
check "alice (uid $(id -u alice)) holds a wake lock, taken over SSH" wait_until 100 listed alice-build
check "from a remote logind session without a seat ($(remote_session alice))" remote_session alice
check "which autosleepd does not count as a user at the screen" \
	sh -c 'autosleepctl status | grep alice | grep -q "remote: does not count"'
out=$(ssh_as carol autosleepctl hold --name=carol-remote -- true 2>&1)
rc=$?
check "carol over SSH, with no polkit rule, gets no wake lock (rc $rc: $out)" \
	sh -c '[ "$1" -ne 0 ] && printf "%s\n" "$2" | grep -q "org.autosleep1.acquire-wake-lock)"' sh "$rc" "$out"
check "and none is listed" sh -c '! autosleepctl list | grep -q carol-remote'
out=$(as alice autosleepctl hold --lid-closed --name=alice-lid -- true 2>&1)
rc=$?
check "alice may not keep a closed lid awake: AccessDenied naming the lid-closed action (rc $rc: $out)" \
	sh -c '[ "$1" -ne 0 ] && printf "%s\n" "$2" | grep -q "org.autosleep1.acquire-wake-lock-lid-closed"' sh "$rc" "$out"
sleep 6
type_on "vmtest external keyboard 5" keyboard
wait "$typer"
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 8
mark "release-timed lid-user-lock"
release
lid close
check "the closed lid suspends although alice's lock is held" wait_cycle "$s0" "$f0"
check "and the journal says her lock waits for the lid" \
	sh -c "journalctl -u autosleepd -o cat | grep -q \"Lid closed: 1 wake lock of users waits for the lid to open (first 'alice-build' of uid $(id -u alice)\""
check "alice's lock is still listed" listed alice-build
check "autosleepctl list marks it lid-wait and counts it" \
	sh -c 'l=$(autosleepctl list); printf "%s\n" "$l" | grep "^alice-build " | grep -q " lid-wait " &&
		printf "%s\n" "$l" | grep -q "1 of them waiting for the lid to open"'
check "and list --json says waiting-for-lid" \
	sh -c 'autosleepctl list --json | tr "{" "\n" | grep "\"name\":\"alice-build\"" |
		grep -q "\"state\":\"waiting-for-lid\",\"lid_closed\":false"'
autosleepctl list | sed 's/^/# [lid closed] /'
check "autosleepctl status says it waits for the lid" \
	sh -c 'autosleepctl status | grep -q "^Wake locks: .*(1 of users waits for the lid to open)"'
check "and so does status --json ($(lid_waiting))" test "$(lid_waiting)" = 1
autosleepctl status | grep "^Wake locks:" | sed 's/^/# [lid closed] /'
lid open
check "with the lid open none waits (status --json)" wait_until 50 lid_none
as_bg bob autosleepctl hold --lid-closed --name=bob-download --why="the owner's download, lid closed" -- sleep 300
bob_job=$!
check "bob's --lid-closed lock is granted" wait_until 100 listed bob-download
sleep 6
type_on "vmtest external keyboard 6" keyboard
wait "$typer"
arm_rtc 60
guard_start
mark "hold-start lid-closed-lock"
release
lid close
sleep 8
mark "hold-end lid-closed-lock"
check "bob's --lid-closed lock keeps the closed lid awake" guard_stop
s0=$(stat_ success); f0=$(stat_ fail)
arm_rtc 8
mark "release-timed lid-closed-lock-ends"
kill "$bob_job"; wait "$bob_job" 2> /dev/null
check "once bob's job ends, the closed lid suspends" wait_cycle "$s0" "$f0"
lid open
check "with the lid open alice's lock holds again (list)" \
	sh -c 'autosleepctl list | grep "^alice-build " | grep -q " held "'
# Her SSH session ends as logout ends it: logind stops what it ran, and the lock goes with it.
loginctl terminate-user alice
check "alice's session ended, her lock is gone" wait_until 100 sh -c '! autosleepctl list | grep -q "^alice-build "'
kill "$alice_job" 2> /dev/null; wait "$alice_job" 2> /dev/null
systemctl stop ssh.service
rm -f "$rules"
systemctl restart polkit.service

# --- 7. HandleLid=no: logind's behaviour ---------------------------------------
mkdir -p "$(dirname "$conf")"
printf '[Logind]\nHandleLid=no\n' > "$conf"
systemctl restart autosleepd
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
check "with HandleLid=no autosleepd takes no lid inhibitor" \
	sh -c '! systemd-inhibit --list --no-pager | grep autosleepd | grep -q handle-lid-switch'
e0=$(externals)
c0=$(journal | grep -c 'Lid closed: the user is gone')
# Past logind's hold-off since the last resume.
sleep 6
arm_rtc 10
release
lid close
check "with HandleLid=no logind handles the closed lid (an external cycle after $e0)" \
	wait_until 150 sh -c "[ \"\$(autosleepctl stats --json | sed -n 's/.*\"ExternalSuspends\":\([0-9]*\).*/\1/p')\" -gt $e0 ]"
lid open
hold
check "and autosleepd did not count the lid as an absence" test "$(journal | grep -c 'Lid closed: the user is gone')" = "$c0"
check "but said logind handles it" sh -c "journalctl -u autosleepd -o cat | grep -q 'Lid closed; logind (HandleLid=no) handles the lid, leaving it alone'"

# --- clean up -----------------------------------------------------------------
kill "$lidtool"
wait "$lidtool" 2> /dev/null
exec 7>&-
rm -f "$conf" "$logind_conf" /run/vmtest-lid.fifo
systemctl restart systemd-logind
systemctl restart autosleepd
wait_until 100 sh -c 'autosleepctl status > /dev/null 2>&1'
hold
