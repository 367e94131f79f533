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
# devtmpfs has no /dev/std* links; the kselftest runner writes to /dev/stdout
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

limit=$(sed -n 's/.*kvmipi.timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
# every time bound of the tests times this (vcpu_run_within.h)
scale=$(sed -n 's/.*kvmipi.time_scale=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -z "$scale" ] || export KVM_SELFTEST_TIME_SCALE=$scale

sh /suite.sh /tests "${limit:-300}" 2>&1 | while IFS= read -r line; do
	echo "<5>@@ $line" >/dev/kmsg
done
sync
poweroff -f
