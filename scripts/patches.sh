#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the selftests part of the series from selftests/ and lib/, the
# single source of truth, and patches/selftests.msg, its commit messages:
# the library first (lib/, then lib/x86/), then one patch per test, each
# file where the KVM selftests keep theirs and each Makefile entry in name
# order.  The output is byte-for-byte reproducible (fixed author, dates, no
# signature).  It also regenerates patches/$KERNEL/series and the shortlog
# and diffstat that end the cover letter.
#
# Changes to files the KVM selftests already have (kvm_util knobs the tests
# need) are this kernel's own text, paths and context, so each is kept as
# one "git diff" from the top of the kernel tree per kernel,
# compat/$KERNEL/kvm_util/NAME.diff.  It is applied onto pristine copies of
# the files it modifies (scripts/kernel.sh saves them) as the patch of
# section "== kvm_util/NAME" of patches/selftests.msg; those patches follow
# lib-x86, in the order of their sections, and every kernel has each of them.
#
#   patches.sh          write what changed under patches/$KERNEL/ (and
#                       remove the selftests patches the series lost)
#   patches.sh --check  fail if anything there differs from the sources
set -euo pipefail
. "$(dirname "$0")/common.sh"

KVM=tools/testing/selftests/kvm
# What this kernel's kvm_util calls things that selftests/ and lib/, written
# for mainline, use (where its tests and lists live: ARCH_DIR and
# KVM_MAKEFILE, common.sh).
# 7.3 renamed guest_random_*() and guest_rng to kvm_random_*() and kvm_rng.
RANDOM_SED='s/kvm_random_/guest_random_/g; s/\bkvm_rng\b/guest_rng/g'
FAST_DELIVERY="the fast-delivery policy of Linux 6.18 and later: every IPI
the APIC map can deliver, not the ALL and ALL-BUT-SELF shorthands, nor
the broadcast ID; since 7.2 none while the sender's mediated vPMU
counts instructions retired"
case $KERNEL in
6.12)
	# 6.12's selftests spell the kernel types the C way
	API_SED="s/\bgva_t\b/vm_vaddr_t/g; s/\bgpa_t\b/vm_paddr_t/g; $RANDOM_SED;
s/\bu64\b/uint64_t/g; s/\bu32\b/uint32_t/g; s/\bu16\b/uint16_t/g; s/\bu8\b/uint8_t/g;
s/\bs64\b/int64_t/g; s/\bs32\b/int32_t/g"
	POLICY_TEXT="the single-target policy of Linux 6.12: fixed delivery,
physical destination, no shorthand, not the broadcast ID" ;;
*)
	API_SED=
	POLICY_TEXT=$FAST_DELIVERY ;;
esac
COMPAT=$TOP/compat/$KERNEL	# lib/ files replaced for this kernel's kvm_util,
				# tests/NAME.diff: a test as its kvm_util needs it
KVM_UTIL=$COMPAT/kvm_util	# its changes to kvm_util's own files, NAME.diff
MSGS=$TOP/patches/selftests.msg
COVER=0000-cover-letter.txt
base_mk=$KTREE/.kvmipi-pristine/$KVM/$KVM_MAKEFILE
[ -f "$base_mk" ] || die "no pristine $KVM/$KVM_MAKEFILE: run 'make kernel' first"
need_cmd git git

# The sections, in series order: the library's, this kernel's kvm_util
# changes ("== kvm_util/NAME", or "== kvm_util/NAME K,L" for kernels K and
# L only), the tests, and the follow-up marker among them.
sections=$(awk -v k="$KERNEL" '
	/^=== follow-up$/ { print "@follow-up"; next }
	$1 == "==" && $2 ~ /^kvm_util\// && (NF < 3 || index("," $3 ",", "," k ",")) { print $2 }
	$1 == "==" && $2 ~ /^(lib|lib-x86-model|lib-x86|x2apic_[a-z0-9_]*)$/ { print $2 }' "$MSGS")
kvm_util_changes=$(echo "$sections" | sed -n 's#^kvm_util/##p')
tests=$(echo "$sections" | grep '^x2apic_' || true)
# each kvm_util change with its diff
for d in "$KVM_UTIL"/*.diff; do
	[ -e "$d" ] || continue
	n=${d##*/}
	echo "$kvm_util_changes" | grep -qxF "${n%.diff}" ||
		die "compat/$KERNEL/kvm_util/$n has no section '== kvm_util/${n%.diff}' in patches/selftests.msg"
done
for n in $kvm_util_changes; do
	[ -f "$KVM_UTIL/$n.diff" ] ||
		die "patches/selftests.msg has a section '== kvm_util/$n', but there is no compat/$KERNEL/kvm_util/$n.diff"
done
# the files they modify: pristine in the base commit, so that only the
# diffs show in the patches
kvm_util_files=$(for n in $kvm_util_changes; do
	sed -n 's#^--- a/\([^[:space:]]*\).*#\1#p' "$KVM_UTIL/$n.diff"
done | sort -u)
for f in $kvm_util_files; do
	[ -f "$KTREE/.kvmipi-pristine/$f" ] ||
		die "no pristine $f (compat/$KERNEL/kvm_util/): run 'make patches' (scripts/kernel.sh --prepare saves it)"
done

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
for f in $kvm_util_files; do
	mkdir -p "$(dirname "$f")"
	cp "$KTREE/.kvmipi-pristine/$f" "$f"
done
git add -A && git commit -q -m base && git tag base

# message KEY: the commit message of section "== KEY" of $MSGS; a line
# that starts with "[K]" or "[K,L,...]" and a space, or is only that, is
# those kernels' only
message() {
	awk -v key="$1" -v kernel="$KERNEL" '
		/^==/ { on = ($1 == "==" && $2 == key); next }
		!on { next }
		match($0, /^\[[0-9.,]+\]( |$)/) {
			if (index("," substr($0, 2, index($0, "]") - 2) ",", "," kernel ",") == 0)
				next
			$0 = substr($0, RLENGTH + 1)
		}
		{ print }' "$MSGS" |
		POLICY=$POLICY_TEXT awk '{ gsub(/@POLICY@/, ENVIRON["POLICY"]); print }'
}
# commit KEY: everything changed so far, as the patch of section KEY; the
# files new since the last commit (from selftests/ and lib/, written for
# mainline) take this kernel's names, the kvm_util diffs are its text already
commit() {
	local msg
	msg=$(message "$1")
	[ -n "$msg" ] || die "patches/selftests.msg has no section '== $1'"
	[ -z "$API_SED" ] || git ls-files -z --others -- '*.[ch]' | xargs -0 -r sed -i -E "$API_SED"
	git add -A
	printf '%s\n' "$msg" | git commit -q -s -F -
}

insert_after() {	# insert_after ANCHOR_REGEX LINES: after the last matching line
	local anchor=$1 lines=$2
	grep -qE "$anchor" "$KVM/$KVM_MAKEFILE" || die "anchor '$anchor' not in $KVM/$KVM_MAKEFILE"
	awk -v anchor="$anchor" -v lines="$lines" '
		{ text[NR] = $0 } $0 ~ anchor { last = NR }
		END { for (i = 1; i <= NR; i++) { print text[i]; if (i == last) print lines } }
	' "$KVM/$KVM_MAKEFILE" >"$KVM/$KVM_MAKEFILE.new"
	mv "$KVM/$KVM_MAKEFILE.new" "$KVM/$KVM_MAKEFILE"
}

# insert_sorted LINE GROUP_REGEX: before the first line of the group (lines
# matching GROUP_REGEX) that sorts after LINE, or after the group's last
# line, so that a sorted group stays sorted
insert_sorted() {
	local line=$1 group=$2
	grep -qE "$group" "$KVM/$KVM_MAKEFILE" || die "no '$group' in $KVM/$KVM_MAKEFILE"
	awk -v line="$line" -v group="$group" '
		{ text[NR] = $0 }
		$0 ~ group { last = NR; if (!at && $0 > line) at = NR }
		END {
			if (!at) at = last + 1
			for (i = 1; i <= NR + 1; i++) {
				if (i == at) print line
				if (i <= NR) print text[i]
			}
		}' "$KVM/$KVM_MAKEFILE" >"$KVM/$KVM_MAKEFILE.new"
	mv "$KVM/$KVM_MAKEFILE.new" "$KVM/$KVM_MAKEFILE"
}

# add_entries VARIABLE DIR FILES...: "VARIABLE += DIR/FILE" for each, in
# name order into the block of "VARIABLE += DIR/" lines
add_entries() {
	local var=$1 dir=$2 f
	shift 2
	for f in "$@"; do
		insert_sorted "$var += $dir/${f##*/}" "^$var \\+= $dir/"
	done
}

# The library: what the tests share (lib), the architectural model of
# IPIs (MODEL) alone (lib-x86-model), then the x86 helpers built on it
# (lib-x86).
MODEL=ipi_oracle
mkdir -p "$KVM/$ARCH_DIR" "$KVM/lib/$ARCH_DIR" "$KVM/include/$ARCH_DIR"
add_lib() {
	cp "$TOP"/lib/*.c "$KVM/lib/"
	cp "$TOP"/lib/include/*.h "$KVM/include/"
	if [ -d "$COMPAT/lib" ]; then
		cp "$COMPAT"/lib/*.c "$KVM/lib/"
	fi
	if [ -d "$COMPAT/include" ]; then
		cp "$COMPAT"/include/*.h "$KVM/include/"
	fi
	add_entries LIBKVM lib "$TOP"/lib/*.c
}
add_lib_x86_model() {
	cp "$TOP/lib/x86/$MODEL.c" "$KVM/lib/$ARCH_DIR/"
	cp "$TOP/lib/include/x86/$MODEL.h" "$KVM/include/$ARCH_DIR/"
	add_entries LIBKVM_$ARCH_DIR lib/$ARCH_DIR "$MODEL.c"
}
add_lib_x86() {
	cp "$TOP"/lib/x86/*.c "$KVM/lib/$ARCH_DIR/"
	cp "$TOP"/lib/include/x86/*.h "$KVM/include/$ARCH_DIR/"
	add_entries LIBKVM_$ARCH_DIR lib/$ARCH_DIR $(cd "$TOP/lib/x86" && ls *.c | grep -vx "$MODEL.c")
}

# The library, the kvm_util changes and the tests, in the order of their
# sections in patches/selftests.msg, each test with its Makefile entry in name order
# before xapic_ipi_test; the bench is built, not run
# (TEST_GEN_PROGS_EXTENDED, as nx_huge_pages_test).  The sections after
# the "=== follow-up" line make the follow-up series, posted apart on top
# of the core one.
for t in $(cd "$TOP/selftests/kvm/x86" && ls *.c | sed 's/\.c$//'); do
	echo "$tests" | grep -qx "$t" || die "selftests/kvm/x86/$t.c has no section in patches/selftests.msg"
done
core_tip=
for s in $sections; do
	case $s in
	@follow-up)
		[ -z "$core_tip" ] || die "patches/selftests.msg has two '=== follow-up' lines"
		core_tip=$(git rev-parse HEAD)
		continue ;;
	lib|lib-x86-model|lib-x86)
		"add_${s//-/_}"
		commit "$s"
		continue ;;
	kvm_util/*)
		git apply --whitespace=error "$KVM_UTIL/${s#kvm_util/}.diff" ||
			die "compat/$KERNEL/kvm_util/${s#kvm_util/}.diff does not apply to the pristine files"
		commit "$s"
		continue ;;
	esac
	t=$s
	[ -f "$TOP/selftests/kvm/x86/$t.c" ] || die "patches/selftests.msg names $t, not in selftests/kvm/x86/"
	cp "$TOP/selftests/kvm/x86/$t.c" "$KVM/$ARCH_DIR/"
	# the test as this kernel's older kvm_util needs it
	if [ -f "$COMPAT/tests/$t.diff" ]; then
		patch -s -p1 -d "$KVM/$ARCH_DIR" --no-backup-if-mismatch <"$COMPAT/tests/$t.diff" ||
			die "compat/$KERNEL/tests/$t.diff does not apply to selftests/kvm/x86/$t.c"
	fi
	case $t in
	*_bench)
		insert_after "^TEST_GEN_PROGS_EXTENDED_$ARCH_DIR \\+= " \
			"TEST_GEN_PROGS_EXTENDED_$ARCH_DIR += $ARCH_DIR/$t" ;;
	*)
		insert_sorted "TEST_GEN_PROGS_$ARCH_DIR += $ARCH_DIR/$t" \
			"^TEST_GEN_PROGS_$ARCH_DIR \\+= $ARCH_DIR/(x2apic_|xapic_ipi_test\$)" ;;
	esac
	commit "$t"
done
[ -n "$core_tip" ] || die "patches/selftests.msg has no '=== follow-up' line"
mkdir -p "$work/out/$FOLLOW"
git format-patch -q --start-number 3 --no-signature -o "$work/out" base.."$core_tip"
git format-patch -q --no-signature -o "$work/out/$FOLLOW" "$core_tip"..HEAD
CORE_NAMES=$(cd "$work/out" && ls *.patch)
FOLLOW_NAMES=$(cd "$work/out/$FOLLOW" && ls *.patch | sed "s#^#$FOLLOW/#")
NAMES="$CORE_NAMES
$FOLLOW_NAMES"

# The kernel patches: the series' entries numbered below the first
# generated one.
kernel_patches=$(grep -v -e '^#' -e '^[[:space:]]*$' -e / "$PATCHES/series" | awk -F- '$1 + 0 < 3')
want_series=$(printf '%s\n' $kernel_patches $NAMES)

# Each cover letter ends with its series' shortlog and diffstat: the
# series applied with git am onto the pristine copies of the files it
# touches, the follow-up onto the core.
stat=$KB/coverstat
rm -rf "$stat"
mkdir -p "$stat"
cp -r "$KTREE/.kvmipi-pristine/." "$stat/"
git -C "$stat" init -q
git -C "$stat" add -A
git -C "$stat" commit -q -m base
git -C "$stat" tag base
for p in $kernel_patches; do
	git -C "$stat" am -q "$PATCHES/$p" || die "$p does not apply to the pristine files"
done
for p in $CORE_NAMES; do
	git -C "$stat" am -q "$work/out/$p" || die "$p does not apply to the pristine files"
done
git -C "$stat" tag core
for p in $FOLLOW_NAMES; do
	git -C "$stat" am -q "$work/out/$p" || die "$p does not apply to the pristine files"
done
core_subject=$(sed -n 's/^Subject: \[PATCH 0\/[0-9]*\] //p' "$PATCHES/$COVER")
# cover_letter COVER FROM TO [PREREQUISITE]: COVER up to its shortlog
# ("Author (N):"), its subject counting the patches, then the shortlog and
# diffstat of FROM..TO, and the series it applies on
cover_letter() {
	local cover=$1 from=$2 to=$3 n
	[ -f "$cover" ] || die "${cover#"$TOP"/} missing"
	n=$(git -C "$stat" rev-list --count "$from..$to")
	awk '/^[^ ].* \([0-9]+\):$/ || /^This series applies on top of / { exit } { print }' "$cover" |
		sed -E "s/^Subject: \[PATCH 0\/[0-9]+\]/Subject: [PATCH 0\/$n]/" |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
	echo
	if [ -n "${4:-}" ]; then
		echo "This series applies on top of the core series,"
		echo "\"$4\"."
		echo
	fi
	echo "$GIT_AUTHOR_NAME ($n):"
	git -C "$stat" log --reverse --format='  %s' "$from..$to"
	echo
	git -C "$stat" diff --stat=72 "$from" "$to"
}
cover_letter "$PATCHES/$COVER" base core >"$work/out/$COVER"
cover_letter "$PATCHES/$FOLLOW/$COVER" core HEAD \
	"[PATCH 0/$(git -C "$stat" rev-list --count base..core)] $core_subject" \
	>"$work/out/$FOLLOW/$COVER"
cd "$TOP"

# Numbered patches that the series no longer has
stale() {
	local f
	for f in "$PATCHES"/[0-9][0-9][0-9][0-9]-*.patch \
		 "$PATCHES/$FOLLOW"/[0-9][0-9][0-9][0-9]-*.patch; do
		[ -e "$f" ] || continue
		echo "$want_series" | grep -qxF "${f#"$PATCHES"/}" || echo "${f#"$PATCHES"/}"
	done
}

case "${1:-}" in
--check)
	for p in $NAMES; do
		if ! cmp -s "$work/out/$p" "$PATCHES/$p"; then
			[ -f "$PATCHES/$p" ] && diff -u "$PATCHES/$p" "$work/out/$p" | head -40 >&2
			die "patches/$KERNEL/$p does not match selftests/, lib/ and patches/selftests.msg: run 'make patches' and commit it"
		fi
	done
	[ -z "$(stale)" ] || die "patches/$KERNEL/ has patches the series no longer has: $(stale | tr '\n' ' '): run 'make patches'"
	[ "$(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series")" = "$want_series" ] ||
		die "patches/$KERNEL/series is not the series generated: run 'make patches' and commit it"
	for c in "$COVER" "$FOLLOW/$COVER"; do
		if ! cmp -s "$work/out/$c" "$PATCHES/$c"; then
			diff -u "$PATCHES/$c" "$work/out/$c" | head -40 >&2 || true
			die "patches/$KERNEL/$c has a stale shortlog or diffstat: run 'make patches' and commit it"
		fi
	done
	;;
*)
	for p in $(stale); do
		rm -f "$PATCHES/$p"
		say "removed patches/$KERNEL/$p"
	done
	for p in $NAMES; do
		if ! cmp -s "$work/out/$p" "$PATCHES/$p"; then
			cp "$work/out/$p" "$PATCHES/$p"
			say "regenerated patches/$KERNEL/$p"
		fi
	done
	echo "$want_series" >"$PATCHES/series"
	for c in "$COVER" "$FOLLOW/$COVER"; do
		if ! cmp -s "$work/out/$c" "$PATCHES/$c"; then
			cp "$work/out/$c" "$PATCHES/$c"
			say "regenerated the shortlog and diffstat of patches/$KERNEL/$c"
		fi
	done
	;;
esac
