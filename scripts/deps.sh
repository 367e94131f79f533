#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the project needs and are missing.  Runs as
# root (our machines); otherwise prints the apt-get command to run.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PKGS=(
	gcc make libc6-dev flex bison bc libelf-dev libssl-dev perl	# kernel build
	cpio rsync patch xz-utils file ccache busybox-static		# sources, initramfs
	qemu-system-x86							# qemu-svm, qemu-kvm
	bochs bochs-term bochsbios vgabios isolinux syslinux-common xorriso	# bochs-vmx
	gnuplot-nox							# make bench
)
[ -n "${KSRC:-}" ] || PKGS+=(linux-source-6.12)
mkdir -p "$BUILD"

missing=()
for p in "${PKGS[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

[ "$(id -u)" -eq 0 ] ||
	die "missing packages; run: sudo apt-get install ${missing[*]}"
say "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$BUILD/apt.log" 2>&1 ||
	{ tail -20 "$BUILD/apt.log" >&2; die "apt-get install failed (full log: $BUILD/apt.log)"; }
