/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the host KVM lets the x2APIC ICR fastpath do, read from the vendor
 * module's parameters with kvm_util's readers: whether the fastpath can run
 * at all (VMX always; SVM only with NRIP save) and whether IPIs are
 * virtualized (IPIv, AVIC), which decides whether the path of an ICR write
 * can be proven through the x2apic_icr_fastpath_writes stat.
 */
#ifndef SELFTEST_KVM_IPI_PLATFORM_H
#define SELFTEST_KVM_IPI_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "kselftest.h"
#include "kvm_util.h"
#include "ipi_oracle.h"
#include "vcpu_stats.h"

/* The stat that counts the ICR writes KVM completes in its fastpath. */
#define ICR_FASTPATH_STAT	"x2apic_icr_fastpath_writes"

struct ipi_platform ipi_platform_probe(void);

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

/* A KTAP result code (KSFT_*) and, unless it is a pass or a failure, why. */
struct ipi_verdict {
	int code;
	const char *why;
};

/*
 * The path of writes that had to add @want_hits to the sender's stat (-1:
 * either 0 or 1 is right) and added @hits: a skip with the reason where the
 * path cannot be proven.
 */
struct ipi_verdict ipi_path_verdict(const struct ipi_platform *p, bool have_stat,
				    u64 hits, int want_hits);

#ifdef KVM_IPI_XAPIC
/*
 * Checks of which @failed went unlike the SDM and @deviated exactly as KVM
 * is known to, of the @known that KVM is known to get wrong: a failure if
 * any went otherwise, an expected failure while some deviate exactly as
 * known, a pass once all follow the SDM.
 */
struct ipi_verdict ipi_sdm_verdict(unsigned int failed, unsigned int deviated,
				   unsigned int known);
#endif

/* One line, e.g. "vmx apicv=N ipiv=N fastpath=live rule=single-target". */
void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size);

#endif /* SELFTEST_KVM_IPI_PLATFORM_H */
