// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2APIC ICR fastpath needs an in-kernel local APIC, not a full in-kernel
 * irqchip: with KVM_CREATE_IRQCHIP and with KVM_CAP_SPLIT_IRQCHIP an eligible
 * write (fixed, physical, no shorthand) takes the fastpath where the platform
 * runs it and an ineligible one (logical) does not; without an in-kernel
 * LAPIC no write ever does, and userspace sees every ICR write as an MSR exit
 * (KVM_CAP_X86_USER_SPACE_MSR).
 *
 * vCPU 0 writes the ICR; vCPU 1 enables its x2APIC and never runs again, so
 * the IPIs stay in its IRR, which the host reads with KVM_GET_LAPIC.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "lapic_irr.h"
#include "vcpu_run_within.h"
#include "vcpu_stats.h"

#define WAIT_SECONDS	(10 * test_time_scale())	/* guest seconds, any one KVM_RUN */

#define TARGET_ID	1
#define GUEST_PAGES	4096

enum irqchip_kind { IRQCHIP_KERNEL, IRQCHIP_SPLIT, IRQCHIP_NONE };

static const struct flavour {
	const char *name;
	enum irqchip_kind kind;
} flavours[] = {
	{ "in-kernel irqchip", IRQCHIP_KERNEL },
	{ "split irqchip", IRQCHIP_SPLIT },
	{ "no in-kernel LAPIC", IRQCHIP_NONE },
};

static const struct icr_case {
	const char *name;
	uint64_t icr;
} icr_cases[] = {
	{ "fixed physical", APIC_DM_FIXED | APIC_INT_ASSERT | 0x40 |
			    (uint64_t)TARGET_ID << 32 },
	{ "fixed logical", APIC_DM_FIXED | APIC_INT_ASSERT | APIC_DEST_LOGICAL | 0x41 |
			   (uint64_t)(1 << TARGET_ID) << 32 },
};

static uint64_t icr_to_write;

static void sender_code(void)
{
	x2apic_enable();
	for (;;) {
		GUEST_SYNC(0);
		x2apic_write_reg(APIC_ICR, READ_ONCE(icr_to_write));
	}
}

/* Runs once, to its GUEST_SYNC: an APIC must be enabled to accept IPIs. */
static void target_code(void)
{
	x2apic_enable();
	GUEST_SYNC(0);
	GUEST_FAIL("the target vCPU must not run again");
}

/*
 * __vm_create() always gives x86 VMs a full in-kernel irqchip; the split and
 * the LAPIC-less VMs need their irqchip chosen before any vCPU exists, so
 * build the VM step by step.  No descriptor tables: the sender runs with
 * interrupts off and faults on nothing.
 */
static struct kvm_vm *vm_create_irqchip_kind(enum irqchip_kind kind)
{
	struct userspace_mem_region *slot0;
	struct kvm_vm *vm;
	int i;

	vm = ____vm_create(VM_SHAPE_DEFAULT);
	vm_userspace_mem_region_add(vm, VM_MEM_SRC_ANONYMOUS, 0, 0, GUEST_PAGES, 0);
	for (i = 0; i < NR_MEM_REGIONS; i++)
		vm->memslots[i] = 0;
	kvm_vm_elf_load(vm, program_invocation_name);
	slot0 = memslot2region(vm, 0);
	ucall_init(vm, slot0->region.guest_phys_addr + slot0->region.memory_size);

	switch (kind) {
	case IRQCHIP_KERNEL:
		vm_create_irqchip(vm);
		break;
	case IRQCHIP_SPLIT:
		vm_enable_cap(vm, KVM_CAP_SPLIT_IRQCHIP, 24);
		break;
	case IRQCHIP_NONE:
		/* Userspace would emulate the APIC: it gets the MSR accesses. */
		vm_enable_cap(vm, KVM_CAP_X86_USER_SPACE_MSR,
			      KVM_MSR_EXIT_REASON_INVAL | KVM_MSR_EXIT_REASON_UNKNOWN);
		break;
	}
	return vm;
}

/*
 * Run @vcpu to its next GUEST_SYNC, playing a userspace APIC for the MSR
 * exits of a LAPIC-less VM; returns the number of ICR writes userspace saw.
 */
static int run_to_sync(struct kvm_vcpu *vcpu, uint64_t want_icr)
{
	struct kvm_run *run = vcpu->run;
	int icr_exits = 0;

	for (;;) {
		vcpu_run_within(vcpu, WAIT_SECONDS);
		if (run->exit_reason == KVM_EXIT_X86_RDMSR) {
			run->msr.data = 0;
			run->msr.error = 0;
			continue;
		}
		if (run->exit_reason == KVM_EXIT_X86_WRMSR) {
			if (run->msr.index == APIC_BASE_MSR + (APIC_ICR >> 4)) {
				TEST_ASSERT_EQ(run->msr.data, want_icr);
				icr_exits++;
			}
			run->msr.error = 0;
			continue;
		}
		break;
	}
	TEST_ASSERT_EQ(vcpu_sync_or_done(vcpu, NULL), UCALL_SYNC);
	return icr_exits;
}

static void test_flavour(const struct flavour *f, const struct ipi_platform *p)
{
	bool lapic = f->kind != IRQCHIP_NONE;
	struct kvm_vcpu *sender, *target;
	struct kvm_vm *vm;
	bool have_stat;
	int i;

	vm = vm_create_irqchip_kind(f->kind);
	sender = vm_vcpu_add(vm, 0, sender_code);
	target = vm_vcpu_add(vm, TARGET_ID, target_code);
	have_stat = vcpu_has_stat(sender, x2apic_icr_fastpath_writes);
	run_to_sync(target, 0);	/* x2APIC on, then parked for good */
	run_to_sync(sender, 0);

	for (i = 0; i < ARRAY_SIZE(icr_cases); i++) {
		const struct icr_case *c = &icr_cases[i];
		int want_hits = lapic ? icr_expected_fastpath_hits(c->icr, p) : 0;
		const char *unprovable;
		uint64_t before = 0;
		uint8_t vector = c->icr & 0xff;
		int icr_exits;
		bool ok;

		if (have_stat)
			before = vcpu_get_stat(sender, x2apic_icr_fastpath_writes);
		icr_to_write = c->icr;
		sync_global_to_guest(vm, icr_to_write);
		icr_exits = run_to_sync(sender, c->icr);

		/* Delivered in the kernel, or handed to userspace. */
		ok = lapic ? vcpu_irr_test(target, vector) && !icr_exits : icr_exits == 1;
		if (!ok)
			ksft_print_msg("%s, %s: IRR 0x%x %s, %d ICR exits to userspace\n",
				       f->name, c->name, vector,
				       lapic && vcpu_irr_test(target, vector) ? "set" : "clear",
				       icr_exits);
		ksft_test_result(ok, "%s, %s: %s\n", f->name, c->name,
				 lapic ? "pending at the target" : "exits to userspace");

		unprovable = ipi_path_unprovable(p, have_stat, want_hits);
		if (unprovable) {
			ksft_test_result_skip("%s, %s: path (%s)\n", f->name, c->name,
					      unprovable);
		} else {
			uint64_t got = vcpu_get_stat(sender, x2apic_icr_fastpath_writes) - before;

			if (got != (uint64_t)want_hits)
				ksft_print_msg("%s, %s: fastpath +%lu, want +%d\n",
					       f->name, c->name, got, want_hits);
			ksft_test_result(got == (uint64_t)want_hits, "%s, %s: fastpath +%d\n",
					 f->name, c->name, want_hits);
		}
	}

	kvm_vm_free(vm);
}

int main(void)
{
	struct ipi_platform platform = ipi_platform_probe();
	char desc[128];
	int i;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SPLIT_IRQCHIP));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_X86_USER_SPACE_MSR));

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(flavours) * ARRAY_SIZE(icr_cases) * 2);
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("platform: %s\n", desc);

	for (i = 0; i < ARRAY_SIZE(flavours); i++)
		test_flavour(&flavours[i], &platform);

	ksft_finished();
}
