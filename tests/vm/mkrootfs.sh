#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the guest disk image: a Debian bookworm rootfs with systemd as PID 1,
# Debian's stock kernel (linux-image-amd64, with its initramfs), autosleep
# installed from its Debian package with apt (tests/build-deb.sh), each
# kernel package given with --kernel-deb installed with dpkg -i (initramfs-
# tools makes its initrd), and the guest side of the VM tests. The Debian
# base is cached by a hash of its package list; the image itself is rebuilt
# every time (seconds) so it always has the current build. The helpers'
# build tree and the default image are per checkout, so two checkouts sharing
# the cache never boot each other's code.
#
#   mkrootfs.sh [--kernel-deb DEB]... [OUT]
#
# OUT defaults to rootfs-CHECKOUT.img in the cache, or rootfs-CHECKOUT-
# kernels.img with --kernel-deb.
# Prints the image path as the last line of stdout. The image's /boot is
# copied out, for QEMU to boot, to OUT.boot/RELEASE/{vmlinuz,initrd.img}.
set -euo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	top=$(cd "$here/../.." && pwd)
	cache=${AUTOSLEEP_CACHE:-/var/cache/autosleep}
	# Per checkout: the build tree's Makefile names its source tree.
	checkout=$(printf '%s' "$top" | sha256sum | cut -c1-8)
	out=$cache/vm/rootfs-$checkout.img
	out_given=
	kernel_debs=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--kernel-deb) kernel_debs+=("$(realpath "$2")"); shift ;;
		-*) echo "mkrootfs.sh: unknown argument '$1'" >&2; exit 2 ;;
		*) out=$1; out_given=1 ;;
		esac
		shift
	done
	# The suite boots an image without kernel packages while it builds one
	# with them: two files.
	[ -n "$out_given" ] || [ ${#kernel_debs[@]} -eq 0 ] || out=${out%.img}-kernels.img

	log() { echo "mkrootfs: $*" >&2; }

	# polkitd: the polkit scenario checks org.autosleep1.policy for real.
	# linux-image-amd64: the stock-kernel boot; it brings initramfs-tools,
	# which also makes the initrd of the kernel packages installed below.
	# openssh: the lid scenario's remote session is a real SSH login.
	packages=systemd,systemd-sysv,dbus,udev,iproute2,wireguard-tools,iputils-ping,procps,util-linux,libevdev2,libsystemd0,zlib1g,kmod,polkitd,linux-image-amd64,initramfs-tools,openssh-server,openssh-client
	suite=bookworm
	sources=/etc/apt/sources.list.d/debian.sources
	[ -f "$sources" ] || sources=/etc/apt/sources.list
	key=$( { echo "$packages $suite recipe 1"; cat "$sources"; } | sha256sum | cut -c1-16)
	base=$cache/vm/base-$key.tar

	mkdir -p "$cache/vm"
	exec 9>"$cache/vm/.lock"
	flock 9

	if [ ! -f "$base" ]; then
		log "building Debian $suite base ($packages)"
		rm -rf "$cache"/vm/base-*
		mmdebstrap --quiet --format=tar --variant=minbase --include="$packages" "$suite" "$base.tmp" - \
			< "$sources" >&2
		mv "$base.tmp" "$base"
	fi

	# autosleep itself comes from its Debian package, as on a user's machine.
	deb=$("$top/tests/build-deb.sh" | tail -n1)
	# The same tree as a newer version, for the upgrade scenario.
	deb_up=$("$top/tests/build-deb.sh" --version-suffix test1 | tail -n1)

	# The tests' helper programs are not in the package: a build tree of their own.
	build=$cache/vm/build-$checkout
	mkdir -p "$build"
	if [ ! -x "$top/configure" ]; then
		(cd "$top" && autoreconf -fi >&2)
	fi
	if [ ! -f "$build/Makefile" ] || [ "$top/configure" -nt "$build/Makefile" ]; then
		(cd "$build" && "$top/configure" -q --prefix=/usr --sysconfdir=/etc --localstatedir=/var >&2)
	fi
	make -s -C "$build" -j"$(nproc)" tests/vm/uinput-tool tests/vm/sandbox-probe tests/vm/race-client \
		tests/vm/bench-client tests/vm/wake-hold >&2

	root=$(mktemp -d "$cache/vm/root.XXXXXX")
	# unmount_chroot: the bind mounts of the host's /dev, /proc and /sys
	# undone; fails while one is still mounted.
	unmount_chroot() {
		local m
		for m in dev/pts dev sys proc; do umount "$root/$m" 2> /dev/null || true; done
		for m in dev/pts dev sys proc; do
			if mountpoint -q "$root/$m"; then
				echo "mkrootfs: $root/$m is still mounted" >&2
				return 1
			fi
		done
	}
	# Never rm -rf through such a bind mount: leave the tree instead.
	cleanup() {
		unmount_chroot || { echo "mkrootfs: leaving $root" >&2; return; }
		rm -rf --one-file-system "$root"
	}
	trap cleanup EXIT
	tar -xf "$base" -C "$root"
	for m in proc sys dev dev/pts; do mount --bind "/$m" "$root/$m"; done
	# No service starts inside the image build.
	printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
	chmod 0755 "$root/usr/sbin/policy-rc.d"

	# apt, so the package's dependencies resolve against the archive's
	# (the base has them all, so nothing is downloaded). The .deb stays in
	# the image for the package scenario's reinstall.
	install -d "$root/var/cache/autosleep-vm/upgrade"
	cp "$deb" "$root/var/cache/autosleep-vm/"
	cp "$deb_up" "$root/var/cache/autosleep-vm/upgrade/"
	DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends \
		"/var/cache/autosleep-vm/$(basename "$deb")" >&2
	# Installing must not enable the service (dh_installsystemd --no-enable):
	# a machine that installs the package does not start suspending.
	if [ -e "$root/etc/systemd/system/multi-user.target.wants/autosleepd.service" ]; then
		echo "mkrootfs: error: installing $(basename "$deb") enabled autosleepd.service" >&2
		exit 1
	fi
	for k in "${kernel_debs[@]}"; do
		cp "$k" "$root/var/cache/autosleep-vm/"
		chroot "$root" dpkg -i "/var/cache/autosleep-vm/$(basename "$k")" >&2
		rm -f "$root/var/cache/autosleep-vm/$(basename "$k")"
	done
	rm -f "$root/usr/sbin/policy-rc.d"
	unmount_chroot

	# Guest side of the tests.
	install -d "$root/usr/lib/autosleep-vm"
	cp -R "$here/guest/." "$root/usr/lib/autosleep-vm/"
	chmod +x "$root"/usr/lib/autosleep-vm/*.sh
	# The README's blocks that need a booted system, as printed (the readme scenario).
	install -d "$root/usr/lib/autosleep-vm/readme"
	for b in enable undo; do
		python3 "$top/tests/newcomer/readme-blocks.py" --block $b "$top/README.md" > "$root/usr/lib/autosleep-vm/readme/$b.sh"
	done
	install -m 0755 "$build/tests/vm/uinput-tool" "$build/tests/vm/sandbox-probe" "$build/tests/vm/race-client" \
		"$build/tests/vm/bench-client" "$build/tests/vm/wake-hold" \
		"$root/usr/lib/autosleep-vm/"
	install -m 0644 "$here/guest/autosleep-vmtest.service" "$here/guest/autosleep-vmtest-hold.service" \
		"$root/etc/systemd/system/"
	install -d "$root/etc/systemd/system/sysinit.target.wants"
	ln -sf /etc/systemd/system/autosleep-vmtest-hold.service "$root/etc/systemd/system/sysinit.target.wants/"
	ln -sf /etc/systemd/system/autosleep-vmtest.service "$root/etc/systemd/system/multi-user.target.wants/"
	# Enabled as the admin would, which also makes the alias D-Bus activation needs.
	systemctl --root="$root" enable autosleepd.service 2>&1 | sed 's/^/mkrootfs: /' >&2
	[ -L "$root/etc/systemd/system/dbus-org.autosleep1.service" ] ||
		{ echo "mkrootfs: error: systemctl enable autosleepd made no dbus-org.autosleep1.service alias" >&2; exit 1; }
	# Debug logging in the guest, so a failing scenario's journal dump says why.
	install -d "$root/etc/systemd/system/autosleepd.service.d"
	printf '[Service]\nExecStart=\nExecStart=/usr/sbin/autosleepd --log-level=debug\n' \
		> "$root/etc/systemd/system/autosleepd.service.d/vmtest-debug.conf"
	# "systemctl reload autosleepd" runs the sandbox probe from the unit's own
	# execution context (the sandbox scenario).
	printf '[Service]\nExecReload=/usr/lib/autosleep-vm/sandbox-inside.sh\n' \
		> "$root/etc/systemd/system/autosleepd.service.d/vmtest-sandbox-probe.conf"
	install -d "$root/etc/autosleep/autosleep.conf.d"
	cp "$here/guest/50-vmtest.conf" "$root/etc/autosleep/autosleep.conf.d/"

	# A quiet, fast, headless boot.
	echo autosleep-vm > "$root/etc/hostname"
	echo "/dev/vda / ext4 defaults 0 1" > "$root/etc/fstab"
	for u in getty@tty1.service serial-getty@ttyS0.service systemd-timesyncd.service apt-daily.timer \
		apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do
		ln -sf /dev/null "$root/etc/systemd/system/$u"
	done
	# sshd only where a scenario starts it (lid): not in every boot.
	systemctl --root="$root" disable ssh.service 2>&1 | sed 's/^/mkrootfs: /' >&2
	passwd_hash='*'
	sed -i "s|^root:[^:]*:|root:$passwd_hash:|" "$root/etc/shadow"

	rm -f "$out.tmp"
	mkfs.ext4 -q -F -L autosleep-root -d "$root" "$out.tmp" 2G >&2

	# QEMU boots the kernels from the image's own /boot.
	rm -rf "$out.boot"
	for v in "$root"/boot/vmlinuz-*; do
		[ -e "$v" ] || continue
		rel=${v##*/vmlinuz-}
		[ -f "$root/boot/initrd.img-$rel" ] || { echo "mkrootfs: error: no initrd.img-$rel in the image's /boot" >&2; exit 1; }
		mkdir -p "$out.boot/$rel"
		debugfs -R "dump /boot/vmlinuz-$rel $out.boot/$rel/vmlinuz" "$out.tmp" 2> /dev/null
		debugfs -R "dump /boot/initrd.img-$rel $out.boot/$rel/initrd.img" "$out.tmp" 2> /dev/null
		[ -s "$out.boot/$rel/vmlinuz" ] && [ -s "$out.boot/$rel/initrd.img" ] ||
			{ echo "mkrootfs: error: cannot copy $rel's kernel and initrd out of the image" >&2; exit 1; }
		log "boot files of $rel: $out.boot/$rel"
	done
	mv "$out.tmp" "$out"
	log "image: $out"
	echo "$out"
}

main "$@"
