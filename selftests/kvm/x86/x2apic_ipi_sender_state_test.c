// SPDX-License-Identifier: GPL-2.0-only
/*
 * An x2APIC ICR write is a WRMSR that retires, whichever way KVM completes
 * it: what follows a retired instruction follows it.  With RFLAGS.TF set, a
 * single-step #DB traps after it with DR6.BS set (SDM Vol. 3B, "Single-Step
 * Exception Condition"); the VMM's single-step exits after it
 * (Documentation/virt/kvm/api.rst, KVM_SET_GUEST_DEBUG); an execution
 * breakpoint on the next instruction fires there ("Instruction-Breakpoint
 * Exception Condition"); STI's interrupt shadow ends with it, and MOV SS's
 * holds the single-step trap back to the boundary after it ("Masking
 * Exceptions and Interrupts When Switching Stacks", Vol. 3A); a counter of
 * instructions retired counts it once.  In each case the IPI is sent by the
 * time the next instruction's boundary is reached, and only once.
 *
 * Each case is one fresh VM whose vCPU writes the ICR once, with a fixed
 * self-IPI of two kinds: to its own x2APIC ID in physical mode, and with
 * the all-including-self shorthand.  The guest asserts what its handlers
 * saw; the host asserts what KVM_EXIT_DEBUG and KVM_GET_LAPIC report.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "pmu.h"
#include "lapic_irr.h"
#include "vcpu_stats.h"

#define IPI_VECTOR	0xa0
#define ICR_MSR		(APIC_BASE_MSR + (APIC_ICR >> 4))
#define ICR_FIXED	(APIC_INT_ASSERT | APIC_DM_FIXED | IPI_VECTOR)
#define DR6_B0		BIT(0)
#define DR6_BS		BIT(14)
#define DR6_INIT	0xffff0ff0ul	/* DR6's value with no condition */
#define DR7_FIXED	0x400ul		/* DR7 with no breakpoint enabled */
#define DR7_L0		BIT(0)
#define DR7_G0		BIT(1)
#define MAX_STEPS	1000

enum cell { GUEST_TF, VMM_STEP, VMM_BP, GUEST_BP, STI_SHADOW, MOVSS_SHADOW, INSNS };

static const char * const cell_names[] = {
	[GUEST_TF]	= "RFLAGS.TF: single-step #DB right after the WRMSR",
	[VMM_STEP]	= "KVM_GUESTDBG_SINGLESTEP: exit right after the WRMSR, IPI pending",
	[VMM_BP]	= "KVM_GUESTDBG_USE_HW_BP after the WRMSR: exit there, IPI pending",
	[GUEST_BP]	= "guest DR0/DR7 breakpoint after the WRMSR: #DB there",
	[STI_SHADOW]	= "STI shadow: IPI taken right after the WRMSR",
	[MOVSS_SHADOW]	= "MOV SS shadow: single-step #DB right after the WRMSR",
	[INSNS]		= "instructions retired: the WRMSR counts as one",
};

/* What the guest checks after the VMM's cells: debug events are the VMM's. */
static const char * const guest_names[] = {
	[VMM_STEP]	= "KVM_GUESTDBG_SINGLESTEP: no guest #DB, IPI taken once",
	[VMM_BP]	= "KVM_GUESTDBG_USE_HW_BP after the WRMSR: no guest #DB, IPI taken once",
};

static const struct {
	const char *name;
	u64 icr;
	bool to_own_id;
} kinds[] = {
	{ "physical self IPI", APIC_DEST_PHYSICAL | ICR_FIXED, true },
	{ "all-including-self IPI", APIC_DEST_ALLINC | ICR_FIXED, false },
};

/* The address of a label of the guest's asm below, in the guest and here. */
#define ASM_LABEL(label)					\
({								\
	u64 __addr;						\
								\
	asm("lea " #label "(%%rip), %0" : "=r"(__addr));	\
	__addr;							\
})

/* Set by the host before the vCPU runs. */
static u32 cell;
static u64 icr_bits;
static bool to_own_id;
static u32 pmu_version;

/* What the guest's handlers saw: the first #DB and the first IPI. */
static u32 nr_db, nr_ipis;
static u64 db_rip, db_dr6, ipi_rip;
static bool irr_at_db;

static void db_handler(struct ex_regs *regs)
{
	if (!nr_db++) {
		db_rip = regs->rip;
		asm volatile("mov %%dr6, %0" : "=r"(db_dr6));
		irr_at_db = x2apic_read_reg(APIC_IRR + IPI_VECTOR / 32 * 0x10) &
			    BIT(IPI_VECTOR % 32);
	}
	regs->rflags &= ~X86_EFLAGS_TF;
	asm volatile("mov %0, %%dr7" : : "r"(DR7_FIXED));
}

static void ipi_handler(struct ex_regs *regs)
{
	if (!nr_ipis++)
		ipi_rip = regs->rip;
	x2apic_write_reg(APIC_EOI, 0);
}

/* Instructions retired from one WRMSR to EVNTSEL0 to the next, around @insn. */
#define insns_around(insn, lo, hi)						\
({										\
	u32 ecx = MSR_P6_EVNTSEL0, eax = ARCH_PERFMON_EVENTSEL_ENABLE |		\
		  ARCH_PERFMON_EVENTSEL_OS | INTEL_ARCH_INSTRUCTIONS_RETIRED, edx = 0; \
										\
	wrmsr(MSR_IA32_PERFCTR0, 0);						\
	asm volatile("wrmsr\n\t"						\
		     "mov %[icr_msr], %%ecx\n\t"				\
		     "mov %[icr_lo], %%eax\n\t"				\
		     "mov %[icr_hi], %%edx\n\t"				\
		     insn "\n\t"						\
		     "mov %[sel_msr], %%ecx\n\t"				\
		     "xor %%eax, %%eax\n\t"					\
		     "xor %%edx, %%edx\n\t"					\
		     "wrmsr"							\
		     : "+c"(ecx), "+a"(eax), "+d"(edx)				\
		     : [icr_msr] "i"(ICR_MSR), [sel_msr] "i"(MSR_P6_EVNTSEL0),	\
		       [icr_lo] "r"(lo), [icr_hi] "r"(hi) : "memory");		\
	rdmsr(MSR_IA32_PERFCTR0);						\
})

static void guest_code(void)
{
	u64 icr = icr_bits, with_wrmsr, with_nop;
	u32 lo, hi, ss;

	x2apic_enable();
	if (to_own_id)
		icr |= x2apic_read_reg(APIC_ID) << 32;
	lo = icr;
	hi = icr >> 32;
	asm volatile("mov %0, %%dr6" : : "r"(DR6_INIT));
	if (cell == GUEST_BP) {
		asm volatile("mov %0, %%dr0" : : "r"(ASM_LABEL(plain_next)));
		asm volatile("mov %0, %%dr7" : : "r"(DR7_FIXED | DR7_L0));
	}
	if (cell == INSNS && pmu_version >= 2)
		wrmsr(MSR_CORE_PERF_GLOBAL_CTRL, BIT(0));
	GUEST_SYNC(cell);

	switch (cell) {
	case GUEST_TF:
		asm volatile("pushf\n\t"
			     "orq %[tf], (%%rsp)\n\t"
			     "popf\n\t"
			     "wrmsr\n\t"
			     "tf_next: nop"
			     : : "c"(ICR_MSR), "a"(lo), "d"(hi), [tf] "i"(X86_EFLAGS_TF)
			     : "memory");
		break;
	case STI_SHADOW:
		asm volatile("sti\n\t"
			     "wrmsr\n\t"
			     "sti_next: nop\n\t"
			     "cli"
			     : : "c"(ICR_MSR), "a"(lo), "d"(hi) : "memory");
		break;
	case MOVSS_SHADOW:
		asm volatile("mov %%ss, %k[ss]\n\t"
			     "pushf\n\t"
			     "orq %[tf], (%%rsp)\n\t"
			     "popf\n\t"
			     "mov %k[ss], %%ss\n\t"
			     "wrmsr\n\t"
			     "movss_next: nop"
			     : [ss] "=&r"(ss)
			     : "c"(ICR_MSR), "a"(lo), "d"(hi), [tf] "i"(X86_EFLAGS_TF) : "memory");
		break;
	case INSNS:
		with_nop = insns_around("nop", lo, hi);
		with_wrmsr = insns_around("wrmsr", lo, hi);
		__GUEST_ASSERT(with_wrmsr == with_nop,
			       "%lu instructions retired with the WRMSR, %lu with a NOP in its place",
			       with_wrmsr, with_nop);
		break;
	default:
		asm volatile("plain_wrmsr: wrmsr\n\t"
			     "plain_next: nop"
			     : : "c"(ICR_MSR), "a"(lo), "d"(hi) : "memory");
	}
	/* IRR to ISR: take the IPI if it is still pending, and any second one. */
	sti_nop_cli();

	__GUEST_ASSERT(nr_ipis == 1, "ICR 0x%lx: IPI taken %u times", icr, nr_ipis);
	switch (cell) {
	case GUEST_TF:
	case MOVSS_SHADOW:
	case GUEST_BP:
		__GUEST_ASSERT(db_rip == (cell == GUEST_TF ? ASM_LABEL(tf_next) :
					 cell == MOVSS_SHADOW ? ASM_LABEL(movss_next) :
					 ASM_LABEL(plain_next)),
			       "first #DB at 0x%lx, after the WRMSR is 0x%lx (tf), 0x%lx (mov ss), 0x%lx (bp)",
			       db_rip, ASM_LABEL(tf_next), ASM_LABEL(movss_next),
			       ASM_LABEL(plain_next));
		__GUEST_ASSERT(db_dr6 & (cell == GUEST_BP ? DR6_B0 : DR6_BS),
			       "#DB with DR6 0x%lx", db_dr6);
		__GUEST_ASSERT(irr_at_db, "IPI not pending in IRR at the #DB");
		/* The first #DB clears TF and disarms DR7; after MOV SS, only when is said. */
		__GUEST_ASSERT(cell == MOVSS_SHADOW || nr_db == 1, "%u #DBs", nr_db);
		break;
	case STI_SHADOW:
		__GUEST_ASSERT(ipi_rip == ASM_LABEL(sti_next),
			       "IPI taken at 0x%lx, right after the WRMSR is 0x%lx",
			       ipi_rip, ASM_LABEL(sti_next));
		break;
	default:
		__GUEST_ASSERT(!nr_db, "%u #DBs in the guest, first at 0x%lx with DR6 0x%lx",
			       nr_db, db_rip, db_dr6);
	}
	GUEST_DONE();
}

/* KVM_RUN, a guest assertion left for the caller to report. */
static void run_vcpu(struct kvm_vcpu *vcpu)
{
	int r;

	do {
		r = __vcpu_run(vcpu);
	} while (r == -1 && errno == EINTR);
	TEST_ASSERT(!r, KVM_IOCTL_ERROR(KVM_RUN, r));
}

/* The VMM's side of VMM_STEP and VMM_BP, the vCPU stopped before the WRMSR. */
static bool vmm_debug(struct kvm_vcpu *vcpu)
{
	struct kvm_guest_debug debug = { .control = KVM_GUESTDBG_ENABLE };
	struct kvm_run *run = vcpu->run;
	int i;

	if (cell == VMM_STEP) {
		debug.control |= KVM_GUESTDBG_SINGLESTEP;
		vcpu_guest_debug_set(vcpu, &debug);
		for (i = 0; i < MAX_STEPS; i++) {
			run_vcpu(vcpu);
			if (run->exit_reason != KVM_EXIT_DEBUG ||
			    run->debug.arch.pc == ASM_LABEL(plain_wrmsr))
				break;
		}
	} else {
		debug.control |= KVM_GUESTDBG_USE_HW_BP;
		debug.arch.debugreg[0] = ASM_LABEL(plain_next);
		debug.arch.debugreg[7] = DR7_FIXED | DR7_G0;
		vcpu_guest_debug_set(vcpu, &debug);
	}
	/* the WRMSR, from the step that stopped on it or from the SYNC */
	if (run->exit_reason == KVM_EXIT_DEBUG || cell == VMM_BP)
		run_vcpu(vcpu);
	if (run->exit_reason != KVM_EXIT_DEBUG || run->debug.arch.exception != DB_VECTOR) {
		ksft_print_msg("exit %s, exception %u, want KVM_EXIT_DEBUG #DB\n",
			       exit_reason_str(run->exit_reason), run->debug.arch.exception);
		return false;
	}
	ksft_print_msg("exit at 0x%llx, DR6 0x%llx, IPI %spending\n", run->debug.arch.pc,
		       run->debug.arch.dr6, vcpu_irr_test(vcpu, IPI_VECTOR) ? "" : "not ");
	if (run->debug.arch.pc != ASM_LABEL(plain_next) ||
	    !(run->debug.arch.dr6 & (cell == VMM_BP ? DR6_B0 : DR6_BS)) ||
	    !vcpu_irr_test(vcpu, IPI_VECTOR)) {
		ksft_print_msg("want the exit at 0x%lx (after the WRMSR), DR6.%s, IPI pending\n",
			       ASM_LABEL(plain_next), cell == VMM_BP ? "B0" : "BS");
		return false;
	}
	memset(&debug, 0, sizeof(debug));
	vcpu_guest_debug_set(vcpu, &debug);
	return true;
}

/* Run the guest to its end; did it get there with no failed assertion? */
static bool guest_done(struct kvm_vcpu *vcpu)
{
	struct ucall uc;

	run_vcpu(vcpu);
	if (vcpu->run->exit_reason != KVM_EXIT_IO) {
		ksft_print_msg("exit %s\n", exit_reason_str(vcpu->run->exit_reason));
		return false;
	}
	if (get_ucall(vcpu, &uc) == UCALL_ABORT) {
		ksft_print_msg("%s:%lu: %s\n", (const char *)uc.args[GUEST_FILE],
			       (unsigned long)uc.args[GUEST_LINE], uc.buffer);
		return false;
	}
	TEST_ASSERT_EQ(uc.cmd, UCALL_DONE);
	return true;
}

static void run_case(int k, const char *skip)
{
	bool vmm = cell == VMM_STEP || cell == VMM_BP, ok = true, stat;
	const char *name = vmm ? guest_names[cell] : cell_names[cell];
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	u64 fast = 0;

	if (skip) {
		char point[96];

		if (vmm) {
			snprintf(point, sizeof(point), "%s: %s", cell_names[cell], kinds[k].name);
			ksft_test_result_code(KSFT_SKIP, point, "%s", skip);
		}
		snprintf(point, sizeof(point), "%s: %s", name, kinds[k].name);
		ksft_test_result_code(KSFT_SKIP, point, "%s", skip);
		return;
	}
	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, DB_VECTOR, db_handler);
	vm_install_exception_handler(vm, IPI_VECTOR, ipi_handler);
	icr_bits = kinds[k].icr;
	to_own_id = kinds[k].to_own_id;
	sync_global_to_guest(vm, cell);
	sync_global_to_guest(vm, icr_bits);
	sync_global_to_guest(vm, to_own_id);
	sync_global_to_guest(vm, pmu_version);
	stat = vcpu_has_stat(vcpu, x2apic_icr_fastpath_writes);

	run_vcpu(vcpu);
	TEST_ASSERT_EQ(get_ucall(vcpu, &uc), UCALL_SYNC);
	if (stat)
		fast = vcpu_get_stat(vcpu, x2apic_icr_fastpath_writes);
	if (vmm) {
		ok = vmm_debug(vcpu);
		ksft_test_result(ok, "%s: %s\n", cell_names[cell], kinds[k].name);
	}
	if (ok)
		ok = guest_done(vcpu);
	else
		ksft_print_msg("guest not resumed\n");
	if (stat) {
		fast = vcpu_get_stat(vcpu, x2apic_icr_fastpath_writes) - fast;
		ksft_print_msg("%s: %lu ICR write(s) in the fastpath\n", kinds[k].name,
			       (unsigned long)fast);
	}
	sync_global_from_guest(vm, nr_db);
	if (nr_db)
		ksft_print_msg("%s: %u #DB(s) in the guest\n", kinds[k].name, nr_db);
	ksft_test_result(ok, "%s: %s\n", name, kinds[k].name);
	kvm_vm_free(vm);
}

int main(void)
{
	const char *no_debug = NULL, *no_pmu = NULL;
	int k;

	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_X2APIC));
	if (!kvm_has_cap(KVM_CAP_SET_GUEST_DEBUG))
		no_debug = "no KVM_CAP_SET_GUEST_DEBUG";
	pmu_version = kvm_is_pmu_enabled() ? kvm_cpu_property(X86_PROPERTY_PMU_VERSION) : 0;
	if (!pmu_version || !kvm_cpu_property(X86_PROPERTY_PMU_NR_GP_COUNTERS) ||
	    !kvm_pmu_has(X86_PMU_FEATURE_INSNS_RETIRED))
		no_pmu = "no vPMU with a general-purpose counter of instructions retired";

	ksft_print_header();
	/* the VMM's two cells report the guest's side apart */
	ksft_set_plan((ARRAY_SIZE(cell_names) + 2) * ARRAY_SIZE(kinds));
	for (cell = 0; cell < ARRAY_SIZE(cell_names); cell++)
		for (k = 0; k < ARRAY_SIZE(kinds); k++)
			run_case(k, cell == INSNS ? no_pmu :
				 cell == VMM_STEP || cell == VMM_BP ? no_debug : NULL);
	ksft_finished();
}
