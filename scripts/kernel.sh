#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Obtain a 6.12 kernel tree, apply patches/series, configure it from
# tinyconfig + configs/testbed.config and build bzImage and the UAPI headers.
#
#   KSRC=/path/to/linux-6.12.y  use that tree (copied, never modified)
#   default                     Debian's /usr/src/linux-source-6.12.tar.xz
#
# Every step is incremental: an unchanged source, series and config rebuild
# in seconds.
set -euo pipefail
. "$(dirname "$0")/common.sh"

DEB_TARBALL=/usr/src/linux-source-6.12.tar.xz
FRAGMENT=$TOP/configs/testbed.config
KBUILD_ENV=(KBUILD_BUILD_TIMESTAMP="2024-11-17" KBUILD_BUILD_USER=kvmipi
	    KBUILD_BUILD_HOST=testbed)

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

get_source() {
	local origin
	origin=$(source_origin)
	if [ -f "$KTREE/.kvmipi-origin" ] && [ "$(cat "$KTREE/.kvmipi-origin")" = "$origin" ]; then
		if [ -n "${KSRC:-}" ]; then
			# Pick up the user's edits; patched files are restored
			# by re-applying the series below.
			rsync -a --exclude=.git --exclude=.kvmipi-applied \
			      --exclude=.kvmipi-origin "$KSRC/" "$KTREE/"
			rm -rf "$KTREE/.kvmipi-applied"
		fi
		return
	fi
	say "preparing kernel source ($origin)"
	rm -rf "$KTREE" "$KOUT" "$BUILD/tmp-src"
	mkdir -p "$BUILD/tmp-src"
	if [ -n "${KSRC:-}" ]; then
		rsync -a --exclude=.git "$KSRC/" "$KTREE/"
		if [ -f "$KTREE/.config" ] || [ -d "$KTREE/include/config" ]; then
			make -s -C "$KTREE" mrproper
		fi
	else
		tar -C "$BUILD/tmp-src" -xf "$DEB_TARBALL"
		mv "$BUILD/tmp-src"/linux-source-6.12 "$KTREE"
	fi
	rmdir "$BUILD/tmp-src"
	local ver
	ver=$(make -s -C "$KTREE" kernelversion)
	case "$ver" in
	6.12|6.12.*) ;;
	*) die "kernel tree is version $ver, this series targets 6.12";;
	esac
	echo "$origin" >"$KTREE/.kvmipi-origin"
}

series_files() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$TOP/patches/series"
}

# Reverse what a previous run applied, newest first.
unapply_old() {
	local applied=$KTREE/.kvmipi-applied p
	[ -d "$applied" ] || return 0
	for p in $(tac "$applied/series"); do
		patch -s -p1 -R -d "$KTREE" --no-backup-if-mismatch <"$applied/$p" ||
			die "cannot reverse old patch $p: remove $KTREE and rerun"
	done
	rm -rf "$applied"
}

apply_series() {
	local applied=$KTREE/.kvmipi-applied p
	if [ -d "$applied" ] &&
	   diff -q "$TOP/patches/series" "$applied/series" >/dev/null &&
	   (cd "$TOP/patches" && series_files | while read -r p; do
		cmp -s "$p" "$applied/$p" || exit 1; done); then
		return
	fi
	unapply_old
	mkdir -p "$applied.new"
	: >"$applied.new/series"
	for p in $(series_files); do
		[ -f "$TOP/patches/$p" ] || die "patches/series names $p, which does not exist"
		if ! patch -s -p1 -d "$KTREE" --dry-run --forward <"$TOP/patches/$p" >"$BUILD/patch.log" 2>&1; then
			cat "$BUILD/patch.log" >&2
			# leave the tree as we found it
			mv "$applied.new" "$applied"
			unapply_old
			die "patch $p does not apply to $KTREE"
		fi
		patch -s -p1 -d "$KTREE" --forward --no-backup-if-mismatch <"$TOP/patches/$p"
		cp "$TOP/patches/$p" "$applied.new/"
		echo "$p" >>"$applied.new/series"
		say "applied $p"
	done
	cp "$TOP/patches/series" "$applied.new/series"
	mv "$applied.new" "$applied"
}

configure() {
	local stamp=$KOUT/.kvmipi-config
	local want
	want=$(cat "$FRAGMENT" "$KTREE/.kvmipi-origin" | md5sum)
	if [ -f "$KOUT/.config" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return
	fi
	say "configuring: tinyconfig + configs/testbed.config"
	mkdir -p "$KOUT"
	make -s -C "$KTREE" O="$KOUT" tinyconfig >/dev/null
	"$KTREE/scripts/kconfig/merge_config.sh" -m -O "$KOUT" "$KOUT/.config" "$FRAGMENT" >/dev/null
	make -s -C "$KTREE" O="$KOUT" olddefconfig >/dev/null
	local line missing=""
	while read -r line; do
		grep -qx -- "$line" "$KOUT/.config" || missing="$missing ${line%%=*}"
	done < <(grep '^CONFIG_' "$FRAGMENT")
	[ -z "$missing" ] || die "config options did not stick (unmet dependencies?):$missing"
	echo "$want" >"$stamp"
}

build() {
	local cc=gcc
	need_cmd gcc gcc
	need_cmd flex flex
	need_cmd bison bison
	need_cmd bc bc
	[ -f /usr/include/libelf.h ] || die "libelf.h missing: apt-get install libelf-dev"
	if command -v ccache >/dev/null 2>&1; then
		cc="ccache gcc"
		# hits across clones and build directories
		export CCACHE_BASEDIR=$BUILD
	fi
	say "building bzImage and headers ($JOBS jobs, CC=$cc)"
	env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$KOUT" -j"$JOBS" CC="$cc" bzImage
	make -s -C "$KTREE" O="$KOUT" headers >/dev/null
	cp "$KOUT/arch/x86/boot/bzImage" "$BUILD/bzImage"
}

mkdir -p "$BUILD"
need_cmd rsync rsync
need_cmd patch patch
get_source
apply_series
configure
build
say "kernel ready: $BUILD/bzImage"
