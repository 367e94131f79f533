#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test initramfs: mounts what the tests need, runs the suite and
# powers off.  Lines go through /dev/kmsg, which reached the serial console
# more reliably than the tty under Bochs; each is prefixed "@@ " for the host.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
chmod 1777 /tmp
# as a distribution's kvm group does: the "@nonroot" runs use KVM, not root
chmod 0666 /dev/kvm 2>/dev/null
# devtmpfs has no /dev/std* links; the kselftest runner writes to /dev/stdout
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

limit=$(sed -n 's/.*kvmipi.timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
# make mutants: no more tests after the first failure (suite.sh)
! grep -qw kvmipi.stop_on_failure /proc/cmdline || export STOP_ON_FAILURE=1
# ... but not after a test with expected failures on this platform
MAY_FAIL=$(sed -n 's/.*kvmipi.may_fail=\([^ ]*\).*/\1/p' /proc/cmdline)
export MAY_FAIL

# kvmipi.load=N[,M] (make run LOAD=N[,M]): a loaded host, N processes that
# spin and M that wake every millisecond and sleep again, beside the tests
load=$(sed -n 's/.*kvmipi.load=\([0-9,]*\).*/\1/p' /proc/cmdline)
spinners=${load%%,*} sleepers=0
[ "$load" = "${load#*,}" ] || sleepers=${load#*,}
for i in $(seq 1 "${spinners:-0}"); do sh -c 'while :; do :; done' & done
for i in $(seq 1 "$sleepers"); do sh -c 'while :; do usleep 1000; done' & done
[ -z "$load" ] || echo "<5>kvmipi: load: $spinners spinning, $sleepers sleeping" >/dev/kmsg

# kvmipi.poll_idle (bochs-svm): the tests built with a polling safe_halt()
# replace the real ones, under the same names (scripts/build-tests.sh)
if grep -qw kvmipi.poll_idle /proc/cmdline; then
	n=0
	for f in /tests/kvm/*.poll-idle; do
		[ -e "$f" ] || continue
		mv "$f" "${f%.poll-idle}"
		n=$((n + 1))
	done
	echo "<5>kvmipi: $n tests with a polling safe_halt()" >/dev/kmsg
fi

# the run list: kvmipi.list=NAME on the two-CPU platforms
list=$(sed -n 's/.*kvmipi.list=\([-a-z0-9.]*\).*/\1/p' /proc/cmdline)

list=/tests/${list:-tests.list}
# the runs as a user without root only where the platform asks (platform.sh)
if ! grep -qw kvmipi.nonroot /proc/cmdline; then
	grep -v ' @nonroot$' "$list" >/tmp/tests.list
	list=/tmp/tests.list
fi

# kvmipi.left_out=A,B (platform.sh, scripts/left-out): tests this platform
# cannot run at all, out of the list and the runner's line
for t in $(sed -n 's/.*kvmipi.left_out=\([a-z0-9_,]*\).*/\1/p' /proc/cmdline | tr , ' '); do
	sed -e "/^kvm\/$t\( \|\$\)/d" -e "s/ -t kvm:$t\( \|\$\)/\1/" "$list" >/tmp/tests.list.new
	mv /tmp/tests.list.new /tmp/tests.list.left
	list=/tmp/tests.list.left
	echo "<5>kvmipi: $t left out on this platform (scripts/left-out)" >/dev/kmsg
done

sh /suite.sh /tests "${limit:-300}" "$list" 2>&1 | while IFS= read -r line; do
	echo "<5>@@ $line" >/dev/kmsg
done
sync
poweroff -f
