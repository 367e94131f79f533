#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the suite on one platform and leave its raw output in OUTDIR/console.log:
#   bochs-vmx  Bochs, tigerlake model, 1 CPU: VMX with EPT, the fastpath is live
#   bochs-svm  Bochs, zambezi model (AMD family 15h), 1 CPU: SVM with NPT and
#              NRIP save, the SVM fastpath is live
#   bochs-vmx-2cpu, bochs-svm-2cpu
#              the same with 2 CPUs, which really race (Bochs runs its CPUs
#              in turns of at most 32 instructions), running tests-2cpu.list
#   bochs-apicv, bochs-apicv-2cpu
#              bochs-vmx with APICv (posted interrupts), under a Bochs whose
#              posted interrupts work: BOCHS=/path/to/bochs, one with the fixes
#              of docs/reports/bochs-*.md (Debian's do not: docs/platforms.md)
#   bochs-vmx-stock
#              bochs-vmx booting the kernel without the series' KVM patches
#              (scripts/kernel.sh --stock), as kselftest CI runs mainline
#              until they are merged: the path points SKIP, the rest runs
#   qemu-svm   QEMU TCG, EPYC + SVM + NPT, 1 CPU: no NRIP save, no fastpath
#   qemu-kvm   the system's QEMU (qemu-system-x86_64 on PATH, or QEMU=) with
#              KVM and nested virtualization (needs a usable /dev/kvm)
#   host       the running kernel, no emulator (scripts/host.sh)
# Every emulator run has a wall-clock limit and is killed with its whole
# process group when it ends, hangs or its guest kernel panics.
# QEMU_SVM_SMP=N, BOCHS_CPUS=N: that many emulated CPUs instead of one
# (scripts/smp-repro.sh), QEMU_TCG_THREAD=multi: QEMU's CPUs on threads of
# their own; QEMU=PATH: another QEMU (qemu-svm's default: Debian unstable's,
# scripts/emulators.sh; qemu-kvm's: the system's); PLATFORM_LIMIT=S: the
# wall-clock limit.
#
# usage: platform.sh PLATFORM OUTDIR
set -euo pipefail
. "$(dirname "$0")/common.sh"

platform=$1
out=$2
# per test, seconds of guest time; the debug kernel's matrix on bochs-svm
# (189 points, fastpath on and off) had 94 points done at 300 s
if [ -n "$DEBUG" ]; then
	TEST_TIMEOUT=${TEST_TIMEOUT:-900}
else
	TEST_TIMEOUT=${TEST_TIMEOUT:-300}
fi
CMDLINE="console=ttyS0,115200 printk.devkmsg=on panic=-1 kvmipi.timeout=$TEST_TIMEOUT"
# LOAD=N[,M]: N spinning and M sleeping processes beside the tests (guest-init.sh)
[ -z "${LOAD:-}" ] || CMDLINE="$CMDLINE kvmipi.load=$LOAD"
# EXTRA_CMDLINE: more for the test kernel (a mutant's "Cmdline: ", debugging)
[ -z "${EXTRA_CMDLINE:-}" ] || CMDLINE="$CMDLINE $EXTRA_CMDLINE"

# platform: wall-clock limit (s), memory of the emulated machine (MiB)
declare -A LIMIT=([bochs-vmx]=1500 [bochs-svm]=1500 [bochs-vmx-2cpu]=1500 [bochs-svm-2cpu]=1500
		 [bochs-vmx-stock]=1500 [bochs-apicv]=1500 [bochs-apicv-2cpu]=1500
		 [qemu-svm]=600 [qemu-kvm]=600 [host]=1800)
MEM=1024
BOCHS_IPS= BOCHS_CMDLINE=
if [ -n "$DEBUG" ]; then
	# The debug kernel (lockdep, KASAN) is several times slower (measured,
	# docs/testbed.md).  Under QEMU TCG its matrix test outlasts the 120 s
	# of kvm/settings: the kselftest runner gets the suite's per-test
	# limit, and the platforms twice the wall-clock time.  Under Bochs at
	# its default 4 M emulated instructions per emulated second, a 250 Hz
	# timer tick comes every 16,000 instructions, fewer than the debug
	# kernel spends on one: the boot stalls after HPET setup.
	CMDLINE="$CMDLINE kvmipi.kselftest_timeout=$TEST_TIMEOUT"
	LIMIT=([bochs-vmx]=3000 [bochs-svm]=3000 [bochs-vmx-2cpu]=3000 [bochs-svm-2cpu]=3000
	       [bochs-vmx-stock]=3000
	       [qemu-svm]=1200 [qemu-kvm]=1200 [host]=1800)
	BOCHS_IPS=", ips=50000000"
	# With BUG=y the tigerlake model's inconsistent CPUID (HT without a
	# matching core count, XSAVE sizes) trips the kernel's own boot checks
	# and KASAN at the first vCPU's FPU; keep those features out of its way.
	BOCHS_CMDLINE=" noxsave clearcpuid=ht"
fi
[ -z "${PLATFORM_LIMIT:-}" ] || LIMIT[$platform]=$PLATFORM_LIMIT

# Linux 7.2 dies at boot under the tigerlake model (a NULL pointer
# dereference right after the rootfs is mounted) unless the same CPUID
# features are kept out of its way (docs/testbed.md); mainline kernels
# after it get the same command line (7.3 was not tried without).
# The zambezi model needs neither (measured on both kernels).  Under it the
# guest clock ran about 9 times faster than wall time at Bochs' default
# 4 M emulated instructions per emulated second (540 s of guest uptime in
# 59 s): too little work fits in the guest-time bounds of the tests.  50 M
# brings it near wall time.
base=${platform%-2cpu}
[ "$base" != bochs-svm ] || BOCHS_IPS=", ips=50000000"
[ "$KERNEL" = 6.12 ] || [ "$base" = bochs-svm ] || BOCHS_CMDLINE=" noxsave clearcpuid=ht"
# The two-CPU platforms run their own list (scripts/build-tests.sh).  The
# runs as a user without root ("@nonroot") test the tests' privileges, not
# the platform: bochs-vmx makes them (common.sh, tests_list_of).
# With two CPUs the test kernel idles in HLT, not MWAIT.  6.12 picks MWAIT
# on the tigerlake model (7.3 does not), and under Bochs 2.7 its two-CPU
# boots then spent up to 4.3 guest seconds, over three wall minutes, in
# vmx_init() alone, which asks the idle CPU to run things; 1 ms with
# idle=halt (docs/platforms.md, "Two CPUs").
INITRD_MORE=
case $platform in
*-2cpu) CMDLINE="$CMDLINE kvmipi.list=tests-2cpu.list idle=halt" BOCHS_CPUS=2 ;;
bochs-vmx) CMDLINE="$CMDLINE kvmipi.nonroot" ;;
# kvm_util's safe_halt() meets a Bochs SVM defect: the tests built with a
# polling one (scripts/build-tests.sh, docs/platforms.md), in an archive
# appended to the initramfs (scripts/initramfs.sh)
bochs-svm)
	CMDLINE="$CMDLINE kvmipi.poll_idle"
	[ ! -f "$INITRAMFS.poll-idle" ] || INITRD_MORE=$INITRAMFS.poll-idle ;;
*-stock) CMDLINE="$CMDLINE kvmipi.list=tests-stock.list" BZIMAGE=$STOCK_BZIMAGE ;;
esac
# The kernel's KVM modules (KVM is a module: configs/testbed.config), in an
# archive appended to the initramfs: the guest loads them before the suite
# (guest-init.sh), with the kvm.*, kvm_intel.* and kvm_amd.* parameters of
# the command line.  KVM_MODULES=ARCHIVE: another set (kernel.sh's
# pack_kvm_modules) for this kernel.
KVM_MODULES=${KVM_MODULES:-$(kvm_modules_of "$BZIMAGE")}
[ "$platform" = host ] || [ -f "$KVM_MODULES" ] ||
	die "$KVM_MODULES missing: the KVM modules of $BZIMAGE (run make kernel)"

# A test that a platform defect keeps off this platform altogether
# (scripts/left-out, with the evidence): the guest leaves it out of its list.
left=$(left_out "$platform")
[ -z "$left" ] || CMDLINE="$CMDLINE kvmipi.left_out=$left"

# make mutants stops the suite at the first failed test (suite.sh), but
# not at a test that has expected failures here (scripts/expected-failures):
# its verdict, XFAIL or not, is the host's, and the tests after it run.
if [[ " $CMDLINE " == *" kvmipi.stop_on_failure "* ]]; then
	xfail_tests=$(platform_tests "$TOP/scripts/expected-failures" "$platform")
	[ -z "$xfail_tests" ] || CMDLINE="$CMDLINE kvmipi.may_fail=$xfail_tests"
fi

mkdir -p "$out"
rm -f "$out"/console.log "$out"/emulator.log "$out"/bochs.log "$out"/emulator "$out"/tests.list \
	"$out"/initrd

emu_pid=
cleanup() {
	local i
	if [ -n "$emu_pid" ]; then
		kill -TERM -- "-$emu_pid" 2>/dev/null || true
		for i in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 -- "-$emu_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$emu_pid" 2>/dev/null || true
		wait "$emu_pid" 2>/dev/null || true
		emu_pid=
	fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# Start "$@" in its own process group and watch the console until the suite
# ends, the guest kernel panics, the emulator exits or the limit passes.
# KVM_SETS=1 (a boot of several mutants' KVMs, scripts/mutants.sh): each
# set's suite ends with END, the boot with SETS-END, and the wall-clock
# limit counts again from each set's start ("@@ SET NAME").
watch_emulator() {
	local limit=${LIMIT[$platform]} start=$SECONDS since=$SECONDS ended= sets=0 n
	local endpat='@@ END|Kernel panic'
	[ -z "${KVM_SETS:-}" ] || endpat='@@ SETS-END|Kernel panic'
	# make coverage: the guest dumps gcov's counts after the suite's END
	# (guest-init.sh, dump_gcov), for half a minute under Bochs
	[[ " $CMDLINE " != *" kvmipi.gcov "* ]] || endpat='kvmgcov: end |kvmgcov: no /sys|Kernel panic'

	# The wrapper shell reports the emulator's status into the log (Bochs
	# 2.7 segfaults in its own exit path after a clean power-off).
	setsid bash -c '"$@"; echo "emulator exit status $?"' emulator "$@" \
		>"$out/emulator.log" 2>&1 </dev/null 8>&- 9>&- &
	emu_pid=$!
	while kill -0 "$emu_pid" 2>/dev/null; do
		if [ -n "$rfb_locked" ] && { grep -aq 'listening for connections' "$out/bochs.log" ||
			[ $((SECONDS - start)) -ge 60 ]; } 2>/dev/null; then
			rfb_unlock
		fi
		# the guest's last words: the emulator has nothing more to say
		if grep -qE 'reboot: (Power down|Restarting)' "$out/console.log" 2>/dev/null; then
			break
		fi
		if [ -z "$ended" ] && grep -qE "$endpat" "$out/console.log" 2>/dev/null; then
			ended=$SECONDS
		fi
		# give a finished or panicked guest a moment to flush and power off
		if [ -n "$ended" ] && [ $((SECONDS - ended)) -ge 10 ]; then
			break
		fi
		if [ -n "${KVM_SETS:-}" ]; then
			n=$(grep -ac '@@ SET ' "$out/console.log" 2>/dev/null) || true
			[ "${n:-0}" -le "$sets" ] || { sets=$n; since=$SECONDS; }
		fi
		if [ $((SECONDS - since)) -ge "$limit" ]; then
			echo "@@ TIMEOUT platform limit of ${limit}s reached" >>"$out/console.log"
			break
		fi
		sleep 1
	done
	cleanup
	[ -z "$rfb_locked" ] || rfb_unlock
	echo "$((SECONDS - start))" >"$out/wall_seconds"
}

# run_qemu QEMU ACCEL CPU CPUS
run_qemu() {
	local qemu=$1 accel=$2 cpu=$3 smp=$4
	"$qemu" --version | head -1 >"$out/emulator"
	cat "$INITRAMFS" ${INITRD_MORE:+"$INITRD_MORE"} "$KVM_MODULES" >"$out/initrd"
	watch_emulator "$qemu" -accel "$accel" -cpu "$cpu" -smp "$smp" \
		-m "$MEM" -kernel "$BZIMAGE" -initrd "$out/initrd" \
		-append "$CMDLINE" -display none -monitor none -no-reboot \
		-serial "file:$out/console.log"
}

make_iso() {
	local iso_root=$out/iso isolinux ldlinux
	need_cmd xorriso xorriso
	isolinux=$(first_file "$ISOLINUX_FILES")
	[ -n "$isolinux" ] || die "isolinux.bin missing: apt-get install isolinux (dnf install syslinux)"
	ldlinux=$(first_file "$LDLINUX_FILES")
	[ -n "$ldlinux" ] || die "ldlinux.c32 missing: apt-get install syslinux-common (dnf install syslinux)"
	rm -rf "$iso_root"
	mkdir -p "$iso_root/isolinux"
	cp "$isolinux" "$ldlinux" "$iso_root/isolinux/"
	cp "$BZIMAGE" "$iso_root/bzImage"
	cat "$INITRAMFS" ${INITRD_MORE:+"$INITRD_MORE"} "$KVM_MODULES" >"$iso_root/initrd"
	printf 'default kvmipi\nprompt 0\nlabel kvmipi\n  kernel /bzImage\n  append initrd=/initrd %s\n' \
		"$CMDLINE$BOCHS_CMDLINE" >"$iso_root/isolinux/isolinux.cfg"
	xorriso -as mkisofs -quiet -o "$out/boot.iso" -b isolinux/isolinux.bin \
		-c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table \
		"$iso_root" 2>/dev/null
}

# Bochs 2.7's VNC server (the headless display) binds the first free port
# from 5900 with SO_REUSEADDR, then listens: two Bochs starting at once can
# bind the same port, and the one whose listen() fails gives up on every
# other port ("RFB could not bind any port", gui/rfb.cc).  Start one at a
# time, across checkouts too (the ports are the machine's): hold a lock until
# this one listens (at most 60 s).
rfb_locked=
rfb_lock() {
	exec 9>"${TMPDIR:-/tmp}/kvmipi-bochs-rfb.lock"
	flock 9
	rfb_locked=1
}
rfb_unlock() {
	flock -u 9
	exec 9>&-
	rfb_locked=
}

run_bochs() {
	local model=$1 bios vgabios
	[ -n "${BOCHS:-}" ] || need_cmd bochs bochs
	bios=$(first_file "$BOCHS_BIOS_FILES")
	[ -n "$bios" ] || die "Bochs BIOS missing: apt-get install bochsbios (dnf install bochs-bios)"
	vgabios=$(first_file "$VGABIOS_FILES")
	[ -n "$vgabios" ] || die "VGA BIOS missing: apt-get install vgabios (dnf install vgabios)"
	make_iso
	cat >"$out/bochsrc" <<-BOCHSRC
	megs: $MEM
	cpu: model=$model, count=${BOCHS_CPUS:-1}, reset_on_triple_fault=0$BOCHS_IPS
	romimage: file=$bios
	vgaromimage: file=$vgabios
	ata0-master: type=cdrom, path=$out/boot.iso, status=inserted
	boot: cdrom
	clock: sync=none
	display_library: rfb, options="timeout=0"
	com1: enabled=1, mode=file, dev=$out/console.log
	log: $out/bochs.log
	panic: action=fatal
	error: action=ignore
	BOCHSRC
	echo c >"$out/bochs.rc"
	rfb_lock
	watch_emulator "${BOCHS:-bochs}" -q -f "$out/bochsrc" -rc "$out/bochs.rc"
	grep -a -m1 -o 'Bochs x86 Emulator.*' "$out/bochs.log" >"$out/emulator" || true
}

run_host() {
	TEST_TIMEOUT=$TEST_TIMEOUT HOST_LIMIT=${LIMIT[host]} \
		"$TOP/scripts/host.sh" "$TESTS_OUT" "$TESTS_LIST" "$out"
}

case "$platform" in
bochs-vmx|bochs-vmx-2cpu|bochs-vmx-stock) run_bochs tigerlake ;;
bochs-apicv|bochs-apicv-2cpu)
	[ -n "${BOCHS:-}" ] ||
		die "$platform needs a Bochs whose VMX posted interrupts work: BOCHS=/path/to/bochs, one with the fixes of docs/reports/bochs-*.md"
	run_bochs tigerlake ;;
bochs-svm|bochs-svm-2cpu) run_bochs zambezi ;;
qemu-svm)
	# One CPU: with two, QEMU's TCG SVM (7.2 and 11.1) delivers interrupts it injects
	# into L2 a second time, late (a stale exception_index after VMRUN's
	# event injection; proven in docs/platforms.md); QEMU_SVM_SMP=2 to see it.
	# QEMU from Debian unstable (scripts/emulators.sh): Debian 12's 7.2
	# lets interrupts into a nested guest inside STI's shadow.
	qemu=${QEMU:-$("$TOP/scripts/emulators.sh" --print)}
	[ -n "$qemu" ] || die "$platform runs Debian unstable's QEMU: run 'make deps' (scripts/emulators.sh), or set QEMU=/path/to/qemu-system-x86_64 (9.1 or later)"
	run_qemu "$qemu" "tcg,thread=${QEMU_TCG_THREAD:-single}" EPYC,+svm,+npt "${QEMU_SVM_SMP:-1}" ;;
qemu-kvm)
	why=$(kvm_problem nested)
	[ -z "$why" ] || die "qemu-kvm: $why"
	qemu=$(qemu_path)
	[ -n "$qemu" ] || die "qemu-kvm: no qemu-system-x86_64 on PATH: apt-get install qemu-system-x86 (dnf install qemu-system-x86-core), or set QEMU=/path/to/qemu-system-x86_64"
	run_qemu "$qemu" kvm host 2 ;;
host) run_host ;;
*) die "unknown platform '$platform' ($(echo $ALL_PLATFORMS))" ;;
esac
