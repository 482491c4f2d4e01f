#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Guest entry point: run each scenario from autosleep.scenarios=a,b with the
# expectation from autosleep.expect=autosleep|control, report on ttyS1.
set -u
out=/dev/ttyS1
stty -F "$out" raw -echo 115200 2>/dev/null
exec > "$out" 2>&1

scenarios=$(sed -n 's/.*autosleep\.scenarios=\([^ ]*\).*/\1/p' /proc/cmdline)
export EXPECT=$(sed -n 's/.*autosleep\.expect=\([^ ]*\).*/\1/p' /proc/cmdline)
export CYCLES=$(sed -n 's/.*autosleep\.cycles=\([^ ]*\).*/\1/p' /proc/cmdline)
: "${CYCLES:=5}"
# pm-test-race's acquires (run-vm-suite.sh --long asks for 1000).
export RACE_ITERATIONS=$(sed -n 's/.*autosleep\.race_iterations=\([^ ]*\).*/\1/p' /proc/cmdline)
: "${RACE_ITERATIONS:=100}"
# soak's cycles on the autosleep kernel (run-vm-suite.sh --soak-cycles N).
export SOAK_CYCLES=$(sed -n 's/.*autosleep\.soak_cycles=\([^ ]*\).*/\1/p' /proc/cmdline)
: "${SOAK_CYCLES:=50}"

echo "@boot $(cut -d' ' -f1 /proc/uptime)"
for s in ${scenarios//,/ }; do
	echo "@scenario $s"
	if [ -x "/usr/lib/autosleep-vm/$s.sh" ]; then
		"/usr/lib/autosleep-vm/$s.sh"
	else
		echo "not ok - unknown scenario '$s'"
	fi
done
echo "# autosleepd journal (last 80 lines):"
journalctl -u autosleepd -o cat --no-pager | tail -n 80 | sed 's/^/#   /'
echo "@done"
sync
systemctl poweroff --no-block
