/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Rounds of IPIs among the vCPUs of one VM.  Each vCPU counts what its
 * handlers take, per vector, in a tally the host reads in place.  After an
 * ICR write the host fences every vCPU with an interrupt of its own
 * (KVM_SIGNAL_MSI) in the lowest priority class in use; NMIs outrank every
 * interrupt, so a vCPU that handled its fence handled everything pending
 * for it.  How vCPUs are run and parked is the test's.
 */
#ifndef SELFTEST_KVM_IPI_ROUND_H
#define SELFTEST_KVM_IPI_ROUND_H

#include <stdbool.h>
#include <linux/types.h>

#include "processor.h"

#define IPI_FENCE_VECTOR	0x20	/* use no vector below it */
#define IPI_ROUND_MAX_VCPUS	8

struct ipi_tally {
	u32 irqs[256];	/* interrupts handled, per vector */
	u32 nmis;
};

/* Guest: write the ICR; returns the vector of the fault it raised, or 0. */
#ifdef KVM_IPI_XAPIC
/* In xAPIC mode (ipi_round_to_xapic()): ICR2 (@icr's bits 63:32), then ICR. */
#endif
u8 guest_ipi_write(u64 icr);

/* Guest: the ICR as guest_ipi_write() writes it. */
u64 guest_ipi_read(void);

/* Guest, interrupts off: halt until every fence due was handled. */
void guest_ipi_idle_until_fenced(void);

#ifdef KVM_ICR_HOSTILE_HELPERS
/* Guest: the same without halting, for at most @windows interrupt windows. */
void guest_ipi_drain(u32 windows);
#endif

struct ipi_round {
	struct kvm_vm *vm;
	unsigned int nr_vcpus;
	const u32 *ids;		/* APIC IDs below 256, vCPU i has ids[i] */
	struct ipi_tally *tally;	/* the guest's, in place */
	u32 *fences_due;
#ifdef KVM_IPI_XAPIC
	bool *xapic;		/* the guest's: in xAPIC mode */
#endif
};

/* Tally NMIs and the interrupts of @vectors, and the fence's, in @vm. */
void ipi_round_init(struct ipi_round *r, struct kvm_vm *vm, const u32 *ids,
		    unsigned int nr_vcpus, const u8 *vectors,
		    unsigned int nr_vectors);
#ifdef KVM_IPI_XAPIC

/* Every vCPU has switched to xAPIC mode, its ID unchanged. */
void ipi_round_to_xapic(struct ipi_round *r);
#endif

/* One more fence is due at vCPU @i: say so before it runs to wait for it. */
void ipi_round_fence_due(struct ipi_round *r, unsigned int i);

void ipi_round_fence(struct ipi_round *r, unsigned int i);

/*
 * What each vCPU took of the IPI @icr sends since @before (@got), and how
 * many other interrupts from vector 16 up, fences aside, and NMIs (unless
 * @icr sends one) they all handled (@other).
 */
void ipi_round_collect(const struct ipi_round *r, u64 icr,
		       const struct ipi_tally *before, u32 *got,
		       u32 *other);

#endif /* SELFTEST_KVM_IPI_ROUND_H */
