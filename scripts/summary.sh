#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Today's results as Markdown, from what make check left in build/results/:
# the platform x kernel table of make run (each kernel's results.tsv), and
# per phase its counts (NAME.counts: "passed failed skipped") and its time
# (check.phases, written by scripts/check.sh).  make check writes it to
# build/results/summary.md.
#
# usage: summary.sh             print it
#        summary.sh --readme    put build/results/summary.md into README.md,
#                               between "<!-- summary: begin -->" and
#                               "<!-- summary: end -->"
set -euo pipefail
top=${RESULTS:-}	# the top-level results, not one kernel's
. "$(dirname "$0")/common.sh"
top=${top:-$BUILD/results$dbg}

if [ "${1:-}" = --readme ]; then
	[ -s "$top/summary.md" ] || die "no $top/summary.md: run 'make check' first"
	awk -v summary="$top/summary.md" '
		$0 == "<!-- summary: end -->" { skipping = 0 }
		!skipping { print }
		$0 == "<!-- summary: begin -->" {
			while ((getline line < summary) > 0) print line
			skipping = 1; found = 1
		}
		END { if (!found) exit 1 }' "$TOP/README.md" >"$TOP/README.md.new" ||
		{ rm -f "$TOP/README.md.new"; die "README.md has no '<!-- summary: begin -->' line"; }
	mv "$TOP/README.md.new" "$TOP/README.md"
	say "README.md: today's results from $top/summary.md"
	exit 0
fi

kernels=${KERNELS:-$("$TOP/scripts/kernels.sh")}
commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
versions=
for k in $kernels; do
	v=$(make -s -C "$BUILD/$k/linux" kernelversion 2>/dev/null) || v="$k (no tree)"
	versions="$versions, $v"
done
# counts PHASE: "passed failed skipped" of a phase, or nothing
counts() {
	[ -f "$top/$1.counts" ] && awk '{ print $1, $2, $3; exit }' "$top/$1.counts"
}
# timing PHASE: "seconds busy%" from check.phases ("NAME SECONDS s (N
# cal), CPUs N% busy"), or nothing
timing() {
	[ -f "$top/check.phases" ] &&
		awk -v ph="$1" '$1 == ph {
			busy = "-"
			if (match($0, /CPUs +[0-9]+%/)) { busy = substr($0, RSTART + 4, RLENGTH - 4); sub(/^ +/, "", busy) }
			print $2, busy; exit }' "$top/check.phases"
}
tp=0 tf=0 ts=0 phases=
for ph in patches unit intree run mutants; do
	read -r p f s < <(counts "$ph") || continue
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s)) phases="$phases, $ph"
done
read -r total _ < <(timing total) || total=
# what ran: make check (its phase times are there) or some of its phases
if [ -n "$total" ]; then
	what="\`make check\`, $total s$(in_calibrations "$total" "$top/calibration")"
else
	phases=${phases#, }
	case $phases in
	*,*) what="\`make check\`'s phases $phases" ;;
	*) what="\`make check\`'s $phases phase" ;;
	esac
fi
[ ! -f "$top/calibration" ] || { calibration_line "$top/calibration"; echo; }
echo "At $commit ($(date -u '+%Y-%m-%d')), Linux ${versions#, }: $tp passed," \
	"$tf failed, $ts skipped ($what)."
echo
# the platforms on this machine's KVM that have no result, and why
nokvm=
for p in qemu-kvm host; do
	grep -qs "^$p	" $(for k in $kernels; do echo "$top/$k/results.tsv"; done) /dev/null || nokvm="$nokvm $p"
done
if [ -n "$nokvm" ]; then
	why=$(kvm_problem 2>/dev/null || true)
	echo "No$(echo "$nokvm" | sed 's/ \([^ ]*\) /& or /;s/  / /') result: they run on this machine's own KVM, and it has none${why:+ (${why%%:*})}."
	echo
fi
# a run that proved no fastpath point (each-kernel.sh) says so here too
if [ -f "$top/run.nopath" ]; then
	echo "**No path proved**: every fastpath point (\": path\") of this make run SKIPped;"
	echo "it checked delivery only (docs/platforms.md)."
	echo
fi
# ... and each kernel x platform that proved none (STRICT=1 fails those
# that could prove one)
if [ -f "$top/run.unproved" ]; then
	sed 's/^path: /- /' "$top/run.unproved"
	echo
fi

# make run, platform x kernel: tests passed/failed/skipped (expected
# failures count as passed; the rows suite-completed and guest-kernel-clean
# are tests too), then the KTAP points proved, exactly a known KVM
# deviation (XFAIL) and not provable there (SKIP).
tsvs=()
for k in $kernels; do
	[ ! -f "$top/$k/results.tsv" ] || tsvs+=("$top/$k/results.tsv")
done
if [ ${#tsvs[@]} -gt 0 ]; then
	for k in $kernels; do
		[ -f "$top/$k/results.tsv" ] && sed "s/^/$k\t/" "$top/$k/results.tsv"
	done | awk -F'\t' -v kernels="$kernels" '
		{ key = $2 SUBSEP $1; if (!($2 in seen)) { seen[$2] = 1; plat[++np] = $2 }
		  n[key, $4]++; ok[key] += $7; skip[key] += $8; known[key] += $10 }
		END {
			nk = split(kernels, kl, " ")
			printf "| make run: tests passed/failed/skipped; KTAP points ok, XFAIL, SKIP |"
			for (i = 1; i <= nk; i++) printf " %s |", kl[i]
			printf "\n|---|"
			for (i = 1; i <= nk; i++) printf "---|"
			print ""
			for (j = 1; j <= np; j++) {
				p = plat[j]; printf "| %s |", p
				for (i = 1; i <= nk; i++) {
					key = p SUBSEP kl[i]
					if (n[key, "pass"] + n[key, "xfail"] + n[key, "fail"] + n[key, "skip"] == 0) {
						printf " - |"; continue
					}
					printf " %d/%d/%d; %d ok, %d XFAIL, %d SKIP%s |",
						n[key, "pass"] + n[key, "xfail"], n[key, "fail"], n[key, "skip"],
						ok[key], known[key], skip[key],
						n[key, "xfail"] ? sprintf("; %d expected failure%s", n[key, "xfail"],
									 n[key, "xfail"] > 1 ? "s" : "") : ""
				}
				print ""
			}
		}'
	echo
fi

# Per phase: counts and time.
echo "| phase | passed | failed | skipped | wall | in cal | CPUs busy |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for ph in patches build unit intree run mutants; do
	c=$(counts "$ph") || true
	t=$(timing "$ph") || true
	[ -n "$c$t" ] || continue
	read -r p f s <<<"${c:-- - -}"
	read -r secs busy <<<"${t:-- -}"
	cal=$(in_calibrations "$secs" "$top/calibration" | sed 's/^ (//; s/)$//')
	[ "$secs" = - ] || secs="$secs s"
	printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$ph" "$p" "$f" "$s" "$secs" "${cal:--}" "$busy"
done
