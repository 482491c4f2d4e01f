#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the autosleep Debian package from this tree the way a user does
# (dpkg-buildpackage -us -uc -b), in a copy, since the build writes into its
# tree and its parent. The unit suites run the tests, so the package build
# skips them: the nocheck build profile drops their build dependencies
# (DEB_BUILD_PROFILES) and the option skips make check (DEB_BUILD_OPTIONS),
# so this installs only what the package itself is built with. The result is cached under a hash
# of the tree's files. Prints the path of the .deb as the last line.
#
#   --lintian   also run lintian on the .changes (and so on every .deb);
#               an error or a warning fails
#   --version-suffix SUFFIX
#               build version VERSION+SUFFIX of the same tree (a changelog
#               entry added in the copy), for the VM suite's upgrade test
set -euo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cache=${AUTOSLEEP_CACHE:-/var/cache/autosleep}
	lint=0
	suffix=
	while [ $# -gt 0 ]; do
		case "$1" in
		--lintian) lint=1 ;;
		--version-suffix)
			suffix=${2:-}
			[[ "$suffix" =~ ^[A-Za-z0-9.~+]+$ ]] ||
				{ echo "build-deb.sh: --version-suffix takes letters, digits and . ~ +, not '$suffix'" >&2; exit 2; }
			shift ;;
		*) echo "build-deb.sh: unknown argument '$1'" >&2; exit 2 ;;
		esac
		shift
	done
	log() { echo "build-deb: $*" >&2; }

	. "$top/tests/deps.sh"
	groups=(build package)
	[ $lint -eq 0 ] || groups+=(lint)
	install_deps "${groups[@]}" >&2 || exit 1

	# The tree's own files: git's list in a checkout (tracked, and new files
	# not ignored), otherwise everything but the test suite's build tree.
	list=$(mktemp)
	trap 'rm -f "$list"' EXIT
	if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
		git -C "$top" ls-files -z --cached --others --exclude-standard > "$list"
	else
		(cd "$top" && find . \( -path ./build -o -path ./.git \) -prune -o -type f -print0) > "$list"
	fi
	# Files deleted in the work tree but still in git's index are left out.
	key=$( (echo "suffix $suffix"; cd "$top" && xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\n" "$f" && cat "$f"; done' sh < "$list") |
		sha256sum | cut -c1-16)
	out=$cache/deb/autosleep-$key

	mkdir -p "$cache/deb"
	exec 8>"$cache/deb/.lock"
	flock 8
	if [ ! -f "$out/.done" ]; then
		log "building the package from $top (log: $out/build.log)"
		rm -rf "$out"
		mkdir -p "$out/src"
		(cd "$top" && xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh < "$list" |
			tar --null -cf - -T -) | tar -xf - -C "$out/src"
		if [ -n "$suffix" ]; then
			local version
			version=$(dpkg-parsechangelog -l "$out/src/debian/changelog" -S Version)+$suffix
			{
				printf 'autosleep (%s) unstable; urgency=medium\n\n' "$version"
				printf '  * The same tree, built again as a newer version (tests/build-deb.sh).\n\n'
				printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l "$out/src/debian/changelog" -S Maintainer)" \
					"$(date -u -R -d "@$(( $(dpkg-parsechangelog -l "$out/src/debian/changelog" -S Timestamp) + 86400 ))")"
				cat "$out/src/debian/changelog"
			} > "$out/src/debian/changelog.new"
			mv "$out/src/debian/changelog.new" "$out/src/debian/changelog"
		fi
		if ! (cd "$out/src" && DEB_BUILD_PROFILES=nocheck DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
			> "$out/build.log" 2>&1; then
			tail -n 40 "$out/build.log" >&2
			log "error: dpkg-buildpackage failed"
			exit 1
		fi
		rm -rf "$out/src"
		touch "$out/.done"
		# Packages of older trees only take space; a day's grace for
		# another checkout that shares the cache.
		find "$cache/deb" -mindepth 1 -maxdepth 1 -name 'autosleep-*' ! -path "$out" -mtime +1 \
			-exec rm -rf {} + 2>/dev/null || true
	else
		log "cached: $out"
	fi

	deb=$(ls "$out"/autosleep_*.deb)
	if [ $lint -eq 1 ]; then
		# lintian warns that it runs as root; that line is not about the package.
		if ! lintian --fail-on error,warning "$out"/autosleep_*.changes > "$out/lintian.log" 2>&1; then
			grep -v 'running with root privileges' "$out/lintian.log" >&2
			log "error: lintian reports errors or warnings"
			exit 1
		fi
		log "lintian: $(grep -vc 'running with root privileges' "$out/lintian.log") lines (errors and warnings fail):"
		grep -v 'running with root privileges' "$out/lintian.log" | sed 's/^/build-deb:   /' >&2 || true
	fi
	echo "$deb"
}

main "$@"
