#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The in-tree recipe, run as README.md gives it, so that it cannot rot: on a
# scratch git repository of $KERNEL's pristine source (copied from KSRC= or
# unpacked from Debian's tarball, as make kernel does), the lines of README's
# fenced blocks marked "<!-- in-tree: NAME -->", in one shell, in order:
#
#   build   every line, verbatim, but for "P=.../patches/<kernel>", which is
#           pointed at this checkout's patches/$KERNEL; each line one result.
#           Git has no committer identity there (no global or system
#           configuration, none in the environment, none guessed), as in a
#           fresh container: the recipe's "git am" needs the identity it
#           sets itself
#   run     where /dev/kvm is usable, every line, a result each (a "not ok"
#           in its output fails it); else each SKIPs with the reason
#   vng     one skipped result: virtme-ng builds and boots a kernel of its
#           own configuration, which make check does not do
#
# and, after the build, one result for the series' tests being where README
# says (tools/testing/selftests/kvm/$ARCH_DIR/) and installed (kselftest/kvm/,
# where the install puts every test, whatever its directory).
# The compiler goes through ccache where it is installed (its gcc and cc on
# PATH), which leaves the commands as they are.
#
# Prints "ok - ", "ok - ... # SKIP" and "not ok - " lines with "#" detail
# lines, and writes "pass fail skip" to $RESULTS/intree.counts (make check
# runs it per kernel through scripts/each-kernel.sh -c intree).  Under
# $BUILD/$KERNEL/intree: linux/ (the scratch tree, rebuilt every run),
# logs/.
set -uo pipefail
. "$(dirname "$0")/common.sh"
unset DEBUG	# the kernel's tools/ Makefiles read DEBUG=1 as "-O0"

README=$TOP/README.md
W=$KB/intree
LOGS=$W/logs
COUNTS=$RESULTS/intree.counts
pass=0 fail=0 skip=0
result() {	# result pass|fail|skip NAME [LOG]
	case $1 in
	pass) pass=$((pass + 1)); echo "ok - $KERNEL: in-tree: $2" ;;
	skip) skip=$((skip + 1)); echo "ok - $KERNEL: in-tree: $2 # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok - $KERNEL: in-tree: $2"
	   if [ -n "${3:-}" ]; then
		tail -n 15 "$3" | sed 's/^/#   /'
		echo "#   log: $3"
	   fi ;;
	esac
}
finish() {
	mkdir -p "$(dirname "$COUNTS")"
	echo "$pass $fail $skip" >"$COUNTS"
	echo "in-tree recipe on $KERNEL: $pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
	exit
}

# block NAME: the lines of README's fenced block after "<!-- in-tree: NAME",
# comments and blank lines left out
block() {
	awk -v name="$1" '
		index($0, "<!-- in-tree: " name " ") == 1 || $0 == "<!-- in-tree: " name " -->" { armed = 1; next }
		armed && /^```/ { if (inside) exit; inside = 1; next }
		inside && $0 !~ /^[[:space:]]*(#|$)/ { print }' "$README"
}
# what a result is called: the command without its comment
command_of() {
	sed 's/[[:space:]][[:space:]]*#.*$//' <<<"$1"
}

# The result names said in more than one place, and where README says the
# series' tests are: built in the tree, and installed (the install puts
# every test in kselftest/kvm/, whatever its directory)
RECIPE_FOUND="README.md's recipe found"
BUILT_DIR=tools/testing/selftests/kvm/$ARCH_DIR
INSTALLED_DIR=kselftest/kvm
TESTS_WHERE="the series' tests built in $BUILT_DIR/, installed in $INSTALLED_DIR/"

rm -rf "$W"
mkdir -p "$LOGS"
build_lines=$(block build)
run_lines=$(block run)
vng_lines=$(block vng)
if [ -z "$build_lines" ] || [ -z "$run_lines" ]; then
	echo "README.md has no in-tree build or run block" >"$LOGS/readme.log"
	result fail "$RECIPE_FOUND" "$LOGS/readme.log"
	finish
fi
# The series directory: the one line adapted to this checkout.
n=$(grep -cE '^P=[^[:space:]]*/patches/[0-9]+\.[0-9]+([[:space:]]|$)' <<<"$build_lines")
if [ "$n" -ne 1 ]; then
	echo "README.md's build block needs one line 'P=/path/to/.../patches/<kernel>', has $n" >"$LOGS/readme.log"
	result fail "$RECIPE_FOUND" "$LOGS/readme.log"
	finish
fi
build_lines=$(sed -E "s#^P=[^[:space:]]*/patches/[0-9]+\.[0-9]+#P=$TOP/patches/$KERNEL#" <<<"$build_lines")

# The scratch repository: the pristine tree, committed whole, as a clone of
# Linux would be (-f: Debian's top-level .gitignore ignores everything).
# Its ~90,000 objects are stored uncompressed, and git am's automatic gc,
# which would pack them all meanwhile, is off: a scratch repository needs
# neither.
say "in-tree: the pristine $KERNEL source, committed as a git repository ($W/linux)"
start=$SECONDS
if ! (extract_source "$W/linux" &&
      cd "$W/linux" && git init -q &&
      git config core.looseCompression 0 && git config gc.auto 0 &&
      git config maintenance.auto false && git add -A -f &&
      git -c user.name=intree -c user.email=intree@localhost commit -q -m "Linux $KERNEL") \
	>"$LOGS/source.log" 2>&1; then
	result fail "the pristine $KERNEL source as a git repository" "$LOGS/source.log"
	finish
fi
say "in-tree: source ready in $((SECONDS - start)) s"

# The build block, one line after the other in one shell, from the
# directory that holds linux/; the first that fails leaves the rest skipped.
# The commands see what a user's shell has, not the test bed's settings
# (the Makefile's export line, and KERNEL).
export -n APICV BOCHS BUILD DEBUG KSRC KERNEL KERNELS LOAD MUTANT MUTANT_PLATFORMS PLATFORMS \
	QEMU RESULTS TEST_TIMEOUT 2>/dev/null
[ ! -d /usr/lib/ccache ] || export PATH=/usr/lib/ccache:$PATH CCACHE_BASEDIR=$W
# Git as in a fresh container: no identity from this machine's
# configuration or the environment, and none guessed from the host name
# (user.useConfigOnly), so that a recipe that commits (git am) without
# setting one fails here as it would there.
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL EMAIL
printf '[user]\n\tuseConfigOnly = true\n' >"$W/gitconfig"
export GIT_CONFIG_GLOBAL=$W/gitconfig GIT_CONFIG_NOSYSTEM=1
if (cd "$W/linux" && git var GIT_COMMITTER_IDENT) >"$LOGS/identity.log" 2>&1; then
	echo "git found a committer identity before the recipe ran" >>"$LOGS/identity.log"
	result fail "no git identity but the recipe's own (as in a fresh container)" "$LOGS/identity.log"
else
	result pass "no git identity but the recipe's own (as in a fresh container)"
fi
cd "$W"
i=0 failed=
while IFS= read -r line; do
	i=$((i + 1))
	name=$(command_of "$line")
	if [ -n "$failed" ]; then
		result skip "$name (after: $failed)"
		continue
	fi
	start=$SECONDS
	if eval "$line" </dev/null >"$LOGS/build-$i.log" 2>&1; then
		# "cd linux" and "P=..." set the scene; the rest are results
		[[ $name =~ ^(cd[[:space:]]|[A-Za-z_][A-Za-z0-9_]*=) ]] && continue
		result pass "$name"
		echo "#   $((SECONDS - start)) s"
	else
		result fail "$name" "$LOGS/build-$i.log"
		failed=$name
	fi
done <<<"$build_lines"
dir=$(pwd)	# where the block left its shell: the tree
cd "$W"

# The series' tests where README says they are.
if [ -z "$failed" ]; then
	missing=
	for t in "$TOP"/selftests/kvm/x86/*.c; do
		t=$(basename "$t" .c)
		for f in "$BUILT_DIR/$t" "$INSTALLED_DIR/$t"; do
			[ -x "$dir/$f" ] || missing="$missing $f"
		done
	done
	echo "missing:$missing" >"$LOGS/binaries.log"
	if [ -z "$missing" ]; then
		result pass "$TESTS_WHERE"
	else
		result fail "$TESTS_WHERE" "$LOGS/binaries.log"
	fi
fi

# The run block needs the patched kernel running with KVM.
why=
if [ -n "$failed" ]; then
	why="the build did not complete"
elif ! host_has_kvm; then
	why="no /dev/kvm here: make run boots the same tests on the patched kernel under emulators"
elif [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
	why="/dev/kvm is not readable and writable for $(id -un)"
fi
i=0
while IFS= read -r line; do
	i=$((i + 1))
	name=$(command_of "$line")
	if [ -n "$why" ]; then
		result skip "$name ($why)"
		continue
	fi
	(cd "$dir" && eval "$line") </dev/null >"$LOGS/run-$i.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q '^not ok' "$LOGS/run-$i.log"; then
		result pass "$name"
	else
		echo "exit status $rc" >>"$LOGS/run-$i.log"
		result fail "$name" "$LOGS/run-$i.log"
	fi
done <<<"$run_lines"

[ -z "$vng_lines" ] ||
	result skip "virtme-ng lines (vng builds and boots a kernel of its own configuration: not run here)"
finish
