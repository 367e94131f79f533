// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2APIC register file, MSR by MSR: which of 0x800-0x8FF exist in x2APIC
 * mode, and which RDMSR and WRMSR #GP (SDM Vol. 3A 11.12.1.2, "x2APIC
 * Register Address Space", Table 11-6, and 11.12.2, "x2APIC Register
 * Availability"):
 *  - a read-only register (APIC ID, version, PPR, LDR, ISR, TMR, IRR,
 *    current count) #GPs on WRMSR and keeps its value;
 *  - a write-only one (EOI, SELF IPI) #GPs on RDMSR; EOI and ESR #GP on a
 *    WRMSR of a non-zero value;
 *  - an address the table does not list (0x809 APR, 0x80C RRD, 0x80E DFR,
 *    0x831 ICR high, ...) #GPs on both; so does LVT CMCI without
 *    IA32_MCG_CAP[10];
 *  - outside x2APIC mode (xAPIC, or the APIC disabled) every one #GPs.
 * And in xAPIC mode, a write through MMIO leaves a read-only register
 * (Table 11-1) as it was.
 *
 * A read/write register is written a harmless value (LVTs masked), read back
 * and restored.  The ICR is only read; its writes are other tests' (and
 * x2apic_msr_reserved_test has the reserved bits of the others).
 *
 * The guest checks each access and reports a failed one (GUEST_PRINTF), then
 * goes on, so that one failure hides no other; the host reports one point per
 * table row, with the row's failed checks on "# " lines before it.
 *
 * KVM is known to take a non-zero EOI write as an EOI, without the #GP: that
 * point is an expected failure (XFAIL) while KVM does exactly that, passes
 * when it faults as the SDM says, and fails on anything else.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "mce.h"

#define IPI_VECTOR	0xa0
#define MAX_FAILS	4	/* checks reported per point */
#define LVT(v)		(APIC_LVT_MASKED | (v))

struct x2apic_reg {
	u32 first, nr;		/* MSRs first to first + nr - 1 */
	const char *name;
	bool rd, wr;		/* in x2APIC mode, RDMSR and WRMSR of @value work */
	bool no_wr;		/* WRMSR not tried (the ICR) */
	bool cmci;		/* exists only where IA32_MCG_CAP[10] is set */
	bool xapic_ro;		/* read-only in xAPIC mode too (Table 11-1) */
	u32 value;
	const char *kvm_deviation;	/* what KVM is known to do instead */
};

#define RO(f, nr, n, x)	{ f, nr, n, .rd = true, .value = ~0u, .xapic_ro = x }
#define RW(f, n, v)	{ f, 1, n, .rd = true, .wr = true, .value = v }
#define NONE(f, nr, n)	{ f, nr, n, .value = ~0u }

/* SDM Vol. 3A Table 11-6, with every MSR of 0x800-0x8FF in a row */
static const struct x2apic_reg regs[] = {
	NONE(0x800, 2, "reserved"),
	RO(0x802, 1, "APIC ID", false),
	RO(0x803, 1, "version", true),
	NONE(0x804, 4, "reserved"),
	RW(0x808, "TPR", 0x20),
	NONE(0x809, 1, "APR (xAPIC only)"),
	RO(0x80a, 1, "PPR", true),
	{ 0x80b, 1, "EOI, zero", .wr = true, .value = 0 },
	{ 0x80b, 1, "EOI, a non-zero value", .value = 1,
	  .kvm_deviation = "a non-zero EOI write is taken as an EOI" },
	NONE(0x80c, 1, "RRD (xAPIC only)"),
	RO(0x80d, 1, "LDR", false),
	NONE(0x80e, 1, "DFR (xAPIC only)"),
	RW(0x80f, "SVR", APIC_SPIV_APIC_ENABLED | 0xef),
	RO(0x810, 8, "ISR", true),
	RO(0x818, 8, "TMR", true),
	RO(0x820, 8, "IRR", true),
	RW(0x828, "ESR, zero", 0),
	{ 0x828, 1, "ESR, a non-zero value", .rd = true, .value = 1 },
	NONE(0x829, 6, "reserved"),
	{ 0x82f, 1, "LVT CMCI", .rd = true, .wr = true,
	  .cmci = true, .value = LVT(0xe1) },
	{ 0x830, 1, "ICR", .rd = true, .no_wr = true },
	NONE(0x831, 1, "ICR high (xAPIC only)"),
	RW(0x832, "LVT timer", LVT(0xe2)),
	RW(0x833, "LVT thermal sensor", LVT(0xe3)),
	RW(0x834, "LVT performance monitor", LVT(0xe4)),
	RW(0x835, "LVT LINT0", LVT(0xe5)),
	RW(0x836, "LVT LINT1", LVT(0xe6)),
	RW(0x837, "LVT error", LVT(0xe7)),
	RW(0x838, "initial count", 0x100000),
	RO(0x839, 1, "current count", true),
	NONE(0x83a, 4, "reserved"),
	RW(0x83e, "divide configuration", 0xb),
	{ 0x83f, 1, "SELF IPI", .wr = true, .value = IPI_VECTOR },
	NONE(0x840, 192, "reserved"),
};

/* the points: the xAPIC ones, one per row, then the APIC disabled */
enum { MMIO_RO, XAPIC_SWEEP, ROWS, DISABLED_SWEEP = ROWS + ARRAY_SIZE(regs), NR_POINTS };

static u32 nr_ipis;
static u32 nr_fails;	/* the guest's failed checks in this point */

/* A failed check: the host prints it; the guest goes on with the next. */
#define FAIL(fmt, args...)	({ nr_fails++; GUEST_PRINTF(fmt, ##args); false; })

static void ipi_handler(struct ex_regs *regs)
{
	WRITE_ONCE(nr_ipis, nr_ipis + 1);
	x2apic_write_reg(APIC_EOI, 0);
}

static const char *gp(bool faults)
{
	return faults ? "#GP" : "no fault";
}

/* One MSR of row @r in x2APIC mode; false after a failed check. */
static bool check_msr(const struct x2apic_reg *r, u32 msr, bool cmci, bool *deviated)
{
	bool exists = !r->cmci || cmci, rd = exists && r->rd, wr = exists && r->wr;
	u64 before = 0, after;
	u32 ipis = READ_ONCE(nr_ipis);
	u8 fault;

	fault = rdmsr_safe(msr, &before);
	if (fault != (rd ? 0 : GP_VECTOR))
		return FAIL("RDMSR(0x%x): %s (vector 0x%x), want %s", msr, gp(fault), fault,
			    gp(!rd));
	if (!rd)
		before = 0;
	if (r->no_wr)
		return true;

	fault = wrmsr_safe(msr, r->value);
	if (msr == APIC_BASE_MSR + (APIC_SELF_IPI >> 4))
		sti_nop_cli();
	if (fault != (wr ? 0 : GP_VECTOR) && r->kvm_deviation) {
		*deviated = true;
	} else if (fault != (wr ? 0 : GP_VECTOR)) {
		return FAIL("WRMSR(0x%x) = 0x%x: %s (vector 0x%x), want %s", msr, r->value,
			    gp(fault), fault, gp(!wr));
	}
	if (READ_ONCE(nr_ipis) - ipis != (msr == APIC_BASE_MSR + (APIC_SELF_IPI >> 4) && !fault))
		return FAIL("WRMSR(0x%x) = 0x%x: %u self-IPIs taken", msr, r->value,
			    READ_ONCE(nr_ipis) - ipis);
	if (!rd)
		return true;

	after = rdmsr(msr);
	if (after != (fault ? before : r->value))
		return FAIL("WRMSR(0x%x) = 0x%x (%s): reads back 0x%lx, 0x%lx before", msr,
			    r->value, gp(fault), after, before);
	if (after != before)
		wrmsr(msr, before);
	return true;
}

/* Outside x2APIC mode, each of 0x800-0x8FF #GPs on RDMSR and WRMSR. */
static void check_sweep(void)
{
	u8 rd_fault, wr_fault;
	u64 val;
	u32 msr;

	for (msr = 0x800; msr <= 0x8ff && nr_fails < MAX_FAILS; msr++) {
		rd_fault = rdmsr_safe(msr, &val);
		wr_fault = wrmsr_safe(msr, 0);
		if (rd_fault != GP_VECTOR || wr_fault != GP_VECTOR)
			FAIL("MSR 0x%x: RDMSR %s, WRMSR(0) %s (vectors 0x%x, 0x%x), want #GP",
			     msr, gp(rd_fault), gp(wr_fault), rd_fault, wr_fault);
	}
}

/* In xAPIC mode, an MMIO write to a read-only register changes nothing. */
static void check_mmio_ro(void)
{
	const struct x2apic_reg *r;
	u32 msr, off, before, after;

	for (r = regs; r < regs + ARRAY_SIZE(regs) && nr_fails < MAX_FAILS; r++) {
		for (msr = r->first; r->xapic_ro && msr < r->first + r->nr; msr++) {
			off = (msr - APIC_BASE_MSR) << 4;
			before = xapic_read_reg(off);
			xapic_write_reg(off, ~before);
			after = xapic_read_reg(off);
			if (after != before)
				FAIL("MMIO 0x%x (%s) = 0x%x: reads back 0x%x, 0x%x before",
				     off, r->name, ~before, after, before);
		}
	}
}

/* The end of point @p: what the host needs to report it. */
static void point_done(int p, bool deviated, bool cmci)
{
	GUEST_SYNC_ARGS(p, nr_fails, deviated, cmci, 0);
	nr_fails = 0;
}

static void guest_code(void)
{
	bool cmci = rdmsr(MSR_IA32_MCG_CAP) & MCG_CMCI_P;
	bool deviated;
	u32 msr;
	int i;

	xapic_enable();
	check_mmio_ro();
	point_done(MMIO_RO, false, cmci);
	check_sweep();
	point_done(XAPIC_SWEEP, false, cmci);

	x2apic_enable();
	for (i = 0; i < ARRAY_SIZE(regs); i++) {
		deviated = false;
		for (msr = regs[i].first; msr < regs[i].first + regs[i].nr; msr++)
			if (!check_msr(&regs[i], msr, cmci, &deviated))
				break;
		point_done(ROWS + i, deviated, cmci);
	}

	apic_disable();
	check_sweep();
	point_done(DISABLED_SWEEP, false, cmci);
	GUEST_DONE();
}

static const char *accesses(const struct x2apic_reg *r)
{
	static const char * const s[] = {
		"RDMSR #GP, WRMSR #GP", "RDMSR #GP, WRMSR ok",
		"RDMSR ok, WRMSR #GP", "RDMSR ok, WRMSR ok",
	};

	if (r->no_wr)
		return "RDMSR ok, WRMSR not tried here";
	if (r->cmci)
		return "RDMSR ok, WRMSR ok if IA32_MCG_CAP[10], else both #GP";
	return s[r->rd * 2 + r->wr];
}

static void point_name(int p, char *buf, size_t size)
{
	const struct x2apic_reg *r = p >= ROWS && p < DISABLED_SWEEP ? &regs[p - ROWS] : NULL;

	if (p == MMIO_RO)
		snprintf(buf, size, "xAPIC mode: MMIO writes leave read-only registers unchanged");
	else if (p == XAPIC_SWEEP)
		snprintf(buf, size, "0x800-0x8FF in xAPIC mode: RDMSR #GP, WRMSR #GP");
	else if (p == DISABLED_SWEEP)
		snprintf(buf, size, "0x800-0x8FF with the APIC disabled: RDMSR #GP, WRMSR #GP");
	else if (r->nr == 1)
		snprintf(buf, size, "0x%03X %s: %s", r->first, r->name,
			 accesses(r));
	else
		snprintf(buf, size, "0x%03X-0x%03X %s: %s", r->first, r->first + r->nr - 1,
			 r->name, accesses(r));
}

/* Give the vCPU the LVT CMCI register where KVM can; true if it has it. */
static bool setup_cmci(struct kvm_vcpu *vcpu)
{
	u64 supported = 0, mcg_cap = MCG_CMCI_P | 1;	/* one bank */

	if (!kvm_has_cap(KVM_CAP_MCE))
		return false;
	kvm_ioctl(vcpu->vm->kvm_fd, KVM_X86_GET_MCE_CAP_SUPPORTED, &supported);
	if (!(supported & MCG_CMCI_P))
		return false;
	vcpu_ioctl(vcpu, KVM_X86_SETUP_MCE, &mcg_cap);
	return true;
}

int main(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	bool fails, deviated;
	char name[128];
	int p;

	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_X2APIC));

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
	vm_install_exception_handler(vm, IPI_VECTOR, ipi_handler);
	setup_cmci(vcpu);

	ksft_print_header();
	ksft_set_plan(NR_POINTS);
	for (p = 0; p < NR_POINTS; p++) {
		point_name(p, name, sizeof(name));
		for (;;) {
			vcpu_run(vcpu);
			TEST_ASSERT_KVM_EXIT_REASON(vcpu, KVM_EXIT_IO);
			if (get_ucall(vcpu, &uc) != UCALL_PRINTF)
				break;
			ksft_print_msg("%s: %s\n", name, uc.buffer);
		}
		TEST_ASSERT(uc.cmd == UCALL_SYNC, "Unexpected ucall %lu", uc.cmd);
		TEST_ASSERT_EQ(uc.args[1], p);
		fails = uc.args[2];
		deviated = uc.args[3];
		if (p == MMIO_RO)
			ksft_print_msg("IA32_MCG_CAP[10] (CMCI) = %lu\n", uc.args[4]);

		if (p < ROWS || p == DISABLED_SWEEP || !regs[p - ROWS].kvm_deviation) {
			ksft_test_result(!fails, "%s\n", name);
		} else if (fails || !deviated) {
			if (!fails)
				ksft_print_msg("%s: KVM follows the SDM here\n", name);
			ksft_test_result(!fails, "%s\n", name);
		} else {
			ksft_test_result_code(KSFT_XFAIL, name, "KVM deviation: %s",
					      regs[p - ROWS].kvm_deviation);
		}
	}
	vcpu_run(vcpu);
	TEST_ASSERT_EQ(get_ucall(vcpu, &uc), UCALL_DONE);

	kvm_vm_free(vm);
	ksft_finished();
}
