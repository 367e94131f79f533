#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make mutation SEED=S N=N: automatic mutants of KVM's interrupt delivery
# code, on $KERNEL.  scripts/mutation-gen.py draws N changes per file of
# $COVERAGE_FILES with seed S, only on lines that make coverage's run
# executed (a condition negated, a statement dropped, a comparison's bound
# or sense, && and ||, a constant's neighbour, true and false), each on the
# first platform of $MUTATION_PLATFORMS whose run executed its line.
# scripts/mutants.sh builds them (KVM's modules alone) and boots them,
# several per boot, each running that platform's whole list (once: not the
# runs as a user without root, nor the kselftest runner's) up to its first
# failure.  Each mutant is then
#   killed     the guest ran to its end cleanly and a test failed
#   crashed    the guest did not (a splat, a hang, a lost END): noticed,
#              but by no test's verdict
#   survived   every test passed: a missing test, or an equivalent mutant
#              (docs/mutation.md says which, and why)
#   stillborn  it did not build (left out of the rate)
#   not run    a run stopped before its boot ended (left out of the rate)
# Writes $BUILD/mutation/$KERNEL/seed-S/report.tsv (NAME VERDICT PLATFORM
# WHERE WHAT FIRST-FAILED-TEST) and prints the counts and the kill rate,
# (killed + crashed) / (built and run).  Not part of make check.
# "scripts/mutation.sh --report" (KERNEL=, SEED= as make's) writes the
# report of a run that was stopped midway, from the mutants that ran.
set -uo pipefail
. "$(dirname "$0")/common.sh"

SEED=${SEED:-1}
N=${N:-10}
case $SEED$N in *[!0-9]* | '') die "SEED=$SEED N=$N: numbers" ;; esac
MUTATION_PLATFORMS=${MUTATION_PLATFORMS:-"qemu-svm bochs-vmx bochs-svm"}
cov=$BUILD/coverage/$KERNEL
out=$BUILD/mutation/$KERNEL/seed-$SEED
need_cmd python3 python3
if [ "${1:-}" != --report ]; then
	[ -f "$cov/all.info" ] || die "no coverage of KVM on $KERNEL ($cov/all.info): run make coverage first"
	[ "$(cat "$cov/sources.md5" 2>/dev/null)" = "$(coverage_sources_md5)" ] ||
		die "$KERNEL's KVM sources changed since make coverage: its line counts are stale; run make coverage again"
	rm -rf "$out"
	mkdir -p "$out/patches"
	python3 "$TOP/scripts/mutation-gen.py" --tree "$KTREE" --cov "$cov" --files "$COVERAGE_FILES" \
		--seed "$SEED" --n "$N" --prefer "$MUTATION_PLATFORMS" --scope "$TOP/scripts/mutation-scope" \
		--out "$out/patches" | tee "$out/drawn.txt"
	echo "$N" >"$out/n"
	say "$KERNEL: $(find "$out/patches" -name '*.patch' | wc -l) mutants, seed $SEED: building and booting (log: $out/mutants.log)"
	# the list once: not again as a user without root, nor through the kselftest
	# runner (the same tests, the same KVM code)
	grep -v -e ' @nonroot$' -e '^kselftest-run' "$TESTS_LIST" >"$out/tests.list"
	MUTANTS_DIR=$out/patches MUTANTS_OUT=$out/runs MUTANT_TESTS_LIST=$out/tests.list RESULTS=$out \
		MUTANT= "$TOP/scripts/mutants.sh" >"$out/mutants.log" 2>&1
fi
[ -d "$out/patches" ] || die "no mutation run of $KERNEL with seed $SEED in $out"
read -r N <"$out/n" || die "$out/n missing: not a run of make mutation"

# verdict DIR PLATFORM: the mutant's class from its run there
verdict() {
	local rows=$1/results/$2/rows.tsv
	if grep -q 'kernel did not build' "$1/verdict" 2>/dev/null; then
		echo stillborn
	elif [ ! -f "$rows" ]; then
		echo "not run"
	elif grep -qP '\tsuite-completed\tpass' "$rows" 2>/dev/null &&
	     grep -qP '\tguest-kernel-clean\t(pass|skip)' "$rows"; then
		if grep -qP '^[^\t]+\tkvm/[^\t]+\tfail' "$rows"; then
			echo killed
		else
			echo survived
		fi
	else
		echo crashed
	fi
}

: >"$out/report.tsv"
for patch in "$out"/patches/*.patch; do
	[ -e "$patch" ] || continue
	name=$(basename "$patch" .patch)
	p=$(sed -n 's/^Platforms: //p' "$patch" | head -1)
	v=$(verdict "$out/runs/$name" "$p")
	first=$(awk -F'\t' '$3 == "fail" && $2 ~ /^kvm\// { print $2; exit }' \
		"$out/runs/$name/results/$p/rows.tsv" 2>/dev/null)
	where=$(sed -n 's/^Mutant: \([^ ]*\) \([a-z]*\): .*/\1\t\2/p' "$patch")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$v" "$p" "$where" \
		"$(sed -n 's/^Mutant: [^:]*:[0-9]* [a-z]*: //p' "$patch")" "${first:--}" >>"$out/report.tsv"
done
awk -F'\t' -v k="$KERNEL" -v seed="$SEED" -v n="$N" '
	{ c[$2]++; t++ }
	END {
		built = t - c["stillborn"] - c["not run"]
		printf "mutation %s seed %d, N=%d per file: %d mutants, %d built and run: %d killed, %d crashed, %d survived, %d stillborn, %d not run; kill rate %.0f%%\n",
			k, seed, n, t, built, c["killed"], c["crashed"], c["survived"], c["stillborn"], c["not run"],
			built ? 100 * (c["killed"] + c["crashed"]) / built : 0
	}' "$out/report.tsv" | tee "$out/summary.txt"
echo "survivors (a missing test or an equivalent mutant):"
awk -F'\t' '$2 == "survived" { printf "  %s %s (%s): %s\n", $4, $5, $3, $6 }' "$out/report.tsv"
echo "(per mutant: $out/report.tsv; the runs: $out/runs/)"
