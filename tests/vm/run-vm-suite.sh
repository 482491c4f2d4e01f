#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The VM suite: build (or take from cache) the autosleep and control kernels
# and the guest image, then boot each. The autosleep kernel must keep
# WireGuard keys and not reseed the crng on every autosleepd cycle, and a
# held lock must block suspend; the control kernel must show the opposite.
# Appends "passed failed" per boot to --counts FILE.
set -uo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	top=$(cd "$here/../.." && pwd)
	cycles=5
	counts=/dev/null
	log_dir=${TMPDIR:-/tmp}/autosleep-vm-logs
	while [ $# -gt 0 ]; do
		case "$1" in
		--cycles) cycles=$2; shift ;;
		--counts) counts=$2; shift ;;
		--log-dir) log_dir=$2; shift ;;
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
	control=$("$top/kernel-patches/build-kernel.sh" --control | tail -n1) || { echo "not ok - control kernel build"; echo "0 1" >> "$counts"; exit 1; }
	t1=$(date +%s)
	echo "=== building guest image"
	image=$("$here/mkrootfs.sh" | tail -n1) || { echo "not ok - guest image"; echo "0 1" >> "$counts"; exit 1; }
	t2=$(date +%s)
	echo "# kernels: $((t1 - t0)) s, image: $((t2 - t1)) s"

	rc=0
	echo "=== autosleep kernel: wireguard-and-crng ($cycles cycles), lease-blocks-suspend, dbus-and-logind, activity"
	python3 "$here/vmtest.py" --kernel "$kernel" --image "$image" --expect autosleep --cycles "$cycles" \
		--scenarios wireguard-and-crng,lease-blocks-suspend,dbus-and-logind,activity --label autosleep --log-dir "$log_dir" \
		--counts "$counts" --timeout 1200 || rc=1
	echo "=== control kernel: wireguard-and-crng ($cycles cycles), expecting the opposite"
	python3 "$here/vmtest.py" --kernel "$control" --image "$image" --expect control --cycles "$cycles" \
		--scenarios wireguard-and-crng --label control --log-dir "$log_dir" \
		--counts "$counts" --timeout 1200 || rc=1
	echo "# VM boots: $(( $(date +%s) - t2 )) s"
	exit $rc
}

main "$@"
