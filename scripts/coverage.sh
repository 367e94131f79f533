#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The contract table (docs/coverage.md) names, for each clause, the KTAP
# points that check it, as `TEST: POINT` in backquotes.  Those names must be
# real: docs/coverage.points lists every point our tests print
# ("TEST<TAB>POINT<TAB>KERNELS"), and
#
#   coverage.sh doc               (make unit) every point the table names is
#                                 in the list; prints how many clauses are
#                                 covered and how many are not;
#   coverage.sh run RESULTS_TOP   (make run, after ktap-names.sh) every test
#                                 that printed a complete run on a kernel
#                                 printed exactly the list's points for it;
#   coverage.sh update RESULTS_TOP  writes the list from such a run (after a
#                                 test's points changed; commit it).
#
# The points of a run are ktap-names.sh's (RESULTS_TOP/names/KERNEL-PLATFORM:
# the complete runs of our tests).  Writes RESULTS_TOP/coverage.counts (run).
set -uo pipefail
. "$(dirname "$0")/common.sh"

doc=$TOP/docs/coverage.md
list=$TOP/docs/coverage.points

# named: "TEST<TAB>POINT" for every `TEST: POINT` of the table
named() {
	grep -o '`[a-z0-9_]*_test[a-z0-9_]*: [^`]*`' "$doc" | sed 's/^`//; s/`$//; s/: /\t/' | sort -u
}

# printed TOP: "TEST<TAB>POINT<TAB>KERNELS" of every point the direct runs
# of a run printed, over its platforms
printed() {
	local f k
	for f in "$1"/names/*-*; do
		[ -f "$f" ] || continue
		k=${f##*/}
		k=${k%%-*}
		awk -F'\t' -v k="$k" '$1 ~ /^direct/ { sub(/^kvm\//, "", $2); print $2 "\t" $4 "\t" k }' "$f"
	done | sort -u | awk -F'\t' '
		{ key = $1 "\t" $2; if (!(key in ks)) order[++n] = key; ks[key] = ks[key] (ks[key] == "" ? "" : " ") $3 }
		END { for (i = 1; i <= n; i++) print order[i] "\t" ks[order[i]] }' | sort
}

case ${1:-} in
doc)
	[ -f "$doc" ] && [ -f "$list" ] || die "docs/coverage.md or docs/coverage.points missing"
	missing=$(comm -23 <(named) <(cut -f1,2 "$list" | sort -u))
	# the clauses: the rows before the map of KVM's code (make coverage)
	clauses=$(sed '/^## KVM.s code as the map/q' "$doc" | grep -c '^| [^-|]')
	uncovered=$(sed '/^## KVM.s code as the map/q' "$doc" | grep -c '^| .*| not covered')
	points=$(named | wc -l)
	if [ -n "$missing" ]; then
		echo "not ok - coverage: the contract table names points no test prints"
		printf '%s\n' "$missing" | sed 's/\t/: /; s/^/#   /'
		exit 1
	fi
	# the header row of each table is not a clause
	tables=$(grep -c '^| clause |' "$doc")
	echo "ok - coverage: $((clauses - tables)) clauses, $((clauses - tables - uncovered)) covered by $points named points, all printed by a test"
	;;
run | update)
	top=${2:?usage: coverage.sh run|update RESULTS_TOP}
	printed "$top" >"$top/coverage.printed"
	if [ "$1" = update ]; then
		# per test and kernel: a test that ran completely on a kernel
		# takes that kernel's points from the run; the rest keep theirs
		touch "$list"
		awk -F'\t' -v kernels="$KERNELS_SUPPORTED" '
			BEGIN { nk = split(kernels, kl, " ") }
			FNR == NR {
				n = split($3, ks, " ")
				for (i = 1; i <= n; i++) { ran[$1, ks[i]] = 1; has[$1 "\t" $2, ks[i]] = 1 }
				key[$1 "\t" $2] = 1
				next
			}
			{
				n = split($3, ks, " ")
				for (i = 1; i <= n; i++)
					if (!ran[$1, ks[i]]) { has[$1 "\t" $2, ks[i]] = 1; key[$1 "\t" $2] = 1 }
			}
			END {
				for (k in key) {
					out = ""
					for (j = 1; j <= nk; j++)
						if (has[k, kl[j]]) out = out (out == "" ? "" : " ") kl[j]
					if (out != "") print k "\t" out
				}
			}' "$top/coverage.printed" "$list" | LC_ALL=C sort >"$list.new"
		mv "$list.new" "$list"
		echo "wrote ${list#"$TOP"/}: $(wc -l <"$list") points"
		exit 0
	fi
	pass=0 fail=0 skip=0
	for k in $KERNELS; do
		tests=$(awk -F'\t' -v k="$k" '(" " $3 " ") ~ (" " k " ") { print $1 }' "$top/coverage.printed" | sort -u)
		if [ -z "$tests" ]; then
			skip=$((skip + 1))
			echo "ok - coverage points printed as listed: $k # SKIP no complete run of a test"
			continue
		fi
		diffs=$(for t in $tests; do
			diff <(awk -F'\t' -v t="$t" -v k="$k" '$1 == t && (" " $3 " ") ~ (" " k " ") { print $2 }' "$list" | sort) \
			     <(awk -F'\t' -v t="$t" -v k="$k" '$1 == t && (" " $3 " ") ~ (" " k " ") { print $2 }' "$top/coverage.printed" | sort) |
				sed -n "s/^< /$t: listed, not printed: /p; s/^> /$t: printed, not listed: /p"
		done)
		if [ -n "$diffs" ]; then
			fail=$((fail + 1))
			echo "not ok - coverage points printed as listed: $k (scripts/coverage.sh update, then commit docs/coverage.points)"
			echo "$diffs" | head -20 | sed 's/^/#   /'
		else
			pass=$((pass + 1))
			echo "ok - coverage points printed as listed: $k ($(echo "$tests" | wc -l) tests)"
		fi
	done
	echo "$pass $fail $skip" >"$top/coverage.counts"
	[ "$fail" -eq 0 ]
	;;
*) die "usage: coverage.sh doc | run RESULTS_TOP | update RESULTS_TOP" ;;
esac
