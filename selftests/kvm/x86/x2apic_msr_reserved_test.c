// SPDX-License-Identifier: GPL-2.0-only
/*
 * The WRMSR rules around the x2APIC ICR: SELF_IPI, the other x2APIC
 * register that sends an IPI, takes a vector in bits 7:0 and #GPs on any
 * other bit; and every x2APIC register but the ICR is 32 bits wide, so a
 * WRMSR that sets bits 63:32 #GPs and changes nothing (SDM Vol. 3A,
 * "x2APIC Register Address Space" and "SELF IPI Register").  A write that
 * faults sends nothing; a well-formed one sends exactly one self-IPI.
 *
 * Each case is one write by the guest, which asserts the fault, the
 * register read back and the self-IPIs it took.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"

#define IPI_VECTOR	0xa0
#define TPR_VALUE	0x10	/* a priority class below IPI_VECTOR's */
#define LVTT_VALUE	(APIC_LVT_MASKED | 0xb0)

struct msr_case {
	const char *name;
	u32 reg;
	u64 value;
	bool faults;
};

static const struct msr_case cases[] = {
	{ "SELF_IPI, vector only", APIC_SELF_IPI, IPI_VECTOR, false },
	{ "SELF_IPI, bit 8 set", APIC_SELF_IPI, IPI_VECTOR | BIT(8), true },
	{ "SELF_IPI, bit 16 set", APIC_SELF_IPI, IPI_VECTOR | BIT(16), true },
	{ "SELF_IPI, bit 31 set", APIC_SELF_IPI, IPI_VECTOR | BIT(31), true },
	{ "SELF_IPI, bit 32 set", APIC_SELF_IPI, IPI_VECTOR | BIT_ULL(32), true },
	{ "TPR, bits 31:0", APIC_TASKPRI, TPR_VALUE, false },
	/* bits 31:0 differ from the register's: a write of them would show */
	{ "TPR, bit 32 set", APIC_TASKPRI, 2 * TPR_VALUE | BIT_ULL(32), true },
	{ "TPR, bit 63 set", APIC_TASKPRI, 2 * TPR_VALUE | BIT_ULL(63), true },
	{ "LVT timer, bits 31:0", APIC_LVTT, LVTT_VALUE, false },
	{ "LVT timer, bit 40 set", APIC_LVTT, (LVTT_VALUE + 1) | BIT_ULL(40), true },
	{ "timer divide, bit 48 set", APIC_TDCR, 0xb | BIT_ULL(48), true },
};

static u32 nr_ipis;

static void ipi_handler(struct ex_regs *regs)
{
	WRITE_ONCE(nr_ipis, nr_ipis + 1);
	x2apic_write_reg(APIC_EOI, 0);
}

static void guest_code(void)
{
	const struct msr_case *c;
	u64 before, after;
	u32 ipis;
	u8 fault;
	int i;

	x2apic_enable();
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		c = &cases[i];
		before = c->reg == APIC_SELF_IPI ? 0 : x2apic_read_reg(c->reg);
		ipis = READ_ONCE(nr_ipis);

		fault = x2apic_write_reg_safe(c->reg, c->value);
		/* take the self-IPI, if one was sent */
		sti_nop_cli();

		__GUEST_ASSERT(fault == (c->faults ? GP_VECTOR : 0),
			       "%s: WRMSR(0x%x) = 0x%lx: fault 0x%x, want %s", c->name,
			       APIC_BASE_MSR + (c->reg >> 4), c->value, fault,
			       c->faults ? "#GP" : "none");
		__GUEST_ASSERT(READ_ONCE(nr_ipis) - ipis ==
			       (c->reg == APIC_SELF_IPI && !c->faults),
			       "%s: %u self-IPIs taken", c->name, READ_ONCE(nr_ipis) - ipis);
		if (c->reg != APIC_SELF_IPI) {
			after = x2apic_read_reg(c->reg);
			__GUEST_ASSERT(after == (c->faults ? before : c->value),
				       "%s: reads back 0x%lx (0x%lx before)", c->name,
				       after, before);
		}
		GUEST_SYNC(i);
	}
	GUEST_DONE();
}

int main(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	int i;

	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_X2APIC));

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, IPI_VECTOR, ipi_handler);

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(cases));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		vcpu_run(vcpu);
		TEST_ASSERT_KVM_EXIT_REASON(vcpu, KVM_EXIT_IO);
		switch (get_ucall(vcpu, &uc)) {
		case UCALL_SYNC:
			TEST_ASSERT_EQ(uc.args[1], i);
			ksft_test_result_pass("%s\n", cases[i].name);
			break;
		case UCALL_ABORT:
			REPORT_GUEST_ASSERT(uc);
			break;
		default:
			TEST_FAIL("Unexpected ucall %lu", uc.cmd);
		}
	}
	vcpu_run(vcpu);
	TEST_ASSERT_EQ(get_ucall(vcpu, &uc), UCALL_DONE);

	kvm_vm_free(vm);
	ksft_finished();
}
