#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the suite on each platform of $PLATFORMS (default: those this machine
# can run, scripts/platforms.sh), keep per platform
# the console log, KTAP and summary under $RESULTS, print a table and end
# with "N passed, N failed, N skipped".  Exits non-zero on any failure, and
# where a platform ran no test (every one SKIPped).
# DEBUG=1 boots the debug kernel (configs/debug.config) and says so.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PLATFORMS=$(check_platforms) || exit 1
kernel=
[ -z "$DEBUG" ] || kernel="DEBUG KERNEL $BZIMAGE (configs/debug.config: lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP, DEBUG_LIST, KASAN)"
[ -z "$kernel" ] || say "$kernel"
mkdir -p "$RESULTS"
rows=$RESULTS/results.tsv
: >"$rows"

# boot_platform P: run the suite on P and parse its console log into
# $RESULTS/P/rows.tsv and ktap.
boot_platform() {
	local p=$1 dir=$RESULTS/$1 list host
	# The running kernel is one kernel: where this make covers more than
	# one, only its own series' list runs on it (scripts/kernels.sh).
	if [ "$p" = host ] && [ "$(echo ${KERNELS:-$KERNEL})" != "$KERNEL" ]; then
		host=$(KERNEL_ASKED= host_kernel 2>&1) || true
		if [ "$host" != "$KERNEL" ]; then
			[ -n "$host" ] && [ "${host#*[^0-9.]}" = "$host" ] &&
				host="the running kernel takes KERNEL=$host's series"
			printf '%s\tplatform-start\tskip\t-\t%s\n' "$p" "$host" >"$dir/rows.tsv"
			say "$p: SKIP on KERNEL=$KERNEL: $host"
			return
		fi
	fi
	say "$p: booting and running the suite (log: $dir/console.log)"
	if ! "$TOP/scripts/platform.sh" "$p" "$dir"; then
		printf '%s\tplatform-start\tfail\t-\t-\n' "$p" >"$dir/rows.tsv"
		return
	fi
	# the list that ran: the one the platform wrote (host), else its own
	list=$dir/tests.list
	[ -f "$list" ] || list=$(tests_list_of "$p")
	awk -v platform="$p" -v list="$list" -v rows="$dir/rows.tsv" \
		-v xfails="$TOP/scripts/expected-failures" \
		-f "$TOP/scripts/report.awk" "$dir/console.log" >"$dir/ktap"
	emulator=$(cat "$dir/emulator" 2>/dev/null || true)
	say "$p: $(cat "$dir/wall_seconds")s wall, KTAP in $dir/ktap${emulator:+, $emulator}"
}

# The order the platforms start in: the longest runs first (docs/testbed.md),
# so that the last to end is a short one.
start_order() {
	local p
	for p in $PLATFORMS; do
		case $p in
		bochs-svm*) echo "0 $p" ;;
		*-2cpu) echo "1 $p" ;;
		bochs-*) echo "2 $p" ;;
		*) echo "3 $p" ;;
		esac
	done | sort -s -k1,1n | cut -d' ' -f2
}

# The platforms side by side, in turn as emulator slots come free
# (common.sh): each takes one, and holds it until it ends.  Their results
# in the order of $PLATFORMS.
for p in $(start_order); do
	mkdir -p "$RESULTS/$p"
	rm -f "$RESULTS/$p/rows.tsv" "$RESULTS/$p/ktap"
	emulator_slot
	boot_platform "$p" &
	exec 8>&-	# the slot is the platform's now
done
wait
for p in $PLATFORMS; do
	dir=$RESULTS/$p
	if [ ! -f "$dir/rows.tsv" ]; then
		printf '%s\tplatform-start\tfail\t-\t-\n' "$p" >"$dir/rows.tsv"
	fi
	cat "$dir/rows.tsv" >>"$rows"
	why=$(no_test_ran "$dir/rows.tsv" "$dir/ktap")
	if [ -n "$why" ]; then
		printf '%s\tno-test-ran\tfail\t-\t%s\n' "$p" "$why" >>"$rows"
		echo "NOT TESTED: $p on KERNEL=$KERNEL: $why"
	fi
	[ -f "$dir/ktap" ] || continue
	grep -E '^(not ok|# )' "$dir/ktap" | grep -v '^# platform' | sed "s/^/  $p: /" || true
done

echo
[ -z "$kernel" ] || echo "$kernel"
printf '%-15s %-54s %-5s %8s  %s\n' PLATFORM TEST RESULT SECONDS CAPABILITIES
awk -F'\t' '{ printf "%-15s %-54s %-5s %8s  %s\n", $1, $2, $3, $4, $5 }' "$rows"
# an expected failure (a proven platform defect) counts as passed, and is
# said apart (run_counts, common.sh)
run_counts "$rows" >"$RESULTS/run.counts"
read -r pass fail skip xfail <"$RESULTS/run.counts"
echo
[ "$xfail" -eq 0 ] || echo "$xfail of the passed are expected failures (platform defects, scripts/expected-failures)"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
