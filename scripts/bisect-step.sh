#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One step of a bisection of a KVM change, in the kernel tree being
# bisected (KSRC=, default the current directory: git bisect run starts it
# there):
#
#   git bisect run /path/to/kvm-ipi/scripts/bisect-step.sh
#
# The commit checked out is copied into a scratch clone of its own,
# $BUILD/bisect/tree (git clone --shared: the user's checkout and
# repository are never written), and built and run there as make run
# would, on that one kernel: the series its version takes (the core, the
# regression series and the test bed's, as selftests/, lib/ and
# patches/selftests.msg render them; what the tree has already is not
# applied again), the kernel, the tests, the initramfs, then the suite on
# PLATFORMS.  Everything it writes goes under $BUILD/bisect/ (its own
# kernels and results: make run's build/<kernel>/ is left alone), its
# output to $BUILD/bisect/step.log.  It prints one line, and exits as git
# bisect run reads it:
#
#   0    GOOD: every test passed (expected failures and SKIPs as in make
#        run) and a fastpath point (": path") was proved
#   1    BAD: a test failed, the path one took included (one the tree's
#        rule forbids), a splat in the guest kernel, a suite that did not
#        reach its end
#   125  SKIP, this commit cannot be tested: a version without a series
#        (docs: the supported trees), a missing package, a series that
#        does not apply, a failed build, a platform that did not boot, a
#        run that proved no path or left no result
#   128  the bisection stops: settings no step can run with (PLATFORMS=host
#        runs the running kernel, not the step's)
#
# make bisect-step KSRC=/path/to/linux runs one step by hand; make turns
# every status but 0 into 2, so git bisect run must call this script.
# For the project's unit tests the build and the run can be replaced:
# KVMIPI_BISECT_BUILD and KVMIPI_BISECT_RUN, commands run with KSRC (the
# scratch clone), KERNEL, BUILD and RESULTS set; the run writes
# $RESULTS/results.tsv and $RESULTS/PLATFORM/ktap as scripts/run.sh does.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
commit=unknown

# verdict STATUS WORD WHY: the one line, and the exit
verdict() {
	printf 'bisect-step: %s %s (exit %d, %d s): %s\n' "$commit" "$2" "$1" \
		$((SECONDS - start)) "$3"
	exit "$1"
}
skip() { verdict 125 "SKIP (cannot test)" "$*"; }

src=${KSRC:-$PWD}
tree=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) ||
	verdict 128 "STOP" "${src}: not a git tree: run it in the kernel tree being bisected, or set KSRC="
[ ! -f "$tree/patches/selftests.msg" ] || [ ! -f "$tree/scripts/each-kernel.sh" ] ||
	verdict 128 "STOP" "$tree is this project, not a Linux tree: run it in the kernel tree being bisected, or set KSRC="
commit=$(git -C "$tree" rev-parse --short=12 HEAD 2>/dev/null) ||
	verdict 128 "STOP" "$tree: no commit checked out"
case " ${PLATFORMS:-} " in
*" host "*) verdict 128 "STOP" "PLATFORMS=host runs the running kernel, not the step's: use bochs-vmx or qemu-kvm" ;;
esac

# make's settings for the user's own build are not the step's
BUILD=${BUILD:-$TOP/build}/bisect
export BUILD
unset KERNELS RESULTS BZIMAGE INITRAMFS TESTS_OUT TESTS_LIST DEPS MIRROR_LOOKUP
mkdir -p "$BUILD"
log=$BUILD/step.log
: >"$log"

# The scratch clone, at the step's commit: the objects are the user's
# (--shared), the work tree its own.  A tree of another repository
# replaces it.
scratch=$BUILD/tree
if [ "$(cat "$scratch.origin" 2>/dev/null)" != "$tree" ]; then
	rm -rf "$scratch" "$scratch.origin"
	# the kernels' trees were copied from another repository's: anew
	rm -f "$BUILD"/[0-9]*/linux/.kvmipi-origin "$BUILD"/[0-9]*/bisect.commit
	git clone -q --shared --no-checkout "$tree" "$scratch" >>"$log" 2>&1 ||
		skip "cannot clone $tree into $scratch (log: $log)"
	echo "$tree" >"$scratch.origin"
fi
full=$(git -C "$tree" rev-parse HEAD)
{ git -C "$scratch" checkout -q -f --detach "$full" && git -C "$scratch" clean -qfdx; } >>"$log" 2>&1 ||
	skip "cannot check $commit out in $scratch (log: $log)"
export KSRC=$scratch

# The series this tree's version takes: refused before anything is built
ver=$(make -s -C "$scratch" kernelversion 2>>"$log")
[ -n "$ver" ] || skip "no kernel version ('make kernelversion' failed in the tree, log: $log)"
kernel=$(KERNEL='' PLATFORMS='' "$TOP/scripts/kernels.sh" 2>"$BUILD/kernels.err") || {
	cat "$BUILD/kernels.err" >>"$log"
	skip "$(sed -n 's/^error: //p' "$BUILD/kernels.err" | tail -1)"
}
if [ -n "${KERNEL:-}" ] && [ "$KERNEL" != "$kernel" ]; then
	skip "Linux $ver takes KERNEL=$kernel's series, not KERNEL=$KERNEL's"
fi
export KERNEL=$kernel KERNELS=$kernel
export RESULTS=$BUILD/results/$kernel
say_stage() { printf '==> bisect-step %s: %s\n' "$commit" "$*" >>"$log"; }

# stage WHAT COMMAND...: a stage of the build, its output in the log; a
# failed one is the step's SKIP, saying what failed
stage() {
	local what=$1
	shift
	say_stage "$what: $*"
	"$@" >>"$log" 2>&1 && return 0
	skip "$what failed (log: $log)"
}

build_step() {
	local p stock=
	PLATFORMS=$("$TOP/scripts/platforms.sh" check 2>>"$log") ||
		skip "PLATFORMS: $(grep '^error: ' "$log" | tail -1 | sed 's/^error: //')"
	export PLATFORMS
	stage "deps (make deps)" "$TOP/scripts/deps.sh"
	stage "the source" "$TOP/scripts/kernel.sh" --prepare
	# the tree is copied onto the one of this kernel's last step (make
	# kernel rebuilds what changed): the files this commit does not have go
	prev=$(cat "$BUILD/$kernel/bisect.commit" 2>/dev/null)
	if [ -n "$prev" ] && [ "$prev" != "$full" ]; then
		git -C "$scratch" diff --no-renames --diff-filter=D --name-only -z "$prev" "$full" |
			(cd "$BUILD/$kernel/linux" && xargs -0 rm -f --) >>"$log" 2>&1
	fi
	echo "$full" >"$BUILD/$kernel/bisect.commit"
	stage "rendering the series" "$TOP/scripts/patches.sh" --render
	for p in $PLATFORMS; do
		[ "$p" != bochs-vmx-stock ] || stock=--stock
	done
	say_stage "kernel: the series and the build"
	if ! "$TOP/scripts/kernel.sh" $stock >>"$log" 2>&1; then
		if grep -q '^error: patch .* does not apply' "$log"; then
			skip "the series does not apply: $(grep '^error: patch .* does not apply' "$log" | tail -1 | sed 's/^error: //')"
		fi
		skip "the kernel's build failed (log: $log)"
	fi
	stage "the tests' build" "$TOP/scripts/build-tests.sh"
	stage "the initramfs" "$TOP/scripts/initramfs.sh"
}

if [ -n "${KVMIPI_BISECT_BUILD:-}" ]; then
	say_stage "build: $KVMIPI_BISECT_BUILD"
	$KVMIPI_BISECT_BUILD >>"$log" 2>&1 || skip "the build failed (log: $log)"
else
	build_step
fi

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
say_stage "run"
if [ -n "${KVMIPI_BISECT_RUN:-}" ]; then
	$KVMIPI_BISECT_RUN >>"$log" 2>&1
else
	"$TOP/scripts/run.sh" >>"$log" 2>&1
fi
rc=$?

# The verdict, from the run's rows (run.sh, report.awk): a test's own
# failure is the commit's; a platform that did not start, or ran nothing,
# is not.
rows=$RESULTS/results.tsv
[ -s "$rows" ] || skip "the run left no result (exit $rc, log: $log)"
failed=$(awk -F'\t' '$3 == "fail" && $2 != "platform-start" && $2 != "no-test-ran" {
	printf "%s%s on %s", n++ ? ", " : "", $2, $1 }' "$rows")
[ -z "$failed" ] || verdict 1 "BAD" "failed: $failed (log: $log)"
broken=$(awk -F'\t' '$3 == "fail" { printf "%s%s (%s)", n++ ? ", " : "", $1,
	$2 == "platform-start" ? "did not boot" : $5 }' "$rows")
[ -z "$broken" ] || skip "no verdict from $broken (log: $log)"
[ "$rc" -eq 0 ] || skip "the run failed (exit $rc) with no test failed (log: $log)"
read -r proved points < <(cat "$RESULTS"/*/ktap 2>/dev/null |
	awk '/(not )?ok [0-9]+ .*: path( #|$)/ {
		n++; if ($0 !~ /not ok/ && $0 !~ /# SKIP/) p++ } END { print p + 0, n + 0 }')
[ "$proved" -gt 0 ] ||
	skip "every test passed, but none of the $points fastpath points (\": path\") was proved on PLATFORMS=\"$(echo ${PLATFORMS:-})\": use bochs-vmx or qemu-kvm"
tests=$(awk -F'\t' '$2 !~ /^(suite-completed|guest-kernel-clean)$/ &&
	($3 == "pass" || $3 == "xfail")' "$rows" | wc -l)
verdict 0 "GOOD" "$tests passed on Linux $ver (KERNEL=$kernel's series), $proved of $points fastpath points proved"
