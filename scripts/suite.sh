#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run every test of a list, found in DIR, with a timeout and print, one per line:
#   CAPS <what the KVM here can do>
#   TEST <name>, then the test's own KTAP output, then RC <status> <t0> <t1>
#   END
# POSIX sh: it runs both on the host and as busybox sh inside the guest.
#
# usage: suite.sh DIR TIMEOUT_SECONDS [LIST]  (LIST defaults to DIR/tests.list;
# each line names a test, optionally followed by its arguments)
#
# STOP_ON_FAILURE=1 (make mutants): after the first test that fails, print
# "STOPPED" and run no more; a mutant is caught by one failure, and the rest
# of the list would only cost time.  MAY_FAIL (comma-separated list names,
# e.g. "kvm/x2apic_hlt_wakeup_test"): tests with expected failures on this
# platform, which the host judges point by point: the suite goes on after
# them whatever their status.
#
# A line "TEST @wrong-rule" runs TEST, a test built with the other kernel
# generation's fastpath rule (kvm/*.other-rule, scripts/build-tests.sh),
# and inverts its verdict: it passes only when path points fail ("not ok
# ...: fastpath +N" or "...: path ...") and every delivery point still
# passes, which proves this kernel's path checks can fail.  Where the
# fastpath cannot run ("fastpath=off"), no rule can show: it SKIPs (exit
# status 4).
#
# A test's output may end without a newline (two threads that fail at once,
# a last line cut short): its last line is ended here, so that RC, and
# whatever follows, always starts a line of its own.  Where the output did
# end with a newline this adds an empty line, which report.awk skips.
#
# A line "TEST [ARGS] @nonroot" runs TEST as the user nobody (where the
# suite runs as root): whatever needs root must then skip, with the reason.
# NONROOT_CMD, where set, is the command that drops root instead (the host
# platform's: scripts/host.sh).
#
# kvm.x2apic_icr_fastpath is host-wide: a test that switched it off and was
# killed by its timeout cannot put it back, so after each test it is put
# back as this run found it (KVMIPI_SWITCH: the switch's path).  Scratch
# files go to $TMPDIR.
dir=$1
limit=$2
list=${3:-$dir/tests.list}
switch=${KVMIPI_SWITCH:-/sys/module/kvm/parameters/x2apic_icr_fastpath}
switch_found=$(cat "$switch" 2>/dev/null)
scratch=$(mktemp "${TMPDIR:-/tmp}/suite.XXXXXX") || exit 1
trap 'rm -f "$scratch"' EXIT

param() {
	cat "/sys/module/$1/parameters/$2" 2>/dev/null || echo -
}

caps() {
	if grep -qw vmx /proc/cpuinfo; then
		echo "vendor=vmx ept=$(param kvm_intel ept) apicv=$(param kvm_intel enable_apicv) ipiv=$(param kvm_intel enable_ipiv)"
	elif grep -qw svm /proc/cpuinfo; then
		echo "vendor=svm npt=$(param kvm_amd npt) nrips=$(param kvm_amd nrips) avic=$(param kvm_amd avic)"
	else
		echo "vendor=none"
	fi
}

uptime_s() {
	cut -d' ' -f1 /proc/uptime
}

echo "CAPS $(caps) kvm=$([ -c /dev/kvm ] && echo yes || echo no) cpus=$(grep -c ^processor /proc/cpuinfo)"
# must_fail_on_path OUTPUT STATUS: the inverted verdict of a wrong-rule run.
must_fail_on_path() {
	if grep -q 'fastpath=off' "$1"; then
		echo "# SKIP: the fastpath does not run here, no policy can show"
		return 4
	fi
	if [ "$2" -eq 4 ]; then
		echo "# SKIP: the test skipped, no policy can show"
		return 4
	fi
	if grep -q 'kernel has no x2apic_icr_fastpath_writes stat' "$1"; then
		echo "# SKIP: the kernel has no x2apic_icr_fastpath_writes stat, no policy can show"
		return 4
	fi
	if [ "$2" -eq 0 ]; then
		echo "# FAIL: every path check passed under the wrong rule"
		return 1
	fi
	if ! grep -qE '^ *not ok .*(: fastpath \+[0-9]|: path( |$))' "$1"; then
		echo "# FAIL: the test failed (status $2), but on no path check"
		return 1
	fi
	if grep -qE '^ *not ok .*(: delivered|: outcome)' "$1"; then
		echo "# FAIL: a delivery check failed too"
		return 1
	fi
	echo "# ok: path checks failed under the wrong rule, deliveries passed"
	return 0
}

while read -r t args; do
	wrong= user=
	case $args in
	@wrong-rule) wrong=1 args= ;;
	*@nonroot) args=${args%@nonroot} user=nobody ;;
	esac
	echo "TEST $t${wrong:+ @wrong-rule}${user:+ @nonroot}"
	t0=$(uptime_s)
	if [ -n "$wrong" ]; then
		timeout -s KILL "$limit" "$dir/$t" </dev/null >"$scratch" 2>&1
		rc=$?
		cat "$scratch"
	elif [ -n "$user" ] && [ "$(id -u)" -eq 0 ] && [ -n "${NONROOT_CMD:-}" ]; then
		# shellcheck disable=SC2086 # a command and its options; a list line's words
		timeout -s KILL "$limit" $NONROOT_CMD "$dir/$t" $args 2>&1 </dev/null
		rc=$?
	elif [ -n "$user" ] && [ "$(id -u)" -eq 0 ]; then
		# busybox su takes options after the user: the arguments go in
		# the command (a list line's are plain words)
		timeout -s KILL "$limit" su -p -s /bin/sh "$user" -c "exec $dir/$t $args" \
			2>&1 </dev/null
		rc=$?
	else
		# shellcheck disable=SC2086 # a list line is "test [arguments]"
		timeout -s KILL "$limit" "$dir/$t" $args 2>&1 </dev/null
		rc=$?
	fi
	# the test's last line may have no newline: what follows starts a line
	echo
	if [ -n "$wrong" ]; then
		must_fail_on_path "$scratch" $rc
		rc=$?
	fi
	echo "RC $rc $t0 $(uptime_s)"
	now=$(cat "$switch" 2>/dev/null)
	if [ -n "$switch_found" ] && [ "$now" != "$switch_found" ]; then
		if echo "$switch_found" 2>/dev/null >"$switch"; then
			echo "# kvm.x2apic_icr_fastpath was left at $now: put back to $switch_found"
		else
			echo "# kvm.x2apic_icr_fastpath was left at $now and cannot be put back to $switch_found"
		fi
	fi
	if [ -n "${STOP_ON_FAILURE:-}" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
		case ",${MAY_FAIL:-}," in
		*",$t,"*) echo "# $t has expected failures here: not stopping" ;;
		*) echo "STOPPED"; break ;;
		esac
	fi
done <"$list"
echo "END"
