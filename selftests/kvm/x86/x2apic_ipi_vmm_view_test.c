// SPDX-License-Identifier: GPL-2.0-only
/*
 * What userspace sees of an IPI that a vCPU has received but not yet taken,
 * and that setting that state back makes the vCPU take the IPI again
 * (Documentation/virt/kvm/api.rst: KVM_GET/SET_LAPIC, KVM_GET/SET_VCPU_EVENTS,
 * KVM_GET/SET_MP_STATE).
 *
 * vCPU 0 writes the x2APIC ICR while vCPU 1, the receiver, waits in the host
 * with IF=0.  The host reads the receiver's state, sets it back with and
 * without the IPI and runs the receiver, which sets IF for an instruction
 * and asserts what it has taken:
 *  - fixed: the IRR's vector (and the sender's ICR);
 *  - NMI: nmi.pending;
 *  - SMI: smi.pending (the SMI handler counts SMIs in DR0, which SMM entry
 *    and RSM leave alone, and stops in the host), then an INIT sent while
 *    the receiver is in that handler: smi.latched_init;
 *  - INIT: KVM_MP_STATE_INIT_RECEIVED; a SIPI then starts the receiver at
 *    vector << 12, again after KVM_SET_MP_STATE sets INIT_RECEIVED back.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "lapic_irr.h"

#define SENDER		0
#define RECEIVER	1	/* an AP: INIT puts it in wait-for-SIPI */
#define TO_RECEIVER	((u64)RECEIVER << 32)
#define FIXED_VECTOR	0x40
#define SMRAM_GPA	0x1000000
#define SMRAM_SLOT	((1 << 16) | 1)	/* in the SMM address space */
#define SMM_PORT	0xe
#define SIPI_PORT	0xf

/* At SMBASE + 0x8000, in real-address mode. */
static const u8 smi_handler[] = {
	0x0f, 0x21, 0xc0,	/* mov %dr0, %eax */
	0x66, 0x40,		/* inc %eax */
	0x0f, 0x23, 0xc0,	/* mov %eax, %dr0 */
	0xe4, SMM_PORT,		/* in $SMM_PORT, %al: stop in the host */
	0x0f, 0xaa,		/* rsm */
};

/* At vector << 12, in real-address mode after a SIPI. */
static const u8 sipi_code[] = {
	0xe4, SIPI_PORT,	/* 1: in $SIPI_PORT, %al: stop in the host */
	0xeb, 0xfc,		/* jmp 1b */
};

static u64 sender_icr;
/* taken: so far (SMIs: in DR0); expected: in the receiver's next run */
static struct counts { u64 fixed, nmi, smi; } taken, expected;

static struct kvm_vm *vm;
static struct kvm_vcpu *sender, *receiver;

static void fixed_handler(struct ex_regs *regs)
{
	taken.fixed++;
	x2apic_write_reg(APIC_EOI, 0);
}

static void nmi_handler(struct ex_regs *regs)
{
	taken.nmi++;
}

static u64 smis_taken(void)
{
	u64 dr0;

	asm volatile("mov %%dr0, %0" : "=r"(dr0));
	return dr0;
}

static void sender_code(void)
{
	x2apic_enable();
	for (;;) {
		GUEST_SYNC(0);
		x2apic_write_reg(APIC_ICR, READ_ONCE(sender_icr));
	}
}

static void receiver_code(void)
{
	u64 fixed, nmi, smi;

	x2apic_enable();
	for (;;) {
		fixed = READ_ONCE(taken.fixed);
		nmi = READ_ONCE(taken.nmi);
		smi = smis_taken();
		GUEST_SYNC(0);	/* IF is 0: what comes now waits */
		sti_nop_cli();
		GUEST_ASSERT_EQ(READ_ONCE(taken.fixed) - fixed, READ_ONCE(expected.fixed));
		GUEST_ASSERT_EQ(READ_ONCE(taken.nmi) - nmi, READ_ONCE(expected.nmi));
		GUEST_ASSERT_EQ(smis_taken() - smi, READ_ONCE(expected.smi));
	}
}

static void send(u64 icr)
{
	sender_icr = icr;
	sync_global_to_guest(vm, sender_icr);
	vcpu_run(sender);
	TEST_ASSERT_EQ(get_ucall(sender, NULL), UCALL_SYNC);
}

/*
 * Run the receiver to its next stop: true in its SMI handler, false at
 * GUEST_SYNC.  A guest assert on the way clears *ok.
 */
static bool run_receiver(bool *ok)
{
	struct ucall uc;

	sync_global_to_guest(vm, expected);
	for (;;) {
		/* not vcpu_run(): a guest assert fails a point, not the test */
		TEST_ASSERT(!__vcpu_run(receiver), "KVM_RUN: errno %d", errno);
		if (receiver->run->exit_reason == KVM_EXIT_IO &&
		    receiver->run->io.port == SMM_PORT)
			return true;
		switch (get_ucall(receiver, &uc)) {
		case UCALL_SYNC:
			return false;
		case UCALL_ABORT:
			ksft_print_msg("receiver: %s\n", uc.buffer);
			*ok = false;
			break;
		default:
			TEST_FAIL("receiver: exit %s",
				  exit_reason_str(receiver->run->exit_reason));
		}
	}
}

/* Run the receiver to GUEST_SYNC: has it taken just these? */
static bool receiver_took(u64 fixed, u64 nmi, u64 smi)
{
	bool ok = true;

	expected = (struct counts){ fixed, nmi, smi };
	while (run_receiver(&ok))
		;
	return ok;
}

static u32 mp_state(void)
{
	struct kvm_mp_state mp;

	vcpu_mp_state_get(receiver, &mp);
	return mp.mp_state;
}

static void test_fixed(void)
{
	u64 icr = APIC_DM_FIXED | APIC_INT_ASSERT | FIXED_VECTOR | TO_RECEIVER;
	struct kvm_lapic_state saved, tx;
	u64 latched;

	send(icr);
	vcpu_ioctl(receiver, KVM_GET_LAPIC, &saved);
	/* and SET it without the vector: GET, clear, SET */
	ksft_test_result(vcpu_irr_test_and_clear(receiver, FIXED_VECTOR),
			 "fixed IPI: KVM_GET_LAPIC has the vector in the IRR\n");
	vcpu_ioctl(sender, KVM_GET_LAPIC, &tx);
	latched = *(u32 *)&tx.regs[APIC_ICR] |
		  (u64)*(u32 *)&tx.regs[APIC_ICR2] << 32;
	ksft_print_msg("fixed IPI: sender's ICR 0x%lx, written 0x%lx\n", latched, icr);
	ksft_test_result(latched == icr,
			 "fixed IPI: the sender's KVM_GET_LAPIC has the ICR written\n");
	ksft_test_result(receiver_took(0, 0, 0),
			 "fixed IPI: KVM_SET_LAPIC without it: not taken\n");

	vcpu_ioctl(receiver, KVM_SET_LAPIC, &saved);
	ksft_test_result(receiver_took(1, 0, 0),
			 "fixed IPI: KVM_SET_LAPIC of the state read: taken once\n");
}

static void test_nmi(void)
{
	struct kvm_vcpu_events saved, none;

	send(APIC_DM_NMI | APIC_INT_ASSERT | TO_RECEIVER);
	vcpu_events_get(receiver, &saved);
	ksft_print_msg("NMI IPI: nmi.pending %u\n", saved.nmi.pending);
	ksft_test_result(saved.nmi.pending,
			 "NMI IPI: KVM_GET_VCPU_EVENTS has nmi.pending\n");

	none = saved;
	none.nmi.pending = 0;
	vcpu_events_set(receiver, &none);
	ksft_test_result(receiver_took(0, 0, 0),
			 "NMI IPI: KVM_SET_VCPU_EVENTS with nmi.pending 0: not taken\n");

	vcpu_events_set(receiver, &saved);
	ksft_test_result(receiver_took(0, 1, 0),
			 "NMI IPI: KVM_SET_VCPU_EVENTS of the events read: taken once\n");
}

static const char * const smm_names[] = {
	"SMI IPI: KVM_GET_VCPU_EVENTS has smi.pending",
	"SMI IPI: KVM_SET_VCPU_EVENTS with smi.pending 0: not taken",
	"SMI IPI: KVM_SET_VCPU_EVENTS of the events read: taken once",
	"INIT IPI in SMM: smi.latched_init, the vCPU not reset",
	"INIT IPI in SMM: KVM_SET_VCPU_EVENTS with latched_init 0: withdrawn",
};

static void test_smi(void)
{
	struct kvm_vcpu_events saved, ev;
	bool ok = true;
	u32 state;

	send(APIC_DM_SMI | APIC_INT_ASSERT | TO_RECEIVER);
	vcpu_events_get(receiver, &saved);
	ksft_test_result(saved.smi.pending, "%s\n", smm_names[0]);

	ev = saved;
	ev.smi.pending = 0;
	vcpu_events_set(receiver, &ev);
	ksft_test_result(receiver_took(0, 0, 0), "%s\n", smm_names[1]);

	vcpu_events_set(receiver, &saved);
	expected.smi = 1;
	if (!run_receiver(&ok)) {
		ksft_test_result_fail("%s\n", smm_names[2]);
		ksft_exit_fail_msg("the receiver did not enter SMM\n");
	}

	send(APIC_DM_INIT | APIC_INT_ASSERT | TO_RECEIVER);
	state = mp_state();
	vcpu_events_get(receiver, &ev);
	ksft_print_msg("INIT IPI in SMM: smm %u, latched_init %u, mp_state %u\n",
		       ev.smi.smm, ev.smi.latched_init, state);
	ksft_test_result(ev.smi.smm && ev.smi.latched_init &&
			 state == KVM_MP_STATE_RUNNABLE, "%s\n", smm_names[3]);

	/* withdrawn, so that RSM does not deliver it (and KVM_RUN waits) */
	ev.smi.latched_init = 0;
	vcpu_events_set(receiver, &ev);
	vcpu_events_get(receiver, &ev);
	if (ev.smi.latched_init) {
		ksft_test_result_fail("%s\n", smm_names[4]);
		ksft_exit_fail_msg("INIT still latched, RSM would deliver it\n");
	}
	ok = receiver_took(0, 0, 1) && ok;
	ksft_test_result(ok, "%s\n", smm_names[2]);
	ksft_test_result(mp_state() == KVM_MP_STATE_RUNNABLE, "%s\n", smm_names[4]);
}

/* Run the receiver: does it run the code at @vector << 12? */
static bool started_at(u8 vector)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	bool ok;

	vcpu_run(receiver);
	vcpu_sregs_get(receiver, &sregs);
	vcpu_regs_get(receiver, &regs);
	ok = receiver->run->exit_reason == KVM_EXIT_IO &&
	     receiver->run->io.port == SIPI_PORT &&
	     sregs.cs.selector == vector << 8 && sregs.cs.base == vector << 12 &&
	     regs.rip < sizeof(sipi_code);
	if (!ok)
		ksft_print_msg("SIPI 0x%x: exit %s, cs 0x%x base 0x%llx, rip 0x%llx\n",
			       vector, exit_reason_str(receiver->run->exit_reason),
			       sregs.cs.selector, sregs.cs.base, regs.rip);
	return ok;
}

static bool sipi_taken(u32 state)
{
	return state == KVM_MP_STATE_RUNNABLE || state == KVM_MP_STATE_SIPI_RECEIVED;
}

static void test_init_sipi(const u8 vector[2])
{
	struct kvm_mp_state init = { KVM_MP_STATE_INIT_RECEIVED };
	u32 state;

	send(APIC_DM_INIT | APIC_INT_ASSERT | TO_RECEIVER);
	state = mp_state();
	ksft_print_msg("INIT IPI: mp_state %u\n", state);
	ksft_test_result(state == KVM_MP_STATE_INIT_RECEIVED,
			 "INIT IPI: KVM_GET_MP_STATE has INIT_RECEIVED\n");

	send(APIC_DM_STARTUP | APIC_INT_ASSERT | vector[0] | TO_RECEIVER);
	state = mp_state();
	ksft_print_msg("SIPI: mp_state %u\n", state);
	ksft_test_result(sipi_taken(state),
			 "SIPI: KVM_GET_MP_STATE has SIPI_RECEIVED or RUNNABLE\n");
	if (!sipi_taken(state))
		ksft_exit_fail_msg("the receiver would wait for a SIPI in KVM_RUN\n");
	ksft_test_result(started_at(vector[0]), "SIPI: the vCPU starts at vector << 12\n");

	vcpu_mp_state_set(receiver, &init);
	send(APIC_DM_STARTUP | APIC_INT_ASSERT | vector[1] | TO_RECEIVER);
	state = mp_state();
	ksft_test_result(sipi_taken(state) && started_at(vector[1]),
			 "KVM_SET_MP_STATE INIT_RECEIVED, SIPI: the vCPU starts at vector << 12\n");
}

int main(void)
{
	bool smm = kvm_has_cap(KVM_CAP_X86_SMM);
	u8 vector[2];
	u64 gpa;
	int i;

	vm = vm_create(2);
	sender = vm_vcpu_add(vm, SENDER, sender_code);
	receiver = vm_vcpu_add(vm, RECEIVER, receiver_code);
	vm_install_exception_handler(vm, FIXED_VECTOR, fixed_handler);
	vm_install_exception_handler(vm, NMI_VECTOR, nmi_handler);
	if (smm) {
		vm_userspace_mem_region_add(vm, VM_MEM_SRC_ANONYMOUS, SMRAM_GPA,
					    SMRAM_SLOT, 0x10000 / PAGE_SIZE, 0);
		memcpy(addr_gpa2hva(vm, SMRAM_GPA) + 0x8000, smi_handler,
		       sizeof(smi_handler));
		vcpu_set_msr(receiver, MSR_IA32_SMBASE, SMRAM_GPA);
	}
	/* two pages below 1 MiB for SIPI vectors */
	gpa = vm_phy_pages_alloc(vm, 2, 0, 0);
	TEST_ASSERT(gpa + 2 * PAGE_SIZE <= 0x100000, "no SIPI pages: 0x%lx", gpa);
	vector[0] = (gpa >> 12) + 1;
	vector[1] = gpa >> 12;
	for (i = 0; i < 2; i++)
		memcpy(addr_gpa2hva(vm, gpa + i * PAGE_SIZE), sipi_code, sizeof(sipi_code));

	ksft_print_header();
	ksft_set_plan(16);
	vcpu_run(sender);
	TEST_ASSERT_EQ(get_ucall(sender, NULL), UCALL_SYNC);
	TEST_ASSERT(receiver_took(0, 0, 0), "the receiver did not start");

	test_fixed();
	test_nmi();
	if (smm) {
		test_smi();
	} else {
		for (i = 0; i < ARRAY_SIZE(smm_names); i++)
			ksft_test_result_code(KSFT_SKIP, smm_names[i], "no KVM_CAP_X86_SMM");
	}
	test_init_sipi(vector);

	kvm_vm_free(vm);
	ksft_finished();
}
