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
DEB_TARBALL=/usr/src/linux-source-6.12.tar.xz	# the 6.12 tree unless KSRC=
FRAGMENT=$TOP/configs/testbed.config		# merged onto tinyconfig
# reproducible kernel builds
KBUILD_ENV=(KBUILD_BUILD_TIMESTAMP="2024-11-17" KBUILD_BUILD_USER=kvmipi
	    KBUILD_BUILD_HOST=testbed)

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

# Where the 6.12 source comes from, as a string that changes when it does:
# KSRC=/path/to/linux-6.12 or Debian's linux-source-6.12 tarball.
source_origin() {
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/Makefile" ] && [ -d "$KSRC/arch/x86/kvm" ] ||
			die "KSRC=$KSRC is not a kernel source tree"
		echo "ksrc:$(cd "$KSRC" && pwd)"
	else
		[ -f "$DEB_TARBALL" ] ||
			die "$DEB_TARBALL missing: apt-get install linux-source-6.12 (or set KSRC=/path/to/linux-6.12)"
		echo "deb:$DEB_TARBALL:$(stat -c %s-%Y "$DEB_TARBALL")"
	fi
}

# testbed_config SRC OUT: configure the tree SRC into the build directory OUT
# from tinyconfig + configs/testbed.config; fail if an option did not stick.
testbed_config() {
	local src=$1 out=$2 line missing=""
	mkdir -p "$out"
	make -s -C "$src" O="$out" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$FRAGMENT" >/dev/null
	make -s -C "$src" O="$out" olddefconfig >/dev/null
	while read -r line; do
		grep -qx -- "$line" "$out/.config" || missing="$missing ${line%%=*}"
	done < <(grep '^CONFIG_' "$FRAGMENT")
	[ -z "$missing" ] || die "config options did not stick (unmet dependencies?):$missing"
}
