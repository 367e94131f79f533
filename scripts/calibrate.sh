#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How fast this machine compiles, as one number that makes any two timings
# of make check comparable: the time of one fixed compile, KVM's
# arch/x86/kvm/lapic.o of $KERNEL's built tree, with the tree's own
# command line (its .lapic.o.cmd), into a scratch directory, ccache off,
# the best of three.  The compiler's CPU time (user and system), not the
# wall time: on an idle machine the two are the same, and on a busy one
# the wall time measures the load, not the machine (on a loaded 2-core
# machine, 7.3 s of wall time for 2.4 s of CPU).  make check prints every
# phase's time in this unit too ("cal"), and docs/testbed.md states the
# budget in it.  It costs seconds: three compiles of one file.
#
# Prints "SECONDS KERNEL OBJECT", e.g. "3.41 7.3 arch/x86/kvm/lapic.o".
#
# usage: calibrate.sh     (KERNEL=: the built kernel to compile from)
set -euo pipefail
. "$(dirname "$0")/common.sh"

OBJ=arch/x86/kvm/lapic.o
RUNS=3
cmdfile=$KOUT/$(dirname "$OBJ")/.$(basename "$OBJ").cmd
[ -f "$cmdfile" ] || die "no $cmdfile: build the kernel first (make kernel KERNEL=$KERNEL)"
cmd=$(sed -n "s#^savedcmd_$OBJ := ##p" "$cmdfile")
[ -n "$cmd" ] || die "$cmdfile has no savedcmd_$OBJ line"
cmd=${cmd#ccache }
# the object and its dependency file into the scratch directory; the rest
# (the generated headers, relative to the build directory) as built
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
dep="-Wp,-MMD,$(dirname "$OBJ")/.$(basename "$OBJ").d"
[[ $cmd == *" $dep "* && $cmd == *" -o $OBJ "* ]] ||
	die "$cmdfile: the compile does not name $dep and -o $OBJ"
cmd=${cmd/" $dep "/" -Wp,-MMD,$scratch/obj.d "}
cmd=${cmd/" -o $OBJ "/" -o $scratch/obj.o "}

best=
for _ in $(seq "$RUNS"); do
	# the compiler's user and system time (bash's time keyword)
	if ! cpu=$(cd "$KOUT" && export CCACHE_DISABLE=1 TIMEFORMAT='%3U %3S' &&
		{ time bash -c "$cmd" >"$scratch/log" 2>&1; } 2>&1); then
		cat "$scratch/log" >&2
		die "the calibration compile failed ($OBJ of $KERNEL)"
	fi
	best=$(awk -v cpu="$cpu" -v best="$best" 'BEGIN {
		split(cpu, t, " "); s = t[1] + t[2]
		if (best != "" && best < s) s = best
		printf "%.2f\n", s }')
done
echo "$best $KERNEL $OBJ"
