#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: which lines, branches and functions of KVM's interrupt
# delivery code the suite runs, on $KERNEL.  KVM's modules are built with gcov
# (kernel.sh --gcov: the kernel itself is not profiled), the whole list runs
# on each platform of $COVERAGE_PLATFORMS (default: $PLATFORMS but the stock
# kernel's, which is another KVM), the guest dumps the counts on its console
# (guest-init.sh, dump_gcov), and they come back here, checked, into lcov's
# tracefiles: one per platform and their sum, all.info, under
# $BUILD/coverage/$KERNEL/.  Prints, for the files of $COVERAGE_FILES, lines,
# branches and functions run, and writes beside it:
#   report.txt      that table, and the functions no platform ran
#   functions.tsv   FILE FUNCTION CALLS LINES_RUN LINES BRANCHES_TAKEN BRANCHES
#   untaken.tsv     FILE LINE FUNCTION BLOCK BRANCH: each branch never taken
# The tests' verdicts are make run's business: here a failed test only
# lowers the counts, and is said.  A platform whose counts did not come back
# whole (a dump with a line lost) fails the run.
set -uo pipefail
. "$(dirname "$0")/common.sh"

if ! command -v lcov >/dev/null 2>&1 && deps_installs; then
	say "installing lcov (make coverage reads gcov's counts with it)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q lcov >"$BUILD/lcov-install.log" 2>&1 ||
		die "apt-get install lcov failed ($BUILD/lcov-install.log)"
fi
need_cmd lcov lcov
need_cmd gcov gcc

cov=$BUILD/coverage/$KERNEL
if [ -z "${COVERAGE_PLATFORMS:-}" ]; then
	PLATFORMS=$(check_platforms) || exit 1
	for p in $PLATFORMS; do
		case $p in *-stock | host) ;; *) COVERAGE_PLATFORMS="${COVERAGE_PLATFORMS:-} $p" ;; esac
	done
fi
[ -n "${COVERAGE_PLATFORMS:-}" ] ||
	die "make coverage boots the coverage kernel: PLATFORMS=\"$PLATFORMS\" has no platform that boots one"

"$TOP/scripts/kernel.sh" --gcov || die "the coverage kernel did not build"
mkdir -p "$cov"
rm -rf "${cov:?}"/runs "$cov"/*.info "$cov"/gcda-*
# what the counts' line numbers refer to (make mutation checks it)
coverage_sources_md5 >"$cov/sources.md5"
# A boot with gcov's counts: bigger log buffer, so that the dump's lines
# wait there for the console rather than overwrite each other
say "$KERNEL: the whole list on$COVERAGE_PLATFORMS with KVM's coverage counted (log: $cov/run.log)"
BZIMAGE=$GCOV_BZIMAGE EXTRA_CMDLINE="kvmipi.gcov log_buf_len=8M" RESULTS=$cov/runs \
	PLATFORMS="${COVERAGE_PLATFORMS# }" "$TOP/scripts/run.sh" >"$cov/run.log" 2>&1
run_rc=$?
tail -n 1 "$cov/run.log"
[ $run_rc -eq 0 ] || say "$KERNEL: a test failed or a platform did not run with the coverage kernel: counts are of what ran ($cov/run.log)"

# gcda PLATFORM: the platform's dump, checked (scripts/gcov-dump.sh), unpacked into
# $cov/gcda-PLATFORM beside copies of the build's .gcno files
gcda() {
	local p=$1 dir=$cov/gcda-$1 why f rel
	rm -rf "$dir"
	why=$("$TOP/scripts/gcov-dump.sh" "$cov/runs/$p/console.log" "$dir") || { echo "$p: $why"; return 1; }
	(cd "$GCOV_OUT" && find arch/x86/kvm virt -name '*.gcno') | while read -r rel; do
		mkdir -p "$dir/obj/${rel%/*}"
		cp "$GCOV_OUT/$rel" "$dir/obj/$rel"
	done
	find "$dir/dump" -name '*.gcda' | while read -r f; do
		rel=${f#*/"${GCOV_OUT##*/}"/}
		[ -f "$dir/obj/${rel%.gcda}.gcno" ] && cp "$f" "$dir/obj/$rel"
	done
	[ -f "$dir/obj/arch/x86/kvm/lapic.gcda" ] || { echo "$p's dump has no counts of lapic.c"; return 1; }
}

status=0 infos=()
for p in $COVERAGE_PLATFORMS; do
	if ! why=$(gcda "$p"); then
		echo "not ok - coverage: $KERNEL $p: $why"
		status=1
		continue
	fi
	if ! lcov -q --capture --rc lcov_branch_coverage=1 -d "$cov/gcda-$p/obj" -b "$GCOV_OUT" \
		-o "$cov/$p.info" >"$cov/lcov-$p.log" 2>&1; then
		echo "not ok - coverage: $KERNEL $p: lcov could not read the counts ($cov/lcov-$p.log)"
		status=1
		continue
	fi
	infos+=(-a "$cov/$p.info")
	rm -rf "$cov/gcda-$p/dump"
done
[ ${#infos[@]} -gt 0 ] || die "$KERNEL: no platform's counts came back"
lcov -q --rc lcov_branch_coverage=1 "${infos[@]}" -o "$cov/all.info" >"$cov/lcov-all.log" 2>&1 ||
	die "lcov could not add the platforms' counts ($cov/lcov-all.log)"

# The files of COVERAGE_FILES in a tracefile: per file lines, branches,
# functions; per function its calls, lines and branches (a line belongs to
# the function that starts last before it); each branch never taken.
report() {	# report TRACEFILE FUNCTIONS_TSV UNTAKEN_TSV
	awk -v files="$COVERAGE_FILES" -v kernel="$KERNEL" -v plats="$COVERAGE_PLATFORMS" \
	    -v ftsv="$2" -v utsv="$3" '
	function short(sf,   s) {
		s = sf
		if (sub(/.*\/arch\/x86\/kvm\//, "", s)) return s
		if (sub(/.*\/virt\/kvm\//, "virt/kvm/", s)) return s
		return ""
	}
	function fn_of(f, l,   i, best, bl) {
		best = "-"; bl = 0
		for (i = 1; i <= nfn[f]; i++)
			if (fline[f, i] <= l && fline[f, i] > bl) { bl = fline[f, i]; best = fname[f, i] }
		return best
	}
	BEGIN { n = split(files, w, /[ \t\n]+/); for (i = 1; i <= n; i++) if (w[i] != "") want[w[i]] = ++nw }
	/^SF:/ { f = short(substr($0, 4)); if (!(f in want)) f = ""; if (f != "") seen[f] = 1; next }
	f == "" { next }
	/^FN:/ { split(substr($0, 4), a, ","); nfn[f]++; fline[f, nfn[f]] = a[1]; fname[f, nfn[f]] = a[2]; next }
	/^FNDA:/ { split(substr($0, 6), a, ","); calls[f, a[2]] += a[1]; next }
	/^DA:/ { split(substr($0, 4), a, ","); da[f, a[1]] += a[2]; if (!((f, a[1]) in dal)) { dal[f, a[1]] = 1; lines[f] = lines[f] " " a[1] } next }
	/^BRDA:/ { split(substr($0, 6), a, ","); k = f SUBSEP a[1] SUBSEP a[2] SUBSEP a[3]
		   if (!(k in br)) { br[k] = 0; brl[f] = brl[f] " " a[1] "," a[2] "," a[3] }
		   if (a[4] != "-") br[k] += a[4]; next }
	END {
		printf "KVM coverage by the suite, Linux %s (%s):\n", kernel, substr(plats, 2)
		printf "%-20s %18s %18s %16s\n", "file", "lines", "branches", "functions"
		for (i = 1; i <= nw; i++) for (g in want) if (want[g] == i && (g in seen)) order[++no] = g
		for (i = 1; i <= no; i++) {
			g = order[i]
			m = split(lines[g], L, " ")
			for (j = 1; j <= m; j++) {
				fn = fn_of(g, L[j]); lf[g]++; flf[g, fn]++
				if (da[g, L[j]] > 0) { lh[g]++; flh[g, fn]++ }
			}
			m = split(brl[g], B, " ")
			for (j = 1; j <= m; j++) {
				split(B[j], b, ","); fn = fn_of(g, b[1]); bf[g]++; fbf[g, fn]++
				if (br[g, b[1], b[2], b[3]] > 0) { bh[g]++; fbh[g, fn]++ }
				else printf "%s\t%s\t%s\t%s\t%s\n", g, b[1], fn, b[2], b[3] > utsv
			}
			for (j = 1; j <= nfn[g]; j++) {
				fn = fname[g, j]; ff[g]++
				if (calls[g, fn] > 0) fh[g]++; else never[g] = never[g] " " fn
				printf "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", g, fn, calls[g, fn], flh[g, fn], flf[g, fn],
					fbh[g, fn], fbf[g, fn] > ftsv
			}
			printf "%-20s %5.1f%% %5d/%-5d %5.1f%% %5d/%-5d %5.1f%% %4d/%-4d\n", g,
				100 * lh[g] / (lf[g] ? lf[g] : 1), lh[g], lf[g],
				100 * bh[g] / (bf[g] ? bf[g] : 1), bh[g], bf[g],
				100 * fh[g] / (ff[g] ? ff[g] : 1), fh[g], ff[g]
			tlh += lh[g]; tlf += lf[g]; tbh += bh[g]; tbf += bf[g]; tfh += fh[g]; tff += ff[g]
		}
		printf "%-20s %5.1f%% %5d/%-5d %5.1f%% %5d/%-5d %5.1f%% %4d/%-4d\n", "all", 100 * tlh / (tlf ? tlf : 1),
			tlh, tlf, 100 * tbh / (tbf ? tbf : 1), tbh, tbf, 100 * tfh / (tff ? tff : 1), tfh, tff
		printf "\nfunctions never run:\n"
		for (i = 1; i <= no; i++) if (never[order[i]] != "") printf "  %s:%s\n", order[i], never[order[i]]
	}' "$1"
}
: >"$cov/untaken.tsv"
report "$cov/all.info" "$cov/functions.tsv" "$cov/untaken.tsv" >"$cov/report.txt"
sort -t$'\t' -k1,1 -k2,2n -o "$cov/untaken.tsv" "$cov/untaken.tsv"
sed '/^functions never run:/q' "$cov/report.txt" | sed '$d'
echo "(functions never run: $cov/report.txt; per function: $cov/functions.tsv; branches never taken: $cov/untaken.tsv)"
for p in $COVERAGE_PLATFORMS; do
	[ -f "$cov/$p.info" ] || continue
	printf '%s alone: ' "$p"
	COVERAGE_PLATFORMS=" $p" report "$cov/$p.info" /dev/null /dev/null | awk '$1 == "all" { print "lines " $2 " " $3 ", branches " $4 " " $5 ", functions " $6 " " $7 }'
done
[ $status -eq 0 ] && echo "ok - coverage: $KERNEL counts from$COVERAGE_PLATFORMS"
exit $status
