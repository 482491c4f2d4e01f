#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The VM suite: build (or take from cache) the autosleep, control and knob
# kernels and the guest image, then boot each. The autosleep kernel must keep
# WireGuard keys and not reseed the crng on every autosleepd cycle, and a
# held lock must block suspend; the control kernel must show the opposite.
# The knob kernel (kernel-patches/knob/, PM_USERSPACE_AUTOSLEEP unset) is
# built as a Debian package (build-kernel.sh --deb --base-config vm: modules
# and an initramfs), installed in the image with dpkg -i and booted from the
# image's /boot. It must behave like the autosleep kernel while autosleepd
# runs, and like the control kernel once it is disabled, stopped or told
# SetUserspaceAutosleep=no. Debian's stock kernel (linux-image-amd64, in the
# image from the archive) must show the control kernel's outcome, warn, and
# hold back on autosleepd's epoll kernel lock alone. On both, the autosleep
# package (installed with apt) is removed, purged and installed again.
# D-Bus activation is tried as nobody (activation). On the packaged knob
# kernel, apt upgrades the package over a running daemon that holds a lock
# (upgrade), and the README's "Enable" and "Undo" blocks run as printed
# (readme).
# Scheduled work: systemd's own WakeSystem= timers wake the guest and their
# job runs to its end before the next suspend, and with HoldWakeTimers=no it
# is frozen mid-way (the host checks both on the QMP timeline); an alarm due
# within 2 s is recorded as alarm-imminent without backoff.
# Then the promises of the unit and the lease path under systemd: the
# sandbox from inside, polkit, a SIGKILLed and a SIGSTOPped daemon,
# acquires racing pm_test cycles, and the benchmark rows that need the real
# bus, logind and kernel (bench: numbers only, it fails only if it breaks).
# Appends "passed failed" per boot to --counts FILE. The package builds and
# boots run beside the other boots (two lanes; see below).
#
#   --cycles N         wireguard-and-crng cycles per kernel (default 5)
#   --scenarios LIST   only these guest scenarios (comma-separated) on the
#                      autosleep kernel: a short iteration, e.g.
#                      --scenarios sandbox,polkit; no control kernel boot unless
#                      LIST has wireguard-and-crng or soak (the control
#                      boot runs those of the two listed), no knob kernel
#                      boot unless it has knob, no stock kernel boot unless
#                      it has stock
#   --source VER       build the kernels from linux-source-VER (6.1, the
#                      default, or 6.12), e.g. --source 6.12 --scenarios knob
#   --distro-kernel    also build the knob kernel package from Debian's own
#                      config (linux-config-6.1), its modules trimmed to
#                      what the guest loads (kernel-patches/vm-lsmod.txt),
#                      and boot it with the knob kernel's scenarios
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
	scenarios=wireguard-and-crng,lease-blocks-suspend,timers,dbus-and-logind,activity,laptop,lid,sandbox,polkit,activation,strings,daemon-crash,hand-back,watchdog,pm-test-race,bench,soak,knob,stock
	distro=0
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
		--distro-kernel) distro=1 ;;
		*) echo "run-vm-suite.sh: unknown argument '$1'" >&2; exit 2 ;;
		esac
		shift
	done
	mkdir -p "$log_dir"

	. "$top/tests/deps.sh"
	install_deps build vm package || exit 1

	t0=$(date +%s)
	# The knob and stock scenarios run on the packaged knob kernel and on
	# Debian's stock kernel only.
	run_knob=0
	run_stock=0
	[[ ",$scenarios," == *,knob,* ]] && run_knob=1
	[[ ",$scenarios," == *,stock,* ]] && run_stock=1
	scenarios=$(tr ',' '\n' <<< "$scenarios" | grep -vx -e knob -e stock | paste -sd, -)
	# The kernel effects the control kernel must show the opposite of.
	control_scenarios=$(tr ',' '\n' <<< "$scenarios" | grep -x -e wireguard-and-crng -e soak | paste -sd, -)
	# failed WHAT: a failure that no boot reports, as a TAP line and a count.
	failed() { echo "not ok - $1"; echo "0 1" >> "$counts"; }
	# lane_a_failed WHAT: after the image build that may still run beside it.
	lane_a_failed() { failed "$1"; wait; exit 1; }

	# A QEMU TCG guest uses at most one core and mostly waits on its alarms
	# and sleeps, and a kernel build wants two. So the suite runs in two
	# lanes. Lane A boots the kernels that need no package (autosleep,
	# control, Debian's stock kernel) from an image without kernel packages.
	# Lane B meanwhile builds the kernel packages (niced, so lane A's guest
	# keeps its core), an image with them, and boots them. A cold run takes
	# the longer lane, not the sum of both.
	echo "=== lane A: kernels and image (cached by input hash)"
	kernel=
	control=
	image=
	img_out=
	if [ -n "$scenarios" ] || [ $run_stock = 1 ]; then
		# The image builds next to the kernels: it is mostly dpkg and I/O.
		img_out=$(mktemp)
		"$here/mkrootfs.sh" > "$img_out" &
		img_pid=$!
	fi
	if [ -n "$scenarios" ]; then
		kernel=$("$top/kernel-patches/build-kernel.sh" "${source[@]}" | tail -n1) || lane_a_failed "autosleep kernel build"
	fi
	if [ -n "$control_scenarios" ]; then
		control=$("$top/kernel-patches/build-kernel.sh" "${source[@]}" --control | tail -n1) || lane_a_failed "control kernel build"
	fi
	if [ -n "$img_out" ]; then
		wait "$img_pid" && image=$(tail -n1 "$img_out")
		rm -f "$img_out"
		[ -n "$image" ] && [ -f "$image" ] || lane_a_failed "guest image"
	fi
	t1=$(date +%s)
	echo "# lane A: kernels and image: $((t1 - t0)) s"

	# The release a kernel package installs is its name's tail.
	release_of() { dpkg-deb -f "$1" Package | sed 's/^linux-image-//'; }
	# boot_packaged IMAGE LABEL EXPECT SCENARIOS RELEASE: QEMU boots the
	# vmlinuz and initrd.img of RELEASE that mkrootfs copied out of the
	# image's /boot.
	boot_packaged() {
		local img=$1 label=$2 expect=$3 list=$4 rel=$5 boot=$1.boot/$5
		if [ ! -f "$boot/vmlinuz" ] || [ ! -f "$boot/initrd.img" ]; then
			failed "$label: no vmlinuz and initrd.img of $rel in the image's /boot"
			return 1
		fi
		python3 "$here/vmtest.py" --kernel "$boot/vmlinuz" --initrd "$boot/initrd.img" --image "$img" \
			--expect "$expect" --cycles "$cycles" --scenarios "$list" --label "$label" --log-dir "$log_dir" \
			--counts "$counts" --timeout 1500
	}

	lane_b() {
		local -a debs=()
		local knob_deb= distro_deb= pkg_image t rc=0
		t=$(date +%s)
		if [ $run_knob = 1 ]; then
			knob_deb=$(nice -n 10 "$top/kernel-patches/build-kernel.sh" "${source[@]}" --deb --base-config vm | tail -n1) ||
				{ failed "knob kernel package build"; return 1; }
			debs+=(--kernel-deb "$knob_deb")
		fi
		if [ $distro = 1 ]; then
			distro_deb=$(nice -n 10 "$top/kernel-patches/build-kernel.sh" "${source[@]}" --deb \
				--localmodconfig "$top/kernel-patches/vm-lsmod.txt" | tail -n1) ||
				{ failed "Debian-config kernel package build"; return 1; }
			debs+=(--kernel-deb "$distro_deb")
		fi
		[ ${#debs[@]} -gt 0 ] || return 0
		echo "=== lane B: guest image with the kernel packages"
		pkg_image=$(nice -n 10 "$here/mkrootfs.sh" "${debs[@]}" | tail -n1) || { failed "guest image with the kernel packages"; return 1; }
		echo "# lane B: kernel packages and image: $(( $(date +%s) - t )) s"
		if [ -n "$knob_deb" ]; then
			echo "=== packaged knob kernel $(release_of "$knob_deb"): knob (the knob's ABI; WireGuard as a module and the crng with autosleepd running, disabled, SIGKILLed, stopped, SetUserspaceAutosleep=no), upgrade, package, readme"
			boot_packaged "$pkg_image" knob knob knob,upgrade,package,readme "$(release_of "$knob_deb")" || rc=1
		fi
		if [ -n "$distro_deb" ]; then
			echo "=== Debian-config knob kernel $(release_of "$distro_deb"): knob, package"
			boot_packaged "$pkg_image" distro knob knob,package "$(release_of "$distro_deb")" || rc=1
		fi
		echo "# lane B took $(( $(date +%s) - t )) s"
		return $rc
	}

	# Lane B's lines are shown whole once it ends, so that neither lane's
	# lines cut through the other's.
	lane_b_log=$log_dir/lane-b.log
	lane_b > "$lane_b_log" 2>&1 &
	lane_b_pid=$!

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
	if [ $run_stock = 1 ]; then
		stock=$(cd "$image.boot" && ls -d *-amd64 2> /dev/null | head -n1)
		echo "=== Debian's stock kernel ${stock:-(missing)}: wireguard-and-crng, stock, package; expecting the control kernel's outcome"
		boot_packaged "$image" stock stock wireguard-and-crng,stock,package "${stock:-none}" || rc=1
	fi
	echo "# lane A: VM boots: $(( $(date +%s) - t1 )) s"
	[ $run_knob = 1 ] || [ $distro = 1 ] && echo "=== lane B: the kernel packages' builds and boots (waiting for it to end)"
	wait "$lane_b_pid" || rc=1
	cat "$lane_b_log"
	echo "# VM suite: $(( $(date +%s) - t0 )) s"
	exit $rc
}

main "$@"
