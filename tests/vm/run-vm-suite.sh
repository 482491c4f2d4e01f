#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The VM suite: build (or take from cache) the autosleep, control and knob
# kernels and the guest image, then boot each. The autosleep kernel must keep
# WireGuard keys and not reseed the crng on every autosleepd cycle, and a
# held lock must block suspend; the control kernel must show the opposite.
# The knob kernel (kernel-patches/knob/, PM_USERSPACE_AUTOSLEEP unset) must
# behave like the autosleep kernel while autosleepd runs, and like the
# control kernel once it is disabled or stopped.
# Scheduled work: systemd's own WakeSystem= timers wake the guest and their
# job runs to its end before the next suspend, and with HoldWakeTimers=no it
# is frozen mid-way (the host checks both on the QMP timeline); an alarm due
# within 2 s is recorded as alarm-imminent without backoff.
# Then the promises of the unit and the lease path under systemd: the
# sandbox from inside, polkit, a SIGKILLed and a SIGSTOPped daemon,
# acquires racing pm_test cycles, and the benchmark rows that need the real
# bus, logind and kernel (bench: numbers only, it fails only if it breaks).
# Appends "passed failed" per boot to --counts FILE.
#
#   --cycles N         wireguard-and-crng cycles per kernel (default 5)
#   --scenarios LIST   only these guest scenarios (comma-separated) on the
#                      autosleep kernel, and no control kernel boot unless
#                      LIST has wireguard-and-crng or soak (the control
#                      boot runs those of the two listed), no knob kernel boot
#                      unless it has knob: a short iteration, e.g.
#                      --scenarios sandbox,polkit
#   --source VER       build the kernels from linux-source-VER (6.1, the
#                      default, or 6.12), e.g. --source 6.12 --scenarios knob
#   --long             1000 acquires in pm-test-race instead of 100 (about
#                      2 more minutes)
#   --soak-cycles N    real S3 cycles of the soak scenario on the autosleep
#                      kernel (default 50, about 5 minutes; 1000 takes about
#                      2 hours); the control kernel always runs 20
#   --log-dir DIR      console logs (default $TMPDIR/autosleep-vm-logs)
#   --counts FILE      append "passed failed" per boot
set -uo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	top=$(cd "$here/../.." && pwd)
	cycles=5
	counts=/dev/null
	log_dir=${TMPDIR:-/tmp}/autosleep-vm-logs
	scenarios=wireguard-and-crng,lease-blocks-suspend,timers,dbus-and-logind,activity,laptop,lid,sandbox,polkit,daemon-crash,watchdog,pm-test-race,bench,soak,knob
	race=100
	soak_cycles=50
	timeout=1800
	source=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--cycles) cycles=$2; shift ;;
		--counts) counts=$2; shift ;;
		--log-dir) log_dir=$2; shift ;;
		--scenarios) scenarios=$2; shift ;;
		--source) source=(--source "$2"); shift ;;
		--long) race=1000; timeout=2400 ;;
		--soak-cycles) soak_cycles=$2; shift ;;
		*) echo "run-vm-suite.sh: unknown argument '$1'" >&2; exit 2 ;;
		esac
		shift
	done
	mkdir -p "$log_dir"

	. "$top/tests/deps.sh"
	install_deps build vm || exit 1

	t0=$(date +%s)
	echo "=== building kernels (cached by input hash)"
	# The knob scenario runs on the knob kernel only.
	run_knob=0
	[[ ",$scenarios," == *,knob,* ]] && run_knob=1
	scenarios=$(sed 's/\(^\|,\)knob\(,\|$\)/\1/; s/,$//' <<< "$scenarios")
	kernel=
	if [ -n "$scenarios" ]; then
		kernel=$("$top/kernel-patches/build-kernel.sh" "${source[@]}" | tail -n1) || { echo "not ok - autosleep kernel build"; echo "0 1" >> "$counts"; exit 1; }
	fi
	# The kernel effects the control kernel must show the opposite of.
	control_scenarios=$(tr ',' '\n' <<< "$scenarios" | grep -x -e wireguard-and-crng -e soak | paste -sd, -)
	control=
	if [ -n "$control_scenarios" ]; then
		control=$("$top/kernel-patches/build-kernel.sh" "${source[@]}" --control | tail -n1) || { echo "not ok - control kernel build"; echo "0 1" >> "$counts"; exit 1; }
	fi
	knob=
	if [ $run_knob = 1 ]; then
		knob=$("$top/kernel-patches/build-kernel.sh" "${source[@]}" --knob | tail -n1) || { echo "not ok - knob kernel build"; echo "0 1" >> "$counts"; exit 1; }
	fi
	t1=$(date +%s)
	echo "=== building guest image"
	image=$("$here/mkrootfs.sh" | tail -n1) || { echo "not ok - guest image"; echo "0 1" >> "$counts"; exit 1; }
	t2=$(date +%s)
	echo "# kernels: $((t1 - t0)) s, image: $((t2 - t1)) s"

	rc=0
	if [ -n "$scenarios" ]; then
		echo "=== autosleep kernel: ${scenarios//,/, } ($cycles wireguard cycles, $race racing acquires)"
		python3 "$here/vmtest.py" --kernel "$kernel" --image "$image" --expect autosleep --cycles "$cycles" \
			--scenarios "$scenarios" --race-iterations "$race" --soak-cycles "$soak_cycles" --label autosleep \
			--log-dir "$log_dir" --counts "$counts" --timeout "$((timeout + soak_cycles * 8))" || rc=1
	fi
	# Only wireguard-and-crng and soak prove a kernel effect; the rest are the daemon's.
	if [ -n "$control" ]; then
		echo "=== control kernel: ${control_scenarios//,/, } ($cycles wireguard cycles, 20 soak cycles), expecting the opposite"
		python3 "$here/vmtest.py" --kernel "$control" --image "$image" --expect control --cycles "$cycles" \
			--scenarios "$control_scenarios" --label control --log-dir "$log_dir" \
			--counts "$counts" --timeout 1200 || rc=1
	fi
	if [ -n "$knob" ]; then
		echo "=== knob kernel: knob (the knob's ABI; WireGuard/crng with autosleepd running, disabled, SIGKILLed, stopped)"
		python3 "$here/vmtest.py" --kernel "$knob" --image "$image" --expect knob \
			--scenarios knob --label knob --log-dir "$log_dir" \
			--counts "$counts" --timeout 1200 || rc=1
	fi
	echo "# VM boots: $(( $(date +%s) - t2 )) s"
	exit $rc
}

main "$@"
