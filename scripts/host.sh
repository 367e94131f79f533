#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host platform: run the suite (scripts/suite.sh) on the running
# kernel's KVM and write OUT/console.log as the emulated platforms do, the
# suite's lines prefixed "@@ ", then the kernel's log since this run began,
# unprefixed, which scripts/report.awk checks for splats; OUT/tests.list is
# the list that ran, OUT/wall_seconds its time.
#
# - It runs as the invoking user.  Without root, what needs root (the
#   switch, debugfs) skips with its reason, the list's "@nonroot" runs
#   would repeat the others and are left out, and a kernel log that cannot
#   be read (kernel.dmesg_restrict) makes the log check SKIP, saying why.
#   As root, the "@nonroot" runs run as the user who ran sudo (else nobody),
#   with the group of /dev/kvm, from a private copy of the tests.
# - It leaves the host as found.  kvm.x2apic_icr_fastpath is written only
#   when FASTPATH_SWITCH=1 asks for the tests' -d runs (each turns the
#   fastpath off host-wide for a while); otherwise their -d is dropped.
#   After a test killed by its timeout the suite puts the switch back, and
#   so does this script when it is stopped (INT, TERM, HUP) or ends.
# - One run at a time on the machine (a lock, waited for at most
#   HOST_LOCK_WAIT seconds), its scratch files in a directory of its own,
#   the whole run bounded by HOST_LIMIT seconds.
#
# usage: host.sh TESTS_DIR LIST OUT
# For the unit tests: KVMIPI_SWITCH (the switch's path), KVMIPI_DMESG (the
# kernel log command), KVMIPI_HOST_LOCK (the lock), and platforms.sh's
# KVMIPI_KVM_DEV, KVMIPI_CPUINFO.
set -euo pipefail
. "$(dirname "$0")/common.sh"

dir=$1
list=$2
out=$3
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
limit=${HOST_LIMIT:-1800}
switch=${KVMIPI_SWITCH:-/sys/module/kvm/parameters/x2apic_icr_fastpath}
dmesg_cmd=${KVMIPI_DMESG:-dmesg}
lock=${KVMIPI_HOST_LOCK:-/tmp/kvmipi-host.lock}
console=$out/console.log

why=$(kvm_problem)
[ -z "$why" ] || die "PLATFORMS=host: $why"
[ -f "$list" ] || die "no test list $list: run 'make tests'"
mkdir -p "$out"
rm -f "$console" "$out/tests.list" "$out/wall_seconds"

# One run at a time: the switch and the kernel log are the machine's.  The
# lock is opened for reading, which flock needs no more than, so that
# another user's run can take it too.
[ -e "$lock" ] || (umask 0; : >>"$lock") 2>/dev/null || true
exec 7<"$lock" || die "cannot open the lock $lock"
flock -w "${HOST_LOCK_WAIT:-60}" 7 ||
	die "another run of PLATFORMS=host holds $lock: this machine's KVM runs one suite at a time"

work=$(mktemp -d "${TMPDIR:-/tmp}/kvmipi-host.XXXXXX")
suite_pid= limit_pid=
switch_found=$(cat "$switch" 2>/dev/null || true)

# put_switch_back: the switch as this run found it
put_switch_back() {
	local now
	[ -n "$switch_found" ] || return 0
	now=$(cat "$switch" 2>/dev/null) || return 0
	[ "$now" != "$switch_found" ] || return 0
	if echo "$switch_found" 2>/dev/null >"$switch"; then
		echo "@@ # kvm.x2apic_icr_fastpath was $now: put back to $switch_found" >>"$console"
	else
		echo "@@ # kvm.x2apic_icr_fastpath was $now and cannot be put back to $switch_found" >>"$console"
		printf 'warning: kvm.x2apic_icr_fastpath is %s, and was %s: put it back (as root: echo %s >%s)\n' \
			"$now" "$switch_found" "$switch_found" "$switch" >&2
	fi
}

# stop_suite SIGNAL...: each signal in turn, a second apart, to every
# process of the suite's session (timeout(1) puts each test in a process
# group of its own, but not in a session of its own)
stop_suite() {
	local sig pids
	for sig in "$@"; do
		pids=$(ps -eo pid=,sid= | awk -v s="$suite_pid" '$2 == s { print $1 }')
		[ -n "$pids" ] || break
		# shellcheck disable=SC2086 # one word per process
		kill -"$sig" $pids 2>/dev/null || true
		[ "$sig" = KILL ] || sleep 1
	done
	wait "$suite_pid" 2>/dev/null || true
	suite_pid=
}

cleanup() {
	[ -z "$suite_pid" ] || stop_suite TERM KILL
	[ -z "$limit_pid" ] || kill "$limit_pid" 2>/dev/null || true
	put_switch_back
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "@@ TIMEOUT the run was stopped" >>"$console"; exit 130' INT TERM HUP

# The list as it runs here: the -d runs only when asked; "@nonroot" runs
# only as root (without root, every run is one).
{
	if [ "${FASTPATH_SWITCH:-}" = 1 ]; then
		cat "$list"
	else
		sed -E 's/ -d( |$)/\1/' "$list"
	fi
} | if [ "$(id -u)" -eq 0 ]; then cat; else grep -v ' @nonroot$' || true; fi >"$out/tests.list"

# As root, a private copy of what the list runs, readable by the user the
# "@nonroot" runs become (the build directory may not be), and the command
# that drops root for them.
tests=$dir
if [ "$(id -u)" -eq 0 ]; then
	tests=$work/tests
	mkdir -p "$tests/kvm"
	chmod 0711 "$work"
	while read -r t _; do
		mkdir -p "$tests/$(dirname "$t")"
		cp "$dir/$t" "$tests/$t"
	done <"$out/tests.list"
	if grep -q '^kselftest-run.sh' "$out/tests.list"; then
		cp -r "$dir/run_kselftest.sh" "$dir/kselftest" "$dir/kselftest-list.txt" "$tests/"
		cp "$dir/kvm/settings" "$tests/kvm/"
		for t in $(grep '^kselftest-run.sh' "$out/tests.list" | grep -o 'kvm:[a-z0-9_]*'); do
			cp "$dir/kvm/${t#kvm:}" "$tests/kvm/"
		done
	fi
	chmod -R a+rX "$tests"
	uid=${SUDO_UID:-0} gid=${SUDO_GID:-0}
	[ "$uid" -ne 0 ] || { uid=65534 gid=65534; }
	# /dev/kvm's group, as a member of the kvm group has it (not root's)
	groups=--clear-groups
	[ "$(stat -c %g "$KVM_DEV")" -eq 0 ] || groups=--groups=$(stat -c %g "$KVM_DEV")
	export NONROOT_CMD="setpriv --reuid=$uid --regid=$gid $groups --inh-caps=-all --"
fi

# The kernel log: the time stamp of its last line now; at the end, the
# lines after it.
klog_start=
if ! "$dmesg_cmd" >"$work/dmesg" 2>"$work/dmesg.err"; then
	echo "@@ KERNEL-LOG unreadable: cannot read the kernel log as $(id -un) ($(head -1 "$work/dmesg.err"); kernel.dmesg_restrict=$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null || echo '?')): run as root, or allow it (sudo sysctl kernel.dmesg_restrict=0)" >>"$console"
else
	klog_start=$(sed -n 's/^\[ *\([0-9]*\.[0-9]*\)\].*/\1/p' "$work/dmesg" | tail -1)
	klog_start=${klog_start:--1}
fi

export TMPDIR=$work KVMIPI_SWITCH=$switch
start=$SECONDS
# in a process group of its own, which a stop ends whole
setsid sh -c 'sh "$0" "$@" 2>&1 | sed -u "s/^/@@ /"' "$TOP/scripts/suite.sh" \
	"$tests" "$TEST_TIMEOUT" "$out/tests.list" >>"$console" </dev/null 7<&- &
suite_pid=$!
# the run's limit: whichever ends first
sleep "$limit" &
limit_pid=$!
wait -n "$suite_pid" "$limit_pid" || true
if kill -0 "$suite_pid" 2>/dev/null; then
	echo "@@ TIMEOUT platform limit of ${limit}s reached" >>"$console"
	stop_suite KILL
fi
kill "$limit_pid" 2>/dev/null || true
wait "$suite_pid" "$limit_pid" 2>/dev/null || true
suite_pid=
put_switch_back

if [ -n "$klog_start" ]; then
	"$dmesg_cmd" 2>/dev/null | awk -v t0="$klog_start" '
		match($0, /^\[ *[0-9]+\.[0-9]+\]/) {
			ts = substr($0, 2, RLENGTH - 2) + 0
			after = ts > t0
		}
		after' >>"$console" || true
fi
echo "$((SECONDS - start))" >"$out/wall_seconds"
