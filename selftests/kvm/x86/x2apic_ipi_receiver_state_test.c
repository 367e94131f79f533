// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a fixed IPI or an NMI does depends on the state of the vCPU it
 * reaches.  vCPU 0 writes its x2APIC ICR; vCPU 1, the receiver, is put in
 * each state in turn and asserts what it took (SDM Vol. 3A): runnable or
 * halted; software-disabled and enabled again (11.4.7.2); behind its TPR
 * (11.8.3.1); with the vector already in the IRR or in service (11.8.4);
 * inside an NMI handler (6.7.1).  Last, the host sees it INIT'ed into
 * wait-for-SIPI, refusing a fixed IPI, and started by a SIPI at
 * vector << 12 (11.4.7.3).  The host runs the vCPUs in turn: the sender's
 * IPIs of a row, then the receiver to its next GUEST_SYNC.  Only for the
 * halted row does the receiver run on a thread, asleep in KVM meanwhile.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "lapic_irr.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"

#define SENDER		0
#define RECEIVER	1	/* an AP: INIT leaves it waiting for a SIPI */
#define WAIT_SECONDS	10
#define READY		0xff	/* the receiver's first GUEST_SYNC */

#define V_RUNNABLE	0x40
#define V_HALTED	0x41
#define V_WFS		0x44
#define V_HELD		0x50
#define V_SWDIS		0x51
#define V_TPR_BELOW	0x58
#define TPR_LOW		0x5f
#define TPR_HIGH	0x65
#define V_TPR_EQ	0x6a	/* above TPR_HIGH, but of its class */
#define V_TPR_ABOVE	0x7a
#define V_DUP		0x80
#define V_SVC		0x90
#define V_SIPI		0x10

#define TO_RECEIVER	((u64)RECEIVER << 32 | APIC_INT_ASSERT)
#define FIXED(v)	(TO_RECEIVER | APIC_DM_FIXED | (v))
#define ICR_NMI		(TO_RECEIVER | APIC_DM_NMI)

enum {
	R_RUNNABLE, R_HALTED, R_SWDIS_HELD, R_SWDIS_FIXED, R_SWDIS_NMI, R_REENABLED,
	R_TPR_HELD, R_TPR_READBACK, R_TPR_ABOVE, R_TPR_LOWERED,
	R_IRR_COLLAPSE, R_IN_SERVICE, R_HELD_TO_EOI, R_NMI, R_NMI_HELD, R_NMI_COLLAPSE,
	R_INIT, R_WFS_FIXED, R_SIPI, NR_ROWS
};

/* ---- guest */

static u64 send_icr[3];		/* the sender's ICR writes of a row */
static u32 taken[256];		/* the receiver's fixed interrupts, by vector */
static bool hold_eoi;		/* leave V_SVC in service */
static u32 nmis;		/* NMI handler entries */
static u32 nmi_syncs;		/* entries that stop at a GUEST_SYNC */
static u32 nmi_stage;
static bool nmi_rows;		/* not yet past the NMI rows' GUEST_SYNC */

static void fixed_isr(struct ex_regs *regs)
{
	WRITE_ONCE(taken[regs->vector], taken[regs->vector] + 1);
	if (regs->vector != V_SVC || !READ_ONCE(hold_eoi))
		x2apic_write_reg(APIC_EOI, 0);
}

static void nmi_handler(struct ex_regs *regs)
{
	u32 n = READ_ONCE(nmis) + 1;

	WRITE_ONCE(nmis, n);
	/* an NMI held until an IRET is taken right after it */
	__GUEST_ASSERT(!nmi_stage || READ_ONCE(nmi_rows),
		       "NMI %u taken late, after the receiver went on past the IRET", n);
	if (READ_ONCE(nmi_syncs)) {
		WRITE_ONCE(nmi_syncs, nmi_syncs - 1);
		GUEST_SYNC(nmi_stage++);
		/* NMIs sent meanwhile wait for this handler's IRET */
		GUEST_ASSERT_EQ(READ_ONCE(nmis), n);
	}
}

/* @vector's bit in the register at @reg (0x100 ISR, 0x200 IRR) */
static bool apic_has(unsigned int reg, u8 vector)
{
	return x2apic_read_reg(reg + vector / 32 * 0x10) & BIT(vector % 32);
}

#define IRR(v)		apic_has(0x200, v)
#define ISR(v)		apic_has(0x100, v)
#define TAKEN(v)	READ_ONCE(taken[v])

static void apic_sw_enable(bool on)
{
	u64 svr = x2apic_read_reg(APIC_SPIV) & ~(u64)APIC_SPIV_APIC_ENABLED;

	x2apic_write_reg(APIC_SPIV, svr | (on ? APIC_SPIV_APIC_ENABLED : 0));
}

/* Interrupts on for an instruction, twice: the second finds nothing more. */
static void windows(void)
{
	sti_nop_cli();
	sti_nop_cli();
}

static void receiver_code(void)
{
	x2apic_enable();
	cli();
	GUEST_SYNC(READY);

	windows();
	GUEST_ASSERT_EQ(TAKEN(V_RUNNABLE), 1);
	GUEST_SYNC(R_RUNNABLE);

	while (!TAKEN(V_HALTED)) {
		safe_halt();
		cli();
	}
	windows();
	GUEST_ASSERT_EQ(TAKEN(V_HALTED), 1);
	GUEST_SYNC(R_HALTED);

	/* IF is clear: held, not taken */
	GUEST_ASSERT(IRR(V_HELD));
	apic_sw_enable(false);
	GUEST_ASSERT(IRR(V_HELD));
	GUEST_SYNC(R_SWDIS_HELD);

	GUEST_ASSERT(!IRR(V_SWDIS));
	GUEST_SYNC(R_SWDIS_FIXED);

	GUEST_ASSERT_EQ(READ_ONCE(nmis), 1);
	GUEST_SYNC(R_SWDIS_NMI);

	apic_sw_enable(true);
	windows();
	GUEST_ASSERT_EQ(TAKEN(V_HELD), 1);
	GUEST_ASSERT_EQ(TAKEN(V_SWDIS), 0);
	x2apic_write_reg(APIC_TASKPRI, TPR_HIGH);
	sti();
	GUEST_SYNC(R_REENABLED);

	/* IF is set: only the PPR holds them back */
	cli();
	GUEST_ASSERT_EQ(TAKEN(V_TPR_EQ), 0);
	GUEST_ASSERT_EQ(TAKEN(V_TPR_BELOW), 0);
	GUEST_ASSERT(IRR(V_TPR_EQ) && IRR(V_TPR_BELOW));
	GUEST_ASSERT_EQ(x2apic_read_reg(APIC_PROCPRI) & 0xf0, TPR_HIGH & 0xf0);
	sti();
	GUEST_SYNC_ARGS(R_TPR_HELD, x2apic_read_reg(APIC_TASKPRI),
			x2apic_read_reg(APIC_PROCPRI), 0, 0);

	cli();
	GUEST_ASSERT_EQ(TAKEN(V_TPR_ABOVE), 1);
	GUEST_ASSERT_EQ(TAKEN(V_TPR_EQ), 0);
	GUEST_SYNC(R_TPR_ABOVE);

	x2apic_write_reg(APIC_TASKPRI, TPR_LOW);
	windows();
	GUEST_ASSERT_EQ(TAKEN(V_TPR_EQ), 1);
	GUEST_ASSERT_EQ(TAKEN(V_TPR_BELOW), 0);
	GUEST_ASSERT(IRR(V_TPR_BELOW));
	x2apic_write_reg(APIC_TASKPRI, 0);
	windows();
	GUEST_ASSERT_EQ(TAKEN(V_TPR_EQ), 1);
	GUEST_ASSERT_EQ(TAKEN(V_TPR_BELOW), 1);
	GUEST_SYNC(R_TPR_LOWERED);

	GUEST_ASSERT(IRR(V_DUP));
	windows();
	GUEST_ASSERT_EQ(TAKEN(V_DUP), 1);
	GUEST_ASSERT(!IRR(V_DUP));
	WRITE_ONCE(hold_eoi, true);
	GUEST_SYNC(R_IRR_COLLAPSE);

	sti_nop_cli();
	GUEST_ASSERT_EQ(TAKEN(V_SVC), 1);
	GUEST_ASSERT(ISR(V_SVC));
	GUEST_ASSERT_EQ(x2apic_read_reg(APIC_PROCPRI), V_SVC & 0xf0);
	sti();
	GUEST_SYNC(R_IN_SERVICE);

	cli();
	GUEST_ASSERT_EQ(TAKEN(V_SVC), 1);
	GUEST_ASSERT(IRR(V_SVC) && ISR(V_SVC));
	WRITE_ONCE(hold_eoi, false);
	x2apic_write_reg(APIC_EOI, 0);
	windows();
	GUEST_ASSERT_EQ(TAKEN(V_SVC), 2);
	GUEST_ASSERT(!ISR(V_SVC));
	nmi_stage = R_NMI;
	WRITE_ONCE(nmi_syncs, 2);
	WRITE_ONCE(nmi_rows, true);
	GUEST_SYNC(R_HELD_TO_EOI);
	WRITE_ONCE(nmi_rows, false);

	/* the handler stopped at R_NMI and R_NMI_HELD: 1 + 3 entries since */
	GUEST_ASSERT_EQ(READ_ONCE(nmis), 4);
	apic_sw_enable(false);
	GUEST_SYNC(R_NMI_COLLAPSE);
	GUEST_DONE();
}

static void sender_code(void)
{
	int i;

	x2apic_enable();
	for (;;) {
		GUEST_SYNC(0);
		for (i = 0; i < ARRAY_SIZE(send_icr) && send_icr[i]; i++)
			x2apic_write_reg(APIC_ICR, send_icr[i]);
	}
}

/* ---- host */

static struct kvm_vm *vm;
static struct kvm_vcpu *sender, *receiver;
static bool out_of_step;	/* the receiver missed a GUEST_SYNC */
static struct ucall last;	/* its last GUEST_SYNC */
static u32 icr_writes;

/*
 * The TPR is a read/write register whose bits 3:0 are the sub-class (SDM
 * 11.8.3.1); a MOV to CR8 would clear them (11.8.6.1), and the guest makes
 * none.  KVM's SVM writes V_TPR back as CR8 at VM-exits: XFAIL while it
 * does exactly that on an AMD host, a pass where the bits are kept.
 */
static int tpr_as_written(void)
{
	u64 tpr = last.args[2], ppr = last.args[3];
	bool deviation = host_cpu_is_amd;

	if (tpr == TPR_HIGH && ppr == TPR_HIGH)
		return KSFT_PASS;
	ksft_print_msg("TPR 0x%lx, PPR 0x%lx after a write of 0x%x\n",
		       (unsigned long)tpr, (unsigned long)ppr, TPR_HIGH);
	if (!deviation || tpr != (TPR_HIGH & 0xf0) || ppr != tpr)
		return KSFT_FAIL;
	ksft_print_msg("KVM deviation: SVM clears TPR[3:0] at a VM-exit, as a MOV to CR8 would\n");
	return KSFT_XFAIL;
}

static int init_received(void)
{
	struct kvm_mp_state mp;

	vcpu_mp_state_get(receiver, &mp);
	if (mp.mp_state != KVM_MP_STATE_INIT_RECEIVED)
		ksft_print_msg("mp_state %u\n", mp.mp_state);
	return mp.mp_state == KVM_MP_STATE_INIT_RECEIVED ? KSFT_PASS : KSFT_FAIL;
}

static int fixed_refused(void)
{
	if (vcpu_irr_test_and_clear(receiver, V_WFS)) {
		ksft_print_msg("vector 0x%x is pending in the IRR\n", V_WFS);
		return KSFT_FAIL;
	}
	return init_received();
}

static int sipi_started(void)
{
	struct kvm_mp_state mp;
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	vcpu_mp_state_get(receiver, &mp);
	vcpu_sregs_get(receiver, &sregs);
	vcpu_regs_get(receiver, &regs);
	if (mp.mp_state == KVM_MP_STATE_RUNNABLE && sregs.cs.selector == V_SIPI << 8 &&
	    sregs.cs.base + regs.rip == V_SIPI << 12)
		return KSFT_PASS;
	ksft_print_msg("mp_state %u, CS 0x%x, base + RIP 0x%llx\n", mp.mp_state,
		       sregs.cs.selector, (unsigned long long)(sregs.cs.base + regs.rip));
	return KSFT_FAIL;
}

enum how { RUN, HALTED, PARKED };	/* the receiver, while the IPIs come */

static const struct row {
	const char *name;
	enum how how;
	u64 icr[3];
	int (*check)(void);	/* a PARKED receiver's, by the host: a KSFT_ code */
} rows[NR_ROWS] = {
	[R_RUNNABLE] = { "runnable: a fixed IPI is taken once", RUN, { FIXED(V_RUNNABLE) } },
	[R_HALTED] = { "halted: a fixed IPI wakes it, taken once", HALTED, { FIXED(V_HALTED) } },
	[R_SWDIS_HELD] = { "software disable: the IRR is held", RUN, { FIXED(V_HELD) } },
	[R_SWDIS_FIXED] = { "software-disabled: a fixed IPI is refused", RUN, { FIXED(V_SWDIS) } },
	[R_SWDIS_NMI] = { "software-disabled: an NMI is taken", RUN, { ICR_NMI } },
	[R_REENABLED] = { "software enable: the held IPI is taken once, the refused never", RUN },
	[R_TPR_HELD] = { "TPR: fixed IPIs of its class and below wait in the IRR", RUN,
			 { FIXED(V_TPR_EQ), FIXED(V_TPR_BELOW) } },
	[R_TPR_READBACK] = { "TPR: reads back as written, and is the PPR", PARKED, {},
			     tpr_as_written },
	[R_TPR_ABOVE] = { "TPR: a fixed IPI of a higher class is taken", RUN,
			  { FIXED(V_TPR_ABOVE) } },
	[R_TPR_LOWERED] = { "TPR lowered: each waiting IPI is taken once above it", RUN },
	[R_IRR_COLLAPSE] = { "vector pending in the IRR: a second IPI collapses into it", RUN,
			     { FIXED(V_DUP), FIXED(V_DUP) } },
	[R_IN_SERVICE] = { "taken, no EOI: the vector stays in service", RUN, { FIXED(V_SVC) } },
	[R_HELD_TO_EOI] = { "vector in service: a second IPI waits in the IRR for the EOI", RUN,
			    { FIXED(V_SVC) } },
	[R_NMI] = { "NMIs unblocked: an NMI is taken", RUN, { ICR_NMI } },
	[R_NMI_HELD] = { "in an NMI handler: an NMI is held until IRET, then taken", RUN,
			 { ICR_NMI } },
	[R_NMI_COLLAPSE] = { "in an NMI handler: three NMIs are taken once after IRET", RUN,
			     { ICR_NMI, ICR_NMI, ICR_NMI } },
	[R_INIT] = { "software-disabled: INIT leaves it waiting for a SIPI", PARKED,
		     { TO_RECEIVER | APIC_DM_INIT }, init_received },
	[R_WFS_FIXED] = { "waiting for a SIPI: a fixed IPI is refused", PARKED,
			  { FIXED(V_WFS) }, fixed_refused },
	[R_SIPI] = { "waiting for a SIPI: a SIPI starts it at vector << 12", PARKED,
		     { TO_RECEIVER | APIC_DM_STARTUP | V_SIPI }, sipi_started },
};

/* The sender writes the row's ICR values and stops at its GUEST_SYNC. */
static void send(const struct row *row)
{
	int i;

	if (!row->icr[0])
		return;
	memcpy(send_icr, row->icr, sizeof(send_icr));
	sync_global_to_guest(vm, send_icr);
	vcpu_run(sender);
	TEST_ASSERT_EQ(vcpu_sync_or_done(sender, NULL), UCALL_SYNC);
	for (i = 0; i < ARRAY_SIZE(send_icr) && send_icr[i]; i++)
		icr_writes++;
}

/* kvm_util's vcpu_run() would end the test at a guest assert */
static void run_receiver(void)
{
	int r;

	do {
		r = __vcpu_run(receiver);
	} while (r == -1 && errno == EINTR);
	TEST_ASSERT(!r, "KVM_RUN: %s", strerror(errno));
}

/*
 * The receiver is back from KVM_RUN: run it on to its GUEST_SYNC(@stage).
 * Each failed assert fails the row, and the receiver goes on after it.
 */
static bool stops_at(u64 stage)
{
	bool ok = true;

	for (;;) {
		switch (get_ucall(receiver, &last)) {
		case UCALL_ABORT:
			ksft_print_msg("%s:%ld: %s\n", (const char *)last.args[GUEST_FILE],
				       (long)last.args[GUEST_LINE], last.buffer);
			ok = false;
			run_receiver();
			break;
		case UCALL_SYNC:
			if (last.args[1] == stage)
				return ok;
			ksft_print_msg("receiver at GUEST_SYNC(%lu), want %lu\n",
				       (unsigned long)last.args[1], (unsigned long)stage);
			out_of_step = true;
			return false;
		default:
			TEST_FAIL("receiver: exit %s", exit_reason_str(receiver->run->exit_reason));
		}
	}
}

static int thread_errno;

static void *receiver_thread(void *arg)
{
	thread_errno = __vcpu_run(receiver) ? errno : 0;
	return NULL;
}

static void no_op(int sig)
{
}

/*
 * The receiver runs on a thread into its HLT, and the IPI is sent once KVM
 * has halted it.  False if it never halted: a safe_halt() that polls.
 */
static bool send_to_halted(const struct row *row)
{
	u64 halts = vcpu_get_stat(receiver, halt_exits);
	struct timespec deadline;
	pthread_t thread;
	bool halted;
	int i;

	kvm_pthread_create(&thread, NULL, receiver_thread, NULL);
	for (i = 0; i < WAIT_SECONDS * 1000; i++) {
		halted = vcpu_get_stat(receiver, halt_exits) > halts;
		if (halted)
			break;
		usleep(1000);
	}
	send(row);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WAIT_SECONDS;
	if (pthread_timedjoin_np(thread, NULL, &deadline)) {
		ksft_print_msg("receiver not woken within %d s\n", WAIT_SECONDS);
		pthread_kill(thread, SIGUSR1);
		pthread_join(thread, NULL);
		out_of_step = true;
	}
	TEST_ASSERT(!thread_errno || out_of_step, "KVM_RUN: %s", strerror(thread_errno));
	return halted;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = no_op };
	bool fast, halted;
	int i, code;

	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_X2APIC));
	TEST_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");

	vm = vm_create(2);
	sender = vm_vcpu_add(vm, SENDER, sender_code);
	receiver = vm_vcpu_add(vm, RECEIVER, receiver_code);
	for (i = 0x20; i < 0x100; i++)
		vm_install_exception_handler(vm, i, fixed_isr);
	vm_install_exception_handler(vm, NMI_VECTOR, nmi_handler);
	/* before they run: on some kernels this opens the stats fd */
	TEST_ASSERT(vcpu_has_stat(receiver, halt_exits), "no halt_exits stat");
	fast = vcpu_has_stat(sender, x2apic_icr_fastpath_writes);

	ksft_print_header();
	ksft_set_plan(NR_ROWS);
	vcpu_run(sender);
	TEST_ASSERT_EQ(vcpu_sync_or_done(sender, NULL), UCALL_SYNC);
	run_receiver();
	TEST_ASSERT(stops_at(READY), "the receiver did not start");

	for (i = 0; i < NR_ROWS; i++) {
		const struct row *row = &rows[i];

		halted = true;
		if (out_of_step) {
			code = KSFT_FAIL;
		} else if (row->how == HALTED) {
			halted = send_to_halted(row);
			code = !out_of_step && stops_at(i) ? KSFT_PASS : KSFT_FAIL;
		} else if (row->how == PARKED) {
			send(row);
			code = row->check();
		} else {
			send(row);
			run_receiver();
			code = stops_at(i) ? KSFT_PASS : KSFT_FAIL;
		}
		if (code == KSFT_PASS && !halted)
			ksft_test_result_code(KSFT_SKIP, row->name, "the receiver did not halt");
		else
			ksft_test_result_code(code, row->name, NULL);
	}
	if (fast)
		ksft_print_msg("sender: %lu of %u ICR writes took the fastpath\n",
			       (unsigned long)vcpu_get_stat(sender, x2apic_icr_fastpath_writes),
			       icr_writes);
	kvm_vm_free(vm);
	ksft_finished();
}
