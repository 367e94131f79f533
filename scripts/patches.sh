#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the in-tree selftests patch from selftests/ and lib/, the single
# source of truth: the files go where the KVM selftests keep theirs, and
# tools/testing/selftests/kvm/Makefile gains their entries.  The output is
# byte-for-byte reproducible (fixed author, dates, no signature).
#
# It also regenerates the diffstat that ends the cover letter.
#
#   patches.sh          write patches/$KERNEL/$NAME (and the cover letter's
#                       diffstat) when it changed
#   patches.sh --check  fail if either differs from the sources
set -euo pipefail
. "$(dirname "$0")/common.sh"

NAME=0003-KVM-selftests-Add-tests-for-the-x2APIC-ICR-fastpath.patch
KVM=tools/testing/selftests/kvm
# What this kernel's kvm_util calls things that selftests/ and lib/, written
# for mainline, use (where its tests and lists live: ARCH_DIR and
# KVM_MAKEFILE, common.sh).
case $KERNEL in
6.12)
	API_SED='s/\bgva_t\b/vm_vaddr_t/g; s/\bgpa_t\b/vm_paddr_t/g'
	POLICY_TEXT="the single-target policy of Linux 6.12: fixed delivery,
physical destination, no shorthand, not the broadcast ID" ;;
*)
	API_SED=
	POLICY_TEXT="the fast-delivery policy of Linux 6.18 and later: every IPI
the APIC map can deliver, not the ALL and ALL-BUT-SELF shorthands, nor
the broadcast ID" ;;
esac
COMPAT=$TOP/compat/$KERNEL	# lib/ files replaced for this kernel's kvm_util
base_mk=$KTREE/.kvmipi-pristine/$KVM/$KVM_MAKEFILE
[ -f "$base_mk" ] || die "no pristine $KVM/$KVM_MAKEFILE: run 'make kernel' first"
need_cmd git git

work=$KB/patchgen
rm -rf "$work"
mkdir -p "$work/$KVM"
cd "$work"
git init -q
# The identity of the series' first patch, not this machine's.
from=$(awk '/^From: / { f = substr($0, 7); if ((getline n) > 0 && n ~ /^ /) f = f n; print f; exit }' \
	"$PATCHES"/0001-*.patch)
export GIT_AUTHOR_NAME=${from% <*} GIT_AUTHOR_EMAIL=${from##*<}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE="2026-11-30T00:00:00+0000" GIT_COMMITTER_DATE="2026-11-30T00:00:00+0000"

cp "$base_mk" "$KVM/$KVM_MAKEFILE"
git add -A && git commit -q -m base

mkdir -p "$KVM/$ARCH_DIR" "$KVM/lib/$ARCH_DIR" "$KVM/include/$ARCH_DIR"
cp "$TOP"/selftests/kvm/x86/*.c "$KVM/$ARCH_DIR/"
cp "$TOP"/lib/*.c "$KVM/lib/"
cp "$TOP"/lib/x86/*.c "$KVM/lib/$ARCH_DIR/"
cp "$TOP"/lib/include/*.h "$KVM/include/"
cp "$TOP"/lib/include/x86/*.h "$KVM/include/$ARCH_DIR/"
if [ -d "$COMPAT" ]; then
	cp "$COMPAT"/lib/*.c "$KVM/lib/"
	cp "$COMPAT"/include/*.h "$KVM/include/"
fi
[ -z "$API_SED" ] || find "$KVM" -name '*.[ch]' -exec sed -i -E "$API_SED" {} +

# Makefile entries, in name order: "VARIABLE += DIR/FILE" for each FILE.
entries() {	# entries VARIABLE DIR SUFFIX FILES...
	local var=$1 dir=$2 suffix=$3 f
	shift 3
	for f in "$@"; do
		f=${f##*/}
		echo "$var += $dir/${f%.c}$suffix"
	done
}
lib=$(entries LIBKVM lib .c "$TOP"/lib/*.c)
lib86=$(entries LIBKVM_$ARCH_DIR lib/$ARCH_DIR .c "$TOP"/lib/x86/*.c)
tests=$(entries TEST_GEN_PROGS_$ARCH_DIR $ARCH_DIR "" \
	$(ls "$TOP"/selftests/kvm/x86/*.c | grep -v '_bench\.c$'))
benches=$(entries TEST_GEN_PROGS_EXTENDED_$ARCH_DIR $ARCH_DIR "" "$TOP"/selftests/kvm/x86/*_bench.c)

insert_after() {	# insert_after ANCHOR_REGEX LINES: after the last matching line
	local anchor=$1 lines=$2
	grep -qE "$anchor" "$KVM/$KVM_MAKEFILE" || die "anchor '$anchor' not in $KVM/$KVM_MAKEFILE"
	awk -v anchor="$anchor" -v lines="$lines" '
		{ text[NR] = $0 } $0 ~ anchor { last = NR }
		END { for (i = 1; i <= NR; i++) { print text[i]; if (i == last) print lines } }
	' "$KVM/$KVM_MAKEFILE" >"$KVM/$KVM_MAKEFILE.new"
	mv "$KVM/$KVM_MAKEFILE.new" "$KVM/$KVM_MAKEFILE"
}
insert_after '^LIBKVM \+= lib/userfaultfd_util\.c$' "$lib"
insert_after "^LIBKVM_$ARCH_DIR \\+= lib/$ARCH_DIR/vmx\\.c\$" "$lib86"
insert_after "^TEST_GEN_PROGS_$ARCH_DIR \\+= $ARCH_DIR/xapic_state_test\$" "$tests"
insert_after "^TEST_GEN_PROGS_EXTENDED_$ARCH_DIR \\+= " "$benches"

git add -A
git commit -q -s -F - <<MSG
KVM: selftests: Add tests for the x2APIC ICR fastpath

KVM completes some x2APIC ICR writes in a fastpath right after VM-exit.
On this kernel it takes those of
$POLICY_TEXT.
The fastpath's first version also took shorthand IPIs and a later fix
was needed for the broadcast ID; neither mistake changed where IPIs
went, so no delivery test could see them.

Add tests that check the path of every ICR write through the
x2apic_icr_fastpath_writes vCPU stat, and its outcome through the
receivers' interrupt and NMI handlers:

 - x2apic_fastpath_stat_test: the stat rises for a fixed physical IPI,
   and for a logical one as the kernel's policy says, stays flat for an
   ALL-BUT-SELF one, and debugfs agrees.
 - x2apic_fastpath_vm_state_test: 13 kinds of ICR write under six
   VM-wide APIC states (all x2APIC, one vCPU in xAPIC mode, one APIC
   hardware- or software-disabled, sparse x2APIC IDs, a full 16-member
   logical cluster), the targets parked in the host: the path, and what
   each target latched (IRR, pending NMI).
 - x2apic_fastpath_nested_test: an L2 guest's ICR writes (VMX or SVM)
   never take the fastpath, whether L1 intercepts them or not; L1's own
   write of the same value does.
 - x2apic_ipi_matrix_test: four vCPUs in two logical clusters take turns
   to send every delivery mode, destination mode, destination, shorthand
   and trigger mode, in x2APIC and in xAPIC mode, with reserved bits set,
   and SMI, INIT and SIPI to parked vCPUs.  Expectations come from an
   architectural model (ipi_oracle.c), not from KVM, which knows both
   fastpath policies and picks the running kernel's (KVM_IPI_POLICY
   forces either).  Where kvm.x2apic_icr_fastpath exists the matrix runs
   again with it off and every vCPU must see the same.
 - x2apic_fastpath_irqchip_test: a split irqchip keeps the fastpath, a
   VM without an in-kernel LAPIC never takes it.
 - x2apic_icr_hostile_test: malformed ICR values (each reserved bit,
   vectors 0-15, delivery modes 3 and 7, level de-asserts, destinations
   no vCPU has) written by the guest, with KVM_SET_MSRS and with
   KVM_SET_LAPIC: #GP exactly where the SDM says, the outcome it says,
   and the same outcome, value by value, with the fastpath on and off.
 - x2apic_ipi_stress_test: 8 vCPUs send random streams of every kind of
   IPI while they halt, mask, raise the TPR and EOI late, and while the
   host pauses them and, in chaos epochs, switches their APIC modes and
   IDs; every IPI is announced to its targets, so a lost, duplicated or
   misdirected one is seen, and the stats must match the oracle.
 - x2apic_ipi_bench: ICR write cost and IPI latency with the fastpath on
   and off (built, not run by default).

Path checks are skipped on kernels without the stat, where the fastpath
cannot run (SVM without NRIP save), and where IPI virtualization (IPIv,
AVIC) may complete writes without an exit.
MSG
git format-patch -1 --start-number 3 --no-signature --stdout HEAD >"$work/$NAME"

# The cover letter ends with the series' diffstat: the series (with this
# 0003) applied with git am onto the pristine copies of the files it touches.
cover=$PATCHES/0000-cover-letter.txt
stat=$KB/coverstat
rm -rf "$stat"
mkdir -p "$stat"
cp -r "$KTREE/.kvmipi-pristine/." "$stat/"
git -C "$stat" init -q
git -C "$stat" add -A
git -C "$stat" commit -q -m base
git -C "$stat" tag base
for p in $(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series"); do
	[ "$p" = "$NAME" ] && p=$work/$NAME || p=$PATCHES/$p
	git -C "$stat" am -q "$p" || die "${p##*/} does not apply to the pristine files"
done
if ! grep -qx "$NAME" "$PATCHES/series"; then
	git -C "$stat" am -q "$work/$NAME" || die "$NAME does not apply to the pristine files"
fi
[ -f "$cover" ] || die "patches/$KERNEL/0000-cover-letter.txt missing"
# the cover letter up to its diffstat (the last block of " path | n" lines)
awk '/^ .*\| +[0-9]+ /, /^ [0-9]+ files? changed/ { next } { print }' "$cover" |
	sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$work/cover"
{ echo; git -C "$stat" diff --stat=72 base HEAD; } >>"$work/cover"
cd "$TOP"

case "${1:-}" in
--check)
	if ! cmp -s "$work/$NAME" "$PATCHES/$NAME"; then
		diff -u "$PATCHES/$NAME" "$work/$NAME" | head -40 >&2 || true
		die "patches/$KERNEL/$NAME does not match selftests/ and lib/: run 'make patches' and commit it"
	fi
	if ! cmp -s "$work/cover" "$cover"; then
		diff -u "$cover" "$work/cover" | head -40 >&2 || true
		die "patches/$KERNEL/0000-cover-letter.txt has a stale diffstat: run 'make patches' and commit it"
	fi
	;;
*)
	if ! cmp -s "$work/$NAME" "$PATCHES/$NAME"; then
		cp "$work/$NAME" "$PATCHES/$NAME"
		say "regenerated patches/$KERNEL/$NAME"
	fi
	if ! cmp -s "$work/cover" "$cover"; then
		cp "$work/cover" "$cover"
		say "regenerated the diffstat of patches/$KERNEL/0000-cover-letter.txt"
	fi
	grep -qx "$NAME" "$PATCHES/series" 2>/dev/null || echo "$NAME" >>"$PATCHES/series"
	;;
esac
