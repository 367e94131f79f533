#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the project needs and are missing.  Runs as
# root (our machines); otherwise prints the apt-get command to run.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PKGS=(
	gcc make libc6-dev flex bison bc libelf-dev libssl-dev perl lz4	# kernel build
	cpio rsync patch xz-utils file ccache busybox-static		# sources, initramfs
	unifdef							# make patches: each tree's rule
	bochs bochs-term bochsbios vgabios isolinux syslinux-common xorriso	# bochs-vmx
	gnuplot-nox							# make bench
)
# qemu-svm and qemu-kvm run Debian unstable's QEMU, unpacked under $BUILD
# (scripts/emulators.sh), not Debian 12's.
KERNELS=${KERNELS:-$("$TOP/scripts/kernels.sh")}
[ -n "${KSRC:-}" ] || [[ " $KERNELS " != *" 6.12 "* ]] || PKGS+=(linux-source-6.12)
mkdir -p "$BUILD"

# A mainline kernel's linux-source-K, without KSRC=: the .deb the mirror
# serves (unstable's, else experimental's) is downloaded with the private
# apt state of common.sh and unpacked under $BUILD/src; nothing is
# installed or upgraded.  When it cannot be had, the reason goes to
# $BUILD/src/unavailable-K and that kernel's phases SKIP with it.
fetch_mirror_source() {
	local k=$1 ver why=$BUILD/src/unavailable-$1
	[ -f "$(deb_tarball "$k")" ] && return
	mkdir -p "$BUILD/src"
	rm -f "$why"
	if ! mirror_index; then
		echo "linux-source-$k: the Debian mirror's index cannot be read ($MIRROR_STATE/update.log); set KSRC=/path/to/linux-$k" >"$why"
	else
		ver=$(served_version "linux-source-$k")
		if [ -z "$ver" ]; then
			echo "linux-source-$k: the Debian mirror ($(mirror_uri)) serves it in neither unstable nor experimental; set KSRC=/path/to/linux-$k" >"$why"
		else
			say "downloading linux-source-$k $ver from the Debian mirror, installing nothing"
			if (cd "$BUILD/src" && mirror_apt apt-get download "linux-source-$k") \
				>"$BUILD/src/apt-download.log" 2>&1; then
				dpkg-deb -x "$BUILD"/src/linux-source-"$k"_*.deb "$BUILD/src"
				rm -f "$BUILD"/src/linux-source-"$k"_*.deb
				[ -f "$(deb_tarball "$k")" ] ||
					echo "linux-source-$k $ver has no /usr/src/linux-source-$k.tar.xz" >"$why"
			else
				echo "linux-source-$k $ver: the download failed ($BUILD/src/apt-download.log)" >"$why"
			fi
		fi
	fi
	[ ! -f "$why" ] || printf 'warning: %s: its phases SKIP\n' "$(cat "$why")" >&2
}

missing=()
for p in "${PKGS[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
		missing+=("$p")
done
# What comes from the Debian mirror: unstable's QEMU, and the mainline
# kernels' sources (without KSRC=).
fetch_from_mirror() {
	local k
	"$TOP/scripts/emulators.sh" ||
		printf 'warning: no QEMU from Debian unstable: qemu-svm and qemu-kvm cannot run\n' >&2
	[ -z "${KSRC:-}" ] || return 0
	for k in $KERNELS; do
		[ "$k" = 6.12 ] || fetch_mirror_source "$k"
	done
}
if [ ${#missing[@]} -eq 0 ]; then
	fetch_from_mirror
	exit 0
fi

[ "$(id -u)" -eq 0 ] ||
	die "missing packages; run: sudo apt-get install ${missing[*]}"
say "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$BUILD/apt.log" 2>&1 ||
	{ tail -20 "$BUILD/apt.log" >&2; die "apt-get install failed (full log: $BUILD/apt.log)"; }
fetch_from_mirror
