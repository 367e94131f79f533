#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's host-only tests: the oracle's unit tests, the result parser
# against fixture console logs, and patch hygiene (the series is complete,
# bisectable on the whole 6.12 tree and checkpatch --strict clean).  Needs the
# kernel source (make kernel) for checkpatch.  Prints one line per check and
# writes $RESULTS/unit.counts.
set -uo pipefail
. "$(dirname "$0")/common.sh"

pass=0 fail=0 skip=0
result() {	# result STATUS NAME [DETAIL FILE]
	case $1 in
	pass) pass=$((pass + 1)); echo "ok - $2" ;;
	skip) skip=$((skip + 1)); echo "ok - $2 # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok - $2"
	   [ -n "${3:-}" ] && sed 's/^/#   /' "$3" ;;
	esac
}

work=$BUILD/unit
mkdir -p "$work" "$RESULTS"

# 1. The oracle: pure C, built with warnings as errors.
if gcc -Wall -Wextra -Werror -O2 -I"$TOP/lib/include/x86_64" \
	"$TOP/lib/x86_64/ipi_oracle.c" "$TOP/lib/tests/ipi_oracle_unit.c" \
	-o "$work/ipi_oracle_unit" >"$work/oracle.log" 2>&1 &&
   "$work/ipi_oracle_unit" >>"$work/oracle.log" 2>&1; then
	result pass "lib: ipi_oracle unit tests ($(grep -c '^ok' "$work/oracle.log") cases)"
else
	result fail "lib: ipi_oracle unit tests" <(grep -v '^ok' "$work/oracle.log")
fi

# 2. The result parser, on fixture console logs with known verdicts.
for fixture in "$TOP"/scripts/tests/*.console; do
	name=${fixture%.console}
	awk -v platform=fixture -v list="$name.list" -v rows="$work/rows.tsv" \
		-f "$TOP/scripts/report.awk" "$fixture" >"$work/ktap"
	if diff -u "$name.expected" <(cut -f2,3 "$work/rows.tsv") >"$work/diff"; then
		result pass "report: ${name##*/}"
	else
		result fail "report: ${name##*/}" "$work/diff"
	fi
done

# 3. Patch hygiene.
missing=""
while read -r p; do
	[ -f "$TOP/patches/$p" ] || missing="$missing $p"
done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$TOP/patches/series")
for p in "$TOP"/patches/*.patch; do
	grep -qx "${p##*/}" "$TOP/patches/series" || missing="$missing (not in series: ${p##*/})"
done
if [ -z "$missing" ]; then
	result pass "patches: series and files agree"
else
	echo "$missing" >"$work/series.log"
	result fail "patches: series and files agree" "$work/series.log"
fi

if [ -f "$KTREE/.kvmipi-origin" ]; then
	if "$TOP/scripts/patches.sh" --check >"$work/patches.log" 2>&1; then
		result pass "patches: the selftests patch matches selftests/ and lib/"
	else
		result fail "patches: the selftests patch matches selftests/ and lib/" "$work/patches.log"
	fi
else
	result skip "patches: no kernel tree yet (run 'make kernel')"
fi

# MAINTAINERS needs no update: KVM's entries already cover the new selftests
# files, so checkpatch's FILE_PATH_CHANGES warning is ignored.
if [ -x "$KTREE/scripts/checkpatch.pl" ]; then
	for p in "$TOP"/patches/*.patch; do
		if (cd "$KTREE" && perl scripts/checkpatch.pl --strict --no-tree \
			--ignore FILE_PATH_CHANGES -q "$p") \
			>"$work/checkpatch.log" 2>&1; then
			result pass "checkpatch --strict: ${p##*/}"
		else
			result fail "checkpatch --strict: ${p##*/}" "$work/checkpatch.log"
		fi
	done
else
	result skip "checkpatch: no kernel tree yet (run 'make kernel')"
fi

# 4. The series is bisectable: on a git repository of the whole 6.12 tree,
# each patch applies with git am, in order, and builds on its own
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

echo "$pass $fail $skip" >"$RESULTS/unit.counts"
echo "unit: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
