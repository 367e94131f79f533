// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2apic_icr_fastpath_writes vCPU stat counts exactly the x2APIC ICR
 * writes that KVM completes in its fastpath, where the platform runs it: a
 * fixed physical, a fixed logical and an ALL-BUT-SELF IPI to another vCPU
 * each add to the sender's stat one or nothing, as this kernel's rule
 * (ipi_oracle.c) says, and each reaches the receiver's interrupt handler.
 *
 * vCPU 0 sends, one ICR write per host round trip, so that the host reads
 * the stat right before and right after each write; vCPU 1 idles in HLT
 * and counts interrupts.  Every wait is bounded by a host deadline.
 */
#ifdef KVM_FASTPATH_STAT_CHECKS
/*
 * Where the fastpath cannot run, the stat must not rise at all; and the
 * vCPU's debugfs file must show what the binary stats show.
 */
#endif
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "host_msi.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"

#define IPI_VECTOR	0xa0
#define SENDER_ID	0
#define RECEIVER_ID	1
#define WAIT_SECONDS	2	/* any one wait */

static u64 icr_to_send;		/* host -> sender; 0 ends the test */
static u32 receiver_ready;
static u32 receiver_irqs;
static u32 receiver_stop;

static void receiver_isr(struct ex_regs *regs)
{
	WRITE_ONCE(receiver_irqs, receiver_irqs + 1);
	x2apic_write_reg(APIC_EOI, 0);
}

static void receiver_code(void)
{
	x2apic_enable_icr_exits();
	WRITE_ONCE(receiver_ready, 1);

	cli();
	while (!READ_ONCE(receiver_stop)) {
		safe_halt();
		cli();
	}
	GUEST_DONE();
}

static void sender_code(void)
{
	u64 icr;

	x2apic_enable_icr_exits();
	for (;;) {
		GUEST_SYNC(0);
		icr = READ_ONCE(icr_to_send);
		if (!icr)
			break;
		x2apic_write_reg(APIC_ICR, icr);
	}
	GUEST_DONE();
}

struct stat_case {
	const char *name;
	u64 icr;
};

static const struct stat_case cases[] = {
	{ "fixed physical IPI to another vCPU",
	  APIC_DM_FIXED | APIC_INT_ASSERT | APIC_DEST_PHYSICAL | IPI_VECTOR |
	  (u64)RECEIVER_ID << 32 },
	{ "fixed logical IPI to another vCPU",
	  APIC_DM_FIXED | APIC_INT_ASSERT | APIC_DEST_LOGICAL | IPI_VECTOR |
	  (u64)(1 << RECEIVER_ID) << 32 },
	{ "fixed all-but-self IPI",
	  APIC_DM_FIXED | APIC_INT_ASSERT | APIC_DEST_ALLBUT | IPI_VECTOR },
};

static struct kvm_vm *vm;
static struct kvm_vcpu *sender, *receiver;
static struct vcpu_thread receiver_thread;
static bool have_stat;
#ifdef KVM_FASTPATH_STAT_CHECKS
static u64 total_hits;	/* the stat's rise over every case */
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Poll a guest variable until it reaches @want or the deadline passes. */
static bool wait_guest_u32(u32 *gva, u32 want)
{
	u32 *hva = addr_gva2hva(vm, (gva_t)gva);
	double deadline = now() + WAIT_SECONDS;

	while (READ_ONCE(*hva) < want) {
		if (now() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

static u32 read_guest_u32(u32 *gva)
{
	return READ_ONCE(*(u32 *)addr_gva2hva(vm, (gva_t)gva));
}

/*
 * Run the sender to its next GUEST_SYNC.  Bounded: an ICR write that never
 * completes (a fastpath that leaves RIP on the WRMSR writes it again and
 * again) fails rather than hangs.
 */
static void sender_step(void)
{
	vcpu_run_within(sender, WAIT_SECONDS);
	TEST_ASSERT_EQ(vcpu_sync_or_done(sender, NULL), UCALL_SYNC);
}

/* Have the sender write @icr once; returns the stat's rise across it. */
static u64 send_one(u64 icr)
{
	u64 before = ipi_fastpath_hits(sender, have_stat);

	icr_to_send = icr;
	sync_global_to_guest(vm, icr_to_send);
	sender_step();
	return ipi_fastpath_hits(sender, have_stat) - before;
}

static void run_case(const struct stat_case *c, const struct ipi_platform *p)
{
	const u32 ids[] = { SENDER_ID, RECEIVER_ID };
	struct ipi_expectation e = ipi_expect(c->icr, 0, ids, 2);
	int want_hits = icr_expected_fastpath_hits(c->icr, p);
	u32 irqs = read_guest_u32(&receiver_irqs);
	u32 want_irqs = irqs + !!(e.targets & (1 << 1));
	u64 hits;
	char text[128], name[96];
	bool delivered;

	TEST_ASSERT(e.fate == IPI_FATE_EACH, "case '%s' must have a defined outcome", c->name);
	icr_format(c->icr, text, sizeof(text));

	hits = send_one(c->icr);
#ifdef KVM_FASTPATH_STAT_CHECKS
	total_hits += hits;
#endif
	delivered = wait_guest_u32(&receiver_irqs, want_irqs);
	if (!delivered || read_guest_u32(&receiver_irqs) != want_irqs)
		ksft_print_msg("%s: receiver ISR count %u, want %u\n", text,
			       read_guest_u32(&receiver_irqs), want_irqs);
	snprintf(name, sizeof(name), "%s: delivered", c->name);
	ksft_test_result(delivered && read_guest_u32(&receiver_irqs) == want_irqs, "%s\n", name);

	snprintf(name, sizeof(name), "%s: path", c->name);
	ipi_path_result(p, have_stat, hits, want_hits, name, text);
}

#ifdef KVM_FASTPATH_STAT_CHECKS
/*
 * Where KVM must not take the fastpath at all (SVM without NRIP save: it
 * cannot skip the WRMSR with interrupts off), the stat must not rise: the
 * per-case path points above SKIP there, this one checks the rule itself.
 */
static void check_no_fastpath(const struct ipi_platform *p)
{
	const char *name = "no fastpath where it cannot run";

	if (!have_stat || p->fastpath_possible) {
		ksft_test_result_code(KSFT_SKIP, name, "%s",
				      have_stat ? "it can run here: checked per case" : "no stat");
		return;
	}
	if (total_hits)
		ksft_print_msg("fastpath +%lu over the cases, where it cannot run\n",
			       total_hits);
	ksft_test_result(!total_hits, "%s\n", name);
}

/*
 * KVM mirrors every vCPU stat in debugfs as a per-VM sum:
 * kvm/<pid>-<vm fd>/<name>.
 */
static void check_debugfs(void)
{
	u64 binary, text;
	char path[128];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/%s",
		 getpid(), vm->fd, ICR_FASTPATH_STAT);
	f = have_stat ? fopen(path, "r") : NULL;
	if (!f) {
		ksft_test_result_code(KSFT_SKIP, "debugfs mirrors the stat", "%s%s%s",
				      have_stat ? path : "no stat", have_stat ? ": " : "",
				      have_stat ? strerror(errno) : "");
		return;
	}
	n = fscanf(f, "%lu", &text);
	fclose(f);
	binary = vcpu_get_stat(sender, x2apic_icr_fastpath_writes) +
		 vcpu_get_stat(receiver, x2apic_icr_fastpath_writes);
	if (n != 1 || text != binary)
		ksft_print_msg("%s reads %lu, binary stats sum to %lu\n",
			       path, text, binary);
	ksft_test_result(n == 1 && text == binary, "debugfs mirrors the stat\n");
}
#endif

int main(void)
{
	struct ipi_platform platform;
	char desc[192];
	int i;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));
	platform = ipi_platform_probe();

	ksft_print_header();
#ifdef KVM_FASTPATH_STAT_CHECKS
	ksft_set_plan(2 * ARRAY_SIZE(cases) + 2);
#else
	ksft_set_plan(2 * ARRAY_SIZE(cases));
#endif

	vm = vm_create_with_one_vcpu(&sender, sender_code);
	receiver = vm_vcpu_add(vm, RECEIVER_ID, receiver_code);
	vm_install_exception_handler(vm, IPI_VECTOR, receiver_isr);

	/* Before the receiver runs: its stats fd cannot be had while it does. */
	have_stat = vcpu_has_stat(sender, x2apic_icr_fastpath_writes) &&
		    vcpu_has_stat(receiver, x2apic_icr_fastpath_writes);
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("platform: %s, stat %s\n", desc,
		       have_stat ? ICR_FASTPATH_STAT : "absent");

	vcpu_thread_start(&receiver_thread, receiver);
	vcpu_thread_resume(&receiver_thread);
	sender_step();		/* the sender is in x2APIC mode now */
	TEST_ASSERT(wait_guest_u32(&receiver_ready, 1),
		    "receiver not ready after %u s", WAIT_SECONDS);

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(&cases[i], &platform);
#ifdef KVM_FASTPATH_STAT_CHECKS
	check_no_fastpath(&platform);
	check_debugfs();
#endif

	/*
	 * Stop the receiver: it rechecks the flag when an interrupt wakes it,
	 * here one from the host (KVM_SIGNAL_MSI), which works even where the
	 * IPIs above were lost.
	 */
	WRITE_ONCE(*(u32 *)addr_gva2hva(vm, (gva_t)&receiver_stop), 1);
	host_msi_send(vm, RECEIVER_ID, IPI_VECTOR);
	TEST_ASSERT(vcpu_thread_stopped_within(&receiver_thread, WAIT_SECONDS),
		    "receiver did not stop within %u s", WAIT_SECONDS);
	TEST_ASSERT_EQ(receiver_thread.ucall, UCALL_DONE);
	vcpu_thread_join(&receiver_thread);

	icr_to_send = 0;
	sync_global_to_guest(vm, icr_to_send);
	vcpu_run_within(sender, WAIT_SECONDS);
	TEST_ASSERT_EQ(vcpu_sync_or_done(sender, NULL), UCALL_DONE);
	kvm_vm_free(vm);
	ksft_finished();
}
