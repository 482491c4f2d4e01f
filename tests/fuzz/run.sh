#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The long fuzz run: every libFuzzer target in tests/fuzz for N seconds
# (default 60), starting from the seed corpus in tests/fuzz/corpus/<target>/.
# make check only replays that corpus; this looks for new inputs.
#
#   tests/fuzz/run.sh [--seconds N] [--build DIR] [TARGET...]
#
# DIR (default: build-fuzz in the source tree) is configured with
# --enable-fuzzing and built if its fuzzers are missing; this needs clang and
# libFuzzer (tests/deps.sh group fuzz). New interesting inputs go to a
# scratch corpus under DIR, crashes to DIR/fuzz-artifacts/<target>/; to keep
# a crash as a regression test, copy it into tests/fuzz/corpus/<target>/.
# Exits non-zero if any target crashed.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
seconds=60
build=$src/build-fuzz
targets=()
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) seconds=$2; shift 2 ;;
	--seconds=*) seconds=${1#*=}; shift ;;
	--build) build=$2; shift 2 ;;
	--build=*) build=${1#*=}; shift ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "unknown option $1" >&2; exit 2 ;;
	*) targets+=("$1"); shift ;;
	esac
done
[ ${#targets[@]} -gt 0 ] || targets=(config sysfs)
case $seconds in ''|*[!0-9]*) echo "--seconds takes a whole number" >&2; exit 2 ;; esac

# Longest input tried: configs are a few lines, sysfs numbers a few bytes.
declare -A max_len=([config]=8192 [sysfs]=128)

need_build=0
for t in "${targets[@]}"; do
	[ -x "$build/tests/fuzz/fuzz-$t" ] || need_build=1
done
if [ $need_build = 1 ]; then
	[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)
	mkdir -p "$build"
	(cd "$build" && { [ -f Makefile ] || "$src/configure" -q --enable-fuzzing; } && make -j2 fuzz)
fi

failed=0
for t in "${targets[@]}"; do
	bin=$build/tests/fuzz/fuzz-$t
	seeds=$src/tests/fuzz/corpus/$t
	work=$build/fuzz-corpus/$t
	art=$build/fuzz-artifacts/$t
	log=$build/fuzz-$t.log
	[ -x "$bin" ] || { echo "no $bin; configure with --enable-fuzzing" >&2; exit 1; }
	mkdir -p "$work" "$art"
	echo "=== fuzz-$t: ${seconds}s from $(ls "$seeds" | wc -l) seeds (log: $log)"
	rc=0
	"$bin" -max_total_time="$seconds" -max_len="${max_len[$t]:-4096}" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art/" "$work" "$seeds" > "$log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
	crashes=$(find "$art" -type f | wc -l)
	echo "fuzz-$t: ${runs:-?} runs, ${speed:-?} exec/s, ${cov:-cov: ?}, exit $rc, $crashes artifact(s) in $art"
	if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
		failed=1
		grep -E 'ERROR|property violated|SUMMARY|Test unit written' "$log" | head -20 || true
	fi
done
exit $failed
