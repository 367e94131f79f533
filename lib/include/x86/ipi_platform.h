/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the host KVM lets the x2APIC ICR fastpath do, read from the vendor
 * module's parameters: whether the fastpath can run at all (VMX always; SVM
 * only with NRIP save) and whether IPIs are virtualized (IPIv, AVIC).
 */
#ifndef SELFTEST_KVM_IPI_PLATFORM_H
#define SELFTEST_KVM_IPI_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "ipi_oracle.h"

/* The stat added by the fastpath-stat patch. */
#define ICR_FASTPATH_STAT	"x2apic_icr_fastpath_writes"

/* The kvm module parameter added by the runtime-switch patch. */
#define ICR_FASTPATH_SWITCH	"x2apic_icr_fastpath"

/* The fastpath is live only where the switch (if any) is on. */
struct ipi_platform ipi_platform_probe(void);

bool ipi_fastpath_switch_available(void);

/*
 * Turn the fastpath on or off; the test fails if that is not possible.  The
 * first call arranges for the switch to be put back, at exit, to the value
 * it had then.
 */
void ipi_fastpath_switch_set(bool on);

/*
 * Why the path of ICR writes cannot be checked here, or NULL if it can:
 * without the stat, or where the fastpath can never run (a path check that
 * cannot fail must not pass).  @want_hits < 0: IPI virtualization may
 * complete the write without an exit.
 */
const char *ipi_path_unprovable(const struct ipi_platform *p, bool have_stat,
				int want_hits);

/* One line, e.g. "vmx apicv=N ipiv=N fastpath=live". */
void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size);

#endif /* SELFTEST_KVM_IPI_PLATFORM_H */
