#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Patch hygiene of one kernel's series (KERNEL=6.12 or 7.3: the core, the
# regression series and the test bed's): their files and
# patches/$KERNEL/series agree, in one order, the selftests patches match selftests/ and
# lib/, every patch is checkpatch --strict clean with that tree's
# checkpatch.pl, the series is bisectable, and each regression series, as
# posted alone, applies and builds (scripts/series-check.sh).  Prints "ok - ", "ok - ... # SKIP" and
# "not ok - " lines, with "#" detail lines, for scripts/unit.sh to count.
set -uo pipefail
. "$(dirname "$0")/common.sh"

result() {	# result STATUS NAME [DETAIL FILE]
	case $1 in
	pass) echo "ok - $KERNEL: $2" ;;
	skip) echo "ok - $KERNEL: $2 # SKIP" ;;
	*) echo "not ok - $KERNEL: $2"
	   [ -n "${3:-}" ] && sed 's/^/#   /' "$3" ;;
	esac
}

work=$KB/unit
mkdir -p "$work"

# 3. Patch hygiene.
missing=""
while read -r p; do
	[ -f "$PATCHES/$p" ] || missing="$missing $p"
done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series")
for p in $(series_patches); do
	grep -qxF "${p#"$PATCHES"/}" "$PATCHES/series" || missing="$missing (not in series: ${p#"$PATCHES"/})"
done
# Each series' size, patch files and cover letter included: the core one
# is meant to stay within what a reviewer takes in one sitting.
size() {	# size NAME FILES...
	local name=$1
	shift
	[ -e "$1" ] || return 0
	echo "# $KERNEL: $name series: $# files, $(cat "$@" | wc -l) lines"
}
name_of() {	# name_of DIR: what a series is called in these lines
	case $1 in
	.) echo core ;;
	*) echo "$1" ;;
	esac
}
for d in $(series_dirs); do
	size "$(name_of "$d")" "$PATCHES/$d"/0*
done
# The core holds at most 1,500 inserted lines by git's diffstat (its
# cover letter's): what does not fit goes to a regression series.
core_lines=$(sed -n 's/.* changed, \([0-9]*\) insertions.*/\1/p' "$PATCHES/0000-cover-letter.txt")
if [ -n "$core_lines" ] && [ "$core_lines" -le 1500 ]; then
	result pass "patches: the core series inserts $core_lines lines, at most 1500"
else
	echo "the core's cover letter: ${core_lines:-no diffstat} insertions" >"$work/core-size.log"
	result fail "patches: the core series inserts at most 1500 lines" "$work/core-size.log"
fi
# Every directory of patches is a series the checks know (no stale one).
stray=$(series_dirs -a | tail -n +"$(($(series_dirs | wc -l) + 1))")
[ -z "$stray" ] || missing="$missing (not a series: $(echo $stray))"
if [ -z "$missing" ]; then
	result pass "patches: series and files agree"
else
	echo "$missing" >"$work/series.log"
	result fail "patches: series and files agree" "$work/series.log"
fi

# Each series numbers its patches [PATCH n/m], n = 1..m in file order (as
# git format-patch pads them), and its cover letter is [PATCH 0/m]; the
# inserted lines are its cover letter's diffstat's.
numbering() {	# numbering NAME DIR
	local name=$1 dir=$2 m n=0 w p want bad=""
	m=$(ls "$dir"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null | wc -l)
	[ "$m" -gt 0 ] || return 0
	w=${#m}
	grep -q "^Subject: \[PATCH 0/$m\]" "$dir/0000-cover-letter.txt" ||
		bad="$bad
0000-cover-letter.txt: want [PATCH 0/$m]"
	for p in "$dir"/[0-9][0-9][0-9][0-9]-*.patch; do
		n=$((n + 1))
		want=$(printf "%0${w}d/%d" "$n" "$m")
		grep -q "^Subject: \[PATCH $want\]" "$p" || bad="$bad
${p##*/}: want [PATCH $want]"
	done
	echo "# $KERNEL: $name series:$(grep -E "^ [0-9]+ files? changed" "$dir/0000-cover-letter.txt" | tail -1 | sed 's/^[^,]*,/ /')"
	if [ -z "$bad" ]; then
		result pass "patches: the $name series numbers its patches 1/$m..$m/$m"
	else
		printf "%s\n" "$bad" | sed "/^$/d" >"$work/numbering.log"
		result fail "patches: the $name series numbers its patches 1/$m..$m/$m" "$work/numbering.log"
	fi
}
for d in $(series_dirs); do
	numbering "$(name_of "$d")" "$PATCHES/$d"
done

# The series apply in one order everywhere: patches/$KERNEL/series (make
# kernel, the series check) lists them as README's in-tree recipe applies
# them ("git am" of the core's, then regression/*/, then testbed/ patch
# files, each in name order) and as their cover letters state.
if [ "$(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series")" = "$(series_patches | sed "s#^$PATCHES/##")" ]; then
	result pass "patches: series lists the core, regression/*/ and testbed/ patches in the order README's recipe applies them"
else
	diff <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series") <(series_patches | sed "s#^$PATCHES/##") >"$work/order.log"
	result fail "patches: series lists the core, regression/*/ and testbed/ patches in the order README's recipe applies them" "$work/order.log"
fi

if [ -f "$KTREE/.kvmipi-origin" ]; then
	if "$TOP/scripts/patches.sh" --check >"$work/patches.log" 2>&1; then
		result pass "patches: the selftests patches match selftests/, lib/ and patches/selftests.msg, the cover letter the series"
	else
		result fail "patches: the selftests patches match selftests/, lib/ and patches/selftests.msg, the cover letter the series" "$work/patches.log"
	fi
else
	result skip "patches: no kernel tree yet (run 'make kernel')"
fi

# MAINTAINERS needs no update: KVM's entries already cover the new selftests
# files, so checkpatch's FILE_PATH_CHANGES warning is ignored.  The tree is
# a release's source, not a git clone: checkpatch cannot look up the commit
# a "Fixes:" tag names and warns UNKNOWN_COMMIT_ID for any; the tag's form
# (12 digits, the subject in quotes) is still checked.
if [ -x "$KTREE/scripts/checkpatch.pl" ]; then
	for p in $(series_patches); do
		if (cd "$KTREE" && perl scripts/checkpatch.pl --strict --no-tree \
			--ignore FILE_PATH_CHANGES --ignore UNKNOWN_COMMIT_ID -q "$p") \
			>"$work/checkpatch.log" 2>&1; then
			result pass "checkpatch --strict: ${p#"$PATCHES"/}"
		else
			result fail "checkpatch --strict: ${p#"$PATCHES"/}" "$work/checkpatch.log"
		fi
	done
else
	result skip "checkpatch: no kernel tree yet (run 'make kernel')"
fi

# 4. The series is bisectable: each patch applies with git am, in order,
# and the tree builds after it
# (scripts/series-check.sh prints ok / not ok lines; its progress goes to
# stderr).
"$TOP/scripts/series-check.sh" >"$work/series.out" 2> >(tee "$work/series.err" >&2)
series_status=$?
wait $!	# tee
series_fail=0
while IFS= read -r line; do
	case $line in
	"ok - "*" # SKIP") line=${line#ok - }; result skip "${line% # SKIP}" ;;
	"ok - "*) result pass "${line#ok - }" ;;
	"not ok - "*) result fail "${line#not ok - }"; series_fail=1 ;;
	"#"*) echo "$line" ;;
	esac
done <"$work/series.out"
if [ "$series_status" -ne 0 ] && [ "$series_fail" -eq 0 ]; then
	result fail "series: scripts/series-check.sh ran" "$work/series.err"
fi

