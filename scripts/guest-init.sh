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
# devtmpfs has no /dev/std* links; the kselftest runner writes to /dev/stdout
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

# module_params MODULE [WORD...]: the MODULE.NAME=VALUE words of the
# kernel command line and of WORDs (kvm, kvm_intel, kvm_amd; "-" for "_"
# too), as NAME=VALUE.  The kernel sets a built-in's parameters from its
# command line, but gives a module loaded later none of them (kmod's
# modprobe reads /proc/cmdline for it, insmod does not): the platforms and
# the mutants' "Cmdline: " lines keep saying kvm_amd.nrips=0 and the like,
# for either.
module_params() {
	mod=$1
	shift
	for w in $(cat /proc/cmdline) "$@"; do
		m=${w%%.*}
		[ "$m" != "$w" ] || continue
		[ "$(echo "$m" | tr - _)" = "$mod" ] && echo "${w#*.}"
	done
}

# load_kvm DIR [WORD...]: KVM's modules from DIR (scripts/kernel.sh packs
# them, platform.sh appends them to the initramfs): kvm.ko, then the
# vendor's that this CPU can run, each with its parameters (module_params),
# after the modules they need; fails when one does not load.  No module (a kernel with KVM built in):
# nothing to do.
load_kvm() {
	dir=$1
	shift
	[ -f "$dir/kvm.ko" ] || return 0
	vendor=
	if grep -qw vmx /proc/cpuinfo; then
		vendor=kvm-intel
	elif grep -qw svm /proc/cpuinfo; then
		vendor=kvm-amd
	fi
	# what KVM needs (irqbypass.ko) first, once: it stays across sets
	for f in "$dir"/*.ko; do
		m=${f##*/}
		m=${m%.ko}
		case $m in kvm | kvm-intel | kvm-amd) continue ;; esac
		[ ! -d "/sys/module/$(echo "$m" | tr - _)" ] || continue
		echo "<5>kvmipi: insmod $f" >/dev/kmsg
		insmod "$f" || return 1
	done
	for m in kvm $vendor; do
		params=$(module_params "$(echo "$m" | tr - _)" "$@" | tr '\n' ' ')
		echo "<5>kvmipi: insmod $dir/$m.ko ${params% }" >/dev/kmsg
		# shellcheck disable=SC2086 # the parameters are words
		insmod "$dir/$m.ko" $params || return 1
	done
	# as a distribution's kvm group does: the "@nonroot" runs use KVM, not root
	chmod 0666 /dev/kvm 2>/dev/null
	return 0
}

# unload_kvm: KVM's modules out, the vendor's first; fails when one stays
# (a VM not yet torn down holds kvm.ko for a moment: a few tries)
unload_kvm() {
	for m in kvm_intel kvm_amd kvm; do
		tries=0
		while [ -d "/sys/module/$m" ]; do
			rmmod "$m" 2>/dev/null && break
			tries=$((tries + 1))
			[ "$tries" -lt 10 ] || return 1
			sleep 1
		done
	done
	echo "<5>kvmipi: KVM's modules unloaded" >/dev/kmsg
}

# dump_gcov: with kvmipi.gcov (make coverage, scripts/kvm-coverage.sh),
# the gcov counts of KVM's modules, read from debugfs (whose files say
# size 0: each is read whole first), as a gzipped tar in base64 between
# "kvmgcov: begin" and "kvmgcov: end N MD5" (N lines, MD5 of the archive),
# which the host checks: a lost or garbled line is a failed dump.
dump_gcov() {
	grep -qw kvmipi.gcov /proc/cmdline || return 0
	if [ ! -d /sys/kernel/debug/gcov ]; then
		echo "<3>kvmgcov: no /sys/kernel/debug/gcov: not the coverage kernel" >/dev/kmsg
		return 0
	fi
	rm -rf /tmp/gcov
	find /sys/kernel/debug/gcov -name '*.gcda' | while read -r f; do
		mkdir -p "/tmp/gcov${f%/*}"
		cat "$f" >"/tmp/gcov$f"
	done
	tar -C /tmp/gcov -czf /tmp/gcov.tgz sys
	base64 /tmp/gcov.tgz >/tmp/gcov.b64
	echo "<5>kvmgcov: begin" >/dev/kmsg
	while IFS= read -r line; do
		echo "<5>kvmgcov: $line" >/dev/kmsg
	done </tmp/gcov.b64
	echo "<5>kvmgcov: end $(wc -l </tmp/gcov.b64) $(md5sum </tmp/gcov.tgz | cut -d' ' -f1)" >/dev/kmsg
}

# run_suite LIST: the suite on LIST, its lines to the console
run_suite() {
	sh /suite.sh /tests "${limit:-300}" "$1" 2>&1 | while IFS= read -r line; do
		echo "<5>@@ $line" >/dev/kmsg
	done
}

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

# filter_list LIST OUT: LIST as this platform runs it, in OUT: the runs
# as a user without root only where the platform asks (platform.sh); less
# kvmipi.left_out=A,B (platform.sh, scripts/left-out), tests this platform
# cannot run at all, out of the list and the runner's line
filter_list() {
	if grep -qw kvmipi.nonroot /proc/cmdline; then
		cp "$1" "$2"
	else
		grep -v ' @nonroot$' "$1" >"$2"
	fi
	for t in $(sed -n 's/.*kvmipi.left_out=\([a-z0-9_,]*\).*/\1/p' /proc/cmdline | tr , ' '); do
		sed -e "/^kvm\/$t\( \|\$\)/d" -e "s/ -t kvm:$t\( \|\$\)/\1/" "$2" >"$2.new"
		mv "$2.new" "$2"
		echo "<5>kvmipi: $t left out on this platform (scripts/left-out)" >/dev/kmsg
	done
}

if [ -f /kvm/sets ]; then
	# Several KVMs in one boot (scripts/mutants.sh): for each set named in
	# /kvm/sets, in turn, KVM unloaded, the set's modules loaded with its
	# parameters (/kvm/NAME/params, as "kvm_amd.nrips=0"), and its list
	# run, between "SET NAME" and the suite's END.  A set that cannot be
	# loaded, or a KVM that cannot be unloaded, ends the boot: the sets
	# after it go to another.
	while read -r name <&3; do
		echo "<5>@@ SET $name" >/dev/kmsg
		unload_kvm || { echo "<3>kvmipi: KVM's modules do not unload: the boot ends" >/dev/kmsg; break; }
		# shellcheck disable=SC2046 # the parameters are words
		load_kvm "/kvm/$name/lib/kvm" $(cat "/kvm/$name/params" 2>/dev/null) ||
			{ echo "<3>kvmipi: set $name did not load: no test runs" >/dev/kmsg; break; }
		filter_list "/kvm/$name/tests.list" "/tmp/$name.list"
		run_suite "/tmp/$name.list"
	done 3</kvm/sets
	echo "<5>@@ SETS-END" >/dev/kmsg
else
	# the run list: kvmipi.list=NAME on the two-CPU platforms
	list=$(sed -n 's/.*kvmipi.list=\([-a-z0-9.]*\).*/\1/p' /proc/cmdline)
	filter_list "/tests/${list:-tests.list}" /tmp/tests.list
	if load_kvm /lib/kvm; then
		run_suite /tmp/tests.list
		dump_gcov
	else
		# no END: the run fails (suite-completed), every test with no result
		echo "<3>kvmipi: KVM's modules did not load: no test runs" >/dev/kmsg
	fi
fi
sync
poweroff -f
