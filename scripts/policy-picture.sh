#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Draw what the tests measured about the fastpath's policy, per kernel:
#
#   policy.png         at a glance (README): rows: the ICR kinds of
#                      x2apic_fastpath_vm_state_test with every vCPU in
#                      x2APIC mode, and the vPMU gate (any of them while the
#                      sender's mediated vPMU counts instructions retired);
#                      columns: kernels (bochs-vmx, where the fastpath runs).
#                      Where no platform could run the vPMU state, its cell
#                      is the kernel's rule and says so: 7.3's has the gate,
#                      6.12's none (docs/policy.md)
#   policy-states.png  rows: the same ICR kinds; columns: kernel x VM-wide
#                      APIC state (bochs-vmx)
#   policy-matrix.png  rows: the IPI matrix's x2APIC groups; columns:
#                      kernel x platform, but the *-stock platforms (a
#                      kernel without the series: nothing to draw)
#
# A cell's colour is the share of its writes that took the fastpath (by the
# stat), its label "fast/writes" (or a sixth .tsv field), and "!" marks a
# cell where a write's path disagreed with the kernel's rule.  Reads the
# "path summary:" and "vm-state path:" lines of
# build/results/<kernel>/*/console.log, each test's own run only: not
# those of the tests built with the other kernel's rule ("@wrong-rule"
# runs, whose paths must disagree), nor the repeats as non-root; writes the
# pictures and their .tsv data to build/results/.  Run by make run.
#
# usage: policy-picture.sh
set -euo pipefail
top=${RESULTS:-}	# the top-level results, not one kernel's
. "$(dirname "$0")/common.sh"
top=${top:-$BUILD/results$dbg}
kernels=${KERNELS:-$("$TOP/scripts/kernels.sh")}
need_cmd gnuplot gnuplot-nox

# collect NAME PLATFORMS SED: "column<TAB>row<TAB>fast<TAB>writes<TAB>disagree"
# rows from each kernel's console logs of PLATFORMS ("*" for all; never a
# *-stock one), where SED turns a log into "column-suffix: row: N of M fast,
# D disagree ..." lines.
collect() {
	local tsv=$top/$1.tsv platforms=$2 script=$3 k log p
	: >"$tsv"
	for k in $kernels; do
		for log in "$top/$k"/$platforms/console.log; do
			[ -f "$log" ] || continue
			p=${log%/console.log}
			p=${p##*/}
			[[ $p != *-stock ]] || continue
			# a test's own run only: not the tests built with the other
			# rule, nor the repeats as non-root (each from its "@@ TEST
			# ... @wrong-rule" or "@nonroot" line to the next "@@ TEST")
			awk '{ sub(/\r$/, "") } /@@ TEST / { skip = / @(wrong-rule|nonroot)( |$)/ } !skip' "$log" |
				sed -n "$script" |
				awk -v k="$k" -v p="$p" -F': ' '{
					n = split($NF, w, " ")	# "N of M fast, D disagree with POLICY"
					col = NF > 2 ? k " " $1 : k " " p
					printf "%s\t%s\t%s\t%s\t%s\n", col, $(NF - 1), w[1], w[3], w[5]
				}' >>"$tsv"
		done
	done
}

# draw NAME TITLE: NAME.tsv -> NAME.png; a row's sixth field, where there
# is one, is its cell's label
draw() {
	local tsv=$top/$1.tsv dat=$top/$1.dat nrows ncols lmargin width caption
	[ -s "$tsv" ] || { say "$1: nothing measured to draw"; return 0; }
	rm -f "$tsv".labels "$tsv".rows "$tsv".cols
	awk -F'\t' '
		BEGIN { nrows = 0; ncol = 0 }
		!($2 in row) { row[$2] = nrows; names[nrows++] = $2 }
		!($1 in col) { col[$1] = ncol; cnames[ncol++] = $1 }
		{ f[row[$2], col[$1]] += $3; n[row[$2], col[$1]] += $4; d[row[$2], col[$1]] += $5
		  if (NF > 5) text[row[$2], col[$1]] = $6 }
		END {
			for (r = 0; r < nrows; r++) {
				for (c = 0; c < ncol; c++)
					printf "%s%.3f", c ? " " : "", n[r, c] ? f[r, c] / n[r, c] : 0
				print ""
			}
			for (r = 0; r < nrows; r++) {
				for (c = 0; c < ncol; c++) {
					label = "-"
					if ((r, c) in text)
						label = text[r, c]
					else if ((r, c) in n)
						label = f[r, c] "/" n[r, c] (d[r, c] ? " !" : "")
					printf "%d %d \"%s\"\n", c, r, label > (FILENAME ".labels")
				}
			}
			for (r = 0; r < nrows; r++)
				printf "%d \"%s\"\n", r, names[r] > (FILENAME ".rows")
			for (c = 0; c < ncol; c++)
				printf "%d \"%s\"\n", c, cnames[c] > (FILENAME ".cols")
		}' "$tsv" >"$dat"
	nrows=$(wc -l <"$dat")
	ncols=$(wc -l <"$tsv.cols")
	# the left margin fits the longest row name, the width the columns
	# and the caption's longest line
	lmargin=$(awk '{ n = length($0) - length($1) - 3; if (n > m) m = n } END { print m + 2 }' "$tsv.rows")
	width=$((lmargin * 7 + 120 * ncols + 180))
	caption=$(printf '%b\n' "$2" | awk '{ if (length($0) > m) m = length($0) } END { print m * 6 + 20 }')
	[ "$width" -ge "$caption" ] || width=$caption
	{
		echo "set terminal pngcairo size $width,$((200 + 24 * nrows)) noenhanced font ',9'"
		echo "set output '$top/$1.png'"
		# a label, not a title: the rotated column names take the top margin
		echo "set label 1 \"$2\\n'!' marks a write whose path disagreed with that kernel's rule\" at screen 0.01, screen 0.98 left front"
		echo "unset key; set cbrange [0:1]; set cblabel 'fraction of writes that took the fastpath'"
		echo "set palette defined (0 '#f4f4f4', 1 '#d94f2b')"
		echo "set yrange [$nrows - 0.5:-0.5]; set xrange [-0.5:$ncols - 0.5]"
		printf 'set ytics ('
		awk '{ n = $1; $1 = ""; printf "%s%s %s", (NR > 1 ? ", " : ""), substr($0, 2), n }' "$tsv.rows"
		echo ')'
		printf 'set x2tics rotate by 30 left ('
		awk '{ n = $1; $1 = ""; printf "%s%s %s", (NR > 1 ? ", " : ""), substr($0, 2), n }' "$tsv.cols"
		echo '); unset xtics'
		echo "set lmargin $lmargin; set tmargin 12"
		echo "plot '$dat' matrix with image, '$tsv.labels' using 1:2:3 with labels"
	} >"$top/$1.gp"
	gnuplot "$top/$1.gp"
	say "$1: $top/$1.png (data: $tsv)"
}

# glance: policy.tsv from policy-states.tsv: the all-x2APIC state's writes
# per kernel, then the vPMU row, measured or by the kernel's rule
glance() {
	local states=$top/policy-states.tsv tsv=$top/policy.tsv k
	: >"$tsv"
	[ -s "$states" ] || return 0
	for k in $kernels; do
		awk -F'\t' -v k="$k" -v first="$k $FIRST_STATE" -v pmu="$k $PMU_STATE" \
		    -v row="$PMU_ROW" '
			$1 == first { print k "\t" $2 "\t" $3 "\t" $4 "\t" $5; f += $3; n += $4
				      if (!($2 in kind)) { kind[$2] = 1; kinds++ } }
			$1 == pmu { pf += $3; pn += $4; pd += $5 }
			END {
				if (pn)			# measured
					print k "\t" row "\t" pf "\t" pn "\t" pd
				else if (k ~ /^6\./)	# no mediated vPMU, no gate
					print k "\t" row "\t" f "\t" n "\t0\tno gate: as above"
				else if (n)		# the gate: none of the kinds fast
					print k "\t" row "\t0\t" kinds "\t0\t0/" kinds " by the rule"
			}' "$states" >>"$tsv"
	done
}
FIRST_STATE="all x2APIC, two clusters"
PMU_STATE="mediated PMU counting instructions"
PMU_ROW="any of them while the sender's vPMU counts instructions"

collect policy-states bochs-vmx 's/^.*@@ # vm-state path: //p'
draw policy-states "x2APIC ICR fastpath by kernel and VM-wide APIC state (bochs-vmx, x2apic_fastpath_vm_state_test)"
glance
draw policy "x2APIC ICR writes that took KVM's fastpath, every vCPU in x2APIC mode\n(bochs-vmx, x2apic_fastpath_vm_state_test); the last row is the kernel's rule\nwhere no platform could run a mediated vPMU"
# the matrix's fastpath-on run, x2APIC groups only (xAPIC writes are MMIO)
collect policy-matrix '*' '/@@ # path summary: xapic /d; s/^.*@@ # path summary: //p'
draw policy-matrix "x2APIC ICR writes of the IPI matrix that took the fastpath, by kernel and platform"
