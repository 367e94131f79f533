#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's host-only tests: the oracle's unit tests, the result parser
# and the KTAP name check against fixture console logs, and per kernel the patch hygiene (the series
# is complete, bisectable and checkpatch --strict clean).
# Needs the kernel sources (make kernel) for checkpatch.  Prints one line per check and
# writes build/results/unit.counts.
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
top=$BUILD/results$dbg
mkdir -p "$work" "$top"

# 1. The oracle: pure C, built with warnings as errors, once per rule (each
# kernel's series carries its own: scripts/patches.sh), with the code of
# every symbol a "== +SYMBOL" section of patches/selftests.msg turns on:
# the tests cover both series.
symbols=$(sed -n 's/^== +\([A-Za-z0-9_]*\)$/-D\1/p' "$TOP/patches/selftests.msg")
for rule in KVM_FASTPATH_SINGLE_TARGET KVM_FASTPATH_VPMU_GATE; do
	# shellcheck disable=SC2086 # one word per symbol
	if gcc -Wall -Wextra -Wno-unused-parameter -Werror -O2 -D$rule $symbols \
		-I"$TOP/lib/include/x86" -I"$TOP/lib/tests/include" \
		"$TOP/lib/x86/ipi_oracle.c" "$TOP/lib/tests/ipi_oracle_unit.c" \
		-o "$work/ipi_oracle_unit" >"$work/oracle.log" 2>&1 &&
	   "$work/ipi_oracle_unit" >>"$work/oracle.log" 2>&1; then
		result pass "lib: ipi_oracle unit tests, $rule ($(grep -c '^ok' "$work/oracle.log") cases)"
	else
		result fail "lib: ipi_oracle unit tests, $rule" <(grep -v '^ok' "$work/oracle.log")
	fi
done

# 2. The result parser, on fixture console logs with known verdicts.
for fixture in "$TOP"/scripts/tests/*.console; do
	name=${fixture%.console}
	xfails=
	[ ! -f "$name.xfail" ] || xfails=$name.xfail
	awk -v platform=fixture -v list="$name.list" -v rows="$work/rows.tsv" -v xfails="$xfails" \
		-f "$TOP/scripts/report.awk" "$fixture" >"$work/ktap"
	if diff -u "$name.expected" <(cut -f2,3 "$work/rows.tsv") >"$work/diff"; then
		result pass "report: ${name##*/}"
	else
		result fail "report: ${name##*/}" "$work/diff"
	fi
done

# 2a. What a failure is repeated with (make flakes, make check's end):
# each failed test's failing points, on the fixtures with a .points file.
for fixture in "$TOP"/scripts/tests/*.points; do
	name=${fixture%.points}
	awk -v platform=fixture -v list="$name.list" -v rows="$work/rows.tsv" \
		-f "$TOP/scripts/report.awk" "$name.console" >"$work/ktap"
	awk -F'\t' '$3 == "fail" { print $2 }' "$work/rows.tsv" | while IFS= read -r t; do
		echo "$t"
		awk -v t="$t" -f "$TOP/scripts/failing-points.awk" "$work/ktap"
	done >"$work/points"
	if diff -u "$fixture" "$work/points" >"$work/diff"; then
		result pass "failing points: ${name##*/}"
	else
		result fail "failing points: ${name##*/}" "$work/diff"
	fi
done

# 2b. The KTAP name check (make run) on fixture runs: it must pass on
# names alike and fail on a count in a name and on a nameless skip.
for fixture in "$TOP"/scripts/tests/names-*/; do
	name=$(basename "$fixture")
	want=$(cat "$fixture/expected")
	rm -rf "$work/$name"
	cp -r "$fixture" "$work/$name"
	KERNELS="6.12 7.3" "$TOP/scripts/ktap-names.sh" "$work/$name" >"$work/$name.out" 2>&1
	rc=$?
	if { [ "$want" = expect-pass ] && [ $rc -eq 0 ]; } ||
	   { [ "$want" = expect-fail ] && [ $rc -eq 1 ]; }; then
		result pass "ktap-names: $name"
	else
		result fail "ktap-names: $name (exit $rc, $want)" "$work/$name.out"
	fi
done

# 2c. The scripts' own tests (scripts/tests/*.test, e.g. the host platform
# on a fake machine): their "ok - " / "not ok - " lines.
for t in "$TOP"/scripts/tests/*.test; do
	name=${t##*/}
	"$t" "$work/$name" >"$work/$name.out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*" # SKIP"*) line=${line#ok - }; result skip "${line%% # SKIP*}" ;;
		"ok - "*) result pass "${line#ok - }" ;;
		"not ok - "*) result fail "${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$work/$name.out"
	[ "$rc" -eq 0 ] || result fail "$name: exit status $rc" "$work/$name.out"
done

# 2d. The contract table (docs/coverage.md) names only points that our
# tests print (docs/coverage.points; make run checks that list).
"$TOP/scripts/coverage.sh" doc >"$work/coverage.out" 2>&1
line=$(grep -m1 '^\(not \)\?ok - ' "$work/coverage.out")
case $line in
"ok - "*) result pass "${line#ok - }" ;;
*) line=${line#not ok - }; result fail "${line:-coverage: scripts/coverage.sh doc failed}" "$work/coverage.out" ;;
esac

# 3. Per kernel: patch hygiene and bisectability (scripts/series-hygiene.sh),
# the kernels side by side: much of it (unpacking, git add, checkpatch,
# linking) runs on one core, so two of them keep both busy.
kernels=${KERNELS:-$("$TOP/scripts/kernels.sh")}
declare -A hygiene
for k in $kernels; do
	[ -z "$(source_missing "$k")" ] || continue
	KERNEL=$k "$TOP/scripts/series-hygiene.sh" >"$work/hygiene-$k.out" 2>"$work/hygiene-$k.err" &
	hygiene[$k]=$!
done
for k in $kernels; do
	why=$(source_missing "$k")
	if [ -n "$why" ]; then
		result skip "$k: series hygiene: $why"
		continue
	fi
	wait "${hygiene[$k]}"
	sed "s/^/[$k] /" "$work/hygiene-$k.err" >&2
	while IFS= read -r line; do
		case $line in
		"ok - "*" # SKIP") line=${line#ok - }; result skip "${line% # SKIP}" ;;
		"ok - "*) result pass "${line#ok - }" ;;
		"not ok - "*) result fail "${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$work/hygiene-$k.out"
done

echo "$pass $fail $skip" >"$top/unit.counts"
echo "unit: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
