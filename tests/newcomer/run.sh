#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README, as a newcomer meets it: a minimal Debian 12 root (mmdebstrap
# --variant=apt: no compiler, no build tools, nothing this project
# installed), the tree's tracked files copied in, and every sh block of the
# README's "Install on a laptop" section run there as printed, in one shell,
# in order. The blocks are read from README.md itself, so the two cannot
# drift apart. Each block has a marker comment, <!-- newcomer: NAME -->:
# after the block, tests/newcomer/checks.sh's after_NAME checks what the
# README says it did. Two markers change how a block runs, and say so:
#   kernel  runs with --config-only added after --deb: the dependency install
#           and Debian's config merged with our fragment, not the hour-long
#           build; $kdeb is then the suite's own knob kernel package
#           (build-kernel.sh --deb --base-config vm, cached by the VM suite)
#   skip: REASON  not run, and the reason is printed
#   vm: NAME  needs systemd as PID 1 (systemctl --now, removal of a running
#           daemon), so it runs in the VM instead: tests/vm/guest/readme.sh
# A block without a marker runs as printed with no checks after it.
#
# With --demo it then runs the README's first command, the demo, in a
# second fresh root of the same kind, the host's kernel cache bind-mounted
# so the kernel is not built again.
#
#   run.sh [--tree DIR] [--demo] [--no-install]
#     --tree DIR     test DIR's README.md and files instead of this tree's
#                    (a checkout of an older commit, to show the test fails there)
#     --demo         also run the demo in a fresh root
#     --no-install   skip the "Install on a laptop" part (with --demo)
#
# TAP lines, then "N passed, N failed" as the last line.
set -uo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	top=$(cd "$here/../.." && pwd)
	tree=$top
	demo=0
	install=1
	while [ $# -gt 0 ]; do
		case "$1" in
		--tree) tree=$(cd "$2" && pwd) || exit 2; shift ;;
		--demo) demo=1 ;;
		--no-install) install=0 ;;
		-h|--help) sed -n '3,29p' "${BASH_SOURCE[0]}"; exit 0 ;;
		*) echo "newcomer: unknown argument '$1'" >&2; exit 2 ;;
		esac
		shift
	done
	cache=${AUTOSLEEP_CACHE:-/var/cache/autosleep}
	passed=0
	failed=0
	log() { echo "# newcomer: $*"; }
	tap() {
		local line
		while IFS= read -r line; do
			case "$line" in
			"ok - "*) passed=$((passed + 1)) ;;
			"not ok - "*) failed=$((failed + 1)) ;;
			esac
			printf '%s\n' "$line"
		done
	}

	. "$top/tests/deps.sh"
	install_packages mmdebstrap git python3 >&2 || exit 1

	# The root a newcomer starts from, cached by what makes it.
	suite=bookworm
	variant=apt
	sources=/etc/apt/sources.list.d/debian.sources
	[ -f "$sources" ] || sources=/etc/apt/sources.list
	key=$( { echo "$suite $variant recipe 1"; cat "$sources"; } | sha256sum | cut -c1-16)
	base=$cache/newcomer/base-$key.tar
	mkdir -p "$cache/newcomer"
	exec 9>"$cache/newcomer/.lock"
	flock 9
	if [ ! -f "$base" ]; then
		log "making a minimal Debian $suite root (mmdebstrap --variant=$variant)"
		rm -f "$cache"/newcomer/base-*.tar
		mmdebstrap --quiet --format=tar --variant=$variant "$suite" "$base.tmp" - < "$sources" >&2 ||
			{ echo "not ok - newcomer: mmdebstrap"; echo "0 passed, 1 failed"; exit 1; }
		mv "$base.tmp" "$base"
	fi

	roots=()
	cleanup() {
		local r m
		for r in "${roots[@]}"; do
			for m in var/cache/autosleep dev/pts dev sys proc; do umount "$r/$m" 2> /dev/null || true; done
			for m in var/cache/autosleep dev/pts dev sys proc; do
				mountpoint -q "$r/$m" && { echo "# newcomer: $r/$m is still mounted, leaving $r"; continue 2; }
			done
			rm -rf --one-file-system "$r"
		done
	}
	trap cleanup EXIT

	# fresh_root: a new root from the base, the machine's own apt sources
	# and settings for reaching its archive, and the tree's tracked files
	# in /root/autosleep. Sets $root to its path (not in a subshell, so that
	# cleanup knows it).
	fresh_root() {
		local r
		r=$(mktemp -d "$cache/newcomer/root.XXXXXX")
		roots+=("$r")
		root=$r
		tar -xf "$base" -C "$r"
		rm -f "$r/etc/apt/sources.list" "$r"/etc/apt/sources.list.d/*
		cp "$sources" "$r$sources"
		grep -l '^Acquire::' /etc/apt/apt.conf.d/* 2> /dev/null | xargs -r cp -t "$r/etc/apt/apt.conf.d/"
		# The newcomer answers yes to apt's question, as the README expects.
		echo 'APT::Get::Assume-Yes "true";' > "$r/etc/apt/apt.conf.d/90newcomer-answers-yes"
		cp -L /etc/resolv.conf "$r/etc/resolv.conf"
		for m in proc sys dev dev/pts; do mount --bind "/$m" "$r/$m"; done
		mkdir -p "$r/root/autosleep" "$r/root/newcomer"
		(cd "$tree" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh |
			tar --null -cf - -T -) | tar -xf - -C "$r/root/autosleep"
	}
	in_root() {
		local r=$1
		shift
		chroot "$r" env -i HOME=/root TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
	}

	if [ $install = 1 ]; then
		t0=$(date +%s)
		# The suite's knob kernel package stands in for step 2's build.
		kdeb=$("$top/kernel-patches/build-kernel.sh" --deb --base-config vm 2> "$cache/newcomer/kernel.log" | tail -n1)
		if [ ! -f "$kdeb" ]; then
			echo "not ok - newcomer: the suite's knob kernel package (build-kernel.sh --deb --base-config vm)"
			tail -n 20 "$cache/newcomer/kernel.log"
			failed=$((failed + 1))
		else
			fresh_root
			cp "$kdeb" "$root/root/newcomer/"
			cp "$here/checks.sh" "$root/root/newcomer/"
			# The README's blocks, as printed, each followed by its checks.
			if ! python3 "$here/readme-blocks.py" "$tree/README.md" "/root/newcomer/${kdeb##*/}" \
				> "$root/root/newcomer/readme.sh"
			then
				echo "not ok - newcomer: read the README's blocks"
				failed=$((failed + 1))
			else
				mkdir -p "$root/var/cache/autosleep"
				mount --bind "$cache" "$root/var/cache/autosleep"
				log "running README's 'Install on a laptop' in a fresh $suite root ($root)"
				in_root "$root" bash /root/newcomer/readme.sh > "$cache/newcomer/readme.log" 2>&1
				rc=$?
				tap < <(grep -E '^(ok|not ok) - |^# ' "$cache/newcomer/readme.log")
				if [ $rc != 0 ]; then
					failed=$((failed + 1))
					echo "not ok - newcomer: the README's blocks stopped (exit $rc); their output's end:"
					grep -vE '^(ok|not ok) - |^# ' "$cache/newcomer/readme.log" | tail -n 25 | sed 's/^/#   /'
				fi
			fi
			log "the README's install took $(( $(date +%s) - t0 )) s"
		fi
	fi

	if [ $demo = 1 ]; then
		t0=$(date +%s)
		fresh_root
		mkdir -p "$root/var/cache/autosleep"
		mount --bind "$cache" "$root/var/cache/autosleep"
		cmd=$(sed -n '/^```$/,/^```$/{/^bash tests\/vm\/demo.sh/{s/ *#.*//;p;q}}' "$tree/README.md")
		log "running the README's demo command in a fresh root: $cmd"
		in_root "$root" bash -c "cd /root/autosleep && $cmd" > "$cache/newcomer/demo.log" 2>&1
		rc=$?
		summary=$(grep -E '^# \[demo\] [0-9]+ passed, 0 failed' "$cache/newcomer/demo.log" | tail -n1)
		if [ -n "$cmd" ] && [ $rc = 0 ] && [ -n "$summary" ]; then
			echo "ok - the README's demo ran to its end in a fresh root: ${summary#\# }"
			passed=$((passed + 1))
		else
			echo "not ok - the README's demo in a fresh root ('$cmd', exit $rc); its output's end:"
			tail -n 25 "$cache/newcomer/demo.log" | sed 's/^/#   /'
			failed=$((failed + 1))
		fi
		log "the demo took $(( $(date +%s) - t0 )) s"
	fi
	echo "$passed passed, $failed failed"
	[ $failed -eq 0 ]
}

main "$@"
