/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the host KVM lets the x2APIC ICR fastpath do, read from the vendor
 * module's parameters with kvm_util's readers: whether the fastpath can run
 * at all (VMX always; SVM only with NRIP save) and whether IPIs are
 * virtualized (IPIv, AVIC).  kvm_util fails the test on a parameter that
 * is absent and writes none, so the optional kvm.x2apic_icr_fastpath
 * switch is probed here, and written on request.  Also which rule (enum
 * ipi_policy) the running kernel's fastpath follows, learnt from what it
 * does, and the verdicts of path checks.
 */
#ifndef SELFTEST_KVM_IPI_PLATFORM_H
#define SELFTEST_KVM_IPI_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kselftest.h"
#include "kvm_util.h"
#include "ipi_oracle.h"
#include "vcpu_stats.h"

/* The stat added by the fastpath-stat patch. */
#define ICR_FASTPATH_STAT	"x2apic_icr_fastpath_writes"

/* The kvm module parameter added by the runtime-switch patch. */
#define ICR_FASTPATH_SWITCH	"x2apic_icr_fastpath"

/*
 * What the host lets the fastpath do; it is live only where the switch (if
 * any) is on.  Where it is live and the stat exists, the rule it follows is
 * probed once, from its behaviour (a VM of its own; see ipi_platform.c),
 * unless KVM_IPI_POLICY names one.
 */
struct ipi_platform ipi_platform_probe(void);

bool ipi_fastpath_switch_available(void);

/*
 * Why a test cannot run again with the fastpath switched off, or NULL if it
 * can.  The switch is the kvm module's, seen by every VM on the host, so a
 * test writes it only when @asked to (its -d option), and only as root.
 */
const char *ipi_fastpath_off_unavailable(bool asked);

/* A test's options when -d is its only one: was it given?  -h: usage. */
bool ipi_differential_option(int argc, char *argv[]);

/*
 * Turn the fastpath on or off; the test fails if that is not possible.  The
 * first call arranges for the switch to be put back, at exit, to the value
 * it had then.
 */
void ipi_fastpath_switch_set(bool on);

/*
 * Why the path of ICR writes cannot be checked here, or NULL if it can:
 * without the stat, where the fastpath can never run (a path check that
 * cannot fail must not pass), or under IPI virtualization.
 */
const char *ipi_path_unprovable(const struct ipi_platform *p, bool have_stat);

/* The sender's fastpath stat, or 0 on a kernel without it. */
static inline u64 ipi_fastpath_hits(struct kvm_vcpu *vcpu, bool have_stat)
{
	return have_stat ? vcpu_get_stat(vcpu, x2apic_icr_fastpath_writes) : 0;
}

/*
 * The verdict of one KTAP point: a KSFT_* code and, for a skip or an
 * expected failure, the reason.  The library decides; the test prints the
 * point under a fixed name with ipi_test_result().
 */
struct ipi_verdict {
	int code;
	const char *why;
};

/* Inline, as kselftest.h's own: its counters are per compilation unit. */
static inline void ipi_test_result(struct ipi_verdict verdict, const char *name)
{
	ksft_test_result_code(verdict.code, name, verdict.why ? "%s" : NULL, verdict.why);
}

/*
 * The path of writes that had to add @want_hits to the sender's stat and
 * added @hits: a skip with the reason where the path cannot be proven.  A
 * disagreement is also told in a diagnostic line, under @what.
 */
struct ipi_verdict ipi_path_verdict(const struct ipi_platform *p, bool have_stat,
				    u64 hits, int want_hits, const char *what);

/*
 * Checks of which @failed went unlike the SDM and @deviated exactly as KVM
 * is known to, of the @known that KVM is known to get wrong: an expected
 * failure while KVM does exactly that, a failure once it does anything
 * else, the SDM's answer included (then the mark must go: a diagnostic
 * line says so, under @what).
 */
struct ipi_verdict ipi_sdm_verdict(unsigned int failed, unsigned int deviated,
				   unsigned int known, const char *what);

/*
 * The rule the fastpath follows here, or "unprobed" where nothing takes it
 * (the fastpath does not run, the stat is absent, IPIs are virtualized).
 */
const char *ipi_platform_policy_name(const struct ipi_platform *p);

/* One line, e.g. "vmx apicv=N ipiv=N fastpath=live". */
void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size);

#endif /* SELFTEST_KVM_IPI_PLATFORM_H */
