// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2APIC ICR fastpath needs an in-kernel local APIC, not a full in-kernel
 * irqchip: with KVM_CREATE_IRQCHIP and with KVM_CAP_SPLIT_IRQCHIP a fixed
 * physical and a fixed logical IPI each take the fastpath exactly where this
 * kernel's rule (ipi_oracle.c) says and the platform runs it; without an
 * in-kernel LAPIC no write ever does, and userspace sees every ICR write as
 * an MSR exit (KVM_CAP_X86_USER_SPACE_MSR).
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
#include "vcpu_stats.h"
#include "vcpu_thread.h"

#define WAIT_SECONDS	10	/* any one KVM_RUN */

#define TARGET_ID	1

static const struct flavour {
	const char *name;
	enum x86_irqchip_mode irqchip;
} flavours[] = {
	{ "in-kernel irqchip", X86_IRQCHIP_KERNEL },
	{ "split irqchip", X86_IRQCHIP_SPLIT },
	{ "no in-kernel LAPIC", X86_IRQCHIP_NONE },
};

static const struct icr_case {
	const char *name;
	u64 icr;
} icr_cases[] = {
	{ "fixed physical", APIC_DM_FIXED | APIC_INT_ASSERT | 0x40 |
			    (u64)TARGET_ID << 32 },
	{ "fixed logical", APIC_DM_FIXED | APIC_INT_ASSERT | APIC_DEST_LOGICAL | 0x41 |
			   (u64)(1 << TARGET_ID) << 32 },
};

static u64 icr_to_write;

static void sender_code(void)
{
	x2apic_enable_icr_exits();
	for (;;) {
		GUEST_SYNC(0);
		x2apic_write_reg(APIC_ICR, READ_ONCE(icr_to_write));
	}
}

/* Runs once, to its GUEST_SYNC: an APIC must be enabled to accept IPIs. */
static void target_code(void)
{
	x2apic_enable_icr_exits();
	GUEST_SYNC(0);
	GUEST_FAIL("the target vCPU must not run again");
}

/*
 * Run @vcpu to its next GUEST_SYNC, playing a userspace APIC for the MSR
 * exits of a LAPIC-less VM; returns the number of ICR writes userspace saw.
 * A write that never completes (say, a fastpath that leaves RIP on the
 * WRMSR) ends the test with SIGALRM instead of hanging it.
 */
static int run_to_sync(struct kvm_vcpu *vcpu, u64 want_icr)
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
	bool lapic = f->irqchip != X86_IRQCHIP_NONE;
	struct kvm_vcpu *sender, *target;
	struct kvm_vm *vm;
	bool have_stat;
	int i;

	test_set_default_irqchip(f->irqchip);
	vm = vm_create(2);	/* the sender and the target */
	/* Userspace would emulate the APIC: it gets the MSR accesses. */
	if (!lapic)
		vm_enable_cap(vm, KVM_CAP_X86_USER_SPACE_MSR,
			      KVM_MSR_EXIT_REASON_INVAL | KVM_MSR_EXIT_REASON_UNKNOWN);
	sender = vm_vcpu_add(vm, 0, sender_code);
	target = vm_vcpu_add(vm, TARGET_ID, target_code);
	have_stat = vcpu_has_stat(sender, x2apic_icr_fastpath_writes);
	run_to_sync(target, 0);	/* x2APIC on, then parked for good */
	run_to_sync(sender, 0);

	for (i = 0; i < ARRAY_SIZE(icr_cases); i++) {
		const struct icr_case *c = &icr_cases[i];
		int want_hits = lapic ? icr_expected_fastpath_hits(c->icr, p) : 0;
		u64 before = ipi_fastpath_hits(sender, have_stat);
		u8 vector = c->icr & 0xff;
		char name[96];
		int icr_exits;
		bool ok;

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

		snprintf(name, sizeof(name), "%s, %s: path", f->name, c->name);
		ipi_path_result(p, have_stat, ipi_fastpath_hits(sender, have_stat) - before,
				want_hits, name, NULL);
	}

	kvm_vm_free(vm);
}

int main(void)
{
	struct ipi_platform platform;
	char desc[192];
	int i;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SPLIT_IRQCHIP));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_X86_USER_SPACE_MSR));
	platform = ipi_platform_probe();

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(flavours) * ARRAY_SIZE(icr_cases) * 2);
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("platform: %s\n", desc);

	for (i = 0; i < ARRAY_SIZE(flavours); i++)
		test_flavour(&flavours[i], &platform);

	ksft_finished();
}
