#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# After make bench: each kernel's fastpath on/off medians side by side, per
# platform, from build/bench/<kernel>/<platform>/stats.csv, with the ratio
# off / on measured within each kernel's one run.  Writes and prints
# build/bench/compare-<platform>.txt.  Cycles under an emulator are the
# emulator's, not the hardware's.
set -euo pipefail
. "$(dirname "$0")/common.sh"

kernels=${KERNELS:-$("$TOP/scripts/kernels.sh")}
out=$BUILD/bench
for dir in "$out"/*/*/; do
	[ -f "$dir/stats.csv" ] && basename "$dir"
done | sort -u | while read -r p; do
	{
		echo "# $p: median guest TSC cycles, fastpath on / off, ratio = off / on (one run per kernel)"
		echo "# cycles under an emulator are the emulator's, not the hardware's"
		printf '# %-8s %-8s %-8s' ping metric receiver
		for k in $kernels; do printf ' %26s' "$k: on / off = ratio"; done
		echo
		for k in $kernels; do
			f=$out/$k/$p/stats.csv
			[ -f "$f" ] && sed "s/^/$k,/" "$f"
		done | awk -F, -v kernels="$kernels" '
			# kernel,KIND, fastpath ON|OFF,receiver,metric,min,median,p90,p99
			# (the xAPIC case has no ", fastpath": 8 fields, skipped)
			NF == 9 { onoff = $3 ~ /on$/ ? "on" : "off"
			  key = $2 SUBSEP $5 SUBSEP $4
			  if (!(key in seen)) { seen[key] = 1; order[++n] = key }
			  v[$1, key, onoff] = $7 }
			END {
				nk = split(kernels, ks, " ")
				for (i = 1; i <= n; i++) {
					split(order[i], f, SUBSEP)
					if (f[2] == "rtt") continue
					printf "# %-8s %-8s %-8s", f[1], f[2], f[3]
					for (j = 1; j <= nk; j++) {
						on = v[ks[j], order[i], "on"]; off = v[ks[j], order[i], "off"]
						if (on == "") { printf " %26s", "-"; continue }
						printf " %26s", sprintf("%6d / %6d = %5.2f", on, off, on ? off / on : 0)
					}
					print ""
				}
			}'
	} >"$out/compare-$p.txt"
	cat "$out/compare-$p.txt"
done
