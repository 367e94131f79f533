/* SPDX-License-Identifier: GPL-2.0-only */
#if defined(KVM_FASTPATH_VPMU_GATE) && defined(KVM_IPI_VM_STATE)
/*
 * A guest whose mediated vPMU counts instructions retired: KVM emulates no
 * WRMSR of such a vCPU in its fastpath, so that the counter sees the
 * instruction.
 */
#ifndef SELFTEST_KVM_VPMU_COUNTING_H
#define SELFTEST_KVM_VPMU_COUNTING_H

/*
 * Why no vCPU can count instructions retired with a mediated vPMU here, or
 * NULL if one can.
 */
const char *vpmu_counting_unsupported(void);

/* Guest: general-purpose counter 0 counts instructions retired from now. */
void guest_vpmu_count_instructions(void);

#endif /* SELFTEST_KVM_VPMU_COUNTING_H */
#endif
