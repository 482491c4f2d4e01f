#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The benchmark table (docs/benchmarks.md): the real autosleepd on a private
# dbus-daemon and a fixture sysfs on tmpfs. Runs as root.
#   --builddir DIR   a configured build tree (default: $AUTOSLEEP_BUILDDIR or
#                    build/bench, configured and built here if needed)
#   --smoke          a few iterations of everything: fails only if a benchmark
#                    breaks, never on the numbers (tests/run-all.sh runs this)
#   --daemon FILE    measure another autosleepd binary (an older build, say)
# Other arguments go to the benchmark program (--iterations N,
# --idle-seconds S, --trace-ops N). Needs strace and dbus-monitor for the
# per-operation counts (tests/deps.sh group bench); without them those rows
# say so.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
builddir=${AUTOSLEEP_BUILDDIR:-$top/build/bench}
args=()
daemon=
while [ $# -gt 0 ]; do
	case "$1" in
	--builddir) builddir=$2; shift ;;
	--daemon) daemon=$2; shift ;;
	-h|--help) sed -n '4,15p' "${BASH_SOURCE[0]}"; exit 0 ;;
	*) args+=("$1") ;;
	esac
	shift
done

if [ ! -x "$builddir/tests/bench/bench" ] || [ ! -x "$builddir/autosleepd" ]; then
	mkdir -p "$builddir"
	if [ ! -f "$builddir/Makefile" ]; then
		[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
		(cd "$builddir" && "$top/configure" -q)
	fi
	make -C "$builddir" -s -j"$(nproc)" autosleepd tests/bench/bench
fi

# The fixture, the bus socket and the lease records live on tmpfs, like /sys and /run.
tmp=$(mktemp -d "${BENCH_TMPDIR:-/dev/shm}/autosleep-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FIXTURE_DIR=$top/tests/unit UNITS_DIR=$top/units TEST_TMPDIR=$tmp
export AUTOSLEEPD=${daemon:-$builddir/autosleepd}

echo "# $(cd "$top" && git describe --always --dirty 2>/dev/null || echo unknown) on $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$builddir/tests/bench/bench" "${args[@]}"
