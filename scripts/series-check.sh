#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove the series bisectable on a real tree: in a git repository of the
# whole pristine $KERNEL tree (Debian's linux-source-$KERNEL, or KSRC=, as
# for make kernel), "git am" each patch of patches/$KERNEL/series in order and, after
# each one, build what it touches with tinyconfig + configs/testbed.config:
#
#   a patch outside tools/      vmlinux (incremental: what the patch changed
#                               and everything that depends on it), and
#                               arch/x86/kvm/ with W=1 in a second O= dir
#   a patch to the KVM selftests, the UAPI or the tools headers
#                               make headers, then the tree's own
#                               make -C tools/testing/selftests TARGETS=kvm
#
# A build fails on a compiler or linker warning too: the unpatched tree
# builds warning-free with this configuration, and so does arch/x86/kvm/,
# the kernel patches' directory, with W=1 (not tried elsewhere: noise).
#
# Prints one line per check, "ok - NAME", "ok - NAME # SKIP" or "not ok -
# NAME" followed by "#" lines (the end of the log and its path), which
# scripts/unit.sh counts; exits non-zero on any failure.
#
# Under $BUILD/$KERNEL/series: linux/ (the repository, base commit tagged "base"),
# kbuild/ and kbuild-w1/ (O=), kselftest/ (selftests O=), logs/.  Reruns reuse all of it:
# resetting to the base rewrites only the files the series touches, so only
# those and what depends on them are rebuilt (through ccache, too).
set -euo pipefail
. "$(dirname "$0")/common.sh"
unset DEBUG	# the kernel's tools/ Makefiles read DEBUG=1 as "-O0"; this checks the series as is

SERIES=$KB/series
REPO=$SERIES/linux
SOUT=$SERIES/kbuild
SOUT_W1=$SERIES/kbuild-w1	# the same configuration, for W=1 arch/x86/kvm/
KSOUT=$SERIES/kselftest
LOGS=$SERIES/logs
# No automatic gc or maintenance: after the first commit the repository
# holds ~100,000 loose objects, and "git am" would pack them all in the
# background (about 300 MB, delta-compressed) while the builds run; seen
# in session 13's fresh clone.  The repository is scratch.
GIT=(git -C "$REPO" -c user.name=series-check -c user.email=series-check@localhost
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

# Make $REPO a repository of the pristine tree from $origin, tagged "base".
create_repo() {
	local origin=$1 ver
	say "series: creating a git repository of the whole tree ($origin)"
	rm -rf "$SERIES"
	mkdir -p "$SERIES"
	extract_source "$REPO"
	ver=$(make -s -C "$REPO" kernelversion)
	# -f: Debian's top-level .gitignore ignores everything but debian/;
	# the repository must hold every file of the tree.
	git -C "$REPO" init -q
	# Loose objects uncompressed: adding ~90,000 files takes a fraction
	# of the time (the repository is scratch, never pushed).
	git -C "$REPO" -c core.looseCompression=0 add -A -f
	GIT_AUTHOR_DATE="2024-11-17T00:00:00+0000" GIT_COMMITTER_DATE="2024-11-17T00:00:00+0000" \
		"${GIT[@]}" commit -q -m "Linux $ver ($origin)"
	"${GIT[@]}" tag base
	echo "$origin" >"$SERIES/origin"
}

# Untracked files, ignored ones included: none in a pristine tree.
tree_status() {
	git -C "$REPO" status --porcelain --ignored --untracked-files=all
}

# Bring $REPO back to the pristine base, or create it.
prepare_repo() {
	local origin
	origin=$(source_origin)
	if [ -f "$SERIES/origin" ] && [ "$(cat "$SERIES/origin")" = "$origin" ] &&
	   git -C "$REPO" rev-parse -q --verify base >/dev/null 2>&1; then
		if [ -d "$REPO/.git/rebase-apply" ]; then
			"${GIT[@]}" am --abort >/dev/null 2>&1 || true
		fi
		"${GIT[@]}" checkout -q --detach base
		"${GIT[@]}" reset -q --hard base
		"${GIT[@]}" clean -q -ffdx
		if [ -n "${KSRC:-}" ]; then
			# KSRC changed since the base was made: start again
			# from it (and from a clean build).
			rsync -a --delete --exclude=.git "$KSRC/" "$REPO/"
			if [ -n "$(tree_status)" ]; then
				create_repo "$origin"
				return
			fi
		fi
		[ -z "$(tree_status)" ] && return
		say "series: $REPO is not pristine, creating it again"
	fi
	create_repo "$origin"
}

configure() {
	local want
	want=$(cat "$FRAGMENT" "$SERIES/origin" | md5sum)
	if [ -f "$SOUT/.config" ] && [ "$(cat "$SOUT/.kvmipi-config" 2>/dev/null)" = "$want" ]; then
		return
	fi
	say "series: configuring: tinyconfig + configs/testbed.config"
	rm -rf "$SOUT" "$SOUT_W1" "$KSOUT"
	testbed_config "$REPO" "$SOUT"
	mkdir -p "$SOUT_W1"
	cp "$SOUT/.config" "$SOUT_W1/.config"
	make -s -C "$REPO" O="$SOUT_W1" olddefconfig >/dev/null
	echo "$want" >"$SOUT/.kvmipi-config"
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

build_kernel() {
	env "${KBUILD_ENV[@]}" make -s -C "$REPO" O="$SOUT" -j"$JOBS" CC="$CC" vmlinux &&
	make -s -C "$REPO" O="$SOUT_W1" -j"$JOBS" CC="$CC" W=1 arch/x86/kvm/
}

build_selftests() {
	make -s -C "$REPO" O="$SOUT" headers &&
	make -s -C "$REPO/tools/testing/selftests" -j"$JOBS" TARGETS=kvm \
		O="$KSOUT" CC="$CC" KHDR_INCLUDES="-isystem $SOUT/usr/include" \
		LDFLAGS="-static -pthread -no-pie"
}

need_cmd git git
need_cmd rsync rsync
need_cmd gcc gcc
need_cmd flex flex
need_cmd bison bison
need_cmd bc bc
[ -f /usr/include/libelf.h ] || die "libelf.h missing: apt-get install libelf-dev"
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || die "static libc missing: apt-get install libc6-dev"
CC=gcc
if command -v ccache >/dev/null 2>&1; then
	CC="ccache gcc"
	# $KB/series/{linux,kbuild} are laid out like $KB/{linux,kbuild}:
	# the same relative paths, so make kernel's objects are hits too.
	export CCACHE_BASEDIR=$BUILD
fi

mkdir -p "$BUILD"
prepare_repo
configure
rm -rf "$LOGS"
mkdir -p "$LOGS"
ver=$(make -s -C "$REPO" kernelversion)

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

	files=$("${GIT[@]}" diff --name-only HEAD~1 HEAD)
	targets=""
	grep -qv '^tools/' <<<"$files" && targets="vmlinux, W=1 arch/x86/kvm/"
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
	if [[ $targets == vmlinux* ]] && ! built_clean "$log.kernel" build_kernel; then
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
done 3< <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series")

[ "$failed" -eq 0 ] || die "the series is not bisectable (logs: $LOGS)"
