#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the selftests part of the series from selftests/ and lib/, the
# single source of truth, and patches/selftests.msg, its commit messages:
# the library first (lib/, then lib/x86/), then one patch per test, each
# file where the KVM selftests keep theirs and each Makefile entry in name
# order.  The output is byte-for-byte reproducible (fixed author, dates, no
# signature; the author and Signed-off-by a placeholder: SIGN=1 also
# writes copies of the posted series signed with the user's git identity
# to $BUILD/$KERNEL/signed/).  It also regenerates patches/$KERNEL/series,
# the [PATCH n/m] of the hand-kept KVM patches' subjects, and the shortlog
# and diffstat that end the cover letters.
#
# Three kinds of series, each in a directory of its own: the core one
# (patches/$KERNEL/), the regression series (patches/$KERNEL/regression/
# NN-NAME/, each a test or a few that guard a fix or a clause), and the
# test bed's (patches/$KERNEL/testbed/: the fastpath switch and what needs
# it, not posted).  patches/selftests.msg says which sections make which
# ("=== regression NN-NAME", "=== testbed"), and the cover letter of each
# but the core.  Each series applies on the ones before it, in that
# order, which its cover letter states (and, as git format-patch --base
# does, with base-commit and prerequisite-patch-id lines).  To post, each
# regression series is also made on the core and on what it needs only
# ("=== regression NN-NAME needs MM-NAME"), in $BUILD/$KERNEL/post/ with
# the core, its cover letter and a "series" file of what to git am.
# Each starts with its hand-kept KVM patches (the patch files there that
# change nothing under tools/testing/selftests/, numbered 0001 on), then
# the generated selftests patches, numbered after them.
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
#                       remove the selftests patches the series lost):
#                       make patches, the only writer of patches/
#   patches.sh --check  fail if anything there differs from the sources
#   patches.sh --render write the whole series, as the sources render it,
#                       to $BUILD/$KERNEL/series-rendered/ (RENDERED,
#                       common.sh), which the build applies (make run,
#                       make check): the checkout is left as it is
set -euo pipefail
. "$(dirname "$0")/common.sh"
case ${1:-} in
"" | --check | --render) ;;
*) die "usage: patches.sh [--check | --render]" ;;
esac

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
	if [ "${1:-}" = --render ]; then
		# what is not in the tree yet is applied as committed
		rm -rf "$RENDERED"
		cp -r "$PATCHES" "$RENDERED"
	fi
	exit 0
fi
base_mk=$KTREE/.kvmipi-pristine/$KVM/$KVM_MAKEFILE
[ -f "$base_mk" ] || die "no pristine $KVM/$KVM_MAKEFILE: run 'make kernel' first"
need_cmd git git
need_cmd unifdef unifdef
need_cmd perl perl

# Files under patches/$KERNEL/ that the series no longer have: numbered
# patches and cover letters (a series' directory that is gone included)
stale() {
	local f
	find "$PATCHES" -mindepth 1 \( -name '[0-9][0-9][0-9][0-9]-*.patch' -o -name "$COVER" \) |
	sed "s#^$PATCHES/##" | sort | while read -r f; do
		grep -qxF "$f" <<<"$want_series
$COVERS" || echo "$f"
	done
}

# SIGN=1: the series as the user posts it, in $KB/signed/: the
# placeholder author and Signed-off-by replaced by git config's user.name
# and user.email, and the cover letters' note on re-signing left out.
sign() {
	local name email out=$KB/signed
	name=$(cd "$TOP" && git config user.name) && email=$(cd "$TOP" && git config user.email) ||
		die "SIGN=1: set your identity first: git config user.name 'Your Name'; git config user.email you@example.org"
	rm -rf "$out"
	mkdir -p "$out"
	(cd "$postout" && cp --parents $POSTED "$out/")
	(cd "$out" && PH_NAME=$GIT_AUTHOR_NAME PH_EMAIL=$GIT_AUTHOR_EMAIL NAME=$name EMAIL=$email \
		RESIGN=$RESIGN perl -0777 -pi -e '
		s/\Q$ENV{PH_NAME}\E\n? *<\Q$ENV{PH_EMAIL}\E>/$ENV{NAME} <$ENV{EMAIL}>/g;
		s/^\Q$ENV{PH_NAME}\E \((\d+)\):$/$ENV{NAME} ($1):/mg;
		s/^\Q$ENV{RESIGN}\E\n//mg' $POSTED)
	say "the core and each regression series as posted alone (build/$KERNEL/post/), signed by $name <$email>: ${out#"$TOP"/}/ (post these; the committed series keeps the placeholder)"
}

# finish MODE: what MODE does with the series made in $work/out: compare,
# render or write (NAMES, COVERS and want_series name its files)
finish() {
	case "$1" in
	--check)
		for p in $NAMES; do
			if ! cmp -s "$work/out/$p" "$PATCHES/$p"; then
				[ ! -f "$PATCHES/$p" ] || diff -u "$PATCHES/$p" "$work/out/$p" | head -40 >&2 || true
				die "patches/$KERNEL/$p does not match selftests/, lib/ and patches/selftests.msg (or a hand-kept patch's [PATCH n/m] its place): run 'make patches' and commit it"
			fi
		done
		[ -z "$(stale)" ] || die "patches/$KERNEL/ has files the series no longer have: $(stale | tr '\n' ' '): run 'make patches' and commit it"
		[ "$(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series")" = "$want_series" ] ||
			die "patches/$KERNEL/series is not the series generated: run 'make patches' and commit it"
		for c in $COVERS; do
			if ! cmp -s "$work/out/$c" "$PATCHES/$c"; then
				diff -u "$PATCHES/$c" "$work/out/$c" | head -40 >&2 || true
				die "patches/$KERNEL/$c is not the cover letter generated (its text in patches/selftests.msg, shortlog, diffstat, base): run 'make patches' and commit it"
			fi
		done
		;;
	--render)
		rm -rf "$RENDERED.tmp"
		mkdir -p "$RENDERED.tmp"
		(cd "$work/out" && cp --parents $NAMES $COVERS "$RENDERED.tmp/")
		echo "$want_series" >"$RENDERED.tmp/series"
		rm -rf "$RENDERED"
		mv "$RENDERED.tmp" "$RENDERED"
		say "rendered the series into ${RENDERED#"$TOP"/}/ (patches/$KERNEL/ left as it is)"
		;;
	"")
		for p in $(stale); do
			rm -f "$PATCHES/$p"
			say "removed patches/$KERNEL/$p"
		done
		find "$PATCHES" -mindepth 1 -type d -empty -delete
		for p in $NAMES $COVERS; do
			if ! cmp -s "$work/out/$p" "$PATCHES/$p"; then
				mkdir -p "$(dirname "$PATCHES/$p")"
				cp "$work/out/$p" "$PATCHES/$p"
				say "regenerated patches/$KERNEL/$p"
			fi
		done
		echo "$want_series" >"$PATCHES/series"
		[ "${SIGN:-0}" = 0 ] || sign
		;;
	esac
}

# The series is made once for the same sources: make check's patches phase
# (--check), its build (--render) and its unit phase (series-hygiene.sh,
# --check) make the same series, each a minute on a slow machine.  Its
# inputs' checksum (the sources, patches/, this kernel's pristine files and
# version, this script) is kept with what it made ($KB/patchgen.stamp,
# written last; the file names in $KB/patchgen.vars), and --check and
# --render use $KB/patchgen/out, $KB/post and $KB/other-rule as they are
# when it matches.  make patches always makes the series anew.
inputs_stamp() {
	{
		echo "$KERNEL"
		cat "$TOP/scripts/patches.sh" "$TOP/scripts/common.sh"
		(cd "$TOP" && find selftests lib "compat/$KERNEL" patches/selftests.msg "patches/$KERNEL" \
			-type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum)
		(cd "$KTREE/.kvmipi-pristine" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum)
		head -n 6 "$KTREE/Makefile"
		cat "$KTREE/.kvmipi-origin" 2>/dev/null || true
		git --version
	} | md5sum
}
work=$KB/patchgen
STAMP=$KB/patchgen.stamp
stamp=$(inputs_stamp)
if [ -n "${1:-}" ] && [ -f "$KB/patchgen.vars" ] && [ -d "$work/out" ] && [ -d "$KB/post" ] &&
   [ -d "$KB/other-rule" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$stamp" ]; then
	# shellcheck source=/dev/null # written below
	. "$KB/patchgen.vars"
	say "the series as made before from the same sources (${work#"$TOP"/}/out)"
	finish "$1"
	exit 0
fi
rm -f "$STAMP" "$KB/patchgen.vars"

# The sections, in series order: the library's, this kernel's kvm_util
# changes ("== kvm_util/NAME", or "== kvm_util/NAME K,L" for kernels K and
# L only), the tests, the symbols turned on ("== +SYMBOL"), and where each
# series but the core starts ("@regression/NN-NAME", "@testbed").
sections=$(awk -v k="$KERNEL" '
	/^=== regression [0-9][0-9]-[a-z0-9-]+( alone( kvm_util\/[a-z0-9-]+)*)?( needs( (\[[0-9.,]+\])?[0-9][0-9]-[a-z0-9-]+)+)?$/ { print "@regression/" $3; next }
	/^=== testbed$/ { print "@testbed"; next }
	/^===/ { print "@bad:" $0; next }
	$1 == "==" && $2 ~ /^kvm_util\// && (NF < 3 || index("," $3 ",", "," k ",")) { print $2 }
	$1 == "==" && $2 ~ /^(lib|lib-x86-model|lib-x86|x2apic_[a-z0-9_]*|\+[A-Za-z0-9_]+)$/ { print $2 }' "$MSGS")
# The unifdef symbols in force: this kernel's rule, and each symbol that a
# "== +SYMBOL" section turns on, off until that section.
DEFS=($RULE)
for s in $(echo "$sections" | sed -n 's/^+//p'); do
	DEFS+=("-U$s")
done
bad=$(echo "$sections" | sed -n 's/^@bad://p')
[ -z "$bad" ] || die "patches/selftests.msg: '$bad' is neither '=== regression NN-NAME [alone [kvm_util/NAME...]] [needs NN-NAME...]' nor '=== testbed'"
# What each regression series needs besides the core ("=== regression
# NN-NAME needs MM-NAME...", "[K,L]MM-NAME" on kernels K and L only): the
# series it is made on when posted alone, each with what it needs in turn.
declare -A NEEDS=()
while read -r dir needs; do
	NEEDS[$dir]=$needs
done < <(awk -v kernel="$KERNEL" '/^=== regression / {
		for (at = 4; at <= NF && $at != "needs"; at++)
			;
		if (at > NF)
			next
		printf "regression/%s", $3
		for (i = at + 1; i <= NF; i++) {
			n = $i
			if (match(n, /^\[[0-9.,]+\]/)) {
				if (index("," substr(n, 2, RLENGTH - 2) ",", "," kernel ",") == 0)
					continue
				n = substr(n, RLENGTH + 1)
			}
			printf " regression/%s", n
		}
		print "" }' "$MSGS")
# The regression series posted on the release itself ("=== regression
# NN-NAME alone"), not on the core: each takes, as patches of its own
# before its tests, the kvm_util changes its "===" line names
# ("kvm_util/NAME", where this kernel has that change) and the library
# files its tests include (section "== lib:NN-NAME", its message).
declare -A ALONE=()
while read -r dir uses; do
	ALONE[$dir]=" $uses "
done < <(awk '/^=== regression / && $4 == "alone" {
		printf "regression/%s", $3
		for (i = 5; i <= NF && $i != "needs"; i++)
			printf " %s", $i
		print "" }' "$MSGS")
kvm_util_changes=$(echo "$sections" | sed -n 's#^kvm_util/##p')
for d in "${!ALONE[@]}"; do
	for n in ${ALONE[$d]}; do
		ls "$TOP"/compat/*/"$n.diff" >/dev/null 2>&1 ||
			die "patches/selftests.msg: ${d#regression/} uses $n, which no compat/*/$n.diff is"
	done
done
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
echo /out/ >.git/info/exclude	# the patches made here, not of the series
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
# (TEST_GEN_PROGS_EXTENDED, as nx_huge_pages_test).  Each "===" line ends
# a series (its last commit here, TIPS) and starts the next (DIRS).
for t in $(cd "$TOP/selftests/kvm/x86" && ls *.c | sed 's/\.c$//'); do
	grep -qx "$t" <<<"$tests" || die "selftests/kvm/x86/$t.c has no section in patches/selftests.msg"
done
DIRS=(.)	# each series' directory under patches/$KERNEL, in order
TIPS=()		# and its last commit here
START_DEFS=("${DEFS[*]}")	# and the symbols in force where it starts
# section S: the patch of section S, made in the tree as it is
section() {
	local s=$1 t
	case $s in
	lib|lib-x86-model|lib-x86)
		"add_${s//-/_}"
		commit "$s"
		return ;;
	+*)
		turn_on "${s#+}"
		# no file has the symbol's code (yet): no patch
		if [ -z "$(git status --porcelain)" ]; then
			say "warning: no file has code under ${s#+}: section '== $s' makes no patch"
			return
		fi
		commit "$s"
		return ;;
	kvm_util/*)
		git apply --whitespace=error "$KVM_UTIL/${s#kvm_util/}.diff" ||
			die "compat/$KERNEL/kvm_util/${s#kvm_util/}.diff does not apply to the pristine files"
		commit "$s"
		return ;;
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
}
SECTIONS=("")	# each series' sections
for s in $sections; do
	case $s in
	@*)
		! printf '%s\n' "${DIRS[@]}" | grep -qxF "${s#@}" ||
			die "patches/selftests.msg starts series ${s#@} twice"
		TIPS+=("$(git rev-parse HEAD)")
		DIRS+=("${s#@}")
		SECTIONS+=("")
		START_DEFS+=("${DEFS[*]}")
		# the core's state, which each series posted alone starts from
		if [ ${#DIRS[@]} -eq 2 ]; then
			CORE_DEFS=("${DEFS[@]}")
			cp -a "$raw" "$scratch/raw-core"	# raw-I: series I's, posted
		fi
		continue ;;
	esac
	SECTIONS[-1]+=" $s"
	section "$s"
done
TIPS+=("$(git rev-parse HEAD)")

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
# The hand-kept patches with their [PATCH n/m]: their place in their series
number_kept() {	# number_kept OUT TOTAL NAME...: into OUT/NAME
	local out=$1 m=$2 n=0 p
	shift 2
	for p in "$@"; do
		n=$((n + 1))
		# padded as git format-patch pads the generated ones' numbers
		sed -E "0,/^Subject: \[PATCH( [0-9]+\/[0-9]+)?\]/s//Subject: [PATCH $(printf "%0${#m}d" $n)\/$m]/" \
			"$PATCHES/$p" >"$out/$p"
	done
}
# write_series OUT DIR PREFIX FROM TO: series DIR's patches into OUT/DIR,
# its hand-kept ones first, then the commits FROM..TO; prints their names
# (PREFIX, then the file's)
write_series() {
	local out=$1 d=$2 prefix=$3 from=$4 to=$5 kept n_kept gen
	kept=$(hand_kept "$prefix" "$PATCHES/$d")
	n_kept=$(echo "$kept" | grep -c . || true)
	mkdir -p "$out/$d"
	[ "$from" = "$to" ] ||
		git format-patch -q --numbered --start-number $((n_kept + 1)) --no-signature \
			-o "$out/$d" "$from..$to"
	gen=$(cd "$out/$d" && find . -maxdepth 1 -name '*.patch' | sed "s#^\./#$prefix#" | sort)
	number_kept "$out" $((n_kept + $(echo "$gen" | grep -c . || true))) $kept
	printf '%s\n' $kept $gen
}
# Each series' patches, hand-kept ones first: SERIES_NAMES[i], the patch
# files of series i relative to patches/$KERNEL; NAMES, all of them, in
# the order they apply.
NAMES= SERIES_NAMES=()
from=base
for i in "${!DIRS[@]}"; do
	d=${DIRS[$i]}
	prefix=${d#.}
	prefix=${prefix:+$prefix/}
	SERIES_NAMES[$i]=$(write_series "$work/out" "$d" "$prefix" "$from" "${TIPS[$i]}")
	from=${TIPS[$i]}
	NAMES=$NAMES${NAMES:+$'\n'}${SERIES_NAMES[$i]}
done
want_series=$NAMES

# index_of DIR: the index of series DIR in DIRS
index_of() {
	local i
	for i in "${!DIRS[@]}"; do
		[ "${DIRS[$i]}" != "$1" ] || { echo "$i"; return 0; }
	done
	return 1
}
# closure DIR: the series that DIR needs, directly or not, in series order
closure() {
	local n all=" "
	for n in ${NEEDS[$1]:-}; do
		all="$all$(closure "$n" | tr '\n' ' ')$n "
	done
	for n in "${DIRS[@]}"; do
		[[ $all != *" $n "* ]] || echo "$n"
	done
}
# Each series named in a "needs" comes before the one that needs it; what
# a series needs is a chain, each made on the one before it, so that posted
# alone each applies on exactly what it was made on.
for d in "${!NEEDS[@]}"; do
	for n in ${NEEDS[$d]}; do
		index_of "$n" >/dev/null && [ "$(index_of "$n")" -lt "$(index_of "$d")" ] ||
			die "patches/selftests.msg: ${d#regression/} needs ${n#regression/}, which is not a regression series before it"
	done
done
# A series posted on the release needs only series posted so too, and one
# made on the core none of those: each chain is made on one base.
for d in "${!NEEDS[@]}"; do
	for n in ${NEEDS[$d]}; do
		{ [ -n "${ALONE[$d]:-}" ] && [ -n "${ALONE[$n]:-}" ]; } ||
		{ [ -z "${ALONE[$d]:-}" ] && [ -z "${ALONE[$n]:-}" ]; } ||
			die "patches/selftests.msg: ${d#regression/} needs ${n#regression/}, but one of them is posted on the release alone and the other on the core"
	done
done
for d in "${DIRS[@]}"; do
	before=""
	for n in $(closure "$d"); do
		[ "$(closure "$n" | tr '\n' ' ')" = "$before" ] ||
			die "patches/selftests.msg: ${d#regression/} needs ${n#regression/}, which is not made on exactly the core and $(echo "${before:-nothing else}" | sed 's#regression/##g; s/ *$//'): what a series needs must be a chain, each series needing the one before it"
		before="$before$n "
	done
done

# Each cover letter ends with its series' shortlog and diffstat: the
# series applied with git am onto the pristine copies of the files it
# touches, each on the ones before it (tag sI: series I's last patch).
stat=$KB/coverstat
rm -rf "$stat"
mkdir -p "$stat"
cp -r "$KTREE/.kvmipi-pristine/." "$stat/"
git -C "$stat" init -q
git -C "$stat" add -A
git -C "$stat" commit -q -m base
git -C "$stat" tag base
for i in "${!DIRS[@]}"; do
	for p in ${SERIES_NAMES[$i]}; do
		git -C "$stat" am -q --whitespace=error "$work/out/$p" ||
			die "$p does not apply cleanly to the pristine files and the series before it"
	done
	git -C "$stat" tag "s$i"
done

# The release the series are made against, as its upstream tag: Debian's
# linux-source is a tarball, with no commit to name (and Debian's patches
# on top of the release), so base-commit names the tag.
kver=$(make -s -C "$KTREE" kernelversion)
base_tag=v$(sed -E 's/^([0-9]+\.[0-9]+)\.0(-rc[0-9]+)?$/\1\2/' <<<"$kver")
case $KERNEL in
6.12) made_on="Debian's linux-source-6.12 (Linux $kver with Debian's patches)" ;;
*) made_on="Debian's linux-source-$KERNEL (Linux $kver)" ;;
esac
PLACEHOLDER="$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>"
RESIGN="Author and Signed-off-by are a placeholder: SIGN=1 make patches writes
a copy signed with your git identity to build/$KERNEL/signed/."
# subject I: series I's subject, as its cover letter says it
subject_of() {
	if [ "$1" -eq 0 ]; then
		sed -n 's/^Subject: \[PATCH 0\/[0-9]*\] //p' "$PATCHES/$COVER"
	else
		cover_text "${DIRS[$1]}" | head -n 1
	fi
}
# cover_text DIR: the cover letter of series DIR in patches/selftests.msg,
# from its "===" line to its first section, lines for other kernels left
# out ("[K] ")
cover_text() {
	local key
	case $1 in
	regression/*) key="=== regression ${1#regression/}" ;;
	*) key="=== $1" ;;
	esac
	awk -v key="$key" -v kernel="$KERNEL" '
		/^==/ { on = ($0 == key || index($0, key " ") == 1); next }
		!on { next }
		match($0, /^\[[0-9.,]+\]( |$)/) {
			if (index("," substr($0, 2, index($0, "]") - 2) ",", "," kernel ",") == 0)
				next
			$0 = substr($0, RLENGTH + 1)
		}
		{ print }' "$MSGS" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}
# cover_letter I: series I's cover letter.  The core's is its hand-kept
# text up to its shortlog or to what is generated here; the others' come
# from patches/selftests.msg.  Then, for those, a changelog and the series
# they apply on; for every one the base, the shortlog and diffstat, and
# base-commit (with a prerequisite-patch-id per patch before the series).
declare -A PATCH_ID=()	# each commit's in $stat, once
cover_letter() {	# cover_letter I [post]
	local i=$1 post=${2:-} from=base to=s$1 n j c before needs
	if [ -n "$post" ]; then
		from=pb$i to=p$i
	elif [ "$i" -gt 0 ]; then
		from=s$((i - 1))
	fi
	n=$(git -C "$stat" rev-list --count "$from..$to")
	if [ "$i" -eq 0 ]; then
		[ -f "$PATCHES/$COVER" ] || die "patches/$KERNEL/$COVER missing"
		awk '/^[^ ].* \([0-9]+\):$/ || /^This series applies on top of / ||
		     /^The series is made against / { exit } { print }' "$PATCHES/$COVER" |
			sed -E "s/^Subject: \[PATCH 0\/[0-9]+\]/Subject: [PATCH 0\/$n]/" |
			sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
	else
		[ -n "$(cover_text "${DIRS[$i]}")" ] ||
			die "patches/selftests.msg has no cover letter for ${DIRS[$i]} (text after its '===' line)"
		echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
		echo "From: $PLACEHOLDER"
		echo "Subject: [PATCH 0/$n] $(subject_of "$i")"
		cover_text "${DIRS[$i]}" | tail -n +2
		echo
		echo "Changes since the last version: new as a series of its own; its"
		echo "patches were in the follow-up series \"KVM: x86: Add a switch for the"
		echo "x2APIC ICR fastpath, and more tests of IPIs\", posted with the core."
	fi
	echo
	needs=
	[ "$i" -eq 0 ] || needs=$(closure "${DIRS[$i]}")
	if [ -n "$post" ] && [ -n "${ALONE[${DIRS[$i]}]:-}" ]; then
		if [ -n "$needs" ]; then
			echo "This series applies on top of these, in this order:"
			for c in $needs; do
				j=$(index_of "$c")
				c=$(echo "${POST_NAMES[$j]}" | grep -c .)
				echo "  ${DIRS[$j]}, $c patch$([ "$c" -eq 1 ] || echo es):"
				echo "    $(subject_of "$j")"
			done
			echo
		fi
	elif [ "$i" -gt 0 ]; then
		if [ -n "$post" ]; then
			before="0 $(for c in $needs; do index_of "$c"; done)"
			echo "This series applies on top of these, in this order:"
		else
			before=$(seq 0 $((i - 1)))
			echo "This series applies on top of these, in this order (patches/$KERNEL/):"
		fi
		for j in $before; do
			if [ "$j" -eq 0 ]; then
				c=$(git -C "$stat" rev-list --count base..s0)
			elif [ -n "$post" ]; then
				c=$(echo "${POST_NAMES[$j]}" | grep -c .)
			else
				c=$(git -C "$stat" rev-list --count "s$((j - 1))..s$j")
			fi
			echo "  ${DIRS[$j]/#./the core series}, $c patch$([ "$c" -eq 1 ] || echo es):"
			echo "    $(subject_of $j)"
		done
		echo
		if [ -z "$post" ] && [ -n "${ALONE[${DIRS[$i]}]:-}" ]; then
			echo "Posted alone, it is made on the release$(for c in $needs; do printf ', %s' "${c#regression/}"; done) only, with the kvm_util and library patches its tests need: make patches writes that copy to build/$KERNEL/post/${DIRS[$i]}/." | fmt -w 72
			echo
		elif [ -z "$post" ] && [ "${DIRS[$i]}" != testbed ]; then
			echo "Posted alone, it is made on the core series$(for c in $needs; do printf ', %s' "${c#regression/}"; done) only: make patches writes that copy to build/$KERNEL/post/${DIRS[$i]}/." | fmt -w 72
			echo
		fi
	fi
	echo "The series is made against $base_tag, as $made_on has it: a tarball without commits, so base-commit names the release's tag." | fmt -w 72
	echo "$RESIGN"
	echo
	echo "$GIT_AUTHOR_NAME ($n):"
	git -C "$stat" log --reverse --format='  %s' "$from..$to"
	echo
	git -C "$stat" diff --stat=72 "$from" "$to"
	echo
	echo "base-commit: $base_tag"
	for c in $(git -C "$stat" rev-list --reverse "base..$from"); do
		[ -n "${PATCH_ID[$c]:-}" ] ||
			PATCH_ID[$c]=$(git -C "$stat" show "$c" | git patch-id --stable | cut -d' ' -f1)
		echo "prerequisite-patch-id: ${PATCH_ID[$c]}"
	done
}
for i in "${!DIRS[@]}"; do
	cover_letter "$i" >"$work/out/${DIRS[$i]}/$COVER"
done
COVERS=$(for d in "${DIRS[@]}"; do echo "${d#./}/$COVER"; done | sed 's#^\./##; s#^/##')

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

# lib_headers FILE...: the library's headers that FILE includes, directly
# or through the library (NAME, or x86/NAME for lib/include/x86/NAME.h)
lib_headers() {
	local todo=("$@") seen=" " f h x
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for h in $(sed -n 's/^#include "\([a-z0-9_]*\)\.h"$/\1/p' "$f"); do
			for x in "" x86/; do
				[ -f "$TOP/lib/include/$x$h.h" ] && [[ $seen != *" $x$h "* ]] || continue
				seen="$seen$x$h "
				echo "$x$h"
				todo+=("$TOP/lib/include/$x$h.h")
				[ ! -f "$TOP/lib/$x$h.c" ] || todo+=("$TOP/lib/$x$h.c")
			done
		done
	done
}
# alone_prerequisites DIR: the patches that series DIR, posted on the
# release, makes first: each kvm_util change its "===" line names that
# this kernel has and the tree lacks, then the library files its tests
# include that the tree lacks (section "== lib:NN-NAME")
alone_prerequisites() {
	local d=$1 i n s tests=() h x src c new=
	i=$(index_of "$d")
	for n in ${ALONE[$d]}; do
		grep -qxF "${n#kvm_util/}" <<<"$kvm_util_changes" || continue
		git apply --check "$KVM_UTIL/${n#kvm_util/}.diff" 2>/dev/null || continue
		git apply --whitespace=error "$KVM_UTIL/${n#kvm_util/}.diff"
		commit "$n"
	done
	for s in ${SECTIONS[$i]}; do
		[[ $s != x2apic_* ]] || tests+=("$TOP/selftests/kvm/x86/$s.c")
	done
	[ ${#tests[@]} -gt 0 ] || return 0
	for h in $(lib_headers "${tests[@]}"); do
		case $h in
		x86/*) x=/$ARCH_DIR src=x86/ h=${h#x86/} ;;
		*) x= src= ;;
		esac
		[ ! -e "$raw/include$x/$h.h" ] || continue
		c=$TOP/lib/$src$h.c
		if [ -z "$x" ] && [ -f "$COMPAT/lib/$h.c" ]; then
			c=$COMPAT/lib/$h.c
		fi
		if [ -z "$x" ] && [ -f "$COMPAT/include/$h.h" ]; then
			put include "$COMPAT/include/$h.h" >/dev/null
		else
			put "include$x" "$TOP/lib/include/$src$h.h" >/dev/null
		fi
		[ ! -f "$c" ] || new="$new $(put "lib$x" "$c")"
	done
	for c in $new; do
		case $c in
		lib/$ARCH_DIR/*) add_entries "LIBKVM_$ARCH_DIR" "lib/$ARCH_DIR" "$c" ;;
		lib/*) add_entries LIBKVM lib "$c" ;;
		esac
	done
	[ -z "$(git status --porcelain)" ] || commit "lib:${d#regression/}"
}

# Each regression series as it is posted alone, in $KB/post/ with the core
# series: made on the core and on what it needs ("=== regression NN-NAME
# needs ..."), not on every series before it as in patches/$KERNEL/, where
# the series apply one on another for the test bed; or, "=== regression
# NN-NAME alone", on the release and what it needs, with the kvm_util and
# library patches of its own that it needs (alone_prerequisites).  Each is
# applied with git am on the core (or the release) and the posted copies
# of what it needs, as a maintainer would (tags pbI, what it applies on,
# and pI).
POST_NAMES=() POST_TIPS=() POST_DEFS=()
postout=$KB/patchgen-post
rm -rf "$postout"
for i in "${!DIRS[@]}"; do
	d=${DIRS[$i]}
	[[ $d == regression/* ]] || continue
	# made on the last series it needs as that is posted (what it needs is
	# a chain), or on the core
	last=$(closure "$d" | tail -n 1)
	if [ -n "$last" ]; then
		j=$(index_of "$last")
		from=${POST_TIPS[$j]} on=p$j
		read -ra DEFS <<<"${POST_DEFS[$j]}"
	elif [ -n "${ALONE[$d]:-}" ]; then
		j=release from=base on=base
		read -ra DEFS <<<"${START_DEFS[$i]}"
		rm -rf "$scratch/raw-$j"
		mkdir -p "$scratch/raw-$j"
	else
		j=core from=${TIPS[0]} on=s0
		DEFS=("${CORE_DEFS[@]}")
	fi
	git checkout -q -f --detach "$from"
	git clean -fdq -- "$KVM"
	rm -rf "$raw"
	cp -a "$scratch/raw-$j" "$raw"
	based=$from
	[ -z "${ALONE[$d]:-}" ] || alone_prerequisites "$d"
	for s in ${SECTIONS[$i]}; do
		section "$s"
	done
	POST_TIPS[$i]=$(git rev-parse HEAD)
	POST_NAMES[$i]=$(write_series "$postout" "$d" "$d/" "$based" "${POST_TIPS[$i]}")
	POST_DEFS[$i]=${DEFS[*]}
	cp -a "$raw" "$scratch/raw-$i"

	git -C "$stat" checkout -q -f --detach "$on"
	git -C "$stat" tag "pb$i"
	for p in ${POST_NAMES[$i]}; do
		git -C "$stat" am -q --whitespace=error "$postout/$p" ||
			die "posted alone, $p does not apply on the core (or the release) and what ${d#regression/} needs"
	done
	git -C "$stat" tag "p$i"
	cover_letter "$i" post >"$postout/$d/$COVER"
	# what to git am, in order, for this series alone (scripts/series-check.sh)
	{
		[ -n "${ALONE[$d]:-}" ] || printf '%s\n' ${SERIES_NAMES[0]}
		for c in $(closure "$d"); do
			printf '%s\n' ${POST_NAMES[$(index_of "$c")]}
		done
		printf '%s\n' ${POST_NAMES[$i]}
	} >"$postout/$d/series"
done
# the core as patches/$KERNEL/ has it
(cd "$work/out" && cp ${SERIES_NAMES[0]} "$COVER" "$postout/")
POSTED=$(printf '%s\n' "${SERIES_NAMES[0]}" "${POST_NAMES[@]}" "$COVER" | grep .
	for i in "${!POST_NAMES[@]}"; do echo "${DIRS[$i]}/$COVER"; done)
rm -rf "$KB/post"
cp -r "$postout" "$KB/post"
cd "$TOP"

# what --check and --render of the same sources use instead of making it again
{
	printf 'NAMES=%q\n' "$NAMES"
	printf 'COVERS=%q\n' "$COVERS"
	printf 'want_series=%q\n' "$want_series"
} >"$KB/patchgen.vars"
echo "$stamp" >"$STAMP"
finish "${1:-}"
