#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The whole test suite, as CI runs it, on a fresh Debian 12 machine as root:
#   1. unit suite built with ASan+UBSan (make check), warnings are errors
#   2. unit suite under valgrind (make check), warnings are errors
#   3. the threaded suspender tests built with ThreadSanitizer
#   4. make distcheck
#   5. the benchmarks in smoke mode (tests/bench/run.sh --smoke): one test,
#      failed only if a benchmark breaks, never on its numbers
#   6. the Debian package (dpkg-buildpackage -us -uc -b), which lintian must
#      pass without an error or a warning
#   7. our kernel fragment merged into Debian's own kernel config
#      (linux-config-6.1), knob and compile-time: every line must survive
#   8. VM suite: the autosleep and control kernels, the packaged knob kernel
#      and Debian's stock kernel in QEMU TCG, autosleep installed from its
#      package
#   9. the newcomer test (tests/newcomer/run.sh): the README's "Install on a
#      laptop" blocks, as printed, in a fresh minimal Debian 12 root
# Ends with "N passed, N failed". Idempotent; installs what it needs.
#
#   --unit-only     skip the VM suite and the newcomer test
#   --newcomer-demo the newcomer test also runs the README's demo command in
#                   a fresh root
#   --distro-kernel also build and boot the knob kernel package made from
#                   Debian's own config, its modules trimmed to the guest's
#                   (about 40 more minutes on 2 cores)
#   --cycles N      suspend cycles per kernel in the VM suite (default 5)
#   --interleave A-B  the interleaving test's seeds (default 1-6, 100 steps
#                   each); the long run is --interleave 1-200 --interleave-steps 1000
#   --interleave-steps N  events per seed
set -uo pipefail

# All in a function: bash parses it whole before running, so editing this
# file while it runs cannot break the run.
main() {
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cycles=5
	vm=1
	newcomer_args=
	vm_args=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--unit-only) vm=0 ;;
		--distro-kernel) vm_args+=(--distro-kernel) ;;
		--newcomer-demo) newcomer_args=--demo ;;
		--cycles) cycles=$2; shift ;;
		--interleave) export INTERLEAVE_SEEDS=$2; shift ;;
		--interleave-steps) export INTERLEAVE_STEPS=$2; shift ;;
		-h|--help) sed -n '4,31p' "${BASH_SOURCE[0]}"; exit 0 ;;
		*) echo "run-all.sh: unknown argument '$1'" >&2; exit 2 ;;
		esac
		shift
	done

	. "$top/tests/deps.sh"
	install_deps build unit bench vm package lint || exit 1

	builddir=${AUTOSLEEP_BUILDDIR:-$top/build}
	logs=$builddir/logs
	mkdir -p "$logs"
	passed=0
	failed=0
	# What failed, named again just above the totals: CI shows only the end of the output.
	fails=()
	t_start=$(date +%s)

	note() { echo "=== $*"; }
	count() { passed=$((passed + $1)); failed=$((failed + $2)); }

	# Per-program results of an automake test run, from its test-suite.log.
	automake_counts() {
		local log=$1 p f
		p=$(sed -n 's/^# PASS: *\([0-9]*\)/\1/p' "$log" | head -n1)
		f=$(( $(sed -n 's/^# FAIL: *\([0-9]*\)/\1/p' "$log" | head -n1) + $(sed -n 's/^# ERROR: *\([0-9]*\)/\1/p' "$log" | head -n1) ))
		echo "${p:-0} ${f:-0}"
	}

	(cd "$top" && autoreconf -fi > "$logs/autoreconf.log" 2>&1) || { echo "autoreconf failed"; cat "$logs/autoreconf.log"; exit 1; }

	run_unit() {
		local name=$1 dir=$builddir/$1
		shift
		local -a conf=() make_args=()
		while [ $# -gt 0 ] && [ "$1" != -- ]; do conf+=("$1"); shift; done
		[ "${1:-}" = -- ] && shift
		make_args=("$@")
		local t0=$(date +%s)
		note "unit suite: $name"
		mkdir -p "$dir"
		if ! (cd "$dir" && "$top/configure" -q "${conf[@]}" > "$logs/$name-configure.log" 2>&1 && make -j"$(nproc)" > "$logs/$name-make.log" 2>&1); then
			echo "not ok - $name: build failed (see $logs/$name-make.log)"
			tail -n 30 "$logs/$name-make.log"
			count 0 1
			fails+=("$name: build")
			return
		fi
		rm -f "$dir/test-suite.log"
		make -C "$dir" -j"$(nproc)" check "${make_args[@]}" > "$logs/$name-check.log" 2>&1
		grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS):' "$logs/$name-check.log" | sed "s/^/  [$name] /"
		if [ -f "$dir/test-suite.log" ]; then
			read -r p f < <(automake_counts "$dir/test-suite.log")
			[ "$f" -gt 0 ] && sed -n '/^FAIL\|^ERROR/,$p' "$dir/test-suite.log" | head -n 80
			while read -r t; do fails+=("$name: $t"); done < <(sed -n 's/^\(FAIL\|ERROR\): *//p' "$logs/$name-check.log")
		else
			p=0 f=1
			tail -n 30 "$logs/$name-check.log"
			fails+=("$name: make check (no test-suite.log)")
		fi
		count "$p" "$f"
		echo "# $name suite took $(( $(date +%s) - t0 )) s"
	}

	run_unit asan --enable-sanitizers --enable-werror
	# --interleave is for the ASan build: valgrind runs its default seeds, distcheck two.
	run_unit valgrind --enable-werror -- INTERLEAVE_SEEDS= INTERLEAVE_STEPS= \
		LOG_COMPILER="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --track-fds=no"
	# Only the suspender has a thread of its own; TSan cannot share a build with ASan.
	run_unit tsan --enable-tsan --enable-werror -- TESTS=tests/unit/test-suspender

	note "make distcheck"
	if make -C "$builddir/valgrind" distcheck INTERLEAVE_SEEDS=1-2 INTERLEAVE_STEPS= > "$logs/distcheck.log" 2>&1; then
		echo "  [distcheck] PASS: $(grep -o 'autosleep-[0-9.]*\.tar\.xz' "$logs/distcheck.log" | tail -n1) archives ready for distribution"
		count 1 0
	else
		echo "  [distcheck] FAIL (see $logs/distcheck.log)"
		tail -n 40 "$logs/distcheck.log"
		count 0 1
		fails+=("make distcheck")
	fi
	note "benchmarks, smoke mode"
	if "$top/tests/bench/run.sh" --smoke --builddir "$builddir/valgrind" > "$logs/bench-smoke.log" 2>&1; then
		echo "  [bench] PASS: tests/bench/run.sh --smoke (numbers in $logs/bench-smoke.log)"
		count 1 0
	else
		echo "  [bench] FAIL (see $logs/bench-smoke.log)"
		tail -n 30 "$logs/bench-smoke.log"
		count 0 1
		fails+=("bench: tests/bench/run.sh --smoke")
	fi
	note "Debian package and lintian"
	if "$top/tests/build-deb.sh" --lintian > "$logs/package.log" 2>&1; then
		echo "  [package] PASS: dpkg-buildpackage -us -uc -b: $(basename "$(tail -n1 "$logs/package.log")"); lintian: no errors, no warnings"
		count 1 0
	else
		echo "  [package] FAIL (see $logs/package.log)"
		tail -n 30 "$logs/package.log"
		count 0 1
		fails+=("package: build-deb.sh --lintian")
	fi
	note "our kernel fragment in Debian's own kernel config"
	for v in "" --compile-time; do
		if "$top/kernel-patches/build-kernel.sh" --deb $v --config-only > "$logs/kconfig-debian$v.log" 2>&1; then
			echo "  [kernel-config] PASS: build-kernel.sh --deb ${v:+$v }--config-only: every fragment line survived in Debian's config"
			count 1 0
		else
			echo "  [kernel-config] FAIL: build-kernel.sh --deb ${v:+$v }--config-only"
			tail -n 20 "$logs/kconfig-debian$v.log"
			count 0 1
			fails+=("kernel-config: build-kernel.sh --deb ${v:+$v }--config-only")
		fi
	done
	t_unit=$(( $(date +%s) - t_start ))

	if [ $vm -eq 1 ]; then
		note "VM suite ($cycles cycles per kernel)"
		t_vm=$(date +%s)
		counts=$logs/vm-counts
		: > "$counts"
		if ! "$top/tests/vm/run-vm-suite.sh" --cycles "$cycles" --counts "$counts" --log-dir "$logs" "${vm_args[@]}" |
			tee "$logs/vm-suite.out"; then
			[ -s "$counts" ] || echo "0 1" > "$counts"
		fi
		while read -r p f; do count "$p" "$f"; done < "$counts"
		while read -r t; do fails+=("vm: $t"); done < <(grep -E '^not ok' "$logs/vm-suite.out")
		# A failed count without a "not ok" line of its own still gets named.
		[ "$failed" -gt "${#fails[@]}" ] && fails+=("vm: see $logs/vm-suite.out")
		echo "# VM suite took $(( $(date +%s) - t_vm )) s"

		# After the VM suite: it takes the knob kernel package the suite built.
		note "newcomer: the README's install in a fresh Debian 12 root"
		t_nc=$(date +%s)
		"$top/tests/newcomer/run.sh" $newcomer_args > "$logs/newcomer.out" 2>&1
		sed 's/^/  [newcomer] /' "$logs/newcomer.out"
		if read -r p f < <(tail -n1 "$logs/newcomer.out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p') &&
			[ -n "$p" ]; then
			count "$p" "$f"
		else
			count 0 1
			fails+=("newcomer: no final count (see $logs/newcomer.out)")
		fi
		while read -r t; do fails+=("newcomer: $t"); done < <(grep -E '^not ok' "$logs/newcomer.out")
		echo "# newcomer test took $(( $(date +%s) - t_nc )) s"
	fi

	echo "# unit suites and distcheck took $t_unit s, everything $(( $(date +%s) - t_start )) s"
	for t in "${fails[@]:0:20}"; do echo "# failed: $t"; done
	[ "${#fails[@]}" -gt 20 ] && echo "# failed: ... and $(( ${#fails[@]} - 20 )) more"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

main "$@"
