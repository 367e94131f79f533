#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Get what the build and the platforms of $PLATFORMS need, nothing else
# (scripts/platforms.sh says what each uses).  On Debian, as root, install
# the packages that are missing; elsewhere, or as another user, stop and
# name them (with this system's package manager: apt-get on Debian and
# Ubuntu, dnf on Fedora; no linux-source package outside Debian, but KSRC=).
# Then, on Debian, from its mirror: unstable's QEMU for qemu-svm and the
# mainline kernels' sources.
# DEPS=build (make patches, make unit): what the build needs, for no
# platform, and nothing from the mirror: no emulator, no /dev/kvm, no
# network where all is there.
set -euo pipefail
. "$(dirname "$0")/common.sh"

KERNELS=${KERNELS:-$("$TOP/scripts/kernels.sh")}
export KERNELS
if [ "${DEPS:-}" = build ]; then
	PLATFORMS=--build
else
	PLATFORMS=$(check_platforms) || exit 1
fi
mkdir -p "$BUILD"

# Installed with the rest on Debian as root, never required: ccache (the
# rebuilds: kernel.sh uses it when it is there) and gnuplot (make run's
# policy picture, make bench).
OPTIONAL=(ccache gnuplot-nox)

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
	if ! os_is_debian; then
		echo "linux-source-$k: make deps fetches it from the Debian mirror on Debian only; set KSRC=/path/to/linux-$k" >"$why"
	elif ! mirror_index; then
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
	[ ! -f "$why" ] || printf 'warning: %s: until then, Linux %s is not tested (make run and make check fail)\n' "$(cat "$why")" "$k" >&2
}

# What comes from the Debian mirror: unstable's QEMU when qemu-svm runs
# (without QEMU=), and the mainline kernels' sources (without KSRC=).
fetch_from_mirror() {
	local k
	[ "$PLATFORMS" != --build ] || return 0
	if [[ " $PLATFORMS " == *" qemu-svm "* ]] && [ -z "${QEMU:-}" ]; then
		"$TOP/scripts/emulators.sh" ||
			die "PLATFORMS=qemu-svm: no QEMU from Debian unstable (above); set QEMU=/path/to/qemu-system-x86_64 (9.1 or later), or leave qemu-svm out of PLATFORMS"
	fi
	[ -z "${KSRC:-}" ] || return 0
	for k in $KERNELS; do
		[ "$k" = 6.12 ] || fetch_mirror_source "$k"
	done
}

missing=$(missing_needs $PLATFORMS)
if [ -z "$missing" ]; then
	fetch_from_mirror
	exit 0
fi

if ! deps_installs; then
	family=$(os_family)
	{
		if [ "$PLATFORMS" = --build ]; then
			echo "error: missing here for the build:"
		else
			echo "error: missing here for the build and PLATFORMS=\"$PLATFORMS\":"
		fi
		# this system's package names only (both where it is neither)
		awk -F'\t' -v fam="$family" '{
			if (fam == "fedora") printf "  %-40s dnf: %s\n", $1, $3
			else if (fam != "other") printf "  %-40s apt-get: %s\n", $1, $2
			else printf "  %-40s apt-get: %-22s dnf: %s\n", $1, $2, $3 }' <<<"$missing"
		deb=$(cut -f2 <<<"$missing" | { grep -v '^-' || true; } | tr ' ' '\n' | sort -u | tr '\n' ' ')
		rpm=$(cut -f3 <<<"$missing" | { grep -v '^-' || true; } | tr ' ' '\n' | sort -u | tr '\n' ' ')
		[ -z "$deb$rpm" ] || echo "install them:"
		case $family in
		debian | ubuntu) [ -z "$deb" ] || echo "  sudo apt-get install ${deb% }" ;;
		fedora) [ -z "$rpm" ] || echo "  sudo dnf install ${rpm% }" ;;
		*)
			[ -z "$deb" ] || echo "  Debian, Ubuntu: sudo apt-get install ${deb% }"
			[ -z "$rpm" ] || echo "  Fedora:         sudo dnf install ${rpm% }" ;;
		esac
		if [ "$family" != debian ] && cut -f2,3 <<<"$missing" | grep -q 'set KSRC='; then
			echo "the kernel source: no package here is Debian's linux-source-6.12: set KSRC=/path/to/linux-6.12 (a Linux 6.12 tree; a KSRC= run covers that one kernel)"
		fi
		if os_is_debian; then
			echo "(or run this as root: on Debian, make deps installs them)"
		fi
	} >&2
	exit 1
fi

pkgs=$(cut -f2 <<<"$missing" | tr ' ' '\n' | grep -v '^-' | sort -u | tr '\n' ' ')
for p in "${OPTIONAL[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
		pkgs="$pkgs$p "
done
say "installing: $pkgs"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq --no-install-recommends $pkgs >"$BUILD/apt.log" 2>&1 ||
	{ tail -20 "$BUILD/apt.log" >&2; die "apt-get install failed (full log: $BUILD/apt.log)"; }
missing=$(missing_needs $PLATFORMS)
[ -z "$missing" ] || die "still missing after apt-get install: $(cut -f1 <<<"$missing" | tr '\n' ' ')"
fetch_from_mirror
