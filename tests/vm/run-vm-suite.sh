#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The VM suite: build (or take from cache) the autosleep and control kernels
# and the guest image, then boot each. The autosleep kernel must keep
# WireGuard keys and not reseed the crng on every autosleepd cycle, and a
# held lock must block suspend; the control kernel must show the opposite.
# Then the promises of the unit and the lease path under systemd: the
# sandbox from inside, polkit, a SIGKILLed and a SIGSTOPped daemon,
# acquires racing pm_test cycles, and the benchmark rows that need the real
# bus, logind and kernel (bench: numbers only, it fails only if it breaks).
# Appends "passed failed" per boot to --counts FILE.
#
#   --cycles N         wireguard-and-crng cycles per kernel (default 5)
#   --scenarios LIST   only these guest scenarios (comma-separated) on the
#                      autosleep kernel, and no control kernel boot unless
#                      LIST has wireguard-and-crng: a short iteration, e.g.
#                      --scenarios sandbox,polkit
#   --long             1000 acquires in pm-test-race instead of 100 (about
#                      2 more minutes)
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
	scenarios=wireguard-and-crng,lease-blocks-suspend,dbus-and-logind,activity,sandbox,polkit,daemon-crash,watchdog,pm-test-race,bench
	race=100
	timeout=1800
	while [ $# -gt 0 ]; do
		case "$1" in
		--cycles) cycles=$2; shift ;;
		--counts) counts=$2; shift ;;
		--log-dir) log_dir=$2; shift ;;
		--scenarios) scenarios=$2; shift ;;
		--long) race=1000; timeout=2400 ;;
		*) echo "run-vm-suite.sh: unknown argument '$1'" >&2; exit 2 ;;
		esac
		shift
	done
	mkdir -p "$log_dir"

	. "$top/tests/deps.sh"
	install_deps build vm || exit 1

	t0=$(date +%s)
	echo "=== building kernels (cached by input hash)"
	kernel=$("$top/kernel-patches/build-kernel.sh" | tail -n1) || { echo "not ok - autosleep kernel build"; echo "0 1" >> "$counts"; exit 1; }
	control=
	if [[ ",$scenarios," == *,wireguard-and-crng,* ]]; then
		control=$("$top/kernel-patches/build-kernel.sh" --control | tail -n1) || { echo "not ok - control kernel build"; echo "0 1" >> "$counts"; exit 1; }
	fi
	t1=$(date +%s)
	echo "=== building guest image"
	image=$("$here/mkrootfs.sh" | tail -n1) || { echo "not ok - guest image"; echo "0 1" >> "$counts"; exit 1; }
	t2=$(date +%s)
	echo "# kernels: $((t1 - t0)) s, image: $((t2 - t1)) s"

	rc=0
	echo "=== autosleep kernel: ${scenarios//,/, } ($cycles wireguard cycles, $race racing acquires)"
	python3 "$here/vmtest.py" --kernel "$kernel" --image "$image" --expect autosleep --cycles "$cycles" \
		--scenarios "$scenarios" --race-iterations "$race" --label autosleep --log-dir "$log_dir" \
		--counts "$counts" --timeout "$timeout" || rc=1
	# Only wireguard-and-crng proves a kernel effect; the rest are the daemon's.
	if [ -n "$control" ]; then
		echo "=== control kernel: wireguard-and-crng ($cycles cycles), expecting the opposite"
		python3 "$here/vmtest.py" --kernel "$control" --image "$image" --expect control --cycles "$cycles" \
			--scenarios wireguard-and-crng --label control --log-dir "$log_dir" \
			--counts "$counts" --timeout 1200 || rc=1
	fi
	echo "# VM boots: $(( $(date +%s) - t2 )) s"
	exit $rc
}

main "$@"
