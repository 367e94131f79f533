# SPDX-License-Identifier: GPL-2.0
#
# make run     build the patched kernel and the tests, run the suite on every
#              emulated platform (PLATFORMS="bochs-vmx qemu-svm qemu-kvm host")
# make check   the project's own tests (unit, patch hygiene), make run and
#              make mutants (the historical fastpath bugs put back must be caught)
#
# make patches regenerate the in-tree selftests patch from selftests/ and lib/
# make bench   IPI latency and ICR write cost, fastpath on / off (docs/bench.md)
#
# KSRC=/path/to/linux-6.12 uses that tree instead of Debian's linux-source-6.12.
# Everything generated goes under build/ (BUILD=...).

BUILD ?= $(CURDIR)/build
export BUILD DEBUG KSRC PLATFORMS RESULTS TEST_TIMEOUT

.PHONY: all deps kernel patches tests initramfs run mutants bench unit check clean

all: initramfs

deps:
	@scripts/deps.sh

kernel: deps
	@scripts/kernel.sh

# selftests/ and lib/ -> the series' in-tree selftests patch
patches: deps
	@scripts/kernel.sh --prepare
	@scripts/patches.sh

tests: patches kernel
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
