/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An architectural model of x2APIC ICR writes, independent of KVM: how an
 * ICR value decodes, which writes KVM's IPI fastpath may complete, and which
 * vCPUs must receive what.  Plain C on apic.h's names, with nothing of
 * KVM, so that it can be unit tested on any host.
 *
 * Sources: Intel SDM Vol. 3A, "Interrupt Command Register (ICR)", "Valid
 * Combinations for the Local xAPIC Interrupt Command Register", and the
 * x2APIC chapter.
 */
#ifndef SELFTEST_KVM_IPI_ORACLE_H
#define SELFTEST_KVM_IPI_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "apic.h"

/* The x2APIC ICR's fields beyond apic.h's masks. */
#define ICR_DM_SHIFT		8
#define ICR_SHORTHAND_SHIFT	18
#define ICR_DEST_SHIFT		32

/*
 * Bit 12 is reserved in x2APIC mode too, but Intel CPUs ignore it and AMD
 * ones fault: the model leaves it out, as X2APIC_RSVD_BITS_MASK does.
 */
#define X2APIC_BROADCAST	0xffffffffU

/* @icr aimed at @dest: bits 63:32. */
static inline u64 icr_with_dest(u64 icr, u32 dest)
{
	return icr | (u64)dest << ICR_DEST_SHIFT;
}
#ifdef KVM_IPI_XAPIC

/* In xAPIC mode, ICR2:ICR as one value: the destination is bits 63:56. */
#define XAPIC_BROADCAST		0xffU
#define XAPIC_DEST_SHIFT	56

static inline u64 xapic_icr_with_dest(u64 icr, u8 dest)
{
	return icr | (u64)dest << XAPIC_DEST_SHIFT;
}

/* @icr aimed at @dest in xAPIC mode if @xapic, else in x2APIC mode. */
static inline u64 icr_with_apic_dest(u64 icr, u32 dest, bool xapic)
{
	return xapic ? xapic_icr_with_dest(icr, dest) : icr_with_dest(icr, dest);
}
#endif

enum icr_delivery_mode {
	ICR_DM_FIXED = 0,
	ICR_DM_LOWEST = 1,
	ICR_DM_SMI = 2,
	ICR_DM_RESERVED = 3,
	ICR_DM_NMI = 4,
	ICR_DM_INIT = 5,
	ICR_DM_STARTUP = 6,
	ICR_DM_EXTINT = 7,
};

enum icr_shorthand {
	ICR_SH_NONE = 0,
	ICR_SH_SELF = 1,
	ICR_SH_ALL = 2,
	ICR_SH_ALL_BUT_SELF = 3,
};

struct icr_fields {
	u8 vector;
	enum icr_delivery_mode mode;
	bool logical;
	bool level_assert;
	bool level_trigger;
	enum icr_shorthand shorthand;
	u32 dest;
	u64 reserved;	/* the reserved bits that are set */
};

struct icr_fields icr_decode(u64 raw);
#ifdef KVM_ICR_HOSTILE_HELPERS
u64 icr_encode(const struct icr_fields *icr);
#endif

/* E.g. "fixed physical dest=0x2 shorthand=none edge vector=0x40". */
int icr_format(u64 raw, char *buf, size_t size);

#ifdef KVM_IPI_XAPIC
/*
 * A fixed or lowest-priority IPI with a vector below 16 is illegal (SDM,
 * "Error Handling"): the sender's ESR records "send illegal vector", and no
 * APIC accepts it.
 */
#define ESR_SEND_ILLEGAL_VECTOR	0x20

bool icr_illegal_vector(u64 raw);
#endif

/* The logical ID an x2APIC derives from its ID: cluster << 16 | 1 << (id & 15). */
u32 x2apic_logical_id(u32 x2apic_id);

struct ipi_vm_apics;
#if !defined(KVM_FASTPATH_SINGLE_TARGET) || defined(KVM_IPI_VM_STATE)
/* The state of one vCPU's local APIC, as far as IPIs care. */
enum ipi_apic_state {
	IPI_APIC_X2APIC,		/* enabled, x2APIC mode */
	IPI_APIC_XAPIC,		/* enabled, xAPIC mode, flat, LDR non-zero */
	IPI_APIC_SW_DISABLED,		/* x2APIC mode, SVR bit 8 clear */
	IPI_APIC_HW_DISABLED,		/* IA32_APIC_BASE.EN clear */
	IPI_APIC_XAPIC_LDR0,		/* enabled, xAPIC mode, LDR 0 */
};

/* The VM-wide state: vCPU i has x2APIC ID @x2apic_ids[i]. */
struct ipi_vm_apics {
	unsigned int nr_vcpus;
	const u32 *x2apic_ids;
	const enum ipi_apic_state *apic;	/* NULL: all IPI_APIC_X2APIC */
#ifdef KVM_IPI_VM_STATE
	const u8 *xapic_ids;	/* the ID of each in xAPIC mode; NULL: its x2APIC ID */
#endif
#ifdef KVM_FASTPATH_VPMU_GATE
	const bool *pmu_counts_instructions;	/* NULL: none counts */
#endif
};
#endif

#ifdef KVM_FASTPATH_SWITCH
/* The rule this kernel's fastpath follows (ipi_oracle.c), in words. */
#ifdef KVM_FASTPATH_SINGLE_TARGET
#define ICR_FASTPATH_RULE	"single-target"
#elif defined(KVM_FASTPATH_VPMU_GATE)
#define ICR_FASTPATH_RULE	"fast-delivery, vPMU gate"
#else
#define ICR_FASTPATH_RULE	"fast-delivery"
#endif
#endif

/*
 * Does this kernel's KVM complete a guest write of @raw by vCPU @sender (in
 * x2APIC mode) of the VM @vm in its fastpath?  @vm NULL: every APIC enabled
 * in x2APIC mode, no vPMU counting.  The rule is the kernel's (see
 * ipi_oracle.c); none completes a write that faults (reserved bits).
 */
bool icr_takes_fastpath_in(u64 raw, unsigned int sender, const struct ipi_vm_apics *vm);

/* What the platform under test lets the fastpath do. */
struct ipi_platform {
	bool fastpath_possible;	/* this KVM on this CPU can run the fastpath */
#ifdef KVM_FASTPATH_SWITCH
	bool fastpath_live;	/* ... and runs it now: kvm.x2apic_icr_fastpath */
#endif
};

/*
 * Fastpath hits a guest write of @raw must add to the sender's stat, 0 or 1,
 * in a VM whose ICR writes all exit (x2apic_enable_icr_exits()).
 */
int icr_expected_fastpath_hits(u64 raw, const struct ipi_platform *p);

/* The same, written by vCPU @sender of @vm, as icr_takes_fastpath_in(). */
int icr_expected_fastpath_hits_in(u64 raw, unsigned int sender,
				  const struct ipi_platform *p,
				  const struct ipi_vm_apics *vm);

enum ipi_fate {
	IPI_FATE_GP,		/* the WRMSR faults, nothing is sent */
	IPI_FATE_EACH,		/* every vCPU in .targets receives it once */
	IPI_FATE_ONE_OF,	/* exactly one vCPU of .targets receives it */
	IPI_FATE_UNDEFINED,	/* the SDM calls the combination invalid */
};

/* IPI_FATE_EACH with no targets: nothing is delivered. */
struct ipi_expectation {
	enum ipi_fate fate;
	u64 targets;	/* bit i: vCPU i (index into x2apic_ids) */
	u64 unchecked;	/* vCPUs whose receipt is not asserted */
};

/*
 * What must happen when vCPU @sender of @nr_vcpus (at most 64), whose x2APIC
 * IDs are @x2apic_ids, writes @raw to its ICR in x2APIC mode.
 */
struct ipi_expectation ipi_expect(u64 raw, unsigned int sender,
				  const u32 *x2apic_ids,
				  unsigned int nr_vcpus);

#ifdef KVM_IPI_XAPIC
/*
 * The same in xAPIC mode, for ICR2:ICR as one value, the flat logical model:
 * vCPU i matches when @flat_ldr[i] (LDR bits 31:24) shares a bit with the
 * destination.  MMIO writes never fault.
 */
struct ipi_expectation ipi_expect_xapic(u64 raw, unsigned int sender,
					const u32 *apic_ids,
					const u8 *flat_ldr,
					unsigned int nr_vcpus);
#endif

#ifdef KVM_IPI_PV
/*
 * What must happen when vCPU @sender of @nr_vcpus (at most 64), whose x2APIC
 * IDs are @x2apic_ids, makes KVM's PV send-IPI hypercall in 64-bit mode
 * (Documentation/virt/kvm/x86/hypercalls.rst, KVM_HC_SEND_IPI): bit i of
 * the 128-bit bitmap @bitmap_high:@bitmap_low names APIC ID @min + i, and
 * @icr gives the rest of the IPI.  An ID that no vCPU has, or that is past
 * the 32-bit APIC IDs, names nobody.  The ABI speaks of fixed IPIs and
 * NMIs, with the bitmap as the destination: any other delivery mode, and
 * an @icr with a shorthand, a logical destination mode or destination bits,
 * is outside it (IPI_FATE_UNDEFINED).
 */
struct ipi_expectation ipi_expect_pv_send(u64 icr, u64 bitmap_low,
					  u64 bitmap_high, u32 min,
					  unsigned int sender,
					  const u32 *x2apic_ids,
					  unsigned int nr_vcpus);
#endif

#ifdef KVM_IPI_VM_STATE
/*
 * What must happen when vCPU @sender of @vm, in x2APIC mode, writes @raw to
 * its ICR: the targets of ipi_expect() that can accept the IPI.
 *  - A hardware-disabled APIC accepts nothing (SDM, "Enabling or Disabling
 *    the Local APIC").
 *  - A software-disabled one accepts NMI, SMI, INIT and start-up IPIs only
 *    (SDM, "Local APIC State After It Has Been Software Disabled").
 *  - The SDM says nothing of an x2APIC sender's IPI to an APIC in xAPIC
 *    mode (the x2APIC specification puts all APICs in one mode): such a
 *    target, named by its x2APIC ID or, physically, by its xAPIC ID, is in
 *    .unchecked, and the path is checked all the same.  Tests send no
 *    lowest-priority IPI whose candidates include it.
 *  - Every APIC whose ID the physical destination names accepts (SDM,
 *    "Physical Destination Mode"), also where another APIC has the ID.
 */
struct ipi_expectation ipi_expect_in(u64 raw, unsigned int sender,
				     const struct ipi_vm_apics *vm);
#endif

/* Did the IPI land as @e says?  @got[i]: how many times vCPU i took it. */
bool ipi_received_as(const struct ipi_expectation *e, const u32 *got,
		     unsigned int nr_vcpus);

/* The IDs @ids[i] of the vCPUs in @set (bit i: vCPU i), as "{0x0,0x10}". */
int ipi_format_vcpus(u64 set, const u32 *ids, unsigned int nr_vcpus,
		     char *buf, size_t size);

const char *ipi_fate_name(enum ipi_fate fate);

#endif /* SELFTEST_KVM_IPI_ORACLE_H */
