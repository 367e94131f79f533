#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The two-CPU reproducer (docs/platforms.md, "Why qemu-svm has one CPU"):
# the kernel without our series (PRISTINE=1), one small test, on emulators
# with two CPUs.  The test is the stress test with two vCPUs: every IPI is
# announced to its receiver and the host counts what each vCPU handled, so a
# duplicate or a late IPI shows as "took N IPIs ... unsent" and a lost one
# as a receiver that gives up waiting.  Without the stat the path checks
# SKIP: only delivery is judged.
#
# usage: smp-repro.sh [PLATFORM...]    (default: qemu-svm bochs-vmx)
#   SMP_REPRO_ARGS   the test's arguments (default "-v 2")
# Needs the tests built (make tests).  Results per kernel and platform under
# $BUILD/results-smp/<kernel>/<platform>/ (console.log), one line each on
# stdout.  Bochs with two CPUs is slow: allow about an hour per kernel.
set -euo pipefail
export PRISTINE=1 BZIMAGE=
. "$(dirname "$0")/common.sh"

platforms=${*:-qemu-svm bochs-vmx}
args=${SMP_REPRO_ARGS:--v 2}
out=$BUILD/results-smp/$KERNEL
list=$out/tests.list

[ -x "$TESTS_OUT/kvm/x2apic_ipi_stress_test" ] ||
	die "x2apic_ipi_stress_test not built for $KERNEL: run 'make tests KERNEL=$KERNEL'"
"$TOP/scripts/kernel.sh"
mkdir -p "$out"
echo "kvm/x2apic_ipi_stress_test $args" >"$list"
TESTS_LIST=$list INITRAMFS=$out/initramfs.cpio "$TOP/scripts/initramfs.sh"

for p in $platforms; do
	case $p in
	qemu-svm) export QEMU_SVM_SMP=2 ;;
	bochs-*) export BOCHS_CPUS=2 PLATFORM_LIMIT=${PLATFORM_LIMIT:-5400} ;;
	*) die "smp-repro.sh: $p is not an emulated platform (qemu-svm, bochs-vmx, bochs-svm)" ;;
	esac
	INITRAMFS=$out/initramfs.cpio "$TOP/scripts/platform.sh" "$p" "$out/$p" || true
	log=$out/$p/console.log
	printf '%s %s pristine, 2 CPUs: %s; %s; %ss wall\n' "$KERNEL" "$p" \
		"$(grep -ao 'CAPS .*' "$log" | head -1 | sed 's/CAPS //')" \
		"$(grep -ao '# Totals: .*' "$log" | head -1 || echo 'no totals (see the log)')" \
		"$(cat "$out/$p/wall_seconds" 2>/dev/null || echo '?')"
	grep -aoE '(not ok .*|# epoch .*unsent|# .*gave up.*|TIMEOUT.*)' "$log" | sed 's/^/  /' || true
done
