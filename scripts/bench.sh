#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: boot each platform of $BENCH_PLATFORMS (default bochs-vmx and
# bochs-svm, plus qemu-kvm where /dev/kvm exists) with only the IPI
# benchmark, and leave per
# platform under $BUILD/bench/<platform>/: table.txt (the printed table),
# stats.csv, samples.csv (every sample) and bench.png (distributions).
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ -z "$DEBUG" ] || die "make bench measures the normal kernel (lockdep and KASAN would dominate the timings): run it without DEBUG=1"

SAMPLES=${BENCH_SAMPLES:-1000}
# The benchmark is one long test: 300 guest seconds (the suite's per-test
# limit) is not enough for 300 samples per case under bochs-svm, whose guest
# clock runs near wall time.
export TEST_TIMEOUT=${TEST_TIMEOUT:-1200}
out=$BUILD/bench/$KERNEL
declare -A EMULATOR=(
	[bochs-vmx]="Bochs 2.7, CPU model tigerlake, 1 CPU, VMX+EPT"
	[bochs-svm]="Bochs 2.7, CPU model zambezi, 1 CPU, SVM+NPT+NRIP save"
	[bochs-vmx-2cpu]="Bochs 2.7, CPU model tigerlake, 2 CPUs, VMX+EPT: sender and receiver on their own CPUs"
	[bochs-svm-2cpu]="Bochs 2.7, CPU model zambezi, 2 CPUs, SVM+NPT+NRIP save: sender and receiver on their own CPUs"
	[qemu-svm]="QEMU 11.1 TCG (Debian unstable), CPU EPYC+svm+npt, 1 CPU"
	[qemu-kvm]="QEMU with KVM, nested, CPU host"
	[host]="no emulator: the running kernel"
)

platforms=${BENCH_PLATFORMS:-bochs-vmx bochs-svm$(host_has_kvm && echo " qemu-kvm" || true)}
need_cmd gnuplot gnuplot-nox
mkdir -p "$out"
echo "kvm/x2apic_ipi_bench -r -n $SAMPLES" >"$out/tests.list"
# BENCH_REPLOT=1: only redo the tables and pictures from the last run's logs
[ -n "${BENCH_REPLOT:-}" ] || TESTS_LIST=$out/tests.list INITRAMFS=$out/initramfs.cpio "$TOP/scripts/initramfs.sh"

for p in $platforms; do
	dir=$out/$p
	if [ -z "${BENCH_REPLOT:-}" ]; then
		say "$p: benchmark, $SAMPLES samples per case"
		TESTS_LIST=$out/tests.list INITRAMFS=$out/initramfs.cpio \
			"$TOP/scripts/platform.sh" "$p" "$dir"
	fi
	sed -n 's/\r$//; s/^.*@@ //p' "$dir/console.log" >"$dir/output.txt"
	grep -q '^RC 0 ' "$dir/output.txt" ||
		die "$p: the benchmark failed, see $dir/console.log"
	{
		echo "# platform: $p (${EMULATOR[$p]})"
		grep '^# ' "$dir/output.txt" | grep -v '^# running: '
	} >"$dir/table.txt"
	sed -n 's/^STATS,//p' "$dir/output.txt" >"$dir/stats.csv"
	{
		echo "case,receiver,sample,write,latency,rtt"
		sed -n 's/^SAMPLE,//p' "$dir/output.txt"
	} >"$dir/samples.csv"

	# Empirical CDFs, one file per case and receiver: "cycles fraction".
	rm -f "$dir"/cdf-*.dat
	# A case's name may hold a comma ("physical, fastpath on"): count the
	# other fields from the end.
	awk -F, -v dir="$dir" 'NR > 1 {
		name = $1
		for (i = 2; i <= NF - 5; i++)
			name = name "," $i
		key = name "|" $(NF - 4); n[key]++
		w[key, n[key]] = $(NF - 2); l[key, n[key]] = $(NF - 1)
	} END {
		for (key in n) {
			split(key, k, "|"); f = k[1] "-" k[2]; gsub(/[^A-Za-z0-9-]/, "_", f)
			for (i = 1; i <= n[key]; i++) {
				print w[key, i] > (dir "/w.tmp"); print l[key, i] > (dir "/l.tmp")
			}
			close(dir "/w.tmp"); close(dir "/l.tmp")
			system("sort -n " dir "/w.tmp | awk -v n=" n[key] " \x27{ print $1, NR / n }\x27 > " dir "/cdf-write-" f ".dat")
			system("sort -n " dir "/l.tmp | awk -v n=" n[key] " \x27{ print $1, NR / n }\x27 > " dir "/cdf-latency-" f ".dat")
			system("rm -f " dir "/w.tmp " dir "/l.tmp")
		}
	}' "$dir/samples.csv"
	{
		echo "set terminal pngcairo size 2000,600 noenhanced"
		echo "set output '$dir/bench.png'"
		echo "set multiplot layout 1,3 title '$p: ${EMULATOR[$p]} (emulated TSC cycles, not hardware cycles)'"
		# the polling receiver's latency: a vCPU in guest mode, on
		# another CPU on the two-CPU platforms
		for panel in write-halted latency-halted latency-polling; do
			metric=${panel%-*} rx=${panel#*-}
			echo "set title 'ICR $metric, receiver $rx: CDF'"
			echo "set xlabel 'guest TSC cycles'; set ylabel 'fraction of samples'"
			echo "set logscale x; set key bottom right; set grid"
			printf 'plot'
			sep=' '
			for f in "$dir"/cdf-"$metric"-*"$rx".dat; do
				name=${f##*/cdf-$metric-}
				printf "%s'%s' using 1:2 with lines lw 2 title '%s'" "$sep" "$f" "${name%-$rx.dat}"
				sep=', '
			done
			echo
		done
		echo "unset multiplot"
	} >"$dir/bench.gp"
	gnuplot "$dir/bench.gp"
	cat "$dir/table.txt"
	say "$p: table, stats.csv, samples.csv and bench.png in $dir"
done
