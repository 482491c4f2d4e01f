#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The login shell of root's autologin session on ttyS2 (laptop.sh sets it
# up): a real logind session made by pam_systemd. It runs the commands
# laptop.sh writes to the FIFO, one per write, inside the session, and
# reports each one's exit status in the done file.
fifo=/run/vmtest-session.fifo
echo "$XDG_SESSION_ID" > /run/vmtest-session.id.tmp
mv /run/vmtest-session.id.tmp /run/vmtest-session.id
while :; do
	if IFS= read -r cmd < "$fifo"; then
		bash -c "$cmd" < /dev/null > /dev/null 2>&1
		echo $? > /run/vmtest-session.done
	fi
done
