// SPDX-License-Identifier: GPL-2.0-only
/*
 * Routes by which an interrupt reaches a vCPU other than a WRMSR to the
 * x2APIC ICR, each held to its clause:
 *  - the xAPIC page in x2APIC mode: "the memory mapped interface is not
 *    available" (SDM Vol. 3A, "x2APIC Register Availability"): an ICR write
 *    there sends nothing, a read returns no APIC register; with
 *    KVM_X86_QUIRK_LAPIC_MMIO_HOLE disabled (api.rst, KVM_CAP_DISABLE_QUIRKS2)
 *    such accesses exit to userspace (KVM_EXIT_MMIO);
 *  - the xAPIC page in xAPIC mode: the write of the ICR's low half sends
 *    the IPI to the destination in ICR2 bits 31:24 ("Interrupt Command
 *    Register (ICR)"), physical or flat logical;
 *  - KVM_SIGNAL_MSI: destination ID in address bits 19:12, DM bit 2, RH
 *    bit 3, vector and delivery mode in the data ("Message Signalled
 *    Interrupts"); address_hi is ignored unless KVM_X2APIC_API_USE_32BIT_IDS
 *    is on, and then carries destination bits 31:8 (api.rst).
 * Logical MSIs set RH: with RH clear the SDM calls DM ignored.
 *
 * Each case gets a vector of its own.  The host runs one vCPU at a time:
 * the sender (or the host, for an MSI), then every vCPU, which takes what
 * is pending and asserts what it took of each vector and how many NMIs.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"

#define NR_VCPUS	3
#define FIRST_VECTOR	0x40
#define MMIO_FILL	0x5a5a5a5aU	/* what the host returns for a read */

/* ICR2:ICR in xAPIC mode: the destination is bits 63:56. */
#define XAPIC_ICR(dest, flags)	((u64)(dest) << 56 | APIC_INT_ASSERT | (flags))
#define X2APIC_ICR(dest, flags)	((u64)(dest) << 32 | APIC_INT_ASSERT | (flags))
/*
 * MSI address_hi:address_lo: address_lo bits 19:12 hold destination bits
 * 7:0, address_hi bits 31:8 (KVM_X2APIC_API_USE_32BIT_IDS) bits 31:8.
 */
#define MSI_RH			BIT(3)
#define MSI_DM_LOGICAL		BIT(2)
#define MSI_ADDR(dest_31_8, dest_7_0, flags) \
	((u64)(dest_31_8) << 40 | APIC_DEFAULT_GPA | (dest_7_0) << 12 | (flags))
/* MSI data bits 10:8 are the delivery mode, as in the ICR; edge. */
#define MSI_FIXED		APIC_DM_FIXED
#define MSI_NMI			APIC_DM_NMI

enum guest_op { OP_XAPIC, OP_X2APIC, OP_MMIO_ICR, OP_MMIO_ICR2, OP_MMIO_READ,
		OP_MSR_ICR, OP_TAKE, OP_MSI };

struct route_case {
	const char *name;
	enum guest_op op;	/* OP_MSI: the host sends it */
	u64 icr;		/* ICR, or MSI address, without the vector */
	u32 data;		/* MSI data, without the vector */
	u8 irqs[NR_VCPUS];	/* times vCPU i takes the case's vector */
	u8 nmis[NR_VCPUS];
};

/* In x2APIC mode; vCPU 1 accesses the xAPIC page, vCPU 0 is x2APIC ID 0. */
static const struct route_case x2apic_page[] = {
	{ "MMIO ICR write sends no IPI", OP_MMIO_ICR, XAPIC_ICR(2, APIC_DM_FIXED) },
	{ "MMIO read returns no APIC register", OP_MMIO_READ },
	{ "WRMSR ICR write sends (control)", OP_MSR_ICR, X2APIC_ICR(2, APIC_DM_FIXED),
	  0, { 0, 0, 1 } },
};

/* vCPU i has APIC ID i and flat logical ID BIT(i); vCPU 1 sends. */
static const struct route_case xapic_page[] = {
	{ "MMIO fixed physical IPI", OP_MMIO_ICR, XAPIC_ICR(2, APIC_DM_FIXED),
	  0, { 0, 0, 1 } },
	{ "MMIO fixed logical IPI to two", OP_MMIO_ICR,
	  XAPIC_ICR(0x05, APIC_DEST_LOGICAL | APIC_DM_FIXED), 0, { 1, 0, 1 } },
	{ "MMIO ICR2 write alone sends nothing", OP_MMIO_ICR2, XAPIC_ICR(2, 0) },
};

static const struct route_case xapic_msi[] = {
	{ "fixed physical", OP_MSI, MSI_ADDR(0, 2, 0), MSI_FIXED, { 0, 0, 1 } },
	{ "fixed physical, RH set", OP_MSI, MSI_ADDR(0, 1, MSI_RH), MSI_FIXED, { 0, 1, 0 } },
	{ "fixed logical", OP_MSI, MSI_ADDR(0, 0x04, MSI_RH | MSI_DM_LOGICAL), MSI_FIXED,
	  { 0, 0, 1 } },
	{ "NMI physical", OP_MSI, MSI_ADDR(0, 1, 0), MSI_NMI, {}, { 0, 1, 0 } },
	{ "NMI logical", OP_MSI, MSI_ADDR(0, 0x01, MSI_RH | MSI_DM_LOGICAL), MSI_NMI,
	  {}, { 1, 0, 0 } },
};

/* x2APIC IDs 0, 0x2c and 0x12c: 0x12c's low byte is 0x2c's. */
static const struct route_case x2apic_msi_8bit[] = {
	{ "address_hi ignored", OP_MSI, MSI_ADDR(0x1, 0x2c, 0), MSI_FIXED, { 0, 1, 0 } },
};

static const struct route_case x2apic_msi_32bit[] = {
	{ "fixed physical to 0x2c", OP_MSI, MSI_ADDR(0, 0x2c, 0), MSI_FIXED, { 0, 1, 0 } },
	{ "fixed physical to 0x12c", OP_MSI, MSI_ADDR(0x1, 0x2c, 0), MSI_FIXED, { 0, 0, 1 } },
	{ "NMI physical to 0x12c", OP_MSI, MSI_ADDR(0x1, 0x2c, 0), MSI_NMI, {}, { 0, 0, 1 } },
	/* cluster 0x12, bit 0x12c & 0xf */
	{ "fixed logical to cluster 0x12", OP_MSI,
	  MSI_ADDR(0x1210, 0, MSI_RH | MSI_DM_LOGICAL), MSI_FIXED, { 0, 0, 1 } },
};

struct scenario {
	const char *name;
	bool x2apic;
	u64 quirks_off;		/* KVM_CAP_DISABLE_QUIRKS2 */
	u64 x2apic_api;		/* KVM_CAP_X2APIC_API */
	u32 ids[NR_VCPUS];
	const struct route_case *cases;
	int nr_cases;
};

static const struct scenario scenarios[] = {
	{ "x2APIC mode", true, 0, 0, { 0, 1, 2 }, x2apic_page, ARRAY_SIZE(x2apic_page) },
	{ "x2APIC mode, MMIO hole quirk off, exits to userspace", true,
	  KVM_X86_QUIRK_LAPIC_MMIO_HOLE, 0, { 0, 1, 2 }, x2apic_page, ARRAY_SIZE(x2apic_page) },
	{ "xAPIC mode", false, 0, 0, { 0, 1, 2 }, xapic_page, ARRAY_SIZE(xapic_page) },
	{ "xAPIC mode, KVM_SIGNAL_MSI", false, 0, 0, { 0, 1, 2 },
	  xapic_msi, ARRAY_SIZE(xapic_msi) },
	{ "x2APIC mode, KVM_SIGNAL_MSI", true, 0, 0, { 0, 0x2c, 0x12c },
	  x2apic_msi_8bit, ARRAY_SIZE(x2apic_msi_8bit) },
	{ "x2APIC mode, KVM_SIGNAL_MSI, 32-bit IDs", true, 0, KVM_X2APIC_API_USE_32BIT_IDS,
	  { 0, 0x2c, 0x12c }, x2apic_msi_32bit, ARRAY_SIZE(x2apic_msi_32bit) },
};

#define SENDER	1

/* Host -> guest, while every vCPU is stopped; the tables are the guest's too. */
static struct {
	enum guest_op op;
	const struct route_case *c;
	u8 vector;		/* the case's */
	u64 icr;		/* c->icr with the vector */
	bool x2apic, mmio_to_host;
} cmd;

/* Guest: what each vCPU took, per vector (NMIs at 2); its index is its GS base. */
static u32 taken[NR_VCPUS][256];

static void handler(struct ex_regs *regs)
{
	u32 me = rdmsr(MSR_GS_BASE);

	WRITE_ONCE(taken[me][regs->vector], taken[me][regs->vector] + 1);
	if (regs->vector == NMI_VECTOR)
		return;
	if (cmd.x2apic)
		x2apic_write_reg(APIC_EOI, 0);
	else
		xapic_write_reg(APIC_EOI, 0);
}

/* In x2APIC mode: the xAPIC page must not show the APIC's registers. */
static void guest_mmio_read(void)
{
	u32 id = xapic_read_reg(APIC_ID), lvr = xapic_read_reg(APIC_LVR);
	u32 x2apic_id = x2apic_read_reg(APIC_ID);

	if (cmd.mmio_to_host) {
		__GUEST_ASSERT(id == MMIO_FILL && lvr == MMIO_FILL,
			       "MMIO read: ID 0x%x, LVR 0x%x, want the host's 0x%x",
			       id, lvr, MMIO_FILL);
		return;
	}
	__GUEST_ASSERT(lvr != x2apic_read_reg(APIC_LVR),
		       "MMIO read of the LVR in x2APIC mode: 0x%x, the register's", lvr);
	__GUEST_ASSERT(id != x2apic_id && id != x2apic_id << 24,
		       "MMIO read of the ID in x2APIC mode: 0x%x, x2APIC ID 0x%x",
		       id, x2apic_id);
}

/* Take what is pending, then check it against what the host expects. */
static void guest_take(u32 me)
{
	u32 got, want;
	int v;

	sti_nop_cli();
	for (v = 0; v < 256; v++) {
		got = READ_ONCE(taken[me][v]);
		want = v == NMI_VECTOR ? cmd.c->nmis[me] :
		       v == cmd.vector ? cmd.c->irqs[me] : 0;
		__GUEST_ASSERT(got == want, "vCPU %u took vector 0x%x %u times, want %u",
			       me, v, got, want);
		WRITE_ONCE(taken[me][v], 0);
	}
}

static void guest_code(void)
{
	u32 me = rdmsr(MSR_GS_BASE);

	for (;;) {
		switch (READ_ONCE(cmd.op)) {
		case OP_XAPIC:
			xapic_enable();
			xapic_write_reg(APIC_DFR, APIC_DFR_FLAT);
			xapic_write_reg(APIC_LDR, BIT(24 + me));
			break;
		case OP_X2APIC:
			x2apic_enable();
			break;
		case OP_MMIO_ICR:
		case OP_MMIO_ICR2:
			xapic_write_reg(APIC_ICR2, cmd.icr >> 32);
			if (cmd.op == OP_MMIO_ICR)
				xapic_write_reg(APIC_ICR, (u32)cmd.icr);
			break;
		case OP_MMIO_READ:
			guest_mmio_read();
			break;
		case OP_MSR_ICR:
			x2apic_write_reg(APIC_ICR, cmd.icr);
			break;
		case OP_TAKE:
			guest_take(me);
			break;
		case OP_MSI:	/* the host sends it */
			break;
		}
		GUEST_SYNC(0);
	}
}

/* The KVM_EXIT_MMIO exits of one step, as "W4 0xfee00310=0x2000000 R4 ...". */
static char mmio_log[128];

/*
 * Run @vcpu to its next GUEST_SYNC, logging MMIO exits and answering reads
 * with MMIO_FILL.  A guest assert is printed and fails the case, and the
 * guest goes on: vcpu_run() would end the test at the first.
 */
static bool run_step(struct kvm_vcpu *vcpu)
{
	u64 fill = MMIO_FILL | (u64)MMIO_FILL << 32;
	struct kvm_run *run = vcpu->run;
	size_t n = strlen(mmio_log);
	struct ucall uc;
	bool ok = true;
	u32 data;
	int r;

	for (;;) {
		do {
			r = __vcpu_run(vcpu);
		} while (r == -1 && errno == EINTR);
		TEST_ASSERT(!r, KVM_IOCTL_ERROR(KVM_RUN, r));
		if (run->exit_reason == KVM_EXIT_MMIO) {
			memcpy(&data, run->mmio.data, sizeof(data));
			n += snprintf(mmio_log + n, sizeof(mmio_log) - n,
				      run->mmio.is_write ? "W%u 0x%llx=0x%x " : "R%u 0x%llx ",
				      run->mmio.len, (unsigned long long)run->mmio.phys_addr, data);
			n = min(n, sizeof(mmio_log) - 1);
			if (!run->mmio.is_write)
				memcpy(run->mmio.data, &fill, sizeof(fill));
			continue;
		}
		switch (get_ucall(vcpu, &uc)) {
		case UCALL_SYNC:
			return ok;
		case UCALL_ABORT:
			ksft_print_msg("%s:%lu: %s\n", (const char *)uc.args[GUEST_FILE],
				       (unsigned long)uc.args[GUEST_LINE], uc.buffer);
			ok = false;
			break;
		default:
			TEST_FAIL("vCPU exit %s", exit_reason_str(run->exit_reason));
		}
	}
}

/* The 32-bit accesses to the xAPIC page that @c's step makes, each an exit. */
static bool mmio_exits_as_expected(const struct route_case *c, u64 icr)
{
	char want[sizeof(mmio_log)] = "";

	if (c->op == OP_MMIO_ICR)
		snprintf(want, sizeof(want), "W4 0x%x=0x%x W4 0x%x=0x%x ",
			 (u32)APIC_DEFAULT_GPA + APIC_ICR2, (u32)(icr >> 32),
			 (u32)APIC_DEFAULT_GPA + APIC_ICR, (u32)icr);
	else if (c->op == OP_MMIO_READ)
		snprintf(want, sizeof(want), "R4 0x%x R4 0x%x ",
			 (u32)APIC_DEFAULT_GPA + APIC_ID,
			 (u32)APIC_DEFAULT_GPA + APIC_LVR);
	if (!strcmp(mmio_log, want))
		return true;
	ksft_print_msg("%s: MMIO exits \"%s\", want \"%s\"\n", c->name, mmio_log, want);
	return false;
}

static bool send_msi(struct kvm_vm *vm, const struct route_case *c)
{
	struct kvm_msi msi = {
		.address_lo = (u32)c->icr,
		.address_hi = c->icr >> 32,
		.data = c->data | cmd.vector,
	};
	int r = __vm_ioctl(vm, KVM_SIGNAL_MSI, &msi);

	/* every case's MSI reaches some vCPU */
	if (r <= 0)
		ksft_print_msg("%s: KVM_SIGNAL_MSI 0x%x:0x%x data 0x%x returned %d (errno %d)\n",
			       c->name, msi.address_hi, msi.address_lo, msi.data, r,
			       r < 0 ? errno : 0);
	return r > 0;
}

static void run_case(struct kvm_vm *vm, struct kvm_vcpu *vcpus[],
		     const struct scenario *s, int n)
{
	const struct route_case *c = &s->cases[n];
	bool ok;
	int i;

	cmd.op = c->op;
	cmd.c = c;
	cmd.vector = FIRST_VECTOR + n;
	cmd.icr = c->icr | cmd.vector;
	sync_global_to_guest(vm, cmd);

	mmio_log[0] = 0;
	if (c->op == OP_MSI)
		ok = send_msi(vm, c);
	else
		ok = run_step(vcpus[SENDER]);
	if (s->quirks_off)
		ok &= mmio_exits_as_expected(c, cmd.icr);

	cmd.op = OP_TAKE;
	sync_global_to_guest(vm, cmd);
	for (i = 0; i < NR_VCPUS; i++)
		ok &= run_step(vcpus[i]);
	ksft_test_result(ok, "%s: %s\n", s->name, c->name);
}

/* Why @s cannot run here, or NULL. */
static const char *unsupported(const struct scenario *s)
{
	if (s->quirks_off && !(kvm_check_cap(KVM_CAP_DISABLE_QUIRKS2) & s->quirks_off))
		return "KVM_X86_QUIRK_LAPIC_MMIO_HOLE cannot be disabled";
	if (s->x2apic_api && !(kvm_check_cap(KVM_CAP_X2APIC_API) & s->x2apic_api))
		return "no KVM_X2APIC_API_USE_32BIT_IDS";
	if (s->ids[NR_VCPUS - 1] >= kvm_check_cap(KVM_CAP_MAX_VCPU_ID))
		return "vCPU IDs too high";
	return NULL;
}

static void run_scenario(const struct scenario *s)
{
	struct kvm_vcpu *vcpus[NR_VCPUS];
	const char *why = unsupported(s);
	struct kvm_vm *vm;
	int i;

	for (i = 0; why && i < s->nr_cases; i++) {
		char point[128];

		snprintf(point, sizeof(point), "%s: %s", s->name, s->cases[i].name);
		ksft_test_result_code(KSFT_SKIP, point, "%s", why);
	}
	if (why)
		return;

	vm = vm_create(NR_VCPUS);
	if (s->quirks_off)
		vm_enable_cap(vm, KVM_CAP_DISABLE_QUIRKS2, s->quirks_off);
	if (s->x2apic_api)
		vm_enable_cap(vm, KVM_CAP_X2APIC_API, s->x2apic_api);
	for (i = 0; i < NR_VCPUS; i++) {
		vcpus[i] = vm_vcpu_add(vm, s->ids[i], guest_code);
		vcpu_set_msr(vcpus[i], MSR_GS_BASE, i);
	}
	vm_install_exception_handler(vm, NMI_VECTOR, handler);
	for (i = 0; i < s->nr_cases; i++)
		vm_install_exception_handler(vm, FIRST_VECTOR + i, handler);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);

	memset(&cmd, 0, sizeof(cmd));
	cmd.op = s->x2apic ? OP_X2APIC : OP_XAPIC;
	cmd.x2apic = s->x2apic;
	cmd.mmio_to_host = s->quirks_off & KVM_X86_QUIRK_LAPIC_MMIO_HOLE;
	sync_global_to_guest(vm, cmd);
	for (i = 0; i < NR_VCPUS; i++)
		TEST_ASSERT(run_step(vcpus[i]), "%s: APIC setup", s->name);

	for (i = 0; i < s->nr_cases; i++)
		run_case(vm, vcpus, s, i);
	kvm_vm_free(vm);
}

int main(void)
{
	int i, n = 0;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));
	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_X2APIC));

	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		n += scenarios[i].nr_cases;
	ksft_print_header();
	ksft_set_plan(n);
	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		run_scenario(&scenarios[i]);
	ksft_finished();
}
