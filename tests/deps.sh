# SPDX-License-Identifier: LGPL-2.1-or-later
# Install what the project needs from Debian's archive, once: apt-get update
# only runs when something is missing, so a second run does nothing.

deps_build=(build-essential autoconf automake pkg-config libsystemd-dev libevdev-dev zlib1g-dev xz-utils)
deps_unit=(libcmocka-dev valgrind dbus-daemon systemd)
# strace and dbus-monitor for the per-operation counts of tests/bench/run.sh
deps_bench=(strace dbus-bin)
# clang's libFuzzer runtime, for ./configure --enable-fuzzing and tests/fuzz/run.sh
deps_fuzz=(clang libclang-rt-14-dev)
# libxml2-utils: xmllint checks the SVG of the soak report the guest sends out
# dpkg-dev, fakeroot and rsync: make bindeb-pkg; linux-config-6.1: Debian's own
# kernel configs, which build-kernel.sh --deb starts from
deps_vm=(qemu-system-x86 mmdebstrap systemd e2fsprogs python3 linux-source-6.1 flex bison bc libelf-dev libssl-dev
	cpio kmod libxml2-utils dpkg-dev fakeroot rsync linux-config-6.1)
# tests/build-deb.sh: the package the VM image installs; lintian's verdict on
# it only with --lintian (the suite), not for the demo
deps_package=(debhelper dpkg-dev git)
deps_lint=(lintian)

# install_packages PACKAGE...: those not installed yet, after one apt-get
# update; a fresh machine may have no package lists. Messages go to stderr,
# so a script whose last line of output is its result can call it.
install_packages() {
	local -a missing=()
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "=== installing: ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q > /dev/null || { echo "apt-get update failed" >&2; return 1; }
	apt-get install -y -q --no-install-recommends "${missing[@]}" > /dev/null || {
		echo "apt-get install ${missing[*]} failed" >&2
		return 1
	}
}

# install_deps GROUP...: the packages of the groups above.
install_deps() {
	local -a want=()
	local g
	for g in "$@"; do
		eval "want+=(\"\${deps_$g[@]}\")"
	done
	install_packages "${want[@]}"
}
