#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Reproducibly build a kernel from Debian's linux-source package.
#
# Without --deb: a QEMU guest bzImage (tinyconfig plus vm.config, everything
# built in) with CONFIG_PM_USERSPACE_AUTOSLEEP (default), without it
# (--control), or without it but with the /sys/power/userspace_autosleep knob
# (--knob: our patch in knob/VERSION/, so one kernel serves both kinds of
# machine).
#
# With --deb: an installable linux-image package (make bindeb-pkg) from a full
# base config, by default Debian's own (linux-config-VER), with the knob
# (default) or with the option fixed at build time (--compile-time). This is
# the kernel for a real machine.
#
# The result is cached under a hash of everything that goes into it: the
# source package version, our patch series, the base config, the fragments,
# the module list, this script's recipe and the compiler. The last line on
# stdout is the path of the bzImage (with --deb, of the linux-image .deb;
# with --config-only, of the merged .config); progress goes to stderr so
# callers can do  kernel=$(build-kernel.sh | tail -n1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=6.1
variant=
cache=${AUTOSLEEP_CACHE:-/var/cache/autosleep}
jobs=$(nproc)
config_only=0
deb=0
base_config=
lsmod_file=

usage() {
	cat <<EOF
Usage: $0 [--control|--knob] [--source VER] [--cache DIR] [-j N] [--config-only]
       $0 --deb [--compile-time] [--base-config debian|vm|FILE] [--localmodconfig LSMOD]
          [--source VER] [--cache DIR] [-j N] [--config-only]

  QEMU guest kernels (a bzImage, everything built in):
  (default)      PM_USERSPACE_AUTOSLEEP=y
  --control      the same config with PM_USERSPACE_AUTOSLEEP unset
  --knob         PM_USERSPACE_AUTOSLEEP unset, plus the patch series in
                 knob/VERSION/ (/sys/power/userspace_autosleep)

  Kernel packages for a real machine (make bindeb-pkg):
  --deb          linux-image-<release>-autosleep: the knob kernel, which
                 behaves like Debian's until autosleepd turns the knob on
  --compile-time with --deb: PM_USERSPACE_AUTOSLEEP=y and no knob patch, for a
                 machine that always runs autosleepd (-autosleep-static)
  --base-config B  with --deb: what our fragment is merged into: debian (the
                 default: Debian's own config, from linux-config-VER), vm (the
                 tests' VM config with loadable modules), or a FILE such as
                 /boot/config-\$(uname -r)
  --localmodconfig LSMOD  with --deb: build only the modules listed in LSMOD,
                 the output of lsmod on the target machine

  --source VER   build from linux-source-VER (default 6.1)
  --cache DIR    where sources, build trees and images are kept
                 (default \$AUTOSLEEP_CACHE or /var/cache/autosleep)
  -j N           parallel jobs (default: nproc)
  --config-only  stop after merging and checking the configuration

Prints the path of the bzImage, the .deb or (--config-only) the merged
.config as the last line of stdout.
EOF
}

while [ $# -gt 0 ]; do
	case "$1" in
	--control) variant=control ;;
	--knob) variant=knob ;;
	--compile-time) variant=autosleep ;;
	--deb) deb=1 ;;
	--base-config) base_config=${2:?--base-config needs an argument}; shift ;;
	--localmodconfig) lsmod_file=${2:?--localmodconfig needs a file}; shift ;;
	--source) version=$2; shift ;;
	--cache) cache=$2; shift ;;
	-j) jobs=$2; shift ;;
	--config-only) config_only=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "build-kernel.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

log() { echo "build-kernel: $*" >&2; }
die() { echo "build-kernel: error: $*" >&2; exit 1; }

# install_packages: only what is missing (tests/deps.sh, shipped in the same tree).
. "$here/../tests/deps.sh"

if [ $deb -eq 1 ]; then
	[ -n "$variant" ] || variant=knob
	[ "$variant" != control ] || die "--control is a QEMU test kernel; a package is --deb (knob) or --deb --compile-time"
	[ -n "$base_config" ] || base_config=debian
else
	[ -z "$base_config" ] || die "--base-config needs --deb"
	[ -z "$lsmod_file" ] || die "--localmodconfig needs --deb"
	[ -n "$variant" ] || variant=autosleep
fi
if [ -n "$lsmod_file" ]; then
	[ -f "$lsmod_file" ] && [ -r "$lsmod_file" ] || die "--localmodconfig: '$lsmod_file' is not a readable file (save lsmod's output first)"
	lsmod_file=$(realpath "$lsmod_file")
fi

pkg=linux-source-$version
tarball=/usr/src/$pkg.tar.xz
if [ ! -f "$tarball" ]; then
	install_packages "$pkg" || die "cannot install $pkg; this build needs Debian's $pkg package"
fi
build_deps=(make gcc flex bison bc libelf-dev libssl-dev xz-utils cpio)
# bindeb-pkg runs dpkg-buildpackage under fakeroot; its control file names rsync and kmod.
[ $deb -eq 1 ] && build_deps+=(dpkg-dev fakeroot rsync kmod)
install_packages "${build_deps[@]}" || die "cannot install the build dependencies: ${build_deps[*]}"

# The base config of a package build, as a file. "vm" is built below from
# tinyconfig, like the guest kernels.
base_file=
base_name=tiny
if [ $deb -eq 1 ]; then
	case "$base_config" in
	debian)
		base_name=debian
		install_packages "linux-config-$version" ||
			die "cannot install linux-config-$version (Debian's kernel configs); give --base-config FILE instead"
		base_file=/usr/src/linux-config-$version/config.amd64_none_amd64.xz
		[ -f "$base_file" ] || die "linux-config-$version has no $base_file"
		;;
	vm) base_name=vm ;;
	*)
		base_name=custom
		[ -f "$base_config" ] && [ -r "$base_config" ] || die "--base-config: '$base_config' is not a readable file"
		base_file=$(realpath "$base_config")
		;;
	esac
	if [ -n "$base_file" ]; then
		# A config that does not look like one is an error here, not a
		# tinyconfig kernel that boots nothing.
		read_base() { case "$base_file" in *.xz) xzcat "$base_file" ;; *.gz) zcat "$base_file" ;; *) cat "$base_file" ;; esac; }
		grep -q "^CONFIG_[A-Z0-9_]*=" < <(read_base) ||
			die "--base-config: '$base_config' has no CONFIG_ lines; is it a kernel .config?"
	fi
fi

pkgver=$(dpkg-query -W -f='${Version}' "$pkg")
mapfile -t patches < <(find "$here/patches" -name '*.patch' 2>/dev/null | LC_ALL=C sort)
# The knob series is rebased per source version (git format-patch against
# each Debian tree); it comes after the common series.
series=base
if [ "$variant" = knob ]; then
	series=knob
	mapfile -t knob < <(find "$here/knob/$version" -name '*.patch' 2>/dev/null | LC_ALL=C sort)
	[ ${#knob[@]} -gt 0 ] || die "no knob patches for $version in $here/knob/$version"
	patches+=("${knob[@]}")
fi
# Later fragments win; autosleep.config comes last, as it is what we promise.
case "$base_name" in
tiny) fragments=("$here/vm.config" "$here/autosleep.config") ;;
vm) fragments=("$here/vm.config" "$here/vm-modules.config" "$here/autosleep.config") ;;
*) fragments=("$here/debian.config" "$here/autosleep.config") ;;
esac

# Bump when a change to this script changes what it builds.
recipe=3

# Everything that can change the result goes into the key.
key=$( {
	echo "$pkg $pkgver $variant deb=$deb base=$base_name recipe $recipe"
	gcc --version | head -n1
	[ -z "$base_file" ] || read_base
	cat "${fragments[@]}"
	[ -z "$lsmod_file" ] || awk 'NR > 1 { print $1 }' "$lsmod_file" | LC_ALL=C sort
	for p in "${patches[@]}"; do basename "$p"; cat "$p"; done
} | sha256sum | cut -c1-16)
kind=$variant
[ $deb -eq 1 ] && kind=deb-$variant-$base_name
image_dir=$cache/images/$version-$kind-$key
if [ $config_only -eq 0 ]; then
	result=$image_dir/bzImage
	[ $deb -eq 1 ] && result=$(ls "$image_dir"/linux-image-*.deb 2>/dev/null | grep -v -- '-dbg_' | head -n1 || true)
	if [ -n "$result" ] && [ -f "$result" ]; then
		log "cached: $kind kernel from $pkg $pkgver ($key)"
		echo "$result"
		exit 0
	fi
fi

mkdir -p "$cache"
exec 9>"$cache/.build-kernel.lock"
flock 9

# The patched source tree depends only on the package and the series.
src_key=$( { echo "$pkg $pkgver"; for p in "${patches[@]}"; do basename "$p"; cat "$p"; done; } |
	sha256sum | cut -c1-16)
src=$cache/src/$version-$src_key
if [ ! -f "$src/.autosleep-unpacked" ]; then
	log "unpacking $tarball"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	for p in "${patches[@]}"; do
		log "applying $(basename "$p")"
		patch -d "$src" -p1 --forward --quiet < "$p" || die "patch $(basename "$p") does not apply to $pkg $pkgver"
	done
	touch "$src/.autosleep-unpacked"
fi

# Both effects we rely on went upstream in 6.0: the Kconfig option and the
# removal of CONFIG_ANDROID from random.c and WireGuard.
grep -q '^config PM_USERSPACE_AUTOSLEEP' "$src/kernel/power/Kconfig" ||
	die "$pkg $pkgver has no CONFIG_PM_USERSPACE_AUTOSLEEP; Linux 6.0 or newer is needed (Debian 12 ships linux-source-6.1)"
# The knob series replaces those tests with pm_userspace_autosleep_enabled().
test_for='CONFIG_PM_USERSPACE_AUTOSLEEP'
[ "$series" = knob ] && test_for='pm_userspace_autosleep_enabled()'
for f in drivers/char/random.c drivers/net/wireguard/device.c; do
	grep -qF "$test_for" "$src/$f" ||
		die "$f in $pkg does not test $test_for; Linux 6.0 or newer (and, for --knob, the knob series) is needed"
	if grep -q 'CONFIG_ANDROID)' "$src/$f"; then
		die "$f in $pkg still tests CONFIG_ANDROID; Linux 6.0 or newer is needed"
	fi
done
if grep -q '^config ANDROID$' "$src/drivers/android/Kconfig" 2>/dev/null; then
	die "$pkg still has CONFIG_ANDROID; Linux 6.0 or newer is needed"
fi

# One build tree per source and base for all variants: they differ in one
# option, and kbuild's per-option dependency tracking then rebuilds only the
# few files that test it when we switch (a copied tree would rebuild
# everything, as its recorded command lines name the old path).
obj=$cache/build/$version-$series-$src_key
[ "$base_name" = tiny ] || obj=$cache/build/$version-$series-$base_name-$src_key
# kbuild stamps uname -v and the cpio of the built-in initramfs with this
# time. gen_initramfs.sh reads it with date -d, so it must be a date: one it
# cannot parse means "now" in the cpio, and a different vmlinuz every build.
# The source tarball's mtime is the package's, the same on every machine.
stamp=$(stat -c %Y "$tarball")
export KBUILD_BUILD_TIMESTAMP="$(LC_ALL=C date -u -d "@$stamp" '+%a %b %e %H:%M:%S UTC %Y')"
export KBUILD_BUILD_USER=autosleep KBUILD_BUILD_HOST=autosleep KBUILD_BUILD_VERSION=1
mkdir -p "$obj"

# The fragments in one file; for the knob and the control the option is unset.
merged=$obj/autosleep-fragments.config
cat "${fragments[@]}" > "$merged"
if [ "$variant" != autosleep ]; then
	sed -i 's/^CONFIG_PM_USERSPACE_AUTOSLEEP=y$/# CONFIG_PM_USERSPACE_AUTOSLEEP is not set/' "$merged"
fi
# A package of the compile-time variant must not share its name with the knob's.
if [ $deb -eq 1 ] && [ "$variant" = autosleep ]; then
	sed -i 's/^CONFIG_LOCALVERSION="\(.*\)"$/CONFIG_LOCALVERSION="\1-static"/' "$merged"
fi

log "configuring $kind kernel in $obj"
# merge_config is chatty about every value it overrides; keep that in a log.
if ! {
	case "$base_name" in
	tiny|vm) make -s -C "$src" O="$obj" tinyconfig ;;
	*) read_base > "$obj/.config" && make -s -C "$src" O="$obj" olddefconfig ;;
	esac &&
	if [ -n "$lsmod_file" ]; then
		make -s -C "$src" O="$obj" LSMOD="$lsmod_file" localmodconfig < /dev/null
	fi &&
	(cd "$src" && ./scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$merged") &&
	make -s -C "$src" O="$obj" olddefconfig; } > "$obj/config.log" 2>&1; then
	cat "$obj/config.log" >&2
	die "configuring the $kind kernel failed"
fi

# merge_config only warns; a fragment line that did not survive olddefconfig
# means a missing dependency or a clash with the base config, and a kernel
# that silently lacks a feature. The last fragment to name an option wins.
declare -A want_line=()
order=()
while IFS= read -r line; do
	opt=
	case "$line" in
	CONFIG_*=*) opt=${line%%=*} ;;
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *} ;;
	esac
	[ -n "$opt" ] || continue
	[ -n "${want_line[$opt]+x}" ] || order+=("$opt")
	want_line[$opt]=$line
done < "$merged"
bad=0
for opt in "${order[@]}"; do
	line=${want_line[$opt]}
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$obj/.config" || { log "fragment line did not take: $line (now: $(grep -m1 "^$opt=\|^# $opt is not set" "$obj/.config" || echo unset))"; bad=1; } ;;
	*)
		if grep -q "^$opt=" "$obj/.config"; then log "fragment line did not take: $line"; bad=1; fi ;;
	esac
done
[ $bad -eq 0 ] || die "the merged configuration lacks options the fragments ask for"

want=y
[ "$variant" != autosleep ] && want=n
have=$(grep -q '^CONFIG_PM_USERSPACE_AUTOSLEEP=y' "$obj/.config" && echo y || echo n)
[ "$have" = "$want" ] || die "PM_USERSPACE_AUTOSLEEP is '$have' in the $kind config"

if [ $config_only -eq 1 ]; then
	log "configuration checked: every fragment line took ($obj/.config)"
	echo "$obj/.config"
	exit 0
fi

log "building $kind kernel with $jobs jobs (log: $obj/build.log)"
# kbuild does not track KBUILD_BUILD_TIMESTAMP as a dependency of the
# built-in initramfs; a tree built by an older recipe would keep its cpio.
# It is a few hundred bytes to make again.
rm -f "$obj/usr/initramfs_data.cpio"
start=$(date +%s)
if [ $deb -eq 1 ]; then
	# bindeb-pkg writes its packages next to the build tree, where every
	# build tree's land (one build at a time: the lock above); what an
	# interrupted build left there goes first.
	out_parent=$(dirname "$obj")
	rm -rf "$obj.debs"
	rm -f "$out_parent"/linux-*.deb "$out_parent"/linux-autosleep_* "$out_parent"/linux-upstream_*
	# The package version is fixed (not kbuild's build counter), the
	# archives' timestamps too, so equal inputs give equal packages.
	if ! SOURCE_DATE_EPOCH=$stamp make -C "$src" O="$obj" -j"$jobs" KDEB_PKGVERSION="$pkgver+autosleep$recipe" \
			KDEB_SOURCENAME=linux-autosleep DPKG_FLAGS=-d bindeb-pkg > "$obj/build.log" 2>&1; then
		tail -n 40 "$obj/build.log" >&2
		die "kernel package build failed"
	fi
	# The release is known once the build wrote include/config/auto.conf.
	krel=$(cat "$obj/include/config/kernel.release")
	mkdir -p "$obj.debs"
	mv "$out_parent"/linux-image-"$krel"_*.deb "$obj.debs/" || die "bindeb-pkg made no linux-image-${krel}_*.deb"
	mv "$out_parent"/linux-headers-"$krel"_*.deb "$obj.debs/" 2>/dev/null || true
	# Not ours to ship: the C library headers and the .changes of the run.
	rm -f "$out_parent"/linux-*.deb "$out_parent"/linux-autosleep_* "$out_parent"/linux-upstream_*
else
	if ! make -C "$src" O="$obj" -j"$jobs" bzImage > "$obj/build.log" 2>&1; then
		tail -n 40 "$obj/build.log" >&2
		die "kernel build failed"
	fi
fi
log "built in $(( $(date +%s) - start )) s"

rm -rf "$image_dir.tmp"
mkdir -p "$image_dir.tmp"
cp "$obj/arch/x86/boot/bzImage" "$image_dir.tmp/bzImage"
cp "$obj/.config" "$image_dir.tmp/config"
echo "$pkg $pkgver $kind" > "$image_dir.tmp/source"
if [ $deb -eq 1 ]; then
	mv "$obj.debs"/*.deb "$image_dir.tmp/"
	rmdir "$obj.debs"
fi
rm -rf "$image_dir"
mv "$image_dir.tmp" "$image_dir"
# Build trees of other sources or patch series only take space now; the
# other series' tree stays, so switching between them is not a full rebuild.
if [ "$base_name" = tiny ]; then
	for old in "$cache"/build/"$version"-"$series"-*; do
		case "$old" in "$obj"|*-vm-*|*-debian-*|*-custom-*) ;; *) rm -rf "$old" ;; esac
	done
else
	for old in "$cache"/build/"$version"-"$series"-"$base_name"-*; do
		[ "$old" = "$obj" ] || rm -rf "$old"
	done
fi
if [ $deb -eq 1 ]; then
	ls "$image_dir"/linux-image-*.deb | head -n1
else
	echo "$image_dir/bzImage"
fi
