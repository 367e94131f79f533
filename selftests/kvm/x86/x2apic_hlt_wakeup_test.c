// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every interrupt sent to a halted vCPU wakes it: none is lost.
 *
 * A receiver vCPU idles until it has handled a given number of interrupts;
 * the host then sends it one more, from one of two sources:
 *
 *  - the host itself, with KVM_SIGNAL_MSI (what the IPI tests use as their
 *    fence);
 *  - another vCPU, with a fixed physical IPI written to its x2APIC ICR.
 *
 * It is sent either once the receiver's thread sleeps in KVM (the vCPU is
 * halted: KVM must wake it) or before the receiver runs at all (pending on
 * entry: KVM must deliver it when the guest opens its interrupt window).
 * The receiver idles in one of three ways: "sti; hlt; cli" (safe_halt()),
 * whose HLT runs in STI's interrupt shadow, so that the CPU must take the
 * interrupt at the first boundary after the HLT exit (also with a NOP after
 * the HLT); "sti; nop; hlt; cli", which opens the interrupt window one
 * instruction before the HLT, and whose handler steps over a HLT it
 * interrupted; or polling with interrupts on.  It acknowledges
 * each interrupt with an EOI, by MSR in x2APIC mode or by MMIO in xAPIC
 * mode.
 *
 * Each case runs ROUNDS rounds.  A round passes when the receiver handled
 * the interrupt and parked again within WAIT_SECONDS.  When it does not, the
 * host takes the vCPU out of KVM_RUN with a signal and prints where the
 * interrupt is (IRR, ISR, an injection in flight) and where the vCPU is
 * (MP state, RIP, RFLAGS.IF, interrupt shadow): a lost wake-up is a failure,
 * and the state tells whether KVM still holds the interrupt.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "host_msi.h"
#include "lapic_irr.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"

#define RECEIVER	0
#define SENDER		1
#define WAKE_VECTOR	0x20
#define ROUNDS		10
#define WAIT_SECONDS	5
#define HLT_OPCODE	0xf4

enum idle { IDLE_STI_HLT, IDLE_STI_HLT_NOP, IDLE_STI_NOP_HLT, IDLE_POLL };
enum source { FROM_HOST, FROM_VCPU };
enum timing { WHILE_HALTED, ON_ENTRY };

struct wake_case {
	const char *name;
	bool xapic;
	enum idle idle;
	enum source source;
	enum timing timing;
};

static const struct wake_case cases[] = {
	{ "x2APIC, sti;hlt;cli, MSI from the host while halted",
	  false, IDLE_STI_HLT, FROM_HOST, WHILE_HALTED },
	{ "x2APIC, sti;hlt;cli, MSI from the host pending on entry",
	  false, IDLE_STI_HLT, FROM_HOST, ON_ENTRY },
	{ "x2APIC, sti;hlt;nop;cli, MSI from the host pending on entry",
	  false, IDLE_STI_HLT_NOP, FROM_HOST, ON_ENTRY },
	{ "x2APIC, sti;nop;hlt;cli, MSI from the host while halted",
	  false, IDLE_STI_NOP_HLT, FROM_HOST, WHILE_HALTED },
	{ "x2APIC, sti;nop;hlt;cli, MSI from the host pending on entry",
	  false, IDLE_STI_NOP_HLT, FROM_HOST, ON_ENTRY },
	{ "x2APIC, sti;nop;hlt;cli, IPI from a vCPU pending on entry",
	  false, IDLE_STI_NOP_HLT, FROM_VCPU, ON_ENTRY },
	{ "x2APIC, polling, MSI from the host pending on entry",
	  false, IDLE_POLL, FROM_HOST, ON_ENTRY },
	{ "x2APIC, sti;hlt;cli, IPI from a vCPU while halted",
	  false, IDLE_STI_HLT, FROM_VCPU, WHILE_HALTED },
	{ "x2APIC, sti;hlt;cli, IPI from a vCPU pending on entry",
	  false, IDLE_STI_HLT, FROM_VCPU, ON_ENTRY },
	{ "xAPIC, sti;hlt;cli, MSI from the host while halted",
	  true, IDLE_STI_HLT, FROM_HOST, WHILE_HALTED },
	{ "xAPIC, sti;hlt;cli, MSI from the host pending on entry",
	  true, IDLE_STI_HLT, FROM_HOST, ON_ENTRY },
	{ "xAPIC, sti;nop;hlt;cli, MSI from the host pending on entry",
	  true, IDLE_STI_NOP_HLT, FROM_HOST, ON_ENTRY },
};

/* Host -> guest, written while the receiver is parked. */
static u32 wake_case;
static u32 wanted;
/* Guest -> host. */
static u32 handled;
static u32 idling;		/* the round the receiver idles in */

static void guest_isr(struct ex_regs *regs)
{
	const struct wake_case *c = &cases[READ_ONCE(wake_case)];

	WRITE_ONCE(handled, handled + 1);
	if (c->xapic)
		xapic_write_reg(APIC_EOI, 0);
	else
		x2apic_write_reg(APIC_EOI, 0);
	/* only "sti; nop; hlt" may be interrupted right before its HLT */
	if (c->idle == IDLE_STI_NOP_HLT && *(u8 *)regs->rip == HLT_OPCODE)
		regs->rip++;
}

static void receiver_idle(const struct wake_case *c, u32 want)
{
	cli();
	while (READ_ONCE(handled) < want) {
		switch (c->idle) {
		case IDLE_STI_HLT:
			safe_halt();
			cli();
			break;
		case IDLE_STI_HLT_NOP:
			asm volatile("sti; hlt; nop; cli" ::: "memory");
			break;
		case IDLE_STI_NOP_HLT:
			asm volatile("sti; nop; hlt; cli" ::: "memory");
			break;
		case IDLE_POLL:
			asm volatile("sti; pause; cli" ::: "memory");
			break;
		}
	}
}

static void receiver_main(void)
{
	const struct wake_case *c = &cases[READ_ONCE(wake_case)];
	u32 round;

	if (c->xapic)
		xapic_enable();
	else
		x2apic_enable();
	for (round = 1;; round++) {
		GUEST_SYNC(round);
		WRITE_ONCE(idling, round);
		receiver_idle(c, READ_ONCE(wanted));
	}
}

static void sender_main(void)
{
	x2apic_enable();
	for (;;) {
		GUEST_SYNC(0);
		x2apic_write_reg(APIC_ICR, APIC_DM_FIXED | WAKE_VECTOR |
				 (u64)RECEIVER << 32);
	}
}

/* ---- host: one thread per vCPU runs it to its next exit on demand */

static struct kvm_vm *vm;
static struct vcpu_thread ctl[2];

static void no_op_signal(int sig)
{
}

static void run_to_exit(struct vcpu_thread *c)
{
	vcpu_thread_resume(c);
	TEST_ASSERT(vcpu_thread_stopped_within(c, WAIT_SECONDS),
		    "vCPU %u did not exit within %u s", c->vcpu->id, WAIT_SECONDS);
	TEST_ASSERT(!c->run_errno, "KVM_RUN: %s", strerror(c->run_errno));
	TEST_ASSERT_EQ(c->ucall, UCALL_SYNC);
}

/* The vCPU thread's scheduler state, from /proc: 'S' while KVM halts it. */
static char thread_state(pid_t tid)
{
	char path[64], state = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	TEST_ASSERT(f, "open %s", path);
	TEST_ASSERT(fscanf(f, "%*d (%*[^)]) %c", &state) == 1, "read %s", path);
	fclose(f);
	return state;
}

/*
 * Bounded polls of the guest's progress and of the thread's state: the
 * host cannot be told when KVM halts a vCPU, so it looks.
 */
static bool wait_for(bool (*cond)(void), int seconds)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		if (cond())
			return true;
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < seconds);
	return cond();
}

static u32 *host_idling, *host_handled;
static u32 this_round;

static bool receiver_idles(void)
{
	return READ_ONCE(*host_idling) == this_round;
}

static bool receiver_sleeps(void)
{
	return thread_state(ctl[RECEIVER].tid) == 'S';
}

static void send_wake(const struct wake_case *c)
{
	if (c->source == FROM_HOST)
		host_msi_send(vm, RECEIVER, WAKE_VECTOR);
	else
		run_to_exit(&ctl[SENDER]);
}

struct exit_counts {
	u64 exits, irq_window_exits, halt_exits, irq_injections;
};

static void read_exit_counts(struct kvm_vcpu *vcpu, struct exit_counts *n)
{
	n->exits = vcpu_get_stat(vcpu, exits);
	n->irq_window_exits = vcpu_get_stat(vcpu, irq_window_exits);
	n->halt_exits = vcpu_get_stat(vcpu, halt_exits);
	n->irq_injections = vcpu_get_stat(vcpu, irq_injections);
}

/*
 * Take the receiver out of KVM_RUN with a signal and print where the
 * interrupt is and where the vCPU is.
 */
static void report_stuck(u32 want, struct exit_counts *n)
{
	struct vcpu_thread *c = &ctl[RECEIVER];
	struct kvm_vcpu_events events;
	struct kvm_lapic_state lapic;
	struct kvm_mp_state mp;
	struct kvm_regs regs;
	u32 isr;

	pthread_kill(c->thread, SIGUSR1);
	TEST_ASSERT(vcpu_thread_stopped_within(c, WAIT_SECONDS),
		    "vCPU %u stays in KVM_RUN after a signal", c->vcpu->id);
	vcpu_ioctl(c->vcpu, KVM_GET_MP_STATE, &mp);
	vcpu_events_get(c->vcpu, &events);
	vcpu_regs_get(c->vcpu, &regs);
	vcpu_ioctl(c->vcpu, KVM_GET_LAPIC, &lapic);
	read_exit_counts(c->vcpu, n);
	isr = *(u32 *)&lapic.regs[APIC_ISR + (WAKE_VECTOR / 32) * 0x10];
	ksft_print_msg("handled %u of %u; KVM_RUN %s; mp_state %u, IRR %s, ISR %s, ",
		       READ_ONCE(*host_handled), want,
		       c->run_errno == EINTR ? "interrupted" : "returned",
		       mp.mp_state, vcpu_irr_test(c->vcpu, WAKE_VECTOR) ? "set" : "clear",
		       isr & BIT(WAKE_VECTOR % 32) ? "set" : "clear");
	printf("injected %u (vector 0x%x), shadow %u, RIP 0x%llx, IF %u\n",
	       events.interrupt.injected, events.interrupt.nr,
	       events.interrupt.shadow, regs.rip, !!(regs.rflags & X86_EFLAGS_IF));
}

/* One round; false if the receiver lost the interrupt. */
static bool wake_round(const struct wake_case *c, u32 want)
{
	struct vcpu_thread *r = &ctl[RECEIVER];
	struct exit_counts before, after;

	this_round++;
	if (c->timing == ON_ENTRY)
		send_wake(c);
	vcpu_thread_resume(r);
	if (c->timing == WHILE_HALTED) {
		TEST_ASSERT(wait_for(receiver_idles, WAIT_SECONDS),
			    "receiver did not reach its idle loop within %d s",
			    WAIT_SECONDS);
		TEST_ASSERT(wait_for(receiver_sleeps, WAIT_SECONDS),
			    "receiver's thread did not sleep within %d s",
			    WAIT_SECONDS);
		send_wake(c);
	}
	if (vcpu_thread_stopped_within(r, WAIT_SECONDS) && !r->run_errno)
		return true;

	/*
	 * The round has failed.  Not a retry: running the vCPU once more
	 * tells whether KVM delivers it on its next entry, and what the vCPU
	 * does meanwhile.
	 */
	ksft_print_msg("lost after %u s:\n", WAIT_SECONDS);
	report_stuck(want, &before);
	vcpu_thread_resume(r);
	if (vcpu_thread_stopped_within(r, WAIT_SECONDS) && !r->run_errno) {
		ksft_print_msg("re-entering KVM_RUN delivered it\n");
		return false;
	}
	ksft_print_msg("after re-entering KVM_RUN for %u s more:\n", WAIT_SECONDS);
	report_stuck(want, &after);
	ksft_print_msg("meanwhile exits +%lu, irq_window_exits +%lu, ",
		       after.exits - before.exits,
		       after.irq_window_exits - before.irq_window_exits);
	printf("halt_exits +%lu, irq_injections +%lu\n",
	       after.halt_exits - before.halt_exits,
	       after.irq_injections - before.irq_injections);
	return false;
}

/* A VM of its own per case: a vCPU left stuck by one cannot spoil the next. */
static void create_vm(int idx)
{
	struct kvm_vcpu *vcpus[2];
	int i;

	vm = vm_create_with_vcpus(2, NULL, vcpus);
	vcpu_arch_set_entry_point(vcpus[RECEIVER], receiver_main);
	vcpu_arch_set_entry_point(vcpus[SENDER], sender_main);
	vm_install_exception_handler(vm, WAKE_VECTOR, guest_isr);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
	wake_case = idx;
	sync_global_to_guest(vm, wake_case);
	host_idling = addr_gva2hva(vm, (gva_t)&idling);
	host_handled = addr_gva2hva(vm, (gva_t)&handled);
	/* before KVM_RUN: the stats fd may be opened only now */
	TEST_ASSERT(vcpu_has_stat(vcpus[RECEIVER], irq_window_exits), "no irq_window_exits stat");

	for (i = 0; i < 2; i++)
		vcpu_thread_start(&ctl[i], vcpus[i]);
	/* both to their first ucall */
	run_to_exit(&ctl[RECEIVER]);
	run_to_exit(&ctl[SENDER]);
}

static void destroy_vm(void)
{
	int i;

	for (i = 0; i < 2; i++)
		vcpu_thread_join(&ctl[i]);
	kvm_vm_free(vm);
}

static void run_case(int idx)
{
	const struct wake_case *c = &cases[idx];
	u32 want = 0;
	bool ok = true;
	int round;

	create_vm(idx);
	this_round = 0;
	for (round = 0; round < ROUNDS && ok; round++) {
		wanted = ++want;
		sync_global_to_guest(vm, wanted);
		ok = wake_round(c, want);
	}
	ksft_print_msg("%s: %d rounds%s\n", c->name, round, ok ? "" : ", the last one lost");
	ksft_test_result(ok, "%s\n", c->name);
	destroy_vm();
}

int main(void)
{
	struct sigaction sa = { .sa_handler = no_op_signal };
	int i;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(cases));
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(i);
	ksft_finished();
}
