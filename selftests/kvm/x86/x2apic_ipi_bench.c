// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPI benchmark (a program, not a test): how much the x2APIC ICR fastpath
 * saves, measured side by side in one run on one kernel.
 *
 * vCPU 0 pings vCPU 1, whose interrupt handler pongs back.  Per sample, in
 * guest TSC cycles:
 *   write    the sender's WRMSR (or MMIO write) of the ICR, i.e. the exit's
 *            handling time as the guest sees it;
 *   latency  sender's TSC before the write -> receiver's TSC in its handler;
 *   rtt      sender's TSC before the write -> sender's TSC in its pong handler.
 * Cases, each with kvm.x2apic_icr_fastpath on and off: x2APIC fixed
 * physical, fixed logical, NMI (the receiver pongs from its NMI handler) and
 * self (the sender pings and pongs itself); then xAPIC MMIO.  Which of them
 * the fastpath takes is this kernel's rule's (ipi_oracle.c); the output says
 * it per case.  Receiver halted or busy-polling with interrupts on.  With
 * two host CPUs or more, the sender and the receiver run pinned to two of
 * them, so that a polling receiver is in guest mode while the sender writes
 * its ICR (KVM must kick it out of the guest); on one CPU they share it.
 *
 * Turning the fastpath off changes it for every VM on the host: the
 * benchmark is run by hand only (not by the kselftest runner), and puts the
 * switch back as it found it before it ends.
 *
 * usage: x2apic_ipi_bench [-n samples] [-r]   (-r: print every sample)
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_platform.h"
#include "vcpu_thread.h"
#ifdef KVM_FASTPATH_SWITCH
#include "fastpath_switch.h"
#endif

#define PING_VECTOR	0xc0
#define PONG_VECTOR	0xc1
#define SENDER_ID	0
#define RECEIVER_ID	1
#define MAX_SAMPLES	4096
#define WARMUP		16
#define RECEIVER_EXIT_SECONDS	10	/* after the sender */

enum { RX_HALT, RX_POLL, RX_EXIT };
static const char * const rx_names[] = { "halted", "polling" };

struct sample {
	u64 write, latency, rtt;
};

/* Host -> guest, set while the sender is parked. */
static bool xapic;
static u64 ping_icr, pong_icr;
static u64 wake_icr;	/* a fixed IPI to the receiver, whatever the case */
static u32 nr_samples;
static u32 rx_mode;
/* Guest -> host. */
static u64 t_received, t_ponged;
static u32 pongs;
static u32 rx_ready;
static struct sample samples[MAX_SAMPLES];

/* Host CPUs for the sender and the receiver; the receiver's is -1 on one CPU. */
static int cpu_of[2] = { -1, -1 };

static u64 tsc(void)
{
	u64 t;

	asm volatile("lfence");
	t = rdtsc();
	asm volatile("lfence");
	return t;
}

static void send(u64 icr)
{
	if (xapic) {
		xapic_write_reg(APIC_ICR2, icr >> 32);
		xapic_write_reg(APIC_ICR, (u32)icr);
	} else {
		wrmsr(APIC_BASE_MSR + (APIC_ICR >> 4), icr);
	}
}

static void eoi(void)
{
	if (xapic)
		xapic_write_reg(APIC_EOI, 0);
	else
		wrmsr(APIC_BASE_MSR + (APIC_EOI >> 4), 0);
}

static void enable_apic(void)
{
	if (xapic)
		xapic_enable();
	else
		x2apic_enable();
}

static void ping_isr(struct ex_regs *regs)
{
	WRITE_ONCE(t_received, tsc());
	eoi();
	send(READ_ONCE(pong_icr));
}

/* NMI pings: no EOI, the pong is a fixed IPI as usual. */
static void ping_nmi(struct ex_regs *regs)
{
	WRITE_ONCE(t_received, tsc());
	send(READ_ONCE(pong_icr));
}

static void pong_isr(struct ex_regs *regs)
{
	WRITE_ONCE(t_ponged, tsc());
	WRITE_ONCE(pongs, pongs + 1);
	eoi();
}

static void receiver_code(void)
{
	enable_apic();
	WRITE_ONCE(rx_ready, 1);	/* a disabled APIC would drop the pings */
	for (;;) {
		switch (READ_ONCE(rx_mode)) {
		case RX_POLL:
			sti_nop_cli();
			break;
		case RX_HALT:
			safe_halt();
			cli();
			break;
		default:
			GUEST_DONE();
		}
	}
}

static void one_ping(struct sample *s)
{
	u32 before = READ_ONCE(pongs);
	u64 t0, t1;

	t0 = tsc();
	send(ping_icr);
	t1 = tsc();
	while (READ_ONCE(pongs) == before) {
		safe_halt();
		cli();
	}
	s->write = t1 - t0;
	s->latency = READ_ONCE(t_received) - t0;
	s->rtt = READ_ONCE(t_ponged) - t0;
}

static void sender_code(void)
{
	struct sample warm;
	u32 i;

	enable_apic();
	cli();
	for (;;) {
		GUEST_SYNC(0);
		if (READ_ONCE(rx_mode) == RX_EXIT)
			break;
		/* The first pings wake the receiver into its new mode. */
		for (i = 0; i < WARMUP; i++)
			one_ping(&warm);
		for (i = 0; i < READ_ONCE(nr_samples); i++)
			one_ping(&samples[i]);
	}
	send(wake_icr);		/* wakes the receiver to see RX_EXIT */
	GUEST_DONE();
}

/* ---- host */

enum ping_kind { PING_PHYSICAL, PING_LOGICAL, PING_NMI, PING_SELF, NR_KINDS };
static const char * const kind_names[] = { "physical", "logical", "nmi", "self" };

struct bench_case {
	const char *name;
	enum ping_kind kind;
	bool xapic, fastpath_off;
};

/* Pairs: fastpath on, then off, per kind; xAPIC MMIO last. */
static const struct bench_case cases[] = {
	{ "physical, fastpath on", PING_PHYSICAL, false, false },
	{ "physical, fastpath off", PING_PHYSICAL, false, true },
	{ "logical, fastpath on", PING_LOGICAL, false, false },
	{ "logical, fastpath off", PING_LOGICAL, false, true },
	{ "nmi, fastpath on", PING_NMI, false, false },
	{ "nmi, fastpath off", PING_NMI, false, true },
	{ "self, fastpath on", PING_SELF, false, false },
	{ "self, fastpath off", PING_SELF, false, true },
	{ "xAPIC MMIO", PING_PHYSICAL, true, false },
};

#define NR_CASES	ARRAY_SIZE(cases)

enum { M_WRITE, M_LATENCY, M_RTT, NR_METRICS };
static const char * const metric_names[] = { "write", "latency", "rtt" };

struct stats {
	u64 min, median, p90, p99;
};

static struct stats results[NR_CASES][2][NR_METRICS];
/* Why the fastpath-off cases cannot run, or NULL. */
static const char *switch_unusable = "this build has no fastpath switch";
static u32 n_samples = 1000;
static bool raw;

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static struct stats stats_of(u64 *v, u32 n)
{
	struct stats s;

	qsort(v, n, sizeof(*v), cmp_u64);
	s.min = v[0];
	s.median = v[n / 2];
	s.p90 = v[n * 90 / 100];
	s.p99 = v[n * 99 / 100];
	return s;
}

static void sender_run(struct kvm_vcpu *vcpu, u64 want)
{
	vcpu_run(vcpu);
	TEST_ASSERT_EQ(vcpu_sync_or_done(vcpu, NULL), want);
}

/* The ping of @bc to the receiver, and its pong back to the sender. */
static void set_icrs(const struct bench_case *bc, bool xapic_mode)
{
	u64 fixed = APIC_DM_FIXED | APIC_INT_ASSERT;

	switch (bc->kind) {
	case PING_LOGICAL:
		ping_icr = icr_with_apic_dest(fixed | APIC_DEST_LOGICAL | PING_VECTOR,
					      1 << RECEIVER_ID, xapic_mode);
		pong_icr = icr_with_apic_dest(fixed | APIC_DEST_LOGICAL | PONG_VECTOR,
					      1 << SENDER_ID, xapic_mode);
		break;
	case PING_NMI:
		ping_icr = icr_with_apic_dest(APIC_DM_NMI | APIC_INT_ASSERT, RECEIVER_ID,
					      xapic_mode);
		pong_icr = icr_with_apic_dest(fixed | PONG_VECTOR, SENDER_ID, xapic_mode);
		break;
	case PING_SELF:
		ping_icr = fixed | APIC_DEST_SELF | PING_VECTOR;
		pong_icr = fixed | APIC_DEST_SELF | PONG_VECTOR;
		break;
	default:
		ping_icr = icr_with_apic_dest(fixed | PING_VECTOR, RECEIVER_ID, xapic_mode);
		pong_icr = icr_with_apic_dest(fixed | PONG_VECTOR, SENDER_ID, xapic_mode);
		break;
	}
}

static void wait_receiver_ready(struct kvm_vm *vm)
{
	u32 *ready = addr_gva2hva(vm, (gva_t)&rx_ready);
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!READ_ONCE(*ready)) {
		TEST_ASSERT(timespec_to_ns(timespec_elapsed(start)) < 120 * 1000000000LL,
			    "receiver not ready after 120 s");
		sched_yield();
	}
}

/* Run every case of one APIC mode on a fresh VM. */
static void bench_vm(bool xapic_mode)
{
	struct kvm_vcpu *sender, *receiver;
	struct sample *guest_samples;
	u64 *v = calloc(n_samples, sizeof(*v));
	struct vcpu_thread receiver_thread;
	struct kvm_vm *vm;
	int c, rx, m, i;

	vm = vm_create_with_one_vcpu(&sender, sender_code);
	receiver = vm_vcpu_add(vm, RECEIVER_ID, receiver_code);
	vm_install_exception_handler(vm, PING_VECTOR, ping_isr);
	vm_install_exception_handler(vm, PONG_VECTOR, pong_isr);
	vm_install_exception_handler(vm, NMI_VECTOR, ping_nmi);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
	xapic = xapic_mode;
	rx_mode = RX_HALT;
	wake_icr = icr_with_apic_dest(APIC_DM_FIXED | APIC_INT_ASSERT | PING_VECTOR,
				      RECEIVER_ID, xapic_mode);
	sync_global_to_guest(vm, wake_icr);
	sync_global_to_guest(vm, xapic);
	sync_global_to_guest(vm, rx_mode);
	guest_samples = addr_gva2hva(vm, (gva_t)samples);

	vcpu_thread_start(&receiver_thread, receiver);
	if (cpu_of[RECEIVER_ID] >= 0) {
		pin_self_to_cpu(cpu_of[SENDER_ID]);
		pin_task_to_cpu(receiver_thread.thread, cpu_of[RECEIVER_ID]);
	}
	vcpu_thread_resume(&receiver_thread);
	sender_run(sender, UCALL_SYNC);
	wait_receiver_ready(vm);

	for (c = 0; c < NR_CASES; c++) {
		const struct bench_case *bc = &cases[c];

		if (bc->xapic != xapic_mode)
			continue;
		if (bc->fastpath_off && switch_unusable) {
			printf("# %s: skipped, %s\n", bc->name, switch_unusable);
			continue;
		}
#ifdef KVM_FASTPATH_SWITCH
		if (!switch_unusable)
			fastpath_switch_set(!bc->fastpath_off);
#endif

		set_icrs(bc, xapic_mode);
		if (!xapic_mode)
			printf("# %s: the ping takes the fastpath where it runs: %s\n",
			       bc->name, icr_takes_fastpath_in(ping_icr, 0, NULL) ? "yes" : "no");
		nr_samples = n_samples;
		sync_global_to_guest(vm, ping_icr);
		sync_global_to_guest(vm, pong_icr);
		sync_global_to_guest(vm, nr_samples);

		for (rx = RX_HALT; rx <= RX_POLL; rx++) {
			WRITE_ONCE(*(u32 *)addr_gva2hva(vm, (gva_t)&rx_mode), rx);
			printf("# running: %s, receiver %s\n", bc->name, rx_names[rx]);
			fflush(stdout);
			sender_run(sender, UCALL_SYNC);

			for (i = 0; raw && i < n_samples; i++)
				printf("SAMPLE,%s,%s,%u,%lu,%lu,%lu\n", bc->name, rx_names[rx],
				       i, guest_samples[i].write, guest_samples[i].latency,
				       guest_samples[i].rtt);
			for (m = 0; m < NR_METRICS; m++) {
				for (i = 0; i < n_samples; i++)
					v[i] = m == M_WRITE ? guest_samples[i].write :
					       m == M_LATENCY ? guest_samples[i].latency :
					       guest_samples[i].rtt;
				results[c][rx][m] = stats_of(v, n_samples);
			}
		}
	}
	WRITE_ONCE(*(u32 *)addr_gva2hva(vm, (gva_t)&rx_mode), RX_EXIT);
	sender_run(sender, UCALL_DONE);
	TEST_ASSERT(vcpu_thread_stopped_within(&receiver_thread, RECEIVER_EXIT_SECONDS) &&
		    receiver_thread.ucall == UCALL_DONE, "the receiver did not finish");
	vcpu_thread_join(&receiver_thread);
	kvm_vm_free(vm);
	free(v);
}

static void print_cpu_model(void)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			printf("# cpu:%s", strchr(line, ':') + 1);
			break;
		}
	}
	if (f)
		fclose(f);
}

static void print_table(void)
{
	int k, rx, m;

	printf("# median and p99 in guest TSC cycles; ratio = fastpath off / on\n");
	printf("# %-8s %-8s %-8s %15s %15s %7s\n", "ping", "metric", "receiver",
	       "fastpath on", "fastpath off", "ratio");
	for (k = 0; k < NR_KINDS; k++) {
		for (m = 0; m < NR_METRICS; m++) {
			for (rx = RX_HALT; rx <= RX_POLL; rx++) {
				struct stats *on = &results[2 * k][rx][m];
				struct stats *off = &results[2 * k + 1][rx][m];

				printf("# %-8s %-8s %-8s %7lu /%7lu %7lu /%7lu %7.2f\n",
				       kind_names[k], metric_names[m], rx_names[rx],
				       on->median, on->p99, off->median, off->p99,
				       on->median ? (double)off->median / on->median : 0);
			}
		}
	}
	for (m = 0; m < NR_METRICS; m++)
		for (rx = RX_HALT; rx <= RX_POLL; rx++)
			printf("# %-8s %-8s %-8s %7lu /%7lu\n", "xAPIC", metric_names[m],
			       rx_names[rx], results[NR_CASES - 1][rx][m].median,
			       results[NR_CASES - 1][rx][m].p99);
}

static void print_stats(void)
{
	int c, rx, m;

	printf("STATS,case,receiver,metric,min,median,p90,p99\n");
	for (c = 0; c < NR_CASES; c++)
		for (rx = RX_HALT; rx <= RX_POLL; rx++)
			for (m = 0; m < NR_METRICS; m++)
				printf("STATS,%s,%s,%s,%lu,%lu,%lu,%lu\n", cases[c].name,
				       rx_names[rx], metric_names[m],
				       results[c][rx][m].min, results[c][rx][m].median,
				       results[c][rx][m].p90, results[c][rx][m].p99);
}

int main(int argc, char *argv[])
{
	struct ipi_platform platform = ipi_platform_probe();
#ifdef KVM_FASTPATH_SWITCH
	bool fastpath_was = true;
#endif
	int opt, cpu, nr_cpus = 0;
	char desc[192];
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:r")) != -1) {
		switch (opt) {
		case 'n':
			n_samples = atoi(optarg);
			break;
		case 'r':
			raw = true;
			break;
		default:
			printf("usage: %s [-n samples] [-r]\n", argv[0]);
			exit(KSFT_FAIL);
		}
	}
	TEST_ASSERT(n_samples > 0 && n_samples <= MAX_SAMPLES,
		    "-n takes 1 to %d samples", MAX_SAMPLES);

	TEST_ASSERT(!sched_getaffinity(0, sizeof(set), &set), "sched_getaffinity");
	for (cpu = 0; cpu < CPU_SETSIZE && nr_cpus < 2; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpu_of[nr_cpus++] = cpu;

	ipi_platform_describe(&platform, desc, sizeof(desc));
	printf("# x2APIC IPI benchmark, %u samples per case after %d warm-up pings\n",
	       n_samples, WARMUP);
	printf("# platform: %s\n", desc);
	print_cpu_model();
	if (cpu_of[RECEIVER_ID] >= 0)
		printf("# sender on host CPU %d, receiver on host CPU %d\n",
		       cpu_of[SENDER_ID], cpu_of[RECEIVER_ID]);
	else
		printf("# sender and receiver share one host CPU\n");
	printf("# cycles are guest TSC cycles\n");

#ifdef KVM_FASTPATH_SWITCH
	/* Run by hand: that is the ask to turn the fastpath off. */
	switch_unusable = fastpath_switch_unusable(true);
	if (!switch_unusable)
		fastpath_was = fastpath_switch_get();
#endif
	bench_vm(false);
	bench_vm(true);
#ifdef KVM_FASTPATH_SWITCH
	if (!switch_unusable)
		fastpath_switch_set(fastpath_was);
#endif
	print_stats();
	print_table();
	return 0;
}
