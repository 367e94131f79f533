#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build, statically linked against the patched tree's KVM selftests library:
# the upstream canaries and every test in selftests/kvm/x86_64/.
set -euo pipefail
. "$(dirname "$0")/common.sh"

CANARIES=(kvm_binary_stats_test x86_64/xapic_state_test)

[ -d "$KOUT/usr/include/linux" ] || die "no kernel headers in $KOUT/usr/include: run 'make kernel' first"
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || die "static libc missing: apt-get install libc6-dev"

mkdir -p "$TESTS_OUT"
make -s -C "$KTREE/tools/testing/selftests/kvm" -j"$JOBS" \
	-f Makefile -f "$TOP/selftests/kvm/extra.mk" \
	OUTPUT="$TESTS_OUT" KHDR_INCLUDES="-isystem $KOUT/usr/include" \
	LDFLAGS="-static -pthread -no-pie" \
	"${CANARIES[@]/#/$TESTS_OUT/}" ours

# The list the guest runs, in order: canaries first.
{
	printf '%s\n' "${CANARIES[@]}"
	for t in "$TOP"/selftests/kvm/x86_64/*.c; do
		t=${t##*/}
		case $t in
		*_bench.c) ;;	# programs, run by make bench
		*) echo "x86_64/${t%.c}" ;;
		esac
	done
} >"$TESTS_OUT/tests.list"
say "tests ready: $(tr '\n' ' ' <"$TESTS_OUT/tests.list")"
