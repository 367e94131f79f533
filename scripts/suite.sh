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
dir=$1
limit=$2
list=${3:-$dir/tests.list}

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
while read -r t args; do
	echo "TEST $t"
	t0=$(uptime_s)
	# shellcheck disable=SC2086 # a list line is "test [arguments]"
	timeout -s KILL "$limit" "$dir/$t" $args 2>&1 </dev/null
	echo "RC $? $t0 $(uptime_s)"
done <"$list"
echo "END"
