#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped units must score an exposure level of at most 1.0 in
# "systemd-analyze security --offline=true" (Debian 12's logind scores 3.0):
# the daemon, and the unit that hands the machine back after its last
# failed start.
set -u
: "${UNITS_DIR:?}"
command -v systemd-analyze > /dev/null || { echo "no systemd-analyze, skipping"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
for unit in autosleepd autosleepd-hand-back; do
	sed 's|@sbindir@|/usr/sbin|g' "$UNITS_DIR/$unit.service.in" > "$tmp/$unit.service"
	out=$(systemd-analyze security --offline=true "$tmp/$unit.service" 2>&1)
	score=$(sed -n "s/.*Overall exposure level for $unit.service: \([0-9.]*\).*/\1/p" <<< "$out")
	if [ -z "$score" ]; then
		echo "systemd-analyze gave no score (needs --offline, systemd 252 or newer):"
		echo "$out" | tail -n 5
		exit 77
	fi
	echo "$unit.service: exposure level $score (limit 1.0)"
	awk -v s="$score" 'BEGIN { exit !(s <= 1.0) }' || rc=1
done
exit $rc
