#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the selftests part of the series from selftests/ and lib/, the
# single source of truth, and patches/selftests.msg, its commit messages:
# the library first (lib/, then lib/x86/), then one patch per test, each
# file where the KVM selftests keep theirs and each Makefile entry in name
# order.  The output is byte-for-byte reproducible (fixed author, dates, no
# signature).  It also regenerates patches/$KERNEL/series, the [PATCH n/m]
# of the hand-kept KVM patches' subjects, and the shortlog and diffstat
# that end the cover letters.
#
# Two series: the core one (patches/$KERNEL/) and the follow-up one
# (patches/$KERNEL/follow-up/), posted apart on top of it.  Each starts
# with its hand-kept KVM patches (the patch files there that change nothing
# under tools/testing/selftests/, numbered 0001 on), then the generated
# selftests patches, numbered after them.
#
# Every file from selftests/, lib/ and compat/ is passed through unifdef
# before it goes into a patch (render()), so that a series carries its own
# tree's code only: this kernel's fastpath rule (RULE, below), and the
# code of a symbol that a "== +SYMBOL" section of patches/selftests.msg
# turns on only from that section's patch on (its header comment).  A lib
# file that is blank where a series has it (comments and an include guard
# only) waits, out of the series and of the Makefile, for the section that
# gives it code.
#
# Changes to files the KVM selftests already have (kvm_util knobs the tests
# need) are this kernel's own text, paths and context, so each is kept as
# one "git diff" from the top of the kernel tree per kernel,
# compat/$KERNEL/kvm_util/NAME.diff.  It is applied onto pristine copies of
# the files it modifies (scripts/kernel.sh saves them) as the patch of
# section "== kvm_util/NAME" of patches/selftests.msg, where that section is
# ("== kvm_util/NAME K" for kernel K only).
#
# For the test bed only, it also writes $BUILD/$KERNEL/other-rule/: the
# files of the series (as the whole of both series has them) whose code
# differs under the other kernel generation's fastpath rule, rendered with
# that rule; scripts/build-tests.sh builds the wrong-rule tests from them.
#
#   patches.sh          write what changed under patches/$KERNEL/ (and
#                       remove the selftests patches the series lost)
#   patches.sh --check  fail if anything there differs from the sources
set -euo pipefail
. "$(dirname "$0")/common.sh"

KVM=tools/testing/selftests/kvm
# What this kernel's kvm_util calls things that selftests/ and lib/, written
# for mainline, use (where its tests and lists live: ARCH_DIR and
# KVM_MAKEFILE, common.sh), and the fastpath rule its series checks: the
# symbols that lib/x86/ipi_oracle.c's rules are written under, for unifdef
# (RULE), and the other generation's (OTHER_RULE), which only the test
# bed's wrong-rule runs are built with.
# 7.3 renamed guest_random_*() and guest_rng to kvm_random_*() and kvm_rng.
RANDOM_SED='s/kvm_random_/guest_random_/g; s/\bkvm_rng\b/guest_rng/g'
SINGLE_TARGET_RULE="-DKVM_FASTPATH_SINGLE_TARGET -UKVM_FASTPATH_VPMU_GATE"
FAST_DELIVERY_RULE="-UKVM_FASTPATH_SINGLE_TARGET -DKVM_FASTPATH_VPMU_GATE"
# 6.18's fast delivery, before the vPMU gate: the wrong rule for 6.12, whose
# kvm_util has no mediated vPMU to gate on
UNGATED_FAST_DELIVERY_RULE="-UKVM_FASTPATH_SINGLE_TARGET -UKVM_FASTPATH_VPMU_GATE"
case $KERNEL in
6.12)
	# 6.12's selftests spell the kernel types the C way
	API_SED="s/\bgva_t\b/vm_vaddr_t/g; s/\bgpa_t\b/vm_paddr_t/g; $RANDOM_SED;
s/\bu64\b/uint64_t/g; s/\bu32\b/uint32_t/g; s/\bu16\b/uint16_t/g; s/\bu8\b/uint8_t/g;
s/\bs64\b/int64_t/g; s/\bs32\b/int32_t/g"
	RULE=$SINGLE_TARGET_RULE
	OTHER_RULE=$UNGATED_FAST_DELIVERY_RULE ;;
*)
	API_SED=
	RULE=$FAST_DELIVERY_RULE
	OTHER_RULE=$SINGLE_TARGET_RULE ;;
esac
COMPAT=$TOP/compat/$KERNEL	# lib/ files replaced for this kernel's kvm_util,
				# tests/NAME.diff: a test as its kvm_util needs it
KVM_UTIL=$COMPAT/kvm_util	# its changes to kvm_util's own files, NAME.diff
MSGS=$TOP/patches/selftests.msg
COVER=0000-cover-letter.txt
# A KSRC= tree that has the series (kernel.sh): its selftests are its own
if [ -f "$KTREE/.kvmipi-own-series" ]; then
	say "KSRC=$KSRC has the series already: patches/$KERNEL/ is not regenerated from it"
	exit 0
fi
base_mk=$KTREE/.kvmipi-pristine/$KVM/$KVM_MAKEFILE
[ -f "$base_mk" ] || die "no pristine $KVM/$KVM_MAKEFILE: run 'make kernel' first"
need_cmd git git
need_cmd unifdef unifdef
need_cmd perl perl

# The sections, in series order: the library's, this kernel's kvm_util
# changes ("== kvm_util/NAME", or "== kvm_util/NAME K,L" for kernels K and
# L only), the tests, the symbols turned on ("== +SYMBOL"), and the
# follow-up marker among them.
sections=$(awk -v k="$KERNEL" '
	/^=== follow-up$/ { print "@follow-up"; next }
	$1 == "==" && $2 ~ /^kvm_util\// && (NF < 3 || index("," $3 ",", "," k ",")) { print $2 }
	$1 == "==" && $2 ~ /^(lib|lib-x86-model|lib-x86|x2apic_[a-z0-9_]*|\+[A-Za-z0-9_]+)$/ { print $2 }' "$MSGS")
# The unifdef symbols in force: this kernel's rule, and each symbol that a
# "== +SYMBOL" section turns on, off until that section.
DEFS=($RULE)
for s in $(echo "$sections" | sed -n 's/^+//p'); do
	DEFS+=("-U$s")
done
kvm_util_changes=$(echo "$sections" | sed -n 's#^kvm_util/##p')
tests=$(echo "$sections" | grep '^x2apic_' || true)
# each kvm_util change with its diff
for d in "$KVM_UTIL"/*.diff; do
	[ -e "$d" ] || continue
	n=${d##*/}
	grep -qxF "${n%.diff}" <<<"$kvm_util_changes" ||
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
scratch=$KB/patchgen-files
raw=$scratch/raw	# each file of the series as lib/, selftests/, compat/ have it
rm -rf "$work" "$scratch"
mkdir -p "$work/$KVM" "$raw"
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
		{ print }' "$MSGS"
}
# commit KEY: everything changed so far, as the patch of section KEY
commit() {
	local msg
	msg=$(message "$1")
	[ -n "$msg" ] || die "patches/selftests.msg has no section '== $1'"
	git add -A
	printf '%s\n' "$msg" | git commit -q -s -F -
}

# render SRC DEST [DEFS...]: SRC (from selftests/, lib/ or compat/, written
# for mainline) as a series has it: unifdef'd with DEFS (default: those in
# force) and in this kernel's names.  The kvm_util diffs are this kernel's
# text already.
render() {
	local src=$1 dest=$2 rc=0
	shift 2
	[ $# -gt 0 ] || set -- "${DEFS[@]}"
	# unifdef: 0 unchanged, 1 changed, 2 trouble
	unifdef -B "$@" -o "$dest" "$src" || rc=$?
	[ "$rc" -le 1 ] || die "unifdef $* failed on ${src#"$raw"/}"
	[ -z "$API_SED" ] || sed -i -E "$API_SED" "$dest"
}

# blank FILE: it has nothing but comments, blank lines and an include guard
blank() {
	[ "$(perl -0777 -ne 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g;
		s{^[ \t]*#[ \t]*(ifndef|define)[ \t]+\w+[ \t]*$}{}mg;
		s{^[ \t]*#[ \t]*endif\b.*$}{}mg;
		print(/\S/ ? "code" : "blank")' "$1")" = blank ]
}

# show PATH: the file PATH of the series (relative to $KVM) rendered from
# its raw copy with the symbols in force, into the tree; a lib file that is
# blank there stays out until a symbol turned on gives it code (turn_on), a
# blank test is an error.  Prints PATH when the file enters the tree.
show() {
	local path=$1 out=$scratch/rendered
	render "$raw/$path" "$out"
	if blank "$out"; then
		case $path in
		lib/*|include/*) ;;
		*) die "${path##*/} is blank in this series: nothing but comments" ;;
		esac
		[ ! -e "$KVM/$path" ] ||
			die "${path##*/} turned blank in a later section of the series"
		rm -f "$out"
		return 0
	fi
	[ -e "$KVM/$path" ] || echo "$path"
	mv "$out" "$KVM/$path"
}

# put DIR FILE...: each FILE (from selftests/, lib/ or compat/) into the
# series as $KVM/DIR/FILE (show); prints the paths that entered the tree
put() {
	local dir=$1 f
	shift
	mkdir -p "$raw/$dir" "$KVM/$dir"
	for f in "$@"; do
		cp "$f" "$raw/$dir/"
		show "$dir/${f##*/}"
	done
}

# turn_on SYMBOL: the symbol's code on in every file of the series so far;
# a lib .c file that enters the series with it gets its Makefile entry
turn_on() {
	local sym=$1 i path
	for i in "${!DEFS[@]}"; do
		[ "${DEFS[$i]}" != "-U$sym" ] || DEFS[$i]=-D$sym
	done
	for path in $(cd "$raw" && find . -type f | sed 's#^\./##' | sort); do
		show "$path"
	done | while read -r path; do
		case $path in
		lib/$ARCH_DIR/*.c) add_entries "LIBKVM_$ARCH_DIR" "lib/$ARCH_DIR" "$path" ;;
		lib/*.c) add_entries LIBKVM lib "$path" ;;
		esac
	done
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
# compat/$KERNEL/lib and include replace lib/'s files of the same name.
add_lib() {
	local new
	new=$(put lib "$TOP"/lib/*.c
	      [ ! -d "$COMPAT/lib" ] || put lib "$COMPAT"/lib/*.c)
	put include "$TOP"/lib/include/*.h >/dev/null
	[ ! -d "$COMPAT/include" ] || put include "$COMPAT"/include/*.h >/dev/null
	add_entries LIBKVM lib $new
}
add_lib_x86_model() {
	local new
	new=$(put "lib/$ARCH_DIR" "$TOP/lib/x86/$MODEL.c")
	put "include/$ARCH_DIR" "$TOP/lib/include/x86/$MODEL.h" >/dev/null
	add_entries "LIBKVM_$ARCH_DIR" "lib/$ARCH_DIR" $new
}
add_lib_x86() {
	local new
	new=$(put "lib/$ARCH_DIR" "$TOP"/lib/x86/*.c)
	put "include/$ARCH_DIR" "$TOP"/lib/include/x86/*.h >/dev/null
	add_entries "LIBKVM_$ARCH_DIR" "lib/$ARCH_DIR" $new
}

# The library, the kvm_util changes and the tests, in the order of their
# sections in patches/selftests.msg, each test with its Makefile entry in name order
# before xapic_ipi_test; the bench is built, not run
# (TEST_GEN_PROGS_EXTENDED, as nx_huge_pages_test).  The sections after
# the "=== follow-up" line make the follow-up series, posted apart on top
# of the core one.
for t in $(cd "$TOP/selftests/kvm/x86" && ls *.c | sed 's/\.c$//'); do
	grep -qx "$t" <<<"$tests" || die "selftests/kvm/x86/$t.c has no section in patches/selftests.msg"
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
	+*)
		turn_on "${s#+}"
		# no file has the symbol's code (yet): no patch
		if [ -z "$(git status --porcelain)" ]; then
			say "warning: no file has code under ${s#+}: section '== $s' makes no patch"
			continue
		fi
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
	mkdir -p "$raw/$ARCH_DIR"
	cp "$TOP/selftests/kvm/x86/$t.c" "$raw/$ARCH_DIR/"
	# the test as this kernel's older kvm_util needs it
	if [ -f "$COMPAT/tests/$t.diff" ]; then
		patch -s -p1 -d "$raw/$ARCH_DIR" --no-backup-if-mismatch <"$COMPAT/tests/$t.diff" ||
			die "compat/$KERNEL/tests/$t.diff does not apply to selftests/kvm/x86/$t.c"
	fi
	show "$ARCH_DIR/$t.c" >/dev/null
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

# The hand-kept KVM patches of the series in DIR (PREFIX DIR): its patch
# files that change nothing under $KVM/, which come first, 0001 on
hand_kept() {
	local prefix=$1 dir=$2 f n=0
	for f in "$dir"/[0-9][0-9][0-9][0-9]-*.patch; do
		[ -e "$f" ] || continue
		! grep -q "^+++ b/$KVM/" "$f" || continue
		n=$((n + 1))
		[[ ${f##*/} == $(printf '%04d' $n)-* ]] ||
			die "patches/$KERNEL/$prefix${f##*/}: a hand-kept KVM patch must be number $n of its series: they come first"
		echo "$prefix${f##*/}"
	done
}
CORE_KEPT=$(hand_kept "" "$PATCHES")
FOLLOW_KEPT=$(hand_kept "$FOLLOW/" "$PATCHES/$FOLLOW")
n_core_kept=$(echo "$CORE_KEPT" | grep -c . || true)
n_follow_kept=$(echo "$FOLLOW_KEPT" | grep -c . || true)

mkdir -p "$work/out/$FOLLOW"
git format-patch -q --start-number $((n_core_kept + 1)) --no-signature -o "$work/out" \
	base.."$core_tip"
git format-patch -q --start-number $((n_follow_kept + 1)) --no-signature \
	-o "$work/out/$FOLLOW" "$core_tip"..HEAD
CORE_NAMES=$(cd "$work/out" && ls *.patch)
FOLLOW_NAMES=$(cd "$work/out/$FOLLOW" && ls *.patch | sed "s#^#$FOLLOW/#")

# The hand-kept patches with their [PATCH n/m]: their place in their series
number_kept() {	# number_kept TOTAL NAME...
	local m=$1 n=0 p
	shift
	for p in "$@"; do
		n=$((n + 1))
		# padded as git format-patch pads the generated ones' numbers
		sed -E "0,/^Subject: \[PATCH( [0-9]+\/[0-9]+)?\]/s//Subject: [PATCH $(printf "%0${#m}d" $n)\/$m]/" \
			"$PATCHES/$p" >"$work/out/$p"
	done
}
number_kept $((n_core_kept + $(echo "$CORE_NAMES" | wc -l))) $CORE_KEPT
number_kept $((n_follow_kept + $(echo "$FOLLOW_NAMES" | wc -l))) $FOLLOW_KEPT
CORE_NAMES=$(printf '%s\n' $CORE_KEPT $CORE_NAMES)
FOLLOW_NAMES=$(printf '%s\n' $FOLLOW_KEPT $FOLLOW_NAMES)
NAMES="$CORE_NAMES
$FOLLOW_NAMES"
want_series=$NAMES

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
for p in $CORE_NAMES; do
	git -C "$stat" am -q --whitespace=error "$work/out/$p" || die "$p does not apply cleanly to the pristine files"
done
git -C "$stat" tag core
for p in $FOLLOW_NAMES; do
	git -C "$stat" am -q --whitespace=error "$work/out/$p" || die "$p does not apply cleanly to the pristine files"
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

# The test bed's wrong-rule files: each file of the series (as the whole of
# both series has it) whose code differs under the other generation's rule,
# rendered with that rule, and a lib file that only that rule gives code,
# with the KVM Makefile that builds it (the patches are made: the tree
# here is scratch now)
other=$KB/other-rule
rm -rf "$other"
mkdir -p "$other"
rule=($RULE)
for path in $(cd "$raw" && find . -type f | sed 's#^\./##' | sort); do
	render "$raw/$path" "$scratch/other" $OTHER_RULE "${DEFS[@]:${#rule[@]}}"
	if [ -e "$KVM/$path" ]; then
		! cmp -s "$scratch/other" "$KVM/$path" || continue
	else
		! blank "$scratch/other" || continue
		case $path in
		lib/$ARCH_DIR/*.c) add_entries "LIBKVM_$ARCH_DIR" "lib/$ARCH_DIR" "$path" ;;
		lib/*.c) add_entries LIBKVM lib "$path" ;;
		esac
	fi
	mkdir -p "$other/$(dirname "$path")"
	mv "$scratch/other" "$other/$path"
done
git diff --quiet -- "$KVM/$KVM_MAKEFILE" || cp "$KVM/$KVM_MAKEFILE" "$other/"
cd "$TOP"

# Numbered patches that the series no longer has
stale() {
	local f
	for f in "$PATCHES"/[0-9][0-9][0-9][0-9]-*.patch \
		 "$PATCHES/$FOLLOW"/[0-9][0-9][0-9][0-9]-*.patch; do
		[ -e "$f" ] || continue
		grep -qxF "${f#"$PATCHES"/}" <<<"$want_series" || echo "${f#"$PATCHES"/}"
	done
}

case "${1:-}" in
--check)
	for p in $NAMES; do
		if ! cmp -s "$work/out/$p" "$PATCHES/$p"; then
			[ -f "$PATCHES/$p" ] && diff -u "$PATCHES/$p" "$work/out/$p" | head -40 >&2
			die "patches/$KERNEL/$p does not match selftests/, lib/ and patches/selftests.msg (or a hand-kept patch's [PATCH n/m] its place): run 'make patches' and commit it"
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
