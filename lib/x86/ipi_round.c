// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rounds of IPIs among several vCPUs; see ipi_round.h.
 */
#include "kvm_util.h"
#include "apic.h"
#include "processor.h"
#include "host_msi.h"
#include "ipi_oracle.h"
#include "ipi_round.h"

/* Guest data, one copy per VM; the host writes it only while vCPUs park. */
static struct ipi_tally ipi_tally[IPI_ROUND_MAX_VCPUS];
static u32 ipi_fences_due[IPI_ROUND_MAX_VCPUS];
static u8 ipi_index_of_id[256];
#ifdef KVM_IPI_XAPIC
static bool ipi_xapic;
#endif

/* This vCPU's index in the host's list of APIC IDs. */
static u32 guest_ipi_index(void)
{
#ifdef KVM_IPI_XAPIC
	if (READ_ONCE(ipi_xapic))
		return ipi_index_of_id[xapic_read_reg(APIC_ID) >> 24];
#endif
	return ipi_index_of_id[x2apic_read_reg(APIC_ID) & 0xff];
}

u8 guest_ipi_write(u64 icr)
{
#ifdef KVM_IPI_XAPIC
	if (READ_ONCE(ipi_xapic)) {
		/* ICR2 first: writing the low half sends. */
		xapic_write_reg(APIC_ICR2, icr >> 32);
		xapic_write_reg(APIC_ICR, (u32)icr);
		return 0;
	}
#endif
	return x2apic_write_reg_safe(APIC_ICR, icr);
}

u64 guest_ipi_read(void)
{
#ifdef KVM_IPI_XAPIC
	/* Not the delivery status: the write did not set it. */
	if (READ_ONCE(ipi_xapic))
		return ((u64)xapic_read_reg(APIC_ICR2) << 32 | xapic_read_reg(APIC_ICR)) &
		       ~(u64)APIC_ICR_BUSY;
#endif
	return x2apic_read_reg(APIC_ICR);
}

static void guest_ipi_isr(struct ex_regs *regs)
{
	struct ipi_tally *t = &ipi_tally[guest_ipi_index()];

	WRITE_ONCE(t->irqs[regs->vector], t->irqs[regs->vector] + 1);
#ifdef KVM_IPI_XAPIC
	if (READ_ONCE(ipi_xapic)) {
		xapic_write_reg(APIC_EOI, 0);
		return;
	}
#endif
	x2apic_write_reg(APIC_EOI, 0);
}

static void guest_ipi_nmi(struct ex_regs *regs)
{
	struct ipi_tally *t = &ipi_tally[guest_ipi_index()];

	WRITE_ONCE(t->nmis, t->nmis + 1);
}

static bool guest_fenced(u32 me)
{
	return READ_ONCE(ipi_tally[me].irqs[IPI_FENCE_VECTOR]) >=
	       READ_ONCE(ipi_fences_due[me]);
}

void guest_ipi_idle_until_fenced(void)
{
	u32 me = guest_ipi_index();

	cli();
	while (!guest_fenced(me)) {
		safe_halt();
		cli();
	}
}

#ifdef KVM_ICR_HOSTILE_HELPERS
void guest_ipi_drain(u32 windows)
{
	u32 me = guest_ipi_index();

	while (!guest_fenced(me) && windows--)
		sti_nop_cli();
}
#endif

void ipi_round_init(struct ipi_round *r, struct kvm_vm *vm, const u32 *ids,
		    unsigned int nr_vcpus, const u8 *vectors,
		    unsigned int nr_vectors)
{
	unsigned int i;

	TEST_ASSERT(nr_vcpus <= IPI_ROUND_MAX_VCPUS, "at most %d vCPUs", IPI_ROUND_MAX_VCPUS);
	r->vm = vm;
	r->nr_vcpus = nr_vcpus;
	r->ids = ids;
	r->tally = addr_gva2hva(vm, (gva_t)ipi_tally);
	r->fences_due = addr_gva2hva(vm, (gva_t)ipi_fences_due);
#ifdef KVM_IPI_XAPIC
	r->xapic = addr_gva2hva(vm, (gva_t)&ipi_xapic);
#endif
	for (i = 0; i < nr_vcpus; i++) {
		TEST_ASSERT(ids[i] < 256, "APIC ID 0x%x above 0xff", ids[i]);
		ipi_index_of_id[ids[i]] = i;
	}
	sync_global_to_guest(vm, ipi_index_of_id);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_ipi_nmi);
	vm_install_exception_handler(vm, IPI_FENCE_VECTOR, guest_ipi_isr);
	for (i = 0; i < nr_vectors; i++)
		vm_install_exception_handler(vm, vectors[i], guest_ipi_isr);
#ifdef KVM_IPI_XAPIC
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
#endif
}

#ifdef KVM_IPI_XAPIC
void ipi_round_to_xapic(struct ipi_round *r)
{
	WRITE_ONCE(*r->xapic, true);
}
#endif

void ipi_round_fence_due(struct ipi_round *r, unsigned int i)
{
	r->fences_due[i]++;
}

void ipi_round_fence(struct ipi_round *r, unsigned int i)
{
	host_msi_send(r->vm, r->ids[i], IPI_FENCE_VECTOR);
}

void ipi_round_collect(const struct ipi_round *r, u64 icr,
		       const struct ipi_tally *before, u32 *got,
		       u32 *other)
{
	struct icr_fields d = icr_decode(icr);
	bool nmi = d.mode == ICR_DM_NMI;
	unsigned int i, v;

	*other = 0;
	for (i = 0; i < r->nr_vcpus; i++) {
		const struct ipi_tally *now = &r->tally[i], *was = &before[i];

		got[i] = nmi ? now->nmis - was->nmis : now->irqs[d.vector] - was->irqs[d.vector];
		for (v = 16; v < 256; v++)
			if (v != IPI_FENCE_VECTOR && (nmi || v != d.vector))
				*other += now->irqs[v] - was->irqs[v];
		if (!nmi)
			*other += now->nmis - was->nmis;
	}
}
