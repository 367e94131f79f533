#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The flake count (make flakes): each platform of $PLATFORMS runs its list
# RUNS times (default 10) on one build, each run a boot of its own, and
# the table says per platform and test how many of the runs passed, failed
# with a known platform defect (xfail, scripts/expected-failures), failed
# and skipped, then every failing point with the run it failed in.  Nothing
# is retried: a failure is one of the N.  LOAD= and DEBUG=1 apply to every
# run, as they do to make run.  The runs go side by side through the
# machine's emulator slots (common.sh); each keeps its console log and KTAP
# under $RESULTS/flakes[-load-N,M]/run-I/.  A measurement, not a check:
# it exits 0 whatever the count, and make check does not run it.
# --report prints the table again from the runs on disk, those that ended
# (e.g. after a count stopped early): N is then per platform.
set -euo pipefail
. "$(dirname "$0")/common.sh"

runs=${RUNS:-10}
case $runs in
'' | *[!0-9]* | 0) die "RUNS=$runs: give the number of runs, e.g. RUNS=20" ;;
esac
PLATFORMS=$(check_platforms) || exit 1
out=$RESULTS/flakes${LOAD:+-load-$LOAD}
start=$SECONDS
if [ "${1:-}" != --report ]; then
	rm -rf "$out"
	mkdir -p "$out"
	say "$runs runs of each platform's list: $PLATFORMS${LOAD:+, LOAD=$LOAD}${DEBUG:+, DEBUG KERNEL} (logs: $out/run-*/)"
	for ((i = 1; i <= runs; i++)); do
		RESULTS=$out/run-$i "$TOP/scripts/run.sh" >"$out/run-$i.log" 2>&1 &
	done
	wait || true
fi

# rows of every platform's run that ended, the run's number first; a run
# that did not start or end its platform counts as a failure of run.sh
for dir in "$out"/run-*/; do
	i=${dir%/}
	i=${i##*-}
	for p in $PLATFORMS; do
		if [ -f "$dir/$p/rows.tsv" ]; then
			awk -F'\t' -v run="$i" '{ print run "\t" $1 "\t" $2 "\t" $3 }' "$dir/$p/rows.tsv"
		elif [ "${1:-}" != --report ]; then
			printf '%d\t%s\trun.sh\tfail\n' "$i" "$p"
		fi
	done
done | sort -n -s -k1,1 >"$out/rows.tsv"

echo
echo "KERNEL=$KERNEL${LOAD:+, LOAD=$LOAD}${DEBUG:+, DEBUG KERNEL}: per platform, the runs that ended$([ "${1:-}" = --report ] || echo ", $((SECONDS - start)) s")"
awk -F'\t' '{ n[$2] += $3 == "suite-completed" } END { for (p in n) printf "  %s: %d runs\n", p, n[p] }' "$out/rows.tsv" | sort
printf '%-16s %-50s %5s %5s %5s %5s\n' PLATFORM TEST PASS XFAIL FAIL SKIP
awk -F'\t' '
	!(($2, $3) in seen) { seen[$2, $3] = 1; order[++n] = $2 SUBSEP $3 }
	{ c[$2, $3, $4]++ }
	END {
		for (i = 1; i <= n; i++) {
			split(order[i], k, SUBSEP)
			printf "%-16s %-50s %5d %5d %5d %5d\n", k[1], k[2], c[order[i], "pass"],
			       c[order[i], "xfail"], c[order[i], "fail"], c[order[i], "skip"]
		}
	}' "$out/rows.tsv" | tee "$out/table.txt"

# the failing points, run by run (scripts/failing-points.awk)
echo
fails=0
while IFS=$'\t' read -r run p t result; do
	[ "$result" = fail ] || [ "$result" = xfail ] || continue
	fails=$((fails + 1))
	echo "run $run, $p, $t: $result"
	ktap=$out/run-$run/$p/ktap
	[ -f "$ktap" ] || { echo "  no KTAP (see $out/run-$run.log)"; continue; }
	awk -v t="$t" -f "$TOP/scripts/failing-points.awk" "$ktap"
done <"$out/rows.tsv"
[ "$fails" -gt 0 ] || echo "no failures"
