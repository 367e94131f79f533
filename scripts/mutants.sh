#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove the suite's power: build the kernel with each historical fastpath
# mistake put back (mutants/*.patch, applied on top of the series), run the
# path-checking tests on bochs-vmx, where the fastpath is live, and report
# each mutant as caught (a test failed, naming the combinations) or missed.
# Restores the normal kernel at the end.  Writes $RESULTS/mutants.counts.
#
# DEBUG=1 runs mutants/debug/ instead, on the debug kernel: bugs that only
# its checkers (lockdep, sleep-in-atomic, KASAN) see.  Such a mutant is
# caught when the guest runs to its end and the splat check fails.  The
# fastpath mutants above do not depend on the kernel's debug options; plain
# make mutants covers them at a fraction of the time.
set -uo pipefail
. "$(dirname "$0")/common.sh"

MUTANT_TESTS="kvm/x2apic_fastpath_stat_test kvm/x2apic_ipi_matrix_test"
MUTANTS=("$TOP"/mutants/*.patch)
PLATFORM=bochs-vmx
top_results=$RESULTS
mutants_out=$BUILD/mutants
if [ -n "$DEBUG" ]; then
	say "DEBUG=1: debug-only mutants (mutants/debug/); the fastpath mutants run without DEBUG"
	MUTANT_TESTS="kvm/x2apic_fastpath_stat_test"
	MUTANTS=("$TOP"/mutants/debug/*.patch)
	mutants_out=$BUILD/mutants-debug
fi
mkdir -p "$top_results"

# is_caught RESULTS_DIR: did the run catch the mutant?
is_caught() {
	local rows=$1/results.tsv
	grep -qP '\tsuite-completed\tpass' "$rows" || return 1
	if [ -n "$DEBUG" ]; then
		# the guest survived to its end and its kernel log has a splat
		grep -qP '\tguest-kernel-clean\tfail' "$rows"
	else
		# the guest ran to the end cleanly and a test failed
		grep -qP '\tguest-kernel-clean\tpass' "$rows" &&
		grep -qP '^[^\t]+\tkvm/[^\t]+\tfail' "$rows"
	fi
}

caught=0 missed=0
for patch in "${MUTANTS[@]}"; do
	name=$(basename "$patch" .patch)
	dir=$mutants_out/$name
	mkdir -p "$dir"
	say "mutant $name: building"
	if ! EXTRA_PATCHES=$patch BZIMAGE=$dir/bzImage "$TOP/scripts/kernel.sh"; then
		echo "not ok - mutant $name: kernel did not build"
		missed=$((missed + 1))
		continue
	fi
	printf '%s\n' $MUTANT_TESTS >"$dir/tests.list"
	TESTS_LIST=$dir/tests.list INITRAMFS=$dir/initramfs.cpio "$TOP/scripts/initramfs.sh"
	BZIMAGE=$dir/bzImage INITRAMFS=$dir/initramfs.cpio TESTS_LIST=$dir/tests.list \
		RESULTS=$dir/results PLATFORMS=$PLATFORM "$TOP/scripts/run.sh" >"$dir/run.log" 2>&1
	if is_caught "$dir/results"; then
		caught=$((caught + 1))
		echo "ok - mutant $name: caught"
		if [ -n "$DEBUG" ]; then
			sed -n 's/^# guest kernel: //p' "$dir/results/$PLATFORM/ktap"
		else
			grep -h -o 'MISMATCH.*\|fastpath +[0-9]*, want.*' "$dir/results/$PLATFORM/console.log"
		fi | head -8 | sed 's/\r$//; s/^/#   /'
	else
		missed=$((missed + 1))
		echo "not ok - mutant $name: missed (see $dir/run.log)"
	fi
done

say "restoring the kernel without mutants"
"$TOP/scripts/kernel.sh" || missed=$((missed + 1))
echo "$caught $missed 0" >"$top_results/mutants.counts"
echo "mutants: $caught caught, $missed missed"
[ "$missed" -eq 0 ]
