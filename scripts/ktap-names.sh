#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CI matches a KTAP point across runs by its name, so each of our tests
# must name its points the same way in every run, whatever the kernel,
# options or outcome: counts, seeds, the policy and the platform belong in
# diagnostic lines, and a skip is a planned point with a name.  For every
# platform that ran, compare the point names of our tests (x2apic_*):
#  - the direct run against the kselftest runner's run of the same test in
#    the same boot (no options there: the matrix's and hostile test's -d
#    points are skipped, under the same names) and against its run as a
#    user without root (suite.sh, "@nonroot");
#  - each kernel's direct run against the other kernels', but for the points
#    that only one tree's fastpath rule has (TREE_ONLY).
# Only runs that printed every planned point are compared; a point without
# a name fails.  usage: KERNELS="6.12 7.3" ktap-names.sh RESULTS_TOP
# Prints one line per platform and writes RESULTS_TOP/names.counts.
set -uo pipefail
. "$(dirname "$0")/common.sh"

top=$1
# Points of a rule that one tree's tests carry and the other's do not
# (lib/x86/ipi_oracle.c, compiled per tree): the VM-state test's state of a
# vCPU whose mediated vPMU counts instructions, 7.3's vPMU gate.
TREE_ONLY=$'^[0-9]+\tmediated PMU counting instructions: '
work=$top/names
rm -rf "$work"
mkdir -p "$work"

# names CONSOLE: "RUN<TAB>TEST<TAB>N<TAB>NAME" for every point of a
# complete run of one of our tests; RUN is direct1, direct2, ...,
# nonroot1, ... or runner1, ... (the kselftest runner's), in boot order
names() {
	sed 's/\r$//' "$1" | awk '
		function flush() {
			if (test != "" && plan != "" && n == plan)
				printf "%s", out
			test = ""; out = ""; n = 0; plan = ""
		}
		function start(kind, t) {
			flush()
			test = t
			src = kind (++runs[kind, t])
		}
		function point(line,    name) {
			name = line
			sub(/^(not )?ok [0-9]+ ?/, "", name)
			sub(/ ?# .*$/, "", name)
			n++
			out = out sprintf("%s\t%s\t%d\t%s\n", src, test, n, name)
		}
		!/@@ / { next }
		{ sub(/^.*@@ /, "") }
		/^TEST kvm\/x2apic_[a-z0-9_]+$/ { start("direct", substr($0, 6)); next }
		/^TEST kvm\/x2apic_[a-z0-9_]+ @nonroot$/ { start("nonroot", $2); next }
		/^TEST / || /^RC / || /^END/ { flush(); next }
		/^# selftests: kvm: x2apic_/ { start("runner", "kvm/" $4); next }
		src !~ /^runner/ && /^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0; next }
		src !~ /^runner/ && /^(not )?ok [0-9]+/ { point($0); next }
		src ~ /^runner/ && /^# 1\.\.[0-9]+$/ { plan = substr($0, 6) + 0; next }
		src ~ /^runner/ && /^# (not )?ok [0-9]+/ { point(substr($0, 3)); next }
		src ~ /^runner/ && /^(not )?ok [0-9]+ selftests: / { flush() }
		END { flush() }'
}

# points FILE SOURCE TEST: "N<TAB>NAME" of that run
points() {
	awk -F'\t' -v s="$2" -v t="$3" '$1 == s && $2 == t { print $3 "\t" $4 }' "$1"
}

# differ A B: the first two lines that differ
differ() {
	diff <(echo "$1") <(echo "$2") | grep '^[<>]' | head -2 | tr '\n' ' '
}

pass=0 fail=0 skip=0
# the platforms of this run (run.sh's results.tsv), not older runs' leftovers
platforms=$(for k in $KERNELS; do
	cut -f1 "$top/$k/results.tsv" 2>/dev/null
done | sort -u)
for p in $platforms; do
	why=()
	compared=0
	for k in $KERNELS; do
		f=$work/$k-$p
		grep -q "^$p	" "$top/$k/results.tsv" 2>/dev/null &&
			[ -f "$top/$k/$p/console.log" ] || continue
		names "$top/$k/$p/console.log" >"$f"
		unnamed=$(awk -F'\t' '$4 == "" { print $2 }' "$f" | sort -u)
		[ -z "$unnamed" ] || why+=("$k: points without a name in $(echo $unnamed)")
		# every run of a test in this boot against its first
		for t in $(cut -f2 "$f" | sort -u); do
			runs=$(awk -F'\t' -v t="$t" '$2 == t && !seen[$1]++ { print $1 }' "$f")
			a=$(points "$f" "${runs%%$'\n'*}" "$t")
			for r in $(echo "$runs" | tail -n +2); do
				b=$(points "$f" "$r" "$t")
				compared=$((compared + 1))
				[ "$a" = "$b" ] || why+=("$k: $t: runs ${runs%%$'\n'*} and $r differ: $(differ "$a" "$b")")
			done
		done
	done
	# the first direct run of each test, kernel against kernel
	set -- $KERNELS
	first=$1
	shift
	for k in "$@"; do
		[ -f "$work/$first-$p" ] && [ -f "$work/$k-$p" ] || continue
		for t in $(awk -F'\t' '$1 == "direct1" { print $2 }' "$work/$first-$p" | sort -u); do
			a=$(points "$work/$first-$p" direct1 "$t" | grep -Ev "$TREE_ONLY")
			b=$(points "$work/$k-$p" direct1 "$t" | grep -Ev "$TREE_ONLY")
			[ -n "$b" ] || continue
			compared=$((compared + 1))
			[ "$a" = "$b" ] || why+=("$t: $first and $k differ: $(differ "$a" "$b")")
		done
	done
	if [ ${#why[@]} -gt 0 ]; then
		fail=$((fail + 1))
		echo "not ok - KTAP point names alike in every run: $p"
		printf '#   %s\n' "${why[@]}"
	elif [ "$compared" -eq 0 ]; then
		skip=$((skip + 1))
		echo "ok - KTAP point names alike in every run: $p # SKIP no two complete runs of a test"
	else
		pass=$((pass + 1))
		echo "ok - KTAP point names alike in every run: $p ($compared pairs of runs)"
	fi
done
echo "$pass $fail $skip" >"$top/names.counts"
[ "$fail" -eq 0 ]
