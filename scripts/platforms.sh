#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The platforms: their names, the defaults, and what each needs here.
# make asks first, before anything is built or fetched, so that a platform
# that cannot run is refused at once, saying what to do.
#
#   platforms.sh check     print the platforms of $PLATFORMS (default: those
#                          this machine can run) on one line, or fail saying
#                          why one cannot run whatever gets installed: an
#                          unknown name, an unusable /dev/kvm, nested
#                          virtualization off, a QEMU that is not there, a
#                          running kernel without a series (PLATFORMS=host).
#                          Fast: no package manager, no network.
#   platforms.sh missing [--build | PLATFORM...]
#                          what they (default: $PLATFORMS; --build: none)
#                          and the build lack here, one per line: "WHAT<TAB>DEBIAN<TAB>
#                          FEDORA", the packages that give it ("- (...)":
#                          none, and what to do instead)
#   platforms.sh help      the platforms, each with what runs it, and the
#                          kernel trees this project supports (make help)
#
# Sourced (common.sh does), it gives the same as functions.  For the
# tests, the machine is injectable: KVMIPI_KVM_DEV (/dev/kvm),
# KVMIPI_SYSFS_MODULE (/sys/module), KVMIPI_CPUINFO (/proc/cpuinfo),
# KVMIPI_OS_RELEASE (/etc/os-release), KVMIPI_UNAME_R (uname -r),
# KVMIPI_USR_SRC (/usr/src, where linux-source-6.12 puts its tarball).

ALL_PLATFORMS="bochs-vmx bochs-svm bochs-vmx-2cpu bochs-svm-2cpu bochs-vmx-stock
	bochs-apicv bochs-apicv-2cpu qemu-svm qemu-kvm host"
KVM_DEV=${KVMIPI_KVM_DEV:-/dev/kvm}
SYSFS_MODULE=${KVMIPI_SYSFS_MODULE:-/sys/module}
CPUINFO=${KVMIPI_CPUINFO:-/proc/cpuinfo}
OS_RELEASE=${KVMIPI_OS_RELEASE:-/etc/os-release}

# Debian itself: where make deps installs what is missing (as root) and
# fetches unstable's QEMU and mainline sources from the mirror.  Elsewhere
# (Ubuntu and Fedora included) it names the packages and stops.
os_is_debian() {
	# shellcheck disable=SC1090 # the system's
	[ "$(. "$OS_RELEASE" 2>/dev/null && echo "${ID:-}")" = debian ] &&
		command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1
}

# os_family: whose package names this system takes: debian, ubuntu (apt,
# without Debian's linux-source-6.12), fedora (dnf), or other
os_family() {
	local id like
	# shellcheck disable=SC1090 # the system's
	read -r id like < <(. "$OS_RELEASE" 2>/dev/null; echo "${ID:-none} ${ID_LIKE:-}")
	case " $id $like " in
	*" debian "*) [ "$id" = debian ] && echo debian || echo ubuntu ;;
	*" ubuntu "*) echo ubuntu ;;
	*" fedora "* | *" rhel "* | *" centos "*) echo fedora ;;
	*) echo other ;;
	esac
}

# make deps installs the missing packages here: Debian, as root
deps_installs() {
	os_is_debian && [ "$(id -u)" -eq 0 ]
}

running_release() {
	echo "${KVMIPI_UNAME_R:-$(uname -r)}"
}

# kvm_vendor: the vendor module KVM runs with on this CPU, or nothing
kvm_vendor() {
	if grep -qw vmx "$CPUINFO" 2>/dev/null; then
		echo kvm_intel
	elif grep -qw svm "$CPUINFO" 2>/dev/null; then
		echo kvm_amd
	fi
}

# kvm_problem [nested]: why KVM cannot run the tests here (with "nested":
# cannot run a guest that runs them), with what to do; nothing when it can
kvm_problem() {
	local mod param user group value
	mod=$(kvm_vendor)
	if [ -z "$mod" ]; then
		echo "the CPU shows no virtualization (no vmx or svm flag in $CPUINFO): turn VT-x or AMD-V on in the firmware; inside a VM, turn nested virtualization on in its host"
		return
	fi
	if [ ! -e "$KVM_DEV" ]; then
		echo "$KVM_DEV does not exist: load KVM (sudo modprobe $mod)"
		return
	fi
	if [ ! -c "$KVM_DEV" ]; then
		echo "$KVM_DEV is not a character device"
		return
	fi
	if [ ! -r "$KVM_DEV" ] || [ ! -w "$KVM_DEV" ]; then
		user=$(id -un 2>/dev/null || id -u)
		group=$(stat -c %G "$KVM_DEV")
		[ "$group" != root ] || group=kvm	# as the distributions' udev rules make it
		echo "$KVM_DEV ($(stat -c '%U:%G mode %a' "$KVM_DEV")) cannot be opened for reading and writing as $user: add $user to the group $group (sudo usermod -aG $group $user), then log in again"
		return
	fi
	[ "${1:-}" = nested ] || return 0
	param=$SYSFS_MODULE/$mod/parameters/nested
	if [ ! -r "$param" ]; then
		echo "$mod is not loaded ($param is missing): sudo modprobe $mod nested=1"
		return
	fi
	value=$(cat "$param")
	case $value in
	Y|y|1) ;;
	*) echo "nested virtualization is off ($param is $value): the test kernel would find no $(if [ "$mod" = kvm_intel ]; then echo VMX; else echo SVM; fi) in its guest; with no VM running: sudo modprobe -r $mod && sudo modprobe $mod nested=1 (for good: 'options $mod nested=1' in /etc/modprobe.d/kvm.conf)" ;;
	esac
}

# qemu_path: the QEMU that qemu-kvm runs: QEMU=, else the system's
qemu_path() {
	if [ -n "${QEMU:-}" ]; then
		echo "$QEMU"
	else
		command -v qemu-system-x86_64 2>/dev/null || true
	fi
}

# host_kernel: the series PLATFORMS=host tests the running kernel with
# (KSRC='s, KERNEL='s or the running kernel's own), or fail saying why
host_kernel() {
	local release running k=
	release=$(running_release)
	running=$(kernel_of_version "$release")
	if [ -n "${KSRC:-}" ]; then
		k=$(kernel_of_version "$(make -s -C "$KSRC" kernelversion 2>/dev/null)")
		[ "$k" != unsupported ] || { echo "KSRC=$KSRC is not a 6.12 or 7.x tree" >&2; return 1; }
	elif [ -n "${KERNEL_ASKED:-}" ]; then
		k=$KERNEL_ASKED
	elif [ "$running" != unsupported ]; then
		k=$running
	else
		echo "the running kernel is $release, and this project has series for $KERNELS_SUPPORTED only (6.12.y; 7.x takes the newest 7.x series not newer than it): PLATFORMS=host needs one of those, or KSRC=/path/to/your/tree" >&2
		return 1
	fi
	if [ "$running" != unsupported ] && [ "$running" != "$k" ]; then
		echo "the running kernel is $release ($running's series), not $k: PLATFORMS=host tests the running kernel only; leave KERNEL= and KSRC= unset, or set them to match it" >&2
		return 1
	fi
	echo "$k"
}

# default_platforms: what make run boots when PLATFORMS is not set: the
# Bochs platforms where Bochs is installed, or on Debian as root, where make
# deps installs it (bochs-svm-2cpu is left out:
# under Bochs' SVM an L1 CPU whose vCPU spins with IF=0 takes no host
# interrupt, and the two-CPU test stalls there, docs/platforms.md), qemu-svm
# on Debian (unstable's QEMU, fetched by make deps: missing, it fails
# loudly) or with QEMU=, and qemu-kvm where KVM can run a nested guest.
default_platforms() {
	local p="" why
	if command -v bochs >/dev/null 2>&1 || deps_installs; then
		p="bochs-vmx bochs-svm bochs-vmx-2cpu"
		# the stock kernel (without the series' KVM patches) is the
		# normal kernel's variant only
		[ -n "${DEBUG:-}" ] || p="$p bochs-vmx-stock"
	else
		echo "note: the Bochs platforms are left out: Bochs is not installed (Debian: apt-get install bochs bochs-term bochsbios vgabios; Fedora: dnf install bochs bochs-bios vgabios)" >&2
	fi
	if os_is_debian || [ -n "${QEMU:-}" ]; then
		p="$p qemu-svm"
	fi
	if [ -e "$KVM_DEV" ]; then
		why=$(kvm_problem nested)
		if [ -z "$why" ]; then
			p="$p qemu-kvm"
		else
			echo "note: qemu-kvm is left out: $why" >&2
		fi
	fi
	echo $p
}

# need KIND WHAT DEBIAN FEDORA: print the need if this machine lacks it.
# KIND cmd: a command on PATH; file: one of the |-separated paths exists;
# libc: gcc links static programs; busybox: a static busybox.
need() {
	local kind=$1 what=$2 f have=
	case $kind in
	cmd) command -v "$what" >/dev/null 2>&1 && have=1 ;;
	file)
		for f in ${what//|/ }; do
			[ -e "$f" ] && have=1
		done ;;
	libc) [ "$(gcc -print-file-name=libc.a 2>/dev/null)" != libc.a ] &&
		[ -n "$(gcc -print-file-name=libc.a 2>/dev/null)" ] && have=1 ;;
	busybox) have=$(busybox_path) ;;
	esac
	[ -n "$have" ] || printf '%s\t%s\t%s\n' "$what" "$3" "$4"
}

# busybox_path: a statically linked busybox, or nothing
busybox_path() {
	local b
	for b in /bin/busybox /usr/bin/busybox /usr/sbin/busybox /sbin/busybox; do
		if [ -x "$b" ] && grep -q 'statically linked' < <(file -L "$b" 2>/dev/null); then
			echo "$b"
			return
		fi
	done
}

# first_file PATH|PATH...: the first that exists (Debian's, Fedora's)
first_file() {
	local f
	for f in ${1//|/ }; do
		[ -e "$f" ] && { echo "$f"; return; }
	done
}
BOCHS_BIOS_FILES=/usr/share/bochs/BIOS-bochs-latest
VGABIOS_FILES="/usr/share/vgabios/vgabios.bin|/usr/share/vgabios/VGABIOS-lgpl-latest.bin|/usr/share/bochs/VGABIOS-lgpl-latest"
ISOLINUX_FILES="/usr/lib/ISOLINUX/isolinux.bin|/usr/share/syslinux/isolinux.bin"
LDLINUX_FILES="/usr/lib/syslinux/modules/bios/ldlinux.c32|/usr/share/syslinux/ldlinux.c32"

# missing_needs [--build | PLATFORM...]: what the build and the platforms
# (default: $PLATFORMS; --build: none, the build alone) lack here, one per line: "WHAT<TAB>DEBIAN<TAB>FEDORA"
missing_needs() {
	local p kernel_build= k platforms
	if [ "${1:-}" = --build ]; then	# no platform: make patches
		platforms=
	else
		platforms=${*:-${PLATFORMS:-$(default_platforms 2>/dev/null)}}
	fi
	# the tests: every platform
	need cmd gcc gcc gcc
	need cmd make make make
	need libc "static libc (libc.a)" libc6-dev glibc-static
	need cmd rsync rsync rsync
	need cmd patch patch patch
	need cmd unifdef unifdef unifdef	# each tree's rule into its series
	for p in $platforms; do
		[ "$p" = host ] || kernel_build=1
	done
	if [ -n "$kernel_build" ]; then
		need cmd flex flex flex
		need cmd bison bison bison
		need cmd bc bc bc
		need cmd perl perl perl-interpreter
		need cmd lz4 lz4 lz4
		need file /usr/include/libelf.h libelf-dev elfutils-libelf-devel
		need file /usr/include/openssl/ssl.h libssl-dev openssl-devel
		# 7.x's KVM selftests link the VFIO selftests' library: libuuid
		need file /usr/include/uuid/uuid.h uuid-dev libuuid-devel
		# 7.x's kernel-doc, which W=1 runs (the series check), is Python
		need cmd python3 python3 python3
		need cmd cpio cpio cpio
		need cmd file file file
		need busybox "static busybox" busybox-static busybox
	fi
	# the kernel sources: Debian's linux-source packages, else KSRC=
	if [ -z "${KSRC:-}" ]; then
		need cmd xz xz-utils xz
		for k in ${KERNELS:-}; do
			[ "$k" = 6.12 ] || continue
			if os_is_debian; then
				need file "$(deb_tarball 6.12)" linux-source-6.12 \
					"- (none: set KSRC=/path/to/linux-6.12)"
			else	# Debian's package, which Ubuntu does not have
				need file "$(deb_tarball 6.12)" "- (none: set KSRC=/path/to/linux-6.12)" \
					"- (none: set KSRC=/path/to/linux-6.12)"
			fi
		done
	fi
	for p in $platforms; do
		case $p in
		bochs-apicv*) ;;
		bochs-*) need cmd bochs "bochs bochs-term" bochs ;;
		esac
		case $p in
		bochs-*)
			need file "$BOCHS_BIOS_FILES" bochsbios bochs-bios
			need file "$VGABIOS_FILES" vgabios vgabios
			need file "$ISOLINUX_FILES" isolinux syslinux
			need file "$LDLINUX_FILES" syslinux-common syslinux
			need cmd xorriso xorriso xorriso ;;
		qemu-svm)
			# Debian unstable's QEMU, fetched by make deps
			[ -n "${QEMU:-}" ] || need cmd dpkg-deb dpkg - ;;
		qemu-kvm)
			[ -n "${QEMU:-}" ] || need cmd qemu-system-x86_64 qemu-system-x86 qemu-system-x86-core ;;
		host)
			need cmd dmesg util-linux util-linux
			[ "$(id -u)" -ne 0 ] || need cmd setpriv util-linux util-linux ;;
		esac
	done | sort -u
}

# platform_what P: what runs platform P's guest, in words (make help)
platform_what() {
	case $1 in
	bochs-vmx) echo "Bochs, an emulated Intel CPU with VMX: the fastpath runs there" ;;
	bochs-svm) echo "Bochs, an emulated AMD CPU with SVM" ;;
	bochs-*-2cpu) echo "${1%-2cpu} with two CPUs: the tests that need two" ;;
	bochs-vmx-stock) echo "bochs-vmx booting the kernel without the series' KVM patches" ;;
	bochs-apicv) echo "a Bochs whose VMX posted interrupts work (BOCHS=): APICv on" ;;
	qemu-svm) echo "QEMU TCG, an emulated AMD CPU with SVM: the fastpath never runs there" ;;
	qemu-kvm) echo "QEMU on this machine's KVM (/dev/kvm, nested virtualization), not emulated" ;;
	host) echo "no guest: this machine's running kernel and /dev/kvm, not emulated" ;;
	esac
}
# path_unprovable P: why no fastpath point (": path") can be proved on
# platform P whatever the kernel does, or nothing where one can (STRICT=1
# asks every kernel x platform that can for one: each-kernel.sh)
path_unprovable() {
	case $1 in
	qemu-svm) echo "QEMU TCG offers no NRIPS: KVM's SVM fastpath never runs there" ;;
	bochs-vmx-stock) echo "the stock kernel has no fastpath stat to prove a path with" ;;
	esac
}
# platforms_help: the platforms, each with what runs it (make help)
platforms_help() {
	local p
	echo
	echo "PLATFORMS= takes (docs/platforms.md):"
	for p in $ALL_PLATFORMS; do
		printf '  %-18s %s\n' "$p" "$(platform_what "$p")"
	done
}

# check_platforms: the platforms to run, on one line, or fail saying why
# one cannot run here whatever gets installed.
check_platforms() {
	local list p why bad=0 qemu
	list=${PLATFORMS:-$(default_platforms)}
	if [ -z "$list" ]; then
		echo "error: no platform can run here: install Bochs (Debian: apt-get install bochs bochs-term bochsbios vgabios; Fedora: dnf install bochs bochs-bios vgabios) for the bochs-* platforms, set QEMU=/path/to/qemu-system-x86_64 (9.1 or later) for qemu-svm, or have a /dev/kvm you can use for qemu-kvm and host" >&2
		return 1
	fi
	for p in $list; do
		case " $(echo $ALL_PLATFORMS) " in
		*" $p "*) ;;
		*) echo "error: unknown platform '$p': PLATFORMS= takes $(echo $ALL_PLATFORMS)" >&2
		   bad=1; continue ;;
		esac
		why=
		case $p in
		qemu-kvm)
			why=$(kvm_problem nested)
			qemu=$(qemu_path)
			if [ -z "$why" ] && [ -n "${QEMU:-}" ] && [ ! -x "$QEMU" ]; then
				why="QEMU=$QEMU is not an executable file"
			elif [ -z "$why" ] && [ -z "$qemu" ] && ! os_is_debian; then
				why="no qemu-system-x86_64 on PATH: install it (Debian, Ubuntu: apt-get install qemu-system-x86; Fedora: dnf install qemu-system-x86-core), or set QEMU=/path/to/qemu-system-x86_64"
			fi ;;
		qemu-svm)
			if [ -n "${QEMU:-}" ] && [ ! -x "$QEMU" ]; then
				why="QEMU=$QEMU is not an executable file"
			elif [ -z "${QEMU:-}" ] && ! os_is_debian; then
				why="it runs Debian unstable's QEMU, which make deps fetches on Debian only: set QEMU=/path/to/qemu-system-x86_64, 9.1 or later (earlier ones let an interrupt into a nested guest inside STI's shadow, docs/platforms.md)"
			fi ;;
		bochs-apicv*)
			if [ -z "${BOCHS:-}" ]; then
				why="it needs a Bochs whose VMX posted interrupts work: BOCHS=/path/to/bochs (docs/platforms.md, \"APICv\")"
			elif [ ! -x "$BOCHS" ]; then
				why="BOCHS=$BOCHS is not an executable file"
			fi ;;
		bochs-*)
			if [ -n "${BOCHS:-}" ] && [ ! -x "$BOCHS" ]; then
				why="BOCHS=$BOCHS is not an executable file"
			fi ;;
		host)
			why=$(kvm_problem)
			[ -n "$why" ] || why=$(host_kernel 2>&1 >/dev/null) || true ;;
		esac
		if [ -n "$why" ]; then
			echo "error: PLATFORMS=$p: $why" >&2
			bad=1
		fi
	done
	[ "$bad" -eq 0 ] || return 1
	echo $list
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ -z "${PLATFORMS_CLI:-}" ]; then
	set -euo pipefail
	PLATFORMS_CLI=1 KERNEL_ASKED=${KERNEL:-}
	. "$(dirname "$0")/common.sh"
	case ${1:-} in
	check) check_platforms ;;
	missing) shift; missing_needs "$@" ;;
	help) platforms_help; supported_trees ;;
	*) die "usage: platforms.sh check|missing|help" ;;
	esac
fi
