#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pack the test initramfs: static busybox, scripts/guest-init.sh as /init,
# and the built tests with their run lists (tests.list; tests-2cpu.list for
# the two-CPU platforms, tests-stock.list for the stock kernel's, which the
# kernel command line names).
set -euo pipefail
. "$(dirname "$0")/common.sh"

BUSYBOX=$(busybox_path)
[ -n "$BUSYBOX" ] || die "a static busybox is needed: apt-get install busybox-static (dnf install busybox)"
need_cmd cpio cpio
[ -f "$TESTS_LIST" ] || die "no tests built: run 'make tests' first"

# The stock kernel's list (bochs-vmx-stock), from the test bed's own: each
# of our tests once, as kselftest CI runs them on a kernel without the
# series' KVM patches (their path points SKIP there), and the stat test
# built with the other rule, which must SKIP without the stat.
if [ "$TESTS_LIST" = "$TESTS_OUT/tests.list" ]; then
	TESTS_LIST_STOCK=$TESTS_OUT/tests-stock.list
	grep -E '^kvm/x2apic_[a-z0-9_]+( [^@]*)?$' "$TESTS_LIST" >"$TESTS_LIST_STOCK.tmp" || true
	grep -E '^kvm/x2apic_fastpath_stat_test.other-rule @wrong-rule$' "$TESTS_LIST" >>"$TESTS_LIST_STOCK.tmp" || true
	mv "$TESTS_LIST_STOCK.tmp" "$TESTS_LIST_STOCK"
fi

# staged beside the archive: packs of other lists (a mutant's) never share it
root=${INITRAMFS%.cpio}.root
rm -rf "$root"
mkdir -p "$root"/{bin,dev,etc,proc,sys,tmp,usr/bin,tests/kvm}
# the user the "@nonroot" runs run as (suite.sh)
echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
cp "$BUSYBOX" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$TOP/scripts/guest-init.sh" "$root/init"
cp "$TOP/scripts/suite.sh" "$root/suite.sh"
cp "$TOP/scripts/guest-timeout.sh" "$root/usr/bin/timeout"
chmod +x "$root/init" "$root/usr/bin/timeout"
cp "$TESTS_LIST" "$root/tests/tests.list"
cp "$TESTS_LIST_2CPU" "$root/tests/tests-2cpu.list"
cp "$TESTS_LIST_STOCK" "$root/tests/tests-stock.list"

# The kselftest runner and what it reads, as "make install" laid them out.
cp -r "$TESTS_OUT/run_kselftest.sh" "$TESTS_OUT/kselftest" \
	"$TESTS_OUT/kselftest-list.txt" "$root/tests/"
cp "$TESTS_OUT/kvm/settings" "$root/tests/kvm/"

# A test binary goes in without its debugging information (no debugger
# runs in the guest): the emulators load the initramfs at every boot, and
# the kernel unpacks it, at about 8 MB a second of wall time under Bochs.
# The runner's script goes in as it is.
add_test() {	# add_test SRC DEST
	strip --strip-debug -o "$2" "$1" 2>/dev/null || cp "$1" "$2"
}
# The tests of the lists: what the guest can run, nothing else.  Their
# bochs-svm builds, where build-tests.sh made them, go into an archive of
# their own, $INITRAMFS.poll-idle, which only bochs-svm's boots append
# (platform.sh; the kernel unpacks one archive after the other).
poll=${INITRAMFS%.cpio}.poll-idle-root
rm -rf "$poll" "$INITRAMFS.poll-idle"
mkdir -p "$poll/tests/kvm"
while read -r t _; do
	[ ! -e "$root/tests/$t" ] || continue
	add_test "$TESTS_OUT/$t" "$root/tests/$t"
	[ ! -e "$TESTS_OUT/$t.poll-idle" ] || add_test "$TESTS_OUT/$t.poll-idle" "$poll/tests/$t.poll-idle"
done < <(cat "$TESTS_LIST" "$TESTS_LIST_2CPU")
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$INITRAMFS"
if [ -n "$(ls -A "$poll/tests/kvm")" ]; then
	(cd "$poll" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$INITRAMFS.poll-idle"
fi
say "initramfs ready: $INITRAMFS ($(du -h "$INITRAMFS" | cut -f1)$([ ! -f "$INITRAMFS.poll-idle" ] ||
	echo ", bochs-svm's builds $(du -h "$INITRAMFS.poll-idle" | cut -f1) more"))"
