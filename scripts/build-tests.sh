#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and install, with the patched tree's own kselftest machinery
# ("make -C tools/testing/selftests TARGETS=kvm install"), every KVM selftest,
# ours included (they arrive through the series' selftests patches), statically
# linked so that they run from an initramfs.  Then write the run list the
# guest follows: the upstream canaries, our tests, and our tests once more
# through the kselftest runner (run_kselftest.sh), but for the long stress
# test and the HLT wake-up test, which run once; and the stat and VM-state
# tests under the other kernel generation's fastpath policy, which must fail
# on their path checks.
# Benchmarks are not run.
set -euo pipefail
. "$(dirname "$0")/common.sh"
unset DEBUG	# ours, not the selftests' (tools/ Makefiles read DEBUG=1 as "-O0")

CANARIES=(kvm_binary_stats_test xapic_state_test)
# the two-CPU platforms' list: the test that needs two host CPUs, then tests
# whose timing must hold where vCPUs really run at once (the stress test
# with one vCPU per CPU).  The matrix passes there too, but takes 4 minutes
# of Bochs at two CPUs (docs/platforms.md): it stays out of make check's
# budget; TESTS_2CPU_MORE="x2apic_ipi_matrix_test" adds it.
TESTS_2CPU=(x2apic_ipi_smp_test x2apic_hlt_wakeup_test "x2apic_ipi_stress_test -v 2"
	    ${TESTS_2CPU_MORE:-})
KVM=$KTREE/tools/testing/selftests/kvm

[ -d "$KOUT/usr/include/linux" ] || die "no kernel headers in $KOUT/usr/include: run 'make kernel' first"
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || die "static libc missing: apt-get install libc6-dev"

ours=() runner=() nonroot=()
for t in "$TOP"/selftests/kvm/x86/*.c; do
	t=${t##*/}
	grep -q "$ARCH_DIR/${t%.c}\$" "$KVM/$KVM_MAKEFILE" ||
		die "$t is not in $KVM/$KVM_MAKEFILE: run 'make patches' (are the selftests patches in patches/$KERNEL/series?)"
	case $t in
	*_bench.c) ;;
	# 8 vCPUs on one CPU: the test bed's choice (the default is one per
	# host CPU); as non-root too, with fewer operations per epoch
	*_stress_test.c) ours+=("${t%.c} -v 8") nonroot+=("${t%.c} -o 10") ;;
	# its verdict on a platform with a known defect needs the run's
	# expected-failure list (scripts/expected-failures), which the
	# kselftest runner does not read
	*_hlt_wakeup_test.c) ours+=("${t%.c}") nonroot+=("${t%.c}") ;;
	# -d: once more with the fastpath switched off, compared; the switch
	# is host-wide, so the tests leave it alone unless asked (the kselftest
	# runner does not ask), and the test bed's kernel is ours to change
	*_ipi_matrix_test.c | *_icr_hostile_test.c)
		ours+=("${t%.c} -d") runner+=("${t%.c}") nonroot+=("${t%.c} -d") ;;
	*) ours+=("${t%.c}") runner+=("${t%.c}") nonroot+=("${t%.c}") ;;
	esac
done

kvm_selftests_make INSTALL_PATH="$TESTS_OUT" install >"$KB/kselftest-build.log" 2>&1 ||
	{ tail -30 "$KB/kselftest-build.log" >&2; die "KVM selftests build failed (log: $KB/kselftest-build.log)"; }

# Our tests through the kselftest runner, for the guest and PLATFORMS=host.
cp "$TOP/scripts/guest-kselftest.sh" "$TESTS_OUT/kselftest-run.sh"

{
	printf 'kvm/%s\n' "${CANARIES[@]}" "${ours[@]}"
	# under the other generation's policy they must fail on their path
	# checks (scripts/suite.sh, "@wrong-policy=")
	printf 'kvm/%s @wrong-policy=%s\n' x2apic_fastpath_stat_test "$WRONG_POLICY" \
		x2apic_fastpath_vm_state_test "$WRONG_POLICY"
	# as a user without root: what needs root (the switch, debugfs) skips
	printf 'kvm/%s @nonroot\n' "${nonroot[@]}"
	printf 'kselftest-run.sh'
	printf ' -t kvm:%s' "${runner[@]}"
	echo
} >"$TESTS_OUT/tests.list"
say "tests ready: $(tr '\n' ' ' <"$TESTS_OUT/tests.list")"

# The two-CPU platforms (bochs-*-2cpu), TESTS_2CPU above.
printf 'kvm/%s\n' "${TESTS_2CPU[@]}" >"$TESTS_OUT/tests-2cpu.list"
say "two-CPU tests ready: $(tr '\n' ' ' <"$TESTS_OUT/tests-2cpu.list")"
