# SPDX-License-Identifier: GPL-2.0
# Shared settings and helpers for the scripts; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
KTREE=$BUILD/linux		# patched kernel source
KOUT=$BUILD/kbuild		# kernel build output (O=)
TESTS_OUT=$BUILD/kselftest	# installed KVM selftests (run_kselftest.sh, kvm/)
RESULTS=${RESULTS:-$BUILD/results}
BZIMAGE=${BZIMAGE:-$BUILD/bzImage}			# what the emulators boot
INITRAMFS=${INITRAMFS:-$BUILD/initramfs.cpio}
TESTS_LIST=${TESTS_LIST:-$TESTS_OUT/tests.list}	# what the guest runs
JOBS=${JOBS:-$(nproc)}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# need_cmd CMD PACKAGE: fail with the Debian package to install.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 ||
		die "'$1' not found: install it with 'apt-get install $2' (or run 'make deps')"
}

# /dev/kvm can exist (created by packages' udev rules) where the CPU has no
# virtualization: require the CPU feature too.
host_has_kvm() {
	[ -c /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo
}
