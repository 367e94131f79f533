#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: on every kernel of $KERNELS, that the committed series are what
# the sources render (before the build, which renders its own into build/
# and never writes patches/), host-only tests, README's in-tree
# recipe (scripts/intree.sh), the full suite on every platform, then the
# mutants (fastpath bugs put back must be caught).  Prints each phase's wall
# time and ends with the total "N passed, N failed, N skipped" over all of
# them; writes build/results/summary.md (scripts/summary.sh).
set -uo pipefail
user_results=${RESULTS:-}	# see each-kernel.sh
. "$(dirname "$0")/common.sh"
export RESULTS=$user_results

top=${RESULTS:-$BUILD/results$dbg}
mkdir -p "$top"
# all of it in check.log too: its failures are repeated at the end
exec > >(tee "$top/check.log") 2>&1
rm -f "$top"/patches.counts "$top"/unit.counts "$top"/intree.counts "$top"/run.counts "$top"/mutants.counts
status=0 t0=$SECONDS
declare -a phases
# The machine's busy and idle CPU time so far, in clock ticks (/proc/stat):
# how much of a phase's wall time left a core idle, for the time budget.
cpu_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat
}
phase() {	# phase NAME COMMAND...: run it, note its wall time and CPU use
	local start=$SECONDS busy0 idle0 busy1 idle1 use
	read -r busy0 idle0 < <(cpu_ticks)
	say "phase $1: starting"
	"${@:2}" || status=1
	read -r busy1 idle1 < <(cpu_ticks)
	use=$(( (busy1 - busy0) * 100 / (busy1 - busy0 + idle1 - idle0 + 1) ))
	phases+=("$1 $((SECONDS - start)) $use")
	say "phase $1: $((SECONDS - start)) s, CPUs $use% busy"
}

# The committed series against the sources, first: the build renders the
# series into build/ and never writes patches/, so a stale committed series
# would be built around, not seen.  The sources come first (make deps: a new machine
# has none yet), and a kernel whose source is still missing fails the
# check: it was not compared.
patches_check() {
	local out what=
	if ! make -s -C "$TOP" deps; then
		what="not compared: make deps failed (above)"
	elif ! out=$(make -s -C "$TOP" patches-check 2>&1); then
		what="are not what selftests/, lib/ and patches/selftests.msg render: run 'make patches' and commit them"
	elif grep -q '^SKIP KERNEL=' <<<"$out"; then
		what="not compared on$(sed -n 's/^SKIP KERNEL=\([^:]*\):.*/ \1/p' <<<"$out" | sort -u | tr -d '\n'): no source (above)"
	fi
	[ -z "${out:-}" ] || echo "$out"
	if [ -n "$what" ]; then
		echo "not ok - patches: the committed series of $KERNELS $what"
		echo "0 1 0" >"$top/patches.counts"
		return 1
	fi
	echo "ok - patches: the committed series of $KERNELS are what selftests/, lib/ and patches/selftests.msg render"
	echo "1 0 0" >"$top/patches.counts"
}
drift=$("$TOP/scripts/drift.sh")
echo "$drift"
phase patches patches_check
# a stale series stops make check here, before half an hour of building
# and running what the committed series are not
if [ $status -eq 0 ]; then
	phase build make -s -C "$TOP" initramfs
	# for the summary's "failed:" lines
	[ $status -eq 0 ] ||
		echo "not ok - build: make initramfs (the kernels, the tests, the initramfs) failed (above): unit, intree, run and mutants did not run"
fi
# This machine's speed, in seconds of one fixed compile (scripts/calibrate.sh,
# the newest kernel's): the unit the closing summary gives each phase in too
rm -f "$top/calibration"
if [ $status -eq 0 ]; then
	newest=$(tr ' ' '\n' <<<"$KERNELS" | sort -V | tail -n 1)
	KERNEL=$newest "$TOP/scripts/calibrate.sh" >"$top/calibration.tmp" &&
		mv "$top/calibration.tmp" "$top/calibration" ||
		echo "warning: no calibration (scripts/calibrate.sh failed)"
	rm -f "$top/calibration.tmp"
fi
if [ $status -eq 0 ]; then
	# what make run and make mutants do, without their prerequisites:
	# the build phase made them, and checking it again took 50 s
	phase unit "$TOP/scripts/unit.sh"
	# side by side: unpacking, git add and make headers keep one core
	# busy each (in turn, the phase left the machine half idle)
	phase intree "$TOP/scripts/each-kernel.sh" -p -c intree "$TOP/scripts/intree.sh"
	phase run "$TOP/scripts/each-kernel.sh" -p -c run "$TOP/scripts/run.sh"
	phase mutants "$TOP/scripts/each-kernel.sh" -p -c mutants "$TOP/scripts/mutants.sh"
fi

read -r pp pf ps _ 2>/dev/null <"$top/patches.counts" || { pp=0; pf=1; ps=0; }
read -r up uf us _ 2>/dev/null <"$top/unit.counts" || { up=0; uf=1; us=0; }
read -r tp tf ts _ 2>/dev/null <"$top/intree.counts" || { tp=0; tf=1; ts=0; }
read -r rp rf rs _ 2>/dev/null <"$top/run.counts" || { rp=0; rf=1; rs=0; }
read -r mp mf ms _ 2>/dev/null <"$top/mutants.counts" || { mp=0; mf=1; ms=0; }
total=$((SECONDS - t0))
# each phase's line, as check.phases has it, with its time in calibrations
phase_line() {	# phase_line NAME SECONDS [BUSY%]
	printf '%-10s %4d s%s' "$1" "$2" "$(in_calibrations "$2" "$top/calibration")"
	[ -z "${3:-}" ] || printf ', CPUs %3d%% busy' "$3"
	echo
}
echo
calibration_line "$top/calibration"
echo "make check on kernels $KERNELS, phase times:"
for p in "${phases[@]}"; do
	# shellcheck disable=SC2086 # NAME SECONDS BUSY%
	phase_line $p
done | sed 's/^/  /'
phase_line total "$total" | sed 's/^/  /'
echo "  patches $pp/$pf/$ps, unit $up/$uf/$us, intree $tp/$tf/$ts, run $rp/$rf/$rs, mutants $mp/$mf/$ms (passed/failed/skipped)"
echo "$drift"
# a run that proved no path says so here too, where a CI log's tail is read
[ ! -f "$top/run.unproved" ] || { echo; cat "$top/run.unproved"; }
[ ! -f "$top/run.nopath" ] || { echo; cat "$top/run.nopath"; }
# what failed, again where the tail of a CI log shows it: each phase's
# "not ok" lines, and each failed test of make run with its failing points
if [ $((pf + uf + tf + rf + mf)) -ne 0 ]; then
	echo
	echo "failed:"
	grep -a '^not ok' "$top/check.log" | head -n 20 | sed 's/^/  /'
	for k in $KERNELS; do
		awk -F'\t' '$3 == "fail" { print $1 "\t" $2 }' "$top/$k/results.tsv" 2>/dev/null |
		while IFS=$'\t' read -r p t; do
			echo "  $k $p: $t"
			awk -v t="$t" -f "$TOP/scripts/failing-points.awk" "$top/$k/$p/ktap" 2>/dev/null
		done
	done
fi
echo
for p in "${phases[@]}"; do
	# shellcheck disable=SC2086 # NAME SECONDS BUSY%
	phase_line $p
done >"$top/check.phases"
phase_line total "$total" >>"$top/check.phases"
"$TOP/scripts/summary.sh" >"$top/summary.md" || echo "warning: no $top/summary.md"
echo "$((pp + up + tp + rp + mp)) passed, $((pf + uf + tf + rf + mf)) failed, $((ps + us + ts + rs + ms)) skipped"
[ $status -eq 0 ] && [ $((pf + uf + tf + rf + mf)) -eq 0 ]
