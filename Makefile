# SPDX-License-Identifier: GPL-2.0
#
# make run     build the patched kernel and the tests, run the suite on every
#              emulated platform (PLATFORMS="bochs-vmx qemu-svm qemu-kvm host")
# make check   the project's own tests (unit, patch hygiene), make run and
#              make mutants (the historical fastpath bugs put back must be caught)
#
# make bench   IPI latency and ICR write cost, fastpath on / off (docs/bench.md)
#
# KSRC=/path/to/linux-6.12 uses that tree instead of Debian's linux-source-6.12.
# Everything generated goes under build/ (BUILD=...).

BUILD ?= $(CURDIR)/build
export BUILD KSRC PLATFORMS RESULTS TEST_TIMEOUT

.PHONY: all deps kernel tests initramfs run mutants bench unit check clean

all: initramfs

deps:
	@scripts/deps.sh

kernel: deps
	@scripts/kernel.sh

tests: kernel
	@scripts/build-tests.sh

initramfs: tests
	@scripts/initramfs.sh

run: initramfs
	@scripts/run.sh

mutants: initramfs
	@scripts/mutants.sh

bench: initramfs
	@scripts/bench.sh

unit:
	@scripts/unit.sh

check:
	@scripts/check.sh

clean:
	rm -rf $(BUILD)
