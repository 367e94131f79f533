# SPDX-License-Identifier: GPL-2.0
#
# make run     build each patched kernel and the tests, run the suite on
#              every platform of PLATFORMS= (below) and both kernels, print a
#              platform x kernel table and "N passed, N failed, N skipped"
# make check   the project's own tests (unit, patch hygiene, README's in-tree
#              recipe), make run and make mutants (fastpath bugs put back
#              must be caught); writes build/results/summary.md
# make         (make all) what make run needs, built: make initramfs
# make deps    install (Debian, as root) or name the packages the build and
#              the platforms need; download the 7.x source and QEMU
# make render  the series as selftests/, lib/ and patches/selftests.msg
#              render them, into build/<kernel>/series-rendered/ (what the
#              build applies: a build never writes patches/)
# make kernel  the patched kernel and KVM's modules (scripts/kernel.sh)
# make headers the patched tree's UAPI headers alone (PLATFORMS=host)
# make tests   the KVM selftests, ours included, built and installed
# make host-tests  the same against the headers alone (PLATFORMS=host)
# make initramfs   the guest's initramfs: busybox, the tests, their lists
# make patches regenerate each kernel's series (the core, regression/*/,
#              testbed/) in patches/, each with its tree's fastpath rule
#              (scripts/patches.sh), and build/<kernel>/post/, to post: the
#              core, and each regression series made on the core and what
#              it needs only; SIGN=1 also writes those signed with your git
#              identity to build/<kernel>/signed/
# make patches-check  fail where patches/ is not what the sources render
# make flakes  RUNS=N runs of each platform's list on one build, counted per
#              test with every failing point (a measurement, docs/reliability.md)
# make bench   IPI latency and ICR write cost, fastpath on / off (docs/bench.md)
# make mutants KVM bugs put back, each must be caught; must-pass ones passed;
#              KVM is a module: up to MUTANTS_PER_BOOT (4) of them share a
#              boot, each judged apart (docs/testbed.md); MUTANT=GLOB only
#              those, MUTANT_PLATFORMS= on those platforms, APICV=1 (with
#              BOCHS=) the posted-interrupt mutants
# make bisect-step  KSRC=/path/to/linux: one step of a bisection on that
#              tree's commit, in a scratch clone: exit 0 good, 1 bad, 125
#              cannot test; git bisect run calls scripts/bisect-step.sh
# make coverage  which lines, branches and functions of KVM's interrupt
#              delivery code the suite runs: KVM's modules built with gcov,
#              the whole list on each platform (COVERAGE_PLATFORMS=, default
#              PLATFORMS but the stock kernel; COVERAGE_FILES= the files),
#              the counts brought back and summed (scripts/kvm-coverage.sh,
#              docs/coverage.md)
# make mutation  SEED=S N=N automatic mutants of that code, N per file drawn
#              with seed S on lines make coverage executed, each booted on
#              the first of MUTATION_PLATFORMS= that ran its line, with that
#              platform's whole list: killed, crashed, survived
#              (scripts/mutation.sh, docs/mutation.md); not in make check
# make unit    the project's own host-only tests (offline, as any user)
# make clean   remove BUILD; make help: this text
# scripts/try.sh TEST.c  one test from its source on one kernel and platform
#              (docs/testbed.md, "One test alone")
#
# KERNEL=6.12 or 7.3 (any patches/<kernel>/) works on that kernel only;
# by default every target covers 6.12 and the newest 7.x whose source the
# Debian mirror serves (scripts/kernels.sh).
# KSRC=/path/to/linux uses that tree (of a version below, that kernel
# only) instead of Debian's linux-source package: needed off Debian.
# BUILD=DIR: everything generated goes there (default build/); RESULTS=DIR
# the results (default build/results/).
# PLATFORMS="P ..." the platforms below (default: those this machine can
# run); QEMU=/path/to/qemu-system-x86_64 and BOCHS=/path/to/bochs instead
# of those make deps gets.
# DEBUG=1 the kernel with lockdep, KASAN and more (configs/debug.config).
# A run that tested nothing on a kernel or platform asked for fails.  Its
# passed count expected failures (tests failing only at a proven platform
# defect's points) and XFAIL points (KVM's known departures from the SDM),
# and its end says how many.  STRICT=1 also fails a run that proved no
# fastpath point (": path"), and each kernel x platform that could prove one
# and did not (all but qemu-svm and bochs-vmx-stock).
# LOAD=N[,M] loads the test kernel: N processes spin and M wake and sleep
# beside the tests (kvmipi.load=, scripts/guest-init.sh).
# TEST_TIMEOUT=S each test's limit in the guest (default 300 s, 900 s under
# DEBUG=1), on PLATFORMS=host and in make bench (1200 s);
# JOBS=N the build's jobs (default: one per CPU).

BUILD ?= $(CURDIR)/build
# The platforms (PLATFORMS=, else those this machine can run), checked first,
# before anything is fetched or built: an unknown one, an unusable /dev/kvm,
# nested virtualization off or a missing QEMU stop make here, saying what
# to do (scripts/platforms.sh).
# Every setting (KERNEL, DEBUG, KSRC, PLATFORMS, STRICT) is checked there
# too, each bad one named (scripts/common.sh).
# make help, clean, unit and patches need no platform (no emulator, no
# /dev/kvm), no network and no root: nothing is looked up on a mirror for
# them (MIRROR_LOOKUP, scripts/kernels.sh), and deps checks only what the
# build needs (DEPS=build, scripts/deps.sh).
offline_goals := clean help unit patches patches-check
# make bisect-step checks its settings, platforms and kernel itself, at each
# step, and says which it could not test (scripts/bisect-step.sh)
self_checked := bisect-step
ifneq ($(filter-out $(offline_goals) $(self_checked),$(or $(MAKECMDGOALS),all)),)
PLATFORMS := $(shell PLATFORMS="$(PLATFORMS)" KERNEL="$(KERNEL)" KSRC="$(KSRC)" QEMU="$(QEMU)" \
		BOCHS="$(BOCHS)" DEBUG="$(DEBUG)" STRICT="$(STRICT)" scripts/platforms.sh check)
ifneq ($(.SHELLSTATUS),0)
$(error stopped by the error above)
endif
MIRROR_LOOKUP := 1
DEPS :=
else
MIRROR_LOOKUP :=
DEPS := build
endif
# make help and make clean need no kernel
ifneq ($(filter-out clean help $(self_checked),$(or $(MAKECMDGOALS),all)),)
KERNELS := $(shell KERNEL="$(KERNEL)" KSRC="$(KSRC)" PLATFORMS="$(PLATFORMS)" DEBUG="$(DEBUG)" \
		STRICT="$(STRICT)" MIRROR_LOOKUP=$(MIRROR_LOOKUP) scripts/kernels.sh)
ifeq ($(KERNELS),)
$(error stopped by the error above)
endif
endif
export APICV BOCHS BUILD COVERAGE_FILES COVERAGE_PLATFORMS DEBUG DEPS JOBS KSRC KERNELS LOAD MIRROR_LOOKUP RUNS MUTANT MUTANT_PLATFORMS \
	MUTATION_PLATFORMS N SEED \
	PLATFORMS QEMU RESULTS SIGN STRICT TEST_TIMEOUT
# set here, for the scripts: not the user's (make help leaves them out)
internal_vars := DEPS KERNELS MIRROR_LOOKUP
EACH = scripts/each-kernel.sh

.PHONY: all help deps render kernel headers patches patches-check tests host-tests initramfs run mutants coverage mutation flakes bench bisect-step unit check clean

all: initramfs

deps:
	@scripts/deps.sh

# One kernel after the other, each with a job per CPU: side by side they
# took longer (cold: 1,642 s against 668 + 738 s in turn).
# bochs-vmx-stock: the stock kernel too (scripts/kernel.sh --stock)
kernel: render
	@$(EACH) scripts/kernel.sh $(if $(filter bochs-vmx-stock,$(PLATFORMS)),--stock)

# PLATFORMS=host alone: the tests for the running kernel need the patched
# tree's UAPI headers, and no kernel, no initramfs.
headers: render
	@$(EACH) scripts/kernel.sh --headers

# selftests/ and lib/ -> each series' in-tree selftests patches.  The
# kernel's tree is held (-l) while they are made from it: under make -j,
# make kernel must not extract it again meanwhile.
patches: deps
	@$(EACH) scripts/kernel.sh --prepare
	@$(EACH) -l scripts/patches.sh

# The series as selftests/, lib/ and patches/selftests.msg render it, into
# build/<kernel>/series-rendered/, which make kernel applies: a run never
# writes patches/ (only make patches does), whatever tree KSRC= is.
render: deps
	@$(EACH) scripts/kernel.sh --prepare
	@$(EACH) -l scripts/patches.sh --render

# the committed series are what selftests/, lib/ and patches/selftests.msg
# render (make check runs this first, before the build)
patches-check: deps
	@$(EACH) scripts/kernel.sh --prepare
	@$(EACH) scripts/patches.sh --check

tests: kernel
	@$(EACH) scripts/build-tests.sh

host-tests: headers
	@$(EACH) scripts/build-tests.sh

initramfs: tests
	@$(EACH) scripts/initramfs.sh

# The kernels side by side: their platforms boot as emulator slots, one
# per CPU, come free (scripts/common.sh, emulator_slot).
run: $(if $(filter-out host,$(PLATFORMS)),initramfs,host-tests)
	@$(EACH) -p -c run scripts/run.sh

mutants: initramfs
	@$(EACH) -p -c mutants scripts/mutants.sh

# The kernels side by side, their coverage kernels' builds and boots too
coverage: initramfs
	@$(EACH) -p scripts/kvm-coverage.sh

# One kernel after the other: each mutant's build holds its kernel's tree,
# and the boots of both would share the slots anyway
mutation: initramfs
	@$(EACH) scripts/mutation.sh

# The kernels side by side, their runs sharing the emulator slots
flakes: initramfs
	@$(EACH) -p scripts/flakes.sh

bench: initramfs
	@$(EACH) scripts/bench.sh
	@scripts/bench-compare.sh

# One step of a bisection, by hand: KSRC= is the tree at the commit to
# test.  git bisect run calls scripts/bisect-step.sh itself: make turns its
# 125 ("cannot test") into 2, which git reads as "bad".
bisect-step:
	@$(if $(KSRC),,$(error make bisect-step needs KSRC=/path/to/linux, the tree being bisected))
	@scripts/bisect-step.sh

unit:
	@scripts/unit.sh

check:
	@scripts/check.sh

clean:
	rm -rf $(BUILD)

# the goals and variables, from this file's head comment; the platforms and
# the kernel trees from the lists the scripts check them against
# (scripts/tests/help.test checks that it names every goal and variable)
help:
	@sed -n '3,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
	@scripts/platforms.sh help
