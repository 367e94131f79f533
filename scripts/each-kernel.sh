#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a per-kernel script once for each kernel of $KERNELS (default: what
# scripts/kernels.sh says), with KERNEL set.
#
#   -p        run the kernels side by side (emulators are single-threaded:
#             two of them use our two cores), each with its output in
#             $BUILD/logs/, printed in order when all have finished
#   -l        hold each kernel's tree lock (common.sh, kernel_lock) while
#             SCRIPT runs: one that reads the tree must not see make
#             kernel extract it again under make -j
#   -c NAME   sum the kernels' $RESULTS/NAME.counts ("pass fail skip") into
#             the top-level results directory and print the closing
#             "N passed, N failed, N skipped" line.  A kernel whose source
#             cannot be had is then a failure, named with the reason: a
#             run that tested nothing on a kernel asked for is not green.
#             With -c run, a run in which no fastpath point was proved
#             (every ": path" point SKIPped) says so before that line; so
#             does each kernel x platform that could prove one (all but
#             those path_unprovable names, platforms.sh) and proved none,
#             and those that could not, why.  STRICT=1 fails the run
#             without a proved path, and each kernel x platform that could
#             prove one and did not.  It also says how many of the passed
#             are expected failures and how many points passed as XFAIL.
#
# usage: each-kernel.sh [-p] [-l] [-c NAME] SCRIPT [ARGS...]
set -uo pipefail
# RESULTS= from the user holds one directory per kernel; common.sh would
# otherwise set (and, exported, pass on) the default kernel's.
user_results=${RESULTS:-}
. "$(dirname "$0")/common.sh"

parallel= counts= lock=
while getopts plc: opt; do
	case $opt in
	p) parallel=1 ;;
	l) lock=1 ;;
	c) counts=$OPTARG ;;
	*) die "usage: each-kernel.sh [-p] [-l] [-c NAME] SCRIPT [ARGS...]" ;;
	esac
done
shift $((OPTIND - 1))
# locked K COMMAND...: COMMAND, holding kernel K's tree lock with -l
locked() {
	local k=$1
	shift
	if [ -n "$lock" ]; then
		mkdir -p "$BUILD/$k"
		flock "$BUILD/$k/.tree.lock" "$@"
	else
		"$@"
	fi
}
kernels=${KERNELS:-$("$TOP/scripts/kernels.sh")} || exit 1
top=${user_results:-$BUILD/results$dbg}
logs=$BUILD/logs
mkdir -p "$logs" "$top"

status=0
rm -f "$top/$counts.nopath" "$top/$counts.unproved"
declare -A pid start
ran= skipped=
for k in $kernels; do
	rm -f "$top/$k/$counts.counts"
	start[$k]=$SECONDS
	# A kernel whose source cannot be had is skipped, with the reason;
	# where results are counted, it is a failure: nothing was tested there.
	why=$(source_missing "$k")
	if [ -n "$why" ]; then
		skipped="$skipped $k"
		if [ -n "$counts" ]; then
			echo "NOT TESTED KERNEL=$k: ${1##*/}: $why"
			mkdir -p "$top/$k"
			echo "0 1 0 0" >"$top/$k/$counts.counts"
			echo "$why" >"$top/$k/$counts.skipped"
		else
			echo "SKIP KERNEL=$k: ${1##*/}: $why"
		fi
		continue
	fi
	rm -f "$top/$k/$counts.skipped"
	ran="$ran $k"
	if [ -n "$parallel" ]; then
		say "KERNEL=$k: $* (log: $logs/${1##*/}-$k.log)"
		KERNEL=$k RESULTS=${user_results:+$user_results/$k} locked "$k" "$@" \
			>"$logs/${1##*/}-$k.log" 2>&1 &
		pid[$k]=$!
	else
		say "KERNEL=$k: $*"
		KERNEL=$k RESULTS=${user_results:+$user_results/$k} locked "$k" "$@" || status=1
		say "KERNEL=$k: ${1##*/} took $((SECONDS - start[$k])) s"
	fi
done
if [ -n "$parallel" ] && [ -n "$ran" ]; then
	for k in $ran; do
		wait "${pid[$k]}" || status=1
		echo "==================== KERNEL=$k: $* ===================="
		cat "$logs/${1##*/}-$k.log"
	done
	first=${ran# }
	say "$* on kernels$ran side by side: $((SECONDS - start[${first%% *}])) s"
fi

[ -n "$counts" ] || exit $status
p=0 f=0 s=0 x=0
for k in $kernels; do
	if read -r kp kf ks kx <"$top/$k/$counts.counts" 2>/dev/null; then
		p=$((p + kp)) f=$((f + kf)) s=$((s + ks)) x=$((x + ${kx:-0}))
	else
		echo "KERNEL=$k: $counts produced no result counts"
		f=$((f + 1))
	fi
done
# make run: every test names its points alike in every run (CI tracks them)
if [ "$counts" = run ]; then
	echo
	KERNELS=$kernels "$TOP/scripts/ktap-names.sh" "$top"
	if read -r np nf ns <"$top/names.counts" 2>/dev/null; then
		p=$((p + np)) f=$((f + nf)) s=$((s + ns))
	else
		f=$((f + 1))
	fi
	# ... and prints the points docs/coverage.points lists, which the
	# contract table (docs/coverage.md) names
	KERNELS=$kernels "$TOP/scripts/coverage.sh" run "$top"
	if read -r np nf ns <"$top/coverage.counts" 2>/dev/null; then
		p=$((p + np)) f=$((f + nf)) s=$((s + ns))
	else
		f=$((f + 1))
	fi
fi
# make run: that the fastpath was proved, on each kernel x platform that
# can prove it (path_unprovable, platforms.sh), and somewhere at least: a
# ": path" point that passed.  What could not be proved is said at the end
# (run.unproved); a run that proved no path at all gets a loud note
# (run.nopath).  STRICT=1 fails each kernel x platform that could prove a
# path and did not, and a run that proved none.
if [ "$counts" = run ] && [ -n "$ran" ]; then
	proved=0 points=0 unproved=0
	for k in $ran; do
		# the platforms of this run (results.tsv), else every one with a KTAP
		plats=$(awk -F'\t' '{ print $1 }' "$top/$k/results.tsv" 2>/dev/null | sort -u)
		[ -n "$plats" ] ||
			plats=$(cd "$top/$k" 2>/dev/null && for d in */ktap; do [ ! -f "$d" ] || echo "${d%/ktap}"; done)
		for pl in $plats; do
			[ -f "$top/$k/$pl/ktap" ] || continue
			read -r kp kn < <(path_points "$top/$k/$pl/ktap")
			proved=$((proved + kp)) points=$((points + kn))
			[ "$kp" -eq 0 ] || continue
			why=$(path_unprovable "$pl")
			[ -n "$why" ] || [ "$kn" -gt 0 ] || why="its list has no fastpath point"
			if [ -n "$why" ]; then
				echo "path: $k $pl cannot prove one: $why"
			else
				unproved=$((unproved + 1))
				echo "path: NOT PROVED on $k $pl: none of its $kn fastpath points (\": path\") passed${STRICT:+ (STRICT=1: a failure)}"
			fi
		done
	done >"$top/$counts.unproved"
	[ -s "$top/$counts.unproved" ] || rm -f "$top/$counts.unproved"
	if [ "$proved" -eq 0 ]; then
		cat >"$top/$counts.nopath" <<-EOF
		!!! NO PATH PROVED: not one of the $points fastpath points (": path") of this run
		!!! passed: on PLATFORMS="$(echo ${PLATFORMS:-})" every one SKIPped or did not run
		!!! (under QEMU TCG's SVM, e.g., the fastpath never runs).  The run checked
		!!! delivery only, not which path KVM took: that needs bochs-vmx (Bochs),
		!!! qemu-kvm or host on a CPU with VMX (docs/platforms.md).  STRICT=1 fails it.
		EOF
		[ "$unproved" -gt 0 ] || unproved=1
	fi
	[ -z "${STRICT:-}" ] || f=$((f + unproved))
	# the points that passed as exactly a known KVM deviation from the SDM
	xfail_points=$(for k in $ran; do cat "$top/$k/results.tsv" 2>/dev/null; done |
		awk -F'\t' '{ n += $9 } END { print n + 0 }')
fi
echo "$p $f $s $x" >"$top/$counts.counts"
# make run: the policy picture from every kernel's matrix results
[ "$counts" != run ] || KERNELS=$kernels RESULTS=$top "$TOP/scripts/policy-picture.sh" ||
	echo "warning: no policy picture (scripts/policy-picture.sh failed)"
if [ -f "$top/${kernels%% *}/results.tsv" ] && [ "$counts" = run ]; then
	echo
	echo "platform x kernel: tests passed/failed/skipped; their KTAP points proved (ok),"
	echo "exactly a known KVM deviation from the SDM (XFAIL, fails if KVM changes) and"
	echo "not provable there (SKIP, e.g. path points where the fastpath cannot run):"
	for k in $kernels; do
		[ -f "$top/$k/results.tsv" ] && sed "s/^/$k\t/" "$top/$k/results.tsv"
	done | awk -F'\t' '
		{ key = $2 SUBSEP $1; plat[$2] = 1; kern[$1] = 1; n[key, $4]++
		  ok[key] += $7; skip[key] += $8; known[key] += $10 }
		END {
			printf "%-16s", "PLATFORM"; for (k in kern) ks = ks " " k
			nk = split(substr(ks, 2), kl, " ")
			for (i = 1; i <= nk; i++) printf "  %-52s", kl[i]; print ""
			for (p in plat) {
				printf "%-16s", p
				for (i = 1; i <= nk; i++)
					printf "  %-52s", sprintf("%d/%d/%d, points %d ok %d XFAIL %d SKIP%s",
						n[p, kl[i], "pass"] + n[p, kl[i], "xfail"], n[p, kl[i], "fail"],
						n[p, kl[i], "skip"], ok[p SUBSEP kl[i]],
						known[p SUBSEP kl[i]], skip[p SUBSEP kl[i]],
						n[p, kl[i], "xfail"] ? sprintf(", %d xfail", n[p, kl[i], "xfail"]) : "")
				print ""
			}
		}'
fi
if [ -n "$skipped" ]; then
	echo
	for k in $skipped; do
		if [ -n "$counts" ]; then
			echo "NOT TESTED KERNEL=$k: $(source_missing "$k")"
		else
			echo "KERNEL=$k skipped: $(source_missing "$k")"
		fi
	done
fi
if [ -f "$top/$counts.unproved" ]; then
	echo
	cat "$top/$counts.unproved"
fi
if [ -f "$top/$counts.nopath" ]; then
	echo
	cat "$top/$counts.nopath"
fi
echo
[ "$x" -eq 0 ] || echo "$x of the passed are expected failures (platform defects, scripts/expected-failures)"
[ "${xfail_points:-0}" -eq 0 ] ||
	echo "$xfail_points points passed as XFAIL: KVM's known departures from the SDM (each fails if KVM changes)"
echo "$p passed, $f failed, $s skipped"
[ "$status" -eq 0 ] && [ "$f" -eq 0 ]
