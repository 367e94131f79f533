// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host-only unit tests of the ICR oracle: a hand-written table of ICR values
 * with the answers read off the SDM and the fastpath policies' stated rules
 * (ipi_oracle.h), not off KVM's code.  Built once per rule
 * (KVM_FASTPATH_SINGLE_TARGET, KVM_FASTPATH_VPMU_GATE, or neither), as
 * each kernel's series carries its own.  Prints KTAP.
 */
#include <stdio.h>
#include <string.h>

#include "ipi_oracle.h"

#define FIXED		((u64)ICR_DM_FIXED << ICR_DM_SHIFT)
#define LOWEST		((u64)ICR_DM_LOWEST << ICR_DM_SHIFT)
#define SMI		((u64)ICR_DM_SMI << ICR_DM_SHIFT)
#define NMI		((u64)ICR_DM_NMI << ICR_DM_SHIFT)
#define INIT		((u64)ICR_DM_INIT << ICR_DM_SHIFT)
#define SIPI		((u64)ICR_DM_STARTUP << ICR_DM_SHIFT)
#define RSVD_DM		((u64)ICR_DM_RESERVED << ICR_DM_SHIFT)
#define EXTINT		((u64)ICR_DM_EXTINT << ICR_DM_SHIFT)
#define LOGICAL		APIC_DEST_LOGICAL
#define ASSERT		APIC_INT_ASSERT
#define LEVEL		APIC_INT_LEVELTRIG
#define SH_SELF		((u64)ICR_SH_SELF << ICR_SHORTHAND_SHIFT)
#define SH_ALL		((u64)ICR_SH_ALL << ICR_SHORTHAND_SHIFT)
#define SH_ALLBUT	((u64)ICR_SH_ALL_BUT_SELF << ICR_SHORTHAND_SHIFT)
#define DEST(x)		((u64)(x) << ICR_DEST_SHIFT)
#define BCAST		DEST(0xffffffffU)
/* Each generation's rule, as stated; the model is built with one of them. */
#define ST		1u	/* 6.12: single target */
#define FD_PLAIN	2u	/* 6.18 to 7.1: fast delivery */
#define FD_GATED	4u	/* 7.2 and later: fast delivery, vPMU gate */
#define FD		(FD_PLAIN | FD_GATED)	/* both fast-delivery rules */
#if defined(KVM_FASTPATH_SINGLE_TARGET)
#define RULE		ST
#define RULE_NAME	"single-target"
#elif defined(KVM_FASTPATH_VPMU_GATE)
#define RULE		FD_GATED
#define RULE_NAME	"fast-delivery with the vPMU gate"
#else
#define RULE		FD_PLAIN
#define RULE_NAME	"fast-delivery"
#endif
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* Four vCPUs: two in logical cluster 0, two in cluster 1. */
static const u32 ids[] = { 0, 1, 16, 17 };
#define NR_VCPUS	4
#define ALL		0xfULL

struct oracle_case {
	const char *what;
	u64 icr;
	unsigned int sender;
	unsigned int fast;	/* ST, FD: the policies that take the fastpath */
	enum ipi_fate fate;
	u64 targets;
};

static const struct oracle_case cases[] = {
	{ "fixed physical to another vCPU", FIXED | ASSERT | DEST(1) | 0x40, 0, ST | FD, IPI_FATE_EACH, 0x2 },
	{ "fixed physical to self by ID", FIXED | ASSERT | DEST(16) | 0x40, 2, ST | FD, IPI_FATE_EACH, 0x4 },
	{ "fixed physical to a missing ID", FIXED | ASSERT | DEST(5) | 0x40, 0, ST | FD, IPI_FATE_EACH, 0 },
	{ "fixed physical level-triggered", FIXED | ASSERT | LEVEL | DEST(1) | 0x41, 0, ST | FD, IPI_FATE_EACH, 0x2 },
	/* broadcast was once accepted by the fastpath: it must not be */
	{ "fixed physical broadcast", FIXED | ASSERT | BCAST | 0x40, 1, 0, IPI_FATE_EACH, ALL },
	{ "fixed logical, one bit", FIXED | ASSERT | LOGICAL | DEST(0x2) | 0x40, 0, FD, IPI_FATE_EACH, 0x2 },
	{ "fixed logical, two bits", FIXED | ASSERT | LOGICAL | DEST(0x3) | 0x40, 3, FD, IPI_FATE_EACH, 0x3 },
	{ "fixed logical, other cluster", FIXED | ASSERT | LOGICAL | DEST(0x10003) | 0x40, 0, FD, IPI_FATE_EACH, 0xc },
	{ "fixed logical, bit of no vCPU", FIXED | ASSERT | LOGICAL | DEST(0x10004) | 0x40, 0, FD, IPI_FATE_EACH, 0 },
	{ "fixed logical broadcast", FIXED | ASSERT | LOGICAL | BCAST | 0x40, 0, 0, IPI_FATE_EACH, ALL },
	/* the first fastpath took shorthands: none of them is eligible */
	{ "fixed self shorthand", FIXED | ASSERT | SH_SELF | DEST(1) | 0x40, 2, FD, IPI_FATE_EACH, 0x4 },
	{ "fixed all shorthand", FIXED | ASSERT | SH_ALL | 0x40, 2, 0, IPI_FATE_EACH, ALL },
	{ "fixed all-but-self shorthand", FIXED | ASSERT | SH_ALLBUT | DEST(1) | 0x40, 1, 0, IPI_FATE_EACH, 0xd },
	{ "fixed all-but-self, physical dest ignored", FIXED | ASSERT | SH_ALLBUT | DEST(3) | 0x40, 0, 0, IPI_FATE_EACH, 0xe },
	/* Table 11-6 note 2: by shorthand, level-triggered is issued as edge */
	{ "fixed self level-triggered is sent as edge", FIXED | ASSERT | LEVEL | SH_SELF | 0x40, 0, FD, IPI_FATE_EACH, 0x1 },
	{ "lowest-priority physical", LOWEST | ASSERT | DEST(17) | 0x40, 0, FD, IPI_FATE_ONE_OF, 0x8 },
	{ "lowest-priority logical, two bits", LOWEST | ASSERT | LOGICAL | DEST(0x10003) | 0x40, 0, FD, IPI_FATE_ONE_OF, 0xc },
	{ "lowest-priority logical, nobody", LOWEST | ASSERT | LOGICAL | DEST(0x20001) | 0x40, 0, FD, IPI_FATE_EACH, 0 },
	/* note 4: all-but-self may come back to the sender; we decide the rest so */
	{ "lowest-priority self is invalid", LOWEST | ASSERT | SH_SELF | 0x40, 0, FD, IPI_FATE_UNDEFINED, 0 },
	{ "lowest-priority all is invalid", LOWEST | ASSERT | SH_ALL | 0x40, 2, 0, IPI_FATE_UNDEFINED, 0 },
	{ "lowest-priority all-but-self: one of all", LOWEST | ASSERT | SH_ALLBUT | 0x40, 2, 0, IPI_FATE_ONE_OF, ALL },
	{ "lowest-priority broadcast: one of all", LOWEST | ASSERT | BCAST | 0x40, 1, 0, IPI_FATE_ONE_OF, ALL },
	{ "nmi physical", NMI | ASSERT | DEST(16), 0, FD, IPI_FATE_EACH, 0x4 },
	{ "nmi all-but-self", NMI | ASSERT | SH_ALLBUT, 3, 0, IPI_FATE_EACH, 0x7 },
	{ "nmi self is invalid", NMI | ASSERT | SH_SELF, 3, FD, IPI_FATE_UNDEFINED, 0 },
	{ "smi logical", SMI | ASSERT | LOGICAL | DEST(0x1), 1, FD, IPI_FATE_EACH, 0x1 },
	{ "smi level-triggered is invalid", SMI | ASSERT | LEVEL | DEST(1), 0, FD, IPI_FATE_UNDEFINED, 0 },
	{ "init physical", INIT | ASSERT | DEST(1), 0, FD, IPI_FATE_EACH, 0x2 },
	{ "init level de-assert sends nothing", INIT | LEVEL | SH_ALL, 0, 0, IPI_FATE_EACH, 0 },
	{ "startup physical", SIPI | ASSERT | DEST(17) | 0x9f, 0, FD, IPI_FATE_EACH, 0x8 },
	/* illegal vectors are discarded by every receiver: nothing arrives */
	{ "fixed vector 15 is illegal", FIXED | ASSERT | DEST(1) | 0x0f, 0, ST | FD, IPI_FATE_EACH, 0 },
	{ "fixed vector 0 to all is illegal", FIXED | ASSERT | SH_ALL, 0, 0, IPI_FATE_EACH, 0 },
	{ "lowest-priority vector 2 is illegal", LOWEST | ASSERT | LOGICAL | DEST(0x3) | 0x02, 0, FD, IPI_FATE_EACH, 0 },
	{ "nmi ignores its vector field", NMI | ASSERT | DEST(1) | 0x02, 0, FD, IPI_FATE_EACH, 0x2 },
	/* the level flag has no meaning since the Pentium 4: sent as 1 */
	{ "fixed level de-assert is sent", FIXED | LEVEL | DEST(1) | 0x40, 0, ST | FD, IPI_FATE_EACH, 0x2 },
	{ "lowest-priority level de-assert is sent", LOWEST | LEVEL | LOGICAL | DEST(0x3) | 0x40, 0, FD, IPI_FATE_ONE_OF, 0x3 },
	{ "nmi level de-assert is sent", NMI | LEVEL | DEST(1), 0, FD, IPI_FATE_EACH, 0x2 },
	{ "init level de-assert, physical", INIT | LEVEL | DEST(1), 0, FD, IPI_FATE_EACH, 0 },
	{ "fixed edge, level flag clear", FIXED | DEST(1) | 0x40, 0, ST | FD, IPI_FATE_EACH, 0x2 },
	/* destinations beyond any vCPU */
	{ "fixed physical 0xfffffffe is nobody", FIXED | ASSERT | DEST(0xfffffffeU) | 0x40, 0, ST | FD, IPI_FATE_EACH, 0 },
	{ "fixed logical, absent cluster", FIXED | ASSERT | LOGICAL | DEST(0xffff0001U) | 0x40, 0, FD, IPI_FATE_EACH, 0 },
	{ "reserved delivery mode", RSVD_DM | ASSERT | DEST(1) | 0x40, 0, FD, IPI_FATE_UNDEFINED, 0 },
	{ "extint by IPI", EXTINT | ASSERT | DEST(1) | 0x40, 0, FD, IPI_FATE_UNDEFINED, 0 },
	{ "reserved bit 13", FIXED | ASSERT | (1ULL << 13) | DEST(1) | 0x40, 0, 0, IPI_FATE_GP, 0 },
	{ "reserved bit 17", FIXED | ASSERT | (1ULL << 17) | DEST(1) | 0x40, 0, 0, IPI_FATE_GP, 0 },
	{ "reserved bit 31", FIXED | ASSERT | (1ULL << 31) | DEST(1) | 0x40, 0, 0, IPI_FATE_GP, 0 },
	{ "reserved bit 16 with an illegal vector", FIXED | ASSERT | (1ULL << 16) | DEST(1) | 0x01, 0, 0, IPI_FATE_GP, 0 },
	{ "reserved bit 20 in a level de-assert", INIT | LEVEL | (1ULL << 20) | DEST(1), 0, 0, IPI_FATE_GP, 0 },
	{ "bit 12 is not modelled as reserved", FIXED | ASSERT | APIC_ICR_BUSY | DEST(1) | 0x40, 0, ST | FD, IPI_FATE_EACH, 0x2 },
};

/* xAPIC: 8-bit destinations in ICR2[31:24], flat logical model. */
#define XDEST(x)	((u64)(x) << XAPIC_DEST_SHIFT)
static const u8 flat_ldr[] = { 0x01, 0x02, 0x04, 0x08 };

static const struct oracle_case xapic_cases[] = {
	{ "xapic fixed physical", FIXED | ASSERT | XDEST(16) | 0x40, 0, 0, IPI_FATE_EACH, 0x4 },
	{ "xapic fixed physical broadcast 0xff", FIXED | ASSERT | XDEST(0xff) | 0x40, 0, 0, IPI_FATE_EACH, ALL },
	{ "xapic fixed physical, no such ID", FIXED | ASSERT | XDEST(5) | 0x40, 0, 0, IPI_FATE_EACH, 0 },
	{ "xapic fixed logical, two bits", FIXED | ASSERT | LOGICAL | XDEST(0x06) | 0x40, 0, 0, IPI_FATE_EACH, 0x6 },
	{ "xapic fixed logical broadcast 0xff", FIXED | ASSERT | LOGICAL | XDEST(0xff) | 0x40, 0, 0, IPI_FATE_EACH, ALL },
	{ "xapic lowest-priority logical", LOWEST | ASSERT | LOGICAL | XDEST(0x0c) | 0x40, 0, 0, IPI_FATE_ONE_OF, 0xc },
	{ "xapic lowest-priority broadcast 0xff: one of all", LOWEST | ASSERT | XDEST(0xff) | 0x40, 0, 0, IPI_FATE_ONE_OF, ALL },
	{ "xapic nmi all-but-self", NMI | ASSERT | SH_ALLBUT, 2, 0, IPI_FATE_EACH, 0xb },
	{ "xapic reserved bit 13 does not fault", FIXED | ASSERT | (1ULL << 13) | XDEST(1) | 0x40, 0, 0, IPI_FATE_EACH, 0x2 },
};

struct format_case {
	u64 icr;
	const char *text;
};

static const struct format_case formats[] = {
	{ FIXED | ASSERT | LOGICAL | DEST(0x2) | 0x40,
	  "fixed logical dest=0x2 shorthand=none edge vector=0x40" },
	{ NMI | ASSERT | SH_ALLBUT,
	  "nmi physical dest=0x0 shorthand=all-but-self edge vector=0x0" },
	{ INIT | LEVEL | SH_ALL,
	  "init physical dest=0x0 shorthand=all level-deassert vector=0x0" },
	{ FIXED | ASSERT | (3ULL << 16) | BCAST | 0xef,
	  "fixed physical dest=0xffffffff shorthand=none edge vector=0xef reserved=0x30000" },
};

static unsigned int test_nr, failures;

static void report(bool ok, const char *fmt_what, const char *what)
{
	printf("%s %u %s%s\n", ok ? "ok" : "not ok", ++test_nr, fmt_what, what);
	if (!ok)
		failures++;
}

/* The fastpath answers of the model's rule for @c, through every platform. */
static bool check_rule(const struct oracle_case *c, const char *buf)
{
	const struct ipi_platform live = { .fastpath_possible = true, .fastpath_live = true };
	const struct ipi_platform slow = { .fastpath_possible = true, .fastpath_live = false };
	const struct ipi_platform none = { .fastpath_possible = false, .fastpath_live = true };
	bool fast = c->fast & RULE;

	if (icr_takes_fastpath_in(c->icr, 0, NULL) != fast) {
		printf("# %s: %s says %s, want %s\n", buf, RULE_NAME,
		       fast ? "slow" : "fast", fast ? "fast" : "slow");
		return false;
	}
	if (icr_expected_fastpath_hits(c->icr, &live) != fast ||
	    icr_expected_fastpath_hits(c->icr, &slow) != 0 ||
	    icr_expected_fastpath_hits(c->icr, &none) != 0) {
		printf("# %s: %s: wrong expected fastpath hits\n", buf, RULE_NAME);
		return false;
	}
	return true;
}

static void check_case(const struct oracle_case *c)
{
	struct ipi_expectation e = ipi_expect(c->icr, c->sender, ids, NR_VCPUS);
	bool ok;
	char buf[128];

	icr_format(c->icr, buf, sizeof(buf));
	ok = check_rule(c, buf);
	if (e.fate != c->fate ||
	    ((c->fate == IPI_FATE_EACH || c->fate == IPI_FATE_ONE_OF) &&
	     e.targets != c->targets)) {
		printf("# %s sent by vCPU %u: %s 0x%llx, want %s 0x%llx\n", buf,
		       c->sender, ipi_fate_name(e.fate),
		       (unsigned long long)e.targets, ipi_fate_name(c->fate),
		       (unsigned long long)c->targets);
		ok = false;
	}
	report(ok, "oracle: ", c->what);
}

static void check_illegal_vector(void)
{
	bool ok = icr_illegal_vector(FIXED | ASSERT | DEST(1) | 0x0f) &&
		  icr_illegal_vector(LOWEST | ASSERT | SH_ALLBUT) &&
		  !icr_illegal_vector(FIXED | ASSERT | DEST(1) | 0x10) &&
		  !icr_illegal_vector(NMI | ASSERT | DEST(1)) &&
		  !icr_illegal_vector(INIT | LEVEL | DEST(1));

	report(ok, "", "illegal vectors: fixed and lowest-priority below 16 only");
}

/* VM-wide APIC states: vCPU 3 (ID 17, cluster 1) is the odd one. */
static const enum ipi_apic_state one_xapic[] = {
	IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_XAPIC };
static const enum ipi_apic_state one_hw_off[] = {
	IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_HW_DISABLED };
static const enum ipi_apic_state one_sw_off[] = {
	IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_SW_DISABLED };
static const enum ipi_apic_state one_xapic_ldr0[] = {
	IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_X2APIC, IPI_APIC_XAPIC_LDR0 };
/* vCPU 3's xAPIC ID: vCPU 1's x2APIC ID, or one that no vCPU has. */
static const u8 xapic_id_aliased[] = { 0, 1, 16, 1 };
static const u8 xapic_id_moved[] = { 0, 1, 16, 5 };

struct vm_case {
	const char *what;
	const enum ipi_apic_state *apic;
	u64 icr;
	unsigned int fast;	/* ST, FD */
	enum ipi_fate fate;
	u64 targets, unchecked;
};

static const struct vm_case vm_cases[] = {
	{ "one xAPIC: fixed physical stays fast", one_xapic,
	  FIXED | ASSERT | DEST(1) | 0x40, ST | FD, IPI_FATE_EACH, 0x2, 0 },
	{ "one xAPIC: fixed logical is not routable", one_xapic,
	  FIXED | ASSERT | LOGICAL | DEST(0x2) | 0x40, 0, IPI_FATE_EACH, 0x2, 0 },
	{ "one xAPIC: nmi logical to it, unchecked", one_xapic,
	  NMI | ASSERT | LOGICAL | DEST(0x10002), 0, IPI_FATE_EACH, 0, 0x8 },
	{ "one xAPIC: self stays fast", one_xapic,
	  FIXED | ASSERT | SH_SELF | 0x40, FD, IPI_FATE_EACH, 0x1, 0 },
	{ "one xAPIC: all-but-self, it unchecked", one_xapic,
	  FIXED | ASSERT | SH_ALLBUT | 0x40, 0, IPI_FATE_EACH, 0x6, 0x8 },
	{ "one xAPIC with LDR 0: fixed logical stays fast", one_xapic_ldr0,
	  FIXED | ASSERT | LOGICAL | DEST(0x2) | 0x40, FD, IPI_FATE_EACH, 0x2, 0 },
	{ "one xAPIC with LDR 0: nmi logical to its cluster, unchecked", one_xapic_ldr0,
	  NMI | ASSERT | LOGICAL | DEST(0x10002), FD, IPI_FATE_EACH, 0, 0x8 },
	{ "one xAPIC with LDR 0: fixed physical stays fast", one_xapic_ldr0,
	  FIXED | ASSERT | DEST(1) | 0x40, ST | FD, IPI_FATE_EACH, 0x2, 0 },
	{ "one hardware-disabled: logical still fast, it gets nothing", one_hw_off,
	  NMI | ASSERT | LOGICAL | DEST(0x10003), FD, IPI_FATE_EACH, 0x4, 0 },
	{ "one hardware-disabled: physical to it, nobody", one_hw_off,
	  FIXED | ASSERT | DEST(17) | 0x40, ST | FD, IPI_FATE_EACH, 0, 0 },
	{ "one software-disabled: fixed logical fast, not accepted", one_sw_off,
	  FIXED | ASSERT | LOGICAL | DEST(0x10003) | 0x40, FD, IPI_FATE_EACH, 0x4, 0 },
	{ "one software-disabled: nmi accepted", one_sw_off,
	  NMI | ASSERT | DEST(17), FD, IPI_FATE_EACH, 0x8, 0 },
	{ "one software-disabled: lowest-priority picks another", one_sw_off,
	  LOWEST | ASSERT | LOGICAL | DEST(0x10003) | 0x40, FD, IPI_FATE_ONE_OF, 0x4, 0 },
	{ "one software-disabled: lowest-priority to it alone, nobody", one_sw_off,
	  LOWEST | ASSERT | LOGICAL | DEST(0x10002) | 0x40, FD, IPI_FATE_EACH, 0, 0 },
};

/* vCPU 3 in xAPIC mode with LDR 0, with the xAPIC IDs given. */
struct xapic_id_case {
	const u8 *xapic_ids;
	struct vm_case c;
};

static const struct xapic_id_case xapic_id_cases[] = {
	{ xapic_id_aliased, { "aliases a peer's: fixed physical to it slow, the peer takes it",
	  one_xapic_ldr0, FIXED | ASSERT | DEST(1) | 0x40, ST, IPI_FATE_EACH, 0x2, 0x8 } },
	{ xapic_id_aliased, { "aliases a peer's: fixed logical slow", one_xapic_ldr0,
	  FIXED | ASSERT | LOGICAL | DEST(0x2) | 0x40, 0, IPI_FATE_EACH, 0x2, 0 } },
	{ xapic_id_aliased, { "aliases a peer's: nmi physical to another slow",
	  one_xapic_ldr0, NMI | ASSERT | DEST(16), 0, IPI_FATE_EACH, 0x4, 0 } },
	{ xapic_id_aliased, { "aliases a peer's: physical to its x2APIC ID, unchecked",
	  one_xapic_ldr0, FIXED | ASSERT | DEST(17) | 0x40, ST, IPI_FATE_EACH, 0, 0x8 } },
	{ xapic_id_aliased, { "aliases a peer's: self stays fast", one_xapic_ldr0,
	  FIXED | ASSERT | SH_SELF | 0x40, FD, IPI_FATE_EACH, 0x1, 0 } },
	{ xapic_id_moved, { "moved, no alias: fixed physical to it stays fast, unchecked",
	  one_xapic_ldr0, FIXED | ASSERT | DEST(5) | 0x40, ST | FD, IPI_FATE_EACH, 0, 0x8 } },
	{ xapic_id_moved, { "moved, no alias: fixed physical to a peer stays fast",
	  one_xapic_ldr0, FIXED | ASSERT | DEST(1) | 0x40, ST | FD, IPI_FATE_EACH, 0x2, 0 } },
	{ xapic_id_moved, { "moved, no alias: fixed logical stays fast", one_xapic_ldr0,
	  FIXED | ASSERT | LOGICAL | DEST(0x2) | 0x40, FD, IPI_FATE_EACH, 0x2, 0 } },
};

static bool same_expectation(const struct ipi_expectation *a,
			     const struct ipi_expectation *b)
{
	return a->fate == b->fate && a->targets == b->targets && a->unchecked == b->unchecked;
}

#ifdef KVM_FASTPATH_VPMU_GATE
/* Whose mediated vPMU counts instructions retired. */
static const bool pmu_none[] = { false, false, false, false };
static const bool pmu_0[] = { true, false, false, false };
static const bool pmu_1[] = { false, true, false, false };
static const bool pmu_2[] = { false, false, true, false };

/*
 * The vPMU gate (7.2, 7.3): vCPU @sender writes while the vCPUs of @pmu have a mediated
 * vPMU counting instructions retired.  .fast: FD_PLAIN alone where only the
 * gate keeps the write off the fastpath.
 */
struct pmu_case {
	const char *what;
	const bool *pmu;
	unsigned int sender;
	const enum ipi_apic_state *apic;
	u64 icr;
	unsigned int fast;	/* ST, FD, FD_PLAIN */
	enum ipi_fate fate;
	u64 targets;
};

static const struct pmu_case pmu_cases[] = {
	{ "sender's vPMU counts: fixed physical slow under the gate", pmu_0, 0, NULL,
	  FIXED | ASSERT | DEST(1) | 0x40, ST | FD_PLAIN, IPI_FATE_EACH, 0x2 },
	{ "sender's vPMU counts: fixed logical slow under the gate", pmu_0, 0, NULL,
	  FIXED | ASSERT | LOGICAL | DEST(0x2) | 0x40, FD_PLAIN, IPI_FATE_EACH, 0x2 },
	{ "sender's vPMU counts: self slow under the gate", pmu_0, 0, NULL,
	  FIXED | ASSERT | SH_SELF | 0x40, FD_PLAIN, IPI_FATE_EACH, 0x1 },
	{ "sender's vPMU counts: nmi physical slow under the gate", pmu_0, 0, NULL,
	  NMI | ASSERT | DEST(16), FD_PLAIN, IPI_FATE_EACH, 0x4 },
	{ "sender's vPMU counts: lowest-priority slow under the gate", pmu_0, 0, NULL,
	  LOWEST | ASSERT | LOGICAL | DEST(0x10003) | 0x40, FD_PLAIN, IPI_FATE_ONE_OF, 0xc },
	{ "sender's vPMU counts: all-but-self slow as ever", pmu_0, 0, NULL,
	  FIXED | ASSERT | SH_ALLBUT | 0x40, 0, IPI_FATE_EACH, 0xe },
	{ "sender's vPMU counts: reserved bit still #GP", pmu_0, 0, NULL,
	  FIXED | ASSERT | (1ULL << 13) | DEST(1) | 0x40, 0, IPI_FATE_GP, 0 },
	{ "sender's vPMU counts, one xAPIC: fixed physical slow under the gate",
	  pmu_0, 0, one_xapic,
	  FIXED | ASSERT | DEST(1) | 0x40, ST | FD_PLAIN, IPI_FATE_EACH, 0x2 },
	{ "sender vCPU 2's vPMU counts: fixed physical slow under the gate", pmu_2, 2, NULL,
	  FIXED | ASSERT | DEST(1) | 0x40, ST | FD_PLAIN, IPI_FATE_EACH, 0x2 },
	{ "target's vPMU counts: fixed physical to it stays fast", pmu_1, 0, NULL,
	  FIXED | ASSERT | DEST(1) | 0x40, ST | FD, IPI_FATE_EACH, 0x2 },
	{ "another vCPU's vPMU counts: fixed logical stays fast", pmu_2, 0, NULL,
	  FIXED | ASSERT | LOGICAL | DEST(0x3) | 0x40, FD, IPI_FATE_EACH, 0x3 },
	{ "sender vCPU 2, vCPU 0's vPMU counts: fixed physical stays fast", pmu_0, 2, NULL,
	  FIXED | ASSERT | DEST(17) | 0x40, ST | FD, IPI_FATE_EACH, 0x8 },
	{ "no vPMU counts: fixed physical fast", pmu_none, 0, NULL,
	  FIXED | ASSERT | DEST(1) | 0x40, ST | FD, IPI_FATE_EACH, 0x2 },
};

#endif

/*
 * @c written by vCPU @sender while the vCPUs of @pmu count instructions,
 * those in xAPIC mode with the IDs @xapic_ids.
 */
static bool check_vm(const struct vm_case *c, const bool *pmu, unsigned int sender,
		     const u8 *xapic_ids)
{
	const struct ipi_vm_apics vm = {
		.nr_vcpus = NR_VCPUS, .x2apic_ids = ids, .apic = c->apic,
		.xapic_ids = xapic_ids,
#ifdef KVM_FASTPATH_VPMU_GATE
		.pmu_counts_instructions = pmu,
#endif
	};
	const struct ipi_vm_apics no_pmu = {
		.nr_vcpus = NR_VCPUS, .x2apic_ids = ids, .apic = c->apic,
		.xapic_ids = xapic_ids,
	};
	struct ipi_expectation e = ipi_expect_in(c->icr, sender, &vm);
	struct ipi_expectation e_no_pmu = ipi_expect_in(c->icr, sender, &no_pmu);
	const struct ipi_platform live = { .fastpath_possible = true, .fastpath_live = true };
	bool fast = c->fast & RULE;
	bool ok = true;

	if (icr_takes_fastpath_in(c->icr, sender, &vm) != fast ||
	    icr_expected_fastpath_hits_in(c->icr, sender, &live, &vm) != fast) {
		printf("# %s: %s says %s, want %s\n", c->what, RULE_NAME,
		       fast ? "slow" : "fast", fast ? "fast" : "slow");
		ok = false;
	}
	if (!same_expectation(&e, &e_no_pmu)) {
		printf("# %s: the vPMU changed what is delivered\n", c->what);
		ok = false;
	}
	if (e.fate != c->fate || e.targets != c->targets || e.unchecked != c->unchecked) {
		printf("# %s: %s 0x%llx unchecked 0x%llx, want %s 0x%llx unchecked 0x%llx\n",
		       c->what, ipi_fate_name(e.fate), (unsigned long long)e.targets,
		       (unsigned long long)e.unchecked, ipi_fate_name(c->fate),
		       (unsigned long long)c->targets, (unsigned long long)c->unchecked);
		ok = false;
	}
	return ok;
}

static void check_vm_case(const struct vm_case *c)
{
	report(check_vm(c, NULL, 0, NULL), "vm state: ", c->what);
}

static void check_xapic_id_case(const struct xapic_id_case *c)
{
	report(check_vm(&c->c, NULL, 0, c->xapic_ids), "vm state: xAPIC ID ", c->c.what);
}

#ifdef KVM_FASTPATH_VPMU_GATE
static void check_pmu_case(const struct pmu_case *c)
{
	const struct vm_case vm_case = {
		.what = c->what, .apic = c->apic, .icr = c->icr, .fast = c->fast,
		.fate = c->fate, .targets = c->targets,
	};

	report(check_vm(&vm_case, c->pmu, c->sender, NULL), "vpmu: ", c->what);
}
#endif

static void check_xapic_case(const struct oracle_case *c)
{
	struct ipi_expectation e = ipi_expect_xapic(c->icr, c->sender, ids, flat_ldr, NR_VCPUS);
	bool ok = e.fate == c->fate && e.targets == c->targets;

	if (!ok)
		printf("# %s: %s 0x%llx, want %s 0x%llx\n", c->what,
		       ipi_fate_name(e.fate), (unsigned long long)e.targets,
		       ipi_fate_name(c->fate), (unsigned long long)c->targets);
	report(ok, "oracle: ", c->what);
}

static void check_format(const struct format_case *c)
{
	char buf[128];

	icr_format(c->icr, buf, sizeof(buf));
	if (strcmp(buf, c->text))
		printf("# got  \"%s\"\n# want \"%s\"\n", buf, c->text);
	report(!strcmp(buf, c->text), "format: ", c->text);
}

#ifdef KVM_IPI_PV
/* The PV send-IPI hypercall's bitmap, read off hypercalls.rst. */
static const u32 pv_ids[] = { 0, 1, 70, 0xfffffffe };

struct pv_case {
	const char *what;
	u64 icr;
	u64 low, high;
	u32 min;
	enum ipi_fate fate;
	u64 targets;
};

#define PV_FIXED	(FIXED | ASSERT | 0x40)

static const struct pv_case pv_cases[] = {
	{ "low bit 1: APIC ID 1", PV_FIXED, 0x2, 0, 0, IPI_FATE_EACH, 0x2 },
	{ "high bit 6: APIC ID 70", PV_FIXED, 0, 1ULL << 6, 0, IPI_FATE_EACH, 0x4 },
	{ "base 69, low bit 1: APIC ID 70", NMI | ASSERT, 0x2, 0, 69, IPI_FATE_EACH, 0x4 },
	{ "base 1: APIC ID 0 is below it", PV_FIXED, 0x3, 0, 1, IPI_FATE_EACH, 0x2 },
	{ "every bit, base 0", PV_FIXED, ~0ULL, ~0ULL, 0, IPI_FATE_EACH, 0x7 },
	{ "IDs no vCPU has", PV_FIXED, 0x1ULL << 2 | 1ULL << 63, 1ULL << 5, 0,
	  IPI_FATE_EACH, 0 },
	{ "base above every ID", PV_FIXED, ~0ULL, ~0ULL, 0x1000, IPI_FATE_EACH, 0 },
	{ "base 0xfffffffe, bit 0", PV_FIXED, 0x1, 0, 0xfffffffe, IPI_FATE_EACH, 0x8 },
	{ "bits past 2^32 name nobody", PV_FIXED, ~0ULL << 2, ~0ULL, 0xfffffffe,
	  IPI_FATE_EACH, 0 },
	{ "the sender itself", PV_FIXED, 0x1, 0, 0, IPI_FATE_EACH, 0x1 },
	{ "an illegal vector reaches nobody", FIXED | ASSERT | 0x0f, 0x2, 0, 0, IPI_FATE_EACH, 0 },
	{ "a shorthand is outside the ABI", PV_FIXED | SH_SELF, 0x2, 0, 0,
	  IPI_FATE_UNDEFINED, 0 },
	{ "a logical destination is outside the ABI", PV_FIXED | LOGICAL, 0x2, 0, 0,
	  IPI_FATE_UNDEFINED, 0 },
	{ "destination bits are outside the ABI", PV_FIXED | DEST(1), 0x2, 0, 0,
	  IPI_FATE_UNDEFINED, 0 },
	{ "lowest priority is outside the ABI", LOWEST | ASSERT | 0x40, 0x2, 0, 0,
	  IPI_FATE_UNDEFINED, 0 },
};

static void check_pv_case(const struct pv_case *c)
{
	struct ipi_expectation e = ipi_expect_pv_send(c->icr, c->low, c->high, c->min,
						      0, pv_ids, ARRAY_LEN(pv_ids));
	bool ok = e.fate == c->fate && e.targets == c->targets;

	if (!ok)
		printf("# %s: fate %s targets 0x%llx, want %s 0x%llx\n", c->what,
		       ipi_fate_name(e.fate), (unsigned long long)e.targets,
		       ipi_fate_name(c->fate), (unsigned long long)c->targets);
	report(ok, "PV send-IPI: ", c->what);
}
#endif

static void check_round_trip(void)
{
	unsigned int i;
	bool ok = true;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct icr_fields icr = icr_decode(cases[i].icr);
		u64 want = cases[i].icr & ~APIC_ICR_BUSY;

		if (icr_encode(&icr) != want) {
			printf("# encode(decode(0x%llx)) = 0x%llx\n",
			       (unsigned long long)want,
			       (unsigned long long)icr_encode(&icr));
			ok = false;
		}
	}
	report(ok, "", "decode/encode round trip");
}

struct receipt_case {
	const char *what;
	struct ipi_expectation e;
	u32 got[NR_VCPUS];
	bool ok;
};

/* Receipts read off the fates' definitions (ipi_oracle.h), right and wrong. */
static const struct receipt_case receipts[] = {
	{ "each: every target once", { IPI_FATE_EACH, 0x5, 0 }, { 1, 0, 1, 0 }, true },
	{ "each: a target missed", { IPI_FATE_EACH, 0x5, 0 }, { 1, 0, 0, 0 }, false },
	{ "each: a target twice", { IPI_FATE_EACH, 0x5, 0 }, { 1, 0, 2, 0 }, false },
	{ "each: one more vCPU", { IPI_FATE_EACH, 0x5, 0 }, { 1, 1, 1, 0 }, false },
	{ "each: nobody, nothing", { IPI_FATE_EACH, 0, 0 }, { 0, 0, 0, 0 }, true },
	{ "each: nobody, something", { IPI_FATE_EACH, 0, 0 }, { 0, 0, 0, 1 }, false },
	{ "one-of: one target", { IPI_FATE_ONE_OF, 0xc, 0 }, { 0, 0, 0, 1 }, true },
	{ "one-of: two targets", { IPI_FATE_ONE_OF, 0xc, 0 }, { 0, 0, 1, 1 }, false },
	{ "one-of: none", { IPI_FATE_ONE_OF, 0xc, 0 }, { 0, 0, 0, 0 }, false },
	{ "one-of: outside the set", { IPI_FATE_ONE_OF, 0xc, 0 }, { 1, 0, 0, 0 }, false },
	{ "one-of: one target twice", { IPI_FATE_ONE_OF, 0xc, 0 }, { 0, 0, 2, 0 }, false },
	{ "#GP: nothing", { IPI_FATE_GP, 0, 0 }, { 0, 0, 0, 0 }, true },
	{ "#GP: something", { IPI_FATE_GP, 0, 0 }, { 0, 1, 0, 0 }, false },
	{ "undefined: anything", { IPI_FATE_UNDEFINED, 0, 0 }, { 2, 1, 0, 3 }, true },
	{ "each: unchecked vCPU took it", { IPI_FATE_EACH, 0x1, 0x8 }, { 1, 0, 0, 1 }, true },
	{ "each: unchecked vCPU did not", { IPI_FATE_EACH, 0x1, 0x8 }, { 1, 0, 0, 0 }, true },
	{ "each: unchecked, a checked one missed", { IPI_FATE_EACH, 0x1, 0x8 }, { 0, 0, 0, 1 }, false },
	{ "one-of: only the unchecked took it", { IPI_FATE_ONE_OF, 0x6, 0x8 }, { 0, 0, 0, 1 }, false },
};

static void check_receipt(const struct receipt_case *c)
{
	bool got = ipi_received_as(&c->e, c->got, NR_VCPUS);

	if (got != c->ok)
		printf("# %s: ipi_received_as() says %s\n", c->what, got ? "yes" : "no");
	report(got == c->ok, "receipt: ", c->what);
}

static void check_format_vcpus(void)
{
	struct {
		char tiny[6];
		char guard[26];	/* what a write past tiny would hit */
	} cut;
	char buf[32], untouched[sizeof(cut.guard)];
	bool ok;

	ipi_format_vcpus(0xd, ids, NR_VCPUS, buf, sizeof(buf));
	ok = !strcmp(buf, "{0x0,0x10,0x11}");
	ipi_format_vcpus(0, ids, NR_VCPUS, buf, sizeof(buf));
	ok &= !strcmp(buf, "{}");
	memset(cut.guard, 0x5a, sizeof(cut.guard));
	memcpy(untouched, cut.guard, sizeof(untouched));
	ipi_format_vcpus(0xf, ids, NR_VCPUS, cut.tiny, sizeof(cut.tiny));
	ok &= strlen(cut.tiny) == sizeof(cut.tiny) - 1;
	ok &= !memcmp(cut.guard, untouched, sizeof(untouched));
	report(ok, "", "format: vCPU sets by ID, cut at the buffer's end");
}

int main(void)
{
	unsigned int nr_cases = sizeof(cases) / sizeof(cases[0]);
	unsigned int nr_xapic = sizeof(xapic_cases) / sizeof(xapic_cases[0]);
	unsigned int nr_formats = sizeof(formats) / sizeof(formats[0]);
	unsigned int nr_vm = sizeof(vm_cases) / sizeof(vm_cases[0]);
	unsigned int nr_xapic_id = ARRAY_LEN(xapic_id_cases);
#ifdef KVM_FASTPATH_VPMU_GATE
	unsigned int nr_pmu = sizeof(pmu_cases) / sizeof(pmu_cases[0]);
#else
	unsigned int nr_pmu = 0;
#endif
	unsigned int nr_receipts = sizeof(receipts) / sizeof(receipts[0]);
#ifdef KVM_IPI_PV
	unsigned int nr_pv = ARRAY_LEN(pv_cases);
#else
	unsigned int nr_pv = 0;
#endif
	unsigned int i;

	printf("TAP version 13\n# the rule of %s\n1..%u\n", RULE_NAME,
	       nr_cases + nr_xapic + nr_formats + nr_vm + nr_xapic_id + nr_pmu + nr_receipts + nr_pv + 3);
	for (i = 0; i < nr_cases; i++)
		check_case(&cases[i]);
	for (i = 0; i < nr_xapic; i++)
		check_xapic_case(&xapic_cases[i]);
	for (i = 0; i < nr_formats; i++)
		check_format(&formats[i]);
	for (i = 0; i < nr_vm; i++)
		check_vm_case(&vm_cases[i]);
	for (i = 0; i < nr_xapic_id; i++)
		check_xapic_id_case(&xapic_id_cases[i]);
#ifdef KVM_FASTPATH_VPMU_GATE
	for (i = 0; i < nr_pmu; i++)
		check_pmu_case(&pmu_cases[i]);
#endif
	for (i = 0; i < nr_receipts; i++)
		check_receipt(&receipts[i]);
#ifdef KVM_IPI_PV
	for (i = 0; i < nr_pv; i++)
		check_pv_case(&pv_cases[i]);
#endif
	check_format_vcpus();
	check_round_trip();
	check_illegal_vector();
	printf("# Totals: pass:%u fail:%u\n", test_nr - failures, failures);
	return failures ? 1 : 0;
}
