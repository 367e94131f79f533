#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run tests through the kselftest runner, as kselftest CI does.  The runner's
# exit status does not say whether they passed; its KTAP does.  Its output
# goes through a pipe: the runner appends the tests' own output to
# /dev/stdout, which only keeps its order on a pipe.
# usage: kselftest-run.sh RUN_KSELFTEST_ARGS...
# kvmipi.kselftest_timeout=N on the kernel command line (the debug kernel's
# runs) overrides the per-test timeout of kvm/settings.
cd "$(dirname "$0")" || exit 1
out=$(mktemp "${TMPDIR:-/tmp}/kselftest.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
override=$(sed -n 's/.*kvmipi.kselftest_timeout=\([0-9]*\).*/\1/p' /proc/cmdline 2>/dev/null)
[ -n "$override" ] && set -- -o "$override" "$@"
./run_kselftest.sh "$@" 2>&1 | tee "$out"
grep -q '^not ok' "$out" && exit 1
grep -q '^ok ' "$out" || exit 1
grep -v '# SKIP' "$out" | grep -q '^ok ' || exit 4
exit 0
