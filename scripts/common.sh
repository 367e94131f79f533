# SPDX-License-Identifier: GPL-2.0
# Shared settings and helpers for the scripts; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}

# The settings (make's variables) are checked here, each bad one named in
# an error of its own; the scripts stop after all of them are said (at the
# end of this file).
settings_bad=
bad_setting() {
	printf 'error: %s\n' "$*" >&2
	settings_bad=1
}

# DEBUG=1: the debug kernel (configs/debug.config on top of testbed.config),
# built, booted and reported apart so that it never replaces the normal
# kernel's outputs.  The tests and the initramfs do not depend on it.
case ${DEBUG:-} in
""|0) DEBUG= ; dbg= ;;
1) dbg=-debug ;;
*) bad_setting "DEBUG=$DEBUG: use DEBUG=1 for the debug kernel, or leave it unset"; dbg= ;;
esac

# STRICT=1: a make run that proved no fastpath point fails (each-kernel.sh)
case ${STRICT:-} in
""|0) STRICT= ;;
1) ;;
*) bad_setting "STRICT=$STRICT: use STRICT=1 to fail a run that proves no path, or leave it unset" ;;
esac

# KERNEL: the kernel this script works on: one that has a series,
# patches/<kernel>/ (6.12, the LTS with the "single target" fastpath; 7.x,
# mainline with "fast delivery").  Each has its own series, mutants
# (mutants/<kernel>/), source tree, builds and results under $BUILD/<kernel>/
# and $RESULTS.
KERNELS_SUPPORTED=$(cd "$TOP/patches" && ls -d [0-9]*.[0-9]* | sort -V | tr '\n' ' ')
KERNELS_SUPPORTED=${KERNELS_SUPPORTED% }
# supported_trees [--line|--markdown]: the kernel trees this project
# supports, each with the series (KERNEL=) and the fastpath rule it takes,
# as kernel_of_version (below) decides: the one table that make help, a
# refused KSRC= and README (its "trees" block, checked by make unit)
# print.  Default: lines for make help; --line: one line, for messages;
# --markdown: README's table.
supported_trees() {
	local k range rule rows=() first7= line=
	for k in $KERNELS_SUPPORTED; do
		case $k in
		6.12) rule="6.12's rule: a single target" ;;
		*) rule="$k's rule: fast delivery with the vPMU gate" ;;
		esac
		case $k in
		7.*)
			first7=${first7:-$k}
			range="$k and later"
			[ "$k" = "$(printf '%s\n' $KERNELS_SUPPORTED | grep '^7\.' | sort -V | tail -1)" ] ||
				range="$k up to the next 7.x series" ;;
		*) range="$k.y" ;;
		esac
		rows+=("$range	$k	$rule")
	done
	local others="any other version is refused"
	[ -z "$first7" ] || [ "${first7#7.}" = 0 ] || others="$others (6.13 to 7.$((${first7#7.} - 1)) included)"
	case ${1:-} in
	--line)
		for k in "${rows[@]}"; do
			IFS=$'\t' read -r range kernel rule <<<"$k"
			line="$line${line:+; }Linux $range takes KERNEL=$kernel, $rule"
		done
		echo "$line; $others" ;;
	--markdown)
		echo "| Linux tree | KERNEL= | series and fastpath rule |"
		echo "|---|---|---|"
		for k in "${rows[@]}"; do
			IFS=$'\t' read -r range kernel rule <<<"$k"
			echo "| $range | $kernel | $rule |"
		done
		echo "| ${others/ is refused/} | - | refused, before anything is built |" ;;
	*)
		echo "Kernel trees (KSRC=, else Debian's linux-source-<kernel>):"
		for k in "${rows[@]}"; do
			IFS=$'\t' read -r range kernel rule <<<"$k"
			printf '  Linux %-16s KERNEL=%-5s %s\n' "$range" "$kernel" "$rule"
		done
		echo "  $others" ;;
	esac
}

KERNEL=${KERNEL:-6.12}
case " $KERNELS_SUPPORTED " in
*" $KERNEL "*) ;;
*) bad_setting "KERNEL=$KERNEL: use one of $KERNELS_SUPPORTED (the kernels with a series in patches/)" ;;
esac
# PRISTINE=1: the kernel without the series (the unmodified source, for
# reproducers: scripts/smp-repro.sh), in its own tree, build and bzImage.
case ${PRISTINE:-} in
""|0) PRISTINE= ; pst= ;;
1) pst=-pristine ; [ -z "$DEBUG" ] || bad_setting "PRISTINE=1 and DEBUG=1 do not combine" ;;
*) bad_setting "PRISTINE=$PRISTINE: use PRISTINE=1, or leave it unset"; pst= ;;
esac

# ksrc_problem: why KSRC= cannot be taken as a kernel tree, or nothing.
# This project (or a copy) is refused before anything runs make there: its
# Makefile would ask for the kernel version again, and again.
ksrc_problem() {
	[ -n "${KSRC:-}" ] || return 0
	if [ ! -d "$KSRC" ]; then
		echo "KSRC=$KSRC: no such directory: set KSRC to your kernel tree. $(supported_trees --line)"
	elif [ -f "$KSRC/patches/selftests.msg" ] && [ -f "$KSRC/scripts/each-kernel.sh" ]; then
		echo "KSRC=$KSRC is this project, not a Linux tree: set KSRC to your kernel tree (with or without the series applied), or leave it unset for Debian's linux-source. $(supported_trees --line)"
	elif [ ! -f "$KSRC/Makefile" ] || [ ! -d "$KSRC/arch/x86/kvm" ]; then
		echo "KSRC=$KSRC is not a Linux source tree (it has no Makefile and arch/x86/kvm/)"
	fi
}
ksrc_why=$(ksrc_problem)
[ -z "$ksrc_why" ] || bad_setting "$ksrc_why"
KB=$BUILD/$KERNEL
KTREE=$KB/linux$pst		# patched (or pristine) kernel source
KOUT_NORMAL=$KB/kbuild$pst	# kernel build outputs (O=), normal and DEBUG=1
KOUT_DEBUG=$KB/kbuild-debug$pst
KOUT=$KB/kbuild$dbg$pst		# the one this run builds and boots
# The stock kernel: this one without the series' KVM patches (kernel.sh
# --stock), built beside it, booted by bochs-vmx-stock
STOCK_OUT=$KOUT-stock
STOCK_BZIMAGE=$KB/bzImage$dbg$pst-stock
# The coverage kernel: KVM's modules profiled by gcov (kernel.sh --gcov,
# make coverage), built and booted apart from the normal one
GCOV_OUT=$KB/kbuild-gcov
GCOV_BZIMAGE=$KB/bzImage-gcov
TESTS_OUT=${TESTS_OUT:-$KB/kselftest}	# installed KVM selftests (run_kselftest.sh, kvm/)
RESULTS=${RESULTS:-$BUILD/results$dbg/$KERNEL}
BZIMAGE=${BZIMAGE:-$KB/bzImage$dbg$pst}			# what the emulators boot
INITRAMFS=${INITRAMFS:-$KB/initramfs.cpio}
# kvm_modules_of BZIMAGE: the archive of that kernel's KVM modules, which
# kernel.sh writes beside it and the platforms append to the initramfs
kvm_modules_of() {
	echo "$1-kvm.cpio"
}
TESTS_LIST=${TESTS_LIST:-$TESTS_OUT/tests.list}	# what the guest runs
# ... on the two-CPU platforms (bochs-*-2cpu): beside TESTS_LIST; where there
# is none (a mutant's or the bench's own list), TESTS_LIST itself
TESTS_LIST_2CPU=${TESTS_LIST_2CPU:-$(dirname "$TESTS_LIST")/tests-2cpu.list}
[ -f "$TESTS_LIST_2CPU" ] || [ ! -f "$TESTS_LIST" ] || TESTS_LIST_2CPU=$TESTS_LIST
# ... on the stock kernel (bochs-vmx-stock; initramfs.sh writes it)
TESTS_LIST_STOCK=${TESTS_LIST_STOCK:-$(dirname "$TESTS_LIST")/tests-stock.list}
[ -f "$TESTS_LIST_STOCK" ] || [ ! -f "$TESTS_LIST" ] || TESTS_LIST_STOCK=$TESTS_LIST
# platform_tests FILE PLATFORM: the tests a "platform<TAB>test<TAB>..."
# file (scripts/left-out, scripts/expected-failures) names for PLATFORM,
# each once, comma-separated
platform_tests() {
	awk -F'\t' -v p="$2" '$1 == p { print $2 }' "$1" | sort -u | paste -sd, -
}
# left_out PLATFORM: the tests scripts/left-out keeps off PLATFORM (a
# platform defect that no test point can survive)
left_out() {
	platform_tests "$TOP/scripts/left-out" "$1"
}
# without_tests NAMES: the run list on stdin without the tests of NAMES
# (comma-separated, as "kvm/NAME" lines and the runner's "-t kvm:NAME");
# guest-init.sh does the same with the kernel's kvmipi.left_out=
without_tests() {
	local args=() t
	for t in ${1//,/ }; do
		args+=(-e "/^kvm\/$t\( \|\$\)/d" -e "s/ -t kvm:$t\( \|\$\)/\1/")
	done
	if [ ${#args[@]} -gt 0 ]; then sed "${args[@]}"; else cat; fi
}
# tests_list_of PLATFORM: the list the guest runs there
tests_list_of() {
	local list tmp out
	case $1 in
	*-2cpu) list=$TESTS_LIST_2CPU ;;
	*-stock) list=$TESTS_LIST_STOCK ;;
	bochs-vmx | host) list=$TESTS_LIST ;;
	*)	# the "@nonroot" runs are bochs-vmx's (platform.sh); platforms
		# booting side by side must not read it half written
		tmp=$TESTS_LIST.root.$BASHPID
		grep -v ' @nonroot$' "$TESTS_LIST" >"$tmp" || true
		mv -f "$tmp" "$TESTS_LIST.root"
		list=$TESTS_LIST.root ;;
	esac
	[ -n "$(left_out "$1")" ] || { echo "$list"; return; }
	out=$list.$1 tmp=$list.$1.$BASHPID
	without_tests "$(left_out "$1")" <"$list" >"$tmp"
	mv -f "$tmp" "$out"
	echo "$out"
}

# KVM's interrupt delivery code, relative to arch/x86/kvm/ (make coverage,
# make mutation): the local APIC, the IOAPIC and PIC, the routes, Hyper-V's
# IPIs and SynIC, event injection and the vCPU ioctls in x86.c (with msrs.c,
# 7.3's WRMSR fastpath), and the vendors' interrupt windows, fastpaths,
# posted interrupts and nested event paths.  A file a kernel lacks is left out.
COVERAGE_FILES=${COVERAGE_FILES:-"lapic.c irq.c irq_comm.c ioapic.c i8259.c hyperv.c x86.c msrs.c
	vmx/vmx.c vmx/nested.c vmx/posted_intr.c svm/svm.c svm/nested.c svm/avic.c"}
# coverage_sources_md5: the MD5 of those files in this kernel's tree
coverage_sources_md5() {
	local f
	for f in $COVERAGE_FILES; do
		[ ! -f "$KTREE/arch/x86/kvm/$f" ] || md5sum <"$KTREE/arch/x86/kvm/$f"
	done | md5sum | cut -d' ' -f1
}

# patch_files PATCH...: the files they touch
patch_files() {
	awk '($1 == "---" || $1 == "+++") && $2 ~ /^[ab]\// { print substr($2, 3) }' "$@" | sort -u
}
# kvm_only PATCH...: do they touch KVM's own sources only (arch/x86/kvm/,
# virt/kvm/), which nothing outside KVM's modules builds (kernel.sh
# builds those modules alone for them, mutants.sh boots several together)?
kvm_only() {
	local f
	[ $# -gt 0 ] || return 1
	for f in $(patch_files "$@"); do
		case $f in
		arch/x86/kvm/* | virt/kvm/*) ;;
		*) return 1 ;;
		esac
	done
}

# run_counts ROWS: a run's "passed failed skipped expected-failures" from
# its rows (report.awk): an expected failure (a test that failed exactly
# at the points of a proven platform defect, scripts/expected-failures)
# counts as passed, and is counted apart; the test rows suite-completed and
# guest-kernel-clean are counted as tests
run_counts() {
	awk -F'\t' '$3 == "pass" { p++ } $3 == "xfail" { p++; x++ } $3 == "fail" { f++ }
		$3 == "skip" { s++ } END { print p + 0, f + 0, s + 0, x + 0 }' "$1"
}
# path_points KTAP: "proved all" of its fastpath points (": path"): those
# that passed, of all
path_points() {
	awk '/(not )?ok [0-9]+ .*: path( #|$)/ {
		n++; if ($0 !~ /not ok/ && $0 !~ /# SKIP/) p++ } END { print p + 0, n + 0 }' "$@"
}

# no_test_ran ROWS KTAP: why a platform's run (its rows.tsv and KTAP,
# report.awk) tested nothing, when every test SKIPped: the first reason a
# test gave; nothing when one ran, or when it was not started on purpose
# (platform-start: the host's run on another kernel's series)
no_test_ran() {
	local why
	awk -F'\t' '$2 == "platform-start" || ($2 !~ /^(suite-completed|guest-kernel-clean)$/ &&
		$3 != "skip") { ran = 1 } END { exit !ran }' "$1" 2>/dev/null && return 0
	why=$(sed -n 's/^ .*# SKIP[ -]*//p' "$2" 2>/dev/null | head -1)
	echo "every test SKIPped${why:+ (the first: $why)}"
}

# emulator_slot: wait for one of $EMULATOR_SLOTS lock files (default: one
# per CPU of this machine: an emulator keeps one CPU busy) and hold it on
# fd 8 until the caller and its children exit.  The slots are the
# machine's, as its CPUs are: both kernels' runs and mutants, side by side,
# and other checkouts share them, so that no more emulators run at once
# than there are CPUs, and none waits while a CPU has none.
# The lock files are made writable by every user, so that a root run does
# not lock out a user's; where one is not (made by an older run), that
# user takes a slot of their own beside it.
emulator_slot() {
	local i n=${EMULATOR_SLOTS:-$(nproc)} f
	while :; do
		for ((i = 0; i < n; i++)); do
			f=${TMPDIR:-/tmp}/kvmipi-emulator-slot.$i
			[ -w "$f" ] || [ ! -e "$f" ] || f=$f.$(id -u)
			# shellcheck disable=SC2094 # created, then locked
			(umask 0; : >>"$f") 2>/dev/null
			exec 8>>"$f"
			flock -n 8 && return 0
			exec 8>&-
		done
		sleep 1
	done
}
# kernel_lock: hold this kernel's tree and build directories until the
# caller exits (fd 9): one script at a time applies patches to them and
# builds there (a mutant's build, make kernel, a single test's, try.sh).
kernel_lock() {
	mkdir -p "$KB"
	exec 9>"$KB/.tree.lock"
	flock 9
}
PATCHES=$TOP/patches/$KERNEL	# the series for this kernel, each in a directory:
# the core one in $PATCHES, each regression series in
# $PATCHES/regression/NN-NAME/, the test bed's in $PATCHES/testbed/; they
# apply in that order (patches/$KERNEL/series lists every patch so).
# RENDERED: the series as this checkout's selftests/, lib/ and
# patches/selftests.msg render it for this kernel's tree, with a "series"
# file (scripts/patches.sh --render): what make run and make check build
# and apply.  They never write patches/: only make patches does.
RENDERED=$KB/series-rendered
# series_dirs: those directories, relative to $PATCHES ("." for the
# core), in the order they apply; with -a, also those that a series
# check or README's recipe would not know (any other directory holding
# patches), so that a stale one is seen
series_dirs() {
	local d
	echo .
	for d in "$PATCHES"/regression/[0-9][0-9]-*/ "$PATCHES"/testbed/; do
		[ -d "$d" ] || continue
		d=${d%/}
		echo "${d#"$PATCHES"/}"
	done
	[ "${1:-}" = -a ] || return 0
	find "$PATCHES" -mindepth 1 -type d | sort | while read -r d; do
		d=${d#"$PATCHES"/}
		case $d in
		regression) ;;
		regression/[0-9][0-9]-*) ;;
		testbed) ;;
		*) echo "$d" ;;
		esac
	done
}
# series_patches: the patch files of every series, in the order they apply
series_patches() {
	local d p
	for d in $(series_dirs); do
		for p in "$PATCHES/$d"/*.patch; do
			if [ -e "$p" ]; then
				echo "${p/\/.\///}"
			fi
		done
	done
}
JOBS=${JOBS:-$(nproc)}
# deb_tarball K: where Debian's linux-source-K puts its tarball.  6.12 is
# installed from bookworm (scripts/deps.sh); the mainline ones are
# downloaded from the Debian mirror (unstable, else experimental) and
# unpacked under $BUILD/src without installing anything.
# (KVMIPI_USR_SRC, default /usr/src: the tests' fake machine has none)
deb_tarball() {
	case $1 in
	6.12) echo "${KVMIPI_USR_SRC:-/usr/src}/linux-source-6.12.tar.xz" ;;
	*) echo "$BUILD/src/usr/src/linux-source-$1.tar.xz" ;;
	esac
}
DEB_TARBALL=$(deb_tarball "$KERNEL")
# Where this kernel's KVM selftests keep x86 tests and lists (mainline renamed
# x86_64 to x86 and moved the lists to Makefile.kvm in 6.14).
case $KERNEL in
6.12) ARCH_DIR=x86_64 KVM_MAKEFILE=Makefile ;;
*) ARCH_DIR=x86 KVM_MAKEFILE=Makefile.kvm ;;
esac
FRAGMENT=$TOP/configs/testbed.config		# merged onto tinyconfig
# Reproducible kernel builds.  A fixed build number (the "#1" of the version
# string) also lets a make with nothing to compile leave vmlinux as it is:
# Kbuild otherwise counts up the number and links it again, 7 s each time.
KBUILD_ENV=(KBUILD_BUILD_TIMESTAMP="2024-11-17" KBUILD_BUILD_USER=kvmipi
	    KBUILD_BUILD_HOST=testbed KBUILD_BUILD_VERSION=1)

say() { printf '==> %s\n' "$*" >&2; }

# The calibration (scripts/calibrate.sh, "SECONDS KERNEL OBJECT" in FILE):
# one fixed compile's CPU time, the unit ("cal") that make check's times
# are also given in, so that two machines' checks compare.
# calibration_line FILE: the closing summary's first line
calibration_line() {
	local secs kernel obj
	if read -r secs kernel obj 2>/dev/null <"$1" && [ -n "$obj" ]; then
		echo "calibration: $secs s ($kernel's $obj compiled alone, ccache off, the compiler's CPU time, best of 3) = 1 cal"
	else
		echo "calibration: none (scripts/calibrate.sh did not run or failed): times in seconds only"
	fi
}
# in_calibrations SECONDS FILE: " (N cal)", SECONDS in FILE's unit, or
# nothing without a calibration
in_calibrations() {
	local secs
	case $1 in "" | *[!0-9.]*) return 0 ;; esac
	read -r secs _ 2>/dev/null <"$2" || return 0
	awk -v t="$1" -v c="$secs" 'BEGIN {
		if (c + 0 <= 0) exit
		u = t / c
		printf (u < 10 ? " (%.1f cal)" : " (%.0f cal)"), u }'
}
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# need_cmd CMD DEBIAN [FEDORA]: fail naming the package that gives CMD
# (Debian's; Fedora's when its name differs).
need_cmd() {
	command -v "$1" >/dev/null 2>&1 ||
		die "'$1' not found: install it (apt-get install $2; dnf install ${3:-$2}), or run 'make deps'"
}

# KVM that can run a nested guest: qemu-kvm can boot here (platforms.sh).
host_has_kvm() {
	[ -z "$(kvm_problem nested)" ]
}

# Where the $KERNEL source comes from, as a string that changes when it does:
# KSRC=/path/to/linux or Debian's linux-source-$KERNEL tarball.
source_origin() {
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/Makefile" ] && [ -d "$KSRC/arch/x86/kvm" ] ||
			die "KSRC=$KSRC is not a kernel source tree"
		echo "ksrc:$(cd "$KSRC" && pwd)"
	else
		[ -f "$DEB_TARBALL" ] ||
			die "$DEB_TARBALL missing: run 'make deps' (Debian's linux-source-$KERNEL), or set KSRC=/path/to/linux-$KERNEL"
		echo "deb:$DEB_TARBALL:$(stat -c %s-%Y "$DEB_TARBALL")"
	fi
}

# kernel_of_version VERSION: the series for a kernel version: 6.12 for
# 6.12.y; for 7.x the newest 7.x series not newer than it (a 7.4 tree takes
# 7.3's).
kernel_of_version() {
	local v=${1%%-*} k best=unsupported
	case $v in
	6.12|6.12.*) echo 6.12; return ;;
	7.*) ;;
	*) echo unsupported; return ;;
	esac
	v=$(echo "$v" | cut -d. -f1,2)
	for k in $KERNELS_SUPPORTED; do
		case $k in 7.*) ;; *) continue ;; esac
		[ "$(printf '%s\n%s\n' "$k" "$v" | sort -V | tail -1)" = "$v" ] && best=$k
	done
	echo "$best"
}

# The Debian mirror of this system's own sources, asked with a private apt
# state under $BUILD/src/apt (the suites unstable and experimental), which
# installs and upgrades nothing.
MIRROR_STATE=$BUILD/src/apt
mirror_uri() {
	cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
		sed -n '/^[[:space:]]*#/d; s#.*\(https\?://[^ ]*/debian\)/\?\( .*\)\?$#\1#p' |
		grep -v security | head -1
}
mirror_apt() {	# mirror_apt apt-get|apt-cache ARGS...
	local tool=$1
	shift
	"$tool" -q -o Dir::Etc::SourceList="$MIRROR_STATE/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$MIRROR_STATE/lists" \
		-o Dir::Cache="$MIRROR_STATE/cache" -o Dir::State::status=/dev/null \
		-o APT::Sandbox::User=root "$@"
}
# mirror_index: make the private index at most an hour old; fail (saying
# why on stderr) when the mirror cannot be reached and there is no index.
mirror_index() {
	local mirror stamp=$MIRROR_STATE/updated
	if [ -f "$stamp" ] && [ -n "$(find "$stamp" -mmin -60)" ]; then
		return 0
	fi
	mirror=$(mirror_uri) || true
	if [ -z "$mirror" ]; then
		printf 'warning: no Debian mirror in /etc/apt/sources.list*\n' >&2
		return 1
	fi
	mkdir -p "$MIRROR_STATE/lists/partial" "$MIRROR_STATE/cache/archives/partial"
	printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
		"$mirror" sid "$mirror" experimental >"$MIRROR_STATE/sources.list"
	if mirror_apt apt-get update >"$MIRROR_STATE/update.log" 2>&1; then
		touch "$stamp"
		return 0
	fi
	printf 'warning: cannot read the index of %s (%s)\n' "$mirror" "$MIRROR_STATE/update.log" >&2
	[ -f "$stamp" ]
}
# served_version PACKAGE: the version the mirror serves (unstable's, else
# experimental's: apt's own choice), or nothing
served_version() {
	mirror_index || return 0
	mirror_apt apt-cache policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}
# source_missing K: why kernel K's source cannot be had, or nothing when
# it can (KSRC=, or the tarball is here)
source_missing() {
	[ -z "${KSRC:-}" ] || return 0
	[ ! -f "$(deb_tarball "$1")" ] || return 0
	if [ -f "$BUILD/src/unavailable-$1" ]; then
		cat "$BUILD/src/unavailable-$1"
	elif ! os_is_debian; then
		echo "linux-source-$1 is Debian's, not this system's: set KSRC=/path/to/linux-$1 (a Linux $1 tree)"
	elif [ "$1" = 6.12 ]; then
		echo "linux-source-6.12 is not installed: run 'make deps' (apt-get install linux-source-6.12)"
	else
		echo "linux-source-$1 has not been downloaded: run 'make deps'"
	fi
}

# copy_ksrc DEST: KSRC='s sources into DEST, without what a build left
# there: from a git tree (KSRC its top) the files git knows or would add
# (tracked, and untracked but not ignored); from another tree all but objects,
# command files, generated headers, images and the configuration.  Files
# already in DEST are left (rsync without --delete).
copy_ksrc() {
	if [ "$(git -C "$KSRC" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$KSRC" && pwd -P)" ]; then
		git -C "$KSRC" ls-files -z --cached --others --exclude-standard |
			rsync -a --from0 --files-from=- --ignore-missing-args "$KSRC/" "$1/"
	else
		rsync -a --exclude=.git --exclude='*.o' --exclude='*.a' --exclude='*.ko' \
			--exclude='*.cmd' --exclude='*.mod' --exclude='*.mod.c' --exclude='*.order' \
			--exclude='*.symvers' --exclude='.tmp_*' --exclude='/.config' --exclude='/.config.old' \
			--exclude='/vmlinux*' --exclude='/System.map' --exclude='/include/config/' \
			--exclude='/include/generated/' --exclude='/arch/*/include/generated/' \
			--exclude='/arch/*/boot/bzImage' --exclude='/usr/include/*/' \
			--exclude='.kvmipi-*' "$KSRC/" "$1/"
	fi
}

# extract_source DEST: a pristine $KERNEL tree at DEST (which must not exist),
# copied from KSRC= or unpacked from Debian's tarball.
extract_source() {
	local dest=$1 tmp=$1.tmp-src ver
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if [ -n "${KSRC:-}" ]; then
		mkdir -p "$dest"
		copy_ksrc "$dest"
		if [ -f "$dest/.config" ] || [ -d "$dest/include/config" ]; then
			make -s -C "$dest" mrproper
		fi
	else
		tar -C "$tmp" -xf "$DEB_TARBALL"
		mv "$tmp"/linux-source-"$KERNEL" "$dest"
	fi
	rmdir "$tmp"
	ver=$(make -s -C "$dest" kernelversion)
	[ "$(kernel_of_version "$ver")" = "$KERNEL" ] ||
		die "kernel tree is version $ver, the KERNEL=$KERNEL series targets $KERNEL. $(supported_trees --line)"
}

# restore_series_files: the series check (series-check.sh) writes the files
# the series touches into $KTREE as they are at each patch, and keeps the
# whole series' copies in $KB/series/final, listed in final.list while it
# runs.  Put them back: at the check's end, and in make kernel after a check
# that was killed.  A file put back gets a new mtime, so make rebuilds it.
restore_series_files() {
	local saved=$KB/series/final
	[ -f "$saved.list" ] || return 0
	copy_into_tree "$saved" "$saved.list"
	rm -rf "$saved.list" "$saved"
}

# copy_into_tree DIR LIST: make each file of LIST (paths relative to the
# tree) in $KTREE as it is in DIR, or absent where DIR has none; only the
# files that differ are written, and they get a new mtime.
copy_into_tree() {
	local f
	while IFS= read -r f; do
		if [ -f "$1/$f" ]; then
			cmp -s "$1/$f" "$KTREE/$f" && continue
			mkdir -p "$(dirname "$KTREE/$f")"
			cp "$1/$f" "$KTREE/$f"
		else
			rm -f "$KTREE/$f"
		fi
	done <"$2"
}

# kvm_selftests_make [ARG...]: the tree's own KVM selftests build, statically
# linked for the initramfs, into $KB/kselftest-build against $KOUT's UAPI
# headers.
kvm_selftests_make() {
	local cc=gcc
	command -v ccache >/dev/null 2>&1 && cc="ccache gcc"
	CCACHE_BASEDIR=$BUILD make -s -C "$KTREE/tools/testing/selftests" -j"$JOBS" TARGETS=kvm \
		O="$KB/kselftest-build" CC="$cc" KHDR_INCLUDES="-isystem $KOUT/usr/include" \
		LDFLAGS="-static -pthread -no-pie" "$@"
}

# shadow_tree DEST DIR: at DEST, the kernel tree as symbolic links to
# $KTREE, but for its directory DIR, a copy that can be changed: relative
# paths out of DIR (the selftests' ../lib.mk, ../../../../tools/include)
# reach the tree's own files.
shadow_tree() {
	local dest=$1 dir=$2 from=$KTREE at=$1 part e
	rm -rf "$dest"
	mkdir -p "$dest"
	for part in ${dir//\// }; do
		for e in "$from"/*; do
			[ "${e##*/}" = "$part" ] || ln -s "$e" "$at/${e##*/}"
		done
		from=$from/$part at=$at/$part
		mkdir "$at"
	done
	cp -a "$from/." "$at/"
}

# shadow_build SHADOW OUT LOG CHANGE REUSE TEST...: the KVM selftests TESTs
# built in a shadow of the tree at SHADOW whose KVM selftests directory the
# command CHANGE alters (it runs there), into OUT/$ARCH_DIR/.  REUSE=1
# starts from a copy of the tree's own build's objects, so that make
# rebuilds only the sources CHANGE replaced (a header change is not seen
# that way: 0).  A failed build prints LOG's end and returns non-zero.
KVM_REL=tools/testing/selftests/kvm
shadow_build() {
	local shadow=$1 out=$2 log=$3 change=$4 reuse=$5 cc=gcc
	shift 5
	shadow_tree "$shadow" "$KVM_REL"
	(cd "$shadow/$KVM_REL" && $change)
	rm -rf "$out"
	mkdir -p "$out"
	[ "$reuse" = 0 ] ||
		rsync -a --include='*/' --include='*.o' --include='*.d' --exclude='*' \
			"$KB/kselftest-build/kselftest/kvm/" "$out/"
	command -v ccache >/dev/null 2>&1 && cc="ccache gcc"
	CCACHE_BASEDIR=$BUILD make -s -C "$shadow/$KVM_REL" -j"$JOBS" OUTPUT="$out" CC="$cc" \
		KHDR_INCLUDES="-isystem $KOUT/usr/include" LDFLAGS="-static -pthread -no-pie" \
		"${@/#/$out/$ARCH_DIR/}" >"$log" 2>&1 ||
		{ tail -30 "$log" >&2; return 1; }
}

# bochs-svm's build of the tests (guest-init.sh puts it in place where the
# platform asks, kvmipi.poll_idle): kvm_util's safe_halt() polls, "sti;
# nop", instead of "sti; hlt".  Under Bochs 2.7's SVM an interrupt that KVM
# left pending in V_IRQ while the guest had interrupts off is taken only
# when the guest itself next sets IF from 0 to 1 and STI's shadow has
# ended; with "sti; hlt" the HLT exits first, every time, and the vCPU
# never takes it (docs/platforms.md, "Bochs SVM and safe_halt()").  Each
# caller loops on its own condition with interrupts off, so a poll is a
# halt that returns at once; no posted code changes.  The HLT wake-up test
# keeps the real safe_halt(): it shows the defect, as expected failures.
# The same build opens sti_nop_cli()'s window twice, "sti; nop; cli" once
# more: a host interrupt that Bochs held while the guest had IF=0 wins at
# the guest's STI, and its exit leaves the V_IRQ to be recognised at the
# next IF 0->1 change (docs/platforms.md, "An interrupt not taken in its
# `sti; nop; cli` window").  One window is all hardware needs.
poll_idle() {
	local h=include/$ARCH_DIR/processor.h
	sed -i '/^static inline void safe_halt(void)$/,/^}$/ s/"sti; hlt"/"sti; nop"/' "$h"
	grep -q '"sti; nop"' < <(sed -n '/^static inline void safe_halt(void)$/,/^}$/p' "$h") ||
		die "no 'sti; hlt' safe_halt() in $h to make poll"
	sed -i '/^static inline void sti_nop_cli(void)$/,/^}$/ s/"sti; nop; cli"/"sti; nop; cli; sti; nop; cli"/' "$h"
	grep -q '"sti; nop; cli; sti; nop; cli"' \
		< <(sed -n '/^static inline void sti_nop_cli(void)$/,/^}$/p' "$h") ||
		die "no 'sti; nop; cli' sti_nop_cli() in $h to open twice"
}

# testbed_config SRC OUT [FRAGMENT...]: configure the tree SRC into the build
# directory OUT from tinyconfig + the fragments (default configs/testbed.config);
# fail if an option did not stick.
testbed_config() {
	local src=$1 out=$2 line missing=""
	shift 2
	[ $# -gt 0 ] || set -- "$FRAGMENT"
	mkdir -p "$out"
	make -s -C "$src" O="$out" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
	make -s -C "$src" O="$out" olddefconfig >/dev/null
	while read -r line; do
		grep -qx -- "$line" "$out/.config" || missing="$missing ${line%%=*}"
	done < <(grep -h '^CONFIG_' "$@")
	[ -z "$missing" ] || die "config options did not stick (unmet dependencies?):$missing"
	# "# CONFIG_X is not set": X must be off, whether or not it is listed
	while read -r line; do
		! grep -q "^$line=" "$out/.config" || missing="$missing $line"
	done < <(sed -n 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p' "$@")
	[ -z "$missing" ] || die "config options still on (selected by another?):$missing"
}

# the platforms, and what each needs here
. "$TOP/scripts/platforms.sh"

# PLATFORMS: known names only
known_platforms() {
	local p
	for p in ${PLATFORMS:-}; do
		case " $(echo $ALL_PLATFORMS) " in
		*" $p "*) ;;
		*) bad_setting "unknown platform '$p': PLATFORMS= takes $(echo $ALL_PLATFORMS)" ;;
		esac
	done
}
known_platforms
[ -z "$settings_bad" ] || exit 1
