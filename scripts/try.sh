#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One test, from a source file, on one kernel and its platforms, in about a
# minute: for writing a test and seeing each of its points fail once.
#
#   scripts/try.sh [-m MUTANT.patch]... TEST.c [ARGS...]
#
# The test is built against $KERNEL's patched KVM selftests (make tests
# built them first), in a shadow of the tree that has the file and a
# Makefile line for it, reusing the tree's own objects; nothing of the
# tree, the series or make run's outputs changes.  With -m, the kernel is
# built with the patches on top of the series (as make mutants does, one
# kernel tree at a time: kernel_lock) into the output directory.  The
# guest runs "kvm/TEST ARGS" on each platform of $PLATFORMS (default
# bochs-vmx) and the KTAP goes to the terminal.
#
# A source that the series renders (its code under the series' #if symbols,
# a compat diff) is built as it is, with a warning.
#
# KERNEL=6.12|7.3 (default 6.12), PLATFORMS="bochs-vmx qemu-svm ...",
# TRY_OUT=DIR (default build/<kernel>/try/<test>).  Exits as make run does.
set -euo pipefail
. "$(dirname "$0")/common.sh"
unset DEBUG	# the tools/ Makefiles read DEBUG=1 as "-O0"

mutants=()
while getopts m: opt; do
	case $opt in
	m) mutants+=("$(cd "$(dirname "$OPTARG")" && pwd)/${OPTARG##*/}") ;;
	*) die "usage: scripts/try.sh [-m MUTANT.patch]... TEST.c [ARGS...]" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || die "usage: scripts/try.sh [-m MUTANT.patch]... TEST.c [ARGS...]"
src=$(cd "$(dirname "$1")" && pwd)/${1##*/}
shift
[ -f "$src" ] || die "no test source $src"
name=$(basename "$src" .c)
objs=$KB/kselftest-build/kselftest/kvm
[ -d "$objs/$ARCH_DIR" ] && [ -d "$TESTS_OUT/kvm" ] ||
	die "no KVM selftests built for $KERNEL: run 'make tests KERNEL=$KERNEL' first"
# The series renders some sources (scripts/patches.sh): unifdef with its
# symbols, and for 6.12 a compat diff; this builds the source as it is.
if grep -q '^#if.*KVM_' "$src" || [ -f "$TOP/compat/$KERNEL/tests/$name.diff" ]; then
	say "warning: the series renders $name (its #if KVM_... code or compat/$KERNEL/tests/$name.diff); built here as the source is: for the series' build, 'make tests' and mutants"
fi
out=${TRY_OUT:-$KB/try/$name}
PLATFORMS=${PLATFORMS:-bochs-vmx}
rm -rf "$out"
mkdir -p "$out/kselftest/kvm"

# add_test: in a shadow's KVM selftests directory, the test and its
# Makefile line, before lib.mk turns the lists into paths
add_test() {
	cp "$src" "$ARCH_DIR/"
	sed -i "/^TEST_GEN_PROGS += \$(TEST_GEN_PROGS_\$(ARCH/i TEST_GEN_PROGS_${ARCH_DIR} += $ARCH_DIR/$name" \
		"$KVM_MAKEFILE"
	grep -q "^TEST_GEN_PROGS_${ARCH_DIR} += $ARCH_DIR/$name\$" "$KVM_MAKEFILE" ||
		die "no place for $name in $KVM_MAKEFILE"
}
add_test_poll_idle() {
	add_test
	poll_idle
}

# build_in VARIANT CHANGE REUSE: the test, in a shadow of the tree (held
# while it builds, as it reads the tree's headers), into $out/VARIANT
build_in() {
	( kernel_lock
	  shadow_build "$out/$1-tree" "$out/$1" "$out/$1.log" "$2" "$3" "$name" ) ||
		die "$name did not build for $KERNEL (log: $out/$1.log)"
}
build_in plain add_test 1
cp "$out/plain/$ARCH_DIR/$name" "$out/kselftest/kvm/$name"
case " $PLATFORMS " in
*" bochs-svm "*)
	# a header changes: nothing of the tree's build is reused
	build_in poll-idle add_test_poll_idle 0
	cp "$out/poll-idle/$ARCH_DIR/$name" "$out/kselftest/kvm/$name.poll-idle" ;;
esac

# what the initramfs takes from the installed tests, beside this one
for f in run_kselftest.sh kselftest kselftest-list.txt; do
	ln -sfn "$TESTS_OUT/$f" "$out/kselftest/$f"
done
cp "$TESTS_OUT/kvm/settings" "$out/kselftest/kvm/"
echo "kvm/$name $*" | sed 's/ *$//' >"$out/kselftest/tests.list"

bz=$BZIMAGE
if [ ${#mutants[@]} -gt 0 ]; then
	say "building $KERNEL with ${mutants[*]##*/}"
	EXTRA_PATCHES="${mutants[*]}" BZIMAGE=$out/bzImage "$TOP/scripts/kernel.sh" \
		>"$out/kernel.log" 2>&1 || { tail -30 "$out/kernel.log" >&2; die "the kernel did not build"; }
	bz=$out/bzImage
fi
[ -f "$bz" ] || die "no kernel $bz: run 'make kernel KERNEL=$KERNEL' first"

TESTS_OUT=$out/kselftest TESTS_LIST=$out/kselftest/tests.list INITRAMFS=$out/initramfs.cpio \
	"$TOP/scripts/initramfs.sh"
rc=0
BZIMAGE=$bz TESTS_OUT=$out/kselftest TESTS_LIST=$out/kselftest/tests.list \
	INITRAMFS=$out/initramfs.cpio RESULTS=$out/results PLATFORMS=$PLATFORMS \
	"$TOP/scripts/run.sh" >"$out/run.log" 2>&1 || rc=$?
for p in $PLATFORMS; do
	echo "== $KERNEL $p${mutants:+ with ${mutants[*]##*/}} ($out/results/$p)"
	cat "$out/results/$p/ktap" 2>/dev/null || tail -20 "$out/run.log"
done
tail -1 "$out/run.log"
exit $rc
