// SPDX-License-Identifier: GPL-2.0-only
/*
 * Architectural model of x2APIC ICR writes; see ipi_oracle.h.
 */
#include <stdio.h>
#include <string.h>

#include "ipi_oracle.h"

static const char * const dm_names[] = {
	[ICR_DM_FIXED] = "fixed",
	[ICR_DM_LOWEST] = "lowest-priority",
	[ICR_DM_SMI] = "smi",
	[ICR_DM_RESERVED] = "reserved-mode",
	[ICR_DM_NMI] = "nmi",
	[ICR_DM_INIT] = "init",
	[ICR_DM_STARTUP] = "startup",
	[ICR_DM_EXTINT] = "extint",
};

static const char * const shorthand_names[] = {
	[ICR_SH_NONE] = "none",
	[ICR_SH_SELF] = "self",
	[ICR_SH_ALL] = "all",
	[ICR_SH_ALL_BUT_SELF] = "all-but-self",
};

struct icr_fields icr_decode(u64 raw)
{
	struct icr_fields icr = {
		.vector = raw & APIC_VECTOR_MASK,
		.mode = (raw & APIC_DM_FIXED_MASK) >> ICR_DM_SHIFT,
		.logical = raw & APIC_DEST_LOGICAL,
		.level_assert = raw & APIC_INT_ASSERT,
		.level_trigger = raw & APIC_INT_LEVELTRIG,
		.shorthand = (raw & APIC_DEST_ALLBUT) >> ICR_SHORTHAND_SHIFT,
		.dest = raw >> ICR_DEST_SHIFT,
		.reserved = raw & X2APIC_RSVD_BITS_MASK,
	};

	return icr;
}

#ifdef KVM_ICR_HOSTILE_HELPERS
u64 icr_encode(const struct icr_fields *icr)
{
	return icr->vector |
	       (u64)icr->mode << ICR_DM_SHIFT |
	       (icr->logical ? APIC_DEST_LOGICAL : 0) |
	       (icr->level_assert ? APIC_INT_ASSERT : 0) |
	       (icr->level_trigger ? APIC_INT_LEVELTRIG : 0) |
	       (u64)icr->shorthand << ICR_SHORTHAND_SHIFT |
	       (u64)icr->dest << ICR_DEST_SHIFT |
	       (icr->reserved & X2APIC_RSVD_BITS_MASK);
}
#endif

int icr_format(u64 raw, char *buf, size_t size)
{
	struct icr_fields icr = icr_decode(raw);
	char extra[48] = "";

	if (icr.reserved)
		snprintf(extra, sizeof(extra), " reserved=0x%llx",
			 (unsigned long long)icr.reserved);

	return snprintf(buf, size, "%s %s dest=0x%x shorthand=%s %s%s vector=0x%x%s",
			dm_names[icr.mode], icr.logical ? "logical" : "physical",
			icr.dest, shorthand_names[icr.shorthand],
			icr.level_trigger ? "level" : "edge",
			icr.level_trigger && !icr.level_assert ? "-deassert" : "",
			icr.vector, extra);
}

#if !defined(KVM_FASTPATH_SINGLE_TARGET) || defined(KVM_IPI_VM_STATE)
static enum ipi_apic_state apic_state_of(const struct ipi_vm_apics *vm, unsigned int i)
{
	return vm && vm->apic ? vm->apic[i] : IPI_APIC_X2APIC;
}
#endif

#ifdef KVM_IPI_VM_STATE
static bool apic_in_xapic_mode(const struct ipi_vm_apics *vm, unsigned int i)
{
	enum ipi_apic_state s = apic_state_of(vm, i);

	return s == IPI_APIC_XAPIC || s == IPI_APIC_XAPIC_LDR0;
}

/* vCPU @i's physical APIC ID: in xAPIC mode, its xAPIC ID. */
static u32 apic_id_of(const struct ipi_vm_apics *vm, unsigned int i)
{
	if (apic_in_xapic_mode(vm, i) && vm->xapic_ids)
		return vm->xapic_ids[i];
	return vm->x2apic_ids[i];
}
#endif

#ifdef KVM_FASTPATH_SINGLE_TARGET
/*
 * This kernel's fastpath takes a fixed IPI to one physical destination,
 * without shorthand and not to the broadcast ID, whatever the other APICs.
 */
static bool rule_takes(const struct icr_fields *icr, unsigned int sender,
		       const struct ipi_vm_apics *vm)
{
	return icr->mode == ICR_DM_FIXED && !icr->logical &&
	       icr->shorthand == ICR_SH_NONE && icr->dest != X2APIC_BROADCAST;
}
#else
/*
 * Logical IDs resolve through the APIC map only while every APIC that is
 * software-enabled and has a logical ID (a non-zero LDR) uses the same
 * logical model.  The sender is in x2APIC mode, so no xAPIC one may have.
 */
static bool logical_map_usable(const struct ipi_vm_apics *vm)
{
	unsigned int i;

	for (i = 0; vm && i < vm->nr_vcpus; i++)
		if (apic_state_of(vm, i) == IPI_APIC_XAPIC)
			return false;
	return true;
}

#ifdef KVM_FASTPATH_VPMU_GATE
/* vCPU @i's mediated vPMU has a counter enabled that counts instructions. */
static bool pmu_counts_instructions(const struct ipi_vm_apics *vm, unsigned int i)
{
	return vm && vm->pmu_counts_instructions && i < vm->nr_vcpus &&
	       vm->pmu_counts_instructions[i];
}
#endif

#ifdef KVM_IPI_VM_STATE
/*
 * The map holds one APIC per physical ID: there is none while two APICs
 * that are not hardware-disabled have one ID (an xAPIC one's ID aliasing
 * another's), and only self-IPIs go without it.
 */
static bool apic_map_exists(const struct ipi_vm_apics *vm)
{
	unsigned int i, j;

	for (i = 0; vm && i < vm->nr_vcpus; i++)
		for (j = 0; j < i; j++)
			if (apic_state_of(vm, i) != IPI_APIC_HW_DISABLED &&
			    apic_state_of(vm, j) != IPI_APIC_HW_DISABLED &&
			    apic_id_of(vm, i) == apic_id_of(vm, j))
				return false;
	return true;
}
#endif

/*
 * This kernel's fastpath takes any IPI it can deliver through its map of the
 * VM's APICs: to self, or to the destination field unless that is the
 * broadcast ID (which goes to every APIC, as ALL does); by logical ID only
 * while the map resolves them.
 */
static bool rule_takes(const struct icr_fields *icr, unsigned int sender,
		       const struct ipi_vm_apics *vm)
{
#ifdef KVM_FASTPATH_VPMU_GATE
	/*
	 * No WRMSR of a sender whose vPMU counts instructions retired is
	 * emulated in the fastpath: the emulated instruction must be counted.
	 */
	if (pmu_counts_instructions(vm, sender))
		return false;
#endif
	if (icr->shorthand == ICR_SH_SELF)
		return true;
	if (icr->shorthand != ICR_SH_NONE || icr->dest == X2APIC_BROADCAST)
		return false;
#ifdef KVM_IPI_VM_STATE
	if (!apic_map_exists(vm))
		return false;
#endif
	return !icr->logical || logical_map_usable(vm);
}
#endif

bool icr_takes_fastpath_in(u64 raw, unsigned int sender, const struct ipi_vm_apics *vm)
{
	struct icr_fields icr = icr_decode(raw);

	/* A write that #GPs is never completed, on any path. */
	return !icr.reserved && rule_takes(&icr, sender, vm);
}

int icr_expected_fastpath_hits(u64 raw, const struct ipi_platform *p)
{
	return icr_expected_fastpath_hits_in(raw, 0, p, NULL);
}

int icr_expected_fastpath_hits_in(u64 raw, unsigned int sender,
				  const struct ipi_platform *p,
				  const struct ipi_vm_apics *vm)
{
#ifdef KVM_FASTPATH_SWITCH
	if (!p->fastpath_live)
		return 0;
#endif
	return p->fastpath_possible && icr_takes_fastpath_in(raw, sender, vm);
}

static bool vector_illegal(const struct icr_fields *icr)
{
	return (icr->mode == ICR_DM_FIXED || icr->mode == ICR_DM_LOWEST) &&
	       icr->vector < 16;
}

#ifdef KVM_IPI_XAPIC
bool icr_illegal_vector(u64 raw)
{
	struct icr_fields icr = icr_decode(raw);

	return vector_illegal(&icr);
}
#endif

/*
 * The SDM's table of valid ICR combinations for the Pentium 4 and Xeon
 * xAPIC, which the x2APIC keeps (Vol. 3A Table 11-6); everything else is
 * "invalid", i.e. architecturally undefined, and tests must not expect any
 * outcome.  Two of its notes turn rows marked invalid into defined ones:
 * note 2, a level-triggered IPI is issued as edge-triggered; note 4, lowest
 * priority to "all excluding self" is "essentially the same as the all
 * including self destination".  Self and all including self take fixed
 * IPIs only: every other delivery mode is invalid there, lowest priority
 * included.  The model leaves level-triggered SMI and start-up IPIs without
 * a shorthand undefined, as the P6 table does, although note 2 defines
 * them: it expects less than the SDM there, never more.
 */
static bool icr_combination_valid(const struct icr_fields *icr)
{
	bool fixed_like = icr->mode == ICR_DM_FIXED || icr->mode == ICR_DM_LOWEST;

	if (icr->mode == ICR_DM_RESERVED || icr->mode == ICR_DM_EXTINT)
		return false;

	/*
	 * The level flag (bit 14) other than for INIT: SDM Vol. 3A 11.6.1,
	 * "This flag has no meaning in Pentium 4 and Intel Xeon processors,
	 * and will always be issued as a 1."  Every x2APIC is of that line,
	 * so a de-assert is sent as the assert would be: ignored here.
	 */
	switch (icr->shorthand) {
	case ICR_SH_SELF:
	case ICR_SH_ALL:
		return icr->mode == ICR_DM_FIXED;
	case ICR_SH_ALL_BUT_SELF:
		return true;
	case ICR_SH_NONE:
	default:
		if (!icr->level_trigger)
			return true;
		return fixed_like || icr->mode == ICR_DM_NMI;
	}
}

/* x2APIC logical ID: cluster in bits 31:16, one bit of 16 in bits 15:0. */
u32 x2apic_logical_id(u32 x2apic_id)
{
	return (x2apic_id >> 4) << 16 | 1U << (x2apic_id & 0xf);
}

static bool dest_matches(const struct icr_fields *icr, u32 x2apic_id)
{
	u32 ldr;

	if (icr->dest == X2APIC_BROADCAST)
		return true;
	if (!icr->logical)
		return icr->dest == x2apic_id;

	ldr = x2apic_logical_id(x2apic_id);
	return (icr->dest >> 16) == (ldr >> 16) && (icr->dest & ldr & 0xffff);
}

/*
 * Bit i of @dest_matches says whether vCPU i is named by the destination
 * field (used without a shorthand).
 */
static struct ipi_expectation expect(const struct icr_fields *icr, unsigned int sender,
				     unsigned int nr_vcpus, u64 dest_matches)
{
	struct ipi_expectation e = { .fate = IPI_FATE_EACH, .targets = 0 };
	u64 all = nr_vcpus >= 64 ? ~0ULL : (1ULL << nr_vcpus) - 1;

	/* INIT level de-assert, whatever the destination: nothing is sent. */
	if (icr->mode == ICR_DM_INIT && icr->level_trigger && !icr->level_assert)
		return e;
	if (!icr_combination_valid(icr)) {
		e.fate = IPI_FATE_UNDEFINED;
		return e;
	}
	/*
	 * Vectors 0-15 are illegal: the sender logs "send illegal vector" in
	 * its ESR, and an APIC that receives one logs "receive illegal vector"
	 * and never sets IRR bits 0-15, so nothing is delivered.
	 */
	if (vector_illegal(icr))
		return e;

	switch (icr->shorthand) {
	case ICR_SH_SELF:
		e.targets = 1ULL << sender;
		break;
	case ICR_SH_ALL:
		e.targets = all;
		break;
	case ICR_SH_ALL_BUT_SELF:
		e.targets = all & ~(1ULL << sender);
		break;
	case ICR_SH_NONE:
		e.targets = dest_matches & all;
		break;
	}

	/*
	 * One APIC of the set takes it; "all excluding self" may be the sender.
	 * The broadcast ID is no exception: 11.6.2.1 makes it the set of all
	 * APICs, and lowest priority (11.6.1, delivery mode 001) goes to "the
	 * processor executing at the lowest priority among the set of
	 * processors specified in the destination field".  11.6.1 also calls
	 * the ability to send lowest priority IPIs "model specific"; we read
	 * that as whether a CPU sends them, not where a sent one goes.
	 */
	if (icr->mode == ICR_DM_LOWEST) {
		if (icr->shorthand == ICR_SH_ALL_BUT_SELF)
			e.targets = all;
		if (e.targets)
			e.fate = IPI_FATE_ONE_OF;
	}
	return e;
}

struct ipi_expectation ipi_expect(u64 raw, unsigned int sender,
				  const u32 *x2apic_ids,
				  unsigned int nr_vcpus)
{
	struct icr_fields icr = icr_decode(raw);
	struct ipi_expectation gp = { .fate = IPI_FATE_GP };
	u64 matches = 0;
	unsigned int i;

	if (icr.reserved)
		return gp;
	for (i = 0; i < nr_vcpus && i < 64; i++)
		if (dest_matches(&icr, x2apic_ids[i]))
			matches |= 1ULL << i;
	return expect(&icr, sender, nr_vcpus, matches);
}

#ifdef KVM_IPI_XAPIC
struct ipi_expectation ipi_expect_xapic(u64 raw, unsigned int sender,
					const u32 *apic_ids,
					const u8 *flat_ldr,
					unsigned int nr_vcpus)
{
	struct icr_fields icr = icr_decode(raw & ~X2APIC_RSVD_BITS_MASK);
	u8 dest = raw >> XAPIC_DEST_SHIFT;
	u64 matches = 0;
	unsigned int i;

	for (i = 0; i < nr_vcpus && i < 64; i++) {
		if (dest == XAPIC_BROADCAST ||
		    (icr.logical ? (dest & flat_ldr[i]) != 0 : dest == apic_ids[i]))
			matches |= 1ULL << i;
	}
	return expect(&icr, sender, nr_vcpus, matches);
}
#endif

#ifdef KVM_IPI_PV
struct ipi_expectation ipi_expect_pv_send(u64 icr, u64 bitmap_low,
					  u64 bitmap_high, u32 min,
					  unsigned int sender,
					  const u32 *x2apic_ids,
					  unsigned int nr_vcpus)
{
	struct ipi_expectation undefined = { .fate = IPI_FATE_UNDEFINED };
	struct icr_fields fields = icr_decode(icr);
	u64 matches = 0, bit;
	unsigned int i;

	if ((fields.mode != ICR_DM_FIXED && fields.mode != ICR_DM_NMI) ||
	    fields.shorthand != ICR_SH_NONE || fields.logical || fields.dest ||
	    fields.reserved)
		return undefined;
	for (i = 0; i < nr_vcpus && i < 64; i++) {
		/*
		 * In 64 bits, so that nothing wraps: an ID below @min is far
		 * past bit 127, and bits past 2^32 - 1 - @min name no ID.
		 */
		bit = (u64)x2apic_ids[i] - min;
		if (bit < 64 ? bitmap_low >> bit & 1 :
		    bit < 128 && bitmap_high >> (bit - 64) & 1)
			matches |= 1ULL << i;
	}
	return expect(&fields, sender, nr_vcpus, matches);
}
#endif

#ifdef KVM_IPI_VM_STATE
struct ipi_expectation ipi_expect_in(u64 raw, unsigned int sender,
				     const struct ipi_vm_apics *vm)
{
	struct ipi_expectation e = ipi_expect(raw, sender, vm->x2apic_ids, vm->nr_vcpus);
	struct icr_fields icr = icr_decode(raw);
	bool fixed_like = icr.mode == ICR_DM_FIXED || icr.mode == ICR_DM_LOWEST;
	unsigned int i;

	if (e.fate == IPI_FATE_GP || e.fate == IPI_FATE_UNDEFINED)
		return e;
	for (i = 0; i < vm->nr_vcpus && i < 64; i++) {
		u64 bit = 1ULL << i;

		switch (apic_state_of(vm, i)) {
		case IPI_APIC_HW_DISABLED:
			e.targets &= ~bit;
			break;
		case IPI_APIC_SW_DISABLED:
			if (fixed_like)
				e.targets &= ~bit;
			break;
		case IPI_APIC_XAPIC:
		case IPI_APIC_XAPIC_LDR0:
			if (icr.shorthand == ICR_SH_NONE && !icr.logical &&
			    icr.dest == apic_id_of(vm, i))
				e.unchecked |= bit;
			e.unchecked |= e.targets & bit;
			e.targets &= ~bit;
			break;
		case IPI_APIC_X2APIC:
			break;
		}
	}
	if (e.fate == IPI_FATE_ONE_OF && !e.targets)
		e.fate = IPI_FATE_EACH;
	return e;
}
#endif

bool ipi_received_as(const struct ipi_expectation *e, const u32 *got,
		     unsigned int nr_vcpus)
{
	u64 want = e->fate == IPI_FATE_GP ? 0 : e->targets;
	unsigned int i, total = 0;

	if (e->fate == IPI_FATE_UNDEFINED)
		return true;
	for (i = 0; i < nr_vcpus && i < 64; i++) {
		u64 bit = 1ULL << i;

		if (e->unchecked & bit)
			continue;
		if (got[i] > 1 || (got[i] && !(want & bit)))
			return false;
		if (!got[i] && (want & bit) && e->fate != IPI_FATE_ONE_OF)
			return false;
		total += got[i];
	}
	return e->fate != IPI_FATE_ONE_OF || total == 1;
}

int ipi_format_vcpus(u64 set, const u32 *ids, unsigned int nr_vcpus,
		     char *buf, size_t size)
{
	unsigned int i;
	int n;

	n = snprintf(buf, size, "{");
	for (i = 0; i < nr_vcpus && i < 64 && n < (int)size; i++)
		if (set & (1ULL << i))
			n += snprintf(buf + n, size - n, "%s0x%x", n > 1 ? "," : "", ids[i]);
	if (n < (int)size)
		n += snprintf(buf + n, size - n, "}");
	return n;
}

const char *ipi_fate_name(enum ipi_fate fate)
{
	switch (fate) {
	case IPI_FATE_GP:
		return "#GP";
	case IPI_FATE_EACH:
		return "each";
	case IPI_FATE_ONE_OF:
		return "one-of";
	case IPI_FATE_UNDEFINED:
		return "undefined";
	}
	return "?";
}
