#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove the suite's power: build the kernel with each historical fastpath
# mistake put back (mutants/*.patch, applied on top of the series), run the
# path-checking tests on bochs-vmx, where the fastpath is live, and report
# each mutant as caught (a test failed, naming the combinations) or missed.
# Restores the normal kernel at the end.  Writes $RESULTS/mutants.counts.
set -uo pipefail
. "$(dirname "$0")/common.sh"

MUTANT_TESTS="kvm/x2apic_fastpath_stat_test kvm/x2apic_ipi_matrix_test"
PLATFORM=bochs-vmx
top_results=$RESULTS
mkdir -p "$top_results"

caught=0 missed=0
for patch in "$TOP"/mutants/*.patch; do
	name=$(basename "$patch" .patch)
	dir=$BUILD/mutants/$name
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
	rows=$dir/results/results.tsv
	# Caught: the guest ran to the end cleanly and a test failed.
	if grep -qP '\tsuite-completed\tpass' "$rows" &&
	   grep -qP '\tguest-kernel-clean\tpass' "$rows" &&
	   grep -qP '^[^\t]+\tkvm/[^\t]+\tfail' "$rows"; then
		caught=$((caught + 1))
		echo "ok - mutant $name: caught"
		grep -h -o 'MISMATCH.*\|fastpath +[0-9]*, want.*' "$dir/results/$PLATFORM/console.log" |
			head -8 | sed 's/\r$//; s/^/#   /'
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
