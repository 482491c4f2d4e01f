#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The demo: boot the autosleep kernel in QEMU with autosleepd as a systemd
# service, and watch it put the machine to sleep when the last wake lock is
# released and the RTC alarm wake it, with a WireGuard and crng check after
# every cycle. Installs what it needs; kernel and base image are cached.
#
#   bash tests/vm/demo.sh [--cycles N] [--control]
#     --cycles N   suspend cycles (default 3)
#     --control    boot the control kernel (no PM_USERSPACE_AUTOSLEEP) instead
set -uo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	top=$(cd "$here/../.." && pwd)
	cycles=3
	variant=
	expect=autosleep
	while [ $# -gt 0 ]; do
		case "$1" in
		--cycles) cycles=$2; shift ;;
		--control) variant=--control; expect=control ;;
		-h|--help) sed -n '3,11p' "${BASH_SOURCE[0]}"; exit 0 ;;
		*) echo "demo.sh: unknown argument '$1'" >&2; exit 2 ;;
		esac
		shift
	done

	. "$top/tests/deps.sh"
	install_deps build vm package || exit 1

	echo "Building the ${expect} kernel from Debian's linux-source-6.1 (cached after the first run, ~13 min cold on 2 cores)..."
	kernel=$("$top/kernel-patches/build-kernel.sh" $variant | tail -n1) || exit 1
	echo "Building the Debian guest image, autosleep installed from its package (~5 min cold)..."
	work=${TMPDIR:-/tmp}/autosleep-demo
	mkdir -p "$work"
	image=$("$here/mkrootfs.sh" "$work/rootfs.img" | tail -n1) || exit 1
	echo "Booting it under QEMU (software emulation, ~20 s to systemd). Console log: $work/demo-console.log"
	echo
	exec python3 "$here/vmtest.py" --kernel "$kernel" --image "$image" --expect "$expect" --cycles "$cycles" \
		--scenarios demo --label demo --log-dir "$work" --live --timeout $((300 + cycles * 60))
}

main "$@"
