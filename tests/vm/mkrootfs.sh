#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the guest disk image: a Debian bookworm rootfs with systemd as PID 1,
# autosleep installed by "make install DESTDIR=", and the guest side of the
# VM tests. The Debian base is cached by a hash of its package list; the image
# itself is rebuilt every time (a few seconds) so it always has the current
# build. The build tree and the default image are per checkout, so two
# checkouts sharing the cache never boot each other's code. Prints the image
# path as the last line of stdout.
set -euo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	top=$(cd "$here/../.." && pwd)
	cache=${AUTOSLEEP_CACHE:-/var/cache/autosleep}
	# Per checkout: the build tree's Makefile names its source tree.
	checkout=$(printf '%s' "$top" | sha256sum | cut -c1-8)
	out=${1:-$cache/vm/rootfs-$checkout.img}

	log() { echo "mkrootfs: $*" >&2; }

	# polkitd: the polkit scenario checks org.autosleep1.policy for real.
	packages=systemd,systemd-sysv,dbus,udev,iproute2,wireguard-tools,iputils-ping,procps,util-linux,libevdev2,libsystemd0,zlib1g,kmod,polkitd
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

	# Build and install the project for /usr, as a distribution package would.
	build=$cache/vm/build-$checkout
	mkdir -p "$build"
	if [ ! -x "$top/configure" ]; then
		(cd "$top" && autoreconf -fi >&2)
	fi
	if [ ! -f "$build/Makefile" ] || [ "$top/configure" -nt "$build/Makefile" ]; then
		(cd "$build" && "$top/configure" -q --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
			--with-systemdsystemunitdir=/lib/systemd/system >&2)
	fi
	make -s -C "$build" -j"$(nproc)" >&2

	root=$(mktemp -d "$cache/vm/root.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	tar -xf "$base" -C "$root"
	make -s -C "$build" install DESTDIR="$root" > /dev/null

	# Guest side of the tests.
	install -d "$root/usr/lib/autosleep-vm"
	cp -R "$here/guest/." "$root/usr/lib/autosleep-vm/"
	chmod +x "$root"/usr/lib/autosleep-vm/*.sh
	install -m 0755 "$build/tests/vm/uinput-tool" "$build/tests/vm/sandbox-probe" "$build/tests/vm/race-client" \
		"$build/tests/vm/bench-client" \
		"$root/usr/lib/autosleep-vm/"
	install -m 0644 "$here/guest/autosleep-vmtest.service" "$here/guest/autosleep-vmtest-hold.service" \
		"$root/etc/systemd/system/"
	install -d "$root/etc/systemd/system/sysinit.target.wants"
	ln -sf /etc/systemd/system/autosleep-vmtest-hold.service "$root/etc/systemd/system/sysinit.target.wants/"
	ln -sf /etc/systemd/system/autosleep-vmtest.service "$root/etc/systemd/system/multi-user.target.wants/"
	ln -sf /lib/systemd/system/autosleepd.service "$root/etc/systemd/system/multi-user.target.wants/"
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
	passwd_hash='*'
	sed -i "s|^root:[^:]*:|root:$passwd_hash:|" "$root/etc/shadow"

	rm -f "$out.tmp"
	mkfs.ext4 -q -F -L autosleep-root -d "$root" "$out.tmp" 1G >&2
	mv "$out.tmp" "$out"
	log "image: $out"
	echo "$out"
}

main "$@"
