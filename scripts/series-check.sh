#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove the series bisectable: each patch of patches/$KERNEL/series, in
# order, applies with "git am" and the tree builds after it, with
# tinyconfig + configs/testbed.config:
#
#   a patch outside tools/      vmlinux and modules, then with W=1 the KVM
#                               objects it changes (w1_objects, below)
#   a patch to the KVM selftests, the UAPI or the tools headers
#                               make headers, then the tree's own
#                               make -C tools/testing/selftests TARGETS=kvm
#                               with its own flags (dynamically linked, as
#                               a developer's tree builds them)
#
# Then each regression series as posted alone (build/$KERNEL/post/, made on
# the core and on what it needs only): it applies with git am on the
# release, the core and what it needs, and the x2APIC tests build there.
#
# A build fails on a compiler or linker warning too: the unpatched tree
# builds warning-free with this configuration, and so does arch/x86/kvm/,
# the kernel patches' directory, with W=1 (not tried elsewhere: noise).
# With W=1 each kernel patch's own files are compiled again, in make
# kernel's build directory on top of its objects: each KVM .c file the
# patch touches, and for a header it touches, one KVM object that includes
# it (its .cmd file says which), if none of those does already; a W=1
# warning about a header shows in any file that includes it.  make rebuilds
# those objects with the build's own flags next time (their command line
# changed), from ccache.  (A second build directory with W=1 compiled all
# of KVM twice, and on a new machine from an empty ccache: 170 to 200 s
# for each kernel.)
#
# "git am" runs in a repository of only the files the series touches, their
# pristine copies (kernel.sh keeps them) committed as "base": git applies a
# patch to the files it names and to nothing else, so this is what git am
# does on the whole tree.  (A patch that creates a file the tree already has
# does not apply with patch(1) either: make kernel stops on it.)
#
# The builds use make kernel's own tree and build directory ($KTREE, $KOUT)
# and a selftests build directory of their own ($SERIES/kselftest-build; the
# test bed's static build for its initramfs stays as it is): after each
# patch, the files the series touches are written as they are at that
# patch, and make rebuilds what they changed and what depends on them,
# nothing else.  The tree's
# copies with the whole series are kept in $KB/series/final and put back when
# this ends, however it ends (restore_series_files, which kernel.sh also
# runs after a killed check).  The tree is busy meanwhile: no make kernel,
# make tests or make mutants of the same kernel at the same time.
#
# Prints one line per check, "ok - NAME", "ok - NAME # SKIP" or "not ok -
# NAME" followed by "#" lines (the end of the log and its path), which
# scripts/unit.sh counts; exits non-zero on any failure.
#
# Under $BUILD/$KERNEL/series: am/ (the repository),
# kselftest-build/ (O= of the selftests), final/ and final.list (the whole
# series' copies, while running), logs/.
set -euo pipefail
. "$(dirname "$0")/common.sh"
unset DEBUG	# the kernel's tools/ Makefiles read DEBUG=1 as "-O0"; this checks the series as is

SERIES=$KB/series
AM=$SERIES/am
SELFTESTS_OUT=$SERIES/kselftest-build
LOGS=$SERIES/logs
GIT=(git -C "$AM" -c user.name=series-check -c user.email=series-check@localhost
     -c advice.detachedHead=false -c gc.auto=0 -c maintenance.auto=false)

failed=0
ok() { echo "ok - $*"; }
skip() { echo "ok - $* # SKIP"; }
not_ok() {	# not_ok NAME LOG
	failed=1
	echo "not ok - $1"
	# the first errors and warnings, or the log's end when there are none
	if grep -qE '(error|warning):' "$2"; then
		grep -E -m 10 '(error|warning):' "$2"
	else
		tail -n 20 "$2"
	fi | sed 's/^/#   /'
	echo "#   log: $2"
}

# Every file a patch of the series names, in either of its "---" / "+++"
# lines.
touched_files() {
	local p
	for p in $(series_patches); do
		cat "$p"
	done | awk '($1 == "---" || $1 == "+++") && $2 ~ /^[ab]\// { print substr($2, 3) }' | sort -u
}

# The repository of the touched files' pristine copies, tagged "base".
create_am_repo() {
	local f
	rm -rf "$AM"
	mkdir -p "$AM"
	while IFS= read -r f; do
		[ -f "$KTREE/.kvmipi-pristine/$f" ] || continue	# the series creates it
		mkdir -p "$AM/$(dirname "$f")"
		cp "$KTREE/.kvmipi-pristine/$f" "$AM/$f"
	done <"$SERIES/touched"
	git -C "$AM" init -q
	git -C "$AM" add -A -f
	GIT_AUTHOR_DATE="2024-11-17T00:00:00+0000" GIT_COMMITTER_DATE="2024-11-17T00:00:00+0000" \
		"${GIT[@]}" commit -q --allow-empty -m "Linux $ver: the files the series touches"
	"${GIT[@]}" tag base
}

# Keep the tree's copies of the touched files, the whole series' state,
# for restore_series_files; final.list, written last, marks them complete.
save_final() {
	local f
	rm -rf "$SERIES/final" "$SERIES/final.list"
	mkdir -p "$SERIES/final"
	while IFS= read -r f; do
		[ -f "$KTREE/$f" ] || continue
		mkdir -p "$SERIES/final/$(dirname "$f")"
		cp -p "$KTREE/$f" "$SERIES/final/$f"
	done <"$SERIES/touched"
	cp "$SERIES/touched" "$SERIES/final.list.tmp"
	mv "$SERIES/final.list.tmp" "$SERIES/final.list"
}

# Write into the tree the touched files as the repository has them after
# the last "git am": a changed file gets a new mtime, so make rebuilds it.
write_state() {
	copy_into_tree "$AM" "$SERIES/touched"
}

# w1_objects FILE...: the KVM objects to compile with W=1 for a patch
# that touches FILEs (paths in the tree): each arch/x86/kvm/ .c file's
# object, then for each header one object of arch/x86/kvm/ whose
# dependencies (its .cmd file, from the build before) name it, unless one
# chosen already does.  A header no KVM object includes adds none.
w1_objects() {
	local f re objs=() o cmd dir=$KOUT/arch/x86/kvm
	for f in "$@"; do
		case $f in
		arch/x86/kvm/*.c) objs+=("${f%.c}.o") ;;
		esac
	done
	for f in "$@"; do
		case $f in *.h) ;; *) continue ;; esac
		# a dependency line of a .cmd file: "  ../linux/PATH \"
		re="/${f//./\\.}( |\$)"
		cmd=
		for o in "${objs[@]}"; do
			grep -qsE "$re" "$KOUT/$(dirname "$o")/.$(basename "$o").cmd" && { cmd=$o; break; }
		done
		[ -z "$cmd" ] || continue
		cmd=$(grep -lsE "$re" "$dir"/.*.o.cmd "$dir"/*/.*.o.cmd | grep -v '\.mod\.o\.cmd$' | head -n 1)
		[ -z "$cmd" ] || objs+=("$(dirname "${cmd#"$KOUT"/}")/$(basename "$cmd" .cmd | sed 's/^\.//')")
	done
	[ ${#objs[@]} -eq 0 ] || printf '%s\n' "${objs[@]}" | sort -u
}

# make's exit status, then no "warning:" in the log.  ccache replays a
# cached compiler's warnings, so a rebuilt file reports them every time.
built_clean() {
	local log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		return 1
	fi
	if grep -q 'warning:' "$log"; then
		echo "series-check: the build above has warnings" >>"$log"
		return 1
	fi
}

build_kernel() {	# build_kernel FILE...: the files the patch touches
	local objs
	env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$KOUT" -j"$JOBS" CC="$CC" vmlinux modules || return
	objs=$(w1_objects "$@")
	[ -n "$objs" ] || return 0
	echo "W=1:" $objs
	# shellcheck disable=SC2086 # one object a word
	env "${KBUILD_ENV[@]}" make -s -C "$KTREE" O="$KOUT" -j"$JOBS" CC="$CC" W=1 $objs
}

# The tree's Makefile with nothing of the test bed's but the compiler and
# the UAPI headers: the binaries link dynamically, as the tree's default has
# it, each in about 40% of the time of a static link.
build_selftests() {
	make -s -C "$KTREE" O="$KOUT" headers &&
	make -s -C "$KTREE/tools/testing/selftests" -j"$JOBS" TARGETS=kvm \
		O="$SELFTESTS_OUT" CC="$CC" KHDR_INCLUDES="-isystem $KOUT/usr/include"
}

need_cmd git git
need_cmd gcc gcc
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || die "static libc missing: apt-get install libc6-dev"
unset PRISTINE
KOUT=$KOUT_NORMAL	# make kernel's, whatever DEBUG said
CC=gcc
if command -v ccache >/dev/null 2>&1; then
	CC="ccache gcc"
	export CCACHE_BASEDIR=$BUILD	# as kernel.sh: hits across clones
fi

mkdir -p "$SERIES"
# an older series check kept a whole second tree and its builds here, and
# a W=1 build directory
rm -rf "$SERIES/linux" "$SERIES/kbuild" "$SERIES/kselftest" "$SERIES/origin" "$SERIES/kbuild-w1"
rm -rf "$LOGS"
mkdir -p "$LOGS"
# make kernel's tree with the whole series and nothing else (a mutant's
# patch is taken off), configured and built: what the check starts from
say "series: make kernel (the check reuses its tree and builds)"
if ! DEBUG= EXTRA_PATCHES= BZIMAGE= "$TOP/scripts/kernel.sh" >"$LOGS/kernel.log" 2>&1; then
	not_ok "series: the tree builds with the whole series (make kernel)" "$LOGS/kernel.log"
	die "make kernel failed (log: $LOGS/kernel.log)"
fi
touched_files >"$SERIES/touched"
ver=$(make -s -C "$KTREE" kernelversion)
create_am_repo
save_final
trap restore_series_files EXIT

broken=""
while read -r p <&3; do
	name=${p%.patch}
	mkdir -p "$(dirname "$LOGS/$name")"
	[ -f "$PATCHES/$p" ] || die "patches/$KERNEL/series names $p, which does not exist"
	applies="series: $name applies with git am on $ver"
	if [ -n "$broken" ]; then
		skip "$applies (after $broken)"
		skip "series: $name builds on its own (after $broken)"
		continue
	fi
	if ! "${GIT[@]}" am -q "$PATCHES/$p" >"$LOGS/$name.am.log" 2>&1; then
		not_ok "$applies" "$LOGS/$name.am.log"
		"${GIT[@]}" am --abort >/dev/null 2>&1 || true
		broken=$name
		skip "series: $name builds on its own (does not apply)"
		continue
	fi
	ok "$applies"
	write_state

	files=$("${GIT[@]}" diff --name-only HEAD~1 HEAD)
	targets=""
	grep -qv '^tools/' <<<"$files" && targets="vmlinux modules, W=1 its KVM objects"
	grep -qE '^(tools/|include/uapi/|arch/x86/include/uapi/)' <<<"$files" &&
		targets="${targets:+$targets, }KVM selftests"
	built="series: $name builds on its own${targets:+ ($targets)}"
	log=$LOGS/$name.build.log
	if [ -z "$targets" ]; then
		skip "$built (nothing to build)"
		continue
	fi
	say "series: building $name: $targets"
	: >"$log"
	status=pass
	# shellcheck disable=SC2046 # one file a word
	if [[ $targets == vmlinux* ]] && ! built_clean "$log.kernel" build_kernel $(grep -v '^tools/' <<<"$files"); then
		status=fail
	fi
	[ -f "$log.kernel" ] && cat "$log.kernel" >>"$log" && rm -f "$log.kernel"
	if [ $status = pass ] && [[ $targets == *selftests ]] &&
	   ! built_clean "$log.selftests" build_selftests; then
		status=fail
	fi
	[ -f "$log.selftests" ] && cat "$log.selftests" >>"$log" && rm -f "$log.selftests"
	if [ $status = pass ]; then
		ok "$built"
	else
		not_ok "$built" "$log"
	fi
done 3< <([ -n "${POSTED_ONLY:-}" ] || grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series")

# (POSTED_ONLY=1, for a quick look while developing: only these, not the
# chain above.)
# Each regression series as it is posted alone (build/$KERNEL/post/, which
# make patches writes, made on the core, or on the release itself, and on
# what the series needs): its "series" file (the core unless made on the
# release, what it needs, then its own patches) applies with
# git am on $ver, and then the tree's KVM selftests of the x2APIC tests
# build, each test that the state has (make's targets, with the tree's own
# flags: the library too, as far as they use it).  Its KVM patches are the
# ones checked above, each built after it.
POST=$KB/post
for d in "$POST"/regression/*/; do
	[ -f "$d/series" ] || continue
	name=${d%/}
	name=regression/${name##*/}
	# posted on the release itself, or on the core ("=== ... alone")
	if grep -q / "$d/series" && ! grep -qv / "$d/series"; then
		applies="series: $name, as posted alone, applies with git am on $ver itself and what it needs, without the core"
		built="series: $name, as posted alone, builds its tests on $ver without the core"
	else
		applies="series: $name, as posted alone, applies with git am on $ver, the core and what it needs"
		built="series: $name, as posted alone, builds its tests and the core's"
	fi
	if [ -n "$broken" ]; then
		skip "$applies (after $broken)"
		skip "$built (after $broken)"
		continue
	fi
	log=$LOGS/posted/${name#regression/}
	mkdir -p "$(dirname "$log")"
	"${GIT[@]}" checkout -q -f --detach base
	status=pass
	while read -r p; do
		if ! "${GIT[@]}" am -q "$POST/$p" >>"$log.am.log" 2>&1; then
			"${GIT[@]}" am --abort >/dev/null 2>&1 || true
			status=fail
			break
		fi
	done <"$d/series"
	if [ $status = fail ]; then
		not_ok "$applies" "$log.am.log"
		skip "$built (does not apply)"
		continue
	fi
	ok "$applies"
	write_state
	targets=$(cd "$AM/tools/testing/selftests/kvm/$ARCH_DIR" && ls x2apic_*.c |
		sed "s#^\(.*\)\.c\$#$SELFTESTS_OUT/kselftest/kvm/$ARCH_DIR/\1#")
	say "series: building $name as posted alone"
	# shellcheck disable=SC2086 # one target a word
	if built_clean "$log.build.log" make -s -C "$KTREE/tools/testing/selftests/kvm" -j"$JOBS" \
		OUTPUT="$SELFTESTS_OUT/kselftest/kvm" CC="$CC" KHDR_INCLUDES="-isystem $KOUT/usr/include" \
		$targets; then
		ok "$built"
	else
		not_ok "$built" "$log.build.log"
	fi
done

[ "$failed" -eq 0 ] || die "the series is not bisectable, or one posted alone does not build (logs: $LOGS)"
