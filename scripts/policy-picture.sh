#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Draw what the matrix measured, per kernel, as one picture: rows are the
# matrix's x2APIC groups of ICR writes, columns kernel x platform; a cell's
# colour is the share of its writes that took the fastpath (by the stat),
# its label "fast/writes", and "!" marks a cell where some write's path
# disagreed with the oracle's policy for that kernel.  Reads the
# "path summary:" lines of build/results/<kernel>/<platform>/console.log;
# writes build/results/policy.png and policy.tsv.  Run by make run.
#
# usage: policy-picture.sh
set -euo pipefail
top=${RESULTS:-}	# the top-level results, not one kernel's
. "$(dirname "$0")/common.sh"
top=${top:-$BUILD/results$dbg}
kernels=${KERNELS:-$("$TOP/scripts/kernels.sh")}
need_cmd gnuplot gnuplot-nox
tsv=$top/policy.tsv
: >"$tsv"
cols=()
for k in $kernels; do
	for log in "$top/$k"/*/console.log; do
		[ -f "$log" ] || continue
		p=${log%/console.log}
		p=${p##*/}
		# the fastpath-on run, x2APIC groups only (xAPIC writes are MMIO)
		sed -n 's/\r$//; /@@ # path summary: xapic /d; s/^.*@@ # path summary: //p' "$log" |
			awk -v col="$k $p" -F': ' '{
				split($2, w, " ")	# "N of M fast, D disagree with POLICY"
				printf "%s\t%s\t%s\t%s\t%s\t%s\n", col, $1, w[1], w[3], w[5], w[8]
			}' >>"$tsv"
		grep -q "^$k $p	" "$tsv" && cols+=("$k $p")
	done
done
[ ${#cols[@]} -gt 0 ] || { say "no matrix results to draw"; exit 0; }

# gnuplot matrix: one row per group, in the matrix's order, one column per
# kernel x platform; then one label per cell.
dat=$top/policy.dat
rm -f "$tsv".labels "$tsv".rows "$tsv".cols
awk -F'\t' '
	BEGIN { nrows = 0; ncol = 0 }
	!($2 in row) { row[$2] = nrows; names[nrows++] = $2 }
	!($1 in col) { col[$1] = ncol; cnames[ncol++] = $1 }
	{ v[row[$2], col[$1]] = $4 ? $3 / $4 : 0
	  l[row[$2], col[$1]] = $3 "/" $4 ($5 > 0 ? " !" : "") }
	END {
		for (r = 0; r < nrows; r++) {
			for (c = 0; c < ncol; c++)
				printf "%s%.3f", c ? " " : "", v[r, c]
			print ""
		}
		for (r = 0; r < nrows; r++)
			for (c = 0; c < ncol; c++)
				printf "%d %d \"%s\"\n", c, r, l[r, c] > (FILENAME ".labels")
		for (r = 0; r < nrows; r++)
			printf "%d \"%s\"\n", r, names[r] > (FILENAME ".rows")
		for (c = 0; c < ncol; c++)
			printf "%d \"%s\"\n", c, cnames[c] > (FILENAME ".cols")
	}' "$tsv" >"$dat"
nrows=$(wc -l <"$dat")
{
	echo "set terminal pngcairo size $((360 + 170 * ${#cols[@]})),$((140 + 22 * nrows)) noenhanced font ',10'"
	echo "set output '$top/policy.png'"
	echo "set title \"x2APIC ICR writes of the IPI matrix: the share that took the fastpath (by the stat)\\n'!': a write whose path disagreed with the oracle's policy for that kernel\""
	echo "unset key; set cbrange [0:1]; set cblabel 'fraction fast'"
	echo "set palette defined (0 '#f4f4f4', 1 '#d94f2b')"
	echo "set yrange [$nrows - 0.5:-0.5]; set xrange [-0.5:${#cols[@]} - 0.5]"
	printf 'set ytics ('
	awk '{ $1 = $1; n = $1; $1 = ""; printf "%s%s %s", (NR > 1 ? ", " : ""), substr($0, 2), n }' "$tsv.rows"
	echo ')'
	printf 'set x2tics ('
	awk '{ n = $1; $1 = ""; printf "%s%s %s", (NR > 1 ? ", " : ""), substr($0, 2), n }' "$tsv.cols"
	echo '); unset xtics'
	echo "set lmargin 28"
	echo "plot '$dat' matrix with image, '$tsv.labels' using 1:2:3 with labels"
} >"$top/policy.gp"
gnuplot "$top/policy.gp"
say "policy picture: $top/policy.png (data: $tsv)"
