#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Obtain the $KERNEL kernel tree (6.12, 7.3: patches/*/), apply its series,
# configure it from tinyconfig + configs/testbed.config and build bzImage and
# the UAPI headers, all under build/$KERNEL/.
#
#   KSRC=/path/to/linux         use that tree (its sources copied, never
#                               modified); where it has the series already
#                               (git am'd), its own is built, not ours
#   default                     Debian's linux-source-$KERNEL tarball
#   DEBUG=1                     add configs/debug.config, build into
#                               build/kbuild-debug -> build/bzImage-debug
#   PRISTINE=1                  no patches: build/linux-pristine ->
#                               build/bzImage-pristine (reproducers)
#
# Every step is incremental: an unchanged source, series and config rebuild
# in seconds.  --prepare: only make the source tree ready (for make patches).
# --headers: the patched tree and its UAPI headers, no kernel (the tests
# for PLATFORMS=host).  --stock: after the kernel, the stock kernel
# (build/<kernel>/bzImage-stock): the same without the series' KVM patches.
# --gcov: the coverage kernel (make coverage, scripts/kvm-coverage.sh): the
# same with configs/gcov.config in build/<kernel>/kbuild-gcov, KVM's modules
# alone profiled by gcov, -> build/<kernel>/bzImage-gcov and its modules.
#
# KVM is built as modules (configs/testbed.config): beside each bzImage, its
# set of kvm.ko, kvm-intel.ko and kvm-amd.ko as an initramfs archive,
# bzImage-kvm.cpio (kvm_modules_of, common.sh), which the platforms append
# to the initramfs and the guest loads (scripts/guest-init.sh).  A build with
# EXTRA_PATCHES (a mutant) that touch only KVM's own sources (arch/x86/kvm/,
# virt/kvm/) rebuilds KVM's modules alone and takes the kernel that the
# series built (docs/testbed.md, "KVM as modules").
set -euo pipefail
. "$(dirname "$0")/common.sh"

FRAGMENTS=("$FRAGMENT")
[ -z "$DEBUG" ] || FRAGMENTS+=("$TOP/configs/debug.config")
if [ "${1:-}" = --gcov ]; then
	[ -z "$DEBUG$PRISTINE" ] || die "--gcov: the coverage kernel is the normal one's, without DEBUG or PRISTINE"
	FRAGMENTS+=("$TOP/configs/gcov.config")
	KOUT=$GCOV_OUT
	BZIMAGE=$GCOV_BZIMAGE
fi
unset DEBUG	# ours: the kernel's tools/ Makefiles read DEBUG=1 as "-O0"

# The source files that the series' patches and the kvm_util diffs
# (compat/$KERNEL/kvm_util/*.diff, scripts/patches.sh) modify: their
# "--- a/" lines, but for files that one of them creates.
modified_files() {
	local f
	for f in $(series_patches) "$TOP/compat/$KERNEL/kvm_util"/*.diff; do
		if [ -f "$f" ]; then
			cat "$f"
		fi
	done | awk '
		$1 == "---" && $2 == "/dev/null" { created = 1; next }
		$1 == "---" && $2 ~ /^a\// { modified[substr($2, 3)] = 1; created = 0; next }
		$1 == "+++" && $2 ~ /^b\// && created { new[substr($2, 3)] = 1; created = 0 }
		END { for (f in modified) if (!(f in new)) print f }' | sort
}

# Pristine copies, under $KTREE/.kvmipi-pristine, of the files the series
# and the kvm_util diffs modify and of the KVM selftests' Makefiles: the
# selftests patches are regenerated against them (scripts/patches.sh).
# Right after extraction they are copied from the tree.
save_pristine() {
	local f
	for f in $(modified_files) \
		 tools/testing/selftests/kvm/Makefile tools/testing/selftests/kvm/Makefile.kvm; do
		[ -f "$KTREE/$f" ] || continue
		mkdir -p "$KTREE/.kvmipi-pristine/$(dirname "$f")"
		cp "$KTREE/$f" "$KTREE/.kvmipi-pristine/$f"
	done
}

# A tree extracted before the series or a kvm_util diff touched a file has
# no pristine copy of it, and its own copy may be patched: take the file
# from the source (KSRC= or the tarball) instead.
save_missing_pristine() {
	local missing=() f tmp=$KTREE.tmp-pristine
	for f in $(modified_files); do
		[ -f "$KTREE/.kvmipi-pristine/$f" ] || missing+=("$f")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	say "saving pristine copies of ${missing[*]}"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if [ -n "${KSRC:-}" ]; then
		for f in "${missing[@]}"; do
			mkdir -p "$tmp/$(dirname "$f")"
			cp "$KSRC/$f" "$tmp/$f" || die "$f is not in KSRC=$KSRC"
		done
	else
		tar -C "$tmp" -xf "$DEB_TARBALL" "${missing[@]/#/linux-source-$KERNEL/}" ||
			die "cannot extract ${missing[*]} from $DEB_TARBALL"
		mv "$tmp/linux-source-$KERNEL" "$tmp.src"
		rm -rf "$tmp"
		mv "$tmp.src" "$tmp"
	fi
	for f in "${missing[@]}"; do
		mkdir -p "$KTREE/.kvmipi-pristine/$(dirname "$f")"
		mv "$tmp/$f" "$KTREE/.kvmipi-pristine/$f"
	done
	rm -rf "$tmp"
}

get_source() {
	local origin
	origin=$(source_origin)
	if [ -f "$KTREE/.kvmipi-origin" ] && [ "$(cat "$KTREE/.kvmipi-origin")" = "$origin" ]; then
		restore_series_files	# after a series check that was killed
		restore_stock		# after a stock build that was killed
		if [ -n "${KSRC:-}" ]; then
			# Pick up the user's edits: our patches out (the
			# files they created too), the tree's files in, and the
			# series applied again below.
			unapply_old 0
			copy_ksrc "$KTREE"
			rm -rf "$KTREE/.kvmipi-applied"
			mark_own_series
		fi
		save_missing_pristine
		return
	fi
	say "preparing kernel source ($origin)"
	rm -rf "$KTREE" "$KOUT_NORMAL" "$KOUT_DEBUG" "$KOUT_NORMAL-stock" "$KOUT_DEBUG-stock" "$KB/stock"
	extract_source "$KTREE"
	[ -z "${KSRC:-}" ] || mark_own_series
	save_pristine
	echo "$origin" >"$KTREE/.kvmipi-origin"
}

# The series' patches to the kernel itself (those that touch a file
# outside tools/; the others are the selftests'); the files they touch:
# patch_files (common.sh).
is_kvm_patch() {
	awk '($1 == "---" || $1 == "+++") && $2 ~ /^[ab]\// && $2 !~ /^[ab]\/tools\// { found = 1 }
	     END { exit !found }' "$1"
}

# A KSRC= tree that has the series already, as a developer's after "git
# am": the stat in KVM's headers, or one of our tests in the KVM
# selftests.  Such a tree is built as it is ($KTREE/.kvmipi-own-series):
# patches of ours already in it are not applied again, and patches/ is
# not regenerated from it (scripts/patches.sh).
mark_own_series() {
	local t own=
	if grep -qs x2apic_icr_fastpath_writes "$KSRC/arch/x86/include/asm/kvm_host.h" \
		"$KSRC/include/linux/kvm_host.h"; then
		own="the stat x2apic_icr_fastpath_writes"
	fi
	for t in "$TOP"/selftests/kvm/x86/*.c; do
		[ -z "$own" ] || break
		[ ! -f "$KSRC/tools/testing/selftests/kvm/$ARCH_DIR/${t##*/}" ] ||
			own="tools/testing/selftests/kvm/$ARCH_DIR/${t##*/}"
	done
	if [ -n "$own" ]; then
		say "KSRC=$KSRC has the series already ($own): building it as it is"
		echo "$own" >"$KTREE/.kvmipi-own-series"
	else
		rm -f "$KTREE/.kvmipi-own-series"
	fi
}

# in_tree PATCH: is the patch in the tree already?  Exactly (it reverses
# cleanly), or in the tree's own version: a kernel patch where the tree has
# the stat, a selftests patch whose new files the tree has.
in_tree() {
	local f
	patch -s -p1 -d "$KTREE" -R --dry-run --force <"$1" >/dev/null 2>&1 && return 0
	if is_kvm_patch "$1"; then
		grep -qs x2apic_icr_fastpath_writes "$KTREE/arch/x86/include/asm/kvm_host.h" \
			"$KTREE/include/linux/kvm_host.h"
		return
	fi
	f=$(awk '$1 == "---" && $2 == "/dev/null" { getline; if ($2 ~ /^b\//) print substr($2, 3) }' "$1")
	[ -n "$f" ] || return 1
	for f in $f; do
		[ -f "$KTREE/$f" ] || return 1
	done
}

# The series applied: the one this checkout's sources render
# (scripts/patches.sh --render, make run's "render"), else the committed
# one (a script run on its own before any make run)
series_source() {
	if [ -f "$RENDERED/series" ]; then
		echo "$RENDERED"
	else
		echo "$PATCHES"
	fi
}

# The patches to apply, in order: the series (series_source), then
# $EXTRA_PATCHES (used by scripts/mutants.sh), as absolute paths.
wanted_patches() {
	local p src
	[ -z "$PRISTINE" ] || return 0
	src=$(series_source)
	while read -r p; do
		[ -f "$src/$p" ] || die "${src#"$TOP"/}/series names $p, which does not exist"
		echo "$src/$p"
	done < <(grep -v -e "^#" -e "^[[:space:]]*$" "$src/series")
	for p in ${EXTRA_PATCHES:-}; do
		[ -f "$p" ] || die "EXTRA_PATCHES names $p, which does not exist"
		echo "$(cd "$(dirname "$p")" && pwd)/${p##*/}"
	done
}

# Reverse what a previous run applied, newest first, down to (not
# including) the first @keep patches.
unapply_old() {
	local applied=$KTREE/.kvmipi-applied keep=${1:-0} p n
	[ -d "$applied" ] || return 0
	n=$(wc -l <"$applied/series")
	for p in $(tac "$applied/series"); do
		[ "$n" -le "$keep" ] && break
		patch -s -p1 -R -d "$KTREE" --no-backup-if-mismatch <"$applied/$p" ||
			die "cannot reverse old patch $p: remove $KTREE and rerun"
		rm -f "$applied/$p"
		n=$((n - 1))
	done
	head -n "$n" "$applied/series" >"$applied/series.new"
	mv "$applied/series.new" "$applied/series"
}

# How many leading patches of @wanted (newline-separated paths) are applied
# already, unchanged?
applied_prefix() {
	local applied=$KTREE/.kvmipi-applied n=0 p name
	[ -f "$applied/series" ] || { echo 0; return; }
	for p in $1; do
		name=$(sed -n "$((n + 1))p" "$applied/series")
		[ "$name" = "${p##*/}" ] && cmp -s "$p" "$applied/$name" || break
		n=$((n + 1))
	done
	echo "$n"
}

# Apply the wanted series, keeping what is already applied of it, so that a
# changed last patch (the selftests) does not touch the kernel's files.
apply_series() {
	local applied=$KTREE/.kvmipi-applied wanted keep n=0 p
	wanted=$(wanted_patches)
	keep=$(applied_prefix "$wanted")
	unapply_old "$keep"
	mkdir -p "$applied"
	touch "$applied/series"
	for p in $wanted; do
		n=$((n + 1))
		[ "$n" -le "$keep" ] && continue
		if ! patch -s -p1 -d "$KTREE" --dry-run --forward <"$p" >"$KB/patch.log" 2>&1 &&
		   [ -f "$KTREE/.kvmipi-own-series" ] && in_tree "$p"; then
			say "in the tree already: ${p##*/}"
			echo "${p##*/}" >>"$applied/in-tree"
			continue
		fi
		if ! patch -s -p1 -d "$KTREE" --dry-run --forward <"$p" >"$KB/patch.log" 2>&1; then
			cat "$KB/patch.log" >&2
			[ ! -f "$KTREE/.kvmipi-own-series" ] ||
				say "KSRC=$KSRC has the series ($(cat "$KTREE/.kvmipi-own-series")), but not as patches/$KERNEL/${p##*/} has it, nor this patch's new files"
			unapply_old 0	# leave the tree pristine
			die "patch ${p##*/} does not apply to $KTREE"
		fi
		patch -s -p1 -d "$KTREE" --forward --no-backup-if-mismatch <"$p"
		cp "$p" "$applied/"
		echo "${p##*/}" >>"$applied/series"
		say "applied ${p##*/}"
	done
}

configure() {
	local stamp=$KOUT/.kvmipi-config
	local want
	want=$(cat "${FRAGMENTS[@]}" "$KTREE/.kvmipi-origin" | md5sum)
	if [ -f "$KOUT/.config" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return
	fi
	say "configuring: tinyconfig$(printf ' + configs/%s' "${FRAGMENTS[@]##*/}")"
	testbed_config "$KTREE" "$KOUT" "${FRAGMENTS[@]}"
	echo "$want" >"$stamp"
}

# the compiler: gcc through ccache where it is there (CCACHE_BASEDIR: hits
# across clones and build directories)
kbuild_cc() {
	if command -v ccache >/dev/null 2>&1; then
		echo "ccache gcc"
	else
		echo gcc
	fi
}

# KVM_MODULE_NAMES: KVM's own modules (the guest loads kvm.ko, then its
# vendor's: guest-init.sh).  The configuration makes what only KVM
# selects a module too (IRQ_BYPASS_MANAGER: irqbypass.ko, which kvm.ko
# needs), and other drivers (x86_pkg_temp_thermal.ko), which no test needs.
KVM_MODULE_NAMES=(kvm kvm-intel kvm-amd)

# module_depends KO: the modules KO needs, its .modinfo's "depends="
module_depends() {
	local tmp
	tmp=$(mktemp)
	objcopy -O binary --only-section=.modinfo "$1" "$tmp"
	tr '\0' '\n' <"$tmp" | sed -n 's/^depends=//p' | tr , '\n' | sed '/^$/d'
	rm -f "$tmp"
}

# pack_kvm_modules OUT CPIO: KVM's modules of OUT's build and every module
# they need (their modules.order entries), without their debugging
# information, as /lib/kvm/*.ko in the initramfs archive CPIO (written
# only where it changes)
pack_kvm_modules() {
	local out=$1 cpio=$2 root=${2%.cpio}.root m d
	local -A path=()
	local want=()
	while read -r m; do
		m=${m%.o}
		m=${m%.ko}.ko
		d=${m##*/}
		d=${d%.ko}
		path[${d//-/_}]=$out/$m
	done <"$out/modules.order"
	for m in "${KVM_MODULE_NAMES[@]}"; do
		[ -f "${path[${m//-/_}]:-/nonexistent}" ] ||
			die "$out/arch/x86/kvm/$m.ko was not built: is KVM a module (configs/testbed.config)?"
		want+=("${m//-/_}")
	done
	rm -rf "$root"
	mkdir -p "$root/lib/kvm"
	while [ ${#want[@]} -gt 0 ]; do
		m=${want[0]}
		want=("${want[@]:1}")
		[ ! -f "$root/lib/kvm/${path[$m]##*/}" ] || continue
		[ -f "${path[$m]:-/nonexistent}" ] || die "KVM needs the module $m, which $out did not build"
		strip --strip-debug -o "$root/lib/kvm/${path[$m]##*/}" "${path[$m]}"
		for d in $(module_depends "${path[$m]}"); do
			want+=("${d//-/_}")
		done
	done
	# the same modules, the same archive: the stock kernel's stamp and a
	# boot reading it see a change only where there is one
	find "$root" -exec touch -h -d @0 {} +
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --reproducible --quiet) >"$cpio.tmp"
	put_file "$cpio.tmp" "$cpio"
	rm -rf "$root" "$cpio.tmp"
}

# put_file SRC DEST: DEST as SRC, written only where it differs, and whole
# (a boot reading DEST meanwhile sees the old file or the new)
put_file() {
	cmp -s "$1" "$2" && return 0
	mkdir -p "$(dirname "$2")"
	cp "$1" "$2.tmp.$$"
	mv -f "$2.tmp.$$" "$2"
}

# What a whole build in $KOUT was built from: the series, the configuration
# and the source.  A build of KVM's modules alone is right only on top of
# the series' own.
series_stamp() {
	local p
	{
		EXTRA_PATCHES='' wanted_patches | while read -r p; do md5sum <"$p"; done
		cat "$KOUT/.kvmipi-config" "$KTREE/.kvmipi-origin"
	} | md5sum
}

# build_modules CC: the modules of the build in $KOUT (its modules.order),
# each as a single .ko target: Kbuild then walks only their directories,
# not the whole tree as "make modules" does (8.5 s with nothing to compile;
# measured, the CPU time of a mutant's build of KVM's modules went from
# 15.9 s to 4.9 s).  The same modules, byte for byte.  Kbuild removes
# modules.order after a single-target build ("not the real one"): it is
# kept and put back.
build_modules() {
	local kos rc=0
	kos=$(sed 's/\.o$/.ko/' "$KOUT/modules.order")
	cp "$KOUT/modules.order" "$KOUT/modules.order.kvmipi"
	# shellcheck disable=SC2086 # one module a word
	env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$KOUT" -j"$JOBS" CC="$1" $kos || rc=$?
	mv -f "$KOUT/modules.order.kvmipi" "$KOUT/modules.order"
	return $rc
}

build() {
	local cc extra=() p
	need_cmd gcc gcc
	need_cmd flex flex
	need_cmd bison bison
	need_cmd bc bc
	need_cmd cpio cpio
	[ -f /usr/include/libelf.h ] || die "libelf.h missing: apt-get install libelf-dev (dnf install elfutils-libelf-devel)"
	cc=$(kbuild_cc)
	export CCACHE_BASEDIR=$BUILD
	for p in ${EXTRA_PATCHES:-}; do
		extra+=("$p")
	done
	if kvm_only "${extra[@]}" && [ -f "$KOUT/arch/x86/boot/bzImage" ] &&
	   [ -f "$KOUT/Module.symvers" ] &&
	   [ "$(cat "$KOUT/.kvmipi-built" 2>/dev/null)" = "$(series_stamp)" ]; then
		# the kernel is the series' own: KVM's modules alone
		say "building KVM's modules ($JOBS jobs, CC=$cc): ${extra[*]##*/} touch KVM alone"
		build_modules "$cc"
	else
		say "building bzImage, KVM's modules and headers ($JOBS jobs, CC=$cc)"
		rm -f "$KOUT/.kvmipi-built"
		env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$KOUT" -j"$JOBS" CC="$cc" bzImage modules
		# patches of KVM's alone leave the kernel the series' own
		if [ ${#extra[@]} -eq 0 ] || kvm_only "${extra[@]}"; then
			series_stamp >"$KOUT/.kvmipi-built"
		fi
	fi
	# a mutant (scripts/mutants.sh) changes no UAPI header: the tests
	# keep the ones they were built against
	[ ${#extra[@]} -gt 0 ] || make -s -C "$KTREE" O="$KOUT" headers >/dev/null
	put_file "$KOUT/arch/x86/boot/bzImage" "$BZIMAGE"
	pack_kvm_modules "$KOUT" "$(kvm_modules_of "$BZIMAGE")"
}

# The coverage kernel: bzImage as configured (gcov's support in it, nothing
# of it profiled), then the modules with GCOV_PROFILE=y: a modules-only make
# compiles no built-in object, so KVM's modules (and what only KVM needs)
# alone carry gcov's counters.  Their .gcno files stay in $KOUT.
build_gcov() {
	local cc
	cc=$(kbuild_cc)
	export CCACHE_BASEDIR=$BUILD
	say "building the coverage kernel and KVM's modules with gcov ($JOBS jobs, CC=$cc)"
	env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$KOUT" -j"$JOBS" CC="$cc" bzImage
	env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$KOUT" -j"$JOBS" CC="$cc" GCOV_PROFILE=y modules
	[ -f "$KOUT/arch/x86/kvm/lapic.gcno" ] ||
		die "$KOUT/arch/x86/kvm/lapic.gcno missing: KVM's modules were not built with gcov"
	put_file "$KOUT/arch/x86/boot/bzImage" "$BZIMAGE"
	pack_kvm_modules "$KOUT" "$(kvm_modules_of "$BZIMAGE")"
}

# The stock kernel: the tree as built above, without the series' KVM
# patches (the selftests ones do not touch the kernel), as kselftest CI has
# it until they are merged.  Cheap: the files those patches touch are put
# in the tree as they were before them, the kernel is built in a copy of
# the build directory (so only what depends on those files is rebuilt,
# ccache hitting after the first time), and the files go back with their
# contents and times, so that make kernel's build sees nothing changed.
# While they are out, $KB/stock/swapped.list names them; a killed build is
# undone by the next make kernel (restore_stock).
STOCK=$KB/stock
restore_stock() {
	local f
	[ -f "$STOCK/swapped.list" ] || return 0
	while IFS= read -r f; do
		if [ -e "$STOCK/patched/$f" ]; then
			cp -p "$STOCK/patched/$f" "$KTREE/$f"
		else
			rm -f "$KTREE/$f"
		fi
	done <"$STOCK/swapped.list"
	rm -f "$STOCK/swapped.list"
}

build_stock() {
	local kvm=() p f want cc
	[ -z "$PRISTINE" ] || die "--stock: a pristine kernel has no series to leave out"
	[ -f "$BZIMAGE" ] || die "--stock: build the kernel first ($BZIMAGE)"
	while read -r p; do
		if is_kvm_patch "$p"; then
			kvm+=("$p")
			! grep -qxF "${p##*/}" "$KTREE/.kvmipi-applied/in-tree" 2>/dev/null ||
				die "--stock: KSRC=$KSRC has ${p##*/} of its own, which cannot be taken out"
		fi
	done < <(wanted_patches)
	[ ${#kvm[@]} -gt 0 ] || die "--stock: patches/$KERNEL/ has no patch to the kernel itself"
	want=$( (md5sum <"$BZIMAGE"; md5sum <"$(kvm_modules_of "$BZIMAGE")"; cat "${kvm[@]}") | md5sum)
	if [ -f "$STOCK_BZIMAGE" ] && [ -f "$(kvm_modules_of "$STOCK_BZIMAGE")" ] &&
	   [ "$(cat "$STOCK/stamp" 2>/dev/null)" = "$want" ]; then
		say "stock kernel up to date: $STOCK_BZIMAGE"
		return
	fi
	restore_stock
	rm -rf "$STOCK"
	mkdir -p "$STOCK/patched" "$STOCK/reversed"
	patch_files "${kvm[@]}" >"$STOCK/files"
	while IFS= read -r f; do
		[ -e "$KTREE/$f" ] || continue
		mkdir -p "$STOCK/patched/$(dirname "$f")" "$STOCK/reversed/$(dirname "$f")"
		cp -p "$KTREE/$f" "$STOCK/patched/$f"
		cp "$KTREE/$f" "$STOCK/reversed/$f"
	done <"$STOCK/files"
	for ((p = ${#kvm[@]} - 1; p >= 0; p--)); do
		patch -s -p1 -R -d "$STOCK/reversed" --no-backup-if-mismatch <"${kvm[p]}" ||
			die "--stock: ${kvm[p]##*/} does not come out of the tree"
	done
	say "stock kernel: without ${kvm[*]##*/}"
	rsync -a --delete "$KOUT/" "$STOCK_OUT/"
	cp "$STOCK/files" "$STOCK/swapped.list"
	trap restore_stock EXIT
	trap 'exit 130' INT TERM HUP
	while IFS= read -r f; do
		if [ -e "$STOCK/reversed/$f" ]; then
			cp "$STOCK/reversed/$f" "$KTREE/$f"
		else
			rm -f "$KTREE/$f"
		fi
	done <"$STOCK/files"
	cc=$(kbuild_cc)
	export CCACHE_BASEDIR=$BUILD
	env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$STOCK_OUT" -j"$JOBS" CC="$cc" bzImage modules
	restore_stock
	trap - EXIT INT TERM HUP
	put_file "$STOCK_OUT/arch/x86/boot/bzImage" "$STOCK_BZIMAGE"
	pack_kvm_modules "$STOCK_OUT" "$(kvm_modules_of "$STOCK_BZIMAGE")"
	echo "$want" >"$STOCK/stamp"
	say "stock kernel ready: $STOCK_BZIMAGE"
}

mkdir -p "$BUILD"
# one at a time in this kernel's tree and build directories: a mutant's
# build, a test tried alone (try.sh), make kernel
kernel_lock
need_cmd rsync rsync
need_cmd patch patch
get_source
[ "${1:-}" = --prepare ] && exit 0
apply_series
if [ "${1:-}" = --headers ]; then
	# the tests' UAPI headers (make headers needs no configuration)
	mkdir -p "$KOUT"
	make -s -C "$KTREE" O="$KOUT" headers >/dev/null
	say "headers ready: $KOUT/usr/include"
	exit 0
fi
configure
if [ "${1:-}" = --gcov ]; then
	build_gcov
else
	build
fi
say "kernel ready: $BZIMAGE"
[ "${1:-}" != --stock ] || build_stock
