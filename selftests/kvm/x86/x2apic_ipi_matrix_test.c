// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2APIC IPI matrix: every vCPU in turn writes its ICR with each
 * combination of delivery mode, destination mode, destination, shorthand and
 * trigger mode, and with reserved bits set.  For every single write the host
 * checks, against the oracle in lib/ (ipi_oracle.h):
 *
 *  - path: the sender's x2apic_icr_fastpath_writes stat rose by exactly one
 *    where the platform runs the fastpath and the running kernel's policy
 *    takes the write (single-target: fixed, physical, no shorthand, not
 *    broadcast; fast-delivery: anything but the ALL and ALL-BUT shorthands
 *    and the broadcast ID), and by zero for everything else;
 *  - outcome: every vCPU's interrupt or NMI handler saw exactly what the SDM
 *    says and nothing else, reserved bits raised #GP in the sender, and the
 *    ICR reads back as written.
 *
 * SMI, INIT and SIPI go to vCPUs parked in the host, where the host sees them
 * latched (KVM_GET_VCPU_EVENTS, KVM_GET_MP_STATE); it then drops the SMI, or
 * restarts the vCPUs that INIT or SIPI reset from their first instruction.
 * Then every vCPU switches to xAPIC mode and the same sends, written through
 * the MMIO ICR2/ICR, must deliver the same way and never take the fastpath.
 *
 * Where the kernel has the kvm.x2apic_icr_fastpath switch, the whole matrix
 * runs a second time with the fastpath off: every write must then take the
 * slow path, and every vCPU must see exactly what it saw with the fastpath on.
 *
 * A round: all vCPUs are parked at a GUEST_SYNC; the host names one sender
 * and one ICR value; the other vCPUs idle in HLT (guest_idle.h) until a fence
 * interrupt the host injects with KVM_SIGNAL_MSI after the write.  The fence
 * vector has the lowest priority class of all vectors used, and NMIs outrank
 * every interrupt, so once a vCPU has handled its fence it has handled every
 * IPI of the round that was pending for it.  All waits are bounded.
 */
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "guest_hva.h"
#include "guest_idle.h"
#include "host_msi.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "vcpu_run_within.h"
#include "vcpu_stats.h"

#define NR_VCPUS	4
#define FENCE_VECTOR	0x20	/* lowest priority class in use */
#define TEST_VECTOR	0xb0
#define LOW_VECTOR	0x0f	/* illegal for fixed IPIs */
#define MISSING_ID	5	/* an x2APIC ID no vCPU has */
#define SIPI_VECTOR	0x9f	/* start-up page 0x9f000 */
#define RESET_CS	0xf000	/* CS selector after INIT */
#define WAIT_SECONDS	(30 * test_time_scale())	/* guest seconds: slow under Bochs */

/* Two vCPUs in logical cluster 0 and two in cluster 1. */
static const uint32_t apic_ids[NR_VCPUS] = { 0, 1, 16, 17 };
/* xAPIC flat-model logical IDs (LDR bits 31:24); bit 4 is nobody's. */
static const uint8_t flat_ldr[NR_VCPUS] = { 0x01, 0x02, 0x04, 0x08 };
#define FLAT_NOBODY	0x10

#define XAPIC_LDR	0xd0
#define XAPIC_DFR	0xe0
#define XAPIC_DFR_FLAT	0xffffffff

enum { SYNC_PARKED = 1, SYNC_SENT };
enum { OP_IDLE, OP_SEND, OP_TO_XAPIC, OP_EXIT };

/* Host -> guest, written only while every vCPU is parked. */
struct guest_cmd {
	uint32_t op;
	uint32_t fences;	/* idle until this many fences were handled */
	uint64_t icr;
};

/* Guest -> host. */
struct guest_obs {
	uint32_t irqs[256];	/* interrupts handled, per vector */
	uint32_t nmis;
	uint32_t in_shadow;	/* interrupts and NMIs taken inside STI's shadow */
	uint32_t fault;		/* vector raised by the last ICR write, or 0 */
	uint64_t readback;	/* the ICR read right after that write */
};

static struct guest_cmd cmd[NR_VCPUS];
static struct guest_obs obs[NR_VCPUS];
static uint8_t index_of_id[32];
static bool in_xapic;		/* set by the host once every vCPU switched */

static uint32_t self_index(void)
{
	if (READ_ONCE(in_xapic))
		return index_of_id[(xapic_read_reg(APIC_ID) >> 24) & 31];
	return index_of_id[x2apic_read_reg(APIC_ID) & 31];
}

static void apic_eoi(void)
{
	if (READ_ONCE(in_xapic))
		xapic_write_reg(APIC_EOI, 0);
	else
		x2apic_write_reg(APIC_EOI, 0);
}

static void guest_isr(struct ex_regs *regs)
{
	uint32_t me = self_index();

	WRITE_ONCE(obs[me].irqs[regs->vector], obs[me].irqs[regs->vector] + 1);
	apic_eoi();
	if (guest_idle_step_over_hlt(regs))
		WRITE_ONCE(obs[me].in_shadow, obs[me].in_shadow + 1);
}

static void guest_nmi(struct ex_regs *regs)
{
	uint32_t me = self_index();

	WRITE_ONCE(obs[me].nmis, obs[me].nmis + 1);
	if (guest_idle_step_over_hlt(regs))
		WRITE_ONCE(obs[me].in_shadow, obs[me].in_shadow + 1);
}

static void idle_until_fence(uint32_t me)
{
	uint32_t want = READ_ONCE(cmd[me].fences);

	asm volatile("cli");
	while (READ_ONCE(obs[me].irqs[FENCE_VECTOR]) < want)
		guest_idle_once();
}

/* ICR2 first: writing the low half sends. */
static void xapic_send(uint32_t me, uint64_t icr)
{
	xapic_write_reg(APIC_ICR2, icr >> 32);
	xapic_write_reg(APIC_ICR, (uint32_t)icr);
	obs[me].fault = 0;
	obs[me].readback = (uint64_t)xapic_read_reg(APIC_ICR2) << 32 |
			   xapic_read_reg(APIC_ICR);
}

static void x2apic_send(uint32_t me, uint64_t icr)
{
	obs[me].fault = x2apic_write_reg_safe(APIC_ICR, icr);
	obs[me].readback = x2apic_read_reg(APIC_ICR);
}

static void guest_main(uint32_t me)
{
	x2apic_enable();

	for (;;) {
		GUEST_SYNC(SYNC_PARKED);

		switch (READ_ONCE(cmd[me].op)) {
		case OP_SEND:
			if (READ_ONCE(in_xapic))
				xapic_send(me, cmd[me].icr);
			else
				x2apic_send(me, cmd[me].icr);
			GUEST_SYNC(SYNC_SENT);
			idle_until_fence(me);
			break;
		case OP_TO_XAPIC:
			xapic_enable();
			xapic_write_reg(XAPIC_DFR, XAPIC_DFR_FLAT);
			xapic_write_reg(XAPIC_LDR, (uint32_t)flat_ldr[me] << 24);
			break;
		case OP_IDLE:
			idle_until_fence(me);
			break;
		default:
			GUEST_DONE();
		}
	}
}

/* ---- host: vCPU threads, each runs its vCPU to the next ucall on demand */

struct vcpu_ctl {
	struct kvm_vcpu *vcpu;
	pthread_t thread;
	sem_t go, stopped;
	uint64_t sync;		/* argument of the last GUEST_SYNC */
	bool done;
	struct kvm_regs first_regs;	/* to restart it after INIT / SIPI */
	struct kvm_sregs first_sregs;
	uint32_t fences;	/* fences sent to it so far */
	uint64_t icr;		/* its ICR as last written without fault */
};

static struct kvm_vm *vm;
static struct vcpu_ctl ctl[NR_VCPUS];
static struct guest_cmd *host_cmd;
static struct guest_obs *host_obs;
static struct ipi_platform platform;
static bool have_stat;

static void *vcpu_thread(void *arg)
{
	struct vcpu_ctl *c = arg;
	struct ucall uc;

	while (!c->done) {
		sem_wait(&c->go);
		vcpu_run(c->vcpu);
		if (vcpu_sync_or_done(c->vcpu, &uc) == UCALL_DONE)
			c->done = true;
		else
			c->sync = uc.args[1];
		sem_post(&c->stopped);
	}
	return NULL;
}

static void resume(int i)
{
	sem_post(&ctl[i].go);
}

/* Wait, bounded, until vCPU @i is back in the host. */
static void wait_stop(int i, const char *what)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WAIT_SECONDS;
	TEST_ASSERT(!sem_timedwait(&ctl[i].stopped, &deadline),
		    "vCPU %u did not stop within %u s (%s); op %u, fences handled %u of %u",
		    apic_ids[i], WAIT_SECONDS, what, host_cmd[i].op,
		    host_obs[i].irqs[FENCE_VECTOR], host_cmd[i].fences);
}

static void check_sync(int i, uint64_t want, const char *what)
{
	TEST_ASSERT(!ctl[i].done && ctl[i].sync == want,
		    "vCPU %u stopped at sync %lu, want %lu (%s)",
		    apic_ids[i], ctl[i].sync, want, what);
}

static void wait_sync(int i, uint64_t want, const char *what)
{
	wait_stop(i, what);
	check_sync(i, want, what);
}

/* An interrupt from the host, not an IPI: it never touches the ICR. */
static void send_fence(int i)
{
	host_msi_send(vm, apic_ids[i], FENCE_VECTOR);
	ctl[i].fences++;
}

/*
 * Wait until vCPU @i parks after its fence.  A vCPU that handled its fence
 * but stays halted lost its wake-up: that fails, it is not nudged.
 */
static void wait_parked(int i)
{
	wait_sync(i, SYNC_PARKED, "waiting for the fence");
}

/* ---- the matrix */

enum group_kind { KIND_PHYSICAL, KIND_LOGICAL, KIND_SHORTHAND, NR_KINDS };
static const char * const kind_names[] = { "physical", "logical", "shorthand" };
static const uint64_t modes[] = { APIC_DM_FIXED, APIC_DM_LOWEST, APIC_DM_NMI };
static const char * const mode_names[] = { "fixed", "lowest-priority", "nmi" };
#define NR_MODES ARRAY_SIZE(modes)

struct group {
	char name[64];
	unsigned int tried, path_failed, outcome_failed;
	unsigned int path_checked, outcome_checked;
	unsigned int known, deviated;	/* known KVM deviations, and as known */
	unsigned int fast;	/* writes the stat saw take the fastpath */
	const char *skip;	/* why the group is not run, if it is not */
};

/* Modes that disturb their target: sent only to vCPUs parked in the host. */
enum { DIS_SMI, DIS_INIT, DIS_SIPI, NR_DISRUPTIVE };
static const uint64_t dis_modes[] = { APIC_DM_SMI, APIC_DM_INIT, APIC_DM_STARTUP | SIPI_VECTOR };
static const char * const dis_names[] = { "smi", "init", "startup" };

/*
 * Groups: APIC mode x delivery mode x kind x trigger; disruptive mode x kind;
 * reserved bits; illegal vectors.
 */
#define NR_PLAIN_GROUPS		(2 * NR_MODES * NR_KINDS * 2)
#define GROUP_DISRUPTIVE(m, k)	(NR_PLAIN_GROUPS + (m) * NR_KINDS + (k))
#define GROUP_RESERVED		GROUP_DISRUPTIVE(NR_DISRUPTIVE, 0)
#define GROUP_LOW_VEC		(GROUP_RESERVED + 1)
#define NR_GROUPS		(GROUP_LOW_VEC + 1)

static struct group groups[NR_GROUPS];

/* What each round did, per run: the differential run compares them. */
struct outcome {
	uint64_t icr;
	uint64_t got_set;
	uint64_t readback;
	uint32_t fault;
	int sender;
	bool defined;
};

#define MAX_ROUNDS	1024
enum { RUN_AS_CONFIGURED, RUN_FASTPATH_OFF, NR_RUNS };
static struct outcome outcomes[NR_RUNS][MAX_ROUNDS];
static int run;
static const char *run_label = "";
static unsigned int total_rounds, total_hits, slow_deliveries;

static bool xapic_phase;

static unsigned int group_of(bool xapic, int mode, enum group_kind kind, bool level)
{
	return ((xapic * NR_MODES + mode) * NR_KINDS + kind) * 2 + level;
}

static void init_groups(void)
{
	/* An SMI is latched only where KVM emulates SMM. */
	const char *smi_skip = kvm_has_cap(KVM_CAP_X86_SMM) ? NULL : "no KVM_CAP_X86_SMM";
	int x, m, k, l;

	for (x = 0; x < 2; x++)
		for (m = 0; m < NR_MODES; m++)
			for (k = 0; k < NR_KINDS; k++)
				for (l = 0; l < 2; l++)
					snprintf(groups[group_of(x, m, k, l)].name,
						 sizeof(groups[0].name), "%s%s %s %s",
						 x ? "xapic " : "", mode_names[m],
						 kind_names[k], l ? "level" : "edge");
	for (m = 0; m < NR_DISRUPTIVE; m++)
		for (k = 0; k < NR_KINDS; k++) {
			snprintf(groups[GROUP_DISRUPTIVE(m, k)].name, sizeof(groups[0].name),
				 "%s %s", dis_names[m], kind_names[k]);
			if (m == DIS_SMI)
				groups[GROUP_DISRUPTIVE(m, k)].skip = smi_skip;
		}
	snprintf(groups[GROUP_RESERVED].name, sizeof(groups[0].name), "reserved bits set");
	snprintf(groups[GROUP_LOW_VEC].name, sizeof(groups[0].name), "vector below 16");
}

static void format_set(uint64_t set, char *buf, size_t size)
{
	int i, n = 0;

	n += snprintf(buf + n, size - n, "{");
	for (i = 0; i < NR_VCPUS; i++)
		if (set & (1ULL << i))
			n += snprintf(buf + n, size - n, "%s0x%x",
				      n > 1 ? "," : "", apic_ids[i]);
	snprintf(buf + n, size - n, "}");
}

/*
 * Check one round's observations; returns the set of vCPUs that received
 * the IPI and sets *outcome_ok.
 */
static uint64_t check_outcome(uint64_t icr, int s, const struct ipi_expectation *e,
			      const struct guest_obs *before, bool *outcome_ok,
			      char *why, size_t size)
{
	struct icr d = icr_decode(icr);
	bool nmi = d.mode == ICR_DM_NMI;
	uint64_t got_set = 0;
	unsigned int got[NR_VCPUS], other = 0, v;
	int i, received = 0;

	for (i = 0; i < NR_VCPUS; i++) {
		const struct guest_obs *now = &host_obs[i];

		got[i] = nmi ? now->nmis - before[i].nmis :
			 now->irqs[d.vector] - before[i].irqs[d.vector];
		if (got[i])
			got_set |= 1ULL << i;
		received += got[i];
		/* Anything else handled, but for the fence and illegal vectors. */
		for (v = 16; v < 256; v++)
			if (v != FENCE_VECTOR &&
			    (nmi || v != d.vector))
				other += now->irqs[v] - before[i].irqs[v];
		if (!nmi)
			other += now->nmis - before[i].nmis;
	}

	*outcome_ok = true;
	why[0] = 0;
	switch (e->fate) {
	case IPI_FATE_GP:
		if (host_obs[s].fault != GP_VECTOR) {
			snprintf(why, size, "fault 0x%x, want #GP", host_obs[s].fault);
			*outcome_ok = false;
		} else if (host_obs[s].readback != ctl[s].icr) {
			snprintf(why, size, "faulting write changed the ICR to 0x%lx",
				 host_obs[s].readback);
			*outcome_ok = false;
		}
		break;
	case IPI_FATE_EACH:
	case IPI_FATE_ONE_OF:
		if (host_obs[s].fault) {
			snprintf(why, size, "fault 0x%x, want none", host_obs[s].fault);
			*outcome_ok = false;
		} else if ((host_obs[s].readback & ~ICR_DELIVERY_STATUS) != icr) {
			snprintf(why, size, "ICR reads back 0x%lx", host_obs[s].readback);
			*outcome_ok = false;
		}
		break;
	case IPI_FATE_UNDEFINED:
		return got_set;
	}
	if (!*outcome_ok)
		return got_set;

	for (i = 0; i < NR_VCPUS; i++) {
		if (got[i] > 1) {
			snprintf(why, size, "vCPU 0x%x handled it %u times",
				 apic_ids[i], got[i]);
			*outcome_ok = false;
		}
	}
	if (e->fate == IPI_FATE_ONE_OF)
		*outcome_ok &= received == 1 && (got_set & ~e->targets) == 0;
	else
		*outcome_ok &= got_set == (e->fate == IPI_FATE_GP ? 0 : e->targets);
	if (other) {
		snprintf(why, size, "%u other interrupts", other);
		*outcome_ok = false;
	}
	return got_set;
}

static void record_outcome(int s, uint64_t icr, uint64_t got_set,
			   const struct ipi_expectation *e)
{
	struct outcome *o = &outcomes[run][total_rounds - 1];

	TEST_ASSERT(total_rounds <= MAX_ROUNDS, "more than %d rounds", MAX_ROUNDS);
	o->icr = icr;
	o->sender = s;
	o->got_set = got_set;
	o->fault = host_obs[s].fault;
	o->readback = host_obs[s].readback;
	o->defined = e->fate != IPI_FATE_UNDEFINED;
}

/* Account one round in its group; report it if its path or outcome is wrong. */
static void finish_round(unsigned int group, int s, uint64_t icr,
			 const struct ipi_expectation *e, int want_hits, uint64_t hits,
			 uint64_t got_set, bool outcome_ok, const char *why)
{
	struct group *g = &groups[group];
	char text[128], got_s[64], want_s[64];
	bool path_ok = true;

	g->tried++;
	g->fast += !!hits;
	total_rounds++;
	total_hits += hits;
	if (!ipi_path_unprovable(&platform, have_stat, want_hits)) {
		g->path_checked++;
		path_ok = hits == (uint64_t)want_hits;
	}
	if (e->fate != IPI_FATE_UNDEFINED)
		g->outcome_checked++;
	record_outcome(s, icr, got_set, e);
	if (!hits && got_set)
		slow_deliveries++;
	if (!host_obs[s].fault)
		ctl[s].icr = icr;

	if (path_ok && outcome_ok)
		return;
	g->path_failed += !path_ok;
	g->outcome_failed += !outcome_ok;
	icr_format(xapic_phase ? (uint32_t)icr | (icr >> XAPIC_DEST_SHIFT) << 32 : icr,
		   text, sizeof(text));
	format_set(got_set, got_s, sizeof(got_s));
	format_set(e->targets, want_s, sizeof(want_s));
	ksft_print_msg("MISMATCH vCPU 0x%x -> %s%s: path %s (+%lu), want %s (+%d); "
		       "recipients %s, want %s %s%s%s\n",
		       apic_ids[s], xapic_phase ? "xapic " : "", text, hits ? "fast" : "slow", hits,
		       want_hits > 0 ? "fast" : "slow", want_hits, got_s,
		       ipi_fate_name(e->fate), want_s, why[0] ? "; " : "", why);
}

/*
 * KVM's one known deviation from the SDM here: lowest priority to the xAPIC
 * physical broadcast ID 0xff is sent as fixed, to every APIC, where the SDM
 * has one of them take it (ipi_oracle.c).  What KVM is known to do goes to
 * @kvm.  Such a group's outcome is an expected failure (XFAIL) while every
 * such write does exactly that, and fails once one does anything else, the
 * SDM's answer included (then drop the mark).
 */
static bool known_deviation(uint64_t icr, const struct ipi_expectation *e,
			    struct ipi_expectation *kvm)
{
	struct icr d = icr_decode(icr);

	if (!xapic_phase || d.mode != ICR_DM_LOWEST || d.logical ||
	    d.shorthand != ICR_SH_NONE || icr_illegal_vector(icr) ||
	    (uint8_t)(icr >> XAPIC_DEST_SHIFT) != XAPIC_BROADCAST)
		return false;
	*kvm = *e;
	kvm->fate = IPI_FATE_EACH;
	return true;
}

static void round_one(int s, uint64_t icr, unsigned int group)
{
	struct ipi_expectation e = xapic_phase ?
		ipi_expect_xapic(icr, s, apic_ids, flat_ldr, NR_VCPUS) :
		ipi_expect(icr, s, apic_ids, NR_VCPUS);
	/* MMIO writes of the xAPIC ICR are never MSR exits. */
	int want_hits = xapic_phase ? 0 : icr_expected_fastpath_hits(icr, &platform);
	struct guest_obs before[NR_VCPUS];
	struct ipi_expectation kvm;
	uint64_t hits = 0, got_set;
	bool outcome_ok, as_known;
	char why[64], kvm_why[64];
	int i;

	memcpy(before, host_obs, sizeof(before));
	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = i == s ? OP_SEND : OP_IDLE;
		host_cmd[i].icr = icr;
		host_cmd[i].fences = ctl[i].fences + 1;
	}

	if (have_stat)
		hits = vcpu_get_stat(ctl[s].vcpu, x2apic_icr_fastpath_writes);
	for (i = 0; i < NR_VCPUS; i++)
		resume(i);
	wait_sync(s, SYNC_SENT, "writing the ICR");
	if (have_stat)
		hits = vcpu_get_stat(ctl[s].vcpu, x2apic_icr_fastpath_writes) - hits;
	resume(s);

	for (i = 0; i < NR_VCPUS; i++)
		send_fence(i);
	for (i = 0; i < NR_VCPUS; i++)
		wait_parked(i);

	got_set = check_outcome(icr, s, &e, before, &outcome_ok, why, sizeof(why));
	if (known_deviation(icr, &e, &kvm)) {
		groups[group].known++;
		check_outcome(icr, s, &kvm, before, &as_known, kvm_why, sizeof(kvm_why));
		if (!outcome_ok && as_known) {
			groups[group].deviated++;
			outcome_ok = true;
		}
	}
	finish_round(group, s, icr, &e, want_hits, hits, got_set, outcome_ok, why);
}

/* Every ICR value the vCPU at index @s sends, tagged with its group. */
static void run_sender(int s)
{
	static const uint64_t shorthands[] = {
		APIC_DEST_SELF, APIC_DEST_ALLINC, APIC_DEST_ALLBUT
	};
	static const uint64_t reserved[] = {
		1ULL << 13, 1ULL << 16, 1ULL << 17, 1ULL << 20, 1ULL << 31,
	};
	uint32_t phys[NR_VCPUS + 2], logical[NR_VCPUS + 4];
	uint32_t other = apic_ids[(s + 1) % NR_VCPUS];
	int m, l, i, nphys = 0, nlog = 0;
	bool x = xapic_phase;

	for (i = 0; i < NR_VCPUS; i++) {
		phys[nphys++] = apic_ids[i];			/* each, self included */
		logical[nlog++] = x ? flat_ldr[i] : x2apic_logical_id(apic_ids[i]);
	}
	phys[nphys++] = MISSING_ID;
	phys[nphys++] = x ? XAPIC_BROADCAST : X2APIC_BROADCAST;
	if (x) {
		logical[nlog++] = flat_ldr[0] | flat_ldr[1];	/* several bits */
		logical[nlog++] = flat_ldr[2] | flat_ldr[3];
		logical[nlog++] = FLAT_NOBODY;
		logical[nlog++] = XAPIC_BROADCAST;
	} else {
		logical[nlog++] = x2apic_logical_id(apic_ids[0]) | x2apic_logical_id(apic_ids[1]);
		logical[nlog++] = x2apic_logical_id(apic_ids[2]) | x2apic_logical_id(apic_ids[3]);
		logical[nlog++] = x2apic_logical_id(MISSING_ID);	/* nobody */
		logical[nlog++] = X2APIC_BROADCAST;
	}

	for (m = 0; m < NR_MODES; m++) {
		for (l = 0; l < 2; l++) {
			uint64_t base = modes[m] | APIC_INT_ASSERT | TEST_VECTOR |
					(l ? APIC_INT_LEVELTRIG : 0);

			for (i = 0; i < nphys; i++)
				round_one(s, icr_with_dest(base, phys[i], x),
					  group_of(x, m, KIND_PHYSICAL, l));
			for (i = 0; i < nlog; i++)
				round_one(s, icr_with_dest(base | APIC_DEST_LOGICAL, logical[i], x),
					  group_of(x, m, KIND_LOGICAL, l));
			/* The destination field must be ignored: aim it elsewhere. */
			for (i = 0; i < ARRAY_SIZE(shorthands); i++)
				round_one(s, icr_with_dest(base | shorthands[i], other, x),
					  group_of(x, m, KIND_SHORTHAND, l));
		}
	}
	if (x)
		return;

	/* x2APIC only: reserved bits fault there, MMIO writes never do. */
	for (i = 0; i < ARRAY_SIZE(reserved); i++)
		round_one(s, icr_with_dest(APIC_DM_FIXED | APIC_INT_ASSERT | TEST_VECTOR |
					   reserved[i], other, x), GROUP_RESERVED);
	round_one(s, icr_with_dest(APIC_DM_FIXED | APIC_INT_ASSERT | LOW_VECTOR, other, x),
		  GROUP_LOW_VEC);
}

/* Did @mode reach the parked vCPU @i?  What each leaves behind is distinct. */
static bool disturbed(int i, int mode)
{
	struct kvm_vcpu *vcpu = ctl[i].vcpu;
	struct kvm_vcpu_events events;
	struct kvm_mp_state mp;
	struct kvm_sregs sregs;

	if (mode == DIS_SMI) {
		vcpu_events_get(vcpu, &events);
		return events.smi.pending;
	}
	/* Getting the MP state makes KVM accept pending INIT and SIPI. */
	vcpu_mp_state_get(vcpu, &mp);
	vcpu_sregs_get(vcpu, &sregs);
	if (mode == DIS_INIT)
		return sregs.cs.selector == RESET_CS;
	return mp.mp_state == KVM_MP_STATE_RUNNABLE &&
	       sregs.cs.selector == SIPI_VECTOR << 8;
}

/* Drop the SMI latched by a vCPU that never ran since. */
static void drop_smi(int i)
{
	struct kvm_vcpu_events events;

	vcpu_events_get(ctl[i].vcpu, &events);
	events.smi.pending = 0;
	vcpu_events_set(ctl[i].vcpu, &events);
}

/*
 * Start vCPU @i again from guest_main(): INIT (or SIPI) reset its registers
 * and its local APIC, which guest_main() enables again.
 */
static void restart(int i)
{
	struct kvm_mp_state runnable = { KVM_MP_STATE_RUNNABLE };

	vcpu_mp_state_set(ctl[i].vcpu, &runnable);
	vcpu_sregs_set(ctl[i].vcpu, &ctl[i].first_sregs);
	vcpu_regs_set(ctl[i].vcpu, &ctl[i].first_regs);
	resume(i);
	wait_sync(i, SYNC_PARKED, "restarting after INIT");
}

/*
 * One SMI, INIT or SIPI write by vCPU @s while every other vCPU stays parked
 * in the host, so the event stays latched there for the host to see.  For
 * SIPI the others wait for it (KVM_MP_STATE_INIT_RECEIVED) first.
 */
static void round_disruptive(int s, int mode, uint64_t icr, unsigned int group)
{
	struct ipi_expectation e = ipi_expect(icr, s, apic_ids, NR_VCPUS);
	int want_hits = icr_expected_fastpath_hits(icr, &platform);
	struct kvm_mp_state wait_for_sipi = { KVM_MP_STATE_INIT_RECEIVED };
	uint64_t hits = 0, got_set = 0;
	bool outcome_ok;
	char why[64];
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		if (i == s)
			continue;
		/* Finish the ucall's port I/O before anything resets the vCPU. */
		vcpu_run_complete_io(ctl[i].vcpu);
		if (mode == DIS_SIPI)
			vcpu_mp_state_set(ctl[i].vcpu, &wait_for_sipi);
	}
	host_cmd[s].op = OP_SEND;
	host_cmd[s].icr = icr;
	host_cmd[s].fences = ctl[s].fences + 1;

	if (have_stat)
		hits = vcpu_get_stat(ctl[s].vcpu, x2apic_icr_fastpath_writes);
	resume(s);
	wait_sync(s, SYNC_SENT, "writing the ICR");
	if (have_stat)
		hits = vcpu_get_stat(ctl[s].vcpu, x2apic_icr_fastpath_writes) - hits;

	for (i = 0; i < NR_VCPUS; i++) {
		if (i == s)
			continue;
		if (disturbed(i, mode))
			got_set |= 1ULL << i;
		if (mode == DIS_SMI)
			drop_smi(i);
		else if (mode == DIS_SIPI || (got_set & (1ULL << i)))
			restart(i);
	}
	resume(s);
	send_fence(s);
	wait_parked(s);

	outcome_ok = e.fate == IPI_FATE_EACH && !host_obs[s].fault &&
		     host_obs[s].readback == icr && got_set == e.targets;
	snprintf(why, sizeof(why), "fault 0x%x, ICR reads 0x%lx",
		 host_obs[s].fault, host_obs[s].readback);
	finish_round(group, s, icr, &e, want_hits, hits, got_set, outcome_ok,
		     outcome_ok ? "" : why);
}

/* SMI, INIT and SIPI from vCPU @s, to destinations that leave @s out. */
static void run_disruptive_sender(int s)
{
	uint32_t pair = s < 2 ? x2apic_logical_id(apic_ids[2]) | x2apic_logical_id(apic_ids[3]) :
			x2apic_logical_id(apic_ids[0]) | x2apic_logical_id(apic_ids[1]);
	int m, i;

	for (m = 0; m < NR_DISRUPTIVE; m++) {
		uint64_t base = dis_modes[m] | APIC_INT_ASSERT;

		if (groups[GROUP_DISRUPTIVE(m, 0)].skip)
			continue;
		for (i = 0; i < NR_VCPUS; i++) {
			if (i == s)
				continue;
			round_disruptive(s, m, icr_with_dest(base, apic_ids[i], false),
					 GROUP_DISRUPTIVE(m, KIND_PHYSICAL));
			round_disruptive(s, m, icr_with_dest(base | APIC_DEST_LOGICAL,
							     x2apic_logical_id(apic_ids[i]), false),
					 GROUP_DISRUPTIVE(m, KIND_LOGICAL));
		}
		round_disruptive(s, m, icr_with_dest(base, MISSING_ID, false),
				 GROUP_DISRUPTIVE(m, KIND_PHYSICAL));
		round_disruptive(s, m, icr_with_dest(base | APIC_DEST_LOGICAL, pair, false),
				 GROUP_DISRUPTIVE(m, KIND_LOGICAL));
		round_disruptive(s, m, base | APIC_DEST_ALLBUT,
				 GROUP_DISRUPTIVE(m, KIND_SHORTHAND));
	}
}

/* Every vCPU leaves x2APIC mode for xAPIC, flat logical model. */
static void switch_to_xapic(void)
{
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = OP_TO_XAPIC;
		resume(i);
	}
	for (i = 0; i < NR_VCPUS; i++)
		wait_sync(i, SYNC_PARKED, "switching to xAPIC mode");
	*(bool *)guest_hva(vm, &in_xapic, sizeof(in_xapic)) = true;
	xapic_phase = true;
}

static void report_groups(void)
{
	const char *why_skip;
	int i;

	for (i = 0; i < NR_GROUPS; i++) {
		struct group *g = &groups[i];

		why_skip = ipi_path_unprovable(&platform, have_stat, -1);
		/* One line per group for tables and pictures (docs/matrix.md). */
		ksft_print_msg("%spath summary: %s: %u of %u fast, %u disagree with %s%s\n",
			       run_label, g->name, g->fast, g->tried, g->path_failed,
			       ipi_policy_name(platform.policy),
			       getenv("KVM_IPI_POLICY") ? " (forced)" : "");
		if (g->skip) {
			ksft_test_result_skip("%s%s: path (%s)\n", run_label, g->name, g->skip);
			ksft_test_result_skip("%s%s: outcome (%s)\n", run_label, g->name,
					      g->skip);
			continue;
		}
		if (!g->path_checked)
			ksft_test_result_skip("%s%s: path (%s)\n", run_label, g->name,
					      why_skip);
		else
			ksft_test_result(!g->path_failed, "%s%s: path (%u writes)\n",
					 run_label, g->name, g->path_checked);

		if (!g->outcome_checked)
			ksft_test_result_skip("%s%s: outcome (undefined by the SDM)\n",
					      run_label, g->name);
		else
			ipi_report_point(g->outcome_failed, g->deviated, g->known,
					 "%s%s: outcome (%u writes)", run_label, g->name,
					 g->outcome_checked);
	}
}

/* The whole matrix, on a fresh VM, with the platform as it is now. */
/*
 * Every interrupt and NMI came at an instruction boundary outside STI's
 * shadow (guest_idle.h): one taken at the NOP of "sti; nop; hlt" would, on
 * a CPU that breaks the shadow, turn into a lost wake-up.
 */
static void report_shadow(void)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		if (host_obs[i].in_shadow)
			ksft_print_msg("%svCPU 0x%x took %u interrupts inside STI's shadow\n",
				       run_label, apic_ids[i], host_obs[i].in_shadow);
		n += host_obs[i].in_shadow;
	}
	ksft_test_result(!n, "%snone taken inside STI's shadow\n", run_label);
}

static void run_matrix(void)
{
	char desc[128];
	int i;

	memset(ctl, 0, sizeof(ctl));
	memset(groups, 0, sizeof(groups));
	init_groups();
	total_rounds = 0;
	total_hits = 0;
	slow_deliveries = 0;
	xapic_phase = false;
	platform = ipi_platform_probe();

	vm = vm_create(NR_VCPUS);
	for (i = 0; i < NR_VCPUS; i++) {
		ctl[i].vcpu = vm_vcpu_add(vm, apic_ids[i], guest_main);
		vcpu_args_set(ctl[i].vcpu, 1, i);
		vcpu_regs_get(ctl[i].vcpu, &ctl[i].first_regs);
		vcpu_sregs_get(ctl[i].vcpu, &ctl[i].first_sregs);
		index_of_id[apic_ids[i]] = i;
	}
	sync_global_to_guest(vm, index_of_id);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi);
	vm_install_exception_handler(vm, FENCE_VECTOR, guest_isr);
	vm_install_exception_handler(vm, TEST_VECTOR, guest_isr);
	vm_install_exception_handler(vm, LOW_VECTOR, guest_isr);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
	host_cmd = guest_hva(vm, cmd, sizeof(cmd));
	host_obs = guest_hva(vm, obs, sizeof(obs));

	/* Stats fds first: they cannot be had while a vCPU runs. */
	have_stat = true;
	for (i = 0; i < NR_VCPUS; i++)
		have_stat &= vcpu_has_stat(ctl[i].vcpu, x2apic_icr_fastpath_writes);
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("%splatform: %s, stat %s\n", run_label, desc,
		       have_stat ? ICR_FASTPATH_STAT : "absent");

	for (i = 0; i < NR_VCPUS; i++) {
		sem_init(&ctl[i].go, 0, 0);
		sem_init(&ctl[i].stopped, 0, 0);
		pthread_create(&ctl[i].thread, NULL, vcpu_thread, &ctl[i]);
		resume(i);
	}
	for (i = 0; i < NR_VCPUS; i++)
		wait_sync(i, SYNC_PARKED, "starting");

	for (i = 0; i < NR_VCPUS; i++)
		run_sender(i);
	for (i = 0; i < NR_VCPUS; i++)
		run_disruptive_sender(i);
	switch_to_xapic();
	for (i = 0; i < NR_VCPUS; i++)
		run_sender(i);

	ksft_print_msg("%scombinations tried: %u, fastpath hits: %u, slow-path deliveries: %u\n",
		       run_label, total_rounds, total_hits, slow_deliveries);
	report_groups();
	report_shadow();

	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = OP_EXIT;
		resume(i);
		wait_stop(i, "exiting");
		TEST_ASSERT(ctl[i].done, "vCPU %u did not finish", apic_ids[i]);
		pthread_join(ctl[i].thread, NULL);
	}
	kvm_vm_free(vm);
}

/* Both runs must have done the same thing to every vCPU, round by round. */
static void compare_runs(unsigned int nr_rounds)
{
	unsigned int r, differ = 0, compared = 0;
	char text[128];

	for (r = 0; r < nr_rounds; r++) {
		struct outcome *on = &outcomes[RUN_AS_CONFIGURED][r];
		struct outcome *off = &outcomes[RUN_FASTPATH_OFF][r];

		TEST_ASSERT(on->icr == off->icr && on->sender == off->sender,
			    "round %u differs in what was sent", r);
		/* Invalid combinations may legitimately land differently. */
		if (!on->defined)
			continue;
		compared++;
		if (on->got_set == off->got_set && on->fault == off->fault &&
		    on->readback == off->readback)
			continue;
		differ++;
		icr_format(on->icr, text, sizeof(text));
		ksft_print_msg("DIFFERS vCPU 0x%x -> %s\n", apic_ids[on->sender], text);
		ksft_print_msg("  fastpath on / off: recipients 0x%lx / 0x%lx, fault 0x%x / 0x%x\n",
			       on->got_set, off->got_set, on->fault, off->fault);
	}
	ksft_test_result(!differ,
			 "differential: fastpath on and off deliver the same (%u writes)\n",
			 compared);
}

int main(void)
{
	bool differential = ipi_fastpath_switch_available();
	unsigned int nr_rounds;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));

	ksft_print_header();
	ksft_set_plan((differential ? 2 : 1) * (2 * NR_GROUPS + 1) + 1);

	run = RUN_AS_CONFIGURED;
	run_matrix();
	nr_rounds = total_rounds;

	if (!differential) {
		ksft_test_result_skip("differential: kernel has no kvm.%s switch\n",
				      ICR_FASTPATH_SWITCH);
		ksft_finished();
	}

	ipi_fastpath_switch_set(false);
	run = RUN_FASTPATH_OFF;
	run_label = "fastpath off: ";
	run_matrix();
	ipi_fastpath_switch_set(true);
	TEST_ASSERT_EQ(total_rounds, nr_rounds);

	compare_runs(nr_rounds);
	ksft_finished();
}
