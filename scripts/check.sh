#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: host-only tests, the full suite on every platform, then the
# mutants (historical fastpath bugs put back must be caught).  Ends with the
# total "N passed, N failed, N skipped" over all three.
set -uo pipefail
. "$(dirname "$0")/common.sh"

mkdir -p "$RESULTS"
rm -f "$RESULTS"/unit.counts "$RESULTS"/run.counts "$RESULTS"/mutants.counts
status=0
if make -s -C "$TOP" kernel; then
	"$TOP/scripts/unit.sh" || status=1
	make -s -C "$TOP" run || status=1
	make -s -C "$TOP" mutants || status=1
else
	status=1
fi

read -r up uf us <"$RESULTS/unit.counts" 2>/dev/null || { up=0; uf=1; us=0; }
read -r rp rf rs <"$RESULTS/run.counts" 2>/dev/null || { rp=0; rf=1; rs=0; }
read -r mp mf ms <"$RESULTS/mutants.counts" 2>/dev/null || { mp=0; mf=1; ms=0; }
echo
echo "$((up + rp + mp)) passed, $((uf + rf + mf)) failed, $((us + rs + ms)) skipped"
[ $status -eq 0 ] && [ $((uf + rf + mf)) -eq 0 ]
