#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Reproducibly build a QEMU guest kernel from Debian's linux-source package,
# with (default) or without (--control) CONFIG_PM_USERSPACE_AUTOSLEEP, or
# without it but with the /sys/power/userspace_autosleep knob (--knob: our
# patch in knob/VERSION/, so one kernel serves both kinds of machine).
#
# The image is cached under a hash of everything that goes into it: the source
# package version, our patch series, the config fragments, this script and the
# compiler. The last line on stdout is the path of the bzImage; progress goes
# to stderr so callers can do  kernel=$(build-kernel.sh | tail -n1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=6.1
variant=autosleep
cache=${AUTOSLEEP_CACHE:-/var/cache/autosleep}
jobs=$(nproc)
config_only=0

usage() {
	cat <<EOF
Usage: $0 [--control|--knob] [--source 6.1|6.12] [--cache DIR] [-j N]

  --control      build the control kernel: same config, PM_USERSPACE_AUTOSLEEP unset
  --knob         build the knob kernel: PM_USERSPACE_AUTOSLEEP unset, plus the
                 patch series in knob/VERSION/ (/sys/power/userspace_autosleep)
  --source VER   build from linux-source-VER (default 6.1)
  --cache DIR    where sources, build trees and images are kept
                 (default \$AUTOSLEEP_CACHE or /var/cache/autosleep)
  -j N           parallel jobs (default: nproc)
  --config-only  stop after merging and checking the configuration

Prints the path of the bzImage as the last line of stdout.
EOF
}

while [ $# -gt 0 ]; do
	case "$1" in
	--control) variant=control ;;
	--knob) variant=knob ;;
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

pkg=linux-source-$version
tarball=/usr/src/$pkg.tar.xz
if [ ! -f "$tarball" ]; then
	log "installing $pkg"
	# A fresh machine may not have package lists yet.
	apt-get install -y -q "$pkg" >&2 || { apt-get update -q >&2 && apt-get install -y -q "$pkg" >&2; } ||
		die "cannot install $pkg; this build needs Debian's $pkg package"
fi
build_deps=(make gcc flex bison bc libelf-dev libssl-dev xz-utils cpio)
missing=()
for p in "${build_deps[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing build dependencies: ${missing[*]}"
	apt-get install -y -q "${missing[@]}" >&2 || { apt-get update -q >&2 && apt-get install -y -q "${missing[@]}" >&2; }
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
fragments=("$here/autosleep.config" "$here/vm.config")

# Bump when a change to this script changes what it builds.
recipe=1

# Everything that can change the image goes into the key.
key=$( {
	echo "$pkg $pkgver $variant recipe $recipe"
	gcc --version | head -n1
	cat "${fragments[@]}"
	for p in "${patches[@]}"; do basename "$p"; cat "$p"; done
} | sha256sum | cut -c1-16)
image_dir=$cache/images/$version-$variant-$key
if [ -f "$image_dir/bzImage" ]; then
	log "cached: $variant kernel from $pkg $pkgver ($key)"
	echo "$image_dir/bzImage"
	exit 0
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

# One build tree per source for both variants: they differ in one option, and
# kbuild's per-option dependency tracking then rebuilds only the few files
# that test it when we switch (a copied tree would rebuild everything, as its
# recorded command lines name the old path).
obj=$cache/build/$version-$series-$src_key
export KBUILD_BUILD_TIMESTAMP="$(dpkg-query -W -f='${Version}' "$pkg") (autosleep reproducible build)"
export KBUILD_BUILD_USER=autosleep KBUILD_BUILD_HOST=autosleep KBUILD_BUILD_VERSION=1
mkdir -p "$obj"

merged=$obj/autosleep-fragments.config
cat "${fragments[@]}" > "$merged"
if [ "$variant" != autosleep ]; then
	sed -i 's/^CONFIG_PM_USERSPACE_AUTOSLEEP=y$/# CONFIG_PM_USERSPACE_AUTOSLEEP is not set/' "$merged"
fi

log "configuring $variant kernel in $obj"
# merge_config is chatty about every value it overrides; keep that in a log.
if ! { make -s -C "$src" O="$obj" tinyconfig &&
	(cd "$src" && ./scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$merged") &&
	make -s -C "$src" O="$obj" olddefconfig; } > "$obj/config.log" 2>&1; then
	cat "$obj/config.log" >&2
	die "configuring the $variant kernel failed"
fi

# merge_config only warns; a fragment line that did not survive olddefconfig
# means a missing dependency, and a guest that silently lacks a feature.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$obj/.config" || { log "fragment line did not take: $line"; bad=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		if grep -q "^$opt=" "$obj/.config"; then log "fragment line did not take: $line"; bad=1; fi ;;
	esac
done < "$merged"
[ $bad -eq 0 ] || die "the merged configuration lacks options the fragments ask for"

want=y
[ "$variant" != autosleep ] && want=n
have=$(grep -q '^CONFIG_PM_USERSPACE_AUTOSLEEP=y' "$obj/.config" && echo y || echo n)
[ "$have" = "$want" ] || die "PM_USERSPACE_AUTOSLEEP is '$have' in the $variant config"

if [ $config_only -eq 1 ]; then
	log "configuration checked: every fragment line took ($obj/.config)"
	echo "$obj/.config"
	exit 0
fi

log "building $variant bzImage with $jobs jobs (log: $obj/build.log)"
start=$(date +%s)
if ! make -C "$src" O="$obj" -j"$jobs" bzImage > "$obj/build.log" 2>&1; then
	tail -n 40 "$obj/build.log" >&2
	die "kernel build failed"
fi
log "built in $(( $(date +%s) - start )) s"

mkdir -p "$image_dir.tmp"
cp "$obj/arch/x86/boot/bzImage" "$image_dir.tmp/bzImage"
cp "$obj/.config" "$image_dir.tmp/config"
echo "$pkg $pkgver $variant" > "$image_dir.tmp/source"
rm -rf "$image_dir"
mv "$image_dir.tmp" "$image_dir"
# Build trees of other sources or patch series only take space now; the
# other series' tree stays, so switching between them is not a full rebuild.
for old in "$cache"/build/"$version"-"$series"-*; do
	[ "$old" = "$obj" ] || rm -rf "$old"
done
echo "$image_dir/bzImage"
