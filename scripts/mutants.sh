#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove the suite's power: build KVM's modules with each historical fastpath
# mistake put back (mutants/*.patch, applied on top of the series; a patch
# of KVM's sources alone keeps the series' kernel, kernel.sh), run the
# path-checking tests where the fastpath is live, and report each mutant as
# caught (a test failed, naming the combinations) or missed.  A mutant of
# vendor code names its platform on a "Platforms: " line (bochs-vmx or
# bochs-svm); the shared mutants (x86.c, lapic.c) alternate between the two,
# in file order, so that each vendor's fastpath catches some of them within
# make check's time budget; MUTANT_PLATFORMS="bochs-vmx bochs-svm" boots
# each shared one on both (one build), about 8 more minutes per kernel.  A
# "Cmdline: " line adds to the test kernel's command line; a "Tests: " line
# runs those tests, separated by ";" and with their arguments, instead of
# MUTANT_TESTS (a race that only the two-CPU test can see, in the one kind
# of its cases built for it).  A mutant is caught only when it is caught on every
# platform it runs on.  The guest stops at the first test that fails
# (kvmipi.stop_on_failure): one failure catches the mutant.
# Restores the normal kernel at the end.  Writes $RESULTS/mutants.counts.
#
# mutants/<kernel>/must-pass/ holds the opposite: KVM changed where no
# clause and no fastpath rule fixes the outcome, or made more architectural
# (a deviation the suite names, fixed).  Such a mutant must pass: the guest
# runs to its end with a clean log and no test fails; a failure there is a
# test too strict.
#
# APICV=1 BOCHS=/path/to/bochs runs mutants/apicv/ instead: posted-interrupt
# mistakes, on the opt-in APICv platforms (a Bochs with the fixes of
# docs/reports/bochs-*.md).
# DEBUG=1 runs mutants/$KERNEL/debug/ instead, on the debug kernel: bugs that only
# its checkers (lockdep, sleep-in-atomic, KASAN) see.  Such a mutant is
# caught when the guest runs to its end and its kernel log has the report
# its patch names on an "Expect: " line (the platform may print others).  The
# fastpath mutants above do not depend on the kernel's debug options; plain
# make mutants covers them at a fraction of the time.
set -uo pipefail
. "$(dirname "$0")/common.sh"

# the matrix with -d: once more with the fastpath off, compared
MUTANT_TESTS=(kvm/x2apic_fastpath_stat_test kvm/x2apic_fastpath_vm_state_test
	      kvm/x2apic_fastpath_nested_test "kvm/x2apic_ipi_matrix_test -d")
# MUTANT=GLOB runs only the mutants whose names match (e.g. MUTANT='svm-*')
# MUTANTS_DIR=DIR: the mutants there instead (make mutation's, generated),
# built and booted under MUTANTS_OUT=DIR, each running MUTANT_TESTS_LIST=FILE
# where set (a platform's whole list) rather than MUTANT_TESTS.
MUTANTS=("${MUTANTS_DIR:-$TOP/mutants/$KERNEL}"/${MUTANT:-*}.patch)
for p in "$TOP"/mutants/$KERNEL/must-pass/${MUTANT:-*}.patch; do
	[ -z "${MUTANTS_DIR:-}" ] || break
	[ ! -e "$p" ] || MUTANTS+=("$p")
done
[ -e "${MUTANTS[0]}" ] || MUTANTS=("${MUTANTS[@]:1}")
ALTERNATE=(bochs-vmx bochs-svm)
top_results=$RESULTS
mutants_out=${MUTANTS_OUT:-$KB/mutants}
if [ -n "${APICV:-}" ]; then
	# Posted-interrupt mistakes: only a platform with APICv runs that code,
	# and only a Bochs with the fixes of docs/reports/bochs-*.md gives one.
	[ -n "${BOCHS:-}" ] ||
		die "APICV=1 runs mutants/$KERNEL/apicv/ on bochs-apicv: set BOCHS=/path/to/bochs, one with the fixes of docs/reports/bochs-*.md"
	say "APICV=1: posted-interrupt mutants (mutants/$KERNEL/apicv/) under $BOCHS"
	MUTANTS=("$TOP"/mutants/$KERNEL/apicv/${MUTANT:-*}.patch)
	if [ ! -e "${MUTANTS[0]}" ]; then
		say "no posted-interrupt mutants for $KERNEL yet (mutants/$KERNEL/apicv/)"
		mkdir -p "$RESULTS"
		echo "0 0 0" >"$RESULTS/mutants.counts"
		exit 0
	fi
	mutants_out=$KB/mutants-apicv
fi
if [ -n "$DEBUG" ]; then
	say "DEBUG=1: debug-only mutants (mutants/$KERNEL/debug/); the fastpath mutants run without DEBUG"
	MUTANT_TESTS=(kvm/x2apic_fastpath_stat_test)
	MUTANTS=("$TOP"/mutants/$KERNEL/debug/${MUTANT:-*}.patch)
	mutants_out=$KB/mutants-debug
fi
mkdir -p "$top_results"

# is_caught RESULTS_DIR PATCH PLATFORM: did the run on PLATFORM catch it?
is_caught() {
	local rows=$1/$3/rows.tsv
	grep -qP '\tsuite-completed\tpass' "$rows" 2>/dev/null || return 1
	if [ -n "$DEBUG" ]; then
		# the guest survived to its end, the splat check failed and
		# the kernel log has the mutant's own report
		grep -qP '\tguest-kernel-clean\tfail' "$rows" &&
		grep -aqF -- "$(expected_report "$2")" "$1/$3/console.log"
	else
		# the guest ran to the end cleanly and a test failed
		grep -qP '\tguest-kernel-clean\tpass' "$rows" &&
		grep -qP '^[^\t]+\tkvm/[^\t]+\tfail' "$rows"
	fi
}

# must_pass PATCH: is it a mutant the suite must pass?
must_pass() {
	[[ $1 == */must-pass/* ]]
}

# passes RESULTS_DIR PLATFORM: the guest ran to its end cleanly and no
# test failed
passes() {
	local rows=$1/$2/rows.tsv
	grep -qP '\tsuite-completed\tpass' "$rows" 2>/dev/null &&
	grep -qP '\tguest-kernel-clean\tpass' "$rows" &&
	! grep -qP '^[^\t]+\tkvm/[^\t]+\tfail' "$rows"
}

# The report a debug mutant must provoke: its patch's "Expect: " line.
expected_report() {
	sed -n 's/^Expect: //p' "$1" | head -1
}

# header LINE PATCH: the value of the patch's "LINE: " header, if any
header() {
	sed -n "/^diff \|^--- /q; s/^$1: //p" "$2" | head -1
}

# Each mutant's platforms, "PATCH<TAB>PLATFORMS", in file order: its own
# "Platforms: " line, or for a shared one the next of the alternation.
assign_platforms() {
	local patch platforms shared=0
	for patch in "${MUTANTS[@]}"; do
		platforms=$(header Platforms "$patch")
		if [ -z "$platforms" ]; then
			platforms=${MUTANT_PLATFORMS:-${ALTERNATE[shared % 2]}}
			shared=$((shared + 1))
		fi
		printf '%s\t%s\n' "$patch" "$platforms"
	done
}

# The mutants in the order they are built, with their platforms: those that
# boot on a two-CPU platform or on bochs-svm first, the longest boots
# (docs/testbed.md), so that the last boot to end is a short one; the
# others in file order.
ordered_mutants() {
	local patch platforms
	assign_platforms | while IFS=$'\t' read -r patch platforms; do
		case " $platforms " in
		*-2cpu\ *) echo "0 $patch $platforms" ;;
		*" bochs-svm "*) echo "1 $patch $platforms" ;;
		*) echo "2 $patch $platforms" ;;
		esac
	done | sort -s -k1,1n | cut -d' ' -f2-
}

# boot_mutant PATCH DIR PLATFORMS: in the background, run the mutant's
# tests on its platforms, each once an emulator slot is free (run.sh), and
# write its verdict, the "ok" / "not ok" line and the tests' own words, to
# DIR/verdict.
boot_mutant() {
	local patch=$1 dir=$2 platforms=$3 name p escaped=
	name=$(basename "$patch" .patch)
	say "mutant $name: booting on $platforms"
	BZIMAGE=$dir/bzImage INITRAMFS=$dir/initramfs.cpio TESTS_LIST=$dir/tests.list \
		EXTRA_CMDLINE="kvmipi.stop_on_failure $(header Cmdline "$patch")" RESULTS=$dir/results \
		PLATFORMS="$platforms" "$TOP/scripts/run.sh" >"$dir/run.log" 2>&1
	write_verdict "$patch" "$dir" "$platforms"
	say "mutant $name: done"
}

# write_verdict PATCH DIR PLATFORMS: the mutant's verdict from its results
# on each platform, the "ok" / "not ok" line and the tests' own words, to
# DIR/verdict
write_verdict() {
	local patch=$1 dir=$2 platforms=$3 name p escaped=
	name=$(basename "$patch" .patch)
	for p in $platforms; do
		if must_pass "$patch"; then
			passes "$dir/results" "$p" || escaped="$escaped $p"
		else
			is_caught "$dir/results" "$patch" "$p" || escaped="$escaped $p"
		fi
	done
	{
		if must_pass "$patch" && [ -z "$escaped" ]; then
			echo "ok - must-pass mutant $name: passed on $platforms"
		elif must_pass "$patch"; then
			echo "not ok - must-pass mutant $name: failed on$escaped (see $dir/run.log)"
		elif [ -z "$escaped" ]; then
			echo "ok - mutant $name: caught on $platforms"
		else
			echo "not ok - mutant $name: missed on$escaped (see $dir/run.log)"
		fi
		for p in $platforms; do
			echo "# $p: $(cat "$dir/results/$p/wall_seconds" 2>/dev/null) s wall$(cat "$dir/results/$p/shared" 2>/dev/null)"
			if [ -n "$DEBUG" ]; then
				grep -a -m1 -A1 -F -- "$(expected_report "$patch")" "$dir/results/$p/console.log"
			else
				# the tests' own words: which write, what path, what delivery
				sed -n 's/\r$//; s/^.*@@ # //p' "$dir/results/$p/console.log" |
					grep -E 'MISMATCH|fastpath \+[0-9]+, want|fastpath \+[0-9]+ over|handled|did not stop|still in KVM_RUN|slowest IPI|median IPI|not completed within|taken [0-9]+ and [0-9]+ times'
			fi 2>/dev/null | head -4 | sed "s/\r$//; s/^/#   $p: /"
		done
	} >"$dir/verdict.tmp"
	mv "$dir/verdict.tmp" "$dir/verdict"
}

# MUTANTS_PER_BOOT=N (N > 1): up to N mutants share a boot, one KVM after
# the other (docs/testbed.md, "Several KVMs in one boot"): those whose
# kernel is the series' own (their patches touch KVM alone) and whose
# "Cmdline: " holds KVM's module parameters only, on the same platform.
# The guest loads each one's modules in turn, with those parameters, and
# runs its list (guest-init.sh, /kvm/sets); the console is cut at each
# "@@ SET NAME" into that mutant's console.log, the boot's own lines
# before the first set heading each, and judged as a boot of its own.  A
# mutant whose part did not reach its end with a clean log keeps that
# verdict (a crash is its own), and the mutants after it in that boot go
# to a new one.  1: a boot per mutant.  By default 4, which gave the same
# verdicts as a boot per mutant on both kernels; 1 under DEBUG=1 and
# APICV=1, whose mutants have not been judged that way yet.
PER_BOOT=${MUTANTS_PER_BOOT:-4}
[ -n "${MUTANTS_PER_BOOT:-}" ] || { [ -z "$DEBUG" ] && [ -z "${APICV:-}" ]; } || PER_BOOT=1
case $PER_BOOT in
'' | *[!0-9]* | 0) die "MUTANTS_PER_BOOT=$PER_BOOT: a number of mutants, 1 or more" ;;
esac

# shareable PATCH DIR: can the mutant share a boot?  It touches KVM's
# sources alone (arch/x86/kvm/, virt/kvm/: all of it in the modules the
# guest reloads), its kernel is the one the series built, its command line
# KVM's parameters alone.
shareable() {
	local w
	[ "$PER_BOOT" -gt 1 ] && cmp -s "$2/bzImage" "$BZIMAGE" && kvm_only "$1" || return 1
	for w in $(header Cmdline "$1"); do
		[[ $w =~ ^kvm([_-](intel|amd))?\.[A-Za-z0-9_]+= ]] || return 1
	done
}

# set_list LIST PLATFORM: LIST as the guest runs it on PLATFORM
# (guest-init.sh's filter_list: the "@nonroot" runs on bochs-vmx alone,
# the tests scripts/left-out keeps off it)
set_list() {
	if [ "$2" = bochs-vmx ]; then
		cat "$1"
	else
		grep -v ' @nonroot$' "$1" || true
	fi | without_tests "$(left_out "$2")"
}

# boot_sets PLATFORM GROUP DIR...: in the background, the mutants of
# DIR... (built, each with its bzImage-kvm.cpio and tests.list) in as few
# boots of PLATFORM as they need, under GROUP/; each one's results in
# DIR/results/PLATFORM/ as a boot of its own would leave them.
boot_sets() {
	local p=$1 group=$2 boot=0 b d name n i bad
	shift 2
	local pending=("$@") next
	while [ ${#pending[@]} -gt 0 ]; do
		boot=$((boot + 1))
		b=$group/boot$boot
		rm -rf "$b"
		mkdir -p "$b/root/kvm"
		: >"$b/root/kvm/sets"
		for d in "${pending[@]}"; do
			name=${d##*/}
			mkdir -p "$b/root/kvm/$name"
			(cd "$b/root/kvm/$name" && cpio -i -d --quiet <"$d/bzImage-kvm.cpio")
			cp "$d/tests.list" "$b/root/kvm/$name/tests.list"
			header Cmdline "$(cat "$d/patch")" >"$b/root/kvm/$name/params"
			echo "$name" >>"$b/root/kvm/sets"
			cat "$d/tests.list"
		done | sort -u >"$b/tests.list"
		(cd "$b/root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$b/sets.cpio"
		rm -rf "$b/root"
		TESTS_LIST=$b/tests.list INITRAMFS=$b/initramfs.cpio "$TOP/scripts/initramfs.sh" \
			>"$b/initramfs.log" 2>&1
		say "mutants ${pending[*]##*/}: booting together on $p"
		KVM_SETS=1 KVM_MODULES=$b/sets.cpio BZIMAGE=${pending[0]}/bzImage \
			INITRAMFS=$b/initramfs.cpio TESTS_LIST=$b/tests.list \
			EXTRA_CMDLINE="kvmipi.stop_on_failure" RESULTS=$b/results PLATFORMS="$p" \
			"$TOP/scripts/run.sh" >"$b/run.log" 2>&1
		# each set's part, the boot's own lines before the first ahead
		for d in "${pending[@]}"; do
			rm -rf "${d:?}/results/$p"
			mkdir -p "$d/results/$p"
		done
		tr -d '\r' <"$b/results/$p/console.log" | awk -v base="${pending[0]%/*}" -v p="$p" '
			/@@ SET / { name = $0; sub(/.*@@ SET /, "", name)
				    file = base "/" name "/results/" p "/console.log"
				    printf "%s", head > file }
			file == "" { head = head $0 "\n"; next }
			{ print > file }'
		# the first mutant has a verdict in any case (a boot that died
		# before its set: the boot's lines alone)
		[ -f "${pending[0]}/results/$p/console.log" ] ||
			cp "$b/results/$p/console.log" "${pending[0]}/results/$p/console.log"
		next=() bad=
		n=${#pending[@]}
		for ((i = 0; i < n; i++)); do
			d=${pending[i]}
			if [ -n "$bad" ] || [ ! -f "$d/results/$p/console.log" ]; then
				next+=("$d")
				continue
			fi
			set_list "$d/tests.list" "$p" >"$d/results/$p/tests.list"
			awk -v platform="$p" -v list="$d/results/$p/tests.list" \
				-v rows="$d/results/$p/rows.tsv" -v xfails="$TOP/scripts/expected-failures" \
				-f "$TOP/scripts/report.awk" "$d/results/$p/console.log" >"$d/results/$p/ktap"
			cp "$b/results/$p/wall_seconds" "$d/results/$p/wall_seconds" 2>/dev/null
			ln -sfn "$b/run.log" "$d/run.log"
			if [ "$n" -gt 1 ]; then
				echo " (one boot for $n mutants)" >"$d/results/$p/shared"
			else
				echo " (a boot of its own)" >"$d/results/$p/shared"
			fi
			# the KVMs after one that did not end cleanly run again
			grep -qP '\tsuite-completed\tpass' "$d/results/$p/rows.tsv" &&
				grep -qP '\tguest-kernel-clean\t(pass|skip)' "$d/results/$p/rows.tsv" ||
				bad=${d##*/}
		done
		[ ${#next[@]} -eq 0 ] || say "mutants ${next[*]##*/}: again on $p, in a new boot${bad:+ (after $bad)}"
		pending=("${next[@]}")
	done
}

# Build the mutants one after another (they share this kernel's build
# tree) and boot each as soon as it is built and a slot is free: builds
# overlap boots, and both kernels' boots fill the slots until the last.
declare -a dirs shared=()
declare -A queue=()
groups=0
rm -rf "$mutants_out/boots"
while read -r patch platforms <&3; do
	name=$(basename "$patch" .patch)
	[ -z "$DEBUG" ] || [ -n "$(expected_report "$patch")" ] ||
		die "$patch: a debug mutant names the kernel report it provokes on an 'Expect: ' line"
	must_pass "$patch" && name=must-pass-$name
	dir=$mutants_out/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	dirs+=("$dir")
	say "mutant $name: building"
	if ! EXTRA_PATCHES=$patch BZIMAGE=$dir/bzImage "$TOP/scripts/kernel.sh"; then
		echo "not ok - mutant $name: kernel did not build" >"$dir/verdict"
		continue
	fi
	tests=$(header Tests "$patch")
	if [ -n "$tests" ]; then
		tr ';' '\n' <<<"$tests" | sed 's/^ *//; s/ *$//'
	elif [ -n "${MUTANT_TESTS_LIST:-}" ]; then
		cat "$MUTANT_TESTS_LIST"
	else
		printf '%s\n' "${MUTANT_TESTS[@]}"
	fi >"$dir/tests.list"
	if shareable "$patch" "$dir"; then
		echo "$patch" >"$dir/patch"
		echo "$platforms" >"$dir/platforms"
		shared+=("$dir")
		for p in $platforms; do
			queue[$p]="${queue[$p]:-} $dir"
			# shellcheck disable=SC2086 # directories, no spaces
			set -- ${queue[$p]}
			[ $# -ge "$PER_BOOT" ] || continue
			groups=$((groups + 1))
			boot_sets "$p" "$mutants_out/boots/$groups" "$@" &
			queue[$p]=
		done
		continue
	fi
	TESTS_LIST=$dir/tests.list INITRAMFS=$dir/initramfs.cpio "$TOP/scripts/initramfs.sh"
	boot_mutant "$patch" "$dir" "$platforms" &
done 3< <(ordered_mutants)
for p in "${!queue[@]}"; do
	[ -n "${queue[$p]}" ] || continue
	groups=$((groups + 1))
	# shellcheck disable=SC2086 # directories, no spaces
	boot_sets "$p" "$mutants_out/boots/$groups" ${queue[$p]} &
done

restored=1
say "restoring the kernel without mutants"
"$TOP/scripts/kernel.sh" || restored=0
wait
for dir in "${shared[@]}"; do
	write_verdict "$(cat "$dir/patch")" "$dir" "$(cat "$dir/platforms")"
done

caught=0 missed=0	# must-pass mutants that passed count as caught
for dir in "${dirs[@]}"; do
	if [ -f "$dir/verdict" ]; then
		cat "$dir/verdict"
	else
		echo "not ok - mutant ${dir##*/}: no verdict (see $dir/run.log)"
	fi
	if grep -q '^ok - ' "$dir/verdict" 2>/dev/null; then
		caught=$((caught + 1))
	else
		missed=$((missed + 1))
	fi
done
[ "$restored" -eq 1 ] || { echo "not ok - the kernel without mutants did not build"; missed=$((missed + 1)); }
echo "$caught $missed 0" >"$top_results/mutants.counts"
echo "mutants: $caught caught (must-pass: passed), $missed missed (must-pass: failed)"
[ "$missed" -eq 0 ]
