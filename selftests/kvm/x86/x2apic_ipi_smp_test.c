// SPDX-License-Identifier: GPL-2.0-only
/*
 * x2APIC IPIs between vCPUs that run on different host CPUs at the same
 * time.  On one host CPU the receiver is never in guest mode while the
 * sender writes its ICR, so KVM never has to kick a running vCPU out of the
 * guest, nor race a vCPU that is on its way to sleep.  Here the sender and
 * the receiver each have a host CPU of their own:
 *
 *  - running receiver: the receiver spins in the guest with interrupts on,
 *    and the median IPI must be taken within RUNNING_MEDIAN_US; one that
 *    waits for the receiver's next exit (the host's next tick) is too late.
 *    The median, not the slowest, and less the time either vCPU's thread
 *    waited for its host CPU meanwhile (their steal time): on a loaded host
 *    a preempted vCPU thread delays the IPIs sent while it waits, but a
 *    missed kick delays every IPI by up to a tick, with no steal time;
 *  - re-entering receiver: the same, but the receiver makes one exit (a
 *    CPUID) as it announces, and the sender waits a delay of a seeded sweep
 *    over the running receiver's latency, so that IPIs land all over KVM's
 *    way back into the guest.  A kick that KVM misses there leaves the IPI
 *    pending until the receiver's next exit, the host's tick: every IPI,
 *    less steal time, must be taken within RUNNING_BOUND_US, the slowest
 *    too;
 *  - halting receiver: the receiver announces that it is about to halt and
 *    halts; the sender waits a delay of a seeded sweep, then sends, so that
 *    IPIs land all over KVM's way from the HLT exit to the sleep (halt
 *    polling off for the VM).  Each must wake the receiver;
 *  - moving vCPUs: the same halter and sender, as xapic_ipi_test's, while
 *    the host moves both vCPU threads between host CPUs;
 *  - concurrent APIC changes: both vCPUs change their APIC mode, ID and
 *    logical ID at the same moment, one of them a swept delay after the
 *    other (up to the time one APIC write takes, either way), so that KVM
 *    rebuilds its map of the VM's APICs for both at once.  Then one sends
 *    IPIs to every destination, and what each vCPU took is checked
 *    against the model (ipi_oracle.h).
 *
 * The first four send a fixed physical IPI, which KVM's fastpath takes in
 * every kernel generation, and a fixed ALL-BUT-SELF one, which it never
 * takes; the sender's fastpath stat must say so.  Latencies are measured
 * by the sender, from the ICR write to seeing the receiver's handler run,
 * and printed as quantiles.  The halting and moving sweeps span SWEEP_FACTOR
 * times the median latency to a running receiver less steal time, measured
 * first: a vCPU thread preempted by another task says nothing of KVM's
 * path.  The sender's fastest ICR write, an exit, is the floor, as the
 * steal time of both vCPUs can exceed an IPI's latency.  A lost IPI fails
 * its case when the sender has waited LOSS_SECONDS for it.
 *
 * -k KIND[,KIND...] runs only those kinds of cases (running, entering,
 * halting, moving, apic-changes; the others are skipped), say to bisect a
 * bug that one of them shows.  Entering, halting and moving need the running
 * cases' latency, so any of them runs those too.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"

#define SENDER		0
#define RECEIVER	1
#define NR_VCPUS	2
#define IPI_VECTOR	0xe0
#define FENCE_VECTOR	0x40	/* a lower priority class than IPI_VECTOR */
#define MAX_ROUNDS	1024
#define APIC_ROUNDS	96
#define MAX_DESTS	4	/* IPIs per round of APIC changes */
/*
 * vCPUs that never run, in the concurrent-changes VM: software-disabled
 * xAPICs with IDs 2 to 31 that KVM's map must hold as well, so that each
 * rebuild of it takes longer, as in a VM with more vCPUs than host CPUs.
 * The running ones take xAPIC IDs among xapic_ids[].
 */
#define BYSTANDERS	30
static const u8 xapic_ids[] = { 0, 1, 32, 33 };

#define RUNNING_BOUND_US	200
/*
 * The running receiver's median IPI: kicked, a microsecond or so; not
 * kicked, the receiver takes half of its IPIs at its next exit, the host's
 * tick, and the median is above 200 us.
 */
#define RUNNING_MEDIAN_US	100
#define LOSS_SECONDS		2	/* guest seconds */
#define HOST_SECONDS		60	/* per case */
#define SWEEP_FACTOR		4	/* delay sweeps: times the running latency */

enum ipi_kind { RUNNING, ENTERING, HALTING, MOVING, APIC_CHANGES, NR_KINDS };

static const char * const kind_names[NR_KINDS] = {
	[RUNNING] = "running",
	[ENTERING] = "entering",
	[HALTING] = "halting",
	[MOVING] = "moving",
	[APIC_CHANGES] = "apic-changes",
};

#define PHYSICAL_IPI	(APIC_DEST_PHYSICAL | APIC_DM_FIXED | IPI_VECTOR | \
			 (u64)RECEIVER << 32)
#define ALLBUT_IPI	(APIC_DEST_ALLBUT | APIC_DM_FIXED | IPI_VECTOR)

struct ipi_case {
	const char *name;
	enum ipi_kind kind;
	u64 icr;
	u32 rounds;
};

static const struct ipi_case cases[] = {
	{ "running receiver, fixed physical IPI", RUNNING, PHYSICAL_IPI, 64 },
	{ "running receiver, fixed ALL-BUT-SELF IPI", RUNNING, ALLBUT_IPI, 64 },
	{ "re-entering receiver, fixed physical IPI", ENTERING, PHYSICAL_IPI, 1024 },
	{ "halting receiver, fixed physical IPI", HALTING, PHYSICAL_IPI, 256 },
	{ "halting receiver, fixed ALL-BUT-SELF IPI", HALTING, ALLBUT_IPI, 256 },
	{ "moving vCPUs, fixed physical IPI", MOVING, PHYSICAL_IPI, 512 },
	{ "moving vCPUs, fixed ALL-BUT-SELF IPI", MOVING, ALLBUT_IPI, 512 },
	{ "concurrent APIC changes", APIC_CHANGES, 0, APIC_ROUNDS },
};

/* One round of the concurrent-changes case: the state, then the IPIs. */
struct apic_round {
	bool xapic;
	u8 id[NR_VCPUS];	/* xAPIC IDs; in x2APIC mode the vCPU IDs */
	u8 ldr[NR_VCPUS];	/* xAPIC flat logical IDs */
	u32 delay[NR_VCPUS];	/* meeting to change, 1/1024s of a write */
	u32 nr_icrs;
	u64 icr[MAX_DESTS];	/* as ipi_expect_xapic() takes them */
};

/* Host -> guest, before the vCPUs run. */
static u32 ipi_kind;
static u32 rounds;
static u64 icr;
static u64 loss_tsc;
static u64 delay_tsc[MAX_ROUNDS];
static struct apic_round plan[APIC_ROUNDS];

/* Guest <-> guest, and guest -> host. */
static u32 announced;	/* the round the receiver waits in */
static u32 sent;		/* ICR writes of the sender */
static u32 taken;		/* IPIs the receiver handled */
static u32 lost;		/* the first round not completed in time */
static u64 latency[MAX_ROUNDS];
static u64 stolen_ns[MAX_ROUNDS];	/* both vCPUs' steal time meanwhile */
static u64 fastest_write;	/* TSC ticks of the fastest ICR write */
static struct kvm_steal_time steal[NR_VCPUS] __aligned(64);
static u32 arrived;	/* vcpus_meet() of the concurrent-changes case */
static u32 cur_round;
static u32 done_round;
static u32 irqs[MAX_DESTS][NR_VCPUS], fences[NR_VCPUS];
static u32 got[APIC_ROUNDS][MAX_DESTS][NR_VCPUS];
static u64 apic_write_ticks[NR_VCPUS];

static void ipi_handler(struct ex_regs *regs)
{
	WRITE_ONCE(taken, taken + 1);
	x2apic_write_reg(APIC_EOI, 0);
}

/* Spin until *@p reaches @want or @limit TSC ticks pass. */
static bool wait_for(u32 *p, u32 want, u64 limit)
{
	u64 start = rdtsc();

	while (READ_ONCE(*p) < want) {
		if (rdtsc() - start > limit)
			return false;
		cpu_relax();
	}
	return true;
}

/* Spin for @ticks of the TSC. */
static void spin_tsc(u64 ticks)
{
	u64 start = rdtsc();

	while (rdtsc() - start < ticks)
		cpu_relax();
}

static void receiver_main(void)
{
	u32 eax, ebx, ecx, edx;
	u32 r;

	x2apic_enable_icr_exits();
	for (r = 1; r <= rounds && !READ_ONCE(lost); r++) {
		WRITE_ONCE(announced, r);
		if (ipi_kind == RUNNING || ipi_kind == ENTERING) {
			sti();
			/* an exit, and KVM's way back in, that the IPI races */
			if (ipi_kind == ENTERING)
				cpuid(0, &eax, &ebx, &ecx, &edx);
			while (READ_ONCE(taken) < r && !READ_ONCE(lost))
				cpu_relax();
			cli();
			continue;
		}
		while (READ_ONCE(taken) < r && !READ_ONCE(lost)) {
			safe_halt();
			cli();
		}
	}
	GUEST_DONE();
}

static u64 steal_ns(void)
{
	return READ_ONCE(steal[SENDER].steal) + READ_ONCE(steal[RECEIVER].steal);
}

static void sender_main(void)
{
	u64 start, stolen, write;
	u32 r;

	x2apic_enable_icr_exits();
	for (r = 1; r <= rounds; r++) {
		if (!wait_for(&announced, r, loss_tsc))
			break;
		spin_tsc(delay_tsc[r - 1]);
		stolen = steal_ns();
		start = rdtsc();
		x2apic_write_reg(APIC_ICR, icr);
		write = rdtsc() - start;
		fastest_write = r == 1 ? write : min(fastest_write, write);
		WRITE_ONCE(sent, r);
		if (!wait_for(&taken, r, loss_tsc))
			break;
		latency[r - 1] = rdtsc() - start;
		stolen_ns[r - 1] = steal_ns() - stolen;
	}
	if (r <= rounds)
		WRITE_ONCE(lost, r);
	GUEST_DONE();
}

/* ---- concurrent APIC changes */

static void vcpus_meet(u32 n)
{
	__atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
	__GUEST_ASSERT(wait_for(&arrived, n * NR_VCPUS, loss_tsc),
		       "meeting %u: %u vCPUs arrived", n, READ_ONCE(arrived));
}

/*
 * The vCPU a handler runs on: its index, which the host put in its GS base
 * (the guest does not use GS), as its APIC ID is what this case changes.
 */
static u32 apic_index(void)
{
	return rdmsr(MSR_GS_BASE);
}

static void apic_eoi(void)
{
	if (plan[READ_ONCE(cur_round)].xapic)
		xapic_write_reg(APIC_EOI, 0);
	else
		x2apic_write_reg(APIC_EOI, 0);
}

static void counted_ipi_handler(struct ex_regs *regs)
{
	__atomic_add_fetch(&irqs[regs->vector - IPI_VECTOR][apic_index()], 1,
			   __ATOMIC_SEQ_CST);
	apic_eoi();
}

static void fence_handler(struct ex_regs *regs)
{
	__atomic_add_fetch(&fences[apic_index()], 1, __ATOMIC_SEQ_CST);
	apic_eoi();
}

/* From the state of round @prev (NULL: the reset state) to that of @p. */
static void set_apic_state(const struct apic_round *p,
			   const struct apic_round *prev, u32 me)
{
	if (!p->xapic) {
		x2apic_enable_icr_exits();
		return;
	}
	if (!prev || !prev->xapic) {
		xapic_enable();
		xapic_write_reg(APIC_DFR, APIC_DFR_FLAT);
	}
	xapic_write_reg(APIC_ID, p->id[me] << 24);
	xapic_write_reg(APIC_LDR, p->ldr[me] << 24);
}

static void ipi_write(bool xapic, u64 value)
{
	if (xapic) {
		xapic_write_reg(APIC_ICR2, value >> 32);
		xapic_write_reg(APIC_ICR, (u32)value);
	} else {
		x2apic_write_reg(APIC_ICR, value);
	}
}

/*
 * Send the IPIs of round @r, a vector each, then a fence to all: a vCPU
 * that handled the fence, of a lower priority class, handled them first.
 */
static bool send_round(u32 r, u32 nr_fences)
{
	const struct apic_round *p = &plan[r];
	u32 before[MAX_DESTS][NR_VCPUS], d, i;

	WRITE_ONCE(cur_round, r);
	memcpy(before, irqs, sizeof(before));
	sti();
	for (d = 0; d < p->nr_icrs; d++)
		ipi_write(p->xapic, p->icr[d]);
	ipi_write(p->xapic, APIC_DEST_ALLINC | APIC_DM_FIXED | FENCE_VECTOR);
	for (i = 0; i < NR_VCPUS; i++)
		if (!wait_for(&fences[i], nr_fences, loss_tsc))
			return false;
	cli();
	for (d = 0; d < p->nr_icrs; d++)
		for (i = 0; i < NR_VCPUS; i++)
			got[r][d][i] = READ_ONCE(irqs[d][i]) - before[d][i];
	return true;
}

/* The fewest TSC ticks one xAPIC LDR write (an exit, a map rebuild) took. */
static u64 apic_write_tsc(void)
{
	u64 start, t, least = -1ULL;
	int i;

	xapic_enable();
	for (i = 0; i < 8; i++) {
		start = rdtsc();
		xapic_write_reg(APIC_LDR, 0);
		t = rdtsc() - start;
		least = t < least ? t : least;
	}
	return least;
}

static void apic_changes_main(u32 me)
{
	u64 write_tsc = apic_write_tsc();
	u32 r;

	apic_write_ticks[me] = write_tsc;
	for (r = 0; r < rounds; r++) {
		vcpus_meet(2 * r + 1);
		spin_tsc(write_tsc * plan[r].delay[me] / 1024);
		set_apic_state(&plan[r], r ? &plan[r - 1] : NULL, me);
		vcpus_meet(2 * r + 2);
		if (me != SENDER) {
			sti();
			while (READ_ONCE(done_round) <= r && !READ_ONCE(lost))
				cpu_relax();
			cli();
		} else if (!send_round(r, r + 1)) {
			WRITE_ONCE(lost, r + 1);
		} else {
			WRITE_ONCE(done_round, r + 1);
		}
		if (READ_ONCE(lost))
			break;
	}
	GUEST_DONE();
}

/* ---- host */

static bool selected[NR_KINDS];
static int cpus[NR_VCPUS];
static unsigned int nr_allowed;
static int allowed[CPU_SETSIZE];
static u64 sweep_tsc;

static void no_op_signal(int sig)
{
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 tsc_to_us(u64 tsc)
{
	return tsc * 1000 / guest_tsc_khz;
}

/* Round @r's latency less both vCPUs' steal time meanwhile. */
static u64 unstolen_latency(u32 r)
{
	u64 stolen = stolen_ns[r] * guest_tsc_khz / 1000000;

	return latency[r] > stolen ? latency[r] - stolen : 0;
}

/* Print the quantiles of @n latencies, sorting them; returns the median. */
static u64 print_latencies(const char *name, u64 *lat, u32 n)
{
	if (!n)
		return 0;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	ksft_print_msg("%s: %u IPIs, latency us p50 %lu, p90 %lu, p99 %lu, max %lu\n",
		       name, n, tsc_to_us(lat[n / 2]), tsc_to_us(lat[n * 9 / 10]),
		       tsc_to_us(lat[n * 99 / 100]), tsc_to_us(lat[n - 1]));
	return lat[n / 2];
}

/*
 * Stratified sweep: round i waits somewhere in the i-th slice of the range,
 * for a re-entering receiver the running latency (more than its exit and
 * entry take), else SWEEP_FACTOR times that.
 */
static void plan_delays(const struct ipi_case *c)
{
	bool swept = c->kind == ENTERING || c->kind == HALTING || c->kind == MOVING;
	u64 range = c->kind == ENTERING ? sweep_tsc / SWEEP_FACTOR : sweep_tsc;
	u32 i;

	for (i = 0; i < c->rounds; i++)
		delay_tsc[i] = swept && range ? (i * range + random() % range) / c->rounds : 0;
	if (swept)
		ksft_print_msg("%s: delays swept over 0-%lu us\n", c->name,
			       tsc_to_us(range));
}

static void plan_apic_rounds(void)
{
	static const u8 bits[] = { 1, 2, 4, 8 };
	u32 slice = 2 * 1024 / APIC_ROUNDS, delay;
	u32 r, i, d;
	bool xapic = false;

	for (r = 0; r < APIC_ROUNDS; r++) {
		struct apic_round *p = &plan[r];

		/* a change every round: leave x2APIC, or change IDs or mode */
		xapic = !xapic || (random() & 1);
		p->xapic = xapic;
		i = random() % 4;
		p->id[0] = xapic_ids[i];
		p->id[1] = xapic_ids[(i + 1 + random() % 3) % 4];
		for (i = 0; i < NR_VCPUS; i++) {
			p->ldr[i] = bits[random() % 4];
			if (!xapic)
				p->id[i] = i;
		}
		/* to each vCPU's new physical and logical ID, a vector each */
		d = 0;
		for (i = 0; i < NR_VCPUS; i++, d++)
			p->icr[d] = icr_with_apic_dest(IPI_VECTOR + d, p->id[i], xapic);
		for (i = 0; i < NR_VCPUS; i++, d++)
			p->icr[d] = icr_with_apic_dest((IPI_VECTOR + d) | APIC_DEST_LOGICAL,
						       xapic ? p->ldr[i] : x2apic_logical_id(i),
						       xapic);
		p->nr_icrs = d;
		/* which vCPU changes first, and by how much: a stratified sweep */
		delay = r * slice + random() % slice;
		p->delay[0] = delay < 1024 ? 1024 - delay : 0;
		p->delay[1] = delay < 1024 ? 0 : delay - 1024;
	}
}

/* Did every IPI of every round reach whom the model says? */
static bool check_apic_rounds(struct kvm_vm *vm, u32 done)
{
	u32 ids[NR_VCPUS], r, d, i, bad = 0;
	u8 ldr[NR_VCPUS];
	struct ipi_expectation e;
	char what[96], want[64];

	sync_global_from_guest(vm, got);
	sync_global_from_guest(vm, apic_write_ticks);
	ksft_print_msg("%s: an xAPIC LDR write takes %lu and %lu ns, the sweep's range\n",
		       "concurrent APIC changes", tsc_to_us(1000 * apic_write_ticks[0]),
		       tsc_to_us(1000 * apic_write_ticks[1]));
	for (r = 0; r < done; r++) {
		const struct apic_round *p = &plan[r];

		for (i = 0; i < NR_VCPUS; i++) {
			ids[i] = p->id[i];
			ldr[i] = p->ldr[i];
		}
		for (d = 0; d < p->nr_icrs; d++) {
			e = p->xapic ? ipi_expect_xapic(p->icr[d], SENDER, ids, ldr, NR_VCPUS) :
				       ipi_expect(p->icr[d], SENDER, ids, NR_VCPUS);
			if (ipi_received_as(&e, got[r][d], NR_VCPUS))
				continue;
			bad++;
			icr_format(p->icr[d], what, sizeof(what));
			ipi_format_vcpus(e.targets, ids, NR_VCPUS, want, sizeof(want));
			ksft_print_msg("round %u (%s, IDs 0x%x 0x%x, LDRs 0x%x 0x%x): %s\n",
				       r, p->xapic ? "xAPIC" : "x2APIC", p->id[0], p->id[1],
				       ldr[0], ldr[1], what);
			ksft_print_msg("  taken %u and %u times, want %s %s\n",
				       got[r][d][0], got[r][d][1], ipi_fate_name(e.fate), want);
		}
	}
	return !bad;
}

/* Move each vCPU thread to a random allowed CPU until the sender is done. */
static unsigned int move_until_done(struct vcpu_thread *ctl)
{
	unsigned int moves = 0, i;
	struct timespec now, end;
	bool stopped;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += HOST_SECONDS;
	for (;;) {
		stopped = vcpu_thread_stopped_within(&ctl[SENDER], 0);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (stopped || now.tv_sec >= end.tv_sec)
			break;
		for (i = 0; i < NR_VCPUS; i++)
			pin_task_to_cpu(ctl[i].thread, allowed[random() % nr_allowed]);
		moves++;
	}
	if (stopped)
		sem_post(&ctl[SENDER].stopped);	/* for vcpu_finished() */
	return moves;
}

/*
 * Wait up to @seconds for a vCPU to finish; else take it out of KVM_RUN
 * (it may sleep in KVM for good: a receiver whose IPI was lost).
 */
static bool vcpu_finished(struct vcpu_thread *t, unsigned int seconds)
{
	if (vcpu_thread_stopped_within(t, seconds))
		return !t->run_errno && t->ucall == UCALL_DONE;
	pthread_kill(t->thread, SIGUSR1);
	TEST_ASSERT(vcpu_thread_stopped_within(t, HOST_SECONDS),
		    "vCPU %u stays in KVM_RUN after a signal", t->vcpu->id);
	return false;
}

/* KTAP points per case: delivery and path, or the model's verdict. */
static unsigned int points_of(const struct ipi_case *c)
{
	return c->kind == APIC_CHANGES ? 1 : 2;
}

static void run_case(const struct ipi_case *c, const struct ipi_platform *pf)
{
	struct kvm_vcpu *vcpus[NR_VCPUS + BYSTANDERS];
	struct vcpu_thread ctl[NR_VCPUS];
	u64 hits, lat[MAX_ROUNDS];
	u32 done, i, moves = 0;
	u64 halts, wakeups;
	struct timespec t0, t1;
	bool have_stat, finished;
	struct kvm_vm *vm;
	char name[96];
	int want_hits;

	vm = vm_create_with_vcpus(NR_VCPUS + (c->kind == APIC_CHANGES ? BYSTANDERS : 0),
				  NULL, vcpus);
	if (c->kind == APIC_CHANGES) {
		for (i = 0; i < NR_VCPUS; i++) {
			vcpu_arch_set_entry_point(vcpus[i], apic_changes_main);
			vcpu_args_set(vcpus[i], 1, i);
			vcpu_set_msr(vcpus[i], MSR_GS_BASE, i);
		}
		for (i = 0; i < MAX_DESTS; i++)
			vm_install_exception_handler(vm, IPI_VECTOR + i, counted_ipi_handler);
		vm_install_exception_handler(vm, FENCE_VECTOR, fence_handler);
		virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
		plan_apic_rounds();
		sync_global_to_guest(vm, plan);
	} else {
		vcpu_arch_set_entry_point(vcpus[SENDER], sender_main);
		vcpu_arch_set_entry_point(vcpus[RECEIVER], receiver_main);
		vm_install_exception_handler(vm, IPI_VECTOR, ipi_handler);
		plan_delays(c);
		sync_global_to_guest(vm, delay_tsc);
		/* where KVM keeps no steal time, none is subtracted */
		for (i = 0; i < NR_VCPUS && kvm_cpu_has(X86_FEATURE_KVM_STEAL_TIME); i++)
			vcpu_set_msr(vcpus[i], MSR_KVM_STEAL_TIME,
				     addr_gva2gpa(vm, (gva_t)&steal[i]) | KVM_MSR_ENABLED);
	}
	/* the halting receiver must go to sleep, not poll */
	if (c->kind == HALTING && kvm_has_cap(KVM_CAP_HALT_POLL))
		vm_enable_cap(vm, KVM_CAP_HALT_POLL, 0);
	ipi_kind = c->kind;
	rounds = c->rounds;
	icr = c->icr;
	loss_tsc = (u64)LOSS_SECONDS * guest_tsc_khz * 1000;
	sync_global_to_guest(vm, ipi_kind);
	sync_global_to_guest(vm, rounds);
	sync_global_to_guest(vm, icr);
	sync_global_to_guest(vm, loss_tsc);
	/* before KVM_RUN: the stats fd may be opened only now */
	have_stat = vcpu_has_stat(vcpus[SENDER], x2apic_icr_fastpath_writes);
	hits = ipi_fastpath_hits(vcpus[SENDER], have_stat);
	TEST_ASSERT(vcpu_has_stat(vcpus[RECEIVER], halt_wakeup), "no halt_wakeup stat");
	halts = vcpu_get_stat(vcpus[RECEIVER], halt_exits);
	wakeups = vcpu_get_stat(vcpus[RECEIVER], halt_wakeup);

	for (i = 0; i < NR_VCPUS; i++) {
		vcpu_thread_start(&ctl[i], vcpus[i]);
		pin_task_to_cpu(ctl[i].thread, cpus[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < NR_VCPUS; i++)
		vcpu_thread_resume(&ctl[i]);
	if (c->kind == MOVING)
		moves = move_until_done(ctl);
	finished = vcpu_finished(&ctl[SENDER], HOST_SECONDS);
	/* after a loss the receiver may never wake: no wait for it then */
	sync_global_from_guest(vm, lost);
	finished &= vcpu_finished(&ctl[RECEIVER], lost ? 0 : LOSS_SECONDS + 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ksft_print_msg("%s: %ld ms\n", c->name, (t1.tv_sec - t0.tv_sec) * 1000 +
		       (t1.tv_nsec - t0.tv_nsec) / 1000000);
	hits = ipi_fastpath_hits(vcpus[SENDER], have_stat) - hits;
	halts = vcpu_get_stat(vcpus[RECEIVER], halt_exits) - halts;
	wakeups = vcpu_get_stat(vcpus[RECEIVER], halt_wakeup) - wakeups;
	sync_global_from_guest(vm, latency);
	sync_global_from_guest(vm, taken);
	sync_global_from_guest(vm, sent);

	done = lost ? lost - 1 : c->rounds;
	if (lost)
		ksft_print_msg("%s: round %u not completed within %u s\n",
			       c->name, lost, LOSS_SECONDS);
	if (!finished)
		ksft_print_msg("%s: a vCPU did not finish\n", c->name);
	if (moves)
		ksft_print_msg("%s: %u moves of both vCPU threads\n", c->name, moves);
	/* how many IPIs found the receiver asleep, and how many before */
	if (c->kind == HALTING || c->kind == MOVING)
		ksft_print_msg("%s: receiver halted %lu times, woken from sleep %lu times\n",
			       c->name, halts, wakeups);

	if (c->kind == APIC_CHANGES) {
		ksft_test_result(finished && !lost && check_apic_rounds(vm, done),
				 "%s: every IPI as the model says\n", c->name);
	} else {
		u64 bound = (u64)RUNNING_BOUND_US * guest_tsc_khz / 1000;
		u64 median_bound = (u64)RUNNING_MEDIAN_US * guest_tsc_khz / 1000;
		u64 unstolen, slowest;
		bool in_time;
		char what[128];

		sync_global_from_guest(vm, stolen_ns);
		for (i = 0; i < done; i++)
			lat[i] = unstolen_latency(i);
		snprintf(what, sizeof(what), "%s, less steal time", c->name);
		unstolen = print_latencies(what, lat, done);
		slowest = done ? lat[done - 1] : 0;
		memcpy(lat, latency, done * sizeof(lat[0]));
		print_latencies(c->name, lat, done);
		if (c->kind == RUNNING && c->icr == PHYSICAL_IPI) {
			sync_global_from_guest(vm, fastest_write);
			sweep_tsc = SWEEP_FACTOR * max(unstolen, fastest_write);
		}
		/* IPIs over the bound: a preempted vCPU thread, or no kick */
		for (i = 0; i < done && lat[i] <= bound; i++)
			;
		if ((c->kind == RUNNING || c->kind == ENTERING) && i < done)
			ksft_print_msg("%s: %u of %u IPIs over %u us, slowest %lu us\n", c->name,
				       done - i, done, RUNNING_BOUND_US, tsc_to_us(lat[done - 1]));
		if (c->kind == RUNNING && unstolen > median_bound)
			ksft_print_msg("%s: median IPI less steal time %lu us, bound %u us\n",
				       c->name, tsc_to_us(unstolen), RUNNING_MEDIAN_US);
		if (c->kind == ENTERING && slowest > bound)
			ksft_print_msg("%s: slowest IPI less steal time %lu us, bound %u us\n",
				       c->name, tsc_to_us(slowest), RUNNING_BOUND_US);
		in_time = c->kind == RUNNING ? unstolen <= median_bound :
			  c->kind == ENTERING ? slowest <= bound : true;
		ksft_test_result(finished && !lost && taken == c->rounds && in_time,
				 "%s: every IPI taken in time\n", c->name);

		snprintf(name, sizeof(name), "%s: path", c->name);
		want_hits = icr_expected_fastpath_hits(c->icr, pf) > 0 ? sent : 0;
		ipi_path_result(pf, have_stat, hits, want_hits, name, NULL);
	}
	for (i = 0; i < NR_VCPUS; i++)
		vcpu_thread_join(&ctl[i]);
	kvm_vm_free(vm);
}

/* Select the kinds of cases named in @list, e.g. "running,halting". */
static bool select_kinds(char *list)
{
	char *name, *save;
	int k;

	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < NR_KINDS && strcmp(name, kind_names[k]); k++)
			;
		if (k == NR_KINDS)
			return false;
		selected[k] = true;
	}
	/* their delay sweeps span the running receiver's latency */
	if (selected[ENTERING] || selected[HALTING] || selected[MOVING])
		selected[RUNNING] = true;
	return true;
}

/* The points of a case not selected, under their usual names. */
static void skip_case(const struct ipi_case *c)
{
	static const char * const points[] = { "every IPI taken in time", "path" };
	char name[96];
	unsigned int i;

	for (i = 0; i < points_of(c); i++) {
		snprintf(name, sizeof(name), "%s: %s", c->name,
			 c->kind == APIC_CHANGES ? "every IPI as the model says" : points[i]);
		ksft_test_result_code(KSFT_SKIP, name, "not selected (-k)");
	}
}

static void exit_with_usage(const char *prog)
{
	ksft_exit_fail_msg("usage: %s [-k KIND[,KIND...]] [-s seed]\n"
			   "  KIND: running, entering, halting, moving, apic-changes\n", prog);
}

int main(int argc, char *argv[])
{
	struct sigaction sa = { .sa_handler = no_op_signal };
	struct ipi_platform pf;
	unsigned int seed = 1, i, points = 0;
	cpu_set_t set;
	int opt;

	while ((opt = getopt(argc, argv, "k:s:")) != -1) {
		switch (opt) {
		case 'k':
			if (!select_kinds(optarg))
				exit_with_usage(argv[0]);
			break;
		case 's':
			seed = atoi_non_negative("seed", optarg);
			break;
		default:
			exit_with_usage(argv[0]);
		}
	}
	for (i = 0; i < NR_KINDS && !selected[i]; i++)
		;
	if (i == NR_KINDS)
		memset(selected, true, sizeof(selected));
	TEST_ASSERT(!sched_getaffinity(0, sizeof(set), &set), "sched_getaffinity");
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			allowed[nr_allowed++] = i;
	if (nr_allowed < NR_VCPUS)
		ksft_exit_skip("needs %d host CPUs to run vCPUs on at once, has %u\n",
			       NR_VCPUS, nr_allowed);
	for (i = 0; i < NR_VCPUS; i++)
		cpus[i] = allowed[i];
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	pf = ipi_platform_probe();
	srandom(seed);

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		points += points_of(&cases[i]);
	ksft_print_header();
	ksft_set_plan(points);
	ksft_print_msg("seed %u, vCPUs on host CPUs %d and %d of %u\n",
		       seed, cpus[0], cpus[1], nr_allowed);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (selected[cases[i].kind])
			run_case(&cases[i], &pf);
		else
			skip_case(&cases[i]);
	}
	ksft_finished();
}
