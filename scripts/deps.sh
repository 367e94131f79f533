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
KERNELS=${KERNELS:-$("$TOP/scripts/kernels.sh")}
[ -n "${KSRC:-}" ] || [[ " $KERNELS " != *" 6.12 "* ]] || PKGS+=(linux-source-6.12)
mkdir -p "$BUILD"

# Debian unstable's linux-source-7.2, for KERNEL=7.2 without KSRC=: the
# .deb is downloaded with a private apt state (one "sid" sources line, the
# mirror of this system's own sources) and unpacked under $BUILD/src;
# nothing is installed or upgraded.
fetch_unstable_source() {
	local k=$1 state=$BUILD/src/apt mirror
	[ -f "$(deb_tarball "$k")" ] && return
	mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
		 sed -n '/^[[:space:]]*#/d; s#.*\(https\?://[^ ]*/debian\)/\?\( .*\)\?$#\1#p' |
		 grep -v security | head -1) || true
	[ -n "$mirror" ] || die "no Debian mirror in /etc/apt/sources.list*: set KSRC=/path/to/linux-$k instead"
	say "downloading linux-source-$k from Debian unstable ($mirror), installing nothing"
	mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror sid main" \
		>"$state/sources.list"
	local apt=(apt-get -q -o Dir::Etc::SourceList="$state/sources.list"
		   -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$state/lists"
		   -o Dir::Cache="$state/cache" -o APT::Sandbox::User=root)
	"${apt[@]}" update >"$BUILD/src/apt-update.log" 2>&1 ||
		{ tail -5 "$BUILD/src/apt-update.log" >&2; die "apt-get update of Debian unstable failed"; }
	(cd "$BUILD/src" && "${apt[@]}" download "linux-source-$k") >"$BUILD/src/apt-download.log" 2>&1 ||
		{ tail -5 "$BUILD/src/apt-download.log" >&2; die "cannot download linux-source-$k from Debian unstable"; }
	dpkg-deb -x "$BUILD"/src/linux-source-"$k"_*.deb "$BUILD/src"
	rm -f "$BUILD"/src/linux-source-"$k"_*.deb
	[ -f "$(deb_tarball "$k")" ] ||
		die "linux-source-$k's package has no /usr/src/linux-source-$k.tar.xz"
}

missing=()
for p in "${PKGS[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
		missing+=("$p")
done
fetch_sources() {
	local k
	[ -z "${KSRC:-}" ] || return 0
	for k in $KERNELS; do
		[ "$k" = 6.12 ] || fetch_unstable_source "$k"
	done
}
if [ ${#missing[@]} -eq 0 ]; then
	fetch_sources
	exit 0
fi

[ "$(id -u)" -eq 0 ] ||
	die "missing packages; run: sudo apt-get install ${missing[*]}"
say "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$BUILD/apt.log" 2>&1 ||
	{ tail -20 "$BUILD/apt.log" >&2; die "apt-get install failed (full log: $BUILD/apt.log)"; }
fetch_sources
