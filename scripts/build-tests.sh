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
# tests built with the other kernel generation's fastpath rule, which must
# fail on their path checks (WRONG_RULE_TESTS below).
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
KVM=$KTREE/$KVM_REL
# The test bed's check that a path check can fail: these tests built once
# more against this tree, with the files of the series whose code differs
# under the other kernel generation's fastpath rule (scripts/patches.sh
# renders them into $KB/other-rule: lib/x86/ipi_oracle.c's rule) put in,
# and installed beside the real ones as kvm/TEST.other-rule.  This kernel
# must fail them on their path checks and only there (suite.sh,
# "@wrong-rule").  No series carries another rule's code: only this build.
WRONG_RULE_TESTS=(x2apic_fastpath_stat_test x2apic_fastpath_vm_state_test)

[ -d "$KOUT/usr/include/linux" ] || die "no kernel headers in $KOUT/usr/include: run 'make kernel' first"
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || die "static libc missing: apt-get install libc6-dev"

ours=() runner=() nonroot=()
for t in "$TOP"/selftests/kvm/x86/*.c; do
	t=${t##*/}
	grep -q "$ARCH_DIR/${t%.c}\$" "$KVM/$KVM_MAKEFILE" ||
		die "$t is not in $KVM/$KVM_MAKEFILE: run 'make render' (are the selftests patches in its series?)"
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

# build_variant NAME CHANGE REUSE TEST...: TESTs built once more, in a shadow
# of the tree whose KVM selftests directory the function CHANGE alters (it
# runs there), installed beside the real ones as kvm/TEST.NAME.  REUSE=1
# starts from a copy of the real build's objects, so that make rebuilds only
# the sources CHANGE replaced (a header change is not seen that way: 0).
build_variant() {
	local name=$1 change=$2 reuse=$3 t
	shift 3
	shadow_build "$KB/$name-tree" "$KB/$name-build" "$KB/$name-build.log" "$change" "$reuse" "$@" ||
		die "the $name tests did not build (log: $KB/$name-build.log)"
	for t; do
		cp "$KB/$name-build/$ARCH_DIR/$t" "$TESTS_OUT/kvm/$t.$name"
	done
}

# The WRONG_RULE_TESTS with the files of the series that differ under the
# other rule (scripts/patches.sh renders them into $KB/other-rule).
put_other_rule() {
	cp -r "$KB/other-rule/." .
}
[ -d "$KB/other-rule" ] || die "no $KB/other-rule: run 'make render' (scripts/patches.sh --render writes it)"
[ -n "$(ls -A "$KB/other-rule")" ] ||
	say "warning: no file of the series differs under the other fastpath rule: the *.other-rule tests are the tests themselves, and must fail"
build_variant other-rule put_other_rule 1 "${WRONG_RULE_TESTS[@]}"

POLL_IDLE_TESTS=()
for t in "${ours[@]}"; do
	t=${t%% *}
	[ "$t" = x2apic_hlt_wakeup_test ] || POLL_IDLE_TESTS+=("$t")
done
case " $PLATFORMS ${MUTANT_PLATFORMS:-} " in
*" bochs-svm "*) build_variant poll-idle poll_idle 0 "${POLL_IDLE_TESTS[@]}" ;;
esac

# Our tests through the kselftest runner, for the guest and PLATFORMS=host.
cp "$TOP/scripts/guest-kselftest.sh" "$TESTS_OUT/kselftest-run.sh"

{
	printf 'kvm/%s\n' "${CANARIES[@]}" "${ours[@]}"
	# with the other generation's rule they must fail on their path
	# checks (scripts/suite.sh, "@wrong-rule")
	printf 'kvm/%s.other-rule @wrong-rule\n' "${WRONG_RULE_TESTS[@]}"
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
