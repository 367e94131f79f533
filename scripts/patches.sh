#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the in-tree selftests patch from selftests/ and lib/, the single
# source of truth: the files go where the KVM selftests keep theirs, and
# tools/testing/selftests/kvm/Makefile gains their entries.  The output is
# byte-for-byte reproducible (fixed author, dates, no signature).
#
#   patches.sh          write patches/$NAME when it changed
#   patches.sh --check  fail if patches/$NAME differs from the sources
set -euo pipefail
. "$(dirname "$0")/common.sh"

NAME=0003-KVM-selftests-Add-tests-for-the-x2APIC-ICR-fastpath.patch
KVM=tools/testing/selftests/kvm
base_mk=$KTREE/.kvmipi-pristine/$KVM/Makefile
[ -f "$base_mk" ] || die "no pristine $KVM/Makefile: run 'make kernel' first"
need_cmd git git

work=$BUILD/patchgen
rm -rf "$work"
mkdir -p "$work/$KVM"
cd "$work"
git init -q
# The identity of the series' first patch, not this machine's.
from=$(awk '/^From: / { f = substr($0, 7); if ((getline n) > 0 && n ~ /^ /) f = f n; print f; exit }' \
	"$TOP"/patches/0001-*.patch)
export GIT_AUTHOR_NAME=${from% <*} GIT_AUTHOR_EMAIL=${from##*<}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE="2026-11-30T00:00:00+0000" GIT_COMMITTER_DATE="2026-11-30T00:00:00+0000"

cp "$base_mk" "$KVM/Makefile"
git add -A && git commit -q -m base

mkdir -p "$KVM/x86_64" "$KVM/lib/x86_64" "$KVM/include/x86_64"
cp "$TOP"/selftests/kvm/x86_64/*.c "$KVM/x86_64/"
cp "$TOP"/lib/*.c "$KVM/lib/"
cp "$TOP"/lib/x86_64/*.c "$KVM/lib/x86_64/"
cp "$TOP"/lib/include/*.h "$KVM/include/"
cp "$TOP"/lib/include/x86_64/*.h "$KVM/include/x86_64/"

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
lib86=$(entries LIBKVM_x86_64 lib/x86_64 .c "$TOP"/lib/x86_64/*.c)
tests=$(entries TEST_GEN_PROGS_x86_64 x86_64 "" \
	$(ls "$TOP"/selftests/kvm/x86_64/*.c | grep -v '_bench\.c$'))
benches=$(entries TEST_GEN_PROGS_EXTENDED_x86_64 x86_64 "" "$TOP"/selftests/kvm/x86_64/*_bench.c)

insert_after() {	# insert_after ANCHOR_REGEX LINES: after the last matching line
	local anchor=$1 lines=$2
	grep -qE "$anchor" "$KVM/Makefile" || die "anchor '$anchor' not in $KVM/Makefile"
	awk -v anchor="$anchor" -v lines="$lines" '
		{ text[NR] = $0 } $0 ~ anchor { last = NR }
		END { for (i = 1; i <= NR; i++) { print text[i]; if (i == last) print lines } }
	' "$KVM/Makefile" >"$KVM/Makefile.new"
	mv "$KVM/Makefile.new" "$KVM/Makefile"
}
insert_after '^LIBKVM \+= lib/userfaultfd_util\.c$' "$lib"
insert_after '^LIBKVM_x86_64 \+= lib/x86_64/vmx\.c$' "$lib86"
insert_after '^TEST_GEN_PROGS_x86_64 \+= x86_64/xapic_state_test$' "$tests"
insert_after '^TEST_GEN_PROGS_EXTENDED_x86_64 \+= ' "$benches"

git add -A
git commit -q -s -F - <<'MSG'
KVM: selftests: Add tests for the x2APIC ICR fastpath

KVM completes eligible x2APIC ICR writes (fixed delivery, physical
destination, no shorthand, not the broadcast ID) in a fastpath right
after VM-exit.  Its first version also took shorthand IPIs and a later
fix was needed for the broadcast ID; neither mistake changed where IPIs
went, so no delivery test could see them.

Add tests that check the path of every ICR write through the
x2apic_icr_fastpath_writes vCPU stat, and its outcome through the
receivers' interrupt and NMI handlers:

 - x2apic_fastpath_stat_test: the stat rises for a fixed physical IPI,
   stays flat for a logical one, and debugfs agrees.
 - x2apic_ipi_matrix_test: four vCPUs in two logical clusters take turns
   to send every delivery mode, destination mode, destination, shorthand
   and trigger mode, in x2APIC and in xAPIC mode, with reserved bits set,
   and SMI, INIT and SIPI to parked vCPUs.  Expectations come from an
   architectural model (ipi_oracle.c), not from KVM.  Where
   kvm.x2apic_icr_fastpath exists the matrix runs again with it off and
   every vCPU must see the same.
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

Path checks are skipped on kernels without the stat, and where IPI
virtualization (IPIv, AVIC) may complete writes without an exit.
MSG
git format-patch -1 --start-number 3 --no-signature --stdout HEAD >"$work/$NAME"

case "${1:-}" in
--check)
	if ! cmp -s "$work/$NAME" "$TOP/patches/$NAME"; then
		diff -u "$TOP/patches/$NAME" "$work/$NAME" | head -40 >&2 || true
		die "patches/$NAME does not match selftests/ and lib/: run 'make patches' and commit it"
	fi
	;;
*)
	if ! cmp -s "$work/$NAME" "$TOP/patches/$NAME"; then
		cp "$work/$NAME" "$TOP/patches/$NAME"
		say "regenerated patches/$NAME"
	fi
	grep -qx "$NAME" "$TOP/patches/series" || echo "$NAME" >>"$TOP/patches/series"
	;;
esac
