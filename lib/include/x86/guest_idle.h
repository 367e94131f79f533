/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Idle a vCPU until an interrupt: "sti; nop; hlt", and interrupt handlers
 * that step over the HLT when they were taken right before it.
 *
 * kvm_util has no such helper (6.12 has none; 7.2's safe_halt() is
 * "sti; hlt").  "sti; hlt" is atomic thanks to STI's interrupt shadow, but
 * it gives the CPU no instruction boundary with interrupts on before the
 * HLT.  KVM on SVM opens an interrupt window for an interrupt that arrived
 * while the guest had interrupts off (a virtual interrupt, V_IRQ) and
 * expects it to be taken at the first boundary with IF=1; under Bochs 2.7's
 * SVM it is taken only after the guest itself sets IF from 0 to 1 and STI's
 * shadow has ended (docs/platforms.md, "Bochs SVM and V_IRQ").  With
 * "sti; hlt" the HLT exit always comes first, KVM resumes after the HLT
 * with IF=1, and the vCPU loops in HLT exits for good.
 * x2apic_hlt_wakeup_test keeps the "sti; hlt" forms, to show the defect.
 *
 * "sti; nop; hlt" opens the window at the HLT: the interrupt may then come
 * right before the HLT, and a handler returning there would halt with
 * nothing left to wake it.  Every handler that can interrupt an idle vCPU
 * calls guest_idle_step_over_hlt(); the idle loop then checks again.
 *
 * An interrupt taken at the NOP, inside STI's shadow, breaks the
 * architecture (SDM vol. 2, STI: interrupts are recognised only after the
 * next instruction); guest_idle_step_over_hlt() says so, and steps over the
 * NOP and the HLT, so that the test reports the violation instead of
 * hanging on the halt that would follow.
 */
#ifndef SELFTEST_KVM_GUEST_IDLE_H
#define SELFTEST_KVM_GUEST_IDLE_H

#include <stdbool.h>
#include <linux/types.h>

#include "processor.h"

#define STI_OPCODE	0xfb
#define NOP_OPCODE	0x90
#define HLT_OPCODE	0xf4

/* Halt until an interrupt; interrupts are on when it returns. */
static inline void guest_halt_irqs_on(void)
{
	asm volatile("sti; nop; hlt" ::: "memory");
}

/* With interrupts off: wait once for an interrupt, return with them off. */
static inline void guest_idle_once(void)
{
	guest_halt_irqs_on();
	asm volatile("cli" ::: "memory");
}

/*
 * With interrupts off: take what is pending, without halting.  Polling with
 * interrupts on throughout is not enough under Bochs' SVM: after a VM exit
 * in that loop the virtual interrupt waits for the next 0 -> 1 of IF.
 */
static inline void guest_irq_window(void)
{
	asm volatile("sti; nop; cli" ::: "memory");
}

/* Returns true if the interrupt came inside STI's shadow. */
static inline bool guest_idle_step_over_hlt(struct ex_regs *regs)
{
	const u8 *ip = (const u8 *)regs->rip;

	if (ip[0] == HLT_OPCODE) {
		regs->rip++;
		return false;
	}
	if (ip[-1] == STI_OPCODE && ip[0] == NOP_OPCODE && ip[1] == HLT_OPCODE) {
		regs->rip += 2;
		return true;
	}
	return false;
}

#endif /* SELFTEST_KVM_GUEST_IDLE_H */
