#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A stranger's strings, with real logind and journald: user nobody takes an
# idle block inhibitor (logind grants those to anyone) whose who holds an
# escape sequence and whose why a newline and "<0>". autosleepd stays awake
# for it and says so, but escaped: no entry of autosleepd's at priority 0
# (journald would broadcast it to every terminal), no line that starts with
# the forged text, and autosleepctl list and status print no control
# character. Unescaped, the why would stand in the journal as an emergency
# of its own (seen on 75e8d5b); tests/unit/test-sessions fails there too.
set -u
. /usr/lib/autosleep-vm/lib.sh

hold
since=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
setpriv --reuid=65534 --regid=65534 --clear-groups systemd-inhibit --what=idle --mode=block \
	--who=$'remote\e[2J' --why=$'x\n<0>FORGED Disk failing' sleep 120 &
inh=$!
check "nobody's idle inhibitor keeps autosleepd awake: listed as a lock" \
	wait_until 100 sh -c 'autosleepctl list | grep -q "logind inhibitor by"'
list=$(autosleepctl list)
status=$(autosleepctl status)
echo "$list" | grep "logind inhibitor" | sed 's/^/#   list: /'
check "autosleepctl list shows the why escaped ('x\\x0a<0>FORGED')" grep -qF 'x\x0a<0>FORGED Disk failing' <<< "$list"
check "autosleepctl list prints no control character" sh -c '! printf %s "$1" | LC_ALL=C grep -q "[[:cntrl:]]"' sh "${list//$'\n'/ }"
check "autosleepctl status prints no control character" sh -c '! printf %s "$1" | LC_ALL=C grep -q "[[:cntrl:]]"' sh "${status//$'\n'/ }"
check "no line of autosleepctl list starts with the forged text" sh -c '! printf "%s\n" "$1" | grep -q "^<0>FORGED"' sh "$list"
wait_until 50 sh -c "journalctl -u autosleepd --since '$since' -o cat --no-pager | grep -qF 'FORGED'"
j=$(journalctl -u autosleepd --since "$since" -o cat --no-pager)
grep -F FORGED <<< "$j" | head -n 3 | sed 's/^/#   journal: /'
check "the journal has the why escaped, on autosleepd's own line" grep -qF 'x\x0a<0>FORGED Disk failing' <<< "$j"
check "no journal entry of autosleepd is the forged text alone" sh -c '! printf "%s\n" "$1" | grep -qx "FORGED Disk failing"' sh "$j"
check "no journal entry of autosleepd at priority 0 (emerg) since the inhibitor" \
	sh -c "[ -z \"\$(journalctl -u autosleepd --since '$since' -p 0 -q -o cat --no-pager)\" ]"
check "the journal has no escape byte from the who" sh -c '! printf %s "$1" | grep -q "$(printf "\033")"' sh "$j"
kill "$inh" 2> /dev/null
wait "$inh" 2> /dev/null
check "the inhibitor's lock is gone once it ends" \
	wait_until 100 sh -c '! autosleepctl list | grep -q "logind inhibitor by"'
release
